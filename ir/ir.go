package ir

import (
	"sync"

	"github.com/genesis-toolchain/genesis/diag"
)

// Module is a compilation unit: read-only data and functions. Symbols
// (function and data names) share one namespace. The order of Data and
// Funcs is kept by the printer.
type Module struct {
	Data  []*Data
	Funcs []*Func
}

// NewModule returns an empty module.
func NewModule() *Module { return &Module{} }

// FuncMap returns the functions by name, the first of each name as Func
// finds it: a snapshot, for callers that look up many names (Func is a
// linear search).
func (m *Module) FuncMap() map[string]*Func {
	byName := make(map[string]*Func, len(m.Funcs))
	for _, f := range m.Funcs {
		if _, dup := byName[f.Name]; !dup {
			byName[f.Name] = f
		}
	}
	return byName
}

// CallGraph returns the direct call graph of m: for the function at each
// index of m.Funcs, the indexes of the functions it calls with call, in
// order of first call, each once.
func (m *Module) CallGraph() [][]int {
	index := make(map[string]int, len(m.Funcs))
	for i := len(m.Funcs) - 1; i >= 0; i-- { // the first of a name, as Func finds it
		index[m.Funcs[i].Name] = i
	}
	edges := make([][]int, len(m.Funcs))
	for i, f := range m.Funcs {
		seen := map[int]bool{}
		Walk(f.Body, func(in *Instr) {
			callees := in.Syms // a parallel block calls its branches
			if in.Op == OpCall {
				callees = []string{in.Sym}
			} else if in.Op != OpParallel && in.Op != OpParallelEach {
				return
			}
			for _, name := range callees {
				if j, ok := index[name]; ok && !seen[j] {
					seen[j] = true
					edges[i] = append(edges[i], j)
				}
			}
		})
	}
	return edges
}

// SourceFile returns the source file of m: the file of the first function
// or data object (in module order) whose position names one, or "". It
// is the position diagnostics about the whole module, or about what has
// no position of its own (a function a frontend synthesized), give at
// least.
func (m *Module) SourceFile() string {
	for _, f := range m.Funcs {
		if f.Pos.File != "" {
			return f.Pos.File
		}
	}
	for _, f := range m.Funcs {
		if file := firstFile(f.Body); file != "" {
			return file
		}
	}
	for _, d := range m.Data {
		if d.Pos.File != "" {
			return d.Pos.File
		}
	}
	return ""
}

// firstFile is the file of the first instruction of r, or of its nested
// regions, that names one.
func firstFile(r *Region) string {
	if r == nil {
		return ""
	}
	for _, in := range r.Instrs {
		if in.Pos.File != "" {
			return in.Pos.File
		}
		for _, sub := range in.Regions {
			if file := firstFile(sub); file != "" {
				return file
			}
		}
	}
	return ""
}

// Func returns the function named name, or nil.
func (m *Module) Func(name string) *Func {
	for _, f := range m.Funcs {
		if f.Name == name {
			return f
		}
	}
	return nil
}

// DataNamed returns the data object named name, or nil.
func (m *Module) DataNamed(name string) *Data {
	for _, d := range m.Data {
		if d.Name == name {
			return d
		}
	}
	return nil
}

// Data is a read-only byte string in the program's data section, such as a
// string literal. Its address is taken with addr_of.
type Data struct {
	Name  string
	Bytes []byte
	Align int64 // a power of two; 0 means 1
	Pos   diag.Pos
}

// Func is a function: typed parameters and results, locals and a body.
type Func struct {
	Name    string
	Params  []*Value // their Types are the parameter types
	Results []Type
	Locals  []*Local
	Body    *Region
	Pos     diag.Pos
	nextID  int

	// localIndex maps a local's name to its index in Locals, for the
	// first indexed locals of it: Local would otherwise scan Locals at
	// each lookup, quadratic in a function of thousands of locals (the
	// top level of a module of thousands of globals). Locals is an
	// exported slice that passes append to and filter in place, so the
	// index is only a hint, checked at each use (see Local). localMu
	// guards it: a lookup writes it, and lookups that only read Locals
	// (the verifier's) may run on several goroutines.
	localMu    sync.Mutex
	localIndex map[string]int
	indexed    int
}

// Type returns the function type of references to f.
func (f *Func) Type() Type {
	ps := make([]Type, len(f.Params))
	for i, p := range f.Params {
		ps[i] = p.Type
	}
	return FuncType(ps, f.Results)
}

