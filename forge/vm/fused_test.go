package vm_test

import (
	"testing"

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

// TestFusedCallsAtStackLimit runs the recursion with stacks of every size
// up to what it needs, so that the overflow falls on each instruction of
// the fused sequences, and every budget around, against the reference
// interpreter.
func TestFusedCallsAtStackLimit(t *testing.T) {
	p, diags := fasm.Assemble("recursion.fasm", []byte(recursion))
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	img, err := vm.NewImage(p)
	if err != nil {
		t.Fatal(err)
	}
	overflows := 0
	for stack := uint64(8); stack <= 256; stack += 8 {
		tc := testCase{prog: p, cfg: vm.Config{Memory: 1 << 16, Stack: stack}}
		full, err := differential(img, tc, 100000)
		if err != nil {
			t.Fatalf("stack %d: %v", stack, err)
		}
		if full.state == vm.Faulted && full.fault == vm.StackOverflow {
			overflows++
		}
		for b := uint64(0); b <= full.ticks+1 && b < 400; b++ {
			if _, err := differential(img, tc, b); err != nil {
				t.Fatalf("stack %d, budget %d: %v", stack, b, err)
			}
		}
	}
	if overflows < 10 {
		t.Errorf("only %d stack sizes overflowed: the test does not reach the fault paths", overflows)
	}
}
