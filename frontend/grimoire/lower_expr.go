package grimoire

import (
	"fmt"

	"github.com/genesis-toolchain/genesis/ir"
)

// expr lowers an expression to its value. A failure (an undefined name,
// an operand of the wrong kind, a division by zero, a failed query)
// raises: the value returned is never an error.
func (fl *funcLowerer) expr(e Expr) *ir.Value {
	b := fl.b
	b.SetPos(e.Pos())
	switch e := e.(type) {
	case *NumberLit:
		return b.NumberValue(ratFloat(e.Value))
	case *UnitLit:
		if e.Value != nil {
			return b.NumberValue(ratFloat(e.Value))
		}
		return b.NumberValue(ratFloat(e.Amount))
	case *StringLit:
		return b.StringValue(e.Value)
	case *BoolLit:
		return b.ConstValue(ir.Literal{Kind: ir.LitBool, Int: boolInt(e.Value)})
	case *AddressLit:
		return b.StringValue(e.Value)
	case *VenueRef:
		return b.StringValue(e.Name)
	case *Advisory:
		return fl.advisory(e, nil)
	case *ListLit:
		l := b.Builtin("list.new")
		for _, x := range e.Elems {
			l = b.Builtin("list.append", l, fl.expr(x))
		}
		return l
	case *ObjectLit:
		o := b.Builtin("obj.new")
		for _, en := range e.Entries {
			o = fl.set(o, en.Key.Name, fl.expr(en.Value))
		}
		return o
	case *Ident:
		return fl.ident(e)
	case *UnaryExpr:
		x := fl.expr(e.X)
		b.SetPos(e.OpPos)
		switch e.Op {
		case "-":
			return fl.check(b.Builtin("num.neg", x))
		case "+":
			return fl.check(b.Builtin("num.add", b.NumberValue(0), x))
		default: // not
			return b.Builtin("value.bool", b.Op(ir.OpNot, b.Builtin("value.truthy", x)))
		}
	case *BinaryExpr:
		return fl.binary(e)
	case *CondExpr:
		c := fl.expr(e.Cond)
		return b.If(b.Builtin("value.truthy", c), dyn, func() { b.Yield(fl.expr(e.Then)) }, func() { b.Yield(fl.expr(e.Else)) })[0]
	case *MemberExpr:
		if id, ok := e.X.(*Ident); ok && id.Ref == RefStateNS {
			return fl.stateNS(e)
		}
		if inner, ok := e.X.(*MemberExpr); ok {
			if id, ok := inner.X.(*Ident); ok && id.Ref == RefStateNS {
				// state.persistent.x is the state variable x.
				return fl.get(b.Get(fl.st), e.Name.Name)
			}
		}
		x := fl.expr(e.X)
		b.SetPos(e.Name.Pos())
		return fl.get(x, e.Name.Name)
	case *IndexExpr:
		x := fl.expr(e.X)
		i := fl.expr(e.Index)
		isList := b.Op(ir.OpEq, b.Builtin("value.kind", x), b.Const(ir.I64, 4))
		return b.If(isList, dyn, func() {
			b.Yield(fl.check(b.Builtin("list.get", x, b.Builtin("num.to_int", i))))
		}, func() {
			b.Yield(b.Builtin("obj.get", x, b.Builtin("value.string", i)))
		})[0]
	case *CallExpr:
		return fl.call(e)
	}
	panic(fmt.Sprintf("grimoire: no lowering for expression %T", e))
}

func boolInt(x bool) int64 {
	if x {
		return 1
	}
	return 0
}

// truthy lowers a condition to a bool.
func (fl *funcLowerer) truthy(e Expr) *ir.Value {
	return fl.b.Builtin("value.truthy", fl.expr(e))
}

// ident is the value of a name, by what CheckSpell resolved it to.
func (fl *funcLowerer) ident(id *Ident) *ir.Value {
	b := fl.b
	switch id.Ref {
	case RefLocal, RefIterator:
		env := b.Get(fl.env)
		name := fl.str(id.Name)
		return b.If(b.Builtin("obj.has", env, name), dyn, func() {
			b.Yield(b.Builtin("obj.get", env, name))
		}, func() {
			fl.fail("undefined", fl.str(id.Name+" is not bound"))
		})[0]
	case RefState:
		return fl.get(b.Get(fl.st), id.Name)
	case RefParams:
		return fl.get(b.Get(fl.ctx), "params")
	case RefLimits:
		return fl.get(b.Get(fl.ctx), "limits")
	case RefLimit:
		return fl.get(fl.get(b.Get(fl.ctx), "limits"), id.Decl.(*Limit).Name.Name)
	case RefStateNS:
		return fl.stateObject(b.Get(fl.st))
	case RefAssets:
		var names []*ir.Value
		if fl.spell.Assets != nil {
			for _, a := range fl.spell.Assets.Items {
				names = append(names, fl.str(a.Name.Name))
			}
		}
		return fl.list(names...)
	case RefAsset, RefVenue:
		return fl.str(id.Name)
	case RefEvent:
		return fl.get(b.Get(fl.ctx), "event")
	}
	// Undefined (allowed in a try body with a catch, D20): a failure of
	// the run, which the catch handles.
	// The failure is wrapped in an if so that the code of the rest of
	// the expression, which the verifier requires to be reachable, may
	// follow it.
	b.If(b.Bool(true), nil, func() { fl.fail("undefined", fl.str(id.Name+" is not defined")) }, nil)
	return b.UnitValue()
}