// Local returns the first local named name, or nil. It keeps an index
// of the names in step with Locals, which may have been appended to or
// filtered since the last lookup: a hit of the index is checked against
// Locals, new locals are indexed as they are first looked for, and a
// miss falls back to a scan (rebuilding the index if the scan finds what
// the index did not), so the answer is that of a scan whenever the names
// of Locals are distinct (the verifier requires it), and a lookup costs
// amortized constant time unless the name is absent. It may be called
// from several goroutines at once, as long as none changes Locals.
func (f *Func) Local(name string) *Local {
	f.localMu.Lock()
	defer f.localMu.Unlock()
	if i, ok := f.localIndex[name]; ok && i < len(f.Locals) && f.Locals[i].Name == name {
		return f.Locals[i]
	}
	if f.indexed > len(f.Locals) {
		f.localIndex, f.indexed = nil, 0 // filtered: start again
	}
	if f.localIndex == nil {
		f.localIndex = make(map[string]int, len(f.Locals))
	}
	for ; f.indexed < len(f.Locals); f.indexed++ {
		if n := f.Locals[f.indexed].Name; !f.hasIndexed(n) {
			f.localIndex[n] = f.indexed
		}
	}
	if i, ok := f.localIndex[name]; ok && f.Locals[i].Name == name {
		return f.Locals[i]
	}
	for i, l := range f.Locals {
		if l.Name == name {
			// Locals changed under the index: index them afresh.
			f.localIndex, f.indexed = nil, 0
			return f.Locals[i]
		}
	}
	return nil
}

// hasIndexed reports whether the index holds a valid entry for name.
func (f *Func) hasIndexed(name string) bool {
	i, ok := f.localIndex[name]
	return ok && i < f.indexed && f.Locals[i].Name == name
}

// NewValue returns a fresh value of type t, numbered in f.
func (f *Func) NewValue(t Type) *Value {
	f.nextID++
	return &Value{ID: f.nextID, Type: t}
}

// LocalKind distinguishes the two kinds of locals.
type LocalKind uint8

const (
	// Var is a mutable scalar variable, read with get and written with
	// set; it holds the zero value of its type until first set. A var has
	// no address, so a later pass can promote it to SSA values.
	Var LocalKind = iota
	// Slot is Size bytes of stack memory, aligned to Align, live for the
	// whole call; addr_of yields its address. Its contents start
	// unspecified.
	Slot
)

// Local is a function-level var or stack slot.
type Local struct {
	Name  string
	Kind  LocalKind
	Type  Type  // Var: the variable's type
	Size  int64 // Slot: bytes
	Align int64 // Slot: a power of two
	Pos   diag.Pos
}

// Region is a sequence of instructions owned by a function (its body) or
// by a structured instruction. Params are the region's own values: the
// loop-carried values of a loop body, none elsewhere.
type Region struct {
	Params []*Value
	Instrs []*Instr
	Parent *Instr // nil for a function body
}

// Last returns the region's last instruction, or nil.
func (r *Region) Last() *Instr {
	if len(r.Instrs) == 0 {
		return nil
	}
	return r.Instrs[len(r.Instrs)-1]
}

// Value is an SSA value: defined once, by Def's results, or as a function
// or region parameter (Def nil).
type Value struct {
	ID   int    // unique in its function; used for printing unnamed values
	Name string // optional; printed as %Name
	Type Type
	Def  *Instr
}

// LitKind classifies a constant literal.
type LitKind uint8

// The kinds of literals.
const (
	LitInt    LitKind = iota // Int; for integer, bool and ptr constants
	LitUnit                  // the unit value
	LitBool                  // Int is 0 or 1; for value constants
	LitNumber                // Num; for value constants
	LitString                // Str; for value constants
)

// Literal is the constant of a const instruction. Integer, bool and ptr
// constants use LitInt (bool: Int 0 or 1); value constants use the other
// kinds.
type Literal struct {
	Kind LitKind
	Int  int64 // normalized to the constant's type (see Normalize)
	Num  float64
	Str  string
}

// Instr is one instruction. Which of the attribute fields are meaningful
// depends on the op: see its Form in the op table.
type Instr struct {
	Op      Op
	Args    []*Value // operands
	Results []*Value
	Regions []*Region
	Parent  *Region
	Pos     diag.Pos // the source position the instruction comes from

	Type  Type    // const, casts, load, func_ref: the type attribute
	Lit   Literal // const
	Int   int64   // load, store, copy: the byte offset or size
	Sym   string  // call, func_ref, addr_of (data): the symbol; builtin: its name
	Local string  // get, set, addr_of (slot): the local
	Label string  // loop, block: its label; break, continue: the target
	Str   string  // effects: the step name; asm: the assembly text
	Cases [][]int64
	// Cases holds, for a switch, the case values of each region but the
	// last, which is the default.
	Regs []int
	// Regs holds, for asm, the register of each binding: those of the
	// in bindings (one per Arg) then those of the out bindings (one per
	// Result).
	Syms []string
	// Syms holds, for parallel, the branch functions.
	Waits [][]int
	// Waits holds, for parallel, the branches each branch waits for
	// (indices below its own, ascending); nil when no branch waits.
	Iters int
	// Iters is, for an effect, how many of the trailing Args are the
	// iteration counters of the enclosing loops that make the step
	// identity unique per iteration.
}

// Info returns the op table entry of the instruction's op.
func (in *Instr) Info() *OpInfo { return in.Op.Info() }

// EffectArgs returns an effect's operands without its iteration counters.
func (in *Instr) EffectArgs() []*Value { return in.Args[:len(in.Args)-in.Iters] }

// IterArgs returns an effect's iteration counters.
func (in *Instr) IterArgs() []*Value { return in.Args[len(in.Args)-in.Iters:] }
