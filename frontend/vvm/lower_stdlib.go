package vvm

import (
	"strconv"

	"github.com/genesis-toolchain/genesis/diag"
	"github.com/genesis-toolchain/genesis/ir"
)

// ── The standard library (spec.md §14) ──

// stdlibParams are the parameters of the standard-library functions
// that take positional arguments, in order; a trailing "?" marks an
// optional one.
var stdlibParams = map[string][]string{
	"range":  {"n"},
	"len":    {"x"},
	"map":    {"items", "f"},
	"pmap":   {"items", "f"},
	"filter": {"items", "pred"},
	"reduce": {"items", "f", "init?"},
	"refine": {"seed", "max", "done", "step"},
}

// builtin lowers a call of a standard-library function.
func (fl *funcLowerer) builtin(e *CallExpr) *ir.Value {
	b := fl.b
	name := e.Fun.Name
	switch name {
	case "pack":
		// pack(a, b, k=v): {"a": a, "b": b, "k": v} (§14.1).
		o := b.Builtin("obj.new")
		for _, a := range e.Args {
			id, ok := a.(*Ident)
			if !ok {
				continue // rejected by Check
			}
			v := fl.read(id)
			o = b.Builtin("obj.set", o, b.StringValue(id.Name), v)
		}
		for _, kw := range e.Kwargs {
			v := fl.expr(kw.Value)
			o = b.Builtin("obj.set", o, b.StringValue(kw.Name), v)
		}
		return o
	case "perm":
		// perm(…): the permissions object with the portable defaults
		// (§14.0); positional arguments are not part of it.
		o := b.Builtin("obj.new")
		for _, k := range []string{"read", "write", "execute"} {
			o = b.Builtin("obj.set", o, b.StringValue(k), b.Builtin("list.new"))
		}
		for _, k := range []string{"bash", "network"} {
			o = b.Builtin("obj.set", o, b.StringValue(k), b.StringValue("deny"))
		}
		for _, a := range e.Args {
			fl.expr(a)
		}
		for _, kw := range e.Kwargs {
			v := fl.expr(kw.Value)
			o = b.Builtin("obj.set", o, b.StringValue(kw.Name), v)
		}
		return o
	}
	args, ok := fl.bindArgs(e, name, stdlibParams[name])
	if !ok {
		return b.UnitValue()
	}
	b.SetPos(e.Lparen)
	switch name {
	case "range":
		return fl.checked(b.CallSym("vvm.range", dyn2, args[0]))
	case "len":
		return fl.checked(b.CallSym("vvm.len", dyn2, args[0]))
	case "map", "filter":
		return fl.mapFilter(args[0], args[1], name == "filter")
	case "pmap":
		return fl.pmap(args[0], args[1], e)
	case "reduce":
		return fl.reduce(args[0], args[1], args[2])
	case "refine":
		return fl.refine(args[0], args[1], args[2], args[3])
	}
	panic("vvm: no lowering for the standard-library function " + name)
}

// requireList raises thrown when items is not a list.
func (fl *funcLowerer) requireList(items *ir.Value, what string) {
	fl.raiseIf(fl.b.CallSym("vvm.list", dyn, items, fl.b.StringValue(what))[0])
}

// applyTo calls the function value f with the positional arguments args.
func (fl *funcLowerer) applyTo(f *ir.Value, args ...*ir.Value) *ir.Value {
	b := fl.b
	l := b.Builtin("list.new")
	for _, a := range args {
		l = b.Builtin("list.append", l, a)
	}
	return fl.checked(b.CallSym("vvm.apply", dyn2, f, l, b.Builtin("obj.new"), fl.it))
}

// isError is whether v is a VVM error value.
func (fl *funcLowerer) isError(v *ir.Value) *ir.Value {
	return fl.b.CallSym("vvm.is_error", []ir.Type{ir.Bool}, v)[0]
}

