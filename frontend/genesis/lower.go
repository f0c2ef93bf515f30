package genesis

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/genesis-toolchain/genesis/diag"
	"github.com/genesis-toolchain/genesis/ir"
)

// Lowering of a checked program to IR (docs/genesis.md, "Lowering
// Genesis"). This file holds the module and function level, statements
// and the memory model; lower_expr.go holds expressions.
//
// Values. A Genesis value of a scalar type (an integer, bool, pointer or
// function pointer) is one IR value. A value of an aggregate type (an
// array, struct or enum) lives in memory: lowering passes it around as
// the address of its bytes, which consumers copy from and never write
// through. A void value is no value at all.
//
// Dead code. After a terminator (return, break, continue, or the
// unreachable that follows an expression of type never) the lowering
// keeps going into a detached region that is thrown away, so the code
// that follows needs no special case and the IR never holds
// instructions after a terminator.

// CodeCodegen is the diagnostic code of a program that checks but that
// lowering cannot translate (requirements-GENESIS.md: 0x0802 codegen).
const CodeCodegen = "0x0802"

// Lower translates p, a program that Check returned without errors, to an
// IR module that passes ir.Verify: one IR function per Genesis function,
// of the same name, and one read-only data object per distinct string
// literal. Constructs it cannot translate are reported as CodeCodegen
// errors, and its own failures (including IR that does not verify) as
// CodeInternal; the module is nil when the list holds an error. Lower
// never panics.
func Lower(p *Program) (*ir.Module, diag.List) {
	return lower(p, lowerKeep)
}

// LowerConsuming is Lower for a caller with no further use for p's
// function bodies: it drops each function's checked body (fn.Decl.Body
// becomes nil) as soon as it is lowered, so that the collector can
// reclaim the annotated tree, about 35 bytes per byte of input, while
// the IR, twice as large, grows (docs/decisions.md, "Hostile input").
// The module and diagnostics are those Lower returns.
func LowerConsuming(p *Program) (*ir.Module, diag.List) {
	return lower(p, lowerConsume)
}

// CheckLowering reports what Lower would report on p, without keeping
// the module: it lowers each function, verifies its IR (an IR that does
// not verify is a CodeInternal error, as in Lower) and drops both the
// IR and the checked body (fn.Decl.Body becomes nil) before the next
// function, so that what it holds is the checked tree, shrinking, and
// one function's IR (genesisc check; docs/genesis.md, "Limits"). Every
// diagnostic Lower gives, CheckLowering gives, in the same order.
func CheckLowering(p *Program) diag.List {
	_, diags := lower(p, lowerCheck)
	return diags
}

// lowerMode says what lower keeps.
type lowerMode uint8

const (
	lowerKeep    lowerMode = iota // the program and the module (Lower)
	lowerConsume                  // the module (LowerConsuming)
	lowerCheck                    // neither (CheckLowering)
)

// lower is Lower, dropping what mode says once each function is lowered.
func lower(p *Program, mode lowerMode) (*ir.Module, diag.List) {
	l := newLowerer(p)
	file := ""
	if p != nil && len(p.Files) > 0 {
		file = p.Files[0].Name
	}
	var fv *ir.FuncVerifier
	func() {
		defer l.recoverPhase(file)
		if p == nil {
			l.errorf(diag.Pos{}, CodeInternal, "internal compiler error: Lower called without a program")
			return
		}
		for _, fn := range p.Funcs {
			l.declare(fn)
		}
		if mode == lowerCheck {
			fv = ir.NewFuncVerifier(l.m)
		}
		for _, fn := range p.Funcs {
			l.lowerOne(fn, mode, fv)
		}
	}()
	return l.finish(mode)
}

// newLowerer returns the lowerer of p, its module empty.
func newLowerer(p *Program) *lowerer {
	return &lowerer{
		prog:  p,
		m:     ir.NewModule(),
		funcs: map[*Func]*ir.Func{},
		strs:  map[string]*ir.Data{},
	}
}

// lowerOne lowers fn, declared before, and drops what mode says: its
// checked body unless mode is lowerKeep; with lowerCheck, its IR once
// fv verified it (while no error was reported), keeping the signature
// for the calls of the functions verified after.
func (l *lowerer) lowerOne(fn *Func, mode lowerMode, fv *ir.FuncVerifier) {
	l.function(fn)
	if mode != lowerKeep {
		fn.Decl.Body = nil
	}
	if mode == lowerCheck {
		f := l.funcs[fn]
		if !l.diags.HasErrors() {
			l.verifyErrs = append(l.verifyErrs, fv.Verify(f)...)
		}
		*f = ir.Func{Name: f.Name, Params: f.Params, Results: f.Results, Pos: f.Pos}
	}
}

