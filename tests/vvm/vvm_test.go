// Package vvm_test is the golden suite of the VVM frontend's syntax and
// validation (frontend/vvm, docs/vvm.md) and its corpus test.
//
// A case is a txtar file with one or more .vvm sections: the first is
// the program's entry, the others modules it may import by their section
// names (read from memory: a name with no section is a missing file).
// The program is loaded with vvm.Load. The case's header
// (docs/testing.md) says "test ast" (parse/), "test errors" (errors/) or
// "test ir" (lower/, lower_test.go), and the case has
//
//	out/ast     parse cases only: every module's printed tree (vvm.Sprint),
//	            in the order the modules run
//	out/errors  the rendered diagnostics (errors and warnings), when there
//	            are any
//
// parse/*.txtar holds one case per statement or construct: each must load
// without errors. errors/*.txtar holds one case per error and warning
// code, named after it (errors/E040.txtar, errors/E001_forms.txtar): each
// must get that code. The comment of any case may pin diagnostics by
// hand, one per line, as "want CODE LINE:COL" (e.g. "want E040 3:6"):
// each must be among the diagnostics.
//
// The corpus test loads every program of corpus/ (a copy of
// ../shared/corpus/vvm, the examples of the VVM project, MIT, see
// corpus/LICENSE), each file as a program's entry; corpus.txtar ("test
// load") records which load without error and every diagnostic.
//
// go test ./tests/vvm -update rewrites the out/ sections.
package vvm_test

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/genesis-toolchain/genesis/diag"
	"github.com/genesis-toolchain/genesis/frontend"
	"github.com/genesis-toolchain/genesis/frontend/vvm"
	"github.com/genesis-toolchain/genesis/internal/filetest"
	"github.com/genesis-toolchain/genesis/internal/golden"
	"github.com/genesis-toolchain/genesis/internal/testharness/irtest"
)

// Floors: the parse and error suites' size, and the share of the corpus
// that must load without error (the issue asks for 90%).
const (
	minParseCases   = 20
	minErrorCases   = 45
	minCorpusPassed = 0.9
)

// suite runs the parse, error and lower cases: "test ast" (out/ast),
// "test errors" (the code the case is named after) and "test ir"
// (lower_test.go); each pins out/errors when there are diagnostics.
var suite = filetest.Suite{
	Checks: map[string]filetest.Check{"ast": checkAST, "errors": checkErrors, "ir": checkLower},
	Outputs: map[string][]string{
		"ast":    {"out/ast", "out/errors"},
		"errors": {"out/errors"},
		"ir":     {"out/ir", "out/errors"},
	},
}

func TestParse(t *testing.T) {
	if n := len(filetest.Files(t, filepath.Join("parse", "*.txtar"))); n < minParseCases {
		t.Errorf("%d parse cases, want at least %d", n, minParseCases)
	}
	filetest.Run(t, filepath.Join("parse", "*.txtar"), suite)
}

// checkAST loads the program, which must load without errors, and pins
// every module's printed tree.
func checkAST(t *testing.T, c *filetest.Case, d filetest.Directive) {
	prog, diags := run(t, c.Case)
	if diags.HasErrors() {
		t.Fatalf("a parse case must load without errors")
	}
	var b strings.Builder
	for _, m := range prog.Modules {
		b.WriteString(vvm.Sprint(m.File))
	}
	c.Check("out/ast", b.String())
}

func TestErrors(t *testing.T) {
	if n := len(filetest.Files(t, filepath.Join("errors", "*.txtar"))); n < minErrorCases {
		t.Errorf("%d error cases, want at least %d", n, minErrorCases)
	}
	filetest.Run(t, filepath.Join("errors", "*.txtar"), suite)
}

// checkErrors loads the program, which must get the code the case is
// named after.
func checkErrors(t *testing.T, c *filetest.Case, d filetest.Directive) {
	_, diags := run(t, c.Case)
	code, _, _ := strings.Cut(c.Name, "_")
	found := false
	for _, d := range diags {
		found = found || d.Code == code
	}
	if !found {
		t.Errorf("no %s among the diagnostics", code)
	}
}

