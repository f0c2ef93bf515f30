-- loop.lua: sum += (i*i) % 7 for i in [0, n), n = 5e7 by default.
local n = math.tointeger(tonumber(arg[1] or "50000000"))
local sum = 0
for i = 0, n - 1 do
  sum = sum + (i * i) % 7
end
print(sum)
