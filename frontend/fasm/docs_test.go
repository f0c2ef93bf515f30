package fasm

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/genesis-toolchain/genesis/forge/asm"
	"github.com/genesis-toolchain/genesis/forge/bytecode"
)

// docsRow is the row of docs/fasm.md's instruction table for info, up to
// the free-text meaning column: operand forms, opcode, fields and cost all
// come from the tables, so the reference cannot drift from them.
func docsRow(info bytecode.Info) string {
	form := info.Name
	if n := asm.SlotNames(info.Format); n != "" {
		form += " " + n
	}
	var fields [4]string
	for _, s := range asm.Slots(info.Format) {
		fields[s.Field] = s.Name
	}
	var enc []string
	for i, name := range []string{"a", "b", "c", "imm"} {
		if fields[i] == "" {
			continue
		}
		if i == int(asm.FieldImm) && info.Format == bytecode.FmtLI {
			name = "word"
		}
		enc = append(enc, name+"="+fields[i])
	}
	if len(enc) == 0 {
		enc = []string{"—"}
	}
	return fmt.Sprintf("| `%s` | 0x%02x | %s | %d |", form, uint8(info.Op), strings.Join(enc, " "), info.Cost)
}

// TestDocsListEveryInstruction checks docs/fasm.md against the opcode
// table.
func TestDocsListEveryInstruction(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "fasm.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, info := range bytecode.Instructions() {
		if row := docsRow(info); !strings.Contains(string(doc), "\n"+row) {
			t.Errorf("docs/fasm.md lacks the row\n%s", row)
		}
	}
}