// mapFilter is map(items, f) or filter(items, pred) (§14.3): f on each
// item in order; an error value result is returned at once (fail fast).
func (fl *funcLowerer) mapFilter(items, f *ir.Value, filter bool) *ir.Value {
	b := fl.b
	what := "map"
	if filter {
		what = "filter"
	}
	fl.requireList(items, "the items of "+what)
	n := b.Builtin("list.len", items)
	return b.Loop(fl.label(what), []*ir.Value{b.Const(ir.I64, 0), b.Builtin("list.new")}, dyn, func(label string, ps []*ir.Value) {
		i, acc := ps[0], ps[1]
		b.If(b.Op(ir.OpGeS, i, n), nil, func() { b.Break(label, acc) }, nil)
		x := b.Builtin("list.get", items, i)
		r := fl.applyTo(f, x)
		b.If(fl.isError(r), nil, func() { b.Break(label, r) }, nil)
		next := b.Op(ir.OpAdd, i, b.Const(ir.I64, 1))
		if !filter {
			b.Continue(label, next, b.Builtin("list.append", acc, r))
			return
		}
		keep := fl.checkedBool(b.CallSym("vvm.bool", []ir.Type{ir.Bool, ir.Dyn}, r, b.StringValue("the result of filter's predicate")))
		acc2 := b.If(keep, dyn, func() { b.Yield(b.Builtin("list.append", acc, x)) }, func() { b.Yield(acc) })[0]
		b.Continue(label, next, acc2)
	})[0]
}

// reduce is reduce(items, f, init=…) (§14.3).
func (fl *funcLowerer) reduce(items, f, init *ir.Value) *ir.Value {
	b := fl.b
	fl.requireList(items, "the items of reduce")
	n := b.Builtin("list.len", items)
	start, acc := b.Const(ir.I64, 0), init
	if init == nil {
		b.If(b.Op(ir.OpEq, n, b.Const(ir.I64, 0)), nil, func() {
			fl.thrown("reduce of an empty list needs init")
		}, nil)
		start, acc = b.Const(ir.I64, 1), b.Builtin("list.get", items, b.Const(ir.I64, 0))
	}
	return b.Loop(fl.label("reduce"), []*ir.Value{start, acc}, dyn, func(label string, ps []*ir.Value) {
		i, acc := ps[0], ps[1]
		b.If(b.Op(ir.OpGeS, i, n), nil, func() { b.Break(label, acc) }, nil)
		r := fl.applyTo(f, acc, b.Builtin("list.get", items, i))
		b.If(fl.isError(r), nil, func() { b.Break(label, r) }, nil)
		b.Continue(label, b.Op(ir.OpAdd, i, b.Const(ir.I64, 1)), r)
	})[0]
}

// refine is refine(seed, max, done, step), the reference implementation
// of §14.2: up to max rounds of step, stopping when done says true.
func (fl *funcLowerer) refine(seed, max, done, step *ir.Value) *ir.Value {
	b := fl.b
	rounds := fl.checked(b.CallSym("vvm.range", dyn2, max))
	n := b.Builtin("list.len", rounds)
	return b.Loop(fl.label("refine"), []*ir.Value{b.Const(ir.I64, 0), seed}, dyn, func(label string, ps []*ir.Value) {
		i, current := ps[0], ps[1]
		b.If(b.Op(ir.OpGeS, i, n), nil, func() { b.Break(label, current) }, nil)
		iv := b.Builtin("num.from_int", i)
		ok := fl.applyTo(done, current, iv)
		stop := fl.checkedBool(b.CallSym("vvm.bool", []ir.Type{ir.Bool, ir.Dyn}, ok, b.StringValue("the result of refine's done")))
		b.If(stop, nil, func() { b.Break(label, current) }, nil)
		next := fl.applyTo(step, current, iv)
		b.Continue(label, b.Op(ir.OpAdd, i, b.Const(ir.I64, 1)), next)
	})[0]
}

// pmapLimit bounds the calls a pmap runs at once: a map over a long
// list must not start hundreds of model calls together.
const pmapLimit = 8

