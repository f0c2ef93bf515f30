-- dijkstra.lua: shortest paths on an n x n grid graph (each cell joined to
-- its four neighbours; cells have heights 0 to 99, drawn by a Park-Miller
-- generator, and a step costs 1 plus the difference of the heights) from
-- the top-left cell, by Dijkstra's algorithm
-- with a binary heap of (distance, cell) pairs and lazy deletion. Prints
-- the distance to the bottom-right cell, the sum of all distances and the
-- number of heap pops. n from arg (2 to 2,000, default 30). Runs on Lua
-- 5.4 and LuaJIT alike. Cells and heap entries are numbered from 0 as in
-- the C and Genesis programs; cell v is height[v + 1], heap entry i is
-- hd[i + 1], hv[i + 1].
local n = tonumber(arg and arg[1]) or 30
if n < 2 or n > 2000 then n = 30 end
local cells = n * n
local height, dist, hd, hv = {}, {}, {}, {}
local size = 0

local function less(i, j)
  local di, dj = hd[i + 1], hd[j + 1]
  return di < dj or (di == dj and hv[i + 1] < hv[j + 1])
end

local function swap(i, j)
  hd[i + 1], hd[j + 1] = hd[j + 1], hd[i + 1]
  hv[i + 1], hv[j + 1] = hv[j + 1], hv[i + 1]
end

local function push(d, v)
  hd[size + 1] = d
  hv[size + 1] = v
  local i = size
  size = size + 1
  while i > 0 do
    local parent = math.floor((i - 1) / 2)
    if not less(i, parent) then break end
    swap(i, parent)
    i = parent
  end
end

-- pop moves the least entry to index size-1 and removes it.
local function pop()
  size = size - 1
  local last = size
  swap(0, last)
  local i = 0
  while true do
    local l = 2 * i + 1
    if l >= last then break end
    local m = l
    if l + 1 < last and less(l + 1, l) then m = l + 1 end
    if not less(m, i) then break end
    swap(i, m)
    i = m
  end
end

-- cost is the cost of the step between cells u and v.
local function cost(u, v)
  local a, b = height[u + 1], height[v + 1]
  if a > b then return a - b + 1 end
  return b - a + 1
end

-- relax offers cell v the distance d, pushing it when it improves.
local function relax(v, d)
  if d < dist[v + 1] then
    dist[v + 1] = d
    push(d, v)
  end
end

local x = 3
for i = 1, cells do
  x = x * 48271 % 2147483647
  height[i] = x % 100
  dist[i] = 4294967295
end
dist[1] = 0
push(0, 0)
local pops = 0
while size > 0 do
  pop()
  pops = pops + 1
  local d, v = hd[size + 1], hv[size + 1]
  if d == dist[v + 1] then
    local c = v % n
    local r = (v - c) / n
    if r > 0 then relax(v - n, d + cost(v, v - n)) end
    if r + 1 < n then relax(v + n, d + cost(v, v + n)) end
    if c > 0 then relax(v - 1, d + cost(v, v - 1)) end
    if c + 1 < n then relax(v + 1, d + cost(v, v + 1)) end
  end
end
local total = 0
for i = 1, cells do total = total + dist[i] end
print(string.format("%d\n%d\n%d", dist[cells], total, pops))
