package grimoire

import (
	"github.com/genesis-toolchain/genesis/diag"
	"github.com/genesis-toolchain/genesis/ir"
)

// helpers adds the functions the lowered code calls:
//
//	@grim.min, @grim.max, @grim.sum, @grim.avg (l) -> value   over a list of numbers
//	@grim.to_number(v) -> value                               a number, a numeric string, a bool
//	@grim.merge(base, pre, new) -> value                      base with the keys whose value new changed from pre
//	                                                          (the warnings: base's, then those new added to pre's)
//	@grim.concat(a, b) -> value                               list a, then the elements of list b
//	@grim.unscope(env, env0, names) -> value                  env with names as they were in env0 (or gone)
//
// Each returns an error value (kind "type") for operands it cannot take.
func (l *lowerer) helpers() {
	for _, name := range []string{"min", "max", "sum", "avg"} {
		l.fold(name)
	}
	f := l.m.NewFunc("grim.to_number", dyn, dyn, diag.Pos{})
	b := ir.NewBuilder(f)
	v := f.Params[0]
	kind := b.Builtin("value.kind", v)
	b.If(b.Op(ir.OpEq, kind, b.Const(ir.I64, 2)), nil, func() { b.Return(v) }, nil)
	b.If(b.Op(ir.OpEq, kind, b.Const(ir.I64, 1)), nil, func() {
		b.Return(b.If(b.Builtin("value.truthy", v), dyn, func() { b.Yield(b.NumberValue(1)) }, func() { b.Yield(b.NumberValue(0)) })[0])
	}, nil)
	b.If(b.Op(ir.OpEq, kind, b.Const(ir.I64, 3)), nil, func() {
		p := b.Builtin("json.parse", b.Builtin("str.trim", v))
		b.If(b.Op(ir.OpEq, b.Builtin("value.kind", p), b.Const(ir.I64, 2)), nil, func() { b.Return(p) }, nil)
	}, nil)
	b.Return(b.Builtin("error.new", b.StringValue("type"), b.Builtin("str.concat", b.StringValue("not a number: "), b.Builtin("value.string", v))))

	f = l.m.NewFunc("grim.merge", dyn3, dyn, diag.Pos{})
	b = ir.NewBuilder(f)
	base, pre, nw := f.Params[0], f.Params[1], f.Params[2]
	acc := f.NewVar("acc", ir.Dyn, diag.Pos{})
	i := f.NewVar("i", ir.I64, diag.Pos{})
	b.Set(acc, base)
	keys := b.Builtin("obj.keys", nw)
	n := b.Builtin("list.len", keys)
	b.Loop(b.NewLabel("k"), nil, nil, func(label string, _ []*ir.Value) {
		iv := b.Get(i)
		b.If(b.Op(ir.OpGeS, iv, n), nil, func() { b.Break(label) }, nil)
		k := b.Builtin("list.get", keys, iv)
		x := b.Builtin("obj.get", nw, k)
		same := b.Op(ir.OpAnd, b.Builtin("obj.has", pre, k), b.Builtin("value.eq", b.Builtin("obj.get", pre, k), x))
		b.If(b.Builtin("value.eq", k, b.StringValue(warningsKey)), nil, func() {
			// The warnings a branch added (those after pre's) go after
			// base's, so that no branch's warnings are lost.
			all := f.NewVar("warnings", ir.Dyn, diag.Pos{})
			j := f.NewVar("j", ir.I64, diag.Pos{})
			b.Set(all, b.Builtin("list.new"))
			b.If(b.Builtin("obj.has", b.Get(acc), k), nil, func() { b.Set(all, b.Builtin("obj.get", b.Get(acc), k)) }, nil)
			b.Set(j, b.Builtin("list.len", b.Builtin("obj.get", pre, k)))
			nx := b.Builtin("list.len", x)
			b.Loop(b.NewLabel("w"), nil, nil, func(wl string, _ []*ir.Value) {
				jv := b.Get(j)
				b.If(b.Op(ir.OpGeS, jv, nx), nil, func() { b.Break(wl) }, nil)
				b.Set(all, b.Builtin("list.append", b.Get(all), b.Builtin("list.get", x, jv)))
				b.Set(j, b.Op(ir.OpAdd, jv, b.Const(ir.I64, 1)))
				b.Continue(wl)
			})
			b.Set(acc, b.Builtin("obj.set", b.Get(acc), k, b.Get(all)))
		}, func() {
			b.If(b.Op(ir.OpNot, same), nil, func() { b.Set(acc, b.Builtin("obj.set", b.Get(acc), k, x)) }, nil)
		})
		b.Set(i, b.Op(ir.OpAdd, iv, b.Const(ir.I64, 1)))
		b.Continue(label)
	})
	b.Return(b.Get(acc))

	f = l.m.NewFunc("grim.concat", dyn2, dyn, diag.Pos{})
	b = ir.NewBuilder(f)
	x, y := f.Params[0], f.Params[1]
	out := f.NewVar("out", ir.Dyn, diag.Pos{})
	j := f.NewVar("j", ir.I64, diag.Pos{})
	b.Set(out, x)
	b.Set(j, b.Const(ir.I64, 0))
	ny := b.Builtin("list.len", y)
	b.Loop(b.NewLabel("c"), nil, nil, func(label string, _ []*ir.Value) {
		jv := b.Get(j)
		b.If(b.Op(ir.OpGeS, jv, ny), nil, func() { b.Break(label) }, nil)
		b.Set(out, b.Builtin("list.append", b.Get(out), b.Builtin("list.get", y, jv)))
		b.Set(j, b.Op(ir.OpAdd, jv, b.Const(ir.I64, 1)))
		b.Continue(label)
	})
	b.Return(b.Get(out))

	// grim.unscope(env, env0, names): env after a construct that binds
	// names only inside it (a loop's index, a catch's error): each of
	// names has its value of env0 again, or is gone.
	f = l.m.NewFunc("grim.unscope", dyn3, dyn, diag.Pos{})
	b = ir.NewBuilder(f)
	env, env0, names := f.Params[0], f.Params[1], f.Params[2]
	res := f.NewVar("res", ir.Dyn, diag.Pos{})
	k := f.NewVar("k", ir.I64, diag.Pos{})
	b.Set(res, b.Builtin("obj.new"))
	b.Set(k, b.Const(ir.I64, 0))
	keys = b.Builtin("obj.keys", env)
	nk := b.Builtin("list.len", keys)
	b.Loop(b.NewLabel("u"), nil, nil, func(label string, _ []*ir.Value) {
		kv := b.Get(k)
		b.If(b.Op(ir.OpGeS, kv, nk), nil, func() { b.Break(label) }, nil)
		key := b.Builtin("list.get", keys, kv)
		b.If(b.Builtin("value.contains", names, key), nil, func() {
			b.If(b.Builtin("obj.has", env0, key), nil, func() { b.Set(res, b.Builtin("obj.set", b.Get(res), key, b.Builtin("obj.get", env0, key))) }, nil)
		}, func() {
			b.Set(res, b.Builtin("obj.set", b.Get(res), key, b.Builtin("obj.get", env, key)))
		})
		b.Set(k, b.Op(ir.OpAdd, kv, b.Const(ir.I64, 1)))
		b.Continue(label)
	})
	b.Return(b.Get(res))
}

