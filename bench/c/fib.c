/* fib.c: recursive Fibonacci, fib(32) by default.
 * n comes from argv so gcc cannot fold the result at compile time. */
#include <stdio.h>
#include <stdlib.h>

static unsigned long fib(unsigned long n)
{
	if (n < 2)
		return n;
	return fib(n - 1) + fib(n - 2);
}

int main(int argc, char **argv)
{
	unsigned long n = argc > 1 ? strtoul(argv[1], NULL, 10) : 32;
	printf("%lu\n", fib(n));
	return 0;
}
