/* collatz.c: the start below a limit with the longest Collatz sequence,
 * and its length (the number of terms), with a memo of the lengths below
 * the limit. The limit from argv (2 to 20,000,000, default 10,000). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
	unsigned long limit = argc > 1 ? strtoul(argv[1], NULL, 10) : 10000;
	if (limit < 2 || limit > 20000000)
		limit = 10000;
	uint32_t *memo = calloc(limit, sizeof *memo);
	if (memo == NULL)
		return 1;
	memo[1] = 1;
	unsigned long best = 1, best_len = 1;
	for (unsigned long s = 2; s < limit; s++) {
		unsigned long n = s, steps = 0;
		while (n >= limit || memo[n] == 0) {
			if (n % 2 == 0)
				n = n / 2;
			else
				n = 3 * n + 1;
			steps++;
		}
		unsigned long len = steps + memo[n];
		memo[s] = len;
		if (len > best_len) {
			best_len = len;
			best = s;
		}
	}
	printf("%lu\n%lu\n", best, best_len);
	free(memo);
	return 0;
}
