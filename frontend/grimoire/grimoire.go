// Package grimoire is the frontend of Grimoire spells (.spell), the DeFi
// strategy language of reference/grimoire/grimoire-dsl-spec.md: parsing
// and static checks. docs/grimoire.md is the language as implemented,
// with the table of diagnostics; docs/decisions.md ("Grimoire") records
// every decision the specification left open.
//
// Both syntaxes are read: the indentation syntax of the specification and
// the later brace syntax (`spell Name { … }`), by one ANTLR grammar
// (parser/Grimoire.g4) behind an indentation-aware token source
// (tokens.go). They give the same tree.
//
// The phases communicate only through the tree of ast.go:
//
//	ParseFile   source → *Spell (syntax)
//	CheckSpell  *Spell → diagnostics; resolves names, venues, skills,
//	            advisors, blocks and units, annotating the tree in place
//	Check       a file and the files it imports, parsed and checked: the
//	            entry point of a compiler (with Compile, which lowers)
//
// Diagnostics of every phase are diag.Diagnostics with the codes below.
package grimoire

import (
	"fmt"

	"github.com/genesis-toolchain/genesis/diag"
)

// Diagnostic codes. G0xx are found by ParseFile, G1xx by CheckSpell and Check.
// docs/grimoire.md has the table with an example of each.
const (
	CodeSyntax      = "G001" // unexpected or missing token
	CodeLexical     = "G002" // malformed literal or character: unterminated string, bad escape, malformed number, invalid UTF-8
	CodeIndent      = "G003" // a dedent to a depth no enclosing block has
	CodeUnknownWord = "G004" // a section, trigger, stage, option or option value the language does not have
	CodeMisplaced   = "G005" // a construct where it cannot be: a value of the wrong shape, `with` on a non-action, ...

	CodeDuplicate    = "G101" // a section, declaration, key, argument, trigger or branch defined twice
	CodeUndefined    = "G102" // a name that is not defined where it is used
	CodeUnknownField = "G103" // params.x, limits.x, limit_x or state.<scope>.x naming nothing declared
	CodeUnknownVenue = "G104" // a venue that is neither an alias, an adapter named in venues, nor a skill
	CodeUnknownAsset = "G105" // an asset symbol not declared in assets (warning)
	CodeUnknownSkill = "G106" // `using` or a venue naming no skill
	CodeUnknownAdv   = "G107" // an advisor that is not declared
	CodeUnknownBlock = "G108" // `do` naming no block or import
	CodeArity        = "G109" // wrong number of arguments to a block or built-in function
	CodeUnknownFunc  = "G110" // a call of a function that is not built in
	CodeBadUnit      = "G111" // a unit that is not an asset with decimals or bps, or an amount finer than the asset's decimals
	CodeBadValue     = "G112" // a value of the wrong kind or out of range
	CodeUnknownKey   = "G113" // metadata, option or constraint the language does not define (warning)
	CodeMissing      = "G114" // a required part is missing
	CodeAssignDecl   = "G115" // an assignment to a name that is not a variable
	CodeAutoVenue    = "G116" // an action's venue is picked from a skill's adapters (warning)
	CodeImport       = "G117" // an import that cannot be read, or a cycle of imports
	CodeInternal     = "G999" // a bug of this compiler
)

// reporter collects the diagnostics of one phase.
type reporter struct {
	diags diag.List
}

func (r *reporter) errorf(pos diag.Pos, code, format string, args ...any) {
	r.diags.Errorf(pos, code, format, args...)
}

func (r *reporter) warnf(pos diag.Pos, code, format string, args ...any) {
	r.diags.Add(pos, diag.Warning, code, format, args...)
}

// recoverPhase ends a phase: it turns a panic into a CodeInternal
// diagnostic, so that no input crashes the compiler. It must be called
// directly by a deferred call.
func (r *reporter) recoverPhase(file string) {
	if p := recover(); p != nil {
		r.diags.Errorf(diag.Pos{File: file}, CodeInternal, "internal compiler error: %v", p)
	}
}

// sorted returns the diagnostics in source order.
func (r *reporter) sorted() diag.List {
	r.diags.Sort()
	return r.diags
}

// quote writes a name as messages show it.
func quote(s string) string { return "'" + s + "'" }

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}
