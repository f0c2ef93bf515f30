package ir_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/genesis-toolchain/genesis/internal/golden"
	"github.com/genesis-toolchain/genesis/ir"
)

// TestFuncVerifier checks that verifying a module one function at a
// time, dropping each body once verified, reports what Verify reports on
// the whole module, in the same order: on every verifier case of
// tests/ir (the module-level rules, duplicate symbols, steps unique
// across functions and calls checked against signatures included), and
// on a module whose data is added between functions.
func TestFuncVerifier(t *testing.T) {
	paths := golden.Files(t, filepath.Join("..", "tests", "ir", "*.txtar"))
	cases := 0
	for _, path := range paths {
		c, err := golden.Load(path)
		if err != nil {
			t.Fatal(err)
		}
		src, ok := c.File("in.ir")
		if !ok {
			continue
		}
		verify := func() (whole, oneByOne string) {
			m, diags := ir.Parse("in.ir", []byte(src))
			if diags.HasErrors() {
				return "", ""
			}
			whole = ir.Verify(m).Error()
			m, _ = ir.Parse("in.ir", []byte(src))
			fv := ir.NewFuncVerifier(m)
			var all []string
			for _, f := range m.Funcs {
				if ds := fv.Verify(f); len(ds) > 0 {
					all = append(all, ds.Error())
				}
				f.Body, f.Locals = nil, nil
			}
			return whole, strings.Join(all, "\n")
		}
		whole, oneByOne := verify()
		if whole == "" {
			continue // the case is about the parser, or verifies
		}
		cases++
		if oneByOne != whole {
			t.Errorf("%s: one function at a time:\n%s\nwhole module:\n%s", filepath.Base(path), oneByOne, whole)
		}
	}
	if cases < 10 {
		t.Errorf("only %d verifier cases with errors in tests/ir", cases)
	}

	// Data added after NewFuncVerifier is checked with the next function.
	m, diags := ir.Parse("t.ir", []byte("func @main() @t.gen:1:1 {\n}\n"))
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	fv := ir.NewFuncVerifier(m)
	m.NewData("main", []byte("x"), 3, m.Funcs[0].Pos)
	got := fv.Verify(m.Funcs[0]).Error()
	for _, want := range []string{"symbol @main is defined twice", "alignment 3 is not a power of two"} {
		if !strings.Contains(got, want) {
			t.Errorf("data added after NewFuncVerifier: got %q, want %q", got, want)
		}
	}
}
