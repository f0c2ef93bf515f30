-- lcs.lua: the length of the longest common subsequence of two strings of
-- n letters from a four-letter alphabet (drawn by a Park-Miller
-- generator), by dynamic programming over two rows of the table. Prints
-- the length and a checksum of the last row. n from arg (1 to 100,000,
-- default 200). Runs on Lua 5.4 and LuaJIT alike. Letters are a[1..n];
-- row entries prev[0..n] (entry 0 is the table's hash part in Lua 5.4,
-- as a Lua programmer indexing from 0 would have it).
local n = tonumber(arg and arg[1]) or 200
if n < 1 or n > 100000 then n = 200 end
local a, b = {}, {}
local x = 5
for i = 1, n do
  x = x * 48271 % 2147483647
  a[i] = x % 4
  x = x * 48271 % 2147483647
  b[i] = x % 4
end
local prev, cur = {}, {}
for j = 0, n do prev[j] = 0; cur[j] = 0 end
for i = 1, n do
  local ai = a[i]
  for j = 1, n do
    if ai == b[j] then
      cur[j] = prev[j - 1] + 1
    elseif prev[j] >= cur[j - 1] then
      cur[j] = prev[j]
    else
      cur[j] = cur[j - 1]
    end
  end
  prev, cur = cur, prev
end
local sum = 0
for j = 0, n do sum = (sum * 31 + prev[j]) % 1000000007 end
print(string.format("%d\n%d", prev[n], sum))