// finish ends a lowering: without an error of its own, what the IR
// verifier says (of the whole module, or with lowerCheck what fv said
// function by function, in module order) becomes internal errors. It
// returns the module (none with lowerCheck or on an error) and the
// diagnostics, sorted.
func (l *lowerer) finish(mode lowerMode) (*ir.Module, diag.List) {
	if !l.diags.HasErrors() {
		if mode != lowerCheck {
			l.verifyErrs = ir.Verify(l.m)
		}
		for _, d := range l.verifyErrs {
			l.diags.Errorf(d.Pos, CodeInternal, "internal compiler error: lowering produced invalid IR: %s", d.Msg)
		}
	}
	diags := l.sortedDiags()
	if diags.HasErrors() || mode == lowerCheck {
		return nil, diags
	}
	return l.m, diags
}

// lowerer holds the state of Lower for the whole program.
type lowerer struct {
	reporter
	prog  *Program
	m     *ir.Module
	funcs map[*Func]*ir.Func
	strs  map[string]*ir.Data // string literals by content

	verifyErrs diag.List // what the IR verifier said, in module order
}

// fnLower holds the state of the lowering of one function.
type fnLower struct {
	*lowerer
	fn    *Func
	f     *ir.Func
	b     *ir.Builder
	vars  map[*Var]storage
	sret  *ir.Value      // where an aggregate result goes, else nil
	loops []string       // labels of the enclosing while loops, innermost last
	names map[string]int // local and value names used, for unique names
	temps int            // temporary slots made so far
}

// storageKind tells where a variable lives.
type storageKind uint8

const (
	inSSA  storageKind = iota // an immutable scalar: the IR value itself (nil if void)
	inVar                     // a mutable scalar, not address-taken: an IR var
	inSlot                    // address-taken or aggregate: a stack slot
	inPtr                     // an aggregate parameter: the address of the caller's copy
)

// storage is where a variable lives.
type storage struct {
	kind  storageKind
	val   *ir.Value // inSSA, inPtr
	local *ir.Local // inVar, inSlot
}

// place is a memory location: the address base plus off bytes. Keeping
// the constant offset apart lets field and constant-index accesses fold
// into the offsets of loads and stores.
type place struct {
	base *ir.Value
	off  int64
}

// ── Types and signatures ──

// isAggregate reports whether values of type t live in memory: arrays,
// structs and enums.
func isAggregate(t Type) bool {
	switch t.(type) {
	case *Array, *Struct, *Enum:
		return true
	}
	return false
}

// isVoid reports whether t carries no value (void, never, or missing).
func isVoid(t Type) bool {
	b, ok := t.(*Basic)
	return t == nil || ok && (b.Kind == KindVoid || b.Kind == KindNever)
}

// irType is the IR type of a value of type t: the integer of its width,
// bool, ptr for pointers and for the address of an aggregate, or a
// function type. void has none (the zero ir.Type).
func irType(t Type) ir.Type {
	switch t := t.(type) {
	case *Basic:
		if t == Bool {
			return ir.Bool
		}
		switch Bits(t) {
		case 8:
			return ir.I8
		case 16:
			return ir.I16
		case 32:
			return ir.I32
		case 64:
			return ir.I64
		}
	case *Pointer, *Array, *Struct, *Enum:
		return ir.Ptr
	case *FuncType:
		ps, rs := signature(t)
		return ir.FuncType(ps, rs)
	}
	return ir.Type{}
}

// signature is the IR signature of functions of type ft: void parameters
// are dropped, aggregates are passed as the address of a copy the caller
// made, and an aggregate result is written through an address the caller
// passes first (docs/genesis.md, "Lowering Genesis").
func signature(ft *FuncType) (params, results []ir.Type) {
	switch {
	case isAggregate(ft.Result):
		params = append(params, ir.Ptr)
	case !isVoid(ft.Result):
		results = append(results, irType(ft.Result))
	}
	for _, p := range ft.Params {
		if !isVoid(p) {
			params = append(params, irType(p))
		}
	}
	return params, results
}

