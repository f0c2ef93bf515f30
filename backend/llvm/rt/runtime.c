/* The runtime of native Genesis programs (backend/llvm): memory set-up,
 * channels and faults, as the Forge Machine under `forge exec` has them
 * (docs/forge.md). Compiled by the system C compiler with every program. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define MEMORY (16u << 20)

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

/* gen_recv is RECV on channel 2 (stdin): up to n bytes of what is
 * available; at the end of input nothing is copied. */
void gen_recv(uint64_t ch, uint64_t addr, uint64_t n) {
	check_channel(ch, 0, addr, n);
	fflush(stdout);
	if (n > 0)
		(void)!read(0, gen_mem + addr, n);
}

/* gen_poll is POLL: stdin is a stream, so no message length is known. */
uint64_t gen_poll(uint64_t ch) {
	if (ch > 8)
		gen_fault(0x08, 0);
	if (ch > 2)
		gen_fault(0x09, 0);
	return 0;
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
