package compiler

import (
	"bytes"
	"encoding/binary"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/genesis-toolchain/genesis/forge/agentabi"
	"github.com/genesis-toolchain/genesis/forge/bytecode"
	"github.com/genesis-toolchain/genesis/internal/golden"
)

// TestAgentProgramsBuildForForge builds every agent program of the
// repository for the forge target — the examples, the copies of the
// shared corpus (VVM, Grimoire, nano-vm) and the programs of the agent
// run cases (tests/agent, tests/vvm/run, tests/grimoire/run) and the
// plans (tests/plan) — and checks
// that each program that builds for the go target builds for forge too,
// into a program that loads as forge verify loads it, whose metadata
// parses as an agent program's and agrees with the go target's identity,
// whose host calls and request frames name builtins, positions and
// sites the metadata has, and which is the same in every build.
func TestAgentProgramsBuildForForge(t *testing.T) {
	var progs []string
	glob := func(pattern string) {
		m, err := filepath.Glob(pattern)
		if err != nil {
			t.Fatal(err)
		}
		progs = append(progs, m...)
	}
	for _, ext := range agentExts {
		glob(filepath.Join("..", "examples", "*"+ext))
	}
	walk := func(dir string, exts ...string) {
		err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
			if err == nil && !d.IsDir() && slices.Contains(exts, filepath.Ext(path)) {
				progs = append(progs, path)
			}
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	walk(filepath.Join("..", "tests", "vvm", "corpus"), ".vvm")
	walk(filepath.Join("..", "tests", "grimoire", "corpus"), ".spell")
	walk(filepath.Join("..", "tests", "nanovm", "corpus"), ".json", ".yaml")
	// The run cases' programs, written out with the files they import.
	tmp := t.TempDir()
	var cases []string
	for _, dir := range []string{"agent", "vvm/run", "grimoire/run", "plan"} {
		m, err := filepath.Glob(filepath.Join("..", "tests", filepath.FromSlash(dir), "*.txtar"))
		if err != nil {
			t.Fatal(err)
		}
		cases = append(cases, m...)
	}
	for i, path := range cases {
		c, err := golden.Load(path)
		if err != nil {
			t.Fatal(err)
		}
		dir := filepath.Join(tmp, strconv.Itoa(i), strings.TrimSuffix(filepath.Base(path), ".txtar"))
		for _, f := range c.Archive.Files {
			if strings.HasPrefix(f.Name, "out/") {
				continue
			}
			p := filepath.Join(dir, filepath.FromSlash(f.Name))
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, f.Data, 0o644); err != nil {
				t.Fatal(err)
			}
			if strings.HasPrefix(f.Name, "prog.") || f.Name == "plan.json" {
				progs = append(progs, p)
			}
		}
	}

	built := 0
	for _, path := range progs {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		srcs := []Source{{Name: path, Data: data}}
		lang, ds := language(srcs)
		if ds.HasErrors() || !lang.Agent && filepath.Ext(path) != ".ir" {
			continue
		}
		goOut, ds := Build(srcs, Options{Target: "go"})
		if ds.HasErrors() {
			continue // a program with errors: the corpus has some
		}
		out, ds := Build(srcs, Options{})
		if ds.HasErrors() {
			t.Errorf("%s builds for go but not for forge:\n%s", path, ds.Error())
			continue
		}
		built++
		checkAgentProgram(t, path, out.Program, string(goOut.Files[0].Data))
		if built%16 == 0 {
			// The functions compile concurrently: the program must not
			// depend on it (nor the numbering of the metadata).
			again, _ := Build(srcs, Options{})
			if !bytes.Equal(again.Program.Encode(), out.Program.Encode()) {
				t.Errorf("%s: two builds differ", path)
			}
		}
	}
	t.Logf("%d agent programs built for forge", built)
	if built < 350 {
		t.Errorf("%d agent programs built for forge, want the corpus's and the run cases' (at least 350)", built)
	}
}

// checkAgentProgram checks a Forge agent program p built from path:
// it loads, its metadata parses and names what its code uses, and its
// identity is the go target's (goSrc is the go target's program.go).
func checkAgentProgram(t *testing.T, path string, p *bytecode.Program, goSrc string) {
	t.Helper()
	p, err := bytecode.Decode(p.Encode())
	if err != nil {
		t.Errorf("%s: the program does not load: %v", path, err)
		return
	}
	meta, err := agentabi.Parse(p.Metadata)
	if err != nil {
		t.Errorf("%s: %v", path, err)
		return
	}
	if meta.Program != filepath.Base(path) {
		t.Errorf("%s: program %q", path, meta.Program)
	}
	if !strings.Contains(goSrc, "const ProgramHash = \""+meta.ProgramHash+"\"") {
		t.Errorf("%s: program hash %s is not the go target's", path, meta.ProgramHash)
	}
	syms := map[string]uint64{}
	for _, s := range p.Symbols {
		syms[s.Name] = s.Addr
	}
	insts, offs, err := bytecode.Insts(p.Code)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	at := map[uint64]bytecode.Inst{}
	for i, in := range insts {
		at[uint64(offs[i])] = in
	}
	if a, ok := syms[meta.Return]; !ok || at[a].Op != bytecode.HALT {
		t.Errorf("%s: the return symbol %q is not at a HALT", path, meta.Return)
	}
	for i, s := range meta.Sites {
		for _, b := range s.Branches {
			if _, ok := syms[b]; !ok {
				t.Errorf("%s: site %d: branch %q is no symbol of the program", path, i, b)
			}
		}
	}
	var li [256]uint64 // the last LI of each register, for the prefixes
	pending := -1      // the words a request's prefix announced
	for i, in := range insts {
		switch in.Op {
		case bytecode.LI:
			li[in.A] = in.Imm
		case bytecode.HCALL:
			b, pos := agentabi.SplitHostCallImm(uint32(in.Imm))
			if b >= len(meta.Builtins) || pos > len(meta.Positions) {
				t.Errorf("%s: HCALL %d at %d: builtin %d, position %d out of range", path, in.Imm, offs[i], b, pos)
			}
		case bytecode.SEND:
			if in.C < agentabi.ChanVault {
				break
			}
			if pending >= 0 {
				if int(in.Imm) != pending || in.A != 254 {
					t.Errorf("%s: at %d: SEND of %d bytes from r%d after a prefix announcing %d words", path, offs[i], in.Imm, in.A, pending)
				}
				pending = -1
				break
			}
			addr := li[in.A] - p.DataBase()
			if addr+in.Imm > uint64(len(p.Data)) || in.Imm < 9 {
				t.Errorf("%s: at %d: a request prefix outside the data", path, offs[i])
				break
			}
			prefix := p.Data[addr : addr+in.Imm]
			words := int(binary.LittleEndian.Uint64(prefix)) - (len(prefix) - 8)
			payload := append(append([]byte(nil), prefix[8:]...), make([]byte, max(words, 0))...)
			r, err := agentabi.ParseRequest(payload)
			switch {
			case err != nil:
				t.Errorf("%s: at %d: %v", path, offs[i], err)
			case r.Op.Channel() != in.C:
				t.Errorf("%s: at %d: %s on channel %d", path, offs[i], r.Op, in.C)
			case r.Site >= len(meta.Sites):
				t.Errorf("%s: at %d: site %d of %d", path, offs[i], r.Site, len(meta.Sites))
			}
			pending = words
		}
	}
}
