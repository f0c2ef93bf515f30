package genesis

import (
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/genesis-toolchain/genesis/diag"
	"github.com/genesis-toolchain/genesis/internal/filetest"
	"github.com/genesis-toolchain/genesis/internal/golden"
	"github.com/genesis-toolchain/genesis/internal/inputlimits"
	"github.com/genesis-toolchain/genesis/ir"
)

// The lowering golden cases live in tests/genesis/lower: each txtar file
// opens with its header (docs/testing.md) and holds .gen sections forming
// one program, which must check; "test ir" pins the printed IR module as
// out/ir, "test errors" (a case named err_*) the diagnostics lowering
// reports as out/errors.
// go test ./frontend/genesis -update rewrites them.
var lowerCases = filepath.Join("..", "..", "tests", "genesis", "lower", "*.txtar")

// lowerCase parses, checks and lowers the program of a case; the case
// must check cleanly.
func lowerCase(t *testing.T, c *golden.Case) (*ir.Module, string) {
	t.Helper()
	files, srcs, diags := parseAll(t, c)
	if diags.HasErrors() {
		t.Fatalf("a lowering case must parse:\n%s", diags.Render(srcs))
	}
	prog, diags := Check(files)
	if diags.HasErrors() {
		t.Fatalf("a lowering case must check:\n%s", diags.Render(srcs))
	}
	m, diags := Lower(prog)
	if diags.HasErrors() {
		if m != nil {
			t.Error("Lower returned a module along with errors")
		}
		return nil, diags.Render(srcs)
	}
	if len(diags) > 0 {
		t.Errorf("diagnostics without errors:\n%s", diags.Render(srcs))
	}
	return m, ""
}

// checkModule asserts what Lower promises of a module: it verifies, and
// its printed form parses back to the same text.
func checkModule(t *testing.T, m *ir.Module) string {
	t.Helper()
	if diags := ir.Verify(m); len(diags) > 0 {
		t.Errorf("the lowered module does not verify:\n%v\n%s", diags, ir.Print(m))
	}
	text := ir.Print(m)
	m2, diags := ir.Parse("out/ir", []byte(text))
	if diags.HasErrors() {
		t.Fatalf("the printed IR does not parse: %v\n%s", diags, text)
	}
	if again := ir.Print(m2); again != text {
		t.Errorf("the printed IR does not round-trip; reprinted:\n%s", again)
	}
	return text
}

// lowerSuite runs the lowering cases: "test ir" or "test errors".
var lowerSuite = filetest.Suite{
	Checks:  map[string]filetest.Check{"ir": checkLower, "errors": checkLower},
	Outputs: map[string][]string{"ir": {"out/ir"}, "errors": {"out/errors"}},
}

func TestLowerGolden(t *testing.T) {
	filetest.Run(t, lowerCases, lowerSuite)
}

// checkLower lowers the case's program, which must lower for "test ir"
// and must not for "test errors".
func checkLower(t *testing.T, c *filetest.Case, d filetest.Directive) {
	checkErrName(t, c, d, "ir")
	m, errs := lowerCase(t, c.Case)
	if m == nil {
		if d.Name != "errors" {
			t.Errorf("does not lower:\n%s", errs)
		}
		c.Check("out/errors", errs)
		return
	}
	if d.Name == "errors" {
		t.Error("a \"test errors\" case lowers")
	}
	c.Check("out/ir", checkModule(t, m))
}

// TestLowerCheckCases lowers every program of the type-checking golden
// cases that checks, so that every construct they cover lowers to IR
// that verifies.
func TestLowerCheckCases(t *testing.T) {
	for _, path := range filetest.Files(t, checkCases) {
		t.Run(strings.TrimSuffix(filepath.Base(path), ".txtar"), func(t *testing.T) {
			c, err := filetest.Load(path)
			if err != nil {
				t.Fatal(err)
			}
			if c.Has("errors") {
				t.Skip("an error case")
			}
			m, errs := lowerCase(t, c.Case)
			if m == nil {
				t.Fatalf("Lower failed:\n%s", errs)
			}
			checkModule(t, m)
		})
	}
}

func TestLowerNil(t *testing.T) {
	m, diags := Lower(nil)
	if m != nil || len(diags) != 1 || diags[0].Code != CodeInternal {
		t.Errorf("Lower(nil) = %v, %v; want no module and one internal error", m, diags)
	}
}

// TestLowerDeterministic lowers one program twice: the printed IR must be
// the same (no map order leaks into names or data).
func TestLowerDeterministic(t *testing.T) {
	src := `
fn main() -> void {
  let a: *u8 = "x";
  let b: *u8 = "y";
  let c: *u8 = "x";
  let d: [u64; 3] = [7; 3];
}`
	var outs []string
	for range 2 {
		f, diags := Parse("d.gen", []byte(src))
		if diags.HasErrors() {
			t.Fatal(diags)
		}
		prog, diags := Check([]*File{f})
		if diags.HasErrors() {
			t.Fatal(diags)
		}
		m, diags := Lower(prog)
		if diags.HasErrors() {
			t.Fatal(diags)
		}
		outs = append(outs, ir.Print(m))
	}
	if outs[0] != outs[1] {
		t.Errorf("two lowerings differ:\n%s\n---\n%s", outs[0], outs[1])
	}
	if n := strings.Count(outs[0], "data @"); n != 2 {
		t.Errorf("equal string literals must share one data object; %d objects:\n%s", n, outs[0])
	}
}

