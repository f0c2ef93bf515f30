package grimoire

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/genesis-toolchain/genesis/diag"
	"github.com/genesis-toolchain/genesis/internal/inputlimits"
)

// parsed is what a parse gives that a user can see: the tree as printed,
// every node's kind and position, and the diagnostics of the parse and
// of the check.
func parsed(s *Spell, ds diag.List) string {
	var b strings.Builder
	b.WriteString(Sprint(s))
	Inspect(s, func(n Node) bool {
		fmt.Fprintf(&b, "%T %v\n", n, n.Pos())
		return true
	})
	for _, d := range ds {
		fmt.Fprintf(&b, "parse: %v\n", d)
	}
	for _, d := range CheckSpell(s) {
		fmt.Fprintf(&b, "check: %v\n", d)
	}
	return b.String()
}

// TestParseChunkedIsWhole checks that ParseFile gives the same spell and
// the same diagnostics whether it parses the bodies of triggers in chunks
// or the file whole, a statement a chunk and a few statements a chunk,
// on every spell of the tests, spells made for the cutting (elif, else,
// catch, finally and pipelines after a line break, object literals over
// lines, several triggers, blocks, triggers of one statement, brace
// bodies), errors in chunks and in the skeleton, and ordinary code.
func TestParseChunkedIsWhole(t *testing.T) {
	names, srcs := testSpells(t)
	made := map[string]string{
		"cut.spell": `spell Cut
  params:
    limit: 10
  on manual:
    x = 1
    if x > 1:
      emit a(n=1)
    elif x < 0:
      emit b(n=2)
    else:
      emit c(n=3)
    try:
      y = {a: 1,
        b: 2}
    catch *:
      action: skip
    finally:
      emit done()
    z = [1, 2, 3] | filter:
      keep = item > 1
    | map:
      m = item * 2
    emit e(v=z)
  on hourly:
    emit h()
  block b1(a):
    emit inner(a=a)
    emit inner2(a=a)
  on daily: {
    emit d1()
    emit d2()
  }
  on condition params.limit > 2:
    emit c1()
    do b1(1)
    halt "done"
`,
		"errors.spell":          "spell E\n  on manual:\n    x = 1\n    y = (\n    emit a()\n  on hourly:\n    emit b()\n    emit c(\n",
		"builder.spell":         "spell B\n  on manual:\n    emit a(n=1)\n    x = 2 with foo=1\n    emit b(n=2)\n    y = 3 with bar=2\n  on hourly:\n    emit c(x=bps(1, 2))\n    emit d()\n",
		"unknown_trigger.spell": "spell U\n  on manual:\n    emit a()\n    emit b()\n  on nothing:\n    emit c()\n    emit d()\n",
		"skeleton_error.spell":  "spell S\n  on manual:\n    emit a()\n    emit b()\n  params limit\n",
		"on_left_margin.spell":  "spell M\non manual:\n  emit a()\n  emit b()\non hourly:\n  emit c()\n",
		"big.spell":             string(inputlimits.SpellProgram(20000)),
	}
	for n, src := range made {
		names = append(names, n)
		srcs[n] = []byte(src)
	}
	defer func(min, size int) { chunkedParseMin, chunkTokens = min, size }(chunkedParseMin, chunkTokens)
	chunkedParseMin = 0
	chunked := 0
	for _, size := range []int{1, 40} {
		chunkTokens = size
		for _, name := range names {
			src := srcs[name]
			whole := parsed(parseWhole(name, src))
			if s, ds, ok := parseChunked(name, src); ok {
				chunked++
				if d := cmp.Diff(whole, parsed(s, ds)); d != "" {
					t.Errorf("%s, chunks of %d tokens: chunked parse differs from the whole (-whole +chunked):\n%s", name, size, d)
				}
			}
			if d := cmp.Diff(whole, parsed(ParseFile(name, src))); d != "" {
				t.Errorf("%s, chunks of %d tokens: ParseFile differs from the whole parse (-whole +ParseFile):\n%s", name, size, d)
			}
		}
	}
	t.Logf("%d of %d parses in chunks", chunked, 2*len(names))
	for _, name := range []string{"cut.spell", "builder.spell", "on_left_margin.spell", "big.spell"} {
		if _, _, ok := parseChunked(name, srcs[name]); !ok {
			t.Errorf("%s was not parsed in chunks", name)
		}
	}
	for _, name := range []string{"errors.spell", "skeleton_error.spell", "unknown_trigger.spell"} {
		if _, _, ok := parseChunked(name, srcs[name]); ok {
			t.Errorf("%s, which has a syntax error or a trigger the builder drops, was parsed in chunks", name)
		}
	}
}
