// Package grimoire_test is the golden suite of the Grimoire frontend
// (docs/grimoire.md) and its corpus test.
//
// A case is a txtar file holding the spell to load, main.spell, and the
// files it imports, by their paths relative to it. A parse case may
// instead hold the same spell twice, indent.spell and braces.spell, in the
// two syntaxes, which must give the same tree. Its header
// (docs/testing.md) declares the check:
//
//	parse/*.txtar   test ast     out/ast: the printed tree (after Check:
//	                             unit amounts show their value); the
//	                             spell must load without error
//	                             out/errors: its warnings, when there are any
//	errors/*.txtar  test errors  out/errors: the rendered diagnostics
//
// The comment of an errors case starts each line that names a code with
// it ("G104: an action on ..."): each code named must be among the
// diagnostics, and every code of the frontend has a case.
//
// The corpus test loads every spell of corpus/ (a copy of
// ../shared/corpus/grimoire and grimoire-braces): none may have an error.
//
// go test ./tests/grimoire -update rewrites the out/ sections.
package grimoire_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/genesis-toolchain/genesis/diag"
	"github.com/genesis-toolchain/genesis/frontend"
	"github.com/genesis-toolchain/genesis/frontend/grimoire"
	"github.com/genesis-toolchain/genesis/internal/filetest"
	"github.com/genesis-toolchain/genesis/internal/golden"
)

// caseFiles returns a case's files by path, and the spells to load: the
// two syntaxes' when the case has them, else main.spell.
func caseFiles(t *testing.T, c *golden.Case) (files map[string][]byte, entries []string) {
	t.Helper()
	files = map[string][]byte{}
	for _, f := range c.Archive.Files {
		if !strings.HasPrefix(f.Name, "out/") {
			files[f.Name] = f.Data
		}
	}
	switch {
	case files["indent.spell"] != nil && files["braces.spell"] != nil:
		return files, []string{"indent.spell", "braces.spell"}
	case files["main.spell"] != nil:
		return files, []string{"main.spell"}
	}
	t.Fatal("no main.spell, nor indent.spell and braces.spell")
	return nil, nil
}

// readInput is the frontend input of the spell at entry, read with read,
// which reads the spells it imports too.
func readInput(t *testing.T, entry string, read func(string) ([]byte, error)) frontend.Input {
	t.Helper()
	in, err := frontend.ReadInput(entry, read)
	if err != nil {
		t.Fatal(err)
	}
	return in
}

// load loads entry from a case's files.
func load(t *testing.T, files map[string][]byte, entry string) (*grimoire.Program, diag.List) {
	t.Helper()
	read := func(p string) ([]byte, error) {
		if data, ok := files[filepath.ToSlash(p)]; ok {
			return data, nil
		}
		return nil, fs.ErrNotExist
	}
	prog, diags := grimoire.Check(readInput(t, entry, read))
	for _, d := range diags {
		if d.Code == grimoire.CodeInternal {
			t.Fatalf("internal error: %s", d)
		}
	}
	return prog, diags
}

// sources are the files of a case, for rendering.
func sources(files map[string][]byte) diag.Sources {
	srcs := diag.Sources{}
	for name, data := range files {
		srcs[name] = data
	}
	return srcs
}

// suite runs the parse cases ("test ast": out/ast, and out/errors for
// warnings) and the error cases ("test errors": out/errors).
var suite = filetest.Suite{
	Checks:  map[string]filetest.Check{"ast": checkAST, "errors": checkErrors},
	Outputs: map[string][]string{"ast": {"out/ast", "out/errors"}, "errors": {"out/errors"}},
}

func TestParse(t *testing.T) {
	filetest.Run(t, filepath.Join("parse", "*.txtar"), suite)
}

// checkAST loads the spell (in both syntaxes when the case has both),
// which must load, and pins its tree.
func checkAST(t *testing.T, c *filetest.Case, d filetest.Directive) {
	files, entries := caseFiles(t, c.Case)
	var printed []string
	for _, entry := range entries {
		prog, diags := load(t, files, entry)
		if diags.HasErrors() {
			t.Fatalf("%s does not load:\n%s", entry, diags.Render(sources(files)))
		}
		printed = append(printed, grimoire.Sprint(prog.Spell))
		if entry == entries[0] && (len(diags) > 0 || hasSection(c, "out/errors")) {
			c.Check("out/errors", diags.Render(sources(files)))
		}
	}
	if len(printed) == 2 {
		if d := cmp.Diff(printed[0], printed[1]); d != "" {
			t.Errorf("the two syntaxes give different trees (-indent.spell +braces.spell):\n%s", d)
		}
	}
	c.Check("out/ast", printed[0])
}

func hasSection(c *filetest.Case, name string) bool {
	_, ok := c.File(name)
	return ok
}

