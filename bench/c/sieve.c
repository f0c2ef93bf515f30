/* sieve.c: sieve of Eratosthenes over n = 1e7 bytes (one byte per number,
 * 0 = prime candidate, 1 = composite); prints the number of primes < n.
 * n comes from argv so gcc cannot fold the result at compile time. */
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
	unsigned long n = argc > 1 ? strtoul(argv[1], NULL, 10) : 10000000;
	unsigned char *composite = calloc(n, 1);
	if (composite == NULL)
		return 1;
	for (unsigned long i = 2; i * i < n; i++)
		if (!composite[i])
			for (unsigned long j = i * i; j < n; j += i)
				composite[j] = 1;
	unsigned long count = 0;
	for (unsigned long i = 2; i < n; i++)
		if (!composite[i])
			count++;
	printf("%lu\n", count);
	free(composite);
	return 0;
}
