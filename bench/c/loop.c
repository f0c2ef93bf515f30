/* loop.c: sum += (i*i) % 7 for i in [0, n), n = 5e7 by default.
 * n comes from argv so gcc cannot fold the result at compile time. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
	uint64_t n = argc > 1 ? strtoull(argv[1], NULL, 10) : 50000000;
	uint64_t sum = 0;
	for (uint64_t i = 0; i < n; i++)
		sum += (i * i) % 7;
	printf("%llu\n", (unsigned long long)sum);
	return 0;
}