// stateObject builds `state`: {"persistent": {…}, "ephemeral": {…}} from
// the state variables st.
func (fl *funcLowerer) stateObject(st *ir.Value) *ir.Value {
	pers, eph := fl.b.Builtin("obj.new"), fl.b.Builtin("obj.new")
	if fl.spell.State != nil {
		for _, v := range fl.spell.State.Items {
			x := fl.get(st, v.Name.Name)
			if v.Scope == Persistent {
				pers = fl.set(pers, v.Name.Name, x)
			} else {
				eph = fl.set(eph, v.Name.Name, x)
			}
		}
	}
	return fl.obj("persistent", pers, "ephemeral", eph)
}

// stateNS is `state.persistent` or `state.ephemeral`.
func (fl *funcLowerer) stateNS(e *MemberExpr) *ir.Value {
	return fl.get(fl.stateObject(fl.b.Get(fl.st)), e.Name.Name)
}

// binary lowers the binary operators with JavaScript's number semantics
// (float64), as the reference runtime has them; `+` of a string
// concatenates.
func (fl *funcLowerer) binary(e *BinaryExpr) *ir.Value {
	b := fl.b
	switch e.Op {
	case "and", "or":
		x := fl.truthy(e.X)
		b.SetPos(e.OpPos)
		r := b.If(x, []ir.Type{ir.Bool}, func() {
			if e.Op == "and" {
				b.Yield(fl.truthy(e.Y))
			} else {
				b.Yield(b.Bool(true))
			}
		}, func() {
			if e.Op == "and" {
				b.Yield(b.Bool(false))
			} else {
				b.Yield(fl.truthy(e.Y))
			}
		})[0]
		return b.Builtin("value.bool", r)
	}
	x := fl.expr(e.X)
	y := fl.expr(e.Y)
	b.SetPos(e.OpPos)
	switch e.Op {
	case "+":
		isStr := func(v *ir.Value) *ir.Value {
			return b.Op(ir.OpEq, b.Builtin("value.kind", v), b.Const(ir.I64, 3))
		}
		return b.If(b.Op(ir.OpOr, isStr(x), isStr(y)), dyn, func() {
			b.Yield(b.Builtin("str.concat", x, y))
		}, func() {
			b.Yield(fl.check(b.Builtin("num.add", x, y)))
		})[0]
	case "-":
		return fl.check(b.Builtin("num.sub", x, y))
	case "*":
		return fl.check(b.Builtin("num.mul", x, y))
	case "/":
		return fl.check(b.Builtin("num.div", x, y))
	case "%":
		return fl.check(b.Builtin("num.mod", x, y))
	case "==":
		return b.Builtin("value.bool", b.Builtin("value.eq", x, y))
	case "!=":
		return b.Builtin("value.bool", b.Op(ir.OpNot, b.Builtin("value.eq", x, y)))
	}
	c := b.Builtin("value.compare", x, y)
	zero := b.Const(ir.I64, 0)
	var r *ir.Value
	switch e.Op {
	case "<":
		r = b.Op(ir.OpLtS, c, zero)
	case ">":
		r = b.Op(ir.OpGtS, c, zero)
	case "<=":
		r = b.Op(ir.OpLeS, c, zero)
	case ">=":
		r = b.Op(ir.OpGeS, c, zero)
	default:
		panic("grimoire: no lowering for operator " + e.Op)
	}
	return b.Builtin("value.bool", r)
}

// call lowers a built-in function. The queries of the world (balance,
// price, apy, positions, debts, health factors) are tool calls named
// after the function, with the arguments by position under "args".
func (fl *funcLowerer) call(e *CallExpr) *ir.Value {
	b := fl.b
	var args []*ir.Value
	for _, a := range e.Args {
		args = append(args, fl.expr(a.Value))
	}
	b.SetPos(e.Fun.Pos())
	name := e.Fun.Name
	switch name {
	case "min", "max", "sum", "avg":
		l := fl.list(args...)
		if len(args) == 1 {
			l = args[0]
		}
		v := b.CallSym("grim."+name, dyn, l)[0]
		return fl.check(v)
	case "abs":
		x := args[0]
		neg := b.Op(ir.OpLtS, b.Builtin("value.compare", x, b.NumberValue(0)), b.Const(ir.I64, 0))
		return b.If(neg, dyn, func() { b.Yield(fl.check(b.Builtin("num.neg", x))) }, func() {
			b.Yield(fl.check(b.Builtin("num.add", x, b.NumberValue(0))))
		})[0]
	case "to_number", "to_bigint":
		return fl.check(b.CallSym("grim.to_number", dyn, args[0])[0])
	}
	step := fl.step(name, e.Fun.Pos())
	r := b.Effect(ir.OpTool, step, fl.iters, fl.str(name), fl.obj("args", fl.list(args...)))
	return fl.check(r)
}
