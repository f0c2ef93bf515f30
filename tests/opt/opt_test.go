// Package opt_test holds the optimizer's golden suite: one module per
// txtar file, optimized by the full pipeline.
//
// A case has these sections:
//
//	in.ir             a module in the printed form (docs/ir.md); it must verify
//	out/ir.O2         the module after the whole -O2 pipeline
//	out/ir.after-P    (optional) the module right after pass P (e.g.
//	                  out/ir.after-constfold); add an empty section and run
//	                  -update to fill it
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
	"github.com/genesis-toolchain/genesis/internal/golden"
	"github.com/genesis-toolchain/genesis/ir"
	"github.com/genesis-toolchain/genesis/ir/opt"
)

func TestGolden(t *testing.T) {
	golden.Run(t, "*.txtar", func(t *testing.T, c *golden.Case) {
		src, ok := c.File("in.ir")
		if !ok {
			t.Fatal("no in.ir section")
		}
		m := parse(t, "in.ir", src)

		// -O0 changes nothing: it runs only the required passes, and
		// every function of these modules is reachable (or there is no
		// main).
		before := ir.Print(m)
		opt.Run(m, 0, nil)
		if got := ir.Print(m); got != before {
			t.Fatalf("-O0 changed the module:\n%s", got)
		}

		want := map[string]bool{}
		for _, f := range c.Archive.Files {
			if name, ok := strings.CutPrefix(f.Name, "out/ir.after-"); ok {
				if _, ok := opt.Lookup(name); !ok {
					t.Errorf("section %s names no pass", f.Name)
				}
				want[name] = true
			}
		}
		opt.Run(m, opt.MaxLevel, &opt.Hooks{AfterPass: func(p opt.Pass, m *ir.Module) {
			printed := ir.Print(m)
			if diags := ir.Verify(m); len(diags) > 0 {
				t.Fatalf("after %s the module does not verify:\n%s\n%s", p.Name,
					diags.Render(diag.Sources{}), printed)
			}
			if want[p.Name] {
				c.Check("out/ir.after-"+p.Name, printed)
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
	})
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
