package fasm

import (
	"github.com/genesis-toolchain/genesis/diag"
	"github.com/genesis-toolchain/genesis/forge/bytecode"
	"github.com/genesis-toolchain/genesis/frontend"
)

// Language is Forge assembly's entry in the driver's registry: the one
// language that builds a Forge program directly, without the IR, so it
// has no --emit ir and no target but forge.
var Language = &frontend.Language{
	Name:       "Forge assembly",
	Programs:   "Forge assembly programs",
	Extensions: []string{".fasm"},
	OneFile:    "several .fasm files: assemble each one and combine them with forge link",
	Check: func(in frontend.Input) (any, diag.List) {
		src := in.Entry()
		return Assemble(src.Name, src.Data)
	},
	Assembled: func(checked any) *bytecode.Program {
		return checked.(*bytecode.Program)
	},
}
