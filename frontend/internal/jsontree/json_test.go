package jsontree

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/genesis-toolchain/genesis/diag"
)

// TestPlainRunePos checks that a string read without its table of
// columns (a plain one) gives every code point, and the index past the
// end, the position the table gives.
func TestPlainRunePos(t *testing.T) {
	src := []byte("{\"a\": \"abc\", \"é\": \"héllo → wörld\", \"e\": \"x\\ny\\u00e9z\",\r\n  \"s\": [\"\", \"\\\"q\\\"\", \"tab\\tend\", \"日本語\"],\n\"k\": \"\\ud83d\\ude00 and \\ud800!\"}")
	positions := func() [][]diag.Pos {
		n, ds := ParseJSON("f.json", src, Codes{Syntax: "S", DupKey: "D", Value: "V"})
		if n == nil {
			t.Fatal(ds)
		}
		var out [][]diag.Pos
		var walk func(n *Node)
		walk = func(n *Node) {
			if n.Kind == String {
				var ps []diag.Pos
				for i := -1; i <= len([]rune(n.Text))+1; i++ {
					ps = append(ps, n.RunePos(i))
				}
				out = append(out, ps)
			}
			for _, it := range n.Items {
				walk(it)
			}
			for _, f := range n.Fields {
				walk(f.Value)
			}
		}
		walk(n)
		return out
	}
	plain := positions()
	keepColumns = true
	defer func() { keepColumns = false }()
	if d := cmp.Diff(positions(), plain); d != "" {
		t.Errorf("positions of code points, plain strings against the table of columns (-table +plain):\n%s", d)
	}
	if len(plain) != 8 {
		t.Errorf("%d strings read, want 8", len(plain))
	}
}
