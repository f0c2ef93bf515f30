package format

import (
	"errors"
	"math/rand"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/tools/txtar"

	"github.com/genesis-toolchain/genesis/compiler"
	"github.com/genesis-toolchain/genesis/diag"
	"github.com/genesis-toolchain/genesis/internal/golden"
	"github.com/genesis-toolchain/genesis/ir"
)

// A genVVMProgram is one program of the repository's tests, examples and
// benchmarks: its files, named by paths where the modules they import
// are found.
type genVVMProgram struct {
	files []compiler.Source
}

// genVVMPrograms collects every Genesis and VVM program of the
// repository: the .gen and .vvm files of examples/, bench/ and tests/
// (tests/vvm/corpus is the copy of the shared corpus), and the .gen and
// .vvm sections of the txtar files of tests/, of the frontends'
// testdata and of this package's golden cases, each archive's written
// to a directory of its own so that imports between its sections
// resolve. The .gen files of one archive
// are one program; a .vvm file is the entry of one.
func genVVMPrograms(t *testing.T) []genVVMProgram {
	t.Helper()
	var progs []genVVMProgram
	for _, dir := range []string{"../examples", "../bench", "../tests"} {
		for _, rel := range golden.CorpusFiles(t, dir, ".gen", ".vvm") {
			path := filepath.Join(dir, filepath.FromSlash(rel))
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			progs = append(progs, genVVMProgram{files: []compiler.Source{{Name: path, Data: data}}})
		}
	}
	var archives []string
	for _, pattern := range []string{"testdata/*.txtar", "../tests/*/*.txtar", "../tests/*/*/*.txtar", "../frontend/*/testdata/*.txtar", "../frontend/*/testdata/*/*.txtar"} {
		m, err := filepath.Glob(pattern)
		if err != nil {
			t.Fatal(err)
		}
		archives = append(archives, m...)
	}
	sort.Strings(archives)
	tmp := t.TempDir()
	for n, path := range archives {
		a, err := txtar.ParseFile(path)
		if err != nil {
			t.Fatal(err)
		}
		dir := filepath.Join(tmp, strings.ReplaceAll(strings.TrimPrefix(path, "../"), "/", "_"))
		var gen []compiler.Source
		for _, f := range a.Files {
			ext := filepath.Ext(f.Name)
			if ext != ".gen" && ext != ".vvm" || strings.Contains(f.Name, "..") {
				continue
			}
			name := filepath.Join(dir, filepath.FromSlash(f.Name))
			if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(name, f.Data, 0o644); err != nil {
				t.Fatal(err)
			}
			src := compiler.Source{Name: name, Data: f.Data}
			if ext == ".gen" {
				gen = append(gen, src)
			} else {
				progs = append(progs, genVVMProgram{files: []compiler.Source{src}})
			}
		}
		if len(gen) > 0 {
			progs = append(progs, genVVMProgram{files: gen})
		}
		_ = n
	}
	return progs
}

// positionlessIR returns the printed IR of m with every source position
// cleared, and the text of every VVM note (the narration's quote of the
// statement's source line, which sourceLine of package vvm takes from
// the file as it is laid out, as a position is): what the program
// compiles to, positions aside.
func positionlessIR(m *ir.Module) string {
	for _, d := range m.Data {
		d.Pos = diag.Pos{}
	}
	var region func(r *ir.Region)
	region = func(r *ir.Region) {
		for _, in := range r.Instrs {
			in.Pos = diag.Pos{}
			if in.Op == ir.OpCall && in.Sym == "vvm.note" && len(in.Args) == 2 {
				if d := in.Args[1].Def; d != nil && d.Op == ir.OpConst {
					d.Lit.Str = "<the source line>"
				}
			}
			for _, sub := range in.Regions {
				region(sub)
			}
		}
	}
	for _, f := range m.Funcs {
		f.Pos = diag.Pos{}
		for _, l := range f.Locals {
			l.Pos = diag.Pos{}
		}
		if f.Body != nil {
			region(f.Body)
		}
	}
	return ir.Print(m)
}

// compileGenVVMIR compiles srcs to unoptimized IR, positions cleared; "" when
// they do not compile.
func compileGenVVMIR(srcs []compiler.Source) string {
	out, diags := compiler.Build(srcs, compiler.Options{Emit: compiler.EmitIR, OptLevel: 0})
	if diags.HasErrors() || out == nil || out.Module == nil {
		return ""
	}
	return positionlessIR(out.Module)
}

