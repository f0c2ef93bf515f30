-- hash.lua: two checksums over a buffer of n pseudo-random bytes (drawn by
-- a Park-Miller generator, a table of byte values), each pass starting
-- from its own seed: djb2 (h = h*33 + byte, modulo 2^32) and Adler-32 (the
-- sums modulo 65521, as zlib computes it). Prints both for the last of 16
-- passes and the sum of all 32 values. n from arg (1 to 50,000,000,
-- default 1,000). Runs on Lua 5.4 and LuaJIT alike: no bit operators,
-- every value below 2^53.
local n = tonumber(arg and arg[1]) or 1000
if n < 1 or n > 50000000 then n = 1000 end

local function djb2(buf, n, seed)
  local h = seed
  for i = 1, n do
    h = (h * 33 + buf[i]) % 4294967296
  end
  return h
end

local function adler32(buf, n, seed)
  local a, b = 1 + seed, 0
  for i = 1, n do
    a = (a + buf[i]) % 65521
    b = (b + a) % 65521
  end
  return b * 65536 + a
end

local buf = {}
local x = 9
for i = 1, n do
  x = x * 48271 % 2147483647
  buf[i] = x % 256
end
local total, h, ad = 0, 0, 0
for pass = 0, 15 do
  h = djb2(buf, n, 5381 + pass)
  ad = adler32(buf, n, pass)
  total = total + h + ad
end
print(string.format("%d\n%d\n%d", h, ad, total))
