package plan

import (
	"strings"
	"testing"

	"github.com/genesis-toolchain/genesis/frontend"
)

func TestIs(t *testing.T) {
	for _, c := range []struct {
		src  string
		want bool
	}{
		{`{"groups": []}`, true},
		{"\uFEFF \n {\"groups\": [{\"operations\": [\"x\"]}]}", true},
		{`{"name": "p", "groups": [`, true},            // a syntax error after the key
		{`{"groups": [{"operations": ["x"]},]}`, true}, // a trailing comma
		{`{"\u0067roups": []}`, true},                  // an escaped key
		{`{"description": "has \"groups\": in it", "groups": 1}`, true},
		{`{"steps": [], "groups": []}`, false}, // a nano-vm program with a stray key
		{`{"steps": [{"id": "a", "type": "llm", "prompt": "groups"}]}`, false},
		{`{"meta": {"groups": []}, "steps": []}`, false}, // a nested key
		{`{"name": "groups"}`, false},                    // a value, not a key
		{`[{"groups": []}]`, false},
		{`"groups"`, false},
		{``, false},
		{`{`, false},
		{`groups: []`, false}, // YAML
	} {
		if got := HasPlanKeys([]byte(c.src)); got != c.want {
			t.Errorf("HasPlanKeys(%q) = %v, want %v", c.src, got, c.want)
		}
	}
}

// TestOrder checks the schedule: a topological order, the smallest
// index first among the ready groups.
func TestOrder(t *testing.T) {
	src := `{"groups": [
		{"id": "e", "operations": ["x"], "dependencies": ["c", "d"]},
		{"id": "a", "operations": ["x"]},
		{"id": "d", "operations": ["x"], "dependencies": ["a"]},
		{"id": "c", "operations": ["x"], "dependencies": ["b"]},
		{"id": "b", "operations": ["x"]}
	]}`
	p, diags := Check(frontend.File("p.json", []byte(src)))
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	var ids []string
	for _, g := range p.Order {
		ids = append(ids, g.ID)
	}
	if got, want := strings.Join(ids, " "), "a d b c e"; got != want {
		t.Errorf("order %s, want %s", got, want)
	}
}

// TestCodes checks that the JSON decoder's diagnostics carry this
// package's codes.
func TestCodes(t *testing.T) {
	_, diags := Load("p.json", []byte(`{"groups": [], "groups": [], "x": }`))
	if len(diags) != 2 || diags[0].Code != CodeDupKey || diags[1].Code != CodeSyntax {
		t.Errorf("diagnostics %v, want %s then %s", diags, CodeDupKey, CodeSyntax)
	}
}

// TestCycleInTangle checks the message of a component with more groups
// than its shortest cycle through the first one.
func TestCycleInTangle(t *testing.T) {
	src := `{"groups": [
		{"id": "a", "operations": ["x"], "dependencies": ["b"]},
		{"id": "b", "operations": ["x"], "dependencies": ["a", "c"]},
		{"id": "c", "operations": ["x"], "dependencies": ["b"]}
	]}`
	_, diags := Check(frontend.File("p.json", []byte(src)))
	if len(diags) != 1 || diags[0].Code != CodeCycle ||
		!strings.Contains(diags[0].Msg, `"a" → "b" → "a"`) || !strings.Contains(diags[0].Msg, `"c", in the same tangle`) {
		t.Errorf("diagnostics %v", diags)
	}
}
