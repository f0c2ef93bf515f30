-- fannkuch.lua: the fannkuch-redux benchmark: the checksum and the largest
-- number of pancake flips over all permutations of 1..n, visited in the
-- order of the classic counting algorithm. n from arg (3 to 16, default 7).
-- Runs on Lua 5.4 and LuaJIT alike. Arrays are 1-based: position i of the
-- permutation is perm[i + 1].
local n = tonumber(arg and arg[1]) or 7
if n < 3 or n > 16 then n = 7 end
local perm, perm1, count = {}, {}, {}
for i = 1, n do perm1[i] = i - 1; perm[i] = 0; count[i] = 0 end
local max_flips, checksum, sign = 0, 0, 1
local r = n
while true do
  while r ~= 1 do
    count[r] = r
    r = r - 1
  end
  for i = 1, n do perm[i] = perm1[i] end
  local flips = 0
  local k = perm[1]
  while k ~= 0 do
    local lo, hi = 1, k + 1
    while lo < hi do
      perm[lo], perm[hi] = perm[hi], perm[lo]
      lo = lo + 1
      hi = hi - 1
    end
    flips = flips + 1
    k = perm[1]
  end
  if flips > max_flips then max_flips = flips end
  checksum = checksum + sign * flips
  sign = -sign
  -- The next permutation: rotate the first r+1 elements until a counter
  -- does not wrap.
  local done = true
  while r ~= n do
    local p0 = perm1[1]
    for j = 1, r do perm1[j] = perm1[j + 1] end
    perm1[r + 1] = p0
    count[r + 1] = count[r + 1] - 1
    if count[r + 1] > 0 then
      done = false
      break
    end
    r = r + 1
  end
  if done then break end
end
print(string.format("%d\n%d", checksum, max_flips))
