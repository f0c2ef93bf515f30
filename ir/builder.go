package ir

import (
	"fmt"

	"github.com/genesis-toolchain/genesis/diag"
)

// NewFunc adds a function with the given parameter and result types and
// an empty body to m, and returns it. Its parameters are unnamed values;
// name them by setting Value.Name.
func (m *Module) NewFunc(name string, params, results []Type, pos diag.Pos) *Func {
	f := &Func{Name: name, Results: append([]Type(nil), results...), Body: &Region{}, Pos: pos}
	for _, t := range params {
		f.Params = append(f.Params, f.NewValue(t))
	}
	m.Funcs = append(m.Funcs, f)
	return f
}

// NewData adds a read-only data object to m and returns it.
func (m *Module) NewData(name string, data []byte, align int64, pos diag.Pos) *Data {
	d := &Data{Name: name, Bytes: data, Align: align, Pos: pos}
	m.Data = append(m.Data, d)
	return d
}

// NewVar adds a var local of type t to f and returns it.
func (f *Func) NewVar(name string, t Type, pos diag.Pos) *Local {
	l := &Local{Name: name, Kind: Var, Type: t, Pos: pos}
	f.Locals = append(f.Locals, l)
	return l
}

// NewSlot adds a stack slot of size bytes, aligned to align, to f and
// returns it.
func (f *Func) NewSlot(name string, size, align int64, pos diag.Pos) *Local {
	l := &Local{Name: name, Kind: Slot, Size: size, Align: align, Pos: pos}
	f.Locals = append(f.Locals, l)
	return l
}

// Builder appends instructions to a region of a function. Each
// instruction gets the builder's current position (SetPos). Methods that
// build structured instructions take callbacks that build the nested
// regions with the same builder; the insertion point is restored after
// each.
//
// The Builder checks only what it needs to construct instructions (for
// example, that a builtin exists); Verify checks the rest.
type Builder struct {
	f      *Func
	r      *Region
	pos    diag.Pos
	labels int
}

// NewBuilder returns a builder appending to f's body.
func NewBuilder(f *Func) *Builder { return &Builder{f: f, r: f.Body, pos: f.Pos} }

// Func returns the function being built.
func (b *Builder) Func() *Func { return b.f }

// SetPos sets the source position of the instructions built next.
func (b *Builder) SetPos(pos diag.Pos) { b.pos = pos }

// Pos returns the current source position.
func (b *Builder) Pos() diag.Pos { return b.pos }

// Region returns the region instructions are appended to.
func (b *Builder) Region() *Region { return b.r }

// SetRegion makes the builder append to r, a region of the function.
func (b *Builder) SetRegion(r *Region) { b.r = r }

// Terminated reports whether the current region already ends in a
// terminator, after which nothing may be appended (frontends use it to
// skip dead code after return, break and continue).
func (b *Builder) Terminated() bool {
	last := b.r.Last()
	return last != nil && last.Op.IsTerminator()
}

// Append appends in to the current region, setting its Parent and Pos (if
// unset), and returns it.
func (b *Builder) Append(in *Instr) *Instr {
	in.Parent = b.r
	if in.Pos == (diag.Pos{}) {
		in.Pos = b.pos
	}
	for _, r := range in.Regions {
		r.Parent = in
	}
	b.r.Instrs = append(b.r.Instrs, in)
	return in
}

// emit appends an instruction and gives it the results its op's rule
// infers. It panics when they cannot be inferred (a builder misuse).
func (b *Builder) emit(in *Instr) *Instr {
	ts, ok := inferResults(b.f, in)
	if !ok {
		panic(fmt.Sprintf("ir.Builder: cannot infer the results of %s", in.Op))
	}
	b.addResults(in, ts)
	return b.Append(in)
}

func (b *Builder) addResults(in *Instr, ts []Type) {
	for _, t := range ts {
		v := b.f.NewValue(t)
		v.Def = in
		in.Results = append(in.Results, v)
	}
}

