package format

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/antlr4-go/antlr/v4"
	"github.com/google/go-cmp/cmp"
	"golang.org/x/tools/txtar"

	"github.com/genesis-toolchain/genesis/compiler"
	"github.com/genesis-toolchain/genesis/diag"
	"github.com/genesis-toolchain/genesis/frontend"
	"github.com/genesis-toolchain/genesis/frontend/grimoire"
	"github.com/genesis-toolchain/genesis/frontend/grimoire/parser"
	"github.com/genesis-toolchain/genesis/internal/golden"
	"github.com/genesis-toolchain/genesis/internal/inputlimits"
	"github.com/genesis-toolchain/genesis/ir"
)

// spellSource is one spell the corpus tests format: a file, or a section
// of a txtar case, with what it imports.
type spellSource struct {
	name  string
	data  []byte
	files map[string][]byte // the other files it may import, by path
}

// spellCorpus is every spell of the repository and the shared corpus:
// the corpus copy (tests/grimoire/corpus), the shared corpus when
// present, examples/, and the spells of the frontend's and the runner's
// golden cases that parse.
func spellCorpus(t *testing.T) []spellSource {
	t.Helper()
	var spells []spellSource
	// seen holds the spells read, so that the shared corpus, a copy of
	// tests/grimoire/corpus (tests/grimoire checks it), is formatted once.
	seen := map[string]bool{}
	for _, dir := range []string{"../tests/grimoire/corpus", "../../shared/corpus", "../examples"} {
		if _, err := os.Stat(dir); err != nil {
			t.Logf("no %s: skipped", dir)
			continue
		}
		for _, rel := range golden.CorpusFiles(t, dir, ".spell") {
			path := filepath.Join(dir, filepath.FromSlash(rel))
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if !seen[string(data)] {
				seen[string(data)] = true
				spells = append(spells, spellSource{name: path, data: data})
			}
		}
	}
	for _, pattern := range []string{"../tests/grimoire/parse/*.txtar", "../tests/grimoire/run/*.txtar", "../tests/grimoire/errors/*.txtar"} {
		for _, path := range golden.Files(t, pattern) {
			a, err := txtar.ParseFile(path)
			if err != nil {
				t.Fatal(err)
			}
			dir := filepath.Dir(path)
			files := map[string][]byte{}
			for _, f := range a.Files {
				files[filepath.Join(dir, f.Name)] = f.Data
			}
			for _, f := range a.Files {
				if filepath.Ext(f.Name) != ".spell" {
					continue
				}
				if _, diags := grimoire.ParseFile(f.Name, f.Data); diags.HasErrors() {
					continue // an error case: TestGrimoireRefuses
				}
				spells = append(spells, spellSource{name: filepath.Join(dir, f.Name), data: f.Data, files: files})
			}
		}
	}
	if len(spells) < 170 {
		t.Fatalf("found %d spells, want the corpus's 170 at least", len(spells))
	}
	return spells
}

// TestGrimoireCorpus formats every spell of the corpus and checks what a
// formatter promises: the formatted spell compiles to the same IR
// (positions' columns aside: lines do not move), formatting it again
// changes nothing, every comment is kept, and it has the original's
// lines.
func TestGrimoireCorpus(t *testing.T) {
	spells := spellCorpus(t)
	changed := 0
	for _, s := range spells {
		out, err := Grimoire(s.name, s.data)
		if err != nil {
			t.Errorf("%s: %v", s.name, err)
			continue
		}
		if !bytes.Equal(out, s.data) {
			changed++
		}
		again, err := Grimoire(s.name, out)
		if err != nil {
			t.Errorf("%s: formatting the formatted spell: %v", s.name, err)
		} else if d := cmp.Diff(string(out), string(again)); d != "" {
			t.Errorf("%s: not idempotent (-once +twice):\n%s", s.name, d)
		}
		if d := cmp.Diff(spellComments(t, s.data), spellComments(t, out)); d != "" {
			t.Errorf("%s: comments changed (-before +after):\n%s", s.name, d)
		}
		if respaced, err := Grimoire(s.name, spellRespace(s.data)); err != nil {
			t.Errorf("%s: respaced: %v", s.name, err)
		} else if d := cmp.Diff(string(out), string(respaced)); d != "" {
			t.Errorf("%s: the spell respaced formats otherwise (-spell +respaced):\n%s", s.name, d)
		}
		if a, b := spellLines(s.data), spellLines(out); a != b {
			t.Errorf("%s: %d lines before the last token, %d after", s.name, a, b)
		}
		want, wantDiags := compileSpell(s, false)
		got, gotDiags := compileSpell(s, true)
		if d := cmp.Diff(spellDiagKeys(wantDiags), spellDiagKeys(gotDiags)); d != "" {
			t.Errorf("%s: diagnostics changed (-before +after):\n%s", s.name, d)
		}
		if d := cmp.Diff(want, got); d != "" {
			t.Errorf("%s: the IR changed (-before +after):\n%s", s.name, d)
		}
		want, wantDiags = buildSpell(s.name, s.data)
		got, gotDiags = buildSpell(s.name, out)
		if d := cmp.Diff(spellDiagKeys(wantDiags), spellDiagKeys(gotDiags)); d != "" {
			t.Errorf("%s: genesisc build's diagnostics changed (-before +after):\n%s", s.name, d)
		}
		if d := cmp.Diff(want, got); d != "" {
			t.Errorf("%s: the optimized IR changed (-before +after):\n%s", s.name, d)
		}
	}
	t.Logf("%d spells formatted, %d of them changed", len(spells), changed)
	if changed == 0 {
		t.Errorf("no spell of the corpus changed: the test formats nothing")
	}
}

