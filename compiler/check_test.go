package compiler

import (
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"
	"testing"

	"github.com/genesis-toolchain/genesis/diag"
	"github.com/genesis-toolchain/genesis/forge/agentabi"
	"github.com/genesis-toolchain/genesis/forge/bytecode"
	"github.com/genesis-toolchain/genesis/frontend"
	"github.com/genesis-toolchain/genesis/internal/golden"
	"github.com/genesis-toolchain/genesis/ir"
)

// agentExts are the extensions of the agent languages' programs.
var agentExts = []string{".vvm", ".spell", ".json", ".yaml", ".yml"}

// agentProgram is one agent program and the files it may import.
type agentProgram struct {
	name  string
	data  []byte
	files map[string][]byte // by path, the entry too
}

func (p agentProgram) read(name string) ([]byte, error) {
	if data, ok := p.files[path.Clean(filepath.ToSlash(name))]; ok {
		return data, nil
	}
	return nil, os.ErrNotExist
}

// agentPrograms returns the programs of the agent languages the
// repository holds: every file of the corpus copies and the examples,
// and the first program of each golden case of tests/vvm, tests/grimoire,
// tests/nanovm and tests/plan, with the case's other files to import.
func agentPrograms(t *testing.T) []agentProgram {
	var progs []agentProgram
	for _, dir := range []string{"../tests/vvm/corpus", "../tests/grimoire/corpus", "../tests/nanovm/corpus", "../examples"} {
		files := map[string][]byte{}
		rels := golden.CorpusFiles(t, dir, agentExts...)
		for _, rel := range rels {
			data, err := os.ReadFile(filepath.Join(dir, rel))
			if err != nil {
				t.Fatal(err)
			}
			files[rel] = data
		}
		for _, rel := range rels {
			progs = append(progs, agentProgram{name: rel, data: files[rel], files: files})
		}
	}
	for _, lang := range []string{"vvm", "grimoire", "nanovm", "plan"} {
		var cases []string
		for _, pattern := range []string{"*.txtar", "*/*.txtar"} {
			m, err := filepath.Glob(filepath.Join("..", "tests", lang, pattern))
			if err != nil {
				t.Fatal(err)
			}
			cases = append(cases, m...)
		}
		for _, c := range cases {
			a, err := golden.Load(c)
			if err != nil {
				t.Fatal(err)
			}
			p := agentProgram{files: map[string][]byte{}}
			for _, f := range a.Archive.Files {
				if strings.HasPrefix(f.Name, "out/") || !isAgentFile(f.Name) {
					continue
				}
				p.files[path.Clean(f.Name)] = f.Data
				if p.name == "" {
					p.name, p.data = path.Clean(f.Name), f.Data
				}
			}
			if p.name != "" {
				progs = append(progs, p)
			}
		}
	}
	return progs
}

func isAgentFile(name string) bool {
	ext := strings.ToLower(filepath.Ext(name))
	for _, e := range agentExts {
		if ext == e {
			return true
		}
	}
	return false
}

// TestCheckIsTheFrontend holds Check to its contract for the agent
// languages, which it checks without lowering them: on every agent
// program of the repository — the corpus, the examples and the golden
// cases, valid or not — the language's Check reports exactly the
// diagnostics of Check and Lower, which lowers the program and verifies
// its IR.
// So the lowering of these languages reports nothing of its own, and
// skipping it loses nothing; a lowering that starts reporting a
// diagnostic must make Check lower too.
func TestCheckIsTheFrontend(t *testing.T) {
	progs := agentPrograms(t)
	if len(progs) < 450 {
		t.Fatalf("%d agent programs, want the corpus and the golden cases", len(progs))
	}
	valid := 0
	for _, p := range progs {
		lang := languages.Language(p.name, p.data)
		if lang == nil || !lang.Agent {
			t.Fatalf("%s: not an agent program", p.name)
		}
		in := frontend.Input{Files: []Source{{Name: p.name, Data: p.data}}, Import: p.read}
		checked, got := lang.Check(in)
		want := got
		var m *ir.Module
		if !got.HasErrors() {
			var more diag.List
			m, more = lang.Lower(checked)
			want = append(append(diag.List(nil), got...), more...)
		}
		if got.Error() != want.Error() {
			t.Errorf("%s: Check reports\n%s\nthe frontend's Compile\n%s", p.name, got.Error(), want.Error())
		}
		if m != nil {
			valid++
		}
	}
	t.Logf("%d programs, %d of them valid", len(progs), valid)
	if valid < 300 {
		t.Errorf("only %d of the programs compile", valid)
	}
}

