/* The runtime of native Genesis programs (backend/llvm): memory set-up,
 * channels and faults, as the Forge Machine under `forge exec` has them
 * (docs/forge.md). Compiled by the system C compiler with every program. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MEMORY (16u << 20)
#define CHUNK (64u << 10) /* forge/host.ChunkSize */

/* gen_mem is the linear memory of the run. */
unsigned char gen_mem[MEMORY] __attribute__((aligned(16)));

static const char *fault_name(uint64_t code) {
	switch (code) {
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
	if (addr > MEMORY || n > MEMORY - addr)
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
 * Stdin): when the program waits on the channel with no message queued,
 * the next 64 KiB of input (fewer only at its end) become one message,
 * and once the input is exhausted every wait gets an empty message. RECV
 * copies up to maxlen bytes of the head message and removes it once it
 * is consumed (an empty one at once); POLL says what is left of it. The
 * same bytes give the same messages, whatever the timing of the pipe. */
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

/* gen_poll is POLL: the bytes left in the head message of channel 2, 0
 * when none is queued (it does not wait for one). */
uint64_t gen_poll(uint64_t ch) {
	if (ch > 8 || ch < 2)
		gen_fault(0x08, 0); /* no such channel, or an output channel */
	if (ch > 2)
		gen_fault(0x09, 0);
	return in_queued ? in_len - in_off : 0;
}

/* gen_start runs a program: its memory image is copied to the start of
 * memory, then its entry runs; returning from it halts. */
int gen_start(const unsigned char *image, uint64_t len, void (*entry)(void)) {
	for (uint64_t i = 0; i < len; i++)
		gen_mem[i] = image[i];
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

int main(void) { return gen_start(gen_image, gen_image_len, gen_main); }
#endif
