/* hashtable.c: an open-addressing hash table (linear probing; slots of a
 * 32-bit key and count, a power of two of them, at least twice the keys)
 * counting n keys drawn by a Park-Miller generator from 1..n/16+1; then
 * looks every possible key up. Prints the number of distinct keys, the
 * largest count, the sum of the counts found by the lookups (n) and the
 * count of key 1. n from argv (1 to 50,000,000, default 10,000). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

struct slot {
	uint32_t key, count;
};

static unsigned long hash(unsigned long k)
{
	return k * 40503;
}

/* find returns the slot of key k, or the empty slot where it would go. */
static struct slot *find(struct slot *t, unsigned long mask, unsigned long k)
{
	for (unsigned long i = hash(k) & mask;; i = (i + 1) & mask)
		if (t[i].key == k || t[i].key == 0)
			return &t[i];
}

int main(int argc, char **argv)
{
	unsigned long n = argc > 1 ? strtoul(argv[1], NULL, 10) : 10000;
	if (n < 1 || n > 50000000)
		n = 10000;
	unsigned long keys = n / 16 + 1, size = 1;
	while (size < 2 * keys)
		size *= 2;
	unsigned long mask = size - 1;
	struct slot *t = calloc(size, sizeof *t);
	if (t == NULL)
		return 1;
	unsigned long distinct = 0, best = 0;
	uint64_t x = 7;
	for (unsigned long i = 0; i < n; i++) {
		x = x * 48271 % 2147483647;
		unsigned long k = x % keys + 1;
		struct slot *s = find(t, mask, k);
		if (s->key == 0) {
			s->key = k;
			distinct++;
		}
		s->count++;
		if (s->count > best)
			best = s->count;
	}
	unsigned long found = 0;
	for (unsigned long k = 1; k <= keys; k++)
		found += find(t, mask, k)->count;
	printf("%lu\n%lu\n%lu\n%lu\n", distinct, best, found, (unsigned long)find(t, mask, 1)->count);
	free(t);
	return 0;
}
