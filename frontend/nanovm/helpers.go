package nanovm

import (
	"github.com/genesis-toolchain/genesis/diag"
	"github.com/genesis-toolchain/genesis/ir"
)

// helper returns the module's function of that name, building it on
// first use. The helpers are the parts of the run-time semantics that
// every program shares: reference resolution and Python-like
// comparisons.
func (l *lowerer) helper(name string) *ir.Func {
	if f := l.helpers[name]; f != nil {
		return f
	}
	var f *ir.Func
	switch name {
	case fnRef:
		f = l.buildRef()
	case fnSubst:
		f = l.buildSubst()
	case fnLookup:
		f = l.buildLookup()
	case fnOrder:
		f = l.buildOrder()
	case fnContains:
		f = l.buildContains()
	default:
		panic("nanovm: unknown helper " + name)
	}
	l.helpers[name] = f
	return f
}

func (l *lowerer) newHelper(name string, params []string, results ...ir.Type) (*ir.Func, *ir.Builder) {
	ts := make([]ir.Type, len(params))
	for i := range ts {
		ts[i] = ir.Dyn
	}
	f := l.m.NewFunc(name, ts, results, diag.Pos{})
	for i, p := range params {
		f.Params[i].Name = p
	}
	return f, ir.NewBuilder(f)
}

// buildRef builds
//
//	func @nanovm.ref(%outputs, %data, %root, %path: dyn) -> dyn
//
// the value of the reference $root.path… (path a list of segments), or an
// error value (kind "unresolved") when it names nothing. A root that is
// the id of a step that has run names that step's output, and a first
// segment "output" after it is that output itself ($s and $s.output are
// the same); any other root is a key of the data (the context, the
// output_keys, __webhook__). Segments index objects by key and lists by
// position.
func (l *lowerer) buildRef() *ir.Func {
	f, b := l.newHelper(fnRef, []string{"outputs", "data", "root", "path"}, ir.Dyn)
	outputs, data, root, path := f.Params[0], f.Params[1], f.Params[2], f.Params[3]
	zero, one := b.Const(ir.I64, 0), b.Const(ir.I64, 1)
	unresolved := func(what *ir.Value) {
		b.Return(b.Builtin("error.new", b.StringValue("unresolved"), what))
	}
	isStep := b.Builtin("obj.has", outputs, root)
	start := b.If(isStep, []ir.Type{ir.Dyn, ir.I64}, func() {
		v := b.Builtin("obj.get", outputs, root)
		nonEmpty := b.Op(ir.OpGtS, b.Builtin("list.len", path), zero)
		skip := b.If(nonEmpty, []ir.Type{ir.Bool}, func() {
			b.Yield(b.Builtin("value.eq", b.Builtin("list.get", path, zero), b.StringValue("output")))
		}, func() {
			b.Yield(b.Bool(false))
		})
		b.Yield(v, b.Cast(ir.OpZext, ir.I64, skip[0]))
	}, func() {
		inData := b.Builtin("obj.has", data, root)
		b.If(b.Op(ir.OpNot, inData), nil, func() { unresolved(root) }, nil)
		b.Yield(b.Builtin("obj.get", data, root), zero)
	})
	r := b.Loop("walk", start, []ir.Type{ir.Dyn}, func(walk string, ps []*ir.Value) {
		v, i := ps[0], ps[1]
		done := b.Op(ir.OpGeS, i, b.Builtin("list.len", path))
		b.If(done, nil, func() { b.Break(walk, v) }, nil)
		seg := b.Builtin("list.get", path, i)
		kind := b.Builtin("value.kind", v)
		next := b.Op(ir.OpAdd, i, one)
		isObj := b.Op(ir.OpEq, kind, b.Const(ir.I64, kindObject))
		b.If(isObj, nil, func() {
			has := b.Builtin("obj.has", v, seg)
			b.If(has, nil, func() { b.Continue(walk, b.Builtin("obj.get", v, seg), next) }, nil)
		}, nil)
		isList := b.Op(ir.OpEq, kind, b.Const(ir.I64, kindList))
		b.If(isList, nil, func() {
			num := b.Builtin("json.parse", seg)
			isNum := b.Op(ir.OpEq, b.Builtin("value.kind", num), b.Const(ir.I64, kindNumber))
			b.If(isNum, nil, func() {
				idx := b.Builtin("num.to_int", num)
				whole := b.Builtin("value.eq", b.Builtin("num.from_int", idx), num)
				b.If(whole, nil, func() {
					w := b.Builtin("list.get", v, idx)
					b.If(b.Op(ir.OpNot, b.Builtin("error.is", w)), nil, func() { b.Continue(walk, w, next) }, nil)
				}, nil)
			}, nil)
		}, nil)
		unresolved(seg)
	})
	b.Return(r...)
	return f
}

