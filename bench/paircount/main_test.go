package main

import (
	"testing"

	bc "github.com/genesis-toolchain/genesis/forge/bytecode"
	"github.com/genesis-toolchain/genesis/frontend/fasm"
)

// The walker must count exactly what the machine executes: a loop of
// three iterations that calls a function with an early return, whose
// counts are known by hand.
func TestCountFollowsTheRun(t *testing.T) {
	src := []byte(`
        LI r1, 0
        LI r2, 3
top:    CALL f
        LI r3, 1
        ADD r1, r1, r3
        JLT r1, r2, top
        HALT
f:      LI r4, 2
        JLT r1, r4, out
        NOP
out:    RET
`)
	p, diags := fasm.Assemble("t.fasm", src)
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	pr, err := count(p, nil)
	if err != nil {
		t.Fatal(err)
	}
	// LI LI, then 3 × (CALL, LI ADD JLT, f: LI JLT, RET) with the NOP
	// run once (r1 = 2), then HALT.
	want := []uint64{1, 1, 3, 3, 3, 3, 1, 3, 3, 1, 3}
	if len(pr.exec) != len(want) {
		t.Fatalf("%d instructions, want %d", len(pr.exec), len(want))
	}
	for i, n := range want {
		if pr.exec[i] != n {
			t.Errorf("instruction %d (%s) executed %d times, want %d", i, pr.insts[i].Op, pr.exec[i], n)
		}
	}
	if pr.total != 25 {
		t.Errorf("total %d, want 25", pr.total)
	}
	// LI ADD JLT runs 3 times. Fusion is greedy in address order and a
	// fused slot continues after its sequence, as the interpreter's: LI
	// ADD takes the ADD, so ADD JLT, entered only through the LI, saves
	// nothing.
	all, each := saved(pr, []seq{{bc.ADD, bc.JLT}, {bc.LI, bc.ADD}})
	for _, c := range []struct {
		what string
		got  float64
		want float64
	}{{"the set", all, 3}, {"ADD JLT", each[0], 0}, {"LI ADD", each[1], 3}} {
		if d := c.got*float64(pr.total) - c.want; d < -0.01 || d > 0.01 {
			t.Errorf("%s saves %.2f dispatches, want %.0f", c.what, c.got*float64(pr.total), c.want)
		}
	}
}