// TestLowerNestedLayout checks the offsets lowering reads from the
// checker's layouts when a struct is used by value more than once.
func TestLowerNestedLayout(t *testing.T) {
	src := `
struct P { x: i64, y: i64 }
struct L { a: P, b: P }
enum E { N, Q(P) }
fn main() -> void {}
`
	f, diags := Parse("n.gen", []byte(src))
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	prog, diags := Check([]*File{f})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	l, e := prog.Structs[1], prog.Enums[0]
	if Sizeof(l) != 32 || l.Fields[1].Offset != 16 || Sizeof(e) != 24 {
		t.Errorf("a struct used by value twice must keep its layout: "+
			"sizeof L = %d, offset of L.b = %d, sizeof E = %d; want 32, 16, 24", Sizeof(l), l.Fields[1].Offset, Sizeof(e))
	}
}

// TestLowerConsuming checks that LowerConsuming lowers every lowering
// case to the IR Lower gives, and drops each function's body.
func TestLowerConsuming(t *testing.T) {
	// The cases are read, not run through golden.Run: this test records
	// no section, and -update must not rewrite them from it.
	for _, path := range golden.Files(t, lowerCases) {
		t.Run(filepath.Base(path), func(t *testing.T) {
			c, err := golden.Load(path)
			if err != nil {
				t.Fatal(err)
			}
			want, wantErrs := lowerCase(t, c)
			files, srcs, _ := parseAll(t, c)
			prog, _ := Check(files)
			m, diags := LowerConsuming(prog)
			if got := diags.Render(srcs); diags.HasErrors() && got != wantErrs {
				t.Errorf("LowerConsuming reported\n%s\nLower\n%s", got, wantErrs)
			}
			if (m == nil) != (want == nil) || m != nil && ir.Print(m) != ir.Print(want) {
				t.Errorf("LowerConsuming and Lower give different modules")
			}
			for _, fn := range prog.Funcs {
				if fn.Decl.Body != nil {
					t.Errorf("the body of %s is still held after LowerConsuming", fn.name)
				}
			}
		})
	}
}

// TestCheckLowering checks that CheckLowering reports, on every lowering
// case, the diagnostics Lower does (none for the cases that lower, the
// same rendering for the others), and drops each function's body.
func TestCheckLowering(t *testing.T) {
	for _, path := range golden.Files(t, lowerCases) {
		t.Run(filepath.Base(path), func(t *testing.T) {
			c, err := golden.Load(path)
			if err != nil {
				t.Fatal(err)
			}
			want, wantErrs := lowerCase(t, c)
			files, srcs, _ := parseAll(t, c)
			prog, _ := Check(files)
			diags := CheckLowering(prog)
			if got := diags.Render(srcs); got != wantErrs {
				t.Errorf("CheckLowering reported\n%s\nLower\n%s", got, wantErrs)
			}
			if want == nil && !diags.HasErrors() {
				t.Errorf("Lower failed, CheckLowering found no error")
			}
			for _, fn := range prog.Funcs {
				if fn.Decl.Body != nil {
					t.Errorf("the body of %s is still held after CheckLowering", fn.name)
				}
			}
		})
	}
}

// TestLowerConsumingMemory checks that the checked tree does not stay
// live with the IR after LowerConsuming: on ordinary code the module
// and what is left of the program take at most 90 % of what the module
// and the whole annotated tree take after Lower (measured: 80 %).
func TestLowerConsumingMemory(t *testing.T) {
	src := inputlimits.GenesisProgram(512 << 10)
	live := func(lower func(*Program) (*ir.Module, diag.List)) uint64 {
		f, diags := Parse("big.gen", src)
		if diags.HasErrors() {
			t.Fatal(diags)
		}
		prog, diags := Check([]*File{f})
		if diags.HasErrors() {
			t.Fatal(diags)
		}
		m, diags := lower(prog)
		if diags.HasErrors() {
			t.Fatal(diags)
		}
		var ms runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&ms)
		runtime.KeepAlive(prog)
		runtime.KeepAlive(m)
		return ms.HeapAlloc
	}
	// Both measures include the same baseline (the test binary's heap),
	// which only makes the ratio closer to 1 and the test stricter.
	whole := live(Lower)
	consumed := live(LowerConsuming)
	t.Logf("live after Lower: %d bytes; after LowerConsuming: %d (%.0f %%)", whole, consumed, 100*float64(consumed)/float64(whole))
	if consumed*100 > whole*90 {
		t.Errorf("LowerConsuming left %d bytes live, more than 90 %% of Lower's %d", consumed, whole)
	}
}
