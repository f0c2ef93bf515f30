/* fannkuch.c: the fannkuch-redux benchmark: the checksum and the largest
 * number of pancake flips over all permutations of 1..n, visited in the
 * order of the classic counting algorithm. n from argv (3 to 16,
 * default 7). */
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 7;
	if (n < 3 || n > 16)
		n = 7;
	int perm[16], perm1[16], count[16];
	for (int i = 0; i < n; i++)
		perm1[i] = i;
	int max_flips = 0;
	long checksum = 0;
	int sign = 1;
	int r = n;
	for (;;) {
		while (r != 1) {
			count[r - 1] = r;
			r--;
		}
		for (int i = 0; i < n; i++)
			perm[i] = perm1[i];
		int flips = 0;
		int k;
		while ((k = perm[0]) != 0) {
			for (int lo = 0, hi = k; lo < hi; lo++, hi--) {
				int t = perm[lo];
				perm[lo] = perm[hi];
				perm[hi] = t;
			}
			flips++;
		}
		if (flips > max_flips)
			max_flips = flips;
		checksum += sign * flips;
		sign = -sign;
		/* The next permutation: rotate the first r+1 elements until a
		 * counter does not wrap. */
		for (;;) {
			if (r == n) {
				printf("%ld\n%d\n", checksum, max_flips);
				return 0;
			}
			int p0 = perm1[0];
			for (int j = 0; j < r; j++)
				perm1[j] = perm1[j + 1];
			perm1[r] = p0;
			if (--count[r] > 0)
				break;
			r++;
		}
	}
}
