-- matmul.lua: the product of two n x n matrices of integers, by the
-- textbook triple loop over tables of rows. The entries are 0 to 99, from
-- a Park-Miller generator. Prints the sum of the product's entries and
-- its two corner entries. n from arg (1 to 1000, default 20). Runs on
-- Lua 5.4 and LuaJIT alike (every value stays below 2^53).
local n = tonumber(arg and arg[1]) or 20
if n < 1 or n > 1000 then n = 20 end

local function fill(seed)
  local x = seed
  local m = {}
  for i = 1, n do
    local row = {}
    for j = 1, n do
      x = x * 48271 % 2147483647
      row[j] = x % 100
    end
    m[i] = row
  end
  return m
end

local function mul(a, b)
  local c = {}
  for i = 1, n do
    local ai, ci = a[i], {}
    for j = 1, n do
      local sum = 0
      for k = 1, n do
        sum = sum + ai[k] * b[k][j]
      end
      ci[j] = sum
    end
    c[i] = ci
  end
  return c
end

local a = fill(1)
local b = fill(2)
local c = mul(a, b)
local total = 0
for i = 1, n do
  local ci = c[i]
  for j = 1, n do total = total + ci[j] end
end
print(string.format("%d\n%d\n%d", total, c[1][1], c[n][n]))
