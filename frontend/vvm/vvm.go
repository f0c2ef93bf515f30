// Package vvm is the syntax and validation half of the VVM frontend:
// VVM programs (.vvm, ../shared/reference/vvm/spec.md and the additions
// of spec-newer.md) are parsed into a syntax tree, their modules loaded,
// every name resolved and the program validated with the specification's
// error and warning codes, before anything runs. docs/vvm.md is the
// language as implemented, with every decision the specification left
// open.
//
//	f, diags := vvm.ParseFile("main.vvm", src)   // syntax only
//	prog, diags := vvm.Check(in) // the program, validated (in: frontend.Input)
//
// The phases communicate only through the tree of ast.go:
//
//	ParseFile  source → *File (ANTLR grammar parser/VVM.g4, behind the
//	           indentation-aware token source of lex.go); the checks that
//	           need no other file: lexical errors, reserved words, case
//	           patterns, template placeholders, parallel options, …
//	Check      entry file → *Program: every module the entry imports,
//	           parsed and checked; names resolved (every Ident gets its
//	           Symbol, every def and lambda its Scope and Captures, calls
//	           their static target); the program-wide checks.
//	CheckHolding  Check's diagnostics without the program: a large
//	           module is checked in two passes, its top-level names
//	           first, then each statement, parsed again and dropped
//	           (twopass.go), so that memory stays a small multiple of
//	           the input.
//
// Diagnostics are diag.Diagnostics with the codes of spec.md §15.2 and
// spec-newer.md §15.2 (the Code constants below); warnings have Severity
// diag.Warning and do not stop a program.
package vvm

import (
	"github.com/genesis-toolchain/genesis/diag"
)

// Error codes (spec.md §15.2.2, spec-newer.md §15.2.2). A program with
// any of them must not run. The spec's codes that need a run or a cache
// (E094, E096–E099) and E112 (docs/vvm.md: `export @agent` is accepted,
// as in spec.md 0.0.4) are never produced.
const (
	CodeSyntax           = "E001" // unexpected token or invalid form
	CodeIndent           = "E002" // inconsistent indentation, tab in indentation, missing block
	CodeUnterminatedStr  = "E003" // unterminated string literal
	CodeUnterminatedTmpl = "E004" // unterminated template literal
	CodeEscape           = "E005" // unknown escape sequence in a string literal
	CodeReserved         = "E010" // reserved word used as a name
	CodeDupAgent         = "E020" // duplicate agent definition
	CodeDupFunc          = "E021" // duplicate function definition
	CodeSkillEmpty       = "E030" // skill import with an empty name or source
	CodeSkillDup         = "E031" // duplicate skill import in a module
	CodeSkillConflict    = "E032" // one skill imported from two sources
	CodeUnknownAgent     = "E040" // @name names no agent
	CodeAgentConfig      = "E041" // non-literal (or ill-shaped) agent configuration
	CodePattern          = "E050" // invalid case pattern
	CodeUnknownName      = "E051" // unknown name, in a placeholder or (docs/vvm.md) anywhere
	CodePlaceholder      = "E052" // malformed template placeholder
	CodeAssignIt         = "E060" // assignment to it
	CodeConstrainUnbound = "E070" // constrain of a name not bound before it
	CodeReturnOutside    = "E080" // return outside def
	CodeLoopControl      = "E081" // break or continue outside a loop
	CodeTryAlone         = "E082" // try without except or finally
	CodeModule           = "E090" // module or exported name not found, import cycle
	CodeFetch            = "E091" // a remote module could not be read
	CodeInsecureImport   = "E092" // http:// import
	CodeBadImportURL     = "E093" // import of an unsupported URL scheme
	CodeRemoteImport     = "E095" // remote import not available (the compiler does not fetch)
	CodeDupBranch        = "E100" // duplicate parallel branch name
	CodeJoin             = "E101" // invalid join
	CodeCountJoin        = "E102" // count without join="any"
	CodeCountRange       = "E103" // count outside 1..branches
	CodeOnFail           = "E104" // invalid on_fail
	CodeEmptyParallel    = "E105" // parallel block without branches
	CodeAnonBranch       = "E106" // parallel branch without a name
	CodeInputLate        = "E110" // input declared after an executable statement
	CodeDupInput         = "E111" // duplicate input
	CodeDupExport        = "E113" // duplicate export name
	CodeUnknownOutput    = "E114" // member of a module call result that the module does not export
	CodeInternal         = "E999" // a bug of this compiler (not a spec code)
)

// Warning codes (spec.md §15.2.3, spec-newer.md §15.2.3).
const (
	CodeSkillSource      = "W001" // unknown skill source format
	CodeSkillNotImported = "W010" // agent skill not imported in its module
	CodeEmptySkills      = "W011" // skills=[]
	CodeUnknownKey       = "W020" // unknown agent configuration key or call option
	CodeUnused           = "W030" // variable assigned and never used
	CodeExportUnbound    = "W031" // exported name never assigned
	CodeSharedMemory     = "W040" // parallel branches share an agent memory
	CodeSingleRace       = "W041" // join="first" with one branch
	CodeEmptyInputDoc    = "W050" // input without a description
	CodeInputsNoExports  = "W051" // module with inputs and no exports
)

// ParseFile parses one VVM source file and runs the checks that need no
// other file. It always returns a File; when the list holds errors, the
// File may have holes (*BadExpr) and must not be given to the lowering.
// The diagnostics are sorted by position. ParseFile never panics,
// whatever src holds (a panic would be a bug: it is reported as
// CodeInternal), and may be called from several goroutines at once.
func ParseFile(filename string, src []byte) (*File, diag.List) {
	r := &reporter{}
	f := parseFile(filename, src, r)
	return f, r.sorted()
}

// reporter collects the diagnostics of one phase. syntaxLines remembers
// the lines where a syntax error (lexical or of the parser) was reported:
// only the first error of a line is reported, the others being mostly its
// consequences. syntaxErrors counts them: a file with any has a tree
// with holes, which is not resolved.
type reporter struct {
	diags        diag.List
	syntaxLines  map[lineKey]bool
	syntaxErrors int
}

type lineKey struct {
	file string
	line int
}

func (r *reporter) errorf(pos diag.Pos, code, format string, args ...any) {
	r.diags.Add(pos, diag.Error, code, format, args...)
}

func (r *reporter) warnf(pos diag.Pos, code, format string, args ...any) {
	r.diags.Add(pos, diag.Warning, code, format, args...)
}

// syntaxErrorf reports a lexical or parser error unless one was reported
// on its line already.
func (r *reporter) syntaxErrorf(pos diag.Pos, code, format string, args ...any) {
	k := lineKey{pos.File, pos.Line}
	if r.syntaxLines[k] {
		return
	}
	if r.syntaxLines == nil {
		r.syntaxLines = map[lineKey]bool{}
	}
	r.syntaxLines[k] = true
	r.syntaxErrors++
	r.errorf(pos, code, format, args...)
}

// afterSyntaxError reports whether a syntax error was reported on pos's
// line.
func (r *reporter) afterSyntaxError(pos diag.Pos) bool {
	return r.syntaxLines[lineKey{pos.File, pos.Line}]
}

// recoverPhase turns a panic into a CodeInternal diagnostic, so that no
// input crashes the compiler. It must be called directly by a deferred
// call.
func (r *reporter) recoverPhase(file string) {
	if p := recover(); p != nil {
		r.errorf(diag.Pos{File: file}, CodeInternal, "internal compiler error: %v", p)
	}
}

// sorted returns the diagnostics in source order.
func (r *reporter) sorted() diag.List {
	r.diags.Sort()
	return r.diags
}