// compileSpell compiles s, formatted first (and what it imports as it is
// read) when formatted is set, and returns its IR printed with the
// columns of its positions removed ("" when it does not compile), and
// its diagnostics.
func compileSpell(s spellSource, formatted bool) (string, diag.List) {
	read := func(path string) ([]byte, error) {
		data, ok := s.files[filepath.Clean(path)]
		if !ok {
			var err error
			if data, err = os.ReadFile(path); err != nil {
				return nil, err
			}
		}
		if formatted {
			return Grimoire(path, data)
		}
		return data, nil
	}
	in, err := frontend.ReadInput(s.name, func(path string) ([]byte, error) {
		if filepath.Clean(path) == filepath.Clean(s.name) {
			if formatted {
				return Grimoire(path, s.data)
			}
			return s.data, nil
		}
		return read(path)
	})
	if err != nil {
		var l diag.List
		l.Errorf(diag.Pos{File: s.name}, "TEST", "%v", err)
		return "", l
	}
	m, diags := grimoire.Compile(in)
	if m == nil || diags.HasErrors() {
		return "", diags
	}
	spellStripColumns(m)
	return ir.Print(m), diags
}

// buildSpell builds the spell src as `genesisc build --emit ir -O2`
// does (the compiler package, imports read from the file system), and
// returns the optimized IR printed with the columns of its positions
// removed ("" when it does not build), and the diagnostics.
func buildSpell(name string, src []byte) (string, diag.List) {
	out, diags := compiler.Build([]compiler.Source{{Name: name, Data: src}}, compiler.Options{Emit: compiler.EmitIR, OptLevel: 2})
	if out == nil || out.Module == nil || diags.HasErrors() {
		return "", diags
	}
	spellStripColumns(out.Module)
	return ir.Print(out.Module), diags
}

// spellStripColumns zeroes the column of every position of m.
func spellStripColumns(m *ir.Module) {
	for _, d := range m.Data {
		d.Pos.Col = 0
	}
	var region func(r *ir.Region)
	region = func(r *ir.Region) {
		for _, in := range r.Instrs {
			in.Pos.Col = 0
			for _, sub := range in.Regions {
				region(sub)
			}
		}
	}
	for _, f := range m.Funcs {
		f.Pos.Col = 0
		for _, l := range f.Locals {
			l.Pos.Col = 0
		}
		if f.Body != nil {
			region(f.Body)
		}
	}
}

// spellDiagKeys is what a diagnostic says but its column.
func spellDiagKeys(l diag.List) []string {
	var keys []string
	for _, d := range l {
		keys = append(keys, strings.Join([]string{d.Pos.File, strconv.Itoa(d.Pos.Line), d.Severity.String(), d.Code, d.Msg}, ":"))
	}
	return keys
}

