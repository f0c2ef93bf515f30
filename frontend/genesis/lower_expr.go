package genesis

import (
	"math"
	"math/bits"
	"strconv"

	"github.com/genesis-toolchain/genesis/ir"
)

// Lowering of expressions (see lower.go for the representation of
// values).

// expr lowers e and returns its value: the IR value of a scalar, the
// address of an aggregate's bytes (which the caller only reads or
// copies), nil for void. The instructions get e's position. After an
// expression of type never, the region ends with unreachable and the
// result is a poison value only dead code sees.
func (l *fnLower) expr(e Expr) *ir.Value {
	saved := l.b.Pos()
	defer l.b.SetPos(saved)
	l.b.SetPos(e.Pos())
	v := l.expr1(e)
	if e.Type() == Never {
		l.b.SetPos(e.Pos())
		l.unreachable()
		return l.poison()
	}
	return v
}

func (l *fnLower) expr1(e Expr) *ir.Value {
	switch e := e.(type) {
	case *IntLit:
		return l.b.Const(irType(e.Type()), int64(e.Value))
	case *ByteLit:
		return l.b.Const(ir.I8, int64(e.Value))
	case *BoolLit:
		return l.b.Bool(e.Value)
	case *StringLit:
		return l.b.AddrOfData(l.str(e))
	case *Ident:
		return l.ident(e)
	case *UnaryExpr:
		return l.unary(e)
	case *BinaryExpr:
		return l.binary(e)
	case *CastExpr:
		return l.cast(e)
	case *CallExpr:
		return l.call(e, nil)
	case *IndexExpr, *FieldExpr:
		return l.load(e.Type(), l.place(e))
	case *ArrayLit, *StructLit:
		dst := l.temp(e.Type())
		l.into(e, dst)
		return l.ptr(dst)
	case *BlockExpr:
		for _, s := range e.Stmts {
			l.stmt(s)
		}
		if e.Tail == nil {
			return nil
		}
		return l.expr(e.Tail)
	case *IfExpr:
		return l.ifExpr(e)
	case *MatchExpr:
		return l.match(e)
	}
	l.errorf(e.Pos(), CodeCodegen, "cannot lower %T", e)
	return l.poison()
}

// into lowers e, an expression whose value goes to dst, memory that no
// part of e can observe (a variable being declared, a temporary, a
// caller's result slot). Struct literals, array initializers, variant
// constructors and calls returning aggregates build their value in dst
// directly; anything else is computed, then stored or copied.
func (l *fnLower) into(e Expr, dst place) {
	saved := l.b.Pos()
	defer l.b.SetPos(saved)
	l.b.SetPos(e.Pos())
	switch x := e.(type) {
	case *StructLit:
		for _, fi := range x.Fields {
			l.into(fi.Value, l.at(dst, fi.Field.Offset))
		}
		return
	case *ArrayLit:
		l.fill(x, dst)
		return
	case *CallExpr:
		if isAggregate(x.Type()) {
			l.call(x, &dst)
			return
		}
	case *Ident:
		if v, ok := x.Obj.(*Variant); ok {
			l.b.Store(l.b.Const(tagType(v.Enum), int64(v.Index)), dst.base, dst.off)
			return
		}
	}
	l.store(e.Type(), l.expr(e), dst)
}

