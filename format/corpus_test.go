package format

import (
	"errors"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"regexp"
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

// positionlessIR returns the printed IR of m with what derives from where
// the source is written cleared: every source position; the text of
// every VVM note (the narration's quote of the statement's source line,
// which sourceLine of package vvm takes from the file as it is laid out),
// the constants then shared again as the lowering shares them; and the
// line and column in the names of VVM lambdas and parallel branches.
// What remains is what the program compiles to, positions aside.
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
			reshareConsts(f.Body)
		}
	}
	return positionNames.ReplaceAllString(ir.Print(m), ".${1}_L_C")
}

// positionNames are the names the VVM lowering gives the functions of
// lambdas and parallel branches: from the line and column where they are
// written (lower.go, lower_stdlib.go), positions too.
var positionNames = regexp.MustCompile(`\.(lambda|parallel)_[0-9]+_[0-9]+`)

// reshareConsts makes the equal constants of a function body one again,
// as the VVM lowering does (lower_consts.go), once the note texts are
// cleared: two notes that quoted different lines are now equal, and a
// program whose notes were shared differently must print the same.
func reshareConsts(body *ir.Region) {
	first := map[string]*ir.Value{}
	subst := map[*ir.Value]*ir.Value{}
	var walk func(r *ir.Region)
	walk = func(r *ir.Region) {
		kept := r.Instrs[:0]
		for _, in := range r.Instrs {
			for i, a := range in.Args {
				if s, ok := subst[a]; ok {
					in.Args[i] = s
				}
			}
			if in.Op == ir.OpConst && len(in.Results) == 1 && len(in.Regions) == 0 {
				k := fmt.Sprintf("%v|%d|%d|%v|%q", in.Type, in.Lit.Kind, in.Lit.Int, in.Lit.Num, in.Lit.Str)
				if v, ok := first[k]; ok {
					subst[in.Results[0]] = v
					continue
				}
				first[k] = in.Results[0]
			}
			for _, sub := range in.Regions {
				walk(sub)
			}
			kept = append(kept, in)
		}
		r.Instrs = kept
	}
	walk(body)
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

// TestCorpusGenesisVVM formats every Genesis and VVM program of the
// repository and checks the promises of the formatter:
//
//   - the formatted program compiles to the same IR as the original,
//     positions aside; formatting is idempotent; every comment is kept;
//   - the layout depends only on what docs/fmt.md says it keeps of the
//     source: each file with every other blank changed at random
//     (relayoutBlanks) formats to the same text;
//   - each program with line breaks and comments added at random where
//     they are allowed (perturb) formats to a program that compiles to
//     the original's IR, idempotently, keeping the comments.
//
// A file with errors must be refused with its diagnostics.
func TestCorpusGenesisVVM(t *testing.T) {
	r := rand.New(rand.NewSource(1818))
	progs := genVVMPrograms(t)
	var formatted, refused, compiled int
	for _, p := range progs {
		var outs []compiler.Source
		for _, f := range p.files {
			got, err := File(f.Name, f.Data)
			var se *SyntaxError
			switch {
			case errors.As(err, &se):
				if len(se.Diags) == 0 {
					t.Errorf("%s: refused without a diagnostic", f.Name)
				}
				refused++
			case err != nil:
				t.Errorf("%s: %v", f.Name, err)
			default:
				outs = append(outs, compiler.Source{Name: f.Name, Data: got})
			}
		}
		if len(outs) < len(p.files) {
			continue
		}
		formatted += len(p.files)
		want := compileGenVVMIR(p.files)
		if want != "" {
			compiled++
		}
		checkFormatted(t, p.files, outs, want, "")
		var perturbed, perturbedOuts []compiler.Source
		for k, f := range p.files {
			if got, err := File(f.Name, relayout(t, r, f.Name, f.Data)); err != nil {
				t.Errorf("%s, relaid out: %v", f.Name, err)
			} else if d := cmp.Diff(string(outs[k].Data), string(got)); d != "" {
				t.Errorf("%s: formatted differently once relaid out (-original +relaid):\n%s", f.Name, d)
			}
			src := perturb(t, r, f.Name, f.Data)
			got, err := File(f.Name, src)
			if err != nil {
				t.Errorf("%s, perturbed: %v\n%s", f.Name, err, src)
				continue
			}
			perturbed = append(perturbed, compiler.Source{Name: f.Name, Data: src})
			perturbedOuts = append(perturbedOuts, compiler.Source{Name: f.Name, Data: got})
		}
		if len(perturbed) == len(p.files) {
			checkFormatted(t, perturbed, perturbedOuts, want, " (perturbed)")
		}
	}
	t.Logf("%d programs: %d files formatted, %d refused with diagnostics; %d programs compiled and compared", len(progs), formatted, refused, compiled)
	if formatted < 500 || compiled < 300 {
		t.Errorf("only %d files formatted and %d programs compared: the corpus was not found", formatted, compiled)
	}
}

// checkFormatted checks the files of a program, formatted as outs: each
// formats again to itself and keeps the source's comments, and the
// program formatted compiles to want (unless want is "": the original
// does not compile).
func checkFormatted(t *testing.T, files, outs []compiler.Source, want, what string) {
	t.Helper()
	for k, f := range files {
		got := outs[k].Data
		again, err := File(f.Name, got)
		if err != nil {
			t.Errorf("%s%s: formatting the formatted file: %v", f.Name, what, err)
		} else if d := cmp.Diff(string(got), string(again)); d != "" {
			t.Errorf("%s%s: not idempotent (-once +twice):\n%s", f.Name, what, d)
		}
		if d := cmp.Diff(commentMultiset(t, f.Name, f.Data), commentMultiset(t, f.Name, got)); d != "" {
			t.Errorf("%s%s: comments differ (-source +formatted):\n%s", f.Name, what, d)
		}
	}
	if want == "" {
		return
	}
	if d := cmp.Diff(want, compileGenVVMIR(outs)); d != "" {
		t.Errorf("%s%s: the formatted program compiles differently (-source +formatted):\n%s", files[0].Name, what, d)
	}
}

// perturb returns src with line breaks and comments added at random
// where the language allows them without changing the program: in
// Genesis between any two tokens but inside an asm instruction; in VVM
// inside brackets, at the end of a line, and as lines of their own
// (indented at random) before a logical line.
func perturb(t *testing.T, r *rand.Rand, name string, src []byte) []byte {
	t.Helper()
	var b strings.Builder
	n := 0
	comment := func(prefix string) string {
		n++
		return fmt.Sprintf("%s c%d", prefix, n)
	}
	if strings.HasSuffix(name, ".gen") {
		g, err := newGenesisFile(name, src)
		if err != nil {
			t.Fatal(err)
		}
		inAsm := func(i int) bool { e := g.elems[i]; return e.tok >= 0 && g.toks[e.tok].asm }
		for i, e := range g.elems {
			if i > 0 {
				free := !inAsm(i) && !inAsm(i-1)
				switch x := r.Intn(20); {
				case free && x == 0:
					b.WriteString("\n")
				case free && x == 1:
					b.WriteString(" " + comment("//") + "\n")
				case free && x == 2:
					b.WriteString(" /*" + comment("") + " */ ")
				}
			}
			writeGap(&b, e)
			b.WriteString(e.text)
		}
		b.WriteString("\n")
		return []byte(b.String())
	}
	f, err := newVVMFile(src)
	if err != nil {
		t.Fatal(err)
	}
	depth := 0
	for i, e := range f.elems {
		switch {
		case depth > 0 && !e.comment():
			switch x := r.Intn(10); {
			case x == 0:
				b.WriteString("\n")
			case x == 1 && !f.elems[i-1].comment():
				b.WriteString("  " + comment("#") + "\n")
			}
		case f.start[i] && i > 0:
			if !f.elems[i-1].comment() && r.Intn(4) == 0 {
				b.WriteString("  " + comment("#"))
			}
			if r.Intn(4) == 0 {
				b.WriteString("\n" + strings.Repeat(" ", r.Intn(12)) + comment("#"))
			}
		}
		writeGap(&b, e)
		b.WriteString(e.text)
		if e.tok >= 0 && isVVMOpener(e.typ) {
			depth++
		} else if e.tok >= 0 && isVVMCloser(e.typ) && depth > 0 {
			depth--
		}
	}
	b.WriteString("\n")
	return []byte(b.String())
}

// writeGap writes the blank space before e as the source had it: its
// line breaks and its column, or one blank.
func writeGap(b *strings.Builder, e srcElem) {
	if e.nl > 0 {
		b.WriteString(strings.Repeat("\n", e.nl) + strings.Repeat(" ", e.col))
	} else if b.Len() > 0 {
		b.WriteString(" ")
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

// relayout returns src with random blanks where fmt decides them
// (relayoutBlanks): for VVM, logical lines and own-line comments outside
// brackets keep their indentation, which fmt reads.
func relayout(t *testing.T, r *rand.Rand, name string, src []byte) []byte {
	t.Helper()
	if strings.HasSuffix(name, ".gen") {
		_, elems, err := genesisTokens(src)
		if err != nil {
			t.Fatal(err)
		}
		return relayoutBlanks(r, elems, nil)
	}
	vf, err := newVVMFile(src)
	if err != nil {
		t.Fatal(err)
	}
	return relayoutBlanks(r, vf.elems, func(i int) bool {
		e := vf.elems[i]
		return vf.start[i] || e.comment() && e.nl > 0 && vvmDepth(vf, i) == 0
	})
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
