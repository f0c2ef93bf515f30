package asm

import (
	"sync/atomic"

	"github.com/genesis-toolchain/genesis/diag"
)

// A Syntax reads src, assembly text read from file, into b at its current
// place: each line becomes Builder calls, and what is wrong with the text
// is reported to b. frontend/fasm, the Forge assembly syntax, registers
// one; this package, below every syntax, only calls it.
type Syntax func(b *Builder, file string, src []byte)

var syntax atomic.Pointer[Syntax]

// RegisterSyntax makes s the syntax Source reads. frontend/fasm calls it
// when it is initialized, so that a program that links it (the compiler
// does) can assemble text into a Builder without this package, or a
// backend that emits inline assembly, importing a frontend.
func RegisterSyntax(s Syntax) { syntax.Store(&s) }

// Source reads src, Forge assembly from file, into b at its current place
// (the code section): inline assembly of a compiled program, or a whole
// .fasm file. Errors in the text are reported to b. Without a registered
// syntax it reports that, and returns false.
func (b *Builder) Source(file string, src []byte) bool {
	s := syntax.Load()
	if s == nil {
		b.diags.Errorf(diag.Pos{File: file}, CodeInternal, "no assembly syntax is linked in to read %s (import frontend/fasm)", file)
		return false
	}
	(*s)(b, file, src)
	return true
}
