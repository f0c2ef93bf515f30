-- strings.lua: string processing on a text built in memory (reps times
-- three sentences, a table of byte values): word count, letter
-- frequencies, upper-casing, a naive substring search, and a reversal of
-- every word; prints the length, counts and a checksum. reps from arg (1
-- to 1,000,000, default 40). Runs on Lua 5.4 and LuaJIT alike. Every step
-- is a loop of its own, as in the C and Genesis programs: no library
-- routine (string.find, gsub, upper) does the work.
local reps = tonumber(arg and arg[1]) or 40
if reps < 1 or reps > 1000000 then reps = 40 end

local function append(dst, at, src)
  for i = 1, #src do dst[at + i] = string.byte(src, i) end
  return at + #src
end

local function is_letter(c)
  return (c >= 97 and c <= 122) or (c >= 65 and c <= 90)
end

local function count_words(s, n)
  local words, in_word = 0, false
  for i = 1, n do
    local l = is_letter(s[i])
    if l and not in_word then words = words + 1 end
    in_word = l
  end
  return words
end

local function find_all(s, n, pat)
  local m = #pat
  local p = {}
  for j = 1, m do p[j] = string.byte(pat, j) end
  local found = 0
  for i = 0, n - m do
    local j = 0
    while j < m and s[i + j + 1] == p[j + 1] do j = j + 1 end
    if j == m then found = found + 1 end
  end
  return found
end

local function reverse_words(s, n)
  local i = 1
  while i <= n do
    if is_letter(s[i]) then
      local j = i
      while j <= n and is_letter(s[j]) do j = j + 1 end
      local lo, hi = i, j - 1
      while lo < hi do
        s[lo], s[hi] = s[hi], s[lo]
        lo = lo + 1
        hi = hi - 1
      end
      i = j
    else
      i = i + 1
    end
  end
end

local text = {}
local n = 0
for _ = 1, reps do
  n = append(text, n, "The quick brown fox jumps over the lazy dog; ")
  n = append(text, n, "pack my box with five dozen liquor jugs. ")
  n = append(text, n, "How vexingly quick daft zebras jump! ")
end
print(string.format("%d\n%d", n, count_words(text, n)))
local freq = {}
for c = 1, 26 do freq[c] = 0 end
for i = 1, n do
  local c = text[i]
  if c >= 97 and c <= 122 then
    freq[c - 96] = freq[c - 96] + 1
    text[i] = c - 32
  elseif c >= 65 and c <= 90 then
    freq[c - 64] = freq[c - 64] + 1
  end
end
print(string.format("%d\n%d", freq[5], find_all(text, n, "QUICK")))
reverse_words(text, n)
local sum = 0
for i = 1, n do sum = (sum * 131 + text[i]) % 1000000007 end
print(string.format("%d", sum))