// pmap is pmap(items, f) (§14.3): one parallel branch per item, at most
// pmapLimit at once, the results in the items' order; the first raised error (in that order)
// raises, else the first error value is the result.
func (fl *funcLowerer) pmap(items, f *ir.Value, e *CallExpr) *ir.Value {
	b := fl.b
	fl.requireList(items, "the items of pmap")
	n := b.Builtin("list.len", items)
	packed := b.Loop(fl.label("pack"), []*ir.Value{b.Const(ir.I64, 0), b.Builtin("list.new")}, dyn, func(label string, ps []*ir.Value) {
		i, acc := ps[0], ps[1]
		b.If(b.Op(ir.OpGeS, i, n), nil, func() { b.Break(label, acc) }, nil)
		p := b.Builtin("obj.set", b.Builtin("obj.new"), b.StringValue("f"), f)
		p = b.Builtin("obj.set", p, b.StringValue("x"), b.Builtin("list.get", items, i))
		p = b.Builtin("obj.set", p, b.StringValue("it"), fl.it)
		b.Continue(label, b.Op(ir.OpAdd, i, b.Const(ir.I64, 1)), b.Builtin("list.append", acc, p))
	})[0]
	b.SetPos(e.Fun.NamePos)
	results := b.ParallelEach("pmap", nil, b.Const(ir.I64, pmapLimit), packed, fl.l.pmapBranch())
	return b.Loop(fl.label("pmap"), []*ir.Value{b.Const(ir.I64, 0), b.Builtin("list.new"), b.UnitValue()}, dyn,
		func(label string, ps []*ir.Value) {
			i, acc, firstErr := ps[0], ps[1], ps[2]
			b.If(b.Op(ir.OpGeS, i, n), nil, func() {
				none := b.Op(ir.OpEq, b.Builtin("value.kind", firstErr), b.Const(ir.I64, 0))
				b.Break(label, b.If(none, dyn, func() { b.Yield(acc) }, func() { b.Yield(firstErr) })[0])
			}, nil)
			v, raised := branchResult(b, b.Builtin("list.get", results, i))
			fl.raiseIf(raised)
			isFirst := b.Op(ir.OpAnd, fl.isError(v), b.Op(ir.OpEq, b.Builtin("value.kind", firstErr), b.Const(ir.I64, 0)))
			firstErr2 := b.If(isFirst, dyn, func() { b.Yield(v) }, func() { b.Yield(firstErr) })[0]
			b.Continue(label, b.Op(ir.OpAdd, i, b.Const(ir.I64, 1)), b.Builtin("list.append", acc, v), firstErr2)
		})[0]
}

// pmapBranch returns the branch function of pmap blocks,
//
//	func @vvm.pmap_branch(%p: dyn) -> dyn
//
// which applies p.f to p.x with it = p.it and returns the result, or
// raisedResult of what it raised, building it on first use.
func (l *lowerer) pmapBranch() string {
	const name = "vvm.pmap_branch"
	if l.m.Func(name) != nil {
		return name
	}
	// The branch is no construct of the program: it has no position.
	f := l.m.NewFunc(name, dyn, dyn, diag.Pos{})
	p := f.Params[0]
	p.Name = "p"
	b := ir.NewBuilder(f)
	get := func(k string) *ir.Value { return b.Builtin("obj.get", p, b.StringValue(k)) }
	args := b.Builtin("list.append", b.Builtin("list.new"), get("x"))
	r := b.CallSym("vvm.apply", dyn2, get("f"), args, b.Builtin("obj.new"), get("it"))
	raised := b.Op(ir.OpNe, b.Builtin("value.kind", r[1]), b.Const(ir.I64, 0))
	b.If(raised, nil, func() { b.Return(raisedResult(b, r[1])) }, nil)
	b.Return(r[0])
	return name
}

// ── Parallel blocks (spec-newer.md §12.5) ──