// fold adds @grim.NAME(l): the minimum, maximum, sum or average of a
// list of numbers (numeric strings count as their number).
func (l *lowerer) fold(name string) {
	f := l.m.NewFunc("grim."+name, dyn, dyn, diag.Pos{})
	b := ir.NewBuilder(f)
	list := f.Params[0]
	typeErr := func(msg string) *ir.Value {
		return b.Builtin("error.new", b.StringValue("type"), b.StringValue(name+": "+msg))
	}
	b.If(b.Op(ir.OpNe, b.Builtin("value.kind", list), b.Const(ir.I64, 4)), nil, func() { b.Return(typeErr("not a list of numbers")) }, nil)
	n := b.Builtin("list.len", list)
	if name == "min" || name == "max" {
		b.If(b.Op(ir.OpEq, n, b.Const(ir.I64, 0)), nil, func() { b.Return(typeErr("no numbers")) }, nil)
	}
	acc := f.NewVar("acc", ir.Dyn, diag.Pos{})
	i := f.NewVar("i", ir.I64, diag.Pos{})
	if name == "min" || name == "max" {
		b.Set(acc, b.UnitValue())
	} else {
		b.Set(acc, b.NumberValue(0))
	}
	b.Loop(b.NewLabel("e"), nil, nil, func(label string, _ []*ir.Value) {
		iv := b.Get(i)
		b.If(b.Op(ir.OpGeS, iv, n), nil, func() { b.Break(label) }, nil)
		x := b.CallSym("grim.to_number", dyn, b.Builtin("list.get", list, iv))[0]
		b.If(b.Builtin("error.is", x), nil, func() { b.Return(x) }, nil)
		a := b.Get(acc)
		switch name {
		case "sum", "avg":
			b.Set(acc, b.Builtin("num.add", a, x))
		default:
			better := b.Builtin("value.compare", x, a)
			op := ir.OpLtS
			if name == "max" {
				op = ir.OpGtS
			}
			take := b.Op(ir.OpOr, b.Builtin("value.eq", a, b.UnitValue()), b.Op(op, better, b.Const(ir.I64, 0)))
			b.If(take, nil, func() { b.Set(acc, x) }, nil)
		}
		b.Set(i, b.Op(ir.OpAdd, iv, b.Const(ir.I64, 1)))
		b.Continue(label)
	})
	if name == "avg" {
		b.If(b.Op(ir.OpEq, n, b.Const(ir.I64, 0)), nil, func() { b.Return(b.NumberValue(0)) }, nil)
		b.Return(b.Builtin("num.div", b.Get(acc), b.Builtin("num.from_int", n)))
		return
	}
	b.Return(b.Get(acc))
}