// resultTypes are the IR results of a structured instruction yielding a
// value of type t.
func resultTypes(t Type) []ir.Type {
	if isVoid(t) {
		return nil
	}
	return []ir.Type{irType(t)}
}

// tagType is the IR type of an enum's tag.
func tagType(e *Enum) ir.Type {
	switch size, _ := e.VariantLayout(); size {
	case 2:
		return ir.I16
	case 4:
		return ir.I32
	}
	return ir.I8
}

// ── Functions ──

// declare adds fn's IR function, with its signature and no body yet, so
// that calls can name functions declared later.
func (l *lowerer) declare(fn *Func) {
	ps, rs := signature(fn.Type)
	f := l.m.NewFunc(fn.name, ps, rs, fn.Decl.Pos())
	i := 0
	if isAggregate(fn.Type.Result) {
		f.Params[0].Name = "ret.addr"
		i = 1
	}
	for _, p := range fn.Params {
		if !isVoid(p.Type) {
			f.Params[i].Name = p.name
			i++
		}
	}
	l.funcs[fn] = f
}

// function lowers fn's body.
func (l *lowerer) function(fn *Func) {
	f := l.funcs[fn]
	fl := &fnLower{
		lowerer: l, fn: fn, f: f, b: ir.NewBuilder(f),
		vars: map[*Var]storage{}, names: map[string]int{},
	}
	i := 0
	if isAggregate(fn.Type.Result) {
		fl.sret = f.Params[0]
		fl.names["ret.addr"] = 1
		i = 1
	}
	for _, p := range fn.Params {
		if isVoid(p.Type) {
			fl.vars[p] = storage{kind: inSSA}
			continue
		}
		v := f.Params[i]
		i++
		fl.names[p.name] = 1
		fl.b.SetPos(p.pos)
		switch {
		case isAggregate(p.Type):
			fl.vars[p] = storage{kind: inPtr, val: v}
		case p.Addr:
			s := fl.slot(p.name, p.Type, p.pos)
			fl.b.Store(v, fl.b.AddrOf(s), 0)
			fl.vars[p] = storage{kind: inSlot, local: s}
		default:
			fl.vars[p] = storage{kind: inSSA, val: v}
		}
	}
	body := fn.Decl.Body
	fl.b.SetPos(body.Pos())
	for _, s := range body.Stmts {
		fl.stmt(s)
	}
	if body.Tail != nil {
		fl.returnValue(body.Tail, body.Tail.Pos())
	} else {
		fl.b.SetPos(body.End)
		if body.Type() == Never {
			fl.unreachable()
		} else {
			fl.ret()
		}
	}
}

// ── Names, locals and dead code ──

// unique returns name, or name.N if name was used before in the function.
// Genesis names have no '.', so the results never clash with them.
func (l *fnLower) unique(name string) string {
	n := l.names[name]
	l.names[name] = n + 1
	if n == 0 {
		return name
	}
	return name + "." + strconv.Itoa(n)
}

// nameValue names x after a variable, if x is an unnamed instruction
// result (parameters and named values keep their names).
func (l *fnLower) nameValue(x *ir.Value, name string) {
	if x != nil && x.Def != nil && x.Name == "" {
		x.Name = l.unique(name)
	}
}

// slot adds a stack slot for a value of type t.
func (l *fnLower) slot(name string, t Type, pos diag.Pos) *ir.Local {
	size := Sizeof(t)
	if size > math.MaxInt64 {
		l.errorf(pos, CodeCodegen, "%s is too large for the stack (%d bytes)", t, size)
	}
	return l.f.NewSlot(l.unique(name), int64(size), int64(Alignof(t)), pos)
}

// temp returns a fresh stack slot for a temporary value of type t.
func (l *fnLower) temp(t Type) place {
	l.temps++
	s := l.f.NewSlot(l.unique("tmp."+strconv.Itoa(l.temps)), int64(Sizeof(t)), int64(Alignof(t)), l.b.Pos())
	return place{l.b.AddrOf(s), 0}
}

// kill makes the builder append to a detached region: what follows a
// terminator is unreachable and is dropped.
func (l *fnLower) kill() { l.b.SetRegion(&ir.Region{}) }

// unreachable ends the current region with unreachable.
func (l *fnLower) unreachable() {
	l.b.Unreachable()
	l.kill()
}

