/* hash.c: two checksums over a buffer of n pseudo-random bytes (drawn by a
 * Park-Miller generator), each pass starting from its own seed: djb2
 * (h = h*33 + byte, modulo 2^32) and Adler-32 (the sums modulo 65521, as
 * zlib computes it). Prints both for the last of 16 passes and the sum of
 * all 32 values. n from argv (1 to 50,000,000, default 1,000). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

static uint32_t djb2(const unsigned char *buf, unsigned long n, uint32_t seed)
{
	uint32_t h = seed;
	for (unsigned long i = 0; i < n; i++)
		h = h * 33 + buf[i];
	return h;
}

static uint64_t adler32(const unsigned char *buf, unsigned long n, uint64_t seed)
{
	uint64_t a = 1 + seed, b = 0;
	for (unsigned long i = 0; i < n; i++) {
		a = (a + buf[i]) % 65521;
		b = (b + a) % 65521;
	}
	return b * 65536 + a;
}

int main(int argc, char **argv)
{
	unsigned long n = argc > 1 ? strtoul(argv[1], NULL, 10) : 1000;
	if (n < 1 || n > 50000000)
		n = 1000;
	unsigned char *buf = malloc(n);
	if (buf == NULL)
		return 1;
	uint64_t x = 9;
	for (unsigned long i = 0; i < n; i++) {
		x = x * 48271 % 2147483647;
		buf[i] = x % 256;
	}
	uint64_t total = 0, h = 0, ad = 0;
	for (unsigned long pass = 0; pass < 16; pass++) {
		h = djb2(buf, n, 5381 + pass);
		ad = adler32(buf, n, pass);
		total += h + ad;
	}
	printf("%lu\n%lu\n%lu\n", (unsigned long)h, (unsigned long)ad, (unsigned long)total);
	free(buf);
	return 0;
}
