// Package genesis is the frontend of Genesis, the seed language of
// reference/kingdom/08-GENESIS.md: parsing, name resolution and type
// checking. docs/genesis.md is the language as implemented, with every
// decision the specification left open.
//
// The phases follow one another and communicate only through the tree of
// ast.go:
//
//	Parse   source → *File (syntax; ANTLR grammar in parser/Genesis.g4)
//	Check   []*File → *Program (resolve names, then type-check), annotating
//	        the tree in place: every Expr gets its Type, every Ident the
//	        Object it refers to, every TypeExpr the Type it denotes.
//
// Lowering to IR reads a Program; it never sees source text or a parse
// tree. Diagnostics of every phase are diag.Diagnostics with the codes
// below (the error classes of requirements-GENESIS.md §10).
package genesis

import (
	"fmt"

	"github.com/genesis-toolchain/genesis/diag"
)

// Diagnostic codes: the error classes of requirements-GENESIS.md §10.
const (
	CodeSyntax   = "0x0800" // lexical or syntax error
	CodeType     = "0x0801" // type error (and every other semantic rule)
	CodeTooMany  = "0x0803" // the error cap was reached
	CodeAsm      = "0x0804" // invalid inline assembly
	CodeSymbol   = "0x0805" // undefined or duplicate symbol
	CodeMatch    = "0x0806" // non-exhaustive match (no `_` arm)
	CodeInternal = "0x08FF" // a bug of this compiler
)

// MaxErrors is how many errors one compilation reports before it stops
// with a CodeTooMany note (requirements-GENESIS.md §7: "reports up to 20
// errors"): the cap of every phase and language, diag.MaxErrors. The
// count is the compilation's, not a file's: ParseFiles carries it from
// file to file, and a later phase runs only when the phases before it
// found no error.
const MaxErrors = diag.MaxErrors

// reporter collects the diagnostics of one phase (or of one file's parse),
// counting the errors from n, the number reported before it; the error
// after the MaxErrors-th is replaced by a CodeTooMany note, which
// sets n to MaxErrors+1 and ends the phase by panicking with bailout,
// which the phase's entry point recovers.
type reporter struct {
	diags diag.List
	n     int
}

// bailout is the panic value that ends a phase at the error cap.
type bailout struct{}

func (r *reporter) errorf(pos diag.Pos, code, format string, args ...any) {
	if r.n >= MaxErrors {
		// A note, not a 21st error: the compilation reports up to
		// MaxErrors errors, and says it stopped.
		r.diags.Add(pos, diag.Note, CodeTooMany, "too many errors; stopping after %d", MaxErrors)
		r.n = MaxErrors + 1
		panic(bailout{})
	}
	r.n++
	r.diags.Errorf(pos, code, format, args...)
}

// recoverPhase ends a phase: it stops a bailout, and turns any other panic
// into a CodeInternal diagnostic, so that no input crashes the compiler.
// It must be called directly by a deferred call.
func (r *reporter) recoverPhase(file string) {
	switch p := recover().(type) {
	case nil, bailout:
	default:
		r.diags.Errorf(diag.Pos{File: file}, CodeInternal, "internal compiler error: %v", p)
	}
}

// sortedDiags returns the diagnostics in source order, the CodeTooMany
// one, if any, last.
func (r *reporter) sortedDiags() diag.List {
	n := len(r.diags)
	if n > 0 && r.diags[n-1].Code == CodeTooMany {
		r.diags[:n-1].Sort()
	} else {
		r.diags.Sort()
	}
	return r.diags
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}
