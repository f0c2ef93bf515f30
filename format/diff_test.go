package format

import (
	"fmt"
	"math/rand"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// Diff writes what diff -u writes: headers, hunk ranges, three lines of
// context, hunks merged when their contexts touch.
func TestUnifiedDiff(t *testing.T) {
	a := "1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n11\n12\n13\n14\n15\n"
	b := "1\n2\nthree\n4\n5\n6\n7\n8\n9\n10\n11\n12\n14\n15\n16\n"
	want := `--- f.gen.orig
+++ f.gen
@@ -1,6 +1,6 @@
 1
 2
-3
+three
 4
 5
 6
@@ -10,6 +10,6 @@
 10
 11
 12
-13
 14
 15
+16
`
	if d := cmp.Diff(want, Diff("f.gen.orig", "f.gen", []byte(a), []byte(b))); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}
	if got := Diff("a", "b", []byte(a), []byte(a)); got != "" {
		t.Errorf("equal texts: %q", got)
	}
	want = "--- a\n+++ b\n@@ -1 +1 @@\n-x\n\\ No newline at end of file\n+x\n"
	if d := cmp.Diff(want, Diff("a", "b", []byte("x"), []byte("x\n"))); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}
	want = "--- a\n+++ b\n@@ -0,0 +1 @@\n+x\n"
	if d := cmp.Diff(want, Diff("a", "b", nil, []byte("x\n"))); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}
}

// The edit script of random texts is a shortest one that turns the old
// text into the new: applying its kept and inserted lines gives the new
// text, its kept and deleted ones the old.
func TestDiffScript(t *testing.T) {
	r := rand.New(rand.NewSource(1))
	for n := 0; n < 300; n++ {
		x := randomDiffLines(r)
		y := randomDiffLines(r)
		ops := diffScript(x, y)
		var gotX, gotY []string
		for _, op := range ops {
			if op.kind != '+' {
				gotX = append(gotX, op.text)
			}
			if op.kind != '-' {
				gotY = append(gotY, op.text)
			}
		}
		if strings.Join(gotX, "") != strings.Join(x, "") || strings.Join(gotY, "") != strings.Join(y, "") {
			t.Fatalf("diffEdit script of %q -> %q is %v", x, y, ops)
		}
		kept := 0
		for _, op := range ops {
			if op.kind == ' ' {
				kept++
			}
		}
		if want := longestCommonLines(x, y); kept != want {
			t.Fatalf("diffEdit script of %q -> %q keeps %d lines, the longest common subsequence has %d", x, y, kept, want)
		}
	}
}

// Past diffMaxEdits, the differing middle is deleted and inserted whole:
// still a script from the old text to the new.
func TestDiffScriptBounded(t *testing.T) {
	var x, y []string
	for i := 0; i < diffMaxEdits; i++ {
		x = append(x, fmt.Sprintf("x%d\n", i))
		y = append(y, fmt.Sprintf("y%d\n", i))
	}
	x = append([]string{"same\n"}, append(x, "end\n")...)
	y = append([]string{"same\n"}, append(y, "end\n")...)
	ops := diffScript(x, y)
	if len(ops) != 2+2*diffMaxEdits || ops[0].kind != ' ' || ops[1].kind != '-' || ops[len(ops)-1].kind != ' ' || ops[len(ops)-2].kind != '+' {
		t.Fatalf("got %d edits, first %v, last %v", len(ops), ops[:2], ops[len(ops)-2:])
	}
}

func randomDiffLines(r *rand.Rand) []string {
	lines := make([]string, r.Intn(12))
	for i := range lines {
		lines[i] = string(rune('a'+r.Intn(3))) + "\n"
	}
	return lines
}

func longestCommonLines(x, y []string) int {
	dp := make([][]int, len(x)+1)
	for i := range dp {
		dp[i] = make([]int, len(y)+1)
	}
	for i := len(x) - 1; i >= 0; i-- {
		for j := len(y) - 1; j >= 0; j-- {
			if x[i] == y[j] {
				dp[i][j] = dp[i+1][j+1] + 1
			} else {
				dp[i][j] = max(dp[i+1][j], dp[i][j+1])
			}
		}
	}
	return dp[0][0]
}
