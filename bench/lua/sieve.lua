-- sieve.lua: sieve of Eratosthenes below n = 1e7; prints the number of primes.
local n = math.tointeger(tonumber(arg[1] or "10000000"))
local composite = {}
for i = 1, n - 1 do composite[i] = false end
local i = 2
while i * i < n do
  if not composite[i] then
    for j = i * i, n - 1, i do composite[j] = true end
  end
  i = i + 1
end
local count = 0
for k = 2, n - 1 do
  if not composite[k] then count = count + 1 end
end
print(count)