// fill lowers `[e; N]` into dst: e is computed once and stored N times,
// by a loop when N is above 8.
func (l *fnLower) fill(a *ArrayLit, dst place) {
	et := a.Type().(*Array).Elem
	size := Sizeof(et)
	v := l.expr(a.Elem)
	l.b.SetPos(a.Pos())
	if a.Len == 0 || size == 0 {
		return
	}
	if a.Len <= 8 {
		for i := range a.Len {
			l.store(et, v, l.at(dst, i*size))
		}
		return
	}
	base := l.ptr(dst)
	end := l.b.Const(ir.I64, int64(a.Len*size)) // at most 2^48: layouts are bounded
	step := l.b.Const(ir.I64, int64(size))
	l.b.Loop(l.b.NewLabel("fill"), []*ir.Value{l.b.Const(ir.I64, 0)}, nil, func(label string, ps []*ir.Value) {
		off := ps[0]
		done := l.b.Op(ir.OpGeU, off, end)
		l.b.If(done, nil, func() { l.b.Break(label) }, nil)
		l.store(et, v, place{l.b.Op(ir.OpPtrAdd, base, off), 0})
		l.b.Continue(label, l.b.Op(ir.OpAdd, off, step))
	})
}

// str returns the data object of a string literal: its bytes and a NUL.
// Equal literals share one object.
func (l *fnLower) str(e *StringLit) *ir.Data {
	key := string(e.Value)
	if d, ok := l.strs[key]; ok {
		return d
	}
	data := append(append([]byte(nil), e.Value...), 0)
	d := l.m.NewData("str."+strconv.Itoa(len(l.strs)), data, 1, e.Pos())
	l.strs[key] = d
	return d
}

// ident lowers a name used as a value: a variable, a function (a
// reference to it) or a variant without payload (an enum value).
func (l *fnLower) ident(e *Ident) *ir.Value {
	switch obj := e.Obj.(type) {
	case *Var:
		st, ok := l.vars[obj]
		if !ok {
			l.errorf(e.Pos(), CodeInternal, "internal compiler error: variable %s used before it is declared", obj.name)
			return l.poison()
		}
		switch st.kind {
		case inSSA, inPtr:
			return st.val
		case inVar:
			return l.b.Get(st.local)
		}
		return l.load(obj.Type, place{l.b.AddrOf(st.local), 0})
	case *Func:
		return l.b.FuncRef(l.funcs[obj])
	case *Variant:
		dst := l.temp(obj.Enum)
		l.into(e, dst)
		return l.ptr(dst)
	}
	l.errorf(e.Pos(), CodeInternal, "internal compiler error: %s is not a value", e.Name)
	return l.poison()
}

// place lowers an expression denoting memory: a variable in a slot, *p,
// a[i], s.f, p->f. An aggregate that is not a place (a call's result, a
// literal) is computed into a temporary, whose place is returned.
func (l *fnLower) place(e Expr) place {
	saved := l.b.Pos()
	defer l.b.SetPos(saved)
	l.b.SetPos(e.Pos())
	switch e := e.(type) {
	case *Ident:
		if v, ok := e.Obj.(*Var); ok {
			switch st := l.vars[v]; st.kind {
			case inSlot:
				return place{l.b.AddrOf(st.local), 0}
			case inPtr:
				return place{st.val, 0}
			}
		}
	case *UnaryExpr:
		if e.Op == OpDeref {
			return place{l.expr(e.X), 0}
		}
	case *IndexExpr:
		var base place
		if _, ok := e.X.Type().(*Pointer); ok {
			base = place{l.expr(e.X), 0}
		} else {
			base = l.place(e.X)
		}
		l.b.SetPos(e.Pos())
		return l.index(base, e.Type(), e.Index)
	case *FieldExpr:
		var base place
		if e.Arrow {
			base = place{l.expr(e.X), 0}
		} else {
			base = l.place(e.X)
		}
		l.b.SetPos(e.Pos())
		return l.at(base, e.Field.Offset)
	}
	if isAggregate(e.Type()) {
		return place{l.expr(e), 0}
	}
	l.errorf(e.Pos(), CodeInternal, "internal compiler error: %s is not in memory", describeExpr(e))
	return place{l.poison(), 0}
}

