// Package fasm implements Forge assembly (.fasm), the textual form of Forge
// Machine programs: Assemble turns source text into a bytecode.Program and
// Disassemble turns a program back into source. docs/fasm.md is the
// language reference.
//
// The two are exact inverses on programs: the disassembly of any valid
// FRGP file assembles to the identical file. So every part of the file has
// a spelling, including what a compiler rarely writes (symbols that are not
// at an instruction, overlapping data relocations, names that are not
// identifiers).
//
// Mnemonics and operand layouts come from the opcode table of
// forge/bytecode; this package adds only the assembly syntax.
package fasm

import (
	"fmt"
	"math"

	"github.com/genesis-toolchain/genesis/diag"
	"github.com/genesis-toolchain/genesis/forge/asm"
	"github.com/genesis-toolchain/genesis/forge/bytecode"
)

// Diagnostic codes. They are stable, and documented in docs/fasm.md.
const (
	codeTooMany   = "A000" // a note: the list of errors was cut
	codeSyntax    = "A001" // malformed line, token or number; bad UTF-8
	codeMnemonic  = "A002" // unknown instruction
	codeOperand   = "A003" // wrong number or kind of operands
	codeRange     = "A004" // a value, register or size out of range
	codeUndefined = "A005" // a name that is nowhere defined
	codeDuplicate = "A006" // a name, entry or relocation given twice
	codeDirective = "A007" // bad directive, escape or name; wrong section
	codeAddress   = "A008" // an address that cannot be what it must be
)

// maxErrors is how many errors Assemble reports at most: past that, the
// rest is mostly noise. It is the cap of every phase and language.
const maxErrors = diag.MaxErrors

func init() { asm.RegisterSyntax(assembleInto) }

// assembleInto reads src into b: the syntax asm.Builder.Source reads.
func assembleInto(b *asm.Builder, file string, src []byte) {
	a := &assembler{file: file, b: b}
	var perr diag.List
	lines := parse(file, src, &perr)
	b.Add(perr...)
	a.read(lines)
}

// Assemble assembles the Forge assembly src, read from the named file.
// When the returned list holds no error, the program is canonical (its
// tables sorted) and passes bytecode.Program.Verify; otherwise the program
// is nil and the list holds every error found, sorted by position, at most
// diag.MaxErrors of them. Assemble never panics, whatever src holds, and
// may be called from several goroutines at once.
func Assemble(file string, src []byte) (*bytecode.Program, diag.List) {
	return assemble(file, src, math.MaxUint32)
}

// assemble is Assemble with a limit on the size of the data section: the
// format allows 4 GiB, which a fuzzer should not allocate.
func assemble(file string, src []byte, maxData uint64) (*bytecode.Program, diag.List) {
	b := asm.New(file)
	b.SetMaxData(maxData)
	assembleInto(b, file, src)
	p, diags := b.Program()
	if len(diags) > maxErrors {
		diags = append(diags[:maxErrors:maxErrors], diag.Diagnostic{
			Pos:      diag.Pos{File: file},
			Severity: diag.Note,
			Code:     codeTooMany,
			Msg:      fmt.Sprintf("too many errors; stopping after %d", maxErrors),
		})
	}
	if diags.HasErrors() {
		return nil, diags
	}
	return p, diags
}

// Disassemble returns p as Forge assembly: asm.Disassemble, for the
// callers that read and write the text form.
func Disassemble(p *bytecode.Program) string { return asm.Disassemble(p) }
