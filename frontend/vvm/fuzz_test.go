package vvm

import (
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/genesis-toolchain/genesis/frontend/diag"
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
	f.Fuzz(func(t *testing.T, src string) {
		file, diags := ParseFile("fuzz.vvm", []byte(src))
		if file == nil {
			t.Fatal("ParseFile returned no file")
		}
		checkDiags(t, src, diags)
		_ = Sprint(file)
		prog, diags := Load("fuzz.vvm", func(name string) ([]byte, error) {
			if name == "fuzz.vvm" {
				return []byte(src), nil
			}
			return nil, fs.ErrNotExist
		})
		checkDiags(t, src, diags)
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
	for _, dir := range []string{"parse", "errors"} {
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
