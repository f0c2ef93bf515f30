package grimoire

import (
	"io/fs"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/genesis-toolchain/genesis/frontend"

	"github.com/genesis-toolchain/genesis/diag"
)

// FuzzParse checks that no source makes ParseFile, CheckSpell, Check or Sprint
// panic (the phases recover and report CodeInternal, which this target
// treats as a failure) or loop, that a spell that parses has a
// position on every node, and that a parse in chunks, when it succeeds,
// gives what the whole parse gives (chunks of 3 tokens). The seed corpus, every spell of the corpus copy
// and of the golden cases, runs in plain go test.
func FuzzParse(f *testing.F) {
	names, srcs := testSpells(f)
	for _, n := range names {
		f.Add(string(srcs[n]))
	}
	// Deep nesting of every recursive construct: just past the limit,
	// and shallow enough to check.
	for _, c := range nestingCases {
		f.Add(c.gen(MaxNesting + 1))
		f.Add(c.gen(20))
	}
	f.Fuzz(func(t *testing.T, src string) {
		s, diags := ParseFile("fuzz.spell", []byte(src))
		if s == nil {
			t.Fatal("ParseFile returned no spell")
		}
		noInternal(t, diags)
		_ = Sprint(s)
		if !diags.HasErrors() {
			Inspect(s, func(n Node) bool {
				if p := n.Pos(); p.File != "fuzz.spell" || p.Line < 1 || p.Col < 1 {
					t.Fatalf("%T has position %v", n, p)
				}
				return true
			})
		}
		// CheckSpell is not meant for a spell with syntax errors, but must not
		// crash on one either: the tree has holes.
		noInternal(t, CheckSpell(s))
		// The spell may import itself, or a missing file.
		_, diags = Check(frontend.Input{Files: []frontend.Source{{Name: "fuzz.spell", Data: []byte(src)}},
			Import: func(p string) ([]byte, error) {
				if p == "self.spell" {
					return []byte(src), nil
				}
				return nil, fs.ErrNotExist
			}})
		noInternal(t, diags)
		defer func(size int) { chunkTokens = size }(chunkTokens)
		chunkTokens = 3
		if s, ds, ok := parseChunked("fuzz.spell", []byte(src)); ok {
			if whole, chunked := parsed(parseWhole("fuzz.spell", []byte(src))), parsed(s, ds); whole != chunked {
				t.Fatalf("the parse in chunks differs from the whole parse:\n%s", cmp.Diff(whole, chunked))
			}
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
