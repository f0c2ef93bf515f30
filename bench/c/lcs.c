/* lcs.c: the length of the longest common subsequence of two strings of
 * n letters from a four-letter alphabet (drawn by a Park-Miller
 * generator), by dynamic programming over two rows of the table. Prints
 * the length and a checksum of the last row. n from argv (1 to 100,000,
 * default 200). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
	unsigned long n = argc > 1 ? strtoul(argv[1], NULL, 10) : 200;
	if (n < 1 || n > 100000)
		n = 200;
	unsigned char *a = malloc(2 * n);
	uint64_t *prev = calloc(n + 1, sizeof *prev), *cur = calloc(n + 1, sizeof *cur);
	if (a == NULL || prev == NULL || cur == NULL)
		return 1;
	unsigned char *b = a + n;
	uint64_t x = 5;
	for (unsigned long i = 0; i < n; i++) {
		x = x * 48271 % 2147483647;
		a[i] = x % 4;
		x = x * 48271 % 2147483647;
		b[i] = x % 4;
	}
	for (unsigned long i = 1; i <= n; i++) {
		unsigned char ai = a[i - 1];
		for (unsigned long j = 1; j <= n; j++) {
			if (ai == b[j - 1])
				cur[j] = prev[j - 1] + 1;
			else if (prev[j] >= cur[j - 1])
				cur[j] = prev[j];
			else
				cur[j] = cur[j - 1];
		}
		uint64_t *t = prev;
		prev = cur;
		cur = t;
	}
	uint64_t sum = 0;
	for (unsigned long j = 0; j <= n; j++)
		sum = (sum * 31 + prev[j]) % 1000000007;
	printf("%lu\n%lu\n", (unsigned long)prev[n], (unsigned long)sum);
	free(a);
	free(prev);
	free(cur);
	return 0;
}