// index is element idx of the elements of type elem from base: the
// index, extended to 64 bits per its signedness, times the element size.
// A literal index folds into the offset.
func (l *fnLower) index(base place, elem Type, idx Expr) place {
	size := Sizeof(elem)
	if lit, ok := idx.(*IntLit); ok {
		if hi, lo := bits.Mul64(lit.Value, size); hi == 0 && lo <= math.MaxInt32 {
			return l.at(base, lo)
		}
	}
	i := l.widen(l.expr(idx), idx.Type(), ir.I64)
	if size != 1 {
		i = l.b.Op(ir.OpMul, i, l.b.Const(ir.I64, int64(size)))
	}
	return place{l.b.Op(ir.OpPtrAdd, base.base, i), base.off}
}

// widen converts x, an integer of Genesis type from, to the integer type
// to: sign-extended if from is signed, zero-extended otherwise, or
// truncated if to is narrower (§4.4).
func (l *fnLower) widen(x *ir.Value, from Type, to ir.Type) *ir.Value {
	switch n, m := x.Type.Bits(), to.Bits(); {
	case n == m:
		return x
	case n > m:
		return l.b.Cast(ir.OpTrunc, to, x)
	case IsSigned(from):
		return l.b.Cast(ir.OpSext, to, x)
	}
	return l.b.Cast(ir.OpZext, to, x)
}

// ── Operators ──

func (l *fnLower) unary(e *UnaryExpr) *ir.Value {
	switch e.Op {
	case OpNeg:
		if lit, ok := e.X.(*IntLit); ok {
			// -128 is one literal (docs/genesis.md).
			return l.b.Const(irType(e.Type()), -int64(lit.Value))
		}
		x := l.expr(e.X)
		return l.b.Op(ir.OpNeg, x)
	case OpNot, OpCompl:
		x := l.expr(e.X)
		return l.b.Op(ir.OpNot, x)
	case OpDeref:
		return l.load(e.Type(), l.place(e))
	case OpAddr:
		return l.ptr(l.place(e.X))
	}
	l.errorf(e.Pos(), CodeCodegen, "cannot lower operator %s", e.Op)
	return l.poison()
}

// arith maps the arithmetic and bitwise operators to IR ops: signed and
// unsigned variants for / % >>.
var arith = map[Op][2]ir.Op{
	OpAdd: {ir.OpAdd, ir.OpAdd}, OpSub: {ir.OpSub, ir.OpSub}, OpMul: {ir.OpMul, ir.OpMul},
	OpDiv: {ir.OpDivU, ir.OpDivS}, OpRem: {ir.OpRemU, ir.OpRemS},
	OpAnd: {ir.OpAnd, ir.OpAnd}, OpOr: {ir.OpOr, ir.OpOr}, OpXor: {ir.OpXor, ir.OpXor},
	OpShl: {ir.OpShl, ir.OpShl}, OpShr: {ir.OpShrU, ir.OpShrS},
	OpEq: {ir.OpEq, ir.OpEq}, OpNe: {ir.OpNe, ir.OpNe},
	OpLt: {ir.OpLtU, ir.OpLtS}, OpLe: {ir.OpLeU, ir.OpLeS},
	OpGt: {ir.OpGtU, ir.OpGtS}, OpGe: {ir.OpGeU, ir.OpGeS},
}

func (l *fnLower) binary(e *BinaryExpr) *ir.Value {
	switch e.Op {
	case OpAndAnd, OpOrOr:
		// x && y is if x { y } else { false }; x || y is if x { true } else { y }.
		x := l.expr(e.X)
		rhs := func() { l.b.Yield(l.expr(e.Y)) }
		konst := func() { l.b.Yield(l.b.Bool(e.Op == OpOrOr)) }
		if e.Op == OpAndAnd {
			return l.b.If(x, []ir.Type{ir.Bool}, rhs, konst)[0]
		}
		return l.b.If(x, []ir.Type{ir.Bool}, konst, rhs)[0]
	}
	x := l.expr(e.X)
	y := l.expr(e.Y)
	tx := e.X.Type()
	if _, ok := tx.(*Pointer); ok && (e.Op == OpAdd || e.Op == OpSub) {
		// p + n and p - n count bytes (docs/genesis.md).
		if e.Op == OpSub {
			y = l.b.Op(ir.OpNeg, y)
		}
		return l.b.Op(ir.OpPtrAdd, x, y)
	}
	ops, ok := arith[e.Op]
	if !ok {
		l.errorf(e.Pos(), CodeCodegen, "cannot lower operator %s", e.Op)
		return l.poison()
	}
	if e.Op == OpShl || e.Op == OpShr {
		// The amount is taken mod 64, which its low 6 bits decide: any
		// conversion to the shifted type keeps them.
		y = l.widen(y, e.Y.Type(), x.Type)
	}
	op := ops[0]
	if IsSigned(tx) {
		op = ops[1]
	}
	return l.b.Op(op, x, y)
}

