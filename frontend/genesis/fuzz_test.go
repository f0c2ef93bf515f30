package genesis

import (
	"testing"

	"github.com/genesis-toolchain/genesis/diag"
)

// FuzzParse checks that no source makes Parse or Check panic (both
// recover internally and report CodeInternal, which this target treats as
// a failure), and that Check returns a program exactly when it reports no
// error. The seed corpus, every golden source, runs in plain go test.
func FuzzParse(f *testing.F) {
	for _, src := range goldenSources(f) {
		f.Add(src)
	}
	// Deep nesting of every recursive construct: just past the limit,
	// and shallow enough to check.
	for _, c := range nestingCases {
		f.Add(c.gen(MaxNesting + 1))
		f.Add(c.gen(20))
	}
	f.Fuzz(func(t *testing.T, src string) {
		file, diags := Parse("fuzz.gen", []byte(src))
		if file == nil {
			t.Fatal("Parse returned no file")
		}
		noInternal(t, diags)
		parsed := !diags.HasErrors()
		// Check is not meant for a file with syntax errors, but must
		// not crash on one either: the holes are *BadExprs.
		prog, diags := Check([]*File{file})
		noInternal(t, diags)
		if parsed && (prog == nil) != diags.HasErrors() {
			t.Fatalf("Check: program %v with diagnostics %v", prog != nil, diags)
		}
	})
}

// noInternal fails on an internal error: a recovered panic.
func noInternal(t *testing.T, diags diag.List) {
	t.Helper()
	for _, d := range diags {
		if d.Code == CodeInternal {
			t.Fatalf("internal error: %s", d)
		}
	}
}
