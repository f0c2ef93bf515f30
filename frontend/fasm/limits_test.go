package fasm

import (
	"fmt"
	"runtime"
	"strings"
	"testing"
)

// Hostile input for the assembler (docs/fasm.md "Limits"). Forge assembly
// does not nest: a line is parsed on its own. What is left to bound is
// the work and memory of long lines and large files, linear in their
// size. No test measures time.

// bigAssembly is a program of n blocks of four lines, one label each.
func bigAssembly(n int) []byte {
	var b strings.Builder
	b.WriteString(".text\nmain:\n")
	for i := range n {
		fmt.Fprintf(&b, "l%d:\n    LI   r4, %d\n    ADD  r3, r3, r4   ; add\n    JZ   r3, l%d\n", i, i, i)
	}
	b.WriteString("    HALT\n")
	return []byte(b.String())
}

// Memory bound of Assemble, in bytes allocated per byte of input
// (docs/fasm.md "Limits"). Measured: 37 (4 MB of bigAssembly).
const maxAllocPerByte = 60

// TestLargeInput assembles 4 MB within the documented memory bound, and a
// quarter of it allocates about a quarter as much.
func TestLargeInput(t *testing.T) {
	assembleAlloc := func(src []byte) uint64 {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		p, diags := Assemble("big.fasm", src)
		if diags.HasErrors() || p == nil {
			t.Fatal(diags)
		}
		runtime.ReadMemStats(&after)
		return after.TotalAlloc - before.TotalAlloc
	}
	large := bigAssembly(60_000)
	alloc := assembleAlloc(large)
	n := uint64(len(large))
	t.Logf("%d bytes: %d allocated (%.0f per byte)", n, alloc, float64(alloc)/float64(n))
	if alloc > maxAllocPerByte*n {
		t.Errorf("allocated %d bytes for %d of input, more than %d per byte", alloc, n, maxAllocPerByte)
	}
	small := bigAssembly(15_000)
	perByte, smallPerByte := float64(alloc)/float64(n), float64(assembleAlloc(small))/float64(len(small))
	if perByte > 1.15*smallPerByte {
		t.Errorf("%.0f bytes allocated per byte of a 4 MB file, %.0f of one a quarter of it: not linear", perByte, smallPerByte)
	}
}

// TestLongLine checks that a line of 200,000 operands, and a label of a
// million characters, get one diagnostic each, the operands with
// allocation counts in proportion to their number.
func TestLongLine(t *testing.T) {
	wide := func(n int) []byte {
		return []byte(".text\nmain:\n    ADD " + strings.Repeat("r1, ", n-1) + "r1\n    HALT\n")
	}
	count := func(src []byte) uint64 {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		_, diags := Assemble("wide.fasm", src)
		if len(diags) != 1 || diags[0].Code != codeOperand {
			t.Fatalf("got %v, want one %s error", diags, codeOperand)
		}
		runtime.ReadMemStats(&after)
		return after.Mallocs - before.Mallocs
	}
	small, large := count(wide(50_000)), count(wide(200_000))
	if ratio := float64(large) / float64(small); ratio > 4.5 {
		t.Errorf("%d allocations for 50,000 operands, %d for 200,000: %.1f times, want at most 4.5", small, large, ratio)
	}
	label := ".text\n" + strings.Repeat("a", 1_000_000) + ":\n    HALT\n"
	if _, diags := Assemble("label.fasm", []byte(label)); len(diags) != 1 || diags[0].Code != codeDirective || diags[0].Pos.Line != 2 {
		t.Fatalf("got %v, want one %s error on line 2 (a name is at most 65535 bytes)", diags, codeDirective)
	}
}