// TestCorpusGenesisVVM formats every Genesis and VVM program of the repository
// and checks the three promises of the formatter: the formatted program
// compiles to the same IR as the original, positions aside; formatting
// is idempotent; every comment is kept, in order. A file with errors
// must be refused with its diagnostics, never formatted.
func TestCorpusGenesisVVM(t *testing.T) {
	progs := genVVMPrograms(t)
	var formatted, refused, compiled, changed int
	for _, p := range progs {
		var out []compiler.Source
		ok := true
		for _, f := range p.files {
			got, err := File(f.Name, f.Data)
			var se *SyntaxError
			switch {
			case errors.As(err, &se):
				if len(se.Diags) == 0 {
					t.Errorf("%s: refused without a diagnostic", f.Name)
				}
				refused++
				ok = false
				continue
			case err != nil:
				t.Errorf("%s: %v", f.Name, err)
				ok = false
				continue
			}
			formatted++
			if string(got) != string(f.Data) {
				changed++
			}
			again, err := File(f.Name, got)
			if err != nil {
				t.Errorf("%s: formatting the formatted file: %v", f.Name, err)
			} else if d := cmp.Diff(string(got), string(again)); d != "" {
				t.Errorf("%s: not idempotent (-once +twice):\n%s", f.Name, d)
			}
			if d := cmp.Diff(commentMultiset(t, f.Name, f.Data), commentMultiset(t, f.Name, got)); d != "" {
				t.Errorf("%s: comments differ (-source +formatted):\n%s", f.Name, d)
			}
			out = append(out, compiler.Source{Name: f.Name, Data: got})
		}
		if !ok {
			continue
		}
		want := compileGenVVMIR(p.files)
		if want == "" {
			continue // a program with semantic errors: nothing to compare
		}
		compiled++
		if d := cmp.Diff(want, compileGenVVMIR(out)); d != "" {
			t.Errorf("%s: the formatted program compiles differently (-source +formatted):\n%s", p.files[0].Name, d)
		}
	}
	t.Logf("%d programs: %d files formatted (%d changed), %d refused with diagnostics; %d programs compiled and compared", len(progs), formatted, changed, refused, compiled)
	if formatted < 500 || compiled < 300 {
		t.Errorf("only %d files formatted and %d programs compared: the corpus was not found", formatted, compiled)
	}
}

// comments returns the texts of the comments of a file, sorted: the
// multiset the formatter must keep.
func commentMultiset(t *testing.T, name string, src []byte) []string {
	t.Helper()
	var elems []srcElem
	if strings.HasSuffix(name, ".gen") {
		_, es, err := genesisTokens(src)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		elems = es
	} else {
		f, err := newVVMFile(src)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		elems = f.elems
	}
	texts := commentsOf(elems)
	sort.Strings(texts)
	return texts
}

// TestCanonicalGenesisVVM checks that the layout fmt writes depends only on what
// docs/fmt.md says it keeps of the source: where lines break, whether
// blank lines separate them, and for VVM the indentation of logical lines
// and own-line comments. Every other blank of each corpus file is
// changed at random (indentation, blanks between tokens, added where
// there were none and dropped where they are not needed, runs of blank
// lines lengthened): the formatted result must be the original's.
func TestCanonicalGenesisVVM(t *testing.T) {
	r := rand.New(rand.NewSource(18))
	n := 0
	for _, p := range genVVMPrograms(t) {
		for _, f := range p.files {
			want, err := File(f.Name, f.Data)
			if err != nil {
				continue
			}
			var mangled []byte
			if strings.HasSuffix(f.Name, ".gen") {
				_, elems, err := genesisTokens(f.Data)
				if err != nil {
					t.Fatal(err)
				}
				mangled = relayoutBlanks(r, elems, nil)
			} else {
				vf, err := newVVMFile(f.Data)
				if err != nil {
					t.Fatal(err)
				}
				mangled = relayoutBlanks(r, vf.elems, func(i int) bool {
					// Logical lines and own-line comments outside
					// brackets keep their indentation.
					e := vf.elems[i]
					return vf.start[i] || e.comment() && e.nl > 0 && vvmDepth(vf, i) == 0
				})
			}
			got, err := File(f.Name, mangled)
			if err != nil {
				t.Errorf("%s, relaid out: %v\n%s", f.Name, err, mangled)
				continue
			}
			n++
			if d := cmp.Diff(string(want), string(got)); d != "" {
				t.Errorf("%s: formatted differently once relaid out (-original +relaid):\n%s\nthe relaid source:\n%s", f.Name, d, mangled)
			}
		}
	}
	if n < 500 {
		t.Errorf("only %d files relaid out", n)
	}
}

// relayoutBlanks writes elems with random blanks: the same line breaks, blank
// lines where there were (of one to three lines), random indentation
// except for the elems keep says keep theirs, and between two elems on a
// line one to three blanks, or none where none is needed.
func relayoutBlanks(r *rand.Rand, elems []srcElem, keep func(i int) bool) []byte {
	var b strings.Builder
	for i, e := range elems {
		switch {
		case e.nl > 0:
			b.WriteString("\n")
			if e.nl > 1 {
				b.WriteString(strings.Repeat("\n", 1+r.Intn(3)))
			}
			if keep != nil && keep(i) {
				b.WriteString(strings.Repeat(" ", e.col))
			} else {
				b.WriteString(strings.Repeat(" ", r.Intn(9)))
			}
		case i > 0:
			if r.Intn(2) == 0 && !gluesTokens(elems[i-1].text, e.text) && !elems[i-1].comment() {
				break
			}
			b.WriteString(strings.Repeat(" ", 1+r.Intn(3)))
		}
		b.WriteString(e.text)
	}
	b.WriteString(strings.Repeat("\n", 1+r.Intn(2)))
	return []byte(b.String())
}

// vvmDepth is the number of brackets open before elem i.
func vvmDepth(f *vvmFile, i int) int {
	d := 0
	for _, e := range f.elems[:i] {
		switch {
		case e.tok >= 0 && isVVMOpener(e.typ):
			d++
		case e.tok >= 0 && isVVMCloser(e.typ) && d > 0:
			d--
		}
	}
	return d
}
