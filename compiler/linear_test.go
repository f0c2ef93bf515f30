package compiler

import (
	"fmt"
	"runtime"
	"strings"
	"testing"

	backend "github.com/genesis-toolchain/genesis/backend/forge"
	"github.com/genesis-toolchain/genesis/frontend/fasm"
	"github.com/genesis-toolchain/genesis/internal/inputlimits"
	"github.com/genesis-toolchain/genesis/ir"
	"github.com/genesis-toolchain/genesis/ir/opt"
)

// Generators of Genesis programs whose size grows with n, each stressing
// one dimension of a function or a program.
var linearCases = []struct {
	name string
	n    int
	gen  func(n int) string
}{
	// One expression of n terms: one block, n values in a chain.
	{"chain", 10_000, func(n int) string {
		return "fn main() -> void { }\nfn f() -> i64 {\n  " + strings.Repeat("1 + ", n-1) + "1\n}\n"
	}},
	// n ifs assigning one variable: n blocks, a variable with n moves.
	{"ifs", 1_000, func(n int) string {
		var b strings.Builder
		b.WriteString("fn main() -> void { }\nfn f(n: i64) -> i64 {\n  let mut x: i64 = n;\n")
		for i := range n {
			fmt.Fprintf(&b, "  if x > %d { x = x - %d; } else { x = x + 1; };\n", i, i%5)
		}
		b.WriteString("  x\n}\n")
		return b.String()
	}},
	// n locals all live at once: more values than registers, spilled.
	{"locals live together", 1_000, func(n int) string {
		var b strings.Builder
		b.WriteString("fn main() -> void { }\nfn f(n: i64) -> i64 {\n")
		for i := range n {
			fmt.Fprintf(&b, "  let mut a%d: i64 = n + %d;\n", i, i)
		}
		b.WriteString("  let mut s: i64 = 0;\n")
		for i := range n {
			fmt.Fprintf(&b, "  s = s + a%d;\n", i)
		}
		b.WriteString("  s\n}\n")
		return b.String()
	}},
	// n calls in one function, each with values live across it; at -O2
	// each is inlined, n blocks spliced into one region (simplify).
	{"calls", 1_000, func(n int) string {
		var b strings.Builder
		b.WriteString("fn main() -> void { }\nfn g(x: i64) -> i64 { x + 1 }\nfn f(n: i64) -> i64 {\n  let mut s: i64 = n;\n")
		for i := range n {
			fmt.Fprintf(&b, "  let c%d: i64 = s * %d;\n  s = g(s) + c%d;\n", i, i, i)
		}
		b.WriteString("  s\n}\n")
		return b.String()
	}},
	// n ifs on constant conditions: at -O2, each replaced by the arm
	// that runs, in one region (constfold).
	{"constant ifs", 1_000, func(n int) string {
		var b strings.Builder
		b.WriteString("fn main() -> void { }\nfn f(n: i64) -> i64 {\n  let mut s: i64 = n;\n")
		for i := range n {
			fmt.Fprintf(&b, "  if %d > 0 { s = s * %d; } else { s = s - 1; };\n", i%2, i)
		}
		b.WriteString("  s\n}\n")
		return b.String()
	}},
	// n recursive calls in one basic block, each with values live across
	// it: calls that change every register, whose live values are saved
	// by PUSH and POP (splitAtCalls).
	{"recursive calls", 1_000, func(n int) string {
		var b strings.Builder
		b.WriteString("fn main() -> void { }\nfn f(n: i64) -> i64 {\n  if n < 1 { return 0; };\n  let mut s: i64 = n;\n")
		for i := range n {
			fmt.Fprintf(&b, "  let c%d: i64 = s * %d;\n  s = f(s - 1) + c%d;\n", i, i, i)
		}
		b.WriteString("  s\n}\n")
		return b.String()
	}},
	// n ordinary functions.
	{"functions", 100, func(n int) string { return string(inputlimits.GenesisFunctions(n)) }},
}

// backendWork lowers src and returns what the stages after the frontend
// allocate — verify, the optimizer at level, the Forge backend and the
// assembler: the count of allocations and their bytes.
func backendWork(t *testing.T, src string, level int) (mallocs, bytes uint64) {
	t.Helper()
	m, ds := genesisModule([]Source{{Name: "x.gen", Data: []byte(src)}})
	if ds.HasErrors() {
		t.Fatal(ds)
	}
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	if ds := ir.Verify(m); ds.HasErrors() {
		t.Fatal(ds)
	}
	opt.Run(m, level, nil)
	text, ds := backend.Compile(m)
	if ds.HasErrors() {
		t.Fatal(ds)
	}
	if _, ds := fasm.Assemble("x.fasm", []byte(text)); ds.HasErrors() {
		t.Fatal(ds)
	}
	runtime.ReadMemStats(&after)
	return after.Mallocs - before.Mallocs, after.TotalAlloc - before.TotalAlloc
}