// buildSubst builds
//
//	func @nanovm.subst(%outputs, %data, %root, %path, %text: dyn) -> dyn
//
// a reference of a template: its value, or its text (the reference as
// written) when it names nothing, which nano-vm leaves in place.
func (l *lowerer) buildSubst() *ir.Func {
	f, b := l.newHelper(fnSubst, []string{"outputs", "data", "root", "path", "text"}, ir.Dyn)
	ref := l.helper(fnRef)
	r := b.Call(ref, f.Params[:4]...)[0]
	b.If(b.Builtin("error.is", r), nil, func() { b.Return(f.Params[4]) }, nil)
	b.Return(r)
	return f
}

// buildLookup builds
//
//	func @nanovm.lookup(%outputs, %data, %root, %path: dyn) -> dyn
//
// a reference of a condition: its value, or None (unit) when it names
// nothing.
func (l *lowerer) buildLookup() *ir.Func {
	f, b := l.newHelper(fnLookup, []string{"outputs", "data", "root", "path"}, ir.Dyn)
	ref := l.helper(fnRef)
	r := b.Call(ref, f.Params...)[0]
	b.If(b.Builtin("error.is", r), nil, func() { b.Return(b.UnitValue()) }, nil)
	b.Return(r)
	return f
}

// buildOrder builds
//
//	func @nanovm.order(%a, %b: dyn) -> i64
//
// -1, 0 or 1 as a orders before, with or after b, when both are numbers
// or both strings; 2 when they cannot be ordered (Python's TypeError).
func (l *lowerer) buildOrder() *ir.Func {
	f, b := l.newHelper(fnOrder, []string{"a", "b"}, ir.I64)
	x, y := f.Params[0], f.Params[1]
	kx, ky := b.Builtin("value.kind", x), b.Builtin("value.kind", y)
	same := b.Op(ir.OpEq, kx, ky)
	num := b.Op(ir.OpEq, kx, b.Const(ir.I64, kindNumber))
	str := b.Op(ir.OpEq, kx, b.Const(ir.I64, kindString))
	ok := b.Op(ir.OpAnd, same, b.Op(ir.OpOr, num, str))
	b.If(ok, nil, func() { b.Return(b.Builtin("value.compare", x, y)) }, nil)
	b.Return(b.Const(ir.I64, 2))
	return f
}

// buildContains builds
//
//	func @nanovm.contains(%haystack, %needle: dyn) -> i64
//
// 1 when needle is in haystack (a substring of a string, an element of a
// list, a key of an object), 0 when not, -1 when the question has no
// answer (haystack no container, or a string searched for a non-string:
// Python's TypeError).
func (l *lowerer) buildContains() *ir.Func {
	f, b := l.newHelper(fnContains, []string{"haystack", "needle"}, ir.I64)
	h, n := f.Params[0], f.Params[1]
	kh := b.Builtin("value.kind", h)
	found := func() { b.Return(b.Cast(ir.OpZext, ir.I64, b.Builtin("value.contains", h, n))) }
	isStr := b.Op(ir.OpEq, kh, b.Const(ir.I64, kindString))
	b.If(isStr, nil, func() {
		needleStr := b.Op(ir.OpEq, b.Builtin("value.kind", n), b.Const(ir.I64, kindString))
		b.If(needleStr, nil, found, nil)
		b.Return(b.Const(ir.I64, -1))
	}, nil)
	isList := b.Op(ir.OpEq, kh, b.Const(ir.I64, kindList))
	isObj := b.Op(ir.OpEq, kh, b.Const(ir.I64, kindObject))
	b.If(b.Op(ir.OpOr, isList, isObj), nil, found, nil)
	b.Return(b.Const(ir.I64, -1))
	return f
}
