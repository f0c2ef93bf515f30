package forgegen_test

import (
	"path/filepath"
	"testing"

	"golang.org/x/tools/txtar"

	"github.com/genesis-toolchain/genesis/backend/forgegen"
	"github.com/genesis-toolchain/genesis/ir"
)

// TestTextIsProgram checks, on every case of the backend's golden suite
// (tests/backend), that the assembly text --emit asm prints assembles to
// the very program the backend builds in memory, inline assembly and
// data included.
func TestTextIsProgram(t *testing.T) {
	files, err := filepath.Glob("../../tests/backend/*.txtar")
	if err != nil || len(files) == 0 {
		t.Fatalf("no cases in tests/backend: %v", err)
	}
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			a, err := txtar.ParseFile(file)
			if err != nil {
				t.Fatal(err)
			}
			var src []byte
			for _, f := range a.Files {
				if f.Name == "in.ir" {
					src = f.Data
				}
			}
			m, diags := ir.Parse("in.ir", src)
			if diags.HasErrors() || ir.Verify(m).HasErrors() {
				t.Skip("not a valid module")
			}
			text, p, diags := forgegen.Build(m, "out.fasm")
			if diags.HasErrors() {
				return // an error case: no program
			}
			checkTextIsProgram(t, text, p)
			if again, _ := forgegen.Compile(m); again != text {
				t.Errorf("Compile's text differs from Build's")
			}
		})
	}
}
