/* strings.c: string processing on a text built in memory (reps times
 * three sentences): word count, letter frequencies, upper-casing, a naive
 * substring search, and a reversal of every word; prints the length,
 * counts and a checksum. reps from argv (1 to 1,000,000, default 40).
 * Every step is a loop of its own, as in the Genesis and Lua programs: no
 * library routine does the work. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

static unsigned long len(const char *s)
{
	unsigned long n = 0;
	while (s[n] != 0)
		n++;
	return n;
}

static unsigned long append(char *dst, unsigned long at, const char *src)
{
	unsigned long i = 0;
	for (; src[i] != 0; i++)
		dst[at + i] = src[i];
	return at + i;
}

static int is_letter(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

static unsigned long count_words(const unsigned char *s, unsigned long n)
{
	unsigned long words = 0;
	int in_word = 0;
	for (unsigned long i = 0; i < n; i++) {
		int l = is_letter(s[i]);
		if (l && !in_word)
			words++;
		in_word = l;
	}
	return words;
}

static unsigned long find_all(const unsigned char *s, unsigned long n, const char *pat)
{
	unsigned long m = len(pat), found = 0;
	for (unsigned long i = 0; i + m <= n; i++) {
		unsigned long j = 0;
		while (j < m && s[i + j] == (unsigned char)pat[j])
			j++;
		if (j == m)
			found++;
	}
	return found;
}

static void reverse_words(unsigned char *s, unsigned long n)
{
	unsigned long i = 0;
	while (i < n) {
		if (is_letter(s[i])) {
			unsigned long j = i;
			while (j < n && is_letter(s[j]))
				j++;
			for (unsigned long lo = i, hi = j - 1; lo < hi; lo++, hi--) {
				unsigned char t = s[lo];
				s[lo] = s[hi];
				s[hi] = t;
			}
			i = j;
		} else {
			i++;
		}
	}
}

int main(int argc, char **argv)
{
	unsigned long reps = argc > 1 ? strtoul(argv[1], NULL, 10) : 40;
	if (reps < 1 || reps > 1000000)
		reps = 40;
	char *text = malloc(reps * 128 + 1);
	if (text == NULL)
		return 1;
	unsigned long n = 0;
	for (unsigned long r = 0; r < reps; r++) {
		n = append(text, n, "The quick brown fox jumps over the lazy dog; ");
		n = append(text, n, "pack my box with five dozen liquor jugs. ");
		n = append(text, n, "How vexingly quick daft zebras jump! ");
	}
	text[n] = 0;
	unsigned char *s = (unsigned char *)text;
	printf("%lu\n%lu\n", n, count_words(s, n));
	unsigned long freq[26] = {0};
	for (unsigned long i = 0; i < n; i++) {
		unsigned char c = s[i];
		if (c >= 'a' && c <= 'z') {
			freq[c - 'a']++;
			s[i] = c - 32;
		} else if (c >= 'A' && c <= 'Z') {
			freq[c - 'A']++;
		}
	}
	printf("%lu\n%lu\n", freq[4], find_all(s, n, "QUICK"));
	reverse_words(s, n);
	uint64_t sum = 0;
	for (unsigned long i = 0; i < n; i++)
		sum = (sum * 131 + s[i]) % 1000000007;
	printf("%lu\n", (unsigned long)sum);
	free(text);
	return 0;
}
