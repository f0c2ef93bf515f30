// Package plan is the frontend of execution plans (docs/plan.md): JSON
// documents listing groups of operations with their dependencies and the
// smart contracts they touch, as an agent hands them to a plan executor
// (seed 002). A group runs once every group it depends on is Done;
// a group that fails blocks its dependents. The package loads a plan
// with the position of every value (through frontend/internal/jsontree,
// the JSON decoder it shares with the nano-vm frontend), checks it — unknown and cyclic dependencies, duplicate ids,
// placeholders {$X} that no earlier operation binds — and lowers it to
// IR, where the schedule, the group statuses and the values flowing
// between groups are explicit code.
//
//	if plan.HasPlanKeys(src) {
//		m, diags := plan.Compile(frontend.File("swap.json", src))
//	}
//
// Every diagnostic reads file:line:col: severity[CODE]: $.json.path: message.
package plan

import (
	"github.com/genesis-toolchain/genesis/frontend"
	"github.com/genesis-toolchain/genesis/frontend/internal/jsontree"

	"fmt"
	"runtime/debug"

	"github.com/genesis-toolchain/genesis/diag"
	"github.com/genesis-toolchain/genesis/ir"
)

// Diagnostic codes. Errors stop compilation; warnings (Severity Warning)
// do not.
const (
	CodeSyntax      = "P001" // the document is not valid JSON
	CodeSchema      = "P002" // a field has the wrong type or value, or a required one is missing
	CodeDupID       = "P003" // two groups have the same id
	CodeUnknownDep  = "P004" // a dependency names no group
	CodeCycle       = "P005" // groups depend on each other in a cycle
	CodePlaceholder = "P006" // a placeholder {$X} is not bound where it is used
	CodeDupName     = "P007" // two operations (or an operation and an input) bind one name
	CodeUnknownKey  = "P008" // a key the format does not have (warning)
	CodeDupKey      = "P009" // a key appears twice in one object (warning)
	CodeNoEffect    = "P010" // something that does nothing: a repeated dependency or contract, an empty plan or group (warning)
	CodeMalformed   = "P011" // text that looks like a placeholder but is not one (warning)
	CodeContract    = "P012" // a contract's chain id or address is not well formed (warning)
	CodeInternal    = "P0FF" // a bug of this compiler
)

// Compile loads, checks and lowers one execution plan, the one file of
// in (a JSON document, whatever the file's extension). It returns the
// module and the diagnostics, sorted by position; the module is nil when
// any diagnostic is an error. The module verifies (ir.Verify).
func Compile(in frontend.Input) (m *ir.Module, diags diag.List) {
	defer func() {
		if e := recover(); e != nil {
			m = nil
			diags = append(diags, internalError(in.Entry().Name, e))
		}
	}()
	p, diags := Check(in)
	if diags.HasErrors() {
		return nil, diags
	}
	m, vs := lowerVerified(p)
	return m, append(diags, vs...)
}

// lowerVerified lowers a plan Check returned without errors and verifies
// its IR: the module, or nil and the internal errors of a compiler bug.
func lowerVerified(p *Plan) (m *ir.Module, diags diag.List) {
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

// Check loads and checks a plan, the one file of in, without lowering
// it: the plan and every diagnostic, sorted by position. The plan is nil
// when the document could not be decoded at all; it may be partial when
// the list holds errors, and its Order is set only when there are none.
func Check(in frontend.Input) (*Plan, diag.List) {
	src := in.Entry()
	r := &reporter{}
	root := load(src.Name, src.Data, r)
	if root == nil {
		return nil, r.sorted()
	}
	p := decodePlan(root, r)
	if p != nil {
		checkPlan(p, r)
	}
	return p, r.sorted()
}

// Language is the execution plans' entry in the driver's registry: .json
// files that HasPlanKeys claims (the registry's detection step), which
// would otherwise be nano-vm programs.
var Language = &frontend.Language{
	Name:       "execution plan",
	Programs:   "execution plans",
	Extensions: []string{".json"},
	Detect:     HasPlanKeys,
	OneFile:    "several nano-vm programs or plans: a program is one file",
	Agent:      true,
	Check: func(in frontend.Input) (any, diag.List) {
		return Check(in)
	},
	Lower: func(checked any) (*ir.Module, diag.List) {
		return lowerVerified(checked.(*Plan))
	},
}

// Load parses a plan's JSON document into nodes, without checking it
// against the plan format: the JSON decoder the document frontends
// share (frontend/internal/jsontree: positions, key order, RFC 8259
// strictness), its diagnostics under this package's codes. The node is nil after a syntax error.
func Load(file string, src []byte) (*jsontree.Node, diag.List) {
	r := &reporter{}
	n := load(file, src, r)
	return n, r.sorted()
}

// documentCodes are the codes of the diagnostics of reading a plan's
// JSON document (a JSON document has no value that is not JSON).
var documentCodes = jsontree.Codes{Syntax: CodeSyntax, DupKey: CodeDupKey, Value: CodeSyntax}

func load(file string, src []byte, r *reporter) *jsontree.Node {
	root, ds := jsontree.ParseJSON(file, src, documentCodes)
	r.diags = append(r.diags, ds...)
	return root
}

const (
	errorSev = diag.Error
	warning  = diag.Warning
)

// reporter collects the diagnostics of one plan.
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

// errorf reports an error about node n.
func (r *reporter) errorf(n *jsontree.Node, code, format string, args ...any) {
	r.add(n.Pos, diag.Error, n.Path, code, format, args...)
}

// warnf reports a warning about node n.
func (r *reporter) warnf(n *jsontree.Node, code, format string, args ...any) {
	r.add(n.Pos, diag.Warning, n.Path, code, format, args...)
}

func (r *reporter) sorted() diag.List {
	out := append(diag.List(nil), r.diags...)
	out.Sort()
	return out
}
