-- collatz.lua: the start below a limit with the longest Collatz sequence,
-- and its length (the number of terms), with a memo of the lengths below
-- the limit. The limit from arg (2 to 20,000,000, default 10,000). Runs on
-- Lua 5.4 and LuaJIT alike (the sequences stay below 2^53).
local limit = tonumber(arg and arg[1]) or 10000
if limit < 2 or limit > 20000000 then limit = 10000 end
local memo = {}
for i = 1, limit - 1 do memo[i] = 0 end
memo[1] = 1
local best, best_len = 1, 1
for s = 2, limit - 1 do
  local n, steps = s, 0
  while n >= limit or memo[n] == 0 do
    if n % 2 == 0 then
      n = n / 2
    else
      n = 3 * n + 1
    end
    steps = steps + 1
  end
  local len = steps + memo[n]
  memo[s] = len
  if len > best_len then
    best_len = len
    best = s
  end
end
print(string.format("%d\n%d", best, best_len))