// cast lowers `x as T` (§4.4): integers are truncated, or extended per
// the source's signedness; bool is zero-extended; pointers and integers
// convert through i64; pointer to pointer and identity are free.
func (l *fnLower) cast(e *CastExpr) *ir.Value {
	x := l.expr(e.X)
	from, to := e.X.Type(), e.Type()
	_, fromPtr := from.(*Pointer)
	_, toPtr := to.(*Pointer)
	switch {
	case isVoid(to) || isAggregate(to) || Identical(from, to) || fromPtr && toPtr:
		return x
	case IsInteger(to) && (IsInteger(from) || from == Bool):
		return l.widen(x, from, irType(to))
	case IsInteger(from) && toPtr:
		return l.b.Op(ir.OpIntToPtr, l.widen(x, from, ir.I64))
	case fromPtr && IsInteger(to):
		return l.widen(l.b.Op(ir.OpPtrToInt, x), U64, irType(to))
	}
	if irType(from) == irType(to) {
		return x // e.g. between function pointer types of one signature
	}
	l.errorf(e.Pos(), CodeCodegen, "cannot lower a cast from %s to %s", from, to)
	return l.poison()
}

// ── Calls ──

// call lowers a call of a function, of a function pointer, or of a
// variant's constructor. An aggregate result is built in *dst when dst
// is given (memory the call cannot observe), else in a temporary; the
// result is its address.
func (l *fnLower) call(e *CallExpr, dst *place) *ir.Value {
	rt := e.Type()
	if id, ok := e.Fun.(*Ident); ok {
		if v, ok := id.Obj.(*Variant); ok {
			if dst == nil {
				t := l.temp(v.Enum)
				dst = &t
			}
			for i, a := range e.Args {
				l.into(a, l.at(*dst, v.Payload[i].Offset))
			}
			l.b.SetPos(e.Pos())
			l.b.Store(l.b.Const(tagType(v.Enum), int64(v.Index)), dst.base, dst.off)
			return l.ptr(*dst)
		}
	}
	var callee *ir.Func
	var fv *ir.Value
	if id, ok := e.Fun.(*Ident); ok {
		if fn, ok := id.Obj.(*Func); ok {
			callee = l.funcs[fn]
		}
	}
	if callee == nil {
		fv = l.expr(e.Fun)
	}
	ft, ok := e.Fun.Type().(*FuncType)
	if !ok {
		l.errorf(e.Pos(), CodeInternal, "internal compiler error: call of a %s", e.Fun.Type())
		return l.poison()
	}
	var args []*ir.Value
	var res place
	if isAggregate(rt) {
		if dst != nil {
			res = *dst
		} else {
			res = l.temp(rt)
		}
		args = append(args, l.ptr(res))
	}
	for i, a := range e.Args {
		pt := ft.Params[i]
		switch {
		case isVoid(pt):
			l.expr(a)
		case isAggregate(pt):
			// The callee gets its own copy: it may not see later changes.
			tmp := l.temp(pt)
			l.into(a, tmp)
			args = append(args, l.ptr(tmp))
		default:
			args = append(args, l.expr(a))
		}
	}
	l.b.SetPos(e.Pos())
	var rs []*ir.Value
	if callee != nil {
		rs = l.b.Call(callee, args...)
	} else {
		rs = l.b.CallIndirect(fv, args...)
	}
	switch {
	case isAggregate(rt):
		return l.ptr(res)
	case len(rs) == 1:
		return rs[0]
	}
	return nil
}

