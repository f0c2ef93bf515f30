package vvm

import (
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/genesis-toolchain/genesis/frontend"

	"github.com/genesis-toolchain/genesis/diag"
	"github.com/genesis-toolchain/genesis/internal/inputlimits"
	"github.com/genesis-toolchain/genesis/ir"
)

// compile runs the whole frontend on src as the file t.vvm: Check,
// Lower, and the IR verifier (Compile).
func compile(src string) (*ir.Module, diag.List) {
	return Compile(frontend.File("t.vvm", []byte(src)))
}

// renderedDiag matches one rendered diagnostic: its first line, the
// source line (or a window of it) and the caret.
var renderedDiag = regexp.MustCompile(`^t\.vvm:\d+:\d+: error\[E001\]: [^\n]+\n    [^\n]*\n    [ \t]*\^\n$`)

// TestNestingLimits feeds the frontend constructs nested far past the
// limits (docs/vvm.md, Limits): each must get exactly one E001, rendered
// with its line and a caret, and no internal error, however deep the
// input (100,000 levels here, which crashed the compiler with a stack
// overflow before the limits).
func TestNestingLimits(t *testing.T) {
	const n = 100000
	var blocks strings.Builder
	for i := 0; i < maxBlocks+5; i++ {
		fmt.Fprintf(&blocks, "%sif true:\n", strings.Repeat("  ", i))
	}
	blocks.WriteString(strings.Repeat("  ", maxBlocks+5) + "x = 1\n")
	for _, c := range []struct {
		name, src, msg string
	}{
		{"parentheses", "x = " + strings.Repeat("(", n) + "1" + strings.Repeat(")", n) + "\n", "brackets nested too deeply"},
		{"lists", "x = " + strings.Repeat("[", n) + strings.Repeat("]", n) + "\n", "brackets nested too deeply"},
		{"objects", "x = " + strings.Repeat("{a: ", n) + "1" + strings.Repeat("}", n) + "\n", "brackets nested too deeply"},
		{"blocks", blocks.String(), "blocks nested too deeply"},
		{"not", "x = " + strings.Repeat("not ", n) + "true\n", "expression nested too deeply"},
		{"lambdas", "f = " + strings.Repeat("x => ", n) + "1\n", "expression nested too deeply"},
		// Chains parse flat, in time linear in their length: 20 times
		// the limit makes the point in less time than 100,000.
		{"sum", "x = 1" + strings.Repeat(" + 1", 20*maxDepth) + "\n", "expression nested too deeply"},
		{"or", "x = true" + strings.Repeat(" or false", 20*maxDepth) + "\n", "expression nested too deeply"},
		{"and", "x = true" + strings.Repeat(" and true", 20*maxDepth) + "\n", "expression nested too deeply"},
		{"members", "o = {a: 1}\nx = o" + strings.Repeat(".a", 20*maxDepth) + "\n", "expression nested too deeply"},
		{"indexes", "o = [1]\nx = o" + strings.Repeat("[0]", 20*maxDepth) + "\n", "expression nested too deeply"},
		{"mixed", "x = " + strings.Repeat("not (", n/10) + "true" + strings.Repeat(")", n/10) + "\n", "nested too deeply"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, diags := compile(c.src)
			if len(diags) != 1 {
				t.Fatalf("%d diagnostics, want 1:\n%s", len(diags), diags.Error())
			}
			d := diags[0]
			if d.Code != CodeSyntax || !strings.Contains(d.Msg, c.msg) || d.Pos.Line < 1 || d.Pos.Col < 1 {
				t.Fatalf("got %s, want an E001 %q with a position", d, c.msg)
			}
			out := diags.Render(diag.Sources{"t.vvm": []byte(c.src)})
			if !renderedDiag.MatchString(out) {
				t.Errorf("rendered:\n%s", out)
			}
			if len(out) > 2*diag.MaxShownWidth+200 {
				t.Errorf("the diagnostic renders as %d bytes", len(out))
			}
		})
	}
}

