package vm_test

import (
	"fmt"
	"strings"
	"testing"

	bc "github.com/genesis-toolchain/genesis/forge/bytecode"
	"github.com/genesis-toolchain/genesis/forge/vm"
	"github.com/genesis-toolchain/genesis/frontend/fasm"
)

// recursion is fib as genesisc compiles it: signed comparison, the
// argument saved with PUSH before the first call and swapped with the
// first result by POP; PUSH before the second. It exercises the fused call
// sequences PUSH;LI;SUB;CALL and POP;PUSH;LI;SUB;CALL and the early return
// LI;JLTS to a RET.
const recursion = `
main:
    LI r0, 12
    CALL fib
    HALT
fib:
    LI r1, 2
    JLTS r0, r1, done
    PUSH r0
    LI r1, 1
    SUB r0, r0, r1
    CALL fib
    POP r1
    PUSH r0
    LI r2, 2
    SUB r0, r1, r2
    CALL fib
    POP r1
    ADD r0, r0, r1
done:
    RET
`

// unsignedRecursion is fib as bench/programs/fib.fasm writes it: the
// unsigned early return, and a first call made by a plain CALL after the
// argument is computed (LI; SUB; CALL without the PUSH, which runs as
// three instructions: that form is no longer fused), so that the call
// forms reach a function that begins with an early return.
const unsignedRecursion = `
main:
    LI r0, 11
    CALL fib
    HALT
fib:
    LI r1, 2
    JLT r0, r1, done
    PUSH r0
    LI r1, 1
    SUB r0, r0, r1
    CALL fib
    POP r1
    PUSH r0
    OR r0, r1, r1
    LI r2, 2
    SUB r0, r0, r2
    CALL fib
    POP r1
    ADD r0, r0, r1
    CALL leaf
    RET
done:
    RET
leaf:
    LI r3, 1
    JLT r3, r3, never
    RET
never:
    RET
`

// callAtEnd calls a function with an early return from the last
// instruction of the code: the RET returns to the end of the code and
// faults INVALID_ADDRESS, which the interpreter's shortcut for early
// returns must not hide.
const callAtEnd = `
    JMP go
f:
    LI r1, 5
    JLT r0, r1, out
    RET
out:
    RET
go:
    LI r0, 1
    CALL f
`

// TestFusedCallsAtStackLimit runs recursions with stacks of every size up
// to what they need, so that the overflow falls on each instruction of
// the fused sequences, and every budget around (so that it runs out in
// each run of a called function's early return), with and without the
// trace, against the reference interpreter.
func TestFusedCallsAtStackLimit(t *testing.T) {
	for _, tc := range []struct {
		name, src string
		overflows int // stack sizes that must overflow, at least
	}{
		{"signed", recursion, 10},
		{"unsigned", unsignedRecursion, 10},
		{"call-at-end", callAtEnd, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, diags := fasm.Assemble(tc.name+".fasm", []byte(tc.src))
			if diags.HasErrors() {
				t.Fatal(diags)
			}
			img, err := vm.NewImage(p)
			if err != nil {
				t.Fatal(err)
			}
			overflows := 0
			for stack := uint64(8); stack <= 256; stack += 8 {
				for _, trace := range []bool{false, true} {
					c := testCase{prog: p, cfg: vm.Config{Memory: 1 << 16, Stack: stack, Trace: trace}}
					full, err := differential(img, c, 100000)
					if err != nil {
						t.Fatalf("stack %d, trace %v: %v", stack, trace, err)
					}
					if full.state == vm.Faulted && full.fault == vm.StackOverflow && !trace {
						overflows++
					}
					if tc.name == "call-at-end" && full.fault != vm.InvalidAddress {
						t.Fatalf("stack %d: fault %v, want INVALID_ADDRESS from the RET to the end of the code", stack, full.fault)
					}
					for b := uint64(0); b <= full.ticks+1 && b < 400; b++ {
						if _, err := differential(img, c, b); err != nil {
							t.Fatalf("stack %d, trace %v, budget %d: %v", stack, trace, b, err)
						}
					}
				}
			}
			if overflows < tc.overflows {
				t.Errorf("only %d stack sizes overflowed: the test does not reach the fault paths", overflows)
			}
		})
	}
}