// TestCheckEveryKind checks Check on a valid and an invalid input of
// every kind genesisc reads: nothing but warnings for the valid ones,
// errors with a position for the others.
func TestCheckEveryKind(t *testing.T) {
	read := func(name string) Source {
		data, err := os.ReadFile(filepath.Join("..", "examples", name))
		if err != nil {
			t.Fatal(err)
		}
		return Source{Name: name, Data: data}
	}
	for _, c := range []struct {
		name string
		srcs []Source
		want string // the first error, "" for none
	}{
		{"Genesis", []Source{read("factorial.gen")}, ""},
		{"Genesis, two files", []Source{
			{Name: "a.gen", Data: []byte("fn main() -> void { let x: i64 = g(); }\n")},
			{Name: "b.gen", Data: []byte("fn g() -> i64 { 7 }\n")}}, ""},
		{"a Genesis type error", []Source{{Name: "t.gen", Data: []byte("fn main() -> void {\n  let x: i64 = true;\n}\n")}}, "t.gen:2:"},
		{"a Genesis syntax error", []Source{{Name: "t.gen", Data: []byte("fn main( -> void { }\n")}}, "t.gen:1:"},
		{"VVM", []Source{read("review.vvm")}, ""},
		{"a VVM error", []Source{{Name: "t.vvm", Data: []byte("x = y\n")}}, "t.vvm:1:5: error[E051]"},
		{"nano-vm", []Source{read("refund.json")}, ""},
		{"a nano-vm error", []Source{{Name: "t.json", Data: []byte(`{"name": "p", "steps": []}`)}}, "t.json:1:"},
		{"Grimoire", []Source{{Name: "t.spell", Data: []byte("spell T\n\non manual:\n  x = 1\n  emit done(x=x)\n")}}, ""},
		{"a Grimoire error", []Source{{Name: "t.spell", Data: []byte("spell x:\n")}}, "t.spell:1:8: error[G001]"},
		{"Forge assembly", []Source{read("hello.fasm")}, ""},
		{"a Forge assembly error", []Source{{Name: "t.fasm", Data: []byte("    ADD r1, r2\n    HALT\n")}}, "t.fasm:1:5: error[A003]"},
		{"IR", []Source{{Name: "t.ir", Data: []byte("func @main() -> i64 {\n  %x = const i64 1\n  return %x\n}\n")}}, ""},
		{"an IR verifier error", []Source{{Name: "t.ir", Data: []byte("func @main() -> i64 @t.src:3:1 {\n  %x = const i32 1 @4:3\n  return %x @5:3\n}\n")}}, "t.src:5:3: error[I002]"},
		{"mixed languages", []Source{{Name: "a.gen"}, {Name: "b.vvm"}}, "error[E0004]"},
		{"no inputs", nil, "error[E0003]"},
	} {
		t.Run(c.name, func(t *testing.T) {
			ds := Check(c.srcs)
			var errs []string
			for _, d := range ds {
				if d.Severity == diag.Error {
					errs = append(errs, d.Error())
				}
			}
			switch {
			case c.want == "" && len(errs) > 0:
				t.Errorf("errors:\n%s", strings.Join(errs, "\n"))
			case c.want != "" && (len(errs) == 0 || !strings.Contains(errs[0], c.want)):
				t.Errorf("errors %q, want the first to contain %q", errs, c.want)
			}
		})
	}
}

