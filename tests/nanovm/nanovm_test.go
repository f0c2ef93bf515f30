// Package nanovm_test is the golden suite of the nano-vm frontend
// (docs/nanovm.md) and its corpus test.
//
// A golden case, *.txtar, opens with its header (docs/testing.md): "test
// ir" for a program that compiles, "test errors" for one that must not
// (its name starts with err_). It has one program section, named *.json,
// *.yaml or *.yml, and
//
//	out/ir      the lowered module, printed, when the program compiles;
//	            it must verify and round-trip through the IR parser
//	out/errors  the rendered diagnostics (errors and warnings), when
//	            there are any
//
// The case's comment may pin diagnostics by hand, one per line, as
// "want CODE LINE:COL" (e.g. "want N004 7:15"): each must be among the
// diagnostics.
//
// The corpus test compiles every program of corpus/ (a copy of
// ../shared/corpus/nanovm, the programs extracted from nano-vm and
// nano-vm-mcp): those nano-vm accepts must compile to verifying IR, those
// it rejects (INDEX.md: INVALID) must get errors.
//
// go test ./tests/nanovm -update rewrites the out/ sections.
package nanovm_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/genesis-toolchain/genesis/diag"
	"github.com/genesis-toolchain/genesis/frontend"
	"github.com/genesis-toolchain/genesis/frontend/nanovm"
	"github.com/genesis-toolchain/genesis/internal/corpusindex"
	"github.com/genesis-toolchain/genesis/internal/filetest"
	"github.com/genesis-toolchain/genesis/internal/golden"
	"github.com/genesis-toolchain/genesis/internal/testharness/irtest"
	"github.com/genesis-toolchain/genesis/ir"
)

// minCases is the floor for the golden suite.
const minCases = 25

// suite runs the golden cases: "test ir" for a program that compiles
// (out/ir, and out/errors for its warnings), "test errors" for one that
// must not (out/errors).
var suite = filetest.Suite{
	Checks:  map[string]filetest.Check{"ir": checkCompile, "errors": checkCompile},
	Outputs: map[string][]string{"ir": {"out/ir", "out/errors"}, "errors": {"out/errors"}},
}

func TestGolden(t *testing.T) {
	if n := len(filetest.Files(t, "*.txtar")); n < minCases {
		t.Errorf("%d golden cases, want at least %d", n, minCases)
	}
	filetest.Run(t, "*.txtar", suite)
}

// checkCompile compiles the case's program, which must compile for
// "test ir" and must not for "test errors" (an err_ case's check).
func checkCompile(t *testing.T, c *filetest.Case, d filetest.Directive) {
	name, src := program(t, c.Case)
	m, diags := nanovm.Compile(frontend.File(name, src))
	for _, d := range diags {
		if d.Code == nanovm.CodeInternal {
			t.Fatalf("internal error: %s", d)
		}
	}
	rendered := diags.Render(diag.Sources{name: src})
	irtest.CheckCompiled(t, c, d, m, diags, rendered)
}

// program returns the case's program section.
func program(t *testing.T, c *golden.Case) (string, []byte) {
	t.Helper()
	for _, f := range c.Archive.Files {
		switch filepath.Ext(f.Name) {
		case ".json", ".yaml", ".yml":
			return f.Name, f.Data
		}
	}
	t.Fatal("no .json or .yaml section")
	return "", nil
}

// TestCorpus compiles every program of the corpus copy, and checks the
// copy against ../shared/corpus/nanovm when that is present.
func TestCorpus(t *testing.T) {
	invalid, err := corpusindex.Invalid(filepath.Join("corpus", "INDEX.md"))
	if err != nil {
		t.Fatal(err)
	}
	files := golden.CorpusFiles(t, "corpus", ".json", ".yaml", ".yml")
	if len(files) < 70 {
		t.Fatalf("corpus/ holds %d programs, want the 78 of the shared corpus", len(files))
	}
	valid, rejected := 0, 0
	for _, rel := range files {
		src, err := os.ReadFile(filepath.Join("corpus", rel))
		if err != nil {
			t.Fatal(err)
		}
		m, diags := nanovm.Compile(frontend.File(filepath.Base(rel), src))
		for _, d := range diags {
			if d.Code == nanovm.CodeInternal {
				t.Errorf("%s: internal error: %s", rel, d)
			}
		}
		if invalid[rel] {
			rejected++
			if m != nil || !diags.HasErrors() {
				t.Errorf("%s: nano-vm rejects it, but it compiles", rel)
			}
			continue
		}
		valid++
		if m == nil {
			t.Errorf("%s: nano-vm accepts it, but it does not compile:\n%s", rel, diags.Render(diag.Sources{filepath.Base(rel): src}))
			continue
		}
		if vs := ir.Verify(m); len(vs) > 0 {
			t.Errorf("%s: the IR does not verify:\n%s", rel, vs)
		}
		irtest.CheckRoundTrip(t, ir.Print(m))
	}
	t.Logf("corpus: %d programs compile, %d invalid ones are rejected", valid, rejected)
	if rejected != len(invalid) {
		t.Errorf("INDEX.md names %d invalid programs, %d were found", len(invalid), rejected)
	}

	golden.CheckCorpusCopy(t, "corpus", filepath.Join("..", "..", "..", "shared", "corpus", "nanovm"), ".json", ".yaml", ".yml")
}