// ── If and match ──

// ifExpr lowers an if, as an expression (with the value of the branch
// taken) or as a statement (its type is then void or never).
func (l *fnLower) ifExpr(e *IfExpr) *ir.Value {
	c := l.expr(e.Cond)
	results := resultTypes(e.Type())
	branch := func(b Expr) func() {
		if b == nil {
			return nil
		}
		return func() {
			v := l.expr(b)
			if len(results) > 0 {
				l.b.Yield(v)
			}
		}
	}
	rs := l.b.If(c, results, branch(e.Then), branch(e.Else))
	if len(rs) == 1 {
		return rs[0]
	}
	return nil
}

// match lowers a match to a switch: on the value of an integer, on a
// bool zero-extended to i8, or on an enum's tag, whose arms then bind the
// payload. The first arm for a value wins; the first `_` arm is the
// default and the arms after it are unreachable.
func (l *fnLower) match(e *MatchExpr) *ir.Value {
	results := resultTypes(e.Type())
	st := e.X.Type()
	var scrut *ir.Value // the enum's tag is loaded once the cases are known
	var addr place
	if _, ok := st.(*Enum); ok {
		addr = l.place(e.X)
	} else {
		scrut = l.expr(e.X)
		if st == Bool {
			l.b.SetPos(e.Pos())
			scrut = l.b.Cast(ir.OpZext, ir.I8, scrut)
		}
	}
	var scrutType ir.Type
	if en, ok := st.(*Enum); ok {
		scrutType = tagType(en)
	} else {
		scrutType = scrut.Type
	}
	arm := func(a *MatchArm) func() {
		return func() {
			l.b.SetPos(a.Pattern.Pos())
			if vp, ok := a.Pattern.(*VariantPattern); ok {
				for i, b := range vp.Bindings {
					if v, ok := b.Obj.(*Var); ok && b.Name != "_" {
						l.b.SetPos(b.Pos())
						l.bind(v, l.at(addr, vp.Variant.Payload[i].Offset))
					}
				}
			}
			v := l.expr(a.Body)
			if len(results) > 0 {
				l.b.SetPos(a.Body.Pos())
				l.b.Yield(v)
			}
		}
	}
	var cases []ir.Case
	var def func()
	seen := map[int64]bool{}
	for _, a := range e.Arms {
		var val int64
		switch p := a.Pattern.(type) {
		case *WildcardPattern:
			def = arm(a)
		case *IntPattern:
			val = int64(p.Value)
			if p.Neg {
				val = -val
			}
		case *BoolPattern:
			if p.Value {
				val = 1
			}
		case *VariantPattern:
			val = int64(p.Variant.Index)
		}
		if def != nil {
			break
		}
		val = ir.Normalize(scrutType, val)
		if seen[val] {
			continue
		}
		seen[val] = true
		cases = append(cases, ir.Case{Values: []int64{val}, Body: arm(a)})
	}
	if def == nil {
		def = func() { l.unreachable() } // Check requires a _ arm
	}
	l.b.SetPos(e.Pos())
	var rs []*ir.Value
	if len(cases) == 0 {
		// Only `_`: no switch needed, the scrutinee was evaluated.
		rs = l.b.Block("", results, func(string) { def() })
	} else {
		if scrut == nil {
			scrut = l.b.Load(scrutType, addr.base, addr.off)
		}
		rs = l.b.Switch(scrut, results, cases, def)
	}
	if len(rs) == 1 {
		return rs[0]
	}
	return nil
}