// poison stands for the value of an expression that never produces one
// (its type is never); only dead code uses it.
func (l *fnLower) poison() *ir.Value { return l.f.NewValue(ir.I64) }

// ── Memory ──

// at is p moved by n bytes. Offsets that do not fit a load's 32-bit
// immediate are added to the address instead.
func (l *fnLower) at(p place, n uint64) place {
	if n <= math.MaxInt32 && p.off+int64(n) <= math.MaxInt32 {
		return place{p.base, p.off + int64(n)}
	}
	return place{l.b.Op(ir.OpPtrAdd, p.base, l.b.Const(ir.I64, p.off+int64(n))), 0}
}

// ptr is the address of p as one value.
func (l *fnLower) ptr(p place) *ir.Value {
	if p.off == 0 {
		return p.base
	}
	return l.b.Op(ir.OpPtrAdd, p.base, l.b.Const(ir.I64, p.off))
}

// load reads the value of type t at p: a scalar is loaded, an aggregate
// is its address, void is nothing.
func (l *fnLower) load(t Type, p place) *ir.Value {
	switch {
	case isVoid(t):
		return nil
	case isAggregate(t):
		return l.ptr(p)
	}
	return l.b.Load(irType(t), p.base, p.off)
}

// store writes v, a value of type t, at p: a scalar is stored, an
// aggregate (v its address) copied.
func (l *fnLower) store(t Type, v *ir.Value, p place) {
	switch {
	case isVoid(t):
	case isAggregate(t):
		size := Sizeof(t)
		if size > math.MaxUint32 {
			l.errorf(l.b.Pos(), CodeCodegen, "cannot copy a value of %s: it is %d bytes, and a copy moves less than 4 GiB", t, size)
			return
		}
		l.b.Copy(l.ptr(p), v, int64(size))
	default:
		l.b.Store(v, p.base, p.off)
	}
}

// ── Statements ──

// stmt lowers a statement.
func (l *fnLower) stmt(s Stmt) {
	saved := l.b.Pos()
	defer l.b.SetPos(saved)
	l.b.SetPos(s.Pos())
	switch s := s.(type) {
	case *LetStmt:
		l.let(s)
	case *AssignStmt:
		l.b.SetPos(s.EqPos)
		if isVoid(s.Target.Type()) {
			l.expr(s.Value)
			return
		}
		v := l.expr(s.Value)
		l.b.SetPos(s.EqPos)
		l.assignTo(s.Target, v)
	case *ExprStmt:
		l.expr(s.X)
	case *WhileStmt:
		l.while(s)
	case *ReturnStmt:
		if s.Value == nil {
			l.ret()
			return
		}
		l.returnValue(s.Value, s.ReturnPos)
	case *BranchStmt:
		if len(l.loops) == 0 {
			l.errorf(s.KwPos, CodeInternal, "internal compiler error: break or continue outside a loop")
			return
		}
		label := l.loops[len(l.loops)-1]
		if s.Continue {
			l.b.Continue(label)
		} else {
			l.b.Break(label)
		}
		l.kill()
	case *AsmStmt:
		l.asm(s)
	}
}

// let lowers `let [mut] x: T = e;`.
func (l *fnLower) let(s *LetStmt) {
	v := s.Var
	t := v.Type
	switch {
	case isVoid(t):
		l.expr(s.Value)
		l.vars[v] = storage{kind: inSSA}
	case isAggregate(t) || v.Addr:
		slot := l.slot(v.name, t, v.pos)
		l.into(s.Value, place{l.b.AddrOf(slot), 0})
		l.vars[v] = storage{kind: inSlot, local: slot}
	case v.Mut:
		x := l.expr(s.Value)
		l.b.SetPos(s.LetPos)
		local := l.f.NewVar(l.unique(v.name), irType(t), v.pos)
		l.b.Set(local, x)
		l.vars[v] = storage{kind: inVar, local: local}
	default:
		x := l.expr(s.Value)
		l.nameValue(x, v.name)
		l.vars[v] = storage{kind: inSSA, val: x}
	}
}

