package genesis

import (
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/genesis-toolchain/genesis/diag"
	"github.com/genesis-toolchain/genesis/internal/filetest"
	"github.com/genesis-toolchain/genesis/internal/golden"
)

// The golden cases live in tests/genesis. Each txtar file opens with its
// header (docs/testing.md) and holds one or more .gen sections, parsed in
// the order given and checked together as one program, and the expected
// outputs:
//
//	parse/*.txtar   test ast     out/ast     the printed AST; every file parses
//	                test errors  out/errors  the rendered syntax errors (err_*)
//	check/*.txtar   test typed   out/typed   the typed AST of every file; the program checks
//	                test errors  out/errors  the rendered diagnostics (err_*)
//
// go test ./frontend/genesis -update rewrites the out/ sections.
var (
	parseCases = filepath.Join("..", "..", "tests", "genesis", "parse", "*.txtar")
	checkCases = filepath.Join("..", "..", "tests", "genesis", "check", "*.txtar")
)

// sources returns the .gen sections of a case, in order.
func sources(c *golden.Case) (names []string, srcs diag.Sources) {
	srcs = diag.Sources{}
	for _, f := range c.Archive.Files {
		if strings.HasSuffix(f.Name, ".gen") {
			names = append(names, f.Name)
			srcs[f.Name] = f.Data
		}
	}
	return names, srcs
}

// parseAll parses the sources of a case; the files and every syntax
// error, rendered.
func parseAll(t *testing.T, c *golden.Case) ([]*File, diag.Sources, diag.List) {
	names, srcs := sources(c)
	if len(names) == 0 {
		t.Fatal("no .gen section")
	}
	var in []Source
	for _, name := range names {
		in = append(in, Source{Name: name, Data: srcs[name]})
	}
	files, all := ParseFiles(in)
	for i, f := range files {
		if f == nil {
			t.Fatalf("ParseFiles returned no file for %s", names[i])
		}
	}
	return files, srcs, all
}

// parseSuite runs the parse cases: "test ast" or "test errors".
var parseSuite = filetest.Suite{
	Checks:  map[string]filetest.Check{"ast": checkParse, "errors": checkParse},
	Outputs: map[string][]string{"ast": {"out/ast"}, "errors": {"out/errors"}},
}

// checkSuite runs the type-checking cases: "test typed" or "test errors".
var checkSuite = filetest.Suite{
	Checks:  map[string]filetest.Check{"typed": checkCheck, "errors": checkCheck},
	Outputs: map[string][]string{"typed": {"out/typed"}, "errors": {"out/errors"}},
}

// checkErrName checks that a case is "test errors" exactly when its name
// starts with err_ (any other is "test other").
func checkErrName(t *testing.T, c *filetest.Case, d filetest.Directive, other string) {
	t.Helper()
	if (d.Name == "errors") != strings.HasPrefix(c.Name, "err_") {
		t.Errorf("test %s: a case named err_* is \"test errors\", any other \"test %s\"", d, other)
	}
}

func TestParseGolden(t *testing.T) {
	filetest.Run(t, parseCases, parseSuite)
}

// checkParse parses the case's files: they must all parse for "test
// ast", and must not for "test errors".
func checkParse(t *testing.T, c *filetest.Case, d filetest.Directive) {
	checkErrName(t, c, d, "ast")
	files, srcs, diags := parseAll(t, c.Case)
	if diags.HasErrors() {
		if d.Name != "errors" {
			t.Errorf("does not parse:\n%s", diags.Render(srcs))
		}
		c.Check("out/errors", diags.Render(srcs))
		return
	}
	if d.Name == "errors" {
		t.Error("a \"test errors\" case parses")
	}
	var b strings.Builder
	for _, f := range files {
		b.WriteString(Sprint(f, false))
	}
	c.Check("out/ast", b.String())
}

func TestCheckGolden(t *testing.T) {
	filetest.Run(t, checkCases, checkSuite)
}

// checkCheck parses and checks the case's program, which must parse,
// and must check for "test typed" and must not for "test errors".
func checkCheck(t *testing.T, c *filetest.Case, d filetest.Directive) {
	checkErrName(t, c, d, "typed")
	files, srcs, diags := parseAll(t, c.Case)
	if diags.HasErrors() {
		t.Fatalf("a check case must parse:\n%s", diags.Render(srcs))
	}
	prog, diags := Check(files)
	if diags.HasErrors() {
		if prog != nil {
			t.Error("Check returned a program along with errors")
		}
		if d.Name != "errors" {
			t.Errorf("does not check:\n%s", diags.Render(srcs))
		}
		c.Check("out/errors", diags.Render(srcs))
		return
	}
	if d.Name == "errors" {
		t.Error("a \"test errors\" case checks")
	}
	if len(diags) > 0 {
		t.Errorf("diagnostics without errors:\n%s", diags.Render(srcs))
	}
	checkAnnotated(t, prog)
	var b strings.Builder
	for _, f := range files {
		b.WriteString(Sprint(f, true))
	}
	c.Check("out/typed", b.String())
}

// checkAnnotated checks the promise Check makes to lowering: in a
// program that checks, every expression has a type, none Invalid, and
// every name a declaration.
func checkAnnotated(t *testing.T, prog *Program) {
	t.Helper()
	for _, f := range prog.Files {
		walkFile(f, func(e Expr) {
			if typ := e.Type(); typ == nil || typ == Invalid {
				t.Errorf("%s: expression %T has type %v", e.Pos(), e, typ)
			}
			if id, ok := e.(*Ident); ok && id.Obj == nil {
				t.Errorf("%s: name %s is not resolved", id.Pos(), id.Name)
			}
		})
	}
}

// goldenSources returns every .gen section of the golden cases, to seed
// the fuzz target.
func goldenSources(tb testing.TB) []string {
	var srcs []string
	for _, pattern := range []string{parseCases, checkCases} {
		for _, path := range golden.Files(tb, pattern) {
			c, err := golden.Load(path)
			if err != nil {
				tb.Fatal(err)
			}
			names, s := sources(c)
			sort.Strings(names)
			for _, n := range names {
				srcs = append(srcs, string(s[n]))
			}
		}
	}
	return srcs
}
