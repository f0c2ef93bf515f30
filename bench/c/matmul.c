/* matmul.c: the product of two n x n matrices of 64-bit integers held
 * row-major, by the textbook triple loop. The entries are 0 to 99, from a
 * Park-Miller generator. Prints the sum of the product's entries and its
 * two corner entries. n from argv (1 to 1000, default 20). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

static void fill(uint64_t *m, unsigned long n, uint64_t seed)
{
	uint64_t x = seed;
	for (unsigned long i = 0; i < n * n; i++) {
		x = x * 48271 % 2147483647;
		m[i] = x % 100;
	}
}

static void mul(const uint64_t *a, const uint64_t *b, uint64_t *c, unsigned long n)
{
	for (unsigned long i = 0; i < n; i++)
		for (unsigned long j = 0; j < n; j++) {
			uint64_t sum = 0;
			for (unsigned long k = 0; k < n; k++)
				sum += a[i * n + k] * b[k * n + j];
			c[i * n + j] = sum;
		}
}

int main(int argc, char **argv)
{
	unsigned long n = argc > 1 ? strtoul(argv[1], NULL, 10) : 20;
	if (n < 1 || n > 1000)
		n = 20;
	uint64_t *a = malloc(3 * n * n * sizeof *a);
	if (a == NULL)
		return 1;
	uint64_t *b = a + n * n, *c = b + n * n;
	fill(a, n, 1);
	fill(b, n, 2);
	mul(a, b, c, n);
	uint64_t total = 0;
	for (unsigned long i = 0; i < n * n; i++)
		total += c[i];
	printf("%lu\n%lu\n%lu\n", (unsigned long)total, (unsigned long)c[0], (unsigned long)c[n * n - 1]);
	free(a);
	return 0;
}