// TestBackendLinear checks that verify, the optimizer, the Forge backend
// (instruction selection, liveness, register allocation, emission) and
// the assembler do work linear in the size of a function and of a
// program: 4n of each generator allocates at most 4.6 times what n does,
// in count and in bytes (a quadratic stage makes it 16). Counted, not
// timed.
func TestBackendLinear(t *testing.T) {
	for _, c := range linearCases {
		for _, level := range []int{0, opt.MaxLevel} {
			t.Run(fmt.Sprintf("%s/O%d", c.name, level), func(t *testing.T) {
				small, smallBytes := backendWork(t, c.gen(c.n), level)
				large, largeBytes := backendWork(t, c.gen(4*c.n), level)
				t.Logf("n = %d: %d allocations, %d bytes; 4n: %d, %d", c.n, small, smallBytes, large, largeBytes)
				if r := float64(large) / float64(small); r > 4.6 {
					t.Errorf("%d allocations for n = %d, %d for 4n: %.1f times, want at most 4.6", small, c.n, large, r)
				}
				if r := float64(largeBytes) / float64(smallBytes); r > 4.6 {
					t.Errorf("%d bytes allocated for n = %d, %d for 4n: %.1f times, want at most 4.6", smallBytes, c.n, largeBytes, r)
				}
			})
		}
	}
}

// Memory bound of the whole of genesisc check (docs/genesis.md, "Limits"):
// the bytes allocated per byte of ordinary Genesis, through the frontend,
// the IR, the Forge backend and the assembler, and those still live at
// the end (the program). Measured: 794 and 4 (1.6 MB).
const (
	maxCheckAllocPerByte = 1000
	maxCheckLivePerByte  = 10
)

// TestCheckMemory compiles about 2 MB of ordinary Genesis as genesisc
// check does and checks what it allocates against the documented bound.
func TestCheckMemory(t *testing.T) {
	src := inputlimits.GenesisFunctions(4000)
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	out, ds := Build([]Source{{Name: "big.gen", Data: src}}, Options{})
	if ds.HasErrors() {
		t.Fatal(ds)
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	runtime.KeepAlive(out)
	n := uint64(len(src))
	alloc, live := after.TotalAlloc-before.TotalAlloc, after.HeapAlloc-min(after.HeapAlloc, before.HeapAlloc)
	t.Logf("%d bytes: %d allocated (%.0f per byte), %d live (%.1f per byte)", n, alloc, float64(alloc)/float64(n), live, float64(live)/float64(n))
	if alloc > maxCheckAllocPerByte*n {
		t.Errorf("allocated %d bytes for %d of input, more than %d per byte", alloc, n, maxCheckAllocPerByte)
	}
	if live > maxCheckLivePerByte*n {
		t.Errorf("%d bytes live for %d of input, more than %d per byte", live, n, maxCheckLivePerByte)
	}
}

// TestHeapLimit checks which builds get a soft heap limit: Genesis
// sources of 4 MiB or more in all, at 64 MiB plus 160 bytes a byte.
func TestHeapLimit(t *testing.T) {
	big := make([]byte, largeInput)
	half := big[:largeInput/2]
	for _, c := range []struct {
		name string
		srcs []Source
		want int64
	}{
		{"small Genesis", []Source{{Name: "a.gen", Data: half}}, 0},
		{"large Genesis", []Source{{Name: "a.gen", Data: big}}, 64<<20 + 160*largeInput},
		{"Genesis large in all", []Source{{Name: "a.gen", Data: half}, {Name: "b.GEN", Data: half}}, 64<<20 + 160*largeInput},
		{"large Forge assembly", []Source{{Name: "a.fasm", Data: big}}, 0},
		{"mixed languages", []Source{{Name: "a.gen", Data: big}, {Name: "b.ir", Data: half}}, 0},
	} {
		if got := HeapLimit(c.srcs); got != c.want {
			t.Errorf("%s: HeapLimit = %d, want %d", c.name, got, c.want)
		}
	}
}
