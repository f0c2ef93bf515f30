package grimoire

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/genesis-toolchain/genesis/internal/golden"
)

// The test sources: the corpus copy and the golden cases of
// tests/grimoire.
var (
	corpusDir   = filepath.Join("..", "..", "tests", "grimoire", "corpus")
	goldenCases = []string{
		filepath.Join("..", "..", "tests", "grimoire", "parse", "*.txtar"),
		filepath.Join("..", "..", "tests", "grimoire", "errors", "*.txtar"),
	}
)

// testSpells returns the source of every spell of the corpus copy and of
// the golden cases, by a name unique among them.
func testSpells(tb testing.TB) (names []string, srcs map[string][]byte) {
	srcs = map[string][]byte{}
	err := filepath.WalkDir(corpusDir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || filepath.Ext(p) != ".spell" {
			return err
		}
		data, err := os.ReadFile(p)
		srcs[filepath.ToSlash(p)] = data
		return err
	})
	if err != nil {
		tb.Fatal(err)
	}
	for _, pattern := range goldenCases {
		for _, path := range golden.Files(tb, pattern) {
			c, err := golden.Load(path)
			if err != nil {
				tb.Fatal(err)
			}
			for _, f := range c.Archive.Files {
				if strings.HasSuffix(f.Name, ".spell") {
					srcs[filepath.ToSlash(path)+"/"+f.Name] = f.Data
				}
			}
		}
	}
	for n := range srcs {
		names = append(names, n)
	}
	slices.Sort(names)
	return names, srcs
}

// TestPositions checks the promise of ast.go: every node of a spell that
// parses has a position, in its file.
func TestPositions(t *testing.T) {
	names, srcs := testSpells(t)
	checked := 0
	for _, name := range names {
		s, diags := ParseFile(name, srcs[name])
		if diags.HasErrors() {
			continue
		}
		checked++
		lines := strings.Count(string(srcs[name]), "\n") + 1
		Inspect(s, func(n Node) bool {
			p := n.Pos()
			if p.File != name || p.Line < 1 || p.Line > lines || p.Col < 1 {
				t.Errorf("%s: %T has position %v", name, n, p)
			}
			return true
		})
	}
	if checked < 150 {
		t.Errorf("only %d spells parse", checked)
	}
}

// TestPrintDeterministic checks that printing a spell twice, and parsing
// it twice, gives the same text.
func TestPrintDeterministic(t *testing.T) {
	names, srcs := testSpells(t)
	for _, name := range names {
		a, _ := ParseFile(name, srcs[name])
		b, _ := ParseFile(name, srcs[name])
		if Sprint(a) != Sprint(b) || Sprint(a) != Sprint(a) {
			t.Errorf("%s: printing is not deterministic", name)
		}
	}
}

// TestCRLF checks that a spell with Windows line endings reads as the
// same spell.
func TestCRLF(t *testing.T) {
	names, srcs := testSpells(t)
	for _, name := range names {
		src := srcs[name]
		a, da := ParseFile(name, src)
		b, db := ParseFile(name, bytes.ReplaceAll(src, []byte("\n"), []byte("\r\n")))
		if da.HasErrors() != db.HasErrors() || Sprint(a) != Sprint(b) {
			t.Errorf("%s: CRLF line endings read differently:\n%s\n%s", name, da, db)
		}
	}
}

// TestConcurrentParse parses every test spell from several goroutines at
// once, as ParseFile promises it may be (run with -race to see it hold),
// and checks each gives what it gives alone.
func TestConcurrentParse(t *testing.T) {
	names, srcs := testSpells(t)
	want := map[string]string{}
	for _, n := range names {
		s, _ := ParseFile(n, srcs[n])
		want[n] = Sprint(s)
	}
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for _, n := range names {
				if s, _ := ParseFile(n, srcs[n]); Sprint(s) != want[n] {
					t.Errorf("%s: parsed differently", n)
				}
			}
		}()
	}
	wg.Wait()
}
