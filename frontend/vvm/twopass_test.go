package vvm

import (
	"fmt"
	"io/fs"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"golang.org/x/tools/txtar"

	"github.com/genesis-toolchain/genesis/frontend"
	"github.com/genesis-toolchain/genesis/internal/inputlimits"
)

// twoPassPrograms returns programs to check both ways, each a map of its
// files with the entry's name: every archive of tests/vvm (the error
// and warning cases, with their modules), every source of chunkSources
// alone, and programs made to hit what the second pass resolves from
// the summary of the first.
func twoPassPrograms(t *testing.T) map[string]map[string][]byte {
	progs := map[string]map[string][]byte{}
	arcs, _ := filepath.Glob("../../tests/vvm/*/*.txtar")
	for _, name := range arcs {
		a, err := txtar.ParseFile(name)
		if err != nil {
			t.Fatal(err)
		}
		files := map[string][]byte{}
		entry := ""
		for _, f := range a.Files {
			if strings.HasSuffix(f.Name, ".vvm") {
				if entry == "" {
					entry = f.Name
				}
				files[f.Name] = f.Data
			}
		}
		if entry != "" {
			progs[name+"|"+entry] = files
		}
	}
	for name, src := range chunkSources(t) {
		progs[name+"|t.vvm"] = map[string][]byte{"t.vvm": src}
	}
	lib := []byte(`input topic: "The topic"
report = topic
summary = topic
export report
export summary
export @writer
agent writer(model="m", memory={scope: "project", key: "k"})
`)
	main := `from "./lib.vvm" import * as lib
from "./lib.vvm" import report
from "./lib.vvm" import @writer
from "./lib.vvm" import nothere
import "web" from "github:a/b"
agent a(model="m", memory={scope: "project", key: "notes"}, skills=["web", "nope"])
agent b(model="m", memory={scope: "project", key: "notes"})
agent a(model="x")
r = lib(topic="AI")
citations = r.citations
direct = lib(topic="AI").summry
p = pack(x=1, y=2)
text = @a ` + "`Summarize {r.report} and {r.notes} {x}.`" + `(p)
constrain later():
  require ?` + "`x`" + `
later = 1
def f(a):
  q = lib(topic=a)
  unused = 1
  constrain q():
    require ?` + "`ok`" + `
  return q.nope + helper(a) + ` + "@a `{zz} {q.summary}`()" + `
def f(b):
  return b
def helper(x):
  g = y => y + x + r.other
  return g(1)
if text:
  def inner():
    return 1
  w = lib(topic="b")
else:
  w = 2
out = w.anything
parallel() as res:
  one = @a ` + "`one`(1)" + `
  two = @b ` + "`two`(2)" + `
v = one + res.two
try:
  z = 1
except as e:
  z = e
for i in range(3):
  k = i
input late: "too late"
export citations
export citations
export pack(direct, z, v, p, undefined, out2=out)
unusedvar = @writer ` + "`hi`()" + `
`
	progs["made|main.vvm"] = map[string][]byte{"main.vvm": []byte(main), "lib.vvm": lib}
	progs["made BOM|main.vvm"] = map[string][]byte{"main.vvm": []byte("\uFEFF" + main + "é = 1\ns = \"日本 é\"\nexport s\n"), "lib.vvm": lib}
	// Defs, which pass 1 does not parse: with syntax errors (the check
	// starts again in one pass), the builder's diagnostics (which pass 2
	// reports), line ends and Unicode blanked out.
	for name, src := range map[string]string{
		"def syntax":       "x = 1\ndef f(a):\n  return a +\ny = f(1)\nexport y\n",
		"def header":       "x = 1\ndef f a:\n  return 1\nexport x\n",
		"def unclosed":     "x = 1\ndef f(a:\n  return 1\nexport x\n",
		"def keyword name": "def if(a):\n  return a\nx = 1\nexport x\n",
		"def reserved":     "def f(a):\n  for = 1\n  return {a: it}\ny = f(1)\nexport y\ninput late: \"x\"\n",
		"def not a def":    "def = 1\nx = 2\nexport x\n",
		"def CRLF":         "def f(a):\r\n  b = a\r\n\r\n  return a\r\nx = f(1)\r\nexport x\r\n",
		"def Unicode":      "def f(a):\n  s = \"日本 é\"\n  return a\n# é\nx = f(1) + \"é\"\nexport x\nz = nope\n",
		"def nested":       "def f(a):\n  def g(b):\n    return c\n  return g(a)\nx = f(1)\nif x:\n  def h():\n    return 1\nexport x\n",
		"def last":         "x = 1\nexport x\ndef f(a):\n  return zz",
	} {
		progs["made "+name+"|t.vvm"] = map[string][]byte{"t.vvm": []byte(src)}
	}
	// An ordinary large program with errors put in here and there.
	big := string(inputlimits.VVMProgram(20000))
	lines := strings.Split(big, "\n")
	k := 0
	for i, l := range lines {
		if !strings.HasPrefix(l, "r") || i%7 != 0 {
			continue // a top-level r = f(…), one in seven
		}
		switch k % 4 {
		case 0:
			lines[i] = "bad" + fmt.Sprint(i) + " = unknown" + fmt.Sprint(i)
		case 1:
			lines[i] = "def f1(x):\n  return nope"
		case 2:
			lines[i] = "x" + fmt.Sprint(i) + " = r0.field"
		case 3:
			lines[i] = "constrain y" + fmt.Sprint(i) + "():\n  require ?`x`\ny" + fmt.Sprint(i) + " = 1"
		}
		k++
	}
	progs["big|big.vvm"] = map[string][]byte{"big.vvm": []byte(strings.Join(lines, "\n"))}
	return progs
}

