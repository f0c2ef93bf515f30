package memlayout

import (
	"strings"
	"testing"

	"github.com/genesis-toolchain/genesis/forge/bytecode"
	_ "github.com/genesis-toolchain/genesis/frontend/fasm" // the syntax DecodeAsm reads
)

func TestDecodeAsm(t *testing.T) {
	insts, err := DecodeAsm("LI r0, 5\nCALL hello\nSEND 0, r0, 1 ; a comment\nCALL hello")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, in := range insts {
		got = append(got, in.Op.String()+":"+in.Callee)
	}
	if want := "LI: CALL:hello SEND: CALL:hello"; strings.Join(got, " ") != want {
		t.Errorf("decoded %q, want %q", strings.Join(got, " "), want)
	}
	if insts[2].Op != bytecode.SEND || insts[2].C != 0 || insts[2].A != 0 || insts[2].Imm != 1 {
		t.Errorf("SEND decoded as %+v", insts[2].Inst)
	}
	for _, text := range []string{"RET", "JMP 0", "ADD r0, r0"} {
		if _, err := DecodeAsm(text); err == nil {
			t.Errorf("DecodeAsm(%q) succeeded, want an error", text)
		}
	}
}
