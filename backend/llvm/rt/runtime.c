/* The runtime of native Genesis programs (backend/llvm): memory set-up,
 * channels and faults, as the Forge Machine under `forge exec` has them
 * (docs/forge.md). Compiled by the system C compiler with every program.
 * The executable takes forge exec's --memory and --stack (docs/backend-llvm.md). */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define DEFAULT_MEMORY (16ull << 20) /* forge exec's defaults */
#define DEFAULT_STACK (64ull << 10)
#define MAX_MEMORY (1ull << 32) /* forge/vm.MaxMemory */
#define CHUNK (64u << 10)       /* forge/host.ChunkSize */

/* The machine of the run, set up by gen_start before the program runs:
 * linear memory and its size (the quota), heap_end (memory - stack,
 * where the machine stack's region begins), and the shadow stack's
 * limit, which the program's entry sets. */
unsigned char *gen_mem;
uint64_t gen_memory, gen_heap_end, gen_frame_limit;

static const char *fault_name(uint64_t code) {
	switch (code) {
	case 0x02: return "OUT_OF_MEMORY";
	case 0x03: return "DIVIDE_BY_ZERO";
	case 0x04: return "INVALID_ADDRESS";
	case 0x06: return "STACK_OVERFLOW";
	case 0x07: return "STACK_UNDERFLOW";
	case 0x08: return "CHANNEL_ERROR";
	case 0x09: return "PERMISSION_DENIED";
	case 0xFF: return "USER_FAULT";
	}
	return "INVALID_INSTRUCTION";
}

/* gen_fault ends the run FAULTED: what was sent is kept, the fault is
 * named on stderr as forge exec names it, and the exit status is 3. */
__attribute__((noreturn, cold)) void gen_fault(uint64_t code, uint64_t user) {
	fflush(stdout);
	if (code == 0xFF)
		fprintf(stderr, "genesis: FAULTED: USER_FAULT (code %llu)\n", (unsigned long long)user);
	else
		fprintf(stderr, "genesis: FAULTED: %s\n", fault_name(code));
	exit(3);
}

/* gen_halt ends the run HALTED (asm HALT). */
__attribute__((noreturn)) void gen_halt(void) {
	fflush(stdout);
	exit(0);
}

static void check_channel(uint64_t ch, int out, uint64_t addr, uint64_t n) {
	if (ch > 8)
		gen_fault(0x08, 0);
	if (ch > 2)
		gen_fault(0x09, 0); /* forge exec grants channels 0-2 only */
	if ((ch == 2) == out)
		gen_fault(0x08, 0); /* the wrong direction */
	if (addr > gen_memory || n > gen_memory - addr)
		gen_fault(0x04, 0);
}

/* gen_send is SEND: channel 0 is stdout, 1 stderr. */
void gen_send(uint64_t ch, uint64_t addr, uint64_t n) {
	check_channel(ch, 1, addr, n);
	if (ch == 0) {
		if (n == 1)
			putchar_unlocked(gen_mem[addr]);
		else
			fwrite_unlocked(gen_mem + addr, 1, n, stdout);
	} else {
		fflush(stdout);
		fwrite(gen_mem + addr, 1, n, stderr);
	}
}

/* Standard input reaches channel 2 as forge exec delivers it (forge/host,
 * Stdin): when the program waits on the channel with no message queued
 * (a RECV or a POLL), the next 64 KiB of input (fewer only at its end)
 * become one message, and once the input is exhausted every wait gets an
 * empty message. RECV copies up to maxlen bytes of the head message and
 * removes it once it is consumed (an empty one at once); POLL says what
 * is left of it, waiting for the next message when none is queued (0:
 * the end of input). The same bytes give the same messages, whatever the
 * timing of the pipe. */
static unsigned char in_msg[CHUNK];
static uint64_t in_off, in_len; /* the head message is in_msg[in_off:in_len] */
static int in_queued, in_eof;

/* deliver queues the next message of standard input. */
static void deliver(void) {
	fflush(stdout); /* forge exec flushes before waiting for input */
	in_off = in_len = 0;
	while (!in_eof && in_len < CHUNK) {
		ssize_t n = read(0, in_msg + in_len, CHUNK - in_len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			in_eof = 1; /* a read error ends the input too */
			break;
		}
		in_len += (uint64_t)n;
	}
	in_queued = 1;
}

/* gen_recv is RECV: the buffer must be writable memory (at or above
 * heap_start), then up to n bytes of the head message of channel 2 are
 * copied, a message being delivered first when none is queued. */
void gen_recv(uint64_t ch, uint64_t addr, uint64_t n, uint64_t heap_start) {
	check_channel(ch, 0, addr, n);
	if (addr < heap_start)
		gen_fault(0x04, 0);
	if (!in_queued)
		deliver();
	uint64_t k = in_len - in_off;
	if (k > n)
		k = n;
	memcpy(gen_mem + addr, in_msg + in_off, k);
	in_off += k;
	if (in_off == in_len)
		in_queued = 0;
}