// codeLine is a line of an errors case's comment naming a code.
var codeLine = regexp.MustCompile(`(?m)^(G\d{3})\b`)

func TestErrors(t *testing.T) {
	filetest.Run(t, filepath.Join("errors", "*.txtar"), suite)
}

// checkErrors loads the spell, which must get diagnostics, among them
// each code the prose names.
func checkErrors(t *testing.T, c *filetest.Case, d filetest.Directive) {
	files, entries := caseFiles(t, c.Case)
	_, diags := load(t, files, entries[0])
	if len(diags) == 0 {
		t.Fatal("no diagnostic")
	}
	c.Check("out/errors", diags.Render(sources(files)))
	wants := codeLine.FindAllStringSubmatch(c.Prose, -1)
	if len(wants) == 0 {
		t.Error("the comment names no code (a line starting G...)")
	}
	for _, m := range wants {
		if !slices.ContainsFunc(diags, func(d diag.Diagnostic) bool { return d.Code == m[1] }) {
			t.Errorf("no %s among the diagnostics", m[1])
		}
	}
}

// TestEveryCodeHasACase checks that the errors cases cover every
// diagnostic code but the internal error's.
func TestEveryCodeHasACase(t *testing.T) {
	codes := []string{
		grimoire.CodeSyntax, grimoire.CodeLexical, grimoire.CodeIndent, grimoire.CodeUnknownWord,
		grimoire.CodeMisplaced, grimoire.CodeDuplicate, grimoire.CodeUndefined, grimoire.CodeUnknownField,
		grimoire.CodeUnknownVenue, grimoire.CodeUnknownAsset, grimoire.CodeUnknownSkill, grimoire.CodeUnknownAdv,
		grimoire.CodeUnknownBlock, grimoire.CodeArity, grimoire.CodeUnknownFunc, grimoire.CodeBadUnit,
		grimoire.CodeBadValue, grimoire.CodeUnknownKey, grimoire.CodeMissing, grimoire.CodeAssignDecl,
		grimoire.CodeAutoVenue, grimoire.CodeImport,
	}
	covered := map[string]bool{}
	for _, path := range golden.Files(t, filepath.Join("errors", "*.txtar")) {
		c, err := golden.Load(path)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range codeLine.FindAllStringSubmatch(c.Comment(), -1) {
			covered[m[1]] = true
		}
	}
	for _, code := range codes {
		if !covered[code] {
			t.Errorf("no errors case for %s", code)
		}
	}
}

// corpusDirs are the corpus folders and how many spells each holds.
var corpusDirs = []struct {
	dir    string
	spells int
}{
	{"grimoire", 83},
	{"grimoire-braces", 87},
}

// TestCorpus loads and checks every spell of the corpus copy — no error,
// no internal error, no diagnostic reported twice, one G105 per
// undeclared asset — and checks the copy against ../shared/corpus when
// that is present.
func TestCorpus(t *testing.T) {
	total, warnings := 0, 0
	for _, cd := range corpusDirs {
		dir := filepath.Join("corpus", cd.dir)
		files := golden.CorpusFiles(t, dir, ".spell")
		if len(files) != cd.spells {
			t.Errorf("corpus/%s holds %d spells, want the %d of the shared corpus", cd.dir, len(files), cd.spells)
		}
		for _, rel := range files {
			prog, diags := grimoire.Check(readInput(t, filepath.Join(dir, rel), os.ReadFile))
			if prog == nil {
				t.Errorf("corpus/%s/%s: %s", cd.dir, rel, diags)
				continue
			}
			if diags.HasErrors() {
				t.Errorf("corpus/%s/%s does not load:\n%s", cd.dir, rel, diags.Render(prog.Sources))
				continue
			}
			// One report per cause: no diagnostic twice, and one G105
			// per undeclared asset.
			seen, assets := map[string]bool{}, map[string]bool{}
			for _, d := range diags {
				if d.Code == grimoire.CodeInternal {
					t.Errorf("%s: internal error: %s", rel, d)
				}
				if key := d.Pos.String() + " " + d.Msg; seen[key] {
					t.Errorf("%s: reported twice: %s", rel, d)
				} else {
					seen[key] = true
				}
				if d.Code == grimoire.CodeUnknownAsset {
					if assets[d.Msg] {
						t.Errorf("%s: a second G105 for one asset: %s", rel, d)
					}
					assets[d.Msg] = true
				}
				warnings++
			}
			total++
		}
	}
	t.Logf("corpus: %d spells load without error (%d warnings)", total, warnings)

	for _, cd := range corpusDirs {
		golden.CheckCorpusCopy(t, filepath.Join("corpus", cd.dir), filepath.Join("..", "..", "..", "shared", "corpus", cd.dir), ".spell")
	}
}