// TestFusedMemoryFaults walks an address up to the end of memory through
// each fused form that reads or writes memory (issue 17's fourth step),
// so that the access faults on the instruction named, first or second in
// its form, and checks it against the reference interpreter at the full
// budget and every budget near the end, with and without the trace: the
// fault's pc and ticks, and the effects of the instructions before it,
// are those of the canonical sequence.
func TestFusedMemoryFaults(t *testing.T) {
	const memory = 1 << 12
	for _, tc := range []struct {
		name, src string
		faulting  string // the instruction that faults: mnemonic and first register
	}{
		{"ADD;LOAD", `
    LI r1, 4000
    LI r2, 1
    LI r9, -1
top:
    ADD r1, r1, r2
    LOAD r3, r1, 7
    JLT r1, r9, top
    HALT
`, "LOAD r3"},
		{"LOADW;LOADW, the first faults", `
    LI r1, 4000
    LI r2, 8
    LI r9, -1
top:
    LOADW r3, r1, 8
    LOADW r4, r1, 0
    ADD r5, r3, r4
    ADD r1, r1, r2
    JLT r1, r9, top
    HALT
`, "LOADW r3"},
		{"LOADW;LOADW, the second faults", `
    LI r1, 4000
    LI r2, 8
    LI r9, -1
top:
    LOADW r3, r1, 0
    LOADW r4, r1, 8
    ADD r5, r3, r4
    ADD r1, r1, r2
    JLT r1, r9, top
    HALT
`, "LOADW r4"},
		{"STOREWX;ADD;JLT", `
    LI r1, 3000
    LI r5, 0
    LI r2, 1
    LI r9, -1
top:
    STOREWX r5, r1, r5
    ADD r5, r5, r2
    JLT r5, r9, top
    HALT
`, "STOREWX r5"},
		{"STOREWX;ADD", `
    LI r1, 3000
    LI r5, 0
    LI r2, 1
    LI r9, -1
top:
    STOREWX r5, r1, r5
    ADD r5, r5, r2
    ADD r6, r6, r2
    JLT r5, r9, top
    HALT
`, "STOREWX r5"},
		{"LOADWX;LOADWX, the first faults", `
    LI r1, 3000
    LI r2, 1
    LI r6, 0
    LI r9, 1
    LI r8, -1
top:
    LOADWX r3, r1, r2
    LOADWX r4, r1, r6
    ADD r5, r3, r4
    ADD r2, r2, r9
    JLT r6, r8, top
    HALT
`, "LOADWX r3"},
		{"LOADWX;LOADWX, the second faults", `
    LI r1, 3000
    LI r2, 1
    LI r6, 1
    LI r9, 1
    LI r8, -1
top:
    LOADWX r3, r1, r2
    LOADWX r4, r1, r6
    ADD r5, r3, r4
    ADD r6, r6, r9
    JLT r6, r8, top
    HALT
`, "LOADWX r4"},
		{"LOAD;JNZ", `
    LI r1, 4000
    LI r2, 3
    LI r9, -1
top:
    LOAD r3, r1, 0
    JNZ r3, skip
    ADD r6, r6, r2
skip:
    ADD r1, r1, r2
    JLT r1, r9, top
    HALT
`, "LOAD r3"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, diags := fasm.Assemble("fault.fasm", []byte(tc.src))
			if diags.HasErrors() {
				t.Fatal(diags)
			}
			img, err := vm.NewImage(p)
			if err != nil {
				t.Fatal(err)
			}
			seqs := map[string]bool{}
			for _, s := range vm.Superinstructions() {
				seqs[seqName(s)] = true
			}
			if form := strings.Split(tc.name, ",")[0]; !seqs[form] {
				t.Fatalf("%s is not a fused form", form)
			}
			for _, trace := range []bool{false, true} {
				c := testCase{prog: p, cfg: vm.Config{Memory: memory, Stack: 64, Trace: trace}}
				full, err := differential(img, c, 100000)
				if err != nil {
					t.Fatalf("trace %v: %v", trace, err)
				}
				if full.state != vm.Faulted || full.fault != vm.InvalidAddress {
					t.Fatalf("trace %v: %v %v, want FAULTED INVALID_ADDRESS", trace, full.state, full.fault)
				}
				for b := full.ticks - min(full.ticks, 40); b <= full.ticks+1; b++ {
					if _, err := differential(img, c, b); err != nil {
						t.Fatalf("trace %v: %v", trace, err)
					}
				}
			}
			m := vm.New(img, vm.Config{Ticks: 100000, Memory: memory, Stack: 64}, nil)
			m.Run()
			insts, offs, err := bc.Insts(p.Code)
			if err != nil {
				t.Fatal(err)
			}
			got := "no instruction"
			for i, off := range offs {
				if uint64(off) == m.PC() {
					got = fmt.Sprintf("%s r%d", insts[i].Op, insts[i].A)
				}
			}
			if got != tc.faulting {
				t.Errorf("faulted at %s (pc %#x), want %s", got, m.PC(), tc.faulting)
			}
		})
	}
}
