/* nsieve.c: the nsieve-bits benchmark: for m = 2^n*10000, 2^(n-1)*10000
 * and 2^(n-2)*10000, the number of primes up to m, by a sieve of one bit
 * per number in 64-bit words (a set bit: composite). n from argv (2 to
 * 12, default 2). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

static unsigned long nsieve(uint64_t *bits, unsigned long m)
{
	for (unsigned long w = 0; w < m / 64 + 1; w++)
		bits[w] = 0;
	unsigned long count = 0;
	for (unsigned long i = 2; i <= m; i++)
		if ((bits[i / 64] & ((uint64_t)1 << (i % 64))) == 0) {
			count++;
			for (unsigned long j = i + i; j <= m; j += i)
				bits[j / 64] |= (uint64_t)1 << (j % 64);
		}
	return count;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 2;
	if (n < 2 || n > 12)
		n = 2;
	uint64_t *bits = malloc(((10000UL << n) / 64 + 1) * sizeof *bits);
	if (bits == NULL)
		return 1;
	for (int k = 0; k < 3; k++) {
		unsigned long m = (1UL << (n - k)) * 10000;
		printf("%lu\n%lu\n", m, nsieve(bits, m));
	}
	free(bits);
	return 0;
}
