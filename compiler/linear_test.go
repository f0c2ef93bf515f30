package compiler

import (
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/genesis-toolchain/genesis/frontend/genesis"

	"github.com/genesis-toolchain/genesis/backend/forgegen"
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
	m, ds := lower(genesis.Language, []Source{{Name: "x.gen", Data: []byte(src)}})
	if ds.HasErrors() {
		t.Fatal(ds)
	}
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	if ds := ir.Verify(m); ds.HasErrors() {
		t.Fatal(ds)
	}
	if err := opt.Run(m, level, nil); err != nil {
		t.Fatal(err)
	}
	text, ds := forgegen.Compile(m)
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

// Memory bound of the whole of genesisc build (docs/genesis.md,
// "Limits"): the bytes allocated per byte of ordinary Genesis, through
// the frontend, the IR, the Forge backend and the assembler, and those
// still live at the end (the program). Measured: 794 and 4 (1.6 MB).
const (
	maxBuildAllocPerByte = 1000
	maxBuildLivePerByte  = 10
)

// TestBuildMemory compiles about 2 MB of ordinary Genesis to a Forge
// program and checks what it allocates against the documented bound.
func TestBuildMemory(t *testing.T) {
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
	if alloc > maxBuildAllocPerByte*n {
		t.Errorf("allocated %d bytes for %d of input, more than %d per byte", alloc, n, maxBuildAllocPerByte)
	}
	if live > maxBuildLivePerByte*n {
		t.Errorf("%d bytes live for %d of input, more than %d per byte", live, n, maxBuildLivePerByte)
	}
}

// maxCheckHeldPerByte bounds what Check holds live at its peak, per
// byte of input, in every language not checked in two passes: the
// checked program (measured: 22 Grimoire, 29 nano-vm, 13 for an IR
// module; VVM held 19 in one pass). CheckHeapLimit gives the collector
// checkLimitPerByte, which must leave it room above this.
const maxCheckHeldPerByte = 40

// maxCheckHeldNanoVM bounds what Check holds live at its peak, per byte
// of a nano-vm program: the document's tree, the decoded steps and their
// conditions, and the diagnostics (measured: 19.4, where a step's two
// maps and a table of columns for every string made it 30).
// CheckHeapLimit gives the collector checkLimitNanoVM above it.
const maxCheckHeldNanoVM = 21

// maxCheckHeldGrimoire bounds what Check holds live at its peak, per
// byte of a spell: the checked tree (measured: 22.8). The parse holds
// less besides it, a spell's tokens compact (grimoire.ParseFile), so this
// is the peak of the whole check (TestCheckPeak). CheckHeapLimit gives
// the collector checkLimitGrimoire above it.
const maxCheckHeldGrimoire = 26

// maxCheckHeldGenesis bounds what Check holds live at its peak, per byte
// of Genesis: the declarations, the signatures of the IR and a few
// chunks of bodies (genesis.CheckHolding; measured: 4.8, where the whole
// checked tree was 26). CheckHeapLimit gives the collector
// checkLimitGenesis above it.
const maxCheckHeldGenesis = 6

// maxCheckHeldVVM bounds what Check holds live at its peak, per byte of
// VVM: the symbols of the module's top-level names, the summary of its
// values, and a chunk of statements (vvm.CheckHolding; measured: 3.8,
// where the whole checked tree was 19). CheckHeapLimit gives the
// collector checkLimitVVM above it, which also leaves room for the runes
// of the text (4 bytes a byte) that the first pass holds while it cuts a
// module into chunks.
const maxCheckHeldVVM = 5

// TestCheckMemory checks Check on about 1 MB of ordinary code of each
// kind of input against the bounds docs/genesis.md, docs/vvm.md,
// docs/grimoire.md, docs/nanovm.md, docs/ir.md and docs/fasm.md state
// ("Limits"): what it allocates in all, what it holds at its peak
// (maxCheckHeldPerByte: no IR module of a whole program, for Genesis no
// more than one function's), and that nothing stays live after. What it
// holds is measured once the frontend is done; a frontend may hold more
// while it parses (a spell's tokens), which TestCheckPeak bounds.
func TestCheckMemory(t *testing.T) {
	if checkLimitPerByte < 3*maxCheckHeldPerByte/2 {
		t.Errorf("the heap limit of a check, %d bytes a byte, leaves the collector too little room above what a check holds, %d", checkLimitPerByte, maxCheckHeldPerByte)
	}
	if checkLimitGenesis < 3*maxCheckHeldGenesis/2 {
		t.Errorf("the heap limit of a check of Genesis, %d bytes a byte, leaves the collector too little room above what a check holds, %d", checkLimitGenesis, maxCheckHeldGenesis)
	}
	if checkLimitGrimoire < 3*maxCheckHeldGrimoire/2 {
		t.Errorf("the heap limit of a check of Grimoire, %d bytes a byte, leaves the collector too little room above what a check holds, %d", checkLimitGrimoire, maxCheckHeldGrimoire)
	}
	if checkLimitNanoVM < 3*maxCheckHeldNanoVM/2 {
		t.Errorf("the heap limit of a check of nano-vm, %d bytes a byte, leaves the collector too little room above what a check holds, %d", checkLimitNanoVM, maxCheckHeldNanoVM)
	}
	if checkLimitVVM < 3*(maxCheckHeldVVM+4)/2 {
		t.Errorf("the heap limit of a check of VVM, %d bytes a byte, leaves the collector too little room above what a check holds, %d, and the runes of a module's text, 4", checkLimitVVM, maxCheckHeldVVM)
	}
	// Genesis prints as about 5 times as much IR and 3 times as much
	// assembly.
	printed := func(emit Emit, ratio int) func(int) []byte {
		return func(size int) []byte {
			out, ds := Build([]Source{{Name: "x.gen", Data: inputlimits.GenesisProgram(size / ratio)}}, Options{Emit: emit})
			if ds.HasErrors() {
				t.Fatal(ds)
			}
			return []byte(out.Text)
		}
	}
	for _, c := range []struct {
		name     string
		gen      func(size int) []byte
		maxAlloc uint64 // measured: 462, 313, 320, 91, 121, 43
		maxHeld  uint64
	}{
		{"x.gen", inputlimits.GenesisProgram, 550, maxCheckHeldGenesis},
		{"x.vvm", inputlimits.VVMProgram, 400, maxCheckHeldVVM},
		{"x.spell", inputlimits.SpellProgram, 400, maxCheckHeldGrimoire},
		{"x.json", inputlimits.NanoVMProgram, 100, maxCheckHeldNanoVM},
		{"x.ir", printed(EmitIR, 5), 160, maxCheckHeldPerByte},
		{"x.fasm", printed(EmitAsm, 3), 60, maxCheckHeldPerByte},
	} {
		t.Run(c.name, func(t *testing.T) {
			src := c.gen(1 << 20)
			var held uint64
			peaks := 0
			var base runtime.MemStats
			atCheckPeak = func() {
				peaks++
				var ms runtime.MemStats
				runtime.GC()
				runtime.ReadMemStats(&ms)
				held = ms.HeapAlloc - min(ms.HeapAlloc, base.HeapAlloc)
			}
			defer func() { atCheckPeak = nil }()
			use := inputlimits.Measure(func() any {
				runtime.ReadMemStats(&base) // after Measure's collection
				if ds := Check([]Source{{Name: c.name, Data: src}}); ds.HasErrors() {
					t.Fatal(ds)
				}
				return nil
			})
			inputlimits.PerByte(t, use, len(src), c.maxAlloc, 1)
			n := uint64(len(src))
			t.Logf("held at the peak: %d bytes (%.1f per byte)", held, float64(held)/float64(n))
			if held > c.maxHeld*n {
				t.Errorf("Check held %d bytes at its peak for %d of input, more than %d per byte", held, n, c.maxHeld)
			}
			if c.name != "x.fasm" && peaks != 1 {
				t.Errorf("Check reached its peak %d times, want once", peaks)
			}
		})
	}
}

// TestCheckHeapLimit checks the soft heap limit of a check: 64 MiB plus,
// per byte of input of every size, checkLimitGenesis bytes for Genesis,
// checkLimitVVM for VVM, checkLimitGrimoire for Grimoire,
// checkLimitNanoVM for JSON and YAML and checkLimitPerByte for any other
// kind (or a mix, the most of its languages').
func TestCheckHeapLimit(t *testing.T) {
	for _, c := range []struct {
		srcs    []Source
		perByte int64
	}{
		{nil, checkLimitGenesis},
		{[]Source{{Name: "a.gen", Data: make([]byte, 1000)}}, checkLimitGenesis},
		{[]Source{{Name: "a.gen", Data: make([]byte, 3000)}, {Name: "b.GEN", Data: make([]byte, 5000)}}, checkLimitGenesis},
		{[]Source{{Name: "a.vvm", Data: make([]byte, largeInput)}}, checkLimitVVM},
		{[]Source{{Name: "a.VVM", Data: make([]byte, 7)}}, checkLimitVVM},
		{[]Source{{Name: "a.json", Data: make([]byte, 1)}}, checkLimitNanoVM},
		{[]Source{{Name: "a.YML", Data: make([]byte, 9)}}, checkLimitNanoVM},
		{[]Source{{Name: "a.spell", Data: make([]byte, 9)}}, checkLimitGrimoire},
		{[]Source{{Name: "a.ir", Data: make([]byte, 9)}}, checkLimitPerByte},
		{[]Source{{Name: "a.json", Data: make([]byte, 10)}, {Name: "b.gen", Data: make([]byte, 20)}}, checkLimitNanoVM},
		{[]Source{{Name: "a.gen", Data: make([]byte, 10)}, {Name: "b.vvm", Data: make([]byte, 20)}}, checkLimitVVM},
		{[]Source{{Name: "a.vvm", Data: make([]byte, 10)}, {Name: "b.fasm", Data: make([]byte, 20)}}, checkLimitPerByte},
		{[]Source{{Name: "a.vvm", Data: make([]byte, 10)}, {Name: "b.spell", Data: make([]byte, 20)}}, checkLimitGrimoire},
	} {
		n := int64(0)
		for _, s := range c.srcs {
			n += int64(len(s.Data))
		}
		if got, want := CheckHeapLimit(c.srcs), int64(64<<20)+c.perByte*n; got != want {
			t.Errorf("%d bytes: CheckHeapLimit = %d, want %d", n, got, want)
		}
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