func (b *Builder) one(in *Instr) *Value { return b.emit(in).Results[0] }

// Const returns the integer, bool (0 or 1) or ptr constant x of type t.
func (b *Builder) Const(t Type, x int64) *Value {
	return b.one(&Instr{Op: OpConst, Type: t, Lit: Literal{Kind: LitInt, Int: Normalize(t, x)}})
}

// Bool returns the bool constant x.
func (b *Builder) Bool(x bool) *Value {
	var i int64
	if x {
		i = 1
	}
	return b.Const(Bool, i)
}

// ConstValue returns the value constant lit (LitUnit, LitBool, LitNumber
// or LitString).
func (b *Builder) ConstValue(lit Literal) *Value {
	return b.one(&Instr{Op: OpConst, Type: Dyn, Lit: lit})
}

// StringValue returns the string value constant s.
func (b *Builder) StringValue(s string) *Value { return b.ConstValue(Literal{Kind: LitString, Str: s}) }

// NumberValue returns the number value constant x.
func (b *Builder) NumberValue(x float64) *Value {
	return b.ConstValue(Literal{Kind: LitNumber, Num: x})
}

// UnitValue returns the unit value.
func (b *Builder) UnitValue() *Value { return b.ConstValue(Literal{Kind: LitUnit}) }

// FuncRef returns a reference to f.
func (b *Builder) FuncRef(f *Func) *Value {
	return b.one(&Instr{Op: OpFuncRef, Sym: f.Name, Type: f.Type()})
}

// AddrOf returns the address of stack slot l.
func (b *Builder) AddrOf(l *Local) *Value { return b.one(&Instr{Op: OpAddrOf, Local: l.Name}) }

// AddrOfData returns the address of data object d.
func (b *Builder) AddrOfData(d *Data) *Value { return b.one(&Instr{Op: OpAddrOf, Sym: d.Name}) }

// Op returns the result of a FormArgs op with one result (arithmetic,
// comparisons, neg, not, inttoptr, ptrtoint, ptradd) on args.
func (b *Builder) Op(op Op, args ...*Value) *Value {
	return b.one(&Instr{Op: op, Args: args})
}

// Cast returns sext, zext or trunc of x to t.
func (b *Builder) Cast(op Op, t Type, x *Value) *Value {
	return b.one(&Instr{Op: op, Type: t, Args: []*Value{x}})
}

// Load returns the value of type t at p + off.
func (b *Builder) Load(t Type, p *Value, off int64) *Value {
	return b.one(&Instr{Op: OpLoad, Type: t, Args: []*Value{p}, Int: off})
}

// Store stores v at p + off.
func (b *Builder) Store(v, p *Value, off int64) *Instr {
	return b.emit(&Instr{Op: OpStore, Args: []*Value{v, p}, Int: off})
}

// Copy copies n bytes from src to dst.
func (b *Builder) Copy(dst, src *Value, n int64) *Instr {
	return b.emit(&Instr{Op: OpCopy, Args: []*Value{dst, src}, Int: n})
}

// Get returns the current value of var l.
func (b *Builder) Get(l *Local) *Value { return b.one(&Instr{Op: OpGet, Local: l.Name}) }

// Set assigns x to var l.
func (b *Builder) Set(l *Local, x *Value) *Instr {
	return b.emit(&Instr{Op: OpSet, Local: l.Name, Args: []*Value{x}})
}

// Call calls f with args and returns its results.
func (b *Builder) Call(f *Func, args ...*Value) []*Value {
	return b.CallSym(f.Name, f.Results, args...)
}

// CallSym calls the function named name, declaring its results; use it
// for a callee not built yet.
func (b *Builder) CallSym(name string, results []Type, args ...*Value) []*Value {
	in := &Instr{Op: OpCall, Sym: name, Args: args}
	b.addResults(in, results)
	return b.Append(in).Results
}