// run loads a case's program and records its outputs.
func run(t *testing.T, c *golden.Case) (*vvm.Program, diag.List) {
	t.Helper()
	files := map[string][]byte{}
	entry := ""
	for _, f := range c.Archive.Files {
		if strings.HasSuffix(f.Name, ".vvm") {
			files[f.Name] = f.Data
			if entry == "" {
				entry = f.Name
			}
		}
	}
	if entry == "" {
		t.Fatal("no .vvm section")
	}
	prog, diags := vvm.Check(readInput(t, entry, func(name string) ([]byte, error) {
		if data, ok := files[name]; ok {
			return data, nil
		}
		return nil, fs.ErrNotExist
	}))
	noInternal(t, diags)
	if len(diags) > 0 {
		c.Check("out/errors", diags.Render(diag.Sources(files)))
	}
	irtest.CheckWants(t, c, diags)
	return prog, diags
}

// readInput is the frontend input of the program whose entry is entry,
// read with read, which reads the modules it imports too.
func readInput(t *testing.T, entry string, read func(string) ([]byte, error)) frontend.Input {
	t.Helper()
	in, err := frontend.ReadInput(entry, read)
	if err != nil {
		t.Fatal(err)
	}
	return in
}

func noInternal(t *testing.T, diags diag.List) {
	t.Helper()
	for _, d := range diags {
		if d.Code == vvm.CodeInternal {
			t.Fatalf("internal error: %s", d)
		}
	}
}

// TestCorpus loads every program of the corpus copy, records which load
// and their diagnostics in corpus.txtar, and checks the copy against
// ../shared/corpus/vvm when that is present.
func TestCorpus(t *testing.T) {
	files := golden.CorpusFiles(t, "corpus", ".vvm")
	if len(files) < 43 {
		t.Fatalf("corpus/ holds %d programs, want the 43 of the shared corpus", len(files))
	}
	filetest.Run(t, "corpus.txtar", filetest.Suite{
		Checks:  map[string]filetest.Check{"load": func(t *testing.T, c *filetest.Case, d filetest.Directive) { loadCorpus(t, c, files) }},
		Outputs: map[string][]string{"load": {"out/summary", "out/errors"}},
	})

	golden.CheckCorpusCopy(t, "corpus", filepath.Join("..", "..", "..", "shared", "corpus", "vvm"), ".vvm")
}

// loadCorpus is corpus.txtar's "test load": it loads each of files (paths
// relative to corpus/) as a program's entry and pins which load without
// error (out/summary) and every diagnostic (out/errors).
func loadCorpus(t *testing.T, c *filetest.Case, files []string) {
	var summary, all strings.Builder
	passed := 0
	for _, rel := range files {
		// Check reads the copy through paths relative to corpus/, so that
		// the diagnostics name the files as the corpus does.
		prog, diags := vvm.Check(readInput(t, rel, func(name string) ([]byte, error) {
			return os.ReadFile(filepath.Join("corpus", filepath.FromSlash(name)))
		}))
		noInternal(t, diags)
		srcs := diag.Sources{}
		for _, m := range prog.Modules {
			if m.File != nil {
				srcs[m.Path] = m.File.Src
			}
		}
		status := "ok"
		if diags.HasErrors() {
			status = "FAIL"
		} else {
			passed++
		}
		fmt.Fprintf(&summary, "%-4s %s\n", status, rel)
		all.WriteString(diags.Render(srcs))
	}
	fmt.Fprintf(&summary, "%d of %d programs load without error\n", passed, len(files))
	c.Check("out/summary", summary.String())
	c.Check("out/errors", all.String())
	t.Logf("corpus: %d of %d programs load without error", passed, len(files))
	if float64(passed) < minCorpusPassed*float64(len(files)) {
		t.Errorf("%d of %d corpus programs load, want at least %.0f%%", passed, len(files), 100*minCorpusPassed)
	}
}

// TestExamples: the project's own VVM examples (examples/*.vvm) load
// and lower without a single diagnostic, so `genesisc check` on them
// prints nothing.
func TestExamples(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("..", "..", "examples", "*.vvm"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no examples: %v", err)
	}
	for _, f := range files {
		prog, diags := vvm.Check(readInput(t, f, os.ReadFile))
		if len(diags) > 0 {
			t.Errorf("%s: %s", f, diags.Error())
			continue
		}
		if _, ds := vvm.Lower(prog); len(ds) > 0 {
			t.Errorf("%s: lowering: %s", f, ds.Error())
		}
	}
}
