package vvm

import (
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/genesis-toolchain/genesis/frontend"

	"github.com/genesis-toolchain/genesis/diag"
	"github.com/genesis-toolchain/genesis/internal/golden"
	"github.com/genesis-toolchain/genesis/ir"
)

// FuzzParse checks that no source makes ParseFile, Load or Lower panic
// (they recover and report CodeInternal, which this target treats as a
// failure) or hang, that every diagnostic has a position in the file,
// that the tree prints, and that a program without errors lowers to IR
// that verifies. The seed corpus, every corpus program and
// every .vvm section of the golden cases, runs in plain go test.
func FuzzParse(f *testing.F) {
	for _, src := range seeds(f) {
		f.Add(src)
	}
	for _, src := range deepSeeds() {
		f.Add(src)
	}
	f.Fuzz(func(t *testing.T, src string) {
		file, diags := ParseFile("fuzz.vvm", []byte(src))
		if file == nil {
			t.Fatal("ParseFile returned no file")
		}
		checkDiags(t, src, diags)
		// Parsed chunk by chunk, a statement a chunk, the file has the
		// same tree, positions and diagnostics.
		var rc reporter
		chunked, _ := parseFileChunked("fuzz.vvm", []byte(src), &rc, 0, 1, nil)
		if w, c := Sprint(file), Sprint(chunked); w != c {
			t.Fatalf("whole:\n%s\nchunked:\n%s", w, c)
		}
		if w, c := diags.Error(), rc.sorted().Error(); w != c {
			t.Fatalf("whole:\n%s\nchunked:\n%s", w, c)
		}
		prog, diags := Check(frontend.File("fuzz.vvm", []byte(src)))
		checkDiags(t, src, diags)
		// Checked in two passes, a statement a chunk, it has the same
		// diagnostics.
		if _, two := check(frontend.File("fuzz.vvm", []byte(src)), true, 0, 1, nil); two.Error() != diags.Error() {
			t.Fatalf("Check:\n%s\nin two passes:\n%s", diags.Error(), two.Error())
		}
		if prog == nil || prog.Main == nil || prog.Main.File == nil {
			t.Fatal("Load returned no program")
		}
		_ = Sprint(prog.Main.File)
		if diags.HasErrors() {
			return
		}
		// A valid program lowers to IR that verifies.
		m, diags := Lower(prog)
		checkDiags(t, src, diags)
		if vs := ir.Verify(m); len(vs) > 0 {
			t.Fatalf("the lowered IR does not verify: %s\n%s", vs.Error(), src)
		}
	})
}

// checkDiags fails on an internal error, and on a diagnostic of
// fuzz.vvm whose position is not in src.
func checkDiags(t *testing.T, src string, diags diag.List) {
	t.Helper()
	lines := strings.Count(src, "\n") + 1
	for _, d := range diags {
		if d.Code == CodeInternal {
			t.Fatalf("internal error: %s", d)
		}
		if d.Pos.File == "fuzz.vvm" && (d.Pos.Line < 1 || d.Pos.Line > lines || d.Pos.Col < 1) {
			t.Fatalf("diagnostic outside the source (%d lines): %s", lines, d)
		}
	}
}

// seeds returns the corpus programs and the .vvm sections of the golden
// cases (tests/vvm), in a fixed order.
func seeds(tb testing.TB) []string {
	var srcs []string
	root := filepath.Join("..", "..", "tests", "vvm")
	err := filepath.WalkDir(filepath.Join(root, "corpus"), func(path string, d fs.DirEntry, err error) error {
		if err == nil && strings.HasSuffix(path, ".vvm") {
			data, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			srcs = append(srcs, string(data))
		}
		return err
	})
	if err != nil {
		tb.Fatal(err)
	}
	for _, dir := range []string{"parse", "errors", "lower", "run"} {
		for _, path := range golden.Files(tb, filepath.Join(root, dir, "*.txtar")) {
			c, err := golden.Load(path)
			if err != nil {
				tb.Fatal(err)
			}
			for _, f := range c.Archive.Files {
				if strings.HasSuffix(f.Name, ".vvm") {
					srcs = append(srcs, string(f.Data))
				}
			}
		}
	}
	if len(srcs) < 43 {
		tb.Fatalf("%d seeds: the corpus copy in tests/vvm/corpus is missing", len(srcs))
	}
	sort.Strings(srcs)
	return srcs
}

// deepSeeds are programs at and just past the nesting limits (lex.go):
// the fuzzer mutates them into every mix of deep brackets, blocks,
// operators, `not`s, lambdas and postfixes.
func deepSeeds() []string {
	var blocks strings.Builder
	for i := 0; i <= maxBlocks; i++ {
		blocks.WriteString(strings.Repeat(" ", i) + "if x:\n")
	}
	blocks.WriteString(strings.Repeat(" ", maxBlocks+1) + "pass\n")
	var elifs strings.Builder
	elifs.WriteString("x = 1\nif x == 0:\n  y = 0\n")
	for i := 1; i < 300; i++ {
		elifs.WriteString("elif x == 1:\n  y = f(1, 2)\n")
	}
	return []string{
		"x = " + strings.Repeat("(", maxBrackets+1) + "1" + strings.Repeat(")", maxBrackets+1) + "\n",
		"x = " + strings.Repeat("[", maxBrackets) + strings.Repeat("]", maxBrackets) + "\n",
		"x = " + strings.Repeat("not ", maxDepth+1) + "true\n",
		"x = " + strings.Repeat("not ", maxDepth-1) + "true\nexport x\n",
		"f = " + strings.Repeat("x => ", maxDepth+1) + "x\n",
		"x = 1" + strings.Repeat(" + 1", maxDepth+1) + "\n",
		"x = 1" + strings.Repeat(" - 1", maxDepth-2) + "\nexport x\n",
		"x = true" + strings.Repeat(" or false and not true", maxDepth/2) + "\n",
		"o = {a: 1}\nx = o" + strings.Repeat(".a", maxDepth+1) + "\n",
		"o = [1]\nx = o" + strings.Repeat("[0]", maxDepth+1) + "\n",
		"x = " + strings.Repeat("not (", maxBrackets) + "true" + strings.Repeat(")", maxBrackets) + "\n",
		blocks.String(),
		"def f(a):\n  return a\n\n" + elifs.String(),
		"def f(a, b):\n  return a\n\nx = f(1)\ny = f(1, 2, 3)\nz = f(1, c=2)\nw = f(1, a=2)\nl = len\n",
	}
}