// spellComments returns the comments of a spell, sorted, each without the
// white space that ends it: read from the gaps between the lexer's
// tokens, independently of the formatter.
func spellComments(t *testing.T, src []byte) []string {
	t.Helper()
	input := antlr.NewInputStream(string(src))
	lexer := parser.NewGrimoireLexer(input)
	lexer.RemoveErrorListeners()
	var found []string
	next := 0
	for {
		tok := lexer.NextToken()
		if tok.GetStart() > next {
			gap := input.GetText(next, tok.GetStart()-1)
			if i := strings.IndexByte(gap, '#'); i >= 0 {
				found = append(found, strings.TrimRight(gap[i:], " \t\r\f\v"))
			}
		}
		if tok.GetTokenType() == antlr.TokenEOF {
			break
		}
		next = tok.GetStop() + 1
	}
	slices.Sort(found)
	return found
}

// spellRespace returns src with other white space between its tokens, the
// same tokens on the same lines: indentation three times as wide (which
// keeps the order of columns, so the same blocks), a space where tokens
// were joined (but around a '-', which may join the words of an id),
// two where there was white space, trailing blanks. A canonical
// formatter formats it as src.
func spellRespace(src []byte) []byte {
	input := antlr.NewInputStream(string(src))
	lexer := parser.NewGrimoireLexer(input)
	lexer.RemoveErrorListeners()
	var b strings.Builder
	next, lineStart, prev := 0, true, 0
	for {
		tok := lexer.NextToken()
		typ := tok.GetTokenType()
		gap := ""
		if tok.GetStart() > next {
			gap = input.GetText(next, tok.GetStart()-1)
		}
		comment := ""
		if i := strings.IndexByte(gap, '#'); i >= 0 {
			gap, comment = gap[:i], gap[i:]
		}
		switch {
		case lineStart:
			b.WriteString(strings.Repeat(" ", 3*spellColumn(gap)))
		case gap != "":
			b.WriteString("  ")
		case typ != parser.GrimoireLexerMINUS && prev != parser.GrimoireLexerMINUS &&
			typ != parser.GrimoireLexerNEWLINE && typ != antlr.TokenEOF:
			b.WriteString(" ")
		}
		if comment != "" {
			if !lineStart {
				b.WriteString(" ")
			}
			b.WriteString(comment)
		}
		if typ == antlr.TokenEOF {
			break
		}
		if typ == parser.GrimoireLexerNEWLINE {
			b.WriteString("  ")
		}
		b.WriteString(tok.GetText())
		lineStart, prev = typ == parser.GrimoireLexerNEWLINE, typ
		next = tok.GetStop() + 1
	}
	return []byte(b.String())
}

// spellLines counts the lines of src up to its last one that is not
// blank: the formatter keeps them all, so that positions keep their
// lines.
func spellLines(src []byte) int {
	s := strings.ReplaceAll(string(src), "\r\n", "\n")
	s = strings.ReplaceAll(s, "\r", "\n")
	lines := strings.Split(s, "\n")
	for len(lines) > 0 && strings.TrimSpace(lines[len(lines)-1]) == "" {
		lines = lines[:len(lines)-1]
	}
	return len(lines)
}

// TestGrimoireGolden formats the spell.spell section of each case of
// testdata/grimoire into its formatted.spell section (-update rewrites
// them) and checks the formatted spell is a fixed point.
func TestGrimoireGolden(t *testing.T) {
	golden.Run(t, "testdata/grimoire/*.txtar", func(t *testing.T, c *golden.Case) {
		src, ok := c.File("spell.spell")
		if !ok {
			t.Fatal("no spell.spell section")
		}
		out, err := Grimoire("spell.spell", []byte(src))
		if err != nil {
			c.Check("out/errors", err.(diag.List).Render(diag.Sources{"spell.spell": []byte(src)}))
			return
		}
		c.Check("formatted.spell", string(out))
		again, err := Grimoire("formatted.spell", out)
		if err != nil || !bytes.Equal(again, out) {
			t.Errorf("formatting the formatted spell again: %v\n%s", err, again)
		}
		a, _ := grimoire.ParseFile("spell.spell", []byte(src))
		b, _ := grimoire.ParseFile("spell.spell", out)
		if d := cmp.Diff(grimoire.Sprint(a), grimoire.Sprint(b)); d != "" {
			t.Errorf("the formatted spell parses to another tree (-before +after):\n%s", d)
		}
		if d := cmp.Diff(spellComments(t, []byte(src)), spellComments(t, out)); d != "" {
			t.Errorf("comments changed (-before +after):\n%s", d)
		}
	})
}