/* gen_poll is POLL: the bytes left in the head message of channel 2, a
 * message being delivered first when none is queued; 0 only for the
 * empty message of the end of input, which POLL leaves queued. */
uint64_t gen_poll(uint64_t ch) {
	if (ch > 8 || ch < 2)
		gen_fault(0x08, 0); /* no such channel, or an output channel */
	if (ch > 2)
		gen_fault(0x09, 0);
	if (!in_queued)
		deliver();
	return in_len - in_off;
}

/* usage reports a wrong command line as forge exec does: exit status 2. */
__attribute__((noreturn)) static void usage(const char *msg, const char *arg) {
	fprintf(stderr, "genesis: %s%s\nusage: PROGRAM [--memory BYTES] [--stack BYTES]\n", msg, arg);
	exit(2);
}

/* parse_size reads a byte count as forge exec does: a decimal integer
 * (underscores allowed), optionally followed by K, M or G (times 2^10,
 * 2^20, 2^30). It returns 0 when s is not one. */
static int parse_size(const char *s, uint64_t *out) {
	uint64_t v = 0, mult = 1;
	size_t n = strlen(s);
	int digits = 0;
	if (n > 0) {
		switch (s[n - 1]) {
		case 'K': case 'k': mult = 1ull << 10; n--; break;
		case 'M': case 'm': mult = 1ull << 20; n--; break;
		case 'G': case 'g': mult = 1ull << 30; n--; break;
		}
	}
	for (size_t i = 0; i < n; i++) {
		if (s[i] == '_')
			continue;
		if (s[i] < '0' || s[i] > '9' || v > (UINT64_MAX - (uint64_t)(s[i] - '0')) / 10)
			return 0;
		v = v * 10 + (uint64_t)(s[i] - '0');
		digits++;
	}
	if (digits == 0 || v > UINT64_MAX / mult)
		return 0;
	*out = v * mult;
	return 1;
}

/* gen_start runs a program with the command line's limits: memory is
 * allocated (zero) with the quota, faulting OUT_OF_MEMORY as the Forge
 * Machine does at creation when code, data and the machine stack do not
 * fit; the memory image is copied to its start, then its entry runs;
 * returning from it halts. argv[0] is not read. */
int gen_start(const unsigned char *image, uint64_t len, void (*entry)(void), int argc, char **argv) {
	uint64_t memory = DEFAULT_MEMORY, stack = DEFAULT_STACK;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v = NULL;
		uint64_t *dst;
		if (a[0] == '-' && a[1] == '-')
			a++;
		if (strncmp(a, "-memory", 7) == 0 && (a[7] == 0 || a[7] == '='))
			dst = &memory, v = a + 7;
		else if (strncmp(a, "-stack", 6) == 0 && (a[6] == 0 || a[6] == '='))
			dst = &stack, v = a + 6;
		else
			usage("unknown argument ", argv[i]);
		if (*v == '=')
			v++;
		else if (i + 1 < argc)
			v = argv[++i];
		else
			usage("missing value of ", argv[i]);
		if (!parse_size(v, dst))
			usage("not a size in bytes (an integer, optionally with K, M or G): ", v);
	}
	if (memory > MAX_MEMORY)
		usage("--memory is more than a machine may have (4294967296 bytes): ", "");
	uint64_t heap_start = (len + 7) & ~(uint64_t)7;
	if (memory < heap_start || memory - heap_start < stack) {
		fprintf(stderr, "genesis: FAULTED: OUT_OF_MEMORY: code and data take %llu bytes and the stack %llu: "
			"the memory quota (%llu) must be at least %llu\n",
			(unsigned long long)heap_start, (unsigned long long)stack, (unsigned long long)memory,
			(unsigned long long)(heap_start + stack));
		exit(3);
	}
	/* One byte more than the quota, so that even a zero quota has a
	 * valid pointer; every access is checked against gen_memory. */
	gen_mem = calloc(memory + 1, 1);
	if (gen_mem == NULL) {
		fprintf(stderr, "genesis: cannot allocate the %llu bytes of memory of the run\n", (unsigned long long)memory);
		exit(1);
	}
	gen_memory = memory;
	gen_heap_end = memory - stack;
	memcpy(gen_mem, image, len);
	entry();
	fflush(stdout);
	return 0;
}

/* Without GEN_NO_MAIN the executable is the one program the LLVM module
 * of llvm.Compile holds; with it, a caller supplies main (the
 * differential test links many programs into one executable). */
#ifndef GEN_NO_MAIN
extern const unsigned char gen_image[];
extern const uint64_t gen_image_len;
extern void gen_main(void);

int main(int argc, char **argv) { return gen_start(gen_image, gen_image_len, gen_main, argc, argv); }
#endif
