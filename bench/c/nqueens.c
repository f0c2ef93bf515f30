/* nqueens.c: the number of ways to place n queens on an n x n board so
 * that none attacks another, by recursive backtracking over the rows with
 * arrays of the columns and diagonals taken. Prints the count. n from argv
 * (1 to 16, default 6). */
#include <stdio.h>
#include <stdlib.h>

/* place counts the solutions with the queens of rows 0..row-1 placed. */
static unsigned long place(int n, int row, unsigned char *cols, unsigned char *diag1, unsigned char *diag2)
{
	if (row == n)
		return 1;
	unsigned long count = 0;
	for (int c = 0; c < n; c++)
		if (!cols[c] && !diag1[row + c] && !diag2[row + n - 1 - c]) {
			cols[c] = diag1[row + c] = diag2[row + n - 1 - c] = 1;
			count += place(n, row + 1, cols, diag1, diag2);
			cols[c] = diag1[row + c] = diag2[row + n - 1 - c] = 0;
		}
	return count;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 6;
	if (n < 1 || n > 16)
		n = 6;
	unsigned char cols[16] = {0}, diag1[32] = {0}, diag2[32] = {0};
	printf("%lu\n", place(n, 0, cols, diag1, diag2));
	return 0;
}