// TestGrimoireRefuses checks that a spell that does not parse is not
// formatted, and that the error is the frontend's diagnostics, which the
// command renders with the source line and a caret.
func TestGrimoireRefuses(t *testing.T) {
	for _, src := range []string{
		"spell Broken {\n  version:\n",
		"spell X\n  on manual\n    pass\n",
		"spell X\n  on manual:\n    x = 50bps\n",
		"",
		"spell X\n    on manual:\n      pass\n  on hourly:\n    pass\n",
	} {
		out, err := Grimoire("bad.spell", []byte(src))
		if err == nil {
			t.Errorf("%q formatted to %q, want an error", src, out)
			continue
		}
		var l diag.List
		if !errors.As(err, &l) || !l.HasErrors() {
			t.Errorf("%q: error %v (%T), want a diag.List with an error", src, err, err)
			continue
		}
		_, want := grimoire.ParseFile("bad.spell", []byte(src))
		if d := cmp.Diff(want.Error(), l.Error()); d != "" {
			t.Errorf("%q: not the frontend's diagnostics (-frontend +formatter):\n%s", src, d)
		}
		if out != nil {
			t.Errorf("%q: output %q with an error", src, out)
		}
	}
}

// TestGrimoireChecksItself breaks the formatting proper in the two ways
// a bug could, and checks that Grimoire then returns a G999 diagnostic
// and no output rather than a spell that is another program, or none.
func TestGrimoireChecksItself(t *testing.T) {
	src := []byte("spell X\n  on manual:\n    x = 1\n    emit e(v=x)\n")
	defer func(f func([]byte) []byte) { spellFormat = f }(spellFormat)
	for what, broken := range map[string]func([]byte) []byte{
		"another program": func(src []byte) []byte { return bytes.Replace(formatSpell(src), []byte("x = 1"), []byte("x = 2"), 1) },
		"no spell": func(src []byte) []byte {
			return bytes.Replace(formatSpell(src), []byte("manual:"), []byte("manual"), 1)
		},
		"a panic": func([]byte) []byte { panic("broken") },
	} {
		spellFormat = broken
		out, err := Grimoire("x.spell", src)
		var l diag.List
		if out != nil || !errors.As(err, &l) || len(l) != 1 || l[0].Code != grimoire.CodeInternal {
			t.Errorf("%s: got %q, %v; want no output and one %s error", what, out, err, grimoire.CodeInternal)
		}
	}
}

// TestGrimoireLineEndings checks CRLF line endings become line feeds and
// tabs of indentation two spaces a level, with the same tree.
func TestGrimoireLineEndings(t *testing.T) {
	src := "spell X\r\n\ton manual:\r\n\t\tx = 1   # one\r\n\t\temit e(v=x)\r\n"
	out, err := Grimoire("x.spell", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	want := "spell X\n  on manual:\n    x = 1 # one\n    emit e(v=x)\n"
	if d := cmp.Diff(want, string(out)); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}
}

// TestGrimoireLarge formats a spell large enough for the frontend's
// chunked parse, and holds the formatter to bounds of the memory it
// allocates per byte: the whole of Grimoire (two parses and their
// checks), and the formatting proper, which must also grow linearly.
func TestGrimoireLarge(t *testing.T) {
	spell := func(size int) []byte {
		src := inputlimits.SpellProgram(size)
		// Indent it badly: three spaces a level instead of two.
		src = bytes.ReplaceAll(src, []byte("\n  "), []byte("\n   "))
		return bytes.ReplaceAll(src, []byte("\n     "), []byte("\n      "))
	}
	src := spell(96 << 10)
	var out []byte
	u := inputlimits.Measure(func() any {
		var err error
		if out, err = Grimoire("big.spell", src); err != nil {
			t.Fatal(err)
		}
		return out
	})
	inputlimits.PerByte(t, u, len(src), 1000, 0)
	if bytes.Equal(out, src) {
		t.Fatal("the badly indented spell did not change")
	}
	if again, err := Grimoire("big.spell", out); err != nil || !bytes.Equal(again, out) {
		t.Fatalf("not idempotent on a large spell: %v", err)
	}

	formatOnly := func(src []byte) inputlimits.Usage {
		return inputlimits.Measure(func() any { return formatSpell(src) })
	}
	small := formatOnly(src)
	inputlimits.PerByte(t, small, len(src), 100, 0)
	large := spell(4 * len(src))
	inputlimits.Grows(t, small, formatOnly(large), float64(len(large))/float64(len(src)), 1.2)
}

