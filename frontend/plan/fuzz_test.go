package plan

import (
	"github.com/genesis-toolchain/genesis/frontend"
	"github.com/genesis-toolchain/genesis/frontend/internal/jsontree"

	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/genesis-toolchain/genesis/ir"
)

// seedPlans returns the plan sections of the golden suite (tests/plan)
// as fuzzing seeds.
func seedPlans(f *testing.F) [][]byte {
	var seeds [][]byte
	files, _ := filepath.Glob(filepath.Join("..", "..", "tests", "plan", "*.txtar"))
	for _, path := range files {
		data, err := os.ReadFile(path)
		if err != nil {
			continue
		}
		for _, part := range bytes.Split(data, []byte("\n-- ")) {
			name, body, ok := bytes.Cut(part, []byte(" --\n"))
			if ok && string(name) == "plan.json" {
				seeds = append(seeds, body)
			}
		}
	}
	if len(seeds) == 0 {
		f.Fatal("no seed plans under tests/plan")
	}
	return seeds
}

// FuzzCompile checks the loader, the checks and the lowering on any
// document: no panic (Compile reports one as CodeInternal, and a lowered
// module that does not verify too), a module exactly when there is no
// error, and Is agreeing with the decoded document when it is valid JSON
// (an object with "groups" and without "steps").
func FuzzCompile(f *testing.F) {
	for _, s := range seedPlans(f) {
		f.Add(s)
	}
	f.Add([]byte(`{"groups": [{"operations": ["a {$x}"], "dependencies": [0]}], "steps": []}`))
	// Plans at and past the documents' nesting limit (256 levels).
	f.Add([]byte(`{"groups": ` + strings.Repeat("[", 257) + strings.Repeat("]", 257) + `}`))
	f.Add([]byte(`{"groups": [{"id": "g", "operations": [` + strings.Repeat(`{"a": `, 250) + "1" + strings.Repeat("}", 250) + `]}]}`))
	f.Add([]byte(`{"groups": [{"id": "a", "operations": [{"operation": "q", "output": "x"}]}, {"operations": ["{$x}"], "dependencies": ["a", 0]}]}`))
	f.Fuzz(func(t *testing.T, src []byte) {
		m, diags := Compile(frontend.File("fuzz.json", src))
		for _, d := range diags {
			if d.Code == CodeInternal {
				t.Fatalf("internal error: %s\n%s", d, src)
			}
		}
		if (m != nil) == diags.HasErrors() {
			t.Fatalf("module %v with diagnostics %v", m != nil, diags)
		}
		if m != nil {
			if vs := ir.Verify(m); len(vs) > 0 {
				t.Fatalf("does not verify: %v", vs)
			}
		}
		is := HasPlanKeys(src)
		root, lds := jsontree.ParseJSON("fuzz.json", src, documentCodes)
		if root == nil || lds.HasErrors() {
			return
		}
		want := root.Kind == jsontree.Object && root.Get("groups") != nil && root.Get("steps") == nil
		if is != want {
			t.Fatalf("Is = %v, want %v for %s", is, want, src)
		}
	})
}
