/* quicksort.c: sorts n pseudo-random 64-bit integers (from -1,000,000 to
 * 1,000,000, drawn by a Park-Miller generator) with a recursive quicksort
 * (Lomuto partition, middle pivot), checks the order, and prints the
 * number of inversions left (0) and a checksum of the sorted array. n
 * from argv (1 to 10,000,000, default 10,000). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

static void swap(int64_t *a, unsigned long i, unsigned long j)
{
	int64_t t = a[i];
	a[i] = a[j];
	a[j] = t;
}

static unsigned long partition(int64_t *a, unsigned long lo, unsigned long hi)
{
	swap(a, (lo + hi) / 2, hi);
	int64_t pivot = a[hi];
	unsigned long i = lo;
	for (unsigned long j = lo; j < hi; j++)
		if (a[j] < pivot)
			swap(a, i++, j);
	swap(a, i, hi);
	return i;
}

static void quicksort(int64_t *a, unsigned long lo, unsigned long hi)
{
	if (lo >= hi)
		return;
	unsigned long p = partition(a, lo, hi);
	if (p > lo)
		quicksort(a, lo, p - 1);
	quicksort(a, p + 1, hi);
}

int main(int argc, char **argv)
{
	unsigned long n = argc > 1 ? strtoul(argv[1], NULL, 10) : 10000;
	if (n < 1 || n > 10000000)
		n = 10000;
	int64_t *a = malloc(n * sizeof *a);
	if (a == NULL)
		return 1;
	uint64_t x = 42;
	for (unsigned long i = 0; i < n; i++) {
		x = x * 48271 % 2147483647;
		a[i] = (int64_t)(x % 2000001) - 1000000;
	}
	quicksort(a, 0, n - 1);
	unsigned long bad = 0;
	uint64_t sum = 0;
	for (unsigned long i = 0; i < n; i++) {
		if (i > 0 && a[i - 1] > a[i])
			bad++;
		sum = (sum * 31 + (uint64_t)(a[i] + 1000000)) % 1000000007;
	}
	printf("%lu\n%lu\n", bad, (unsigned long)sum);
	free(a);
	return 0;
}
