package genesis

import (
	"github.com/genesis-toolchain/genesis/diag"
	"github.com/genesis-toolchain/genesis/frontend"
	"github.com/genesis-toolchain/genesis/ir"
)

// Language is Genesis's entry in the driver's registry. A program is
// every .gen file given, together; its build's lowering consumes the
// checked bodies (LowerConsuming), and a check holds only its
// declarations and a chunk of bodies at a time (CheckHolding).
var Language = &frontend.Language{
	Name:       "Genesis",
	Programs:   "Genesis programs",
	Extensions: []string{".gen"},
	Standalone: true,
	LargeInput: true,
	Check: func(in frontend.Input) (any, diag.List) {
		return CheckFiles(in)
	},
	CheckLowering: func(checked any) diag.List {
		return CheckLowering(checked.(*Program))
	},
	CheckHolding: func(in frontend.Input, atPeak func()) diag.List {
		return CheckHolding(in.Files, atPeak)
	},
	Lower: func(checked any) (*ir.Module, diag.List) {
		// Nothing reads the checked bodies after lowering: each may die
		// as soon as its IR is built.
		return LowerConsuming(checked.(*Program))
	},
}

// CheckFiles parses and checks the files of in, which together form one
// program: the checked program, nil after a syntax error, and every
// diagnostic. One error cap holds for all the files and phases (each
// phase runs only if those before it found no error).
func CheckFiles(in frontend.Input) (*Program, diag.List) {
	files, diags := ParseFiles(in.Files)
	if diags.HasErrors() {
		return nil, diags
	}
	prog, ds := Check(files)
	return prog, append(diags, ds...)
}