// FuzzGrimoire checks that the formatter never panics, that a spell that
// parses always formats (no internal error), to a spell that parses to
// the same tree and formats to itself, and that one that does not parse
// gives the frontend's diagnostics.
func FuzzGrimoire(f *testing.F) {
	for _, dir := range []string{"../tests/grimoire/corpus/grimoire", "../tests/grimoire/corpus/grimoire-braces", "testdata/grimoire"} {
		entries, _ := os.ReadDir(dir)
		for _, e := range entries {
			data, err := os.ReadFile(filepath.Join(dir, e.Name()))
			if err != nil {
				continue
			}
			if strings.HasSuffix(e.Name(), ".txtar") {
				a := txtar.Parse(data)
				for _, file := range a.Files {
					f.Add(file.Data)
				}
				continue
			}
			f.Add(data)
		}
	}
	f.Fuzz(func(t *testing.T, src []byte) {
		_, diags := grimoire.ParseFile("f.spell", src)
		out, err := Grimoire("f.spell", src)
		if diags.HasErrors() {
			if err == nil {
				t.Fatalf("a spell with errors formatted")
			}
			return
		}
		if err != nil {
			t.Fatalf("a spell that parses did not format: %v", err)
		}
		again, err := Grimoire("f.spell", out)
		if err != nil {
			t.Fatalf("the formatted spell does not format: %v\n%s", err, out)
		}
		if !bytes.Equal(again, out) {
			t.Fatalf("not idempotent:\n%s\n---\n%s", out, again)
		}
	})
}

// TestGrimoireMutations runs the fuzz target's checks on spells of the
// corpus cut, spliced and respaced by a fixed pseudo-random sequence:
// a deterministic sample of what FuzzGrimoire explores, run with every
// `go test`.
func TestGrimoireMutations(t *testing.T) {
	var seeds [][]byte
	for _, dir := range []string{"../tests/grimoire/corpus/grimoire", "../tests/grimoire/corpus/grimoire-braces"} {
		for _, rel := range golden.CorpusFiles(t, dir, ".spell") {
			data, err := os.ReadFile(filepath.Join(dir, rel))
			if err != nil {
				t.Fatal(err)
			}
			seeds = append(seeds, data)
		}
	}
	rng := rand.New(rand.NewPCG(18, 1))
	pieces := []string{" ", "\n", "\t", "  ", "#", "# c\n", "(", ")", "{", "}", "[", "]", ":", ",", "-", "=", "\n    ", "\r\n", "?", "%", "*", "'", "\""}
	parsed := 0
	for i := range 1500 {
		src := slices.Clone(seeds[rng.IntN(len(seeds))])
		for range 1 + rng.IntN(3) {
			at := rng.IntN(len(src) + 1)
			switch rng.IntN(3) {
			case 0: // delete a few bytes
				end := min(len(src), at+1+rng.IntN(4))
				src = slices.Delete(src, at, end)
			case 1: // insert a piece
				src = slices.Insert(src, at, []byte(pieces[rng.IntN(len(pieces))])...)
			case 2: // duplicate a line
				if start := bytes.LastIndexByte(src[:at], '\n') + 1; start < len(src) {
					end := bytes.IndexByte(src[start:], '\n')
					if end < 0 {
						end = len(src) - start
					}
					line := slices.Clone(src[start : start+end+min(1, len(src)-start-end)])
					src = slices.Insert(src, start, line...)
				}
			}
		}
		_, diags := grimoire.ParseFile("m.spell", src)
		out, err := Grimoire("m.spell", src)
		if diags.HasErrors() {
			if err == nil {
				t.Errorf("mutation %d: a spell with errors formatted:\n%s", i, src)
			}
			continue
		}
		parsed++
		if err != nil {
			t.Errorf("mutation %d: a spell that parses did not format: %v\n%s", i, err, src)
			continue
		}
		if again, err := Grimoire("m.spell", out); err != nil || !bytes.Equal(again, out) {
			t.Errorf("mutation %d: not idempotent (%v):\n%s\n---\n%s", i, err, out, again)
		}
		if d := cmp.Diff(spellComments(t, src), spellComments(t, out)); d != "" {
			t.Errorf("mutation %d: comments changed (-before +after):\n%s", i, d)
		}
	}
	t.Logf("%d mutations parsed and were formatted", parsed)
}
