// Package nanovm is the frontend of nano-vm programs (docs/nanovm.md):
// JSON or YAML documents describing a step graph of llm, tool, condition
// and parallel steps, run by a finite state machine with budgets, retries
// and suspension. It loads a document with the position of every node,
// decodes it against the program schema, parses the conditions (the
// grammar is parser/Condition.g4), checks the step graph — which nano-vm
// itself never does — and lowers the program to IR, where the state
// machine, its budgets and its statuses are explicit code.
//
//	m, diags := nanovm.Compile(frontend.File("refund.json", src))
//
// Every diagnostic reads file:line:col: severity[CODE]: $.json.path: message.
package nanovm

import (
	"fmt"
	"path/filepath"
	"runtime/debug"
	"strings"

	"github.com/genesis-toolchain/genesis/diag"
	"github.com/genesis-toolchain/genesis/frontend"
	"github.com/genesis-toolchain/genesis/frontend/internal/jsontree"
	"github.com/genesis-toolchain/genesis/ir"
)

// Diagnostic codes. Errors stop compilation; warnings (Severity Warning)
// do not.
const (
	CodeSyntax      = "N001" // the document is not valid JSON or YAML
	CodeSchema      = "N002" // a field has the wrong type or value, or a required one is missing
	CodeDupID       = "N003" // two steps have the same id
	CodeTarget      = "N004" // then/otherwise/next_step names no step (warning: the run fails there)
	CodeUnreachable = "N005" // a step can never run (warning)
	CodeCycle       = "N006" // steps form a cycle that no path leaves
	CodeCondition   = "N007" // a condition does not parse
	CodeUnknownKey  = "N008" // a key the schema does not have (warning: nano-vm drops it)
	CodeNoEffect    = "N009" // a field that has no effect where it is (warning)
	CodeQuotedVar   = "N010" // a $reference inside a quoted condition string (warning)
	// N011 (a branch target running on into its sibling branch) is retired:
	// branch targets follow nano-vm's rule now and never run on.
	CodeDupKey   = "N012" // a key appears twice in one object (warning)
	CodeUpstream = "N013" // nano-vm's runtime would do something else here, by a known bug of its own (warning)
	// CodeReadBeforeSet: a $reference to an output that no step can have
	// set before the reading step (warning).
	CodeReadBeforeSet = "N014"
	// CodeNeverOutput: a condition compares an llm step's output with a
	// string its allowed_outputs never give (warning).
	CodeNeverOutput = "N015"

	CodeInternal = "N0FF" // a bug of this compiler
)

// Compile loads, checks and lowers one nano-vm program, the one file of
// in. The format is chosen by the file's extension (.json, or
// .yaml/.yml), or by sniffing the first character when the extension is
// neither. It returns the module and the diagnostics, sorted by
// position; the module is nil when any diagnostic is an error. The
// module verifies (ir.Verify).
func Compile(in frontend.Input) (m *ir.Module, diags diag.List) {
	defer func() {
		if e := recover(); e != nil {
			m = nil
			diags = append(diags, internalError(in.Entry().Name, e))
		}
	}()
	prog, diags := Check(in)
	if diags.HasErrors() {
		return nil, diags
	}
	m, vs := lowerVerified(prog)
	return m, append(diags, vs...)
}

// lowerVerified lowers a program Check returned without errors and
// verifies its IR: the module, or nil and the internal errors of a
// compiler bug.
func lowerVerified(p *Program) (m *ir.Module, diags diag.List) {
	defer func() {
		if e := recover(); e != nil {
			m, diags = nil, diag.List{internalError(p.File, e)}
		}
	}()
	m = Lower(p)
	if vs := ir.VerifyLowered(m, CodeInternal); len(vs) > 0 {
		return nil, vs
	}
	return m, nil
}

// internalError is the diagnostic of a panic of this frontend: a bug.
func internalError(file string, e any) diag.Diagnostic {
	return diag.Diagnostic{Pos: diag.Pos{File: file}, Severity: diag.Error, Code: CodeInternal,
		Msg: fmt.Sprintf("internal compiler error: %v\n%s", e, debug.Stack())}
}

