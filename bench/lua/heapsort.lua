-- heapsort.lua: sorts n pseudo-random integers (0 to 999,999,999, drawn by
-- a Park-Miller generator) with heapsort (a max-heap built bottom-up,
-- sift-down), checks the order, and prints the number of inversions left
-- (0), the smallest, median and largest values and a checksum. n from arg
-- (1 to 10,000,000, default 10,000). Runs on Lua 5.4 and LuaJIT alike.
-- The heap is 0-based as in the C and Genesis programs: element i is
-- a[i + 1].
local n = tonumber(arg and arg[1]) or 10000
if n < 1 or n > 10000000 then n = 10000 end

local function sift_down(a, start, stop)
  local root = start
  while 2 * root + 1 < stop do
    local child = 2 * root + 1
    if child + 1 < stop and a[child + 1] < a[child + 2] then
      child = child + 1
    end
    if a[root + 1] >= a[child + 1] then return end
    a[root + 1], a[child + 1] = a[child + 1], a[root + 1]
    root = child
  end
end

local function heapsort(a, n)
  for start = math.floor(n / 2) - 1, 0, -1 do sift_down(a, start, n) end
  for stop = n - 1, 1, -1 do
    a[1], a[stop + 1] = a[stop + 1], a[1]
    sift_down(a, 0, stop)
  end
end

local a = {}
local x = 11
for i = 1, n do
  x = x * 48271 % 2147483647
  a[i] = x % 1000000000
end
heapsort(a, n)
local bad, sum = 0, 0
for i = 1, n do
  if i > 1 and a[i - 1] > a[i] then bad = bad + 1 end
  sum = (sum * 7 + a[i]) % 1000000007
end
print(string.format("%d\n%d\n%d\n%d\n%d", bad, a[1], a[math.floor(n / 2) + 1], a[n], sum))
