package ir_test

import (
	"path/filepath"
	"testing"

	"github.com/genesis-toolchain/genesis/internal/golden"
	"github.com/genesis-toolchain/genesis/ir"
)

// FuzzParseIR checks that Parse never panics, and that whatever parses
// prints to text that parses and prints identically; Verify must not
// panic on it either.
func FuzzParseIR(f *testing.F) {
	for _, path := range golden.Files(f, filepath.Join("..", "tests", "ir", "*.txtar")) {
		c, err := golden.Load(path)
		if err != nil {
			f.Fatal(err)
		}
		src, _ := c.File("in.ir")
		f.Add(src)
	}
	// Nesting just past the limit, and shallow.
	f.Add(nestedIfs(1001))
	f.Add(nestedIfs(20))
	f.Add(nestedFuncType(1001))
	f.Add(nestedFuncType(20))
	f.Fuzz(func(t *testing.T, src string) {
		m, diags := ir.Parse("fuzz.ir", []byte(src))
		if diags.HasErrors() {
			if m != nil {
				t.Fatal("a module along with errors")
			}
			return
		}
		ir.Verify(m)
		text := ir.Print(m)
		m2, diags := ir.Parse("printed.ir", []byte(text))
		if diags.HasErrors() {
			t.Fatalf("the printed form does not parse: %v\n%s", diags, text)
		}
		if again := ir.Print(m2); again != text {
			t.Fatalf("print → parse → print differs:\n%s\n---\n%s", text, again)
		}
	})
}