// TestWithinTheLimits checks that what the limits allow compiles: an
// expression just under maxDepth levels, the deepest brackets and
// blocks, and an elif chain longer than any limit (it lowers flat).
func TestWithinTheLimits(t *testing.T) {
	var blocks, elifs strings.Builder
	for i := 0; i < maxBlocks; i++ {
		fmt.Fprintf(&blocks, "%sif x == %d:\n", strings.Repeat("  ", i), i)
	}
	blocks.WriteString(strings.Repeat("  ", maxBlocks) + "y = 1\n")
	elifs.WriteString("if x == 0:\n  y = 0\n")
	for i := 1; i < 5000; i++ {
		fmt.Fprintf(&elifs, "elif x == %d:\n  y = %d\n", i, i)
	}
	elifs.WriteString("else:\n  y = 5000\n")
	for _, c := range []struct{ name, src string }{
		{"sum", "x = 1" + strings.Repeat(" + 1", maxDepth-2) + "\nexport x\n"},
		{"not", "x = " + strings.Repeat("not ", maxDepth-1) + "true\nexport x\n"},
		{"brackets", "x = " + strings.Repeat("[", maxBrackets) + strings.Repeat("]", maxBrackets) + "\nexport x\n"},
		{"blocks", "x = 1\ny = 0\n" + blocks.String() + "export y\n"},
		{"elifs", "x = 3\ny = 0\n" + elifs.String() + "export y\n"},
	} {
		t.Run(c.name, func(t *testing.T) {
			m, diags := compile(c.src)
			if diags.HasErrors() || m == nil {
				t.Fatalf("does not compile:\n%s", diags.Render(diag.Sources{"t.vvm": []byte(c.src)}))
			}
		})
	}
}

// mallocs measures what compiling src costs the heap (the module it
// returns kept live).
func mallocs(t *testing.T, src string) inputlimits.Usage {
	t.Helper()
	return inputlimits.Measure(func() any {
		m, diags := compile(src)
		if diags.HasErrors() || m == nil {
			t.Fatalf("does not compile: %s", diags.Error())
		}
		return m
	})
}

// deepProgram returns a program of n copies of statements nested as deep
// as the limits allow, and long: a sum of maxDepth-2 terms, a run of
// `not`s, the deepest brackets, an elif chain and a long list.
func deepProgram(n int) string {
	var b strings.Builder
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, "s%d = 1%s\n", i, strings.Repeat(" + 1", maxDepth-2))
		fmt.Fprintf(&b, "b%d = %strue\n", i, strings.Repeat("not ", maxDepth-1))
		fmt.Fprintf(&b, "l%d = %s%s\n", i, strings.Repeat("[", maxBrackets), strings.Repeat("]", maxBrackets))
		fmt.Fprintf(&b, "if s%d == 0:\n  e%d = 0\n", i, i)
		for j := 1; j < 200; j++ {
			fmt.Fprintf(&b, "elif s%d == %d:\n  e%d = %d\n", i, j, i, j)
		}
		fmt.Fprintf(&b, "x%d = [%s1]\n", i, strings.Repeat("1, ", 2000))
		fmt.Fprintf(&b, "export s%d\nexport b%d\nexport l%d\nexport x%d\n", i, i, i, i)
	}
	return b.String()
}

// TestTimeIsLinear checks, by counting allocations rather than timing,
// that the frontend's work grows linearly with input nested as deep as
// the limits allow: four times the input may not cost more than about
// four times the allocations. (Before the limits, a sum of 100,000 terms
// took minutes and gigabytes.)
func TestTimeIsLinear(t *testing.T) {
	inputlimits.Grows(t, mallocs(t, deepProgram(2)), mallocs(t, deepProgram(8)), 4, 1.25)
}

// maxAllocPerByte is the documented bound (docs/vvm.md, Limits) on what
// the frontend allocates in all, per byte of a program: Load, Lower and
// the IR verifier (about 720 measured: parsing about 270, of which the
// first lexing of a file parsed chunk by chunk is 45; lowering 340;
// verifying 100).
const maxAllocPerByte = 800

// maxHeapPerByte is the documented bound (docs/vvm.md, Limits) on the
// heap the compiled module holds, per byte of the program: the IR,
// which is most of the frontend's heap at its peak (about 260
// measured; the tree of the program, some 20 bytes per byte, and a
// chunk's parse tree are all the rest).
const maxHeapPerByte = 300

// TestMemoryIsBounded compiles a program of 512 KB and checks that the
// frontend allocates at most maxAllocPerByte bytes per byte of it, and
// that the module it makes holds at most maxHeapPerByte, which bound its
// peak heap. (genesisc check of a 50 MB program exhausted 8 GB before:
// quadratic work per statement.)
func TestMemoryIsBounded(t *testing.T) {
	if testing.Short() {
		t.Skip("allocates about 400 MB")
	}
	src := string(inputlimits.VVMProgram(512 << 10))
	inputlimits.PerByte(t, mallocs(t, src), len(src), maxAllocPerByte, maxHeapPerByte)
}
