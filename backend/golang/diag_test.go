package golang_test

import (
	"testing"

	"github.com/genesis-toolchain/genesis/backend/golang"
	"github.com/genesis-toolchain/genesis/diag"
	"github.com/genesis-toolchain/genesis/ir"
)

// TestInlineAssemblyIsReportedOnce: a program for the agent runtime with
// several asm blocks gets one diagnostic for the cause (the target), at
// the first block, counting the others; not one per block.
func TestInlineAssemblyIsReportedOnce(t *testing.T) {
	const src = `func @main() {
  asm "NOP" @p.gen:2:3
  asm "NOP" @p.gen:3:3
  asm "NOP" @p.gen:4:3
  return
}
`
	m, diags := ir.Parse("p.ir", []byte(src))
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	_, diags = golang.Generate(m, golang.Options{Source: "p.gen"})
	want := diag.List{{Pos: diag.Pos{File: "p.gen", Line: 2, Col: 3}, Severity: diag.Error, Code: "0x0802",
		Msg: "inline assembly runs only on the Forge Machine (--target forge) (the program has 3 asm blocks; the first is here)"}}
	if len(diags) != 1 || diags[0] != want[0] {
		t.Errorf("diagnostics:\n%s\nwant:\n%s", diags, want)
	}
}