// CallIndirect calls the function referenced by fn with args and returns
// its results, whose types come from fn's type.
func (b *Builder) CallIndirect(fn *Value, args ...*Value) []*Value {
	in := &Instr{Op: OpCallIndirect, Args: append([]*Value{fn}, args...)}
	if sig := fn.Type.Sig(); sig != nil {
		b.addResults(in, sig.Results)
	}
	return b.Append(in).Results
}

// Builtin calls the named runtime builtin and returns its result. It
// panics if there is no such builtin.
func (b *Builder) Builtin(name string, args ...*Value) *Value {
	bi, ok := LookupBuiltin(name)
	if !ok {
		panic("ir.Builder: unknown builtin " + name)
	}
	in := &Instr{Op: OpBuiltin, Sym: name, Args: args}
	b.addResults(in, bi.Results)
	b.Append(in)
	if len(in.Results) == 0 {
		return nil
	}
	return in.Results[0]
}

// build runs fn with the builder appending to r, then restores the
// insertion point.
func (b *Builder) build(r *Region, fn func()) {
	saved := b.r
	b.r = r
	if fn != nil {
		fn()
	}
	b.r = saved
}

// structured appends a structured instruction with n empty regions and
// the given result types.
func (b *Builder) structured(op Op, args []*Value, results []Type, n int) *Instr {
	in := &Instr{Op: op, Args: args}
	for range n {
		in.Regions = append(in.Regions, &Region{Parent: in})
	}
	b.addResults(in, results)
	return b.Append(in)
}

// If appends an if on cond yielding results; then and els build its
// regions (either may be nil: an empty region) and must end them with a
// Yield of the results, or another terminator.
func (b *Builder) If(cond *Value, results []Type, then, els func()) []*Value {
	in := b.structured(OpIf, []*Value{cond}, results, 2)
	b.build(in.Regions[0], then)
	b.build(in.Regions[1], els)
	return in.Results
}

// NewLabel returns a label not returned before by this builder, of the
// form prefix + number.
func (b *Builder) NewLabel(prefix string) string {
	b.labels++
	return fmt.Sprintf("%s%d", prefix, b.labels)
}

// Loop appends a loop labelled label (a fresh label if empty) with
// loop-carried values starting at inits, and results. body builds the
// loop body given the region parameters (one per init, of its type); it
// must end every path with Continue or Break (or Return).
func (b *Builder) Loop(label string, inits []*Value, results []Type, body func(label string, params []*Value)) []*Value {
	if label == "" {
		label = b.NewLabel("loop")
	}
	in := b.structured(OpLoop, inits, results, 1)
	in.Label = label
	r := in.Regions[0]
	for _, x := range inits {
		r.Params = append(r.Params, b.f.NewValue(x.Type))
	}
	b.build(r, func() { body(label, r.Params) })
	return in.Results
}

// Block appends a block labelled label (a fresh label if empty) with
// results; body builds it.
func (b *Builder) Block(label string, results []Type, body func(label string)) []*Value {
	if label == "" {
		label = b.NewLabel("block")
	}
	in := b.structured(OpBlock, nil, results, 1)
	in.Label = label
	b.build(in.Regions[0], func() { body(label) })
	return in.Results
}

// Case is one case of a switch: the values that select it and the
// function that builds its region.
type Case struct {
	Values []int64
	Body   func()
}

// Switch appends a switch on x with results, one region per case and a
// default region built by def.
func (b *Builder) Switch(x *Value, results []Type, cases []Case, def func()) []*Value {
	in := b.structured(OpSwitch, []*Value{x}, results, len(cases)+1)
	for i, c := range cases {
		vals := make([]int64, len(c.Values))
		for j, v := range c.Values {
			vals[j] = Normalize(x.Type, v)
		}
		in.Cases = append(in.Cases, vals)
		b.build(in.Regions[i], c.Body)
	}
	b.build(in.Regions[len(cases)], def)
	return in.Results
}