// TestBuildAgentProgramForForge checks that an agent program builds for
// the forge target (a program the verifier accepts, whose metadata is an
// agent program's) and for the go target and as IR, and that building it
// for the native target gives one diagnostic, at the file, saying what
// to do.
func TestBuildAgentProgramForForge(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "examples", "review.vvm"))
	if err != nil {
		t.Fatal(err)
	}
	srcs := []Source{{Name: "review.vvm", Data: data}}
	for _, opts := range []Options{{Target: "native", Emit: EmitAsm}, {Target: "native"}} {
		t.Run(fmt.Sprintf("%s %s", opts.Target, opts.Emit), func(t *testing.T) {
			out, ds := Build(srcs, opts)
			if out != nil || len(ds) != 1 {
				t.Fatalf("%d diagnostics, want 1:\n%s", len(ds), ds.Error())
			}
			d := ds[0]
			if d.Code != CodeAgentTarget || d.Pos != (diag.Pos{File: "review.vvm", Line: 1, Col: 1}) ||
				!strings.Contains(d.Msg, "--target go") || !strings.Contains(d.Msg, "--target forge") || !strings.Contains(d.Msg, "genesisc run review.vvm") {
				t.Errorf("got %s", d.Error())
			}
		})
	}
	for _, opts := range []Options{{Emit: EmitIR}, {Target: "go"}, {Target: "forge", Emit: EmitAsm}} {
		if _, ds := Build(srcs, opts); ds.HasErrors() {
			t.Errorf("%+v: %s", opts, ds.Error())
		}
	}
	out, ds := Build(srcs, Options{})
	if ds.HasErrors() {
		t.Fatal(ds.Error())
	}
	// As forge verify: the file decodes (Decode verifies it).
	if _, err := bytecode.Decode(out.Program.Encode()); err != nil {
		t.Errorf("the program does not load: %v", err)
	}
	meta, err := agentabi.Parse(out.Program.Metadata)
	if err != nil {
		t.Fatal(err)
	}
	if meta.Program != "review.vvm" || !meta.Input || !meta.Result || len(meta.Sites) == 0 {
		t.Errorf("metadata %+v", meta)
	}
}

// TestCheckIsBuildForGenesis checks that Check reports, on every error
// case and type-checking case of tests/genesis (whose programs fail in
// every phase: lexing, parsing, names, types, inline assembly, the
// lowering's 0x0802), the diagnostics Build reports, errors and
// warnings: no Genesis diagnostic comes from the optimizer or the
// backend, which Check does not run.
func TestCheckIsBuildForGenesis(t *testing.T) {
	var paths []string
	for _, dir := range []string{"errors", "check", "lower"} {
		m, err := filepath.Glob(filepath.Join("..", "tests", "genesis", dir, "*.txtar"))
		if err != nil {
			t.Fatal(err)
		}
		paths = append(paths, m...)
	}
	failing := 0
	for _, p := range paths {
		a, err := golden.Load(p)
		if err != nil {
			t.Fatal(err)
		}
		var srcs []Source
		for _, f := range a.Archive.Files {
			if strings.HasSuffix(f.Name, ".gen") {
				srcs = append(srcs, Source{Name: f.Name, Data: f.Data})
			}
		}
		if len(srcs) == 0 {
			continue
		}
		_, want := Build(srcs, Options{OptLevel: 2})
		got := Check(srcs)
		if got.Render(SourceMap(srcs)) != want.Render(SourceMap(srcs)) {
			t.Errorf("%s: Check reports\n%s\nBuild\n%s", filepath.Base(p), got.Render(SourceMap(srcs)), want.Render(SourceMap(srcs)))
		}
		if want.HasErrors() {
			failing++
		}
	}
	if failing < 100 {
		t.Errorf("only %d of the %d cases fail: the error cases moved?", failing, len(paths))
	}
}
