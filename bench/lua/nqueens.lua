-- nqueens.lua: the number of ways to place n queens on an n x n board so
-- that none attacks another, by recursive backtracking over the rows with
-- tables of the columns and diagonals taken. Prints the count. n from arg
-- (1 to 16, default 6). Runs on Lua 5.4 and LuaJIT alike. Rows and
-- columns are numbered from 0 as in the C and Genesis programs; the tables
-- are indexed from 1.
local n = tonumber(arg and arg[1]) or 6
if n < 1 or n > 16 then n = 6 end
local cols, diag1, diag2 = {}, {}, {}
for i = 1, 2 * n do cols[i] = false; diag1[i] = false; diag2[i] = false end

-- place counts the solutions with the queens of rows 0..row-1 placed.
local function place(row)
  if row == n then return 1 end
  local count = 0
  for c = 0, n - 1 do
    local d1, d2 = row + c + 1, row + n - c
    if not cols[c + 1] and not diag1[d1] and not diag2[d2] then
      cols[c + 1], diag1[d1], diag2[d2] = true, true, true
      count = count + place(row + 1)
      cols[c + 1], diag1[d1], diag2[d2] = false, false, false
    end
  end
  return count
end

print(string.format("%d", place(0)))