// Yield ends the current region, yielding vals.
func (b *Builder) Yield(vals ...*Value) *Instr { return b.emit(&Instr{Op: OpYield, Args: vals}) }

// Break leaves the loop or block labelled label with vals.
func (b *Builder) Break(label string, vals ...*Value) *Instr {
	return b.emit(&Instr{Op: OpBreak, Label: label, Args: vals})
}

// Continue starts the next iteration of loop label with vals.
func (b *Builder) Continue(label string, vals ...*Value) *Instr {
	return b.emit(&Instr{Op: OpContinue, Label: label, Args: vals})
}

// Return returns vals from the function.
func (b *Builder) Return(vals ...*Value) *Instr { return b.emit(&Instr{Op: OpReturn, Args: vals}) }

// Unreachable marks the current point unreachable.
func (b *Builder) Unreachable() *Instr { return b.emit(&Instr{Op: OpUnreachable}) }

// Effect appends the effect op (OpLLM … OpTrace) with step name step, the
// iteration counters iters of the enclosing loops and its operands args.
// It returns the effect's result, or nil for emit, state.put, stop and
// trace.
func (b *Builder) Effect(op Op, step string, iters []*Value, args ...*Value) *Value {
	in := &Instr{Op: op, Str: step, Args: append(append([]*Value(nil), args...), iters...), Iters: len(iters)}
	b.emit(in)
	if len(in.Results) == 0 {
		return nil
	}
	return in.Results[0]
}

// Parallel appends a parallel block with step name step and counters
// iters: each of funcs (fn(value) -> value) is called with arg, at most
// limit (an i64) at once. It returns the list of their results.
func (b *Builder) Parallel(step string, iters []*Value, limit, arg *Value, funcs []string) *Value {
	in := &Instr{Op: OpParallel, Str: step, Args: append([]*Value{limit, arg}, iters...), Iters: len(iters),
		Syms: append([]string(nil), funcs...)}
	b.emit(in)
	return in.Results[0]
}

// ParallelEach appends a parallel.each block with step name step and
// counters iters: f (fn(value) -> value) is called on each element of the
// list items, at most limit (an i64) at once. It returns the list of
// the results, in the items' order.
func (b *Builder) ParallelEach(step string, iters []*Value, limit, items *Value, f string) *Value {
	in := &Instr{Op: OpParallelEach, Str: step, Args: append([]*Value{limit, items}, iters...), Iters: len(iters),
		Syms: []string{f}}
	b.emit(in)
	return in.Results[0]
}

// ParallelAfter is Parallel for branches that wait for each other:
// waits[i] lists, ascending, the branches below i that branch i waits
// for. A branch that waits is a fn(value, value) -> value, called with
// arg and the list of the results of those it waits for.
func (b *Builder) ParallelAfter(step string, iters []*Value, limit, arg *Value, funcs []string, waits [][]int) *Value {
	r := b.Parallel(step, iters, limit, arg, funcs)
	in := r.Def
	for i, w := range waits {
		if len(w) == 0 {
			continue
		}
		if in.Waits == nil {
			in.Waits = make([][]int, len(funcs))
		}
		in.Waits[i] = append([]int(nil), w...)
	}
	return r
}

// AsmIn binds register Reg to operand V on entry to an asm block.
type AsmIn struct {
	Reg int
	V   *Value
}

// AsmOut makes register Reg's value on exit from an asm block a result of
// type Type.
type AsmOut struct {
	Reg  int
	Type Type
}

// Asm appends an inline assembly block and returns its out values.
func (b *Builder) Asm(text string, ins []AsmIn, outs []AsmOut) []*Value {
	in := &Instr{Op: OpAsm, Str: text}
	for _, x := range ins {
		in.Args = append(in.Args, x.V)
		in.Regs = append(in.Regs, x.Reg)
	}
	var ts []Type
	for _, o := range outs {
		in.Regs = append(in.Regs, o.Reg)
		ts = append(ts, o.Type)
	}
	b.addResults(in, ts)
	return b.Append(in).Results
}