// TestCheckHoldingIsCheck checks every program of twoPassPrograms with
// Check and in two passes, cut a statement a chunk: the diagnostics must
// be the same, and most programs must have been checked in two passes.
func TestCheckHoldingIsCheck(t *testing.T) {
	progs := twoPassPrograms(t)
	names := make([]string, 0, len(progs))
	for name := range progs {
		names = append(names, name)
	}
	sort.Strings(names)
	twoPass, withErrors := 0, 0
	for _, name := range names {
		files := progs[name]
		entry := name[strings.LastIndex(name, "|")+1:]
		in := frontend.Input{Files: []frontend.Source{{Name: entry, Data: files[entry]}},
			Import: func(path string) ([]byte, error) {
				if src, ok := files[path]; ok {
					return src, nil
				}
				return nil, fs.ErrNotExist
			}}
		_, want := Check(in)
		prog, got := check(in, true, 0, 1, nil)
		if w, g := want.Error(), got.Error(); w != g {
			t.Errorf("%s: Check:\n%s\nin two passes:\n%s", name, w, g)
		}
		for _, m := range prog.Modules {
			if m.sum != nil {
				twoPass++
				if m.File.Stmts != nil {
					t.Errorf("%s: %s was checked in two passes but its tree was kept", name, m.Path)
				}
			}
		}
		if want.HasErrors() {
			withErrors++
		}
	}
	t.Logf("%d programs (%d with errors), %d modules checked in two passes", len(progs), withErrors, twoPass)
	if twoPass < len(progs)/2 || withErrors < 40 {
		t.Errorf("only %d modules of %d programs were checked in two passes, %d programs with errors", twoPass, len(progs), withErrors)
	}
}

// TestCheckHoldingHoldsNoTree checks that CheckHolding keeps nothing of a
// large module's statements: its diagnostics are Check's, and the peak
// it reports is reached once.
func TestCheckHoldingPeak(t *testing.T) {
	src := inputlimits.VVMProgram(200 << 10)
	peaks := 0
	diags := CheckHolding(frontend.File("big.vvm", src), func() { peaks++ })
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	if peaks != 1 {
		t.Errorf("the peak was reached %d times, want once", peaks)
	}
	_, want := Check(frontend.File("big.vvm", src))
	if w, g := want.Error(), diags.Error(); w != g {
		t.Errorf("Check:\n%s\nCheckHolding:\n%s", w, g)
	}
}

// TestCheckHoldingIsLinear checks, by counting allocations rather than
// timing, that a check in two passes costs work linear in the input:
// on input nested as deep as the limits allow and on ordinary code,
// four times the input may not cost more than about four times the
// allocations. Both are cut into chunks of the default size, whatever
// their size, so that both sizes are checked in two passes.
func TestCheckHoldingIsLinear(t *testing.T) {
	measure := func(src []byte) inputlimits.Usage {
		return inputlimits.Measure(func() any {
			prog, diags := check(frontend.File("t.vvm", src), true, 0, chunkTokens, nil)
			if diags.HasErrors() {
				t.Fatalf("does not check: %s", diags.Error())
			}
			if prog.Main.sum == nil {
				t.Fatal("not checked in two passes")
			}
			return nil
		})
	}
	inputlimits.Grows(t, measure([]byte(deepProgram(2))), measure([]byte(deepProgram(8))), 4, 1.25)
	inputlimits.Grows(t, measure(inputlimits.VVMProgram(64<<10)), measure(inputlimits.VVMProgram(256<<10)), 4, 1.25)
}