// Check loads and checks a program, the one file of in, without
// lowering it: the program and every diagnostic, sorted by position. The
// program is nil when the document could not be decoded at all; it may
// be partial when the list holds errors.
func Check(in frontend.Input) (*Program, diag.List) {
	src := in.Entry()
	r := &reporter{}
	root := load(src.Name, src.Data, r)
	if root == nil {
		return nil, r.sorted()
	}
	prog := decodeProgram(root, r)
	if prog != nil {
		checkProgram(prog, r)
	}
	return prog, r.sorted()
}

// Language is nano-vm's entry in the driver's registry: JSON and YAML
// files; a .json file that frontend/plan's detection claims is an
// execution plan instead.
var Language = &frontend.Language{
	Name:       "nano-vm",
	Programs:   "nano-vm programs",
	Extensions: []string{".json", ".yaml", ".yml"},
	OneFile:    "several nano-vm programs or plans: a program is one file",
	Agent:      true,
	Check: func(in frontend.Input) (any, diag.List) {
		return Check(in)
	},
	Lower: func(checked any) (*ir.Module, diag.List) {
		return lowerVerified(checked.(*Program))
	},
}

// IsYAML reports whether the file is read as YAML: by its extension, or,
// for another extension, when its first non-blank character does not
// open a JSON object.
func IsYAML(file string, src []byte) bool {
	switch strings.ToLower(filepath.Ext(file)) {
	case ".json":
		return false
	case ".yaml", ".yml":
		return true
	}
	s := strings.TrimLeft(strings.TrimPrefix(string(src), "\uFEFF"), " \t\r\n")
	return !strings.HasPrefix(s, "{")
}

// Load parses a JSON or YAML document (see IsYAML) into nodes, without
// checking it against the program schema. The node is nil after a syntax
// error.
func Load(file string, src []byte) (*Node, diag.List) {
	r := &reporter{}
	n := load(file, src, r)
	return n, r.sorted()
}

// documentCodes are the codes of the diagnostics of reading a program's
// document.
var documentCodes = jsontree.Codes{Syntax: CodeSyntax, DupKey: CodeDupKey, Value: CodeSchema}

func load(file string, src []byte, r *reporter) *Node {
	var n *Node
	var ds diag.List
	if IsYAML(file, src) {
		n, ds = jsontree.ParseYAML(file, src, documentCodes)
	} else {
		n, ds = jsontree.ParseJSON(file, src, documentCodes)
	}
	r.diags = append(r.diags, ds...)
	return n
}

// The document of a program is a jsontree: these name its parts here.
type (
	Node  = jsontree.Node
	Field = jsontree.Field
	Kind  = jsontree.Kind
)

// The kinds of document nodes.
const (
	Null   = jsontree.Null
	Bool   = jsontree.Bool
	Number = jsontree.Number
	String = jsontree.String
	Array  = jsontree.Array
	Object = jsontree.Object
)

// ChildPath is the JSON path of key in the object at path.
func ChildPath(path, key string) string { return jsontree.ChildPath(path, key) }

// reporter collects the diagnostics of one program.
type reporter struct {
	diags diag.List
}

func (r *reporter) add(pos diag.Pos, sev diag.Severity, path, code, format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	if path != "" {
		msg = jsontree.ShortPath(path) + ": " + msg
	}
	r.diags = append(r.diags, diag.Diagnostic{Pos: pos, Severity: sev, Code: code, Msg: msg})
}

func (r *reporter) errorAt(pos diag.Pos, path, code, format string, args ...any) {
	r.add(pos, diag.Error, path, code, format, args...)
}

func (r *reporter) warnAt(pos diag.Pos, path, code, format string, args ...any) {
	r.add(pos, diag.Warning, path, code, format, args...)
}

// errorf reports an error about node n.
func (r *reporter) errorf(n *Node, code, format string, args ...any) {
	r.errorAt(n.Pos, n.Path, code, format, args...)
}

// warnf reports a warning about node n.
func (r *reporter) warnf(n *Node, code, format string, args ...any) {
	r.warnAt(n.Pos, n.Path, code, format, args...)
}

func (r *reporter) hasErrors() bool { return r.diags.HasErrors() }

func (r *reporter) sorted() diag.List {
	out := append(diag.List(nil), r.diags...)
	out.Sort()
	return out
}
