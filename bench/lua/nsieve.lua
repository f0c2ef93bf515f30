-- nsieve.lua: the nsieve-bits benchmark: for m = 2^n*10000, 2^(n-1)*10000
-- and 2^(n-2)*10000, the number of primes up to m. n from arg (2 to 12,
-- default 2). Runs on Lua 5.4 and LuaJIT alike, which share no bit
-- operators, so the sieve is what Lua programmers write: a table of
-- booleans (true: composite).
local n = tonumber(arg and arg[1]) or 2
if n < 2 or n > 12 then n = 2 end

local function nsieve(flags, m)
  for i = 2, m do flags[i] = false end
  local count = 0
  for i = 2, m do
    if not flags[i] then
      count = count + 1
      for j = i + i, m, i do flags[j] = true end
    end
  end
  return count
end

local flags = {}
for k = 0, 2 do
  local m = 2 ^ (n - k) * 10000
  m = math.floor(m)
  print(string.format("%d\n%d", m, nsieve(flags, m)))
end
