// Package opt_test holds the optimizer's golden suite: one module per
// txtar file, optimized by the full pipeline.
//
// A case opens with its header (docs/testing.md): "test ir O2", and a
// "test ir after-P" line for each pass P whose output it pins. It has
// these sections:
//
//	in.ir             a module in the printed form (docs/ir.md); it must verify
//	out/ir.O2         the module after the whole -O2 pipeline ("test ir O2")
//	out/ir.after-P    the module right after pass P ("test ir after-P", e.g.
//	                  test ir after-constfold; -update adds the section)
//
// Every case checks that the module verifies after every pass, that the
// optimized module round-trips through the printed form, that -O2 is
// idempotent in the sense that a second run still verifies, and that -O0
// leaves the module unchanged.
//
// go test ./tests/opt -update rewrites the out/ sections.
package opt_test

import (
	"strings"
	"testing"

	"github.com/genesis-toolchain/genesis/diag"
	"github.com/genesis-toolchain/genesis/internal/filetest"
	"github.com/genesis-toolchain/genesis/ir"
	"github.com/genesis-toolchain/genesis/ir/opt"
)

// suite runs the cases: "test ir O2" and "test ir after-P", whose
// outputs are out/ir.O2 and out/ir.after-P.
var suite = filetest.Suite{
	Checks:  map[string]filetest.Check{"ir": checkIR},
	Outputs: map[string][]string{"ir": irOutputs()},
}

// irOutputs is out/ir.O2 and out/ir.after-P for every pass P of the table.
func irOutputs() []string {
	out := []string{"out/ir.O2"}
	for _, p := range opt.Passes() {
		out = append(out, "out/ir.after-"+p.Name)
	}
	return out
}

func TestGolden(t *testing.T) {
	filetest.Run(t, "*.txtar", suite)
}

// checkIR runs "test ir O2" (checkO2) or "test ir after-P" (checkAfter).
func checkIR(t *testing.T, c *filetest.Case, d filetest.Directive) {
	src, ok := c.File("in.ir")
	if !ok {
		t.Fatal("no in.ir section")
	}
	if len(d.Args) != 1 {
		t.Fatalf("test %s: want \"test ir O2\" or \"test ir after-PASS\"", d)
	}
	m := parse(t, "in.ir", src)
	if d.Args[0] == "O2" {
		checkO2(t, c, m)
		return
	}
	name, ok := strings.CutPrefix(d.Args[0], "after-")
	if !ok {
		t.Fatalf("test %s: want \"test ir O2\" or \"test ir after-PASS\"", d)
	}
	if _, ok := opt.Lookup(name); !ok {
		t.Fatalf("test %s: no pass %s", d, name)
	}
	// A pass the pipeline runs more than once is pinned after its last
	// run.
	ran := false
	opt.Run(m, opt.MaxLevel, &opt.Hooks{AfterPass: func(p opt.Pass, m *ir.Module) {
		if p.Name == name {
			ran = true
			c.Check("out/ir.after-"+name, ir.Print(m))
		}
	}})
	if !ran {
		t.Errorf("test %s: pass %s did not run", d, name)
	}
}

// checkO2 checks that -O0 leaves the module unchanged, that it verifies
// after every pass of -O2, that the optimized module round-trips and
// verifies after a second -O2, and pins it as out/ir.O2.
func checkO2(t *testing.T, c *filetest.Case, m *ir.Module) {
	// -O0 changes nothing: it runs only the required passes, and
	// every function of these modules is reachable (or there is no
	// main).
	before := ir.Print(m)
	opt.Run(m, 0, nil)
	if got := ir.Print(m); got != before {
		t.Fatalf("-O0 changed the module:\n%s", got)
	}

	opt.Run(m, opt.MaxLevel, &opt.Hooks{AfterPass: func(p opt.Pass, m *ir.Module) {
		if diags := ir.Verify(m); len(diags) > 0 {
			t.Fatalf("after %s the module does not verify:\n%s\n%s", p.Name,
				diags.Render(diag.Sources{}), ir.Print(m))
		}
	}})
	printed := ir.Print(m)
	checkRoundTrip(t, printed)
	c.Check("out/ir.O2", printed)

	// The optimized module is a valid input to the optimizer again.
	opt.Run(m, opt.MaxLevel, &opt.Hooks{AfterPass: func(p opt.Pass, m *ir.Module) {
		if diags := ir.Verify(m); len(diags) > 0 {
			t.Fatalf("second run: after %s the module does not verify:\n%s\n%s", p.Name,
				diags.Render(diag.Sources{}), ir.Print(m))
		}
	}})
}

// parse parses and verifies src.
func parse(t *testing.T, name, src string) *ir.Module {
	t.Helper()
	srcs := diag.Sources{name: []byte(src)}
	m, diags := ir.Parse(name, []byte(src))
	if diags.HasErrors() {
		t.Fatalf("%s does not parse:\n%s", name, diags.Render(srcs))
	}
	if diags := ir.Verify(m); len(diags) > 0 {
		t.Fatalf("%s does not verify:\n%s", name, diags.Render(srcs))
	}
	return m
}

// checkRoundTrip checks that printed parses, verifies and prints
// identically.
func checkRoundTrip(t *testing.T, printed string) {
	t.Helper()
	m := parse(t, "printed.ir", printed)
	if again := ir.Print(m); again != printed {
		t.Fatalf("print → parse → print differs:\nfirst:\n%s\nsecond:\n%s", printed, again)
	}
}

// TestPassTable checks the table's invariants: unique names, a doc and a
// function for every pass, levels in 1..MaxLevel for optional passes and
// 0 for required ones, and the passes issues 3 and 15 ask for.
func TestPassTable(t *testing.T) {
	seen := map[string]bool{}
	for _, p := range opt.Passes() {
		if seen[p.Name] {
			t.Errorf("pass %s appears twice", p.Name)
		}
		seen[p.Name] = true
		if p.Doc == "" || p.Func == nil {
			t.Errorf("pass %s has no doc or no function", p.Name)
		}
		if p.Required && p.Level != 0 || !p.Required && (p.Level < 1 || p.Level > opt.MaxLevel) {
			t.Errorf("pass %s has level %d", p.Name, p.Level)
		}
	}
	for _, name := range []string{"mem2reg", "copyprop", "constfold", "simplify", "deadcode", "inline", "deadfuncs"} {
		if !seen[name] {
			t.Errorf("no pass %s", name)
		}
	}
}
