-- quicksort.lua: sorts n pseudo-random integers (from -1,000,000 to
-- 1,000,000, drawn by a Park-Miller generator) with a recursive quicksort
-- (Lomuto partition, middle pivot), checks the order, and prints the
-- number of inversions left (0) and a checksum of the sorted array. n from
-- arg (1 to 10,000,000, default 10,000). Runs on Lua 5.4 and LuaJIT alike.
-- The array is 1-based; the algorithm is the same as the C and Genesis
-- programs' on 0-based indexes.
local n = tonumber(arg and arg[1]) or 10000
if n < 1 or n > 10000000 then n = 10000 end

local function partition(a, lo, hi)
  local m = math.floor((lo + hi) / 2)
  a[m], a[hi] = a[hi], a[m]
  local pivot = a[hi]
  local i = lo
  for j = lo, hi - 1 do
    if a[j] < pivot then
      a[i], a[j] = a[j], a[i]
      i = i + 1
    end
  end
  a[i], a[hi] = a[hi], a[i]
  return i
end

local function quicksort(a, lo, hi)
  if lo >= hi then return end
  local p = partition(a, lo, hi)
  if p > lo then quicksort(a, lo, p - 1) end
  quicksort(a, p + 1, hi)
end

local a = {}
local x = 42
for i = 1, n do
  x = x * 48271 % 2147483647
  a[i] = x % 2000001 - 1000000
end
quicksort(a, 1, n)
local bad, sum = 0, 0
for i = 1, n do
  if i > 1 and a[i - 1] > a[i] then bad = bad + 1 end
  sum = (sum * 31 + (a[i] + 1000000)) % 1000000007
end
print(string.format("%d\n%d", bad, sum))
