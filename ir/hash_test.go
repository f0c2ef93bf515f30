package ir_test

import (
	"strings"
	"testing"

	"github.com/genesis-toolchain/genesis/ir"
)

// TestProgramHash checks that the program hash depends on the code and
// not on the directory the source was named with, and that computing it
// leaves the module's printed form as it was.
func TestProgramHash(t *testing.T) {
	const src = `func @main() -> dyn @DIR/x.vvm:1:1 {
  %s = const dyn "hi" @2:3
  return %s @3:3
}
`
	parse := func(src string) *ir.Module {
		t.Helper()
		m, diags := ir.Parse("in.ir", []byte(src))
		if diags.HasErrors() {
			t.Fatal(diags)
		}
		return m
	}
	a := parse(strings.ReplaceAll(src, "DIR/", "a/b/"))
	b := parse(strings.ReplaceAll(src, "DIR/", "/elsewhere/"))
	c := parse(strings.ReplaceAll(strings.ReplaceAll(src, "DIR/", "a/b/"), `"hi"`, `"ho"`))
	printed := ir.Print(a)
	ha := ir.ProgramHash(a)
	if len(ha) != 64 || strings.Trim(ha, "0123456789abcdef") != "" {
		t.Errorf("hash %q is not hex sha256", ha)
	}
	if hb := ir.ProgramHash(b); hb != ha {
		t.Errorf("the hash depends on the source's directory: %s and %s", ha, hb)
	}
	if hc := ir.ProgramHash(c); hc == ha {
		t.Errorf("two programs with different constants have one hash %s", ha)
	}
	if again := ir.Print(a); again != printed || !strings.Contains(again, "a/b/x.vvm") {
		t.Errorf("ProgramHash changed the module's printed form:\n%s", again)
	}
}
