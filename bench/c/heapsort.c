/* heapsort.c: sorts n pseudo-random integers (0 to 999,999,999, drawn by
 * a Park-Miller generator) with heapsort (a max-heap built bottom-up,
 * sift-down), checks the order, and prints the number of inversions left
 * (0), the smallest, median and largest values and a checksum. n from
 * argv (1 to 10,000,000, default 10,000). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

static void sift_down(uint64_t *a, unsigned long start, unsigned long end)
{
	unsigned long root = start;
	while (2 * root + 1 < end) {
		unsigned long child = 2 * root + 1;
		if (child + 1 < end && a[child] < a[child + 1])
			child++;
		if (a[root] >= a[child])
			return;
		uint64_t t = a[root];
		a[root] = a[child];
		a[child] = t;
		root = child;
	}
}

static void heapsort(uint64_t *a, unsigned long n)
{
	for (unsigned long start = n / 2; start > 0;)
		sift_down(a, --start, n);
	for (unsigned long end = n; end > 1;) {
		end--;
		uint64_t t = a[0];
		a[0] = a[end];
		a[end] = t;
		sift_down(a, 0, end);
	}
}

int main(int argc, char **argv)
{
	unsigned long n = argc > 1 ? strtoul(argv[1], NULL, 10) : 10000;
	if (n < 1 || n > 10000000)
		n = 10000;
	uint64_t *a = malloc(n * sizeof *a);
	if (a == NULL)
		return 1;
	uint64_t x = 11;
	for (unsigned long i = 0; i < n; i++) {
		x = x * 48271 % 2147483647;
		a[i] = x % 1000000000;
	}
	heapsort(a, n);
	unsigned long bad = 0;
	uint64_t sum = 0;
	for (unsigned long i = 0; i < n; i++) {
		if (i > 0 && a[i - 1] > a[i])
			bad++;
		sum = (sum * 7 + a[i]) % 1000000007;
	}
	printf("%lu\n%lu\n%lu\n%lu\n%lu\n", bad, (unsigned long)a[0], (unsigned long)a[n / 2],
	       (unsigned long)a[n - 1], (unsigned long)sum);
	free(a);
	return 0;
}
