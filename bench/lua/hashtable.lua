-- hashtable.lua: an open-addressing hash table (linear probing; slot i
-- holds keys[i] and counts[i], a power of two of them, at least twice the
-- keys) counting n keys drawn by a Park-Miller generator from 1..n/16+1;
-- then looks every possible key up. Prints the number of distinct keys,
-- the largest count, the sum of the counts found by the lookups (n) and
-- the count of key 1. n from arg (1 to 50,000,000, default 10,000). Runs
-- on Lua 5.4 and LuaJIT alike. The table is written out, not Lua's own:
-- that is the program.
local n = tonumber(arg and arg[1]) or 10000
if n < 1 or n > 50000000 then n = 10000 end
local nkeys = math.floor(n / 16) + 1
local size = 1
while size < 2 * nkeys do size = size * 2 end
local keys, counts = {}, {}
for i = 1, size do keys[i] = 0; counts[i] = 0 end

-- find returns the slot of key k, or the empty slot where it would go.
local function find(k)
  local i = k * 40503 % size
  while true do
    local key = keys[i + 1]
    if key == k or key == 0 then return i + 1 end
    i = (i + 1) % size
  end
end

local distinct, best = 0, 0
local x = 7
for _ = 1, n do
  x = x * 48271 % 2147483647
  local k = x % nkeys + 1
  local s = find(k)
  if keys[s] == 0 then
    keys[s] = k
    distinct = distinct + 1
  end
  local c = counts[s] + 1
  counts[s] = c
  if c > best then best = c end
end
local found = 0
for k = 1, nkeys do found = found + counts[find(k)] end
print(string.format("%d\n%d\n%d\n%d", distinct, best, found, counts[find(1)]))
