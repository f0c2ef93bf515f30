// Package ir_test holds the IR's golden suite: one module per txtar file,
// parsed, printed and verified.
//
// A case has these sections:
//
//	in.ir       a module in the printed form (docs/ir.md)
//	out/ir      the module printed back, when it parses and verifies
//	out/errors  the parse error, or the verifier's diagnostics
//
// Every case that parses must round-trip: printing it, parsing the
// printed text and printing again gives the same text.
//
// go test ./tests/ir -update rewrites the out/ sections.
package ir_test

import (
	"testing"

	"github.com/genesis-toolchain/genesis/diag"
	"github.com/genesis-toolchain/genesis/internal/golden"
	"github.com/genesis-toolchain/genesis/ir"
)

func TestGolden(t *testing.T) {
	golden.Run(t, "*.txtar", func(t *testing.T, c *golden.Case) {
		src, ok := c.File("in.ir")
		if !ok {
			t.Fatal("no in.ir section")
		}
		srcs := diag.Sources{"in.ir": []byte(src)}
		m, diags := ir.Parse("in.ir", []byte(src))
		if diags.HasErrors() {
			if m != nil {
				t.Error("Parse returned a module along with errors")
			}
			c.Check("out/errors", diags.Render(srcs))
			return
		}
		printed := ir.Print(m)
		checkRoundTrip(t, printed)
		if diags := ir.Verify(m); len(diags) > 0 {
			c.Check("out/errors", diags.Render(srcs))
			return
		}
		c.Check("out/ir", printed)
	})
}

// checkRoundTrip checks that printed parses and prints identically.
func checkRoundTrip(t *testing.T, printed string) {
	t.Helper()
	m, diags := ir.Parse("printed.ir", []byte(printed))
	if diags.HasErrors() {
		t.Fatalf("the printed module does not parse:\n%s\n%s", diags.Render(diag.Sources{"printed.ir": []byte(printed)}), printed)
	}
	if again := ir.Print(m); again != printed {
		t.Fatalf("print → parse → print differs:\nfirst:\n%s\nsecond:\n%s", printed, again)
	}
}

// TestEveryOp checks that every op of the table appears in a golden case
// that parses and verifies.
func TestEveryOp(t *testing.T) {
	seen := map[ir.Op]bool{}
	var walk func(r *ir.Region)
	walk = func(r *ir.Region) {
		for _, in := range r.Instrs {
			seen[in.Op] = true
			for _, sub := range in.Regions {
				walk(sub)
			}
		}
	}
	for _, path := range golden.Files(t, "*.txtar") {
		c, err := golden.Load(path)
		if err != nil {
			t.Fatal(err)
		}
		src, _ := c.File("in.ir")
		m, diags := ir.Parse("in.ir", []byte(src))
		if diags.HasErrors() || len(ir.Verify(m)) > 0 {
			continue
		}
		for _, f := range m.Funcs {
			walk(f.Body)
		}
	}
	for _, op := range ir.Ops() {
		if !seen[op] {
			t.Errorf("no valid golden case uses %s", op)
		}
	}
}
