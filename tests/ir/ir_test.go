// Package ir_test holds the IR's golden suite: one module per txtar file,
// parsed, printed and verified.
//
// A case opens with its header (docs/testing.md): "test ir" for a module
// that parses and verifies, "test errors" for one that must not (named
// perr_ when it does not parse, verr_ when it parses but does not
// verify). It has these sections:
//
//	in.ir       a module in the printed form (docs/ir.md)
//	out/ir      the module printed back ("test ir")
//	out/errors  the parse error, or the verifier's diagnostics ("test errors")
//
// Every case that parses must round-trip: printing it, parsing the
// printed text and printing again gives the same text.
//
// go test ./tests/ir -update rewrites the out/ sections.
package ir_test

import (
	"strings"
	"testing"

	"github.com/genesis-toolchain/genesis/diag"
	"github.com/genesis-toolchain/genesis/internal/filetest"
	"github.com/genesis-toolchain/genesis/ir"
)

// suite runs the cases: "test ir" prints a valid module back (out/ir),
// "test errors" pins why a module is not valid (out/errors).
var suite = filetest.Suite{
	Checks:  map[string]filetest.Check{"ir": checkModule, "errors": checkModule},
	Outputs: map[string][]string{"ir": {"out/ir"}, "errors": {"out/errors"}},
}

func TestGolden(t *testing.T) {
	filetest.Run(t, "*.txtar", suite)
}

// checkModule parses, prints and verifies the case's module. A "test
// ir" case must parse and verify; a "test errors" case must not, and its
// name says where it fails: perr_ at parsing, verr_ at verifying.
func checkModule(t *testing.T, c *filetest.Case, d filetest.Directive) {
	src, ok := c.File("in.ir")
	if !ok {
		t.Fatal("no in.ir section")
	}
	wantParseErr := strings.HasPrefix(c.Name, "perr_")
	wantVerifyErr := strings.HasPrefix(c.Name, "verr_")
	if (d.Name == "errors") != (wantParseErr || wantVerifyErr) {
		t.Errorf("test %s: a case named perr_* or verr_* is \"test errors\", any other \"test ir\"", d)
	}
	srcs := diag.Sources{"in.ir": []byte(src)}
	m, diags := ir.Parse("in.ir", []byte(src))
	if diags.HasErrors() {
		if m != nil {
			t.Error("Parse returned a module along with errors")
		}
		if !wantParseErr {
			t.Errorf("does not parse:\n%s", diags.Render(srcs))
		}
		c.Check("out/errors", diags.Render(srcs))
		return
	}
	if wantParseErr {
		t.Error("a perr_ case parses")
	}
	printed := ir.Print(m)
	checkRoundTrip(t, printed)
	if diags := ir.Verify(m); len(diags) > 0 {
		if d.Name != "errors" {
			t.Errorf("does not verify:\n%s", diags.Render(srcs))
		}
		c.Check("out/errors", diags.Render(srcs))
		return
	}
	if d.Name == "errors" {
		t.Error("a \"test errors\" case parses and verifies")
	}
	c.Check("out/ir", printed)
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

// TestEveryOp checks that every op of the table appears in a "test ir"
// case (one that parses and verifies).
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
	for _, path := range filetest.Files(t, "*.txtar") {
		c, err := filetest.Load(path)
		if err != nil {
			t.Fatal(err)
		}
		if !c.Has("ir") {
			continue
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
