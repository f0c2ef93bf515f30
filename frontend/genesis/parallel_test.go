package genesis

import (
	"bytes"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/genesis-toolchain/genesis/diag"
	"github.com/genesis-toolchain/genesis/internal/golden"
)

// bigSource concatenates the Genesis sources of the golden tests until
// the file is large enough to be parsed concurrently. Names repeat, which
// parsing does not mind.
func bigSource(t *testing.T) []byte {
	var unit bytes.Buffer
	for _, pattern := range []string{"../../tests/genesis/check/ok_*.txtar", "../../tests/genesis/lower/*.txtar"} {
		for _, path := range golden.Files(t, pattern) {
			c, err := golden.Load(path)
			if err != nil {
				t.Fatal(err)
			}
			for _, f := range c.Archive.Files {
				if filepath.Ext(f.Name) == ".gen" {
					unit.Write(f.Data)
					unit.WriteByte('\n')
				}
			}
		}
	}
	var src bytes.Buffer
	for src.Len() < parallelMinBytes+parallelMinBytes/2 {
		src.Write(unit.Bytes())
	}
	return src.Bytes()
}

// TestParseConcurrently checks that a large file parsed concurrently gives
// the declarations the sequential parser gives, and that a syntax error
// anywhere makes Parse report exactly what the sequential parser reports.
func TestParseConcurrently(t *testing.T) {
	src := bigSource(t)
	if _, ok := parseConcurrently("big.gen", src); !ok {
		t.Fatal("the concurrent parser declined a large, valid file")
	}
	want, wantDiags := parseWith("big.gen", src, false)
	got, gotDiags := parseWith("big.gen", src, true)
	if len(wantDiags) > 0 || len(gotDiags) > 0 {
		t.Fatalf("diagnostics: sequential %v, concurrent %v", wantDiags, gotDiags)
	}
	if d := cmp.Diff(Sprint(want, false), Sprint(got, false)); d != "" {
		t.Fatalf("the concurrent parse differs (-sequential +concurrent):\n%s", d)
	}
	// Each chunk is lexed on its own, from its line and column: the
	// positions must be the file's.
	if d := cmp.Diff(positions(want), positions(got)); d != "" {
		t.Fatalf("the concurrent parse's positions differ (-sequential +concurrent):\n%s", d)
	}

	for _, bad := range []string{"fn broken( {}\n", "fn f() -> void { let x: u8 = 1 < 2 < 3; }\n", "fn f() -> void { 1 = 2; }\n"} {
		// Insert bad at the first item boundary after the middle.
		at := len(src)/2 + bytes.Index(src[len(src)/2:], []byte("\nfn ")) + 1
		src := append(append(append([]byte(nil), src[:at]...), bad...), src[at:]...)
		_, wantDiags := parseWith("big.gen", src, false)
		_, gotDiags := parseWith("big.gen", src, true)
		if len(wantDiags) == 0 {
			t.Fatalf("%q: no diagnostic", bad)
		}
		if d := cmp.Diff(wantDiags.Error(), gotDiags.Error()); d != "" {
			t.Errorf("%q: diagnostics differ (-sequential +concurrent):\n%s", bad, d)
		}
	}
}

// parseWith is Parse, with the concurrent path or without it.
func parseWith(file string, src []byte, concurrent bool) (*File, diag.List) {
	f, r := parse(file, src, concurrent, 0)
	return f, r.sortedDiags()
}

// positions lists the position of every declaration and expression of f.
func positions(f *File) []diag.Pos {
	var ps []diag.Pos
	for _, d := range f.Decls {
		ps = append(ps, d.Pos())
	}
	walkFile(f, func(e Expr) { ps = append(ps, e.Pos()) })
	return ps
}