// parallelStmt runs each branch's expression in a branch of one parallel
// block, then builds the result object by the join strategy and failure
// policy. Joins are decided in branch order, not completion order, so a
// run is reproducible (docs/vvm.md).
func (fl *funcLowerer) parallelStmt(s *ParallelStmt) {
	b := fl.b
	// The branches read the locals they name; those values travel in
	// the block's argument.
	var free []*Symbol
	seen := map[*Symbol]bool{}
	for _, br := range s.Branches {
		inspect(br.Value, func(n Node) bool {
			id, ok := n.(*Ident)
			if !ok || id.Sym == nil || seen[id.Sym] {
				return true
			}
			_, isVar := fl.vars[id.Sym]
			_, isCap := fl.caps[id.Sym]
			if isVar || isCap {
				seen[id.Sym] = true
				free = append(free, id.Sym)
			}
			return true
		})
	}
	env := fl.env
	if fl.top {
		env = fl.moduleEnv()
	}
	caps := b.Builtin("list.new")
	for _, sym := range free {
		caps = b.Builtin("list.append", caps, fl.symValue(sym))
	}
	arg := b.Builtin("obj.set", b.Builtin("obj.new"), b.StringValue("it"), fl.it)
	arg = b.Builtin("obj.set", arg, b.StringValue("env"), env)
	arg = b.Builtin("obj.set", arg, b.StringValue("caps"), caps)
	funcs := make([]string, len(s.Branches))
	for i, br := range s.Branches {
		funcs[i] = fl.branchFunc(s, br, free)
	}
	b.SetPos(s.ParallelPos)
	step := "parallel"
	if s.As != nil {
		step = s.As.Name
	}
	results := b.Parallel(step, nil, b.Const(ir.I64, 0), arg, funcs)
	vals := make([]*ir.Value, len(s.Branches))
	for i, br := range s.Branches {
		b.SetPos(br.Target.NamePos)
		v, raised := branchResult(b, b.Builtin("list.get", results, b.Const(ir.I64, int64(i))))
		switch s.OnFail {
		case "continue":
			// A raised error becomes the branch's error value.
			failed := fl.raised(raised)
			v = b.If(failed, dyn, func() { b.Yield(raised) }, func() { b.Yield(v) })[0]
		case "ignore":
			failed := fl.raised(raised)
			failed = b.Op(ir.OpOr, failed, fl.isError(v))
			v = b.If(failed, dyn, func() { b.Yield(b.UnitValue()) }, func() { b.Yield(v) })[0]
		default: // fail-fast: the first raised error, in branch order, raises
			fl.raiseIf(raised)
		}
		vals[i] = v
	}
	b.SetPos(s.ParallelPos)
	all := b.Builtin("obj.new")
	for i, br := range s.Branches {
		all = b.Builtin("obj.set", all, b.StringValue(br.Target.Name), vals[i])
	}
	var result *ir.Value
	switch s.Join {
	case "first":
		result = fl.firstWinner(s, vals, 0, all)
	case "any":
		count := s.Count
		if count <= 0 {
			count = 1
		}
		done := b.Builtin("list.new")
		for i, br := range s.Branches {
			ok := b.Op(ir.OpNot, fl.isError(vals[i]))
			room := b.Op(ir.OpLtS, b.Builtin("list.len", done), b.Const(ir.I64, int64(count)))
			name := b.StringValue(br.Target.Name)
			done = b.If(b.Op(ir.OpAnd, ok, room), dyn, func() { b.Yield(b.Builtin("list.append", done, name)) },
				func() { b.Yield(done) })[0]
		}
		result = b.Builtin("obj.set", b.Builtin("obj.new"), b.StringValue("_completed"), done)
		result = b.CallSym("vvm.merge", dyn, result, all)[0]
	default:
		result = all
	}
	if s.As != nil && s.As.Sym != nil {
		fl.assign(s.As.Sym, result)
	}
}

// firstWinner builds join="first"'s result from branch i on: the first
// branch whose value is no error value wins, {"_winner": name, name:
// value}; when none does, every branch's error value.
func (fl *funcLowerer) firstWinner(s *ParallelStmt, vals []*ir.Value, i int, all *ir.Value) *ir.Value {
	b := fl.b
	if i == len(vals) {
		return all
	}
	name := s.Branches[i].Target.Name
	return b.If(fl.isError(vals[i]), dyn, func() {
		b.Yield(fl.firstWinner(s, vals, i+1, all))
	}, func() {
		o := b.Builtin("obj.set", b.Builtin("obj.new"), b.StringValue("_winner"), b.StringValue(name))
		b.Yield(b.Builtin("obj.set", o, b.StringValue(name), vals[i]))
	})[0]
}

// branchFunc lowers one branch of a parallel block into
//
//	func @F.parallel_L_C.NAME(%arg: dyn) -> dyn
//
// which evaluates the branch's expression with it, the env and the
// values of the locals it names from arg, and returns its value, or
// raisedResult of what it raised.
func (fl *funcLowerer) branchFunc(s *ParallelStmt, br *AssignStmt, free []*Symbol) string {
	l := fl.l
	name := fl.f.Name + ".parallel_" + strconv.Itoa(s.ParallelPos.Line) + "_" + strconv.Itoa(s.ParallelPos.Col) + "." + br.Target.Name
	for l.m.Func(name) != nil {
		name += "_"
	}
	f := l.m.NewFunc(name, dyn, dyn, br.Target.NamePos)
	arg := f.Params[0]
	arg.Name = "arg"
	bl := l.newFunc(f, fl.mod, fl.sc)
	bl.branch = true
	b := bl.b
	b.SetPos(br.Target.NamePos)
	bl.it = b.Builtin("obj.get", arg, b.StringValue("it"))
	bl.env = b.Builtin("obj.get", arg, b.StringValue("env"))
	caps := b.Builtin("obj.get", arg, b.StringValue("caps"))
	for i, sym := range free {
		bl.caps[sym] = b.Builtin("list.get", caps, b.Const(ir.I64, int64(i)))
	}
	v := bl.expr(br.Value)
	if !b.Terminated() {
		b.Return(v)
	}
	return name
}
