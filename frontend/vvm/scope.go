package vvm

import (
	"github.com/genesis-toolchain/genesis/diag"
)

// Program is a loaded VVM program: its entry module and every module the
// entry imports, directly or not.
type Program struct {
	Main *Module
	// Modules holds every module once (by canonical identity), each
	// after the modules it imports: the order in which they run (spec.md
	// §15.1 step 2). Main is last.
	Modules []*Module
	// Skills is the program-wide skill registry (spec.md §15.1 step 2):
	// each skill name imported anywhere, with the first import of it, in
	// order of name.
	Skills []*SkillImport
}

// Module is one source file of a program, with the tables that
// resolution built for it. Everything in it is set by Check.
type Module struct {
	// Path is the module's canonical identity and the File's Name: the
	// cleaned file path (relative paths stay relative to the entry's), or
	// an https URL for a remote module.
	Path string
	// File is the module's syntax tree; nil when the file could not be
	// read.
	File *File
	// Scope is the module scope: its inputs, variables, defs (hoisted),
	// imported values and modules, in order of declaration. Its parent is
	// the universe, the scope of the standard library.
	Scope *Scope
	// Agents is the agent namespace (spec.md §3.3): the agents the module
	// defines and imports, as SymAgent symbols. Agents are hoisted.
	Agents *Scope
	// Inputs, Exports and Skills are the module's declarations of each
	// kind, in source order.
	Inputs  []*InputStmt
	Exports []*ExportStmt
	Skills  []*SkillImport

	sum     *summary // checked in two passes: the summary of pass 1 (File has no Stmts)
	broken  bool     // its file has syntax errors: its tree has holes, it is not resolved, and importers do not check names against it
	loading bool     // being loaded: an import of it now is a cycle
}

// export returns the module's export of name (an agent export if agent
// is set), or nil.
func (m *Module) export(name string, agent bool) *ExportStmt {
	for _, e := range m.Exports {
		if e.Name.Name == name && e.Agent == agent {
			return e
		}
	}
	return nil
}

// exportNames returns the names the module exports, of agents or of
// values, in source order.
func (m *Module) exportNames(agent bool) []string {
	var names []string
	for _, e := range m.Exports {
		if e.Agent == agent {
			names = append(names, e.Name.Name)
		}
	}
	return names
}

// SymbolKind is what a name denotes.
type SymbolKind uint8

const (
	SymVar     SymbolKind = iota // a variable: bound by =, for, except as, choose as, parallel as, error(name), constrain
	SymParam                     // a parameter of a def or lambda
	SymInput                     // a module input (input x: …)
	SymFunc                      // a def
	SymImport                    // a value imported with from "…" import x
	SymModule                    // a module imported with from "…" import * as m
	SymAgent                     // an agent, in an agent namespace (or used as a value: docs/vvm.md)
	SymBuiltin                   // a standard-library function
)

var symbolKindNames = [...]string{"var", "param", "input", "def", "import", "module", "agent", "builtin"}

func (k SymbolKind) String() string { return symbolKindNames[k] }

// Symbol is a name declared in a scope. Kind is what its first binding
// declares; Reassigned is set when anything else binds the name in the
// same scope too (an input or def assigned to, a variable of a def's
// name), so that only a Symbol of kind SymFunc that is not Reassigned
// always holds its def.
type Symbol struct {
	Name       string
	Kind       SymbolKind
	Pos        diag.Pos // the first binding (for a builtin, none)
	Scope      *Scope
	Reassigned bool

	Func   *FuncDecl   // SymFunc: the def
	Import *ImportStmt // SymImport, SymModule, and an imported SymAgent: the import
	Agent  *AgentStmt  // SymAgent: the agent's definition, in whichever module
	Target *Symbol     // SymImport: the symbol the other module exports (nil if unresolved)

	binds    []diag.Pos // every binding, in source order
	assigned bool       // bound by an assignment or error(name): W030 applies
	values   []Expr     // the values of its assignments
	other    bool       // bound by something other than an assignment too
	defs     int        // defs that bind it directly in its scope's body: a second one is E021
	reads    int        // uses
}

// Scope is a scope of names: the universe (the standard library), a
// module, or a function (a def or a lambda). Blocks open no scope
// (spec.md §4.5).
type Scope struct {
	// Owner is the *FuncDecl or *LambdaExpr of a function scope; nil
	// for a module scope, an agent namespace and the universe.
	Owner  Node
	Parent *Scope
	// Module is the module of a module or function scope or agent
	// namespace; nil for the universe.
	Module *Module
	// Syms are the scope's symbols in order of first binding: a
	// function's parameters first.
	Syms  []*Symbol
	names map[string]*Symbol

	branches map[string]*ParallelStmt // parallel branch names seen so far, for a hint
}

func newScope(owner Node, parent *Scope, m *Module) *Scope {
	return &Scope{Owner: owner, Parent: parent, Module: m, names: map[string]*Symbol{}}
}

// Lookup returns the symbol name denotes in this scope only, or nil.
func (s *Scope) Lookup(name string) *Symbol {
	return s.names[name]
}

// insert adds a new symbol to the scope.
func (s *Scope) insert(name string, kind SymbolKind, pos diag.Pos) *Symbol {
	sym := &Symbol{Name: name, Kind: kind, Pos: pos, Scope: s, binds: []diag.Pos{pos}}
	s.Syms = append(s.Syms, sym)
	s.names[name] = sym
	return sym
}

// Builtins are the names of the standard library (spec.md §14), in
// scope in every module, and len (a decision of docs/vvm.md: the corpus
// uses it).
var Builtins = []string{"filter", "len", "map", "pack", "perm", "pmap", "range", "reduce", "refine"}

// universe returns a new scope of the standard library.
func universe() *Scope {
	s := newScope(nil, nil, nil)
	for _, name := range Builtins {
		s.insert(name, SymBuiltin, diag.Pos{})
	}
	return s
}

// isFunc reports whether s is a function scope.
func (s *Scope) isFunc() bool { return s.Owner != nil }
