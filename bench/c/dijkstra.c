/* dijkstra.c: shortest paths on an n x n grid graph (each cell joined to
 * its four neighbours; cells have heights 0 to 99, drawn by a Park-Miller
 * generator, and a step costs 1 plus the difference of the heights) from
 * the top-left cell, by Dijkstra's algorithm
 * with a binary heap of (distance, cell) pairs and lazy deletion. Prints
 * the distance to the bottom-right cell, the sum of all distances and the
 * number of heap pops. n from argv (2 to 2,000, default 30). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

/* The heap: entries i of hd (distance) and hv (cell), ordered by distance
 * then cell. */
static uint32_t *hd, *hv, *dist, *height;
static unsigned long size;

static int less(unsigned long i, unsigned long j)
{
	return hd[i] < hd[j] || (hd[i] == hd[j] && hv[i] < hv[j]);
}

static void swap(unsigned long i, unsigned long j)
{
	uint32_t d = hd[i], v = hv[i];
	hd[i] = hd[j];
	hv[i] = hv[j];
	hd[j] = d;
	hv[j] = v;
}

static void push(uint32_t d, uint32_t v)
{
	hd[size] = d;
	hv[size] = v;
	unsigned long i = size++;
	while (i > 0) {
		unsigned long parent = (i - 1) / 2;
		if (!less(i, parent))
			break;
		swap(i, parent);
		i = parent;
	}
}

/* pop moves the least entry to index size-1 and removes it. */
static void pop(void)
{
	unsigned long last = --size;
	swap(0, last);
	unsigned long i = 0;
	for (;;) {
		unsigned long l = 2 * i + 1;
		if (l >= last)
			break;
		unsigned long m = l;
		if (l + 1 < last && less(l + 1, l))
			m = l + 1;
		if (!less(m, i))
			break;
		swap(i, m);
		i = m;
	}
}

/* cost is the cost of the step between cells u and v. */
static uint32_t cost(unsigned long u, unsigned long v)
{
	return height[u] > height[v] ? height[u] - height[v] + 1 : height[v] - height[u] + 1;
}

/* relax offers cell v the distance d, pushing it when it improves. */
static void relax(unsigned long v, uint32_t d)
{
	if (d < dist[v]) {
		dist[v] = d;
		push(d, v);
	}
}

int main(int argc, char **argv)
{
	unsigned long n = argc > 1 ? strtoul(argv[1], NULL, 10) : 30;
	if (n < 2 || n > 2000)
		n = 30;
	unsigned long cells = n * n;
	height = malloc(cells * sizeof *height);
	dist = malloc(cells * sizeof *dist);
	hd = malloc((4 * cells + 1) * sizeof *hd);
	hv = malloc((4 * cells + 1) * sizeof *hv);
	if (height == NULL || dist == NULL || hd == NULL || hv == NULL)
		return 1;
	uint64_t x = 3;
	for (unsigned long i = 0; i < cells; i++) {
		x = x * 48271 % 2147483647;
		height[i] = x % 100;
		dist[i] = 4294967295u;
	}
	dist[0] = 0;
	push(0, 0);
	unsigned long pops = 0;
	while (size > 0) {
		pop();
		pops++;
		uint32_t d = hd[size];
		unsigned long v = hv[size];
		if (d != dist[v])
			continue;
		unsigned long r = v / n, c = v % n;
		if (r > 0)
			relax(v - n, d + cost(v, v - n));
		if (r + 1 < n)
			relax(v + n, d + cost(v, v + n));
		if (c > 0)
			relax(v - 1, d + cost(v, v - 1));
		if (c + 1 < n)
			relax(v + 1, d + cost(v, v + 1));
	}
	uint64_t total = 0;
	for (unsigned long i = 0; i < cells; i++)
		total += dist[i];
	printf("%lu\n%lu\n%lu\n", (unsigned long)dist[cells - 1], (unsigned long)total, pops);
	free(height);
	free(dist);
	free(hd);
	free(hv);
	return 0;
}