// bind declares a variable bound by a pattern to the value of its type
// at p (the payload in the scrutinee). Scalars are read once, so the
// binding keeps its value if the scrutinee changes afterwards;
// aggregates are copied for the same reason.
func (l *fnLower) bind(v *Var, p place) {
	t := v.Type
	switch {
	case isVoid(t):
		l.vars[v] = storage{kind: inSSA}
	case isAggregate(t) || v.Addr:
		slot := l.slot(v.name, t, v.pos)
		l.store(t, l.load(t, p), place{l.b.AddrOf(slot), 0})
		l.vars[v] = storage{kind: inSlot, local: slot}
	default:
		x := l.load(t, p)
		l.nameValue(x, v.name)
		l.vars[v] = storage{kind: inSSA, val: x}
	}
}

// assignTo stores v, the value of a target's type, into the place
// target: a var is set, memory stored to or copied into.
func (l *fnLower) assignTo(target Expr, v *ir.Value) {
	t := target.Type()
	if isVoid(t) {
		return
	}
	if id, ok := target.(*Ident); ok {
		if st := l.vars[id.Obj.(*Var)]; st.kind == inVar {
			l.b.Set(st.local, v)
			return
		}
	}
	l.store(t, v, l.place(target))
}

// while lowers `while c { body }` to
//
//	loop ^L { if c {} else { break ^L }; body; continue ^L }
//
// where break is `break ^L` and continue `continue ^L`.
func (l *fnLower) while(s *WhileStmt) {
	l.b.Loop(l.b.NewLabel("while"), nil, nil, func(label string, _ []*ir.Value) {
		c := l.expr(s.Cond)
		l.b.SetPos(s.Cond.Pos())
		l.b.If(c, nil, nil, func() { l.b.Break(label) })
		l.loops = append(l.loops, label)
		l.expr(s.Body)
		l.loops = l.loops[:len(l.loops)-1]
		l.b.SetPos(s.Body.End)
		l.b.Continue(label)
		l.kill()
	})
}

// ret returns from a function without a value (void, or an aggregate
// already written through the result address).
func (l *fnLower) ret() {
	l.b.Return()
	l.kill()
}

// returnValue returns the value of e, an expression of the function's
// result type; pos is the return's.
func (l *fnLower) returnValue(e Expr, pos diag.Pos) {
	rt := l.fn.Type.Result
	switch {
	case isAggregate(rt):
		l.into(e, place{l.sret, 0})
		l.b.SetPos(pos)
		l.ret()
	case isVoid(rt):
		l.expr(e)
		l.b.SetPos(pos)
		l.ret()
	default:
		v := l.expr(e)
		l.b.SetPos(pos)
		l.b.Return(v)
		l.kill()
	}
}

// asm lowers an asm statement: the in values are computed in binding
// order, the block runs, then each out register is assigned to its
// lvalue, in binding order.
func (l *fnLower) asm(s *AsmStmt) {
	var ins []ir.AsmIn
	var outs []ir.AsmOut
	var targets []*AsmBinding
	for _, b := range s.Bindings {
		if b.Out {
			outs = append(outs, ir.AsmOut{Reg: int(b.Reg), Type: irType(b.Value.Type())})
			targets = append(targets, b)
			continue
		}
		ins = append(ins, ir.AsmIn{Reg: int(b.Reg), V: l.expr(b.Value)})
	}
	l.b.SetPos(s.AsmPos)
	res := l.b.Asm(asmText(s), ins, outs)
	for i, b := range targets {
		l.b.SetPos(b.WordPos)
		l.assignTo(b.Value, res[i])
	}
}

// asmText is the Forge assembly of an asm block, one instruction a line,
// as forge asm reads it: canonical mnemonics, registers rN, numbers in
// decimal (negative when written so), function names as written.
func asmText(s *AsmStmt) string {
	var b strings.Builder
	for i, in := range s.Insts {
		if i > 0 {
			b.WriteByte('\n')
		}
		name := in.Mnemonic
		if in.Info != nil {
			name = in.Info.Name
		}
		b.WriteString(name)
		for j, op := range in.Operands {
			if j == 0 {
				b.WriteByte(' ')
			} else {
				b.WriteString(", ")
			}
			switch op.Kind {
			case AsmReg:
				fmt.Fprintf(&b, "r%d", op.Reg)
			case AsmImm:
				if op.Imm > math.MaxInt64 {
					b.WriteString(strconv.FormatInt(int64(op.Imm), 10))
				} else {
					b.WriteString(strconv.FormatUint(op.Imm, 10))
				}
			case AsmName:
				b.WriteString(op.Name.Name)
			}
		}
	}
	return b.String()
}
