package format

import (
	"errors"
	"strings"
	"testing"

	"github.com/genesis-toolchain/genesis/diag"
	"github.com/genesis-toolchain/genesis/internal/golden"
)

// TestGoldenGenesisVVM formats the source section of each case of
// testdata/gen_*.txtar and vvm_*.txtar (the one section named as a file:
// a.gen, a.vvm): out/formatted is the result, which formatting again
// must leave unchanged, or out/errors the diagnostics of a file fmt
// refuses. Run with -update to rewrite them.
func TestGoldenGenesisVVM(t *testing.T) {
	golden.Run(t, "testdata/gen_*.txtar", goldenCase)
	golden.Run(t, "testdata/vvm_*.txtar", goldenCase)
}

// goldenCase runs one case of TestGoldenGenesisVVM.
func goldenCase(t *testing.T, c *golden.Case) {
	var name string
	var src []byte
	for _, f := range c.Archive.Files {
		if !strings.Contains(f.Name, "/") {
			if name != "" {
				t.Fatalf("two source sections: %s and %s", name, f.Name)
			}
			name, src = f.Name, f.Data
		}
	}
	if name == "" {
		t.Fatal("no source section")
	}
	out, err := File(name, src)
	var se *SyntaxError
	switch {
	case errors.As(err, &se):
		c.Check("out/errors", se.Diags.Render(diag.Sources{name: src}))
		return
	case err != nil:
		t.Fatal(err)
	}
	c.Check("out/formatted", string(out))
	again, err := File(name, out)
	if err != nil {
		t.Fatalf("formatting the output: %v", err)
	}
	if string(again) != string(out) {
		t.Errorf("formatting the output changes it:\n%s", again)
	}
}
