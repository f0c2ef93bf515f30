package vvm

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/tools/txtar"
)

// chunkSources returns VVM sources to parse both ways: the corpus, the
// programs of the tests' txtar files (those with errors too), and
// constructs that continue at column 0 or span lines.
func chunkSources(t *testing.T) map[string][]byte {
	srcs := map[string][]byte{
		"layout": []byte(`input topic: "what" = "x"
"""
a string
at column 0
"""
x = [1,
2,
  3]
# a comment at column 0
if x:
  y = 1
elif topic:
  y = 2
else:
  y = 3
try:
  z = @a ` + "`t`" + `
except as e:
  z = 0
finally:
  w = 1
def f(a):
  return a

  # indented comment after a blank line
g = f(1)
export g
`),
		"late input": []byte("x = 1\ninput y: \"late\"\nexport x\n"),
		"warning":    []byte("x = 1\ny = 2\nexport y\n"),
	}
	files, _ := filepath.Glob("../../tests/vvm/corpus/*.vvm")
	for _, name := range files {
		src, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		srcs[name] = src
	}
	arcs, _ := filepath.Glob("../../tests/vvm/*/*.txtar")
	for _, name := range arcs {
		a, err := txtar.ParseFile(name)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range a.Files {
			if strings.HasSuffix(f.Name, ".vvm") {
				srcs[name+"/"+f.Name] = f.Data
			}
		}
	}
	return srcs
}

// TestChunkedParseIsTheSame parses every source whole and chunk by chunk
// (a statement a chunk) and checks that the trees, with their positions,
// and the diagnostics are the same.
func TestChunkedParseIsTheSame(t *testing.T) {
	chunked := 0
	for name, src := range chunkSources(t) {
		var rw, rc reporter
		whole, _ := parseFileChunked("t.vvm", src, &rw, math.MaxInt, chunkTokens, nil)
		text := strings.TrimPrefix(string(src), "\uFEFF")
		b := &builder{r: &reporter{}, file: "t.vvm"}
		if _, ok := parseChunks(text, src, b, 0, 1, func([]Stmt) {}); ok {
			chunked++
		}
		parts, _ := parseFileChunked("t.vvm", src, &rc, 0, 1, nil)
		if w, c := Sprint(whole), Sprint(parts); w != c {
			t.Errorf("%s: whole:\n%s\nchunked:\n%s", name, w, c)
		}
		if w, c := rw.sorted().Error(), rc.sorted().Error(); w != c {
			t.Errorf("%s: whole:\n%s\nchunked:\n%s", name, w, c)
		}
	}
	t.Logf("%d sources, %d parsed chunk by chunk", len(chunkSources(t)), chunked)
	if chunked < 20 {
		t.Errorf("only %d sources were parsed chunk by chunk", chunked)
	}
}
