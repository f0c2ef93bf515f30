package vvm

import (
	"bytes"
	_ "embed"
	"fmt"
	"runtime/debug"
	"strconv"
	"strings"

	"github.com/genesis-toolchain/genesis/diag"
	"github.com/genesis-toolchain/genesis/frontend"
	"github.com/genesis-toolchain/genesis/ir"
)

// The lowering: a loaded, validated Program becomes one IR module whose
// control flow is the program's (docs/vvm.md, "Lowering"). Its entry is
//
//	func @main(%input: dyn) -> dyn
//
// which runs every module the program imports by name, in load order,
// then the entry module with the run's input as its inputs, exports the
// entry's exported values (export effects) and returns them. A raised
// error nobody catches ends the run failed.
//
// Every module's top level is a function
//
//	func @mN(%inputs, %it, %envs: dyn) -> (exports, env, raised: dyn)
//
// and every def and lambda a function
//
//	func @mN.NAME(%params…, %captures…, %it, %env: dyn) -> (dyn, dyn)
//
// returning its result and the error it raised (unit when none). %env is
// the globals object of the function's module: the current value of
// every module-level name the module's functions read, and "$envs", the
// globals of the modules that ran before. Function values are objects
// {"$function": NAME, "$id": N, "$captures": [...], "$env": env} that
// @vvm.apply calls.

//go:embed prelude.ir
var preludeSource []byte

// Lower lowers a program that Check returned without errors. The
// diagnostics are those of constructs the lowering cannot compile
// (CodeInternal: a bug).
func Lower(p *Program) (m *ir.Module, diags diag.List) {
	l := &lowerer{prog: p, m: ir.NewModule(), fns: map[Node]*fnInfo{}, mods: map[*Module]*modInfo{}}
	defer func() {
		if e := recover(); e != nil {
			m = nil
			diags = append(diags, diag.Diagnostic{Pos: diag.Pos{File: p.Main.Path}, Severity: diag.Error, Code: CodeInternal,
				Msg: fmt.Sprintf("internal compiler error: %v\n%s", e, debug.Stack())})
		}
	}()
	l.prelude()
	l.memoryHelpers()
	for i, mod := range p.Modules {
		l.mods[mod] = &modInfo{mod: mod, fn: "m" + strconv.Itoa(i)}
	}
	for _, mod := range p.Modules {
		l.collect(mod)
	}
	for _, mod := range p.Modules {
		l.module(mod)
	}
	for i := 0; i < len(l.fnList); i++ { // lowering a function may add lambdas
		l.function(l.fnList[i])
	}
	l.apply()
	l.main()
	return l.m, l.diags
}

// lowerer holds what the lowering of a whole program shares.
type lowerer struct {
	prog   *Program
	m      *ir.Module
	diags  diag.List
	fns    map[Node]*fnInfo // by *FuncDecl or *LambdaExpr
	fnList []*fnInfo        // in order of id
	mods   map[*Module]*modInfo
	labels int
	lines  map[*File][]int // where each line of a file starts, for sourceLine
}

// modInfo is what the lowering knows of a module.
type modInfo struct {
	mod *Module
	fn  string // the IR function of its top level
	// globals are its module-level names that its functions read: their
	// values make up the module's env.
	globals []*Symbol
	inEnv   map[*Symbol]bool
	// run is set when the program runs the module at the start: it is
	// imported by name (a module imported only with `* as` runs when
	// called).
	run bool
}

// fnInfo is a VVM function: a def or a lambda.
type fnInfo struct {
	id       int
	name     string // the IR function
	mod      *Module
	decl     *FuncDecl   // a def, or
	lambda   *LambdaExpr // a lambda
	params   []*Ident
	captures []*Symbol
	scope    *Scope
}

func (fi *fnInfo) node() Node {
	if fi.decl != nil {
		return fi.decl
	}
	return fi.lambda
}

// prelude adds the helper functions of prelude.ir to the module.
func (l *lowerer) prelude() {
	pm, diags := ir.Parse("prelude.ir", preludeSource)
	if diags.HasErrors() {
		panic("vvm: the prelude does not parse: " + diags.Error())
	}
	l.m.Funcs = append(l.m.Funcs, pm.Funcs...)
}

// collect numbers the module's functions and finds the module-level
// names its functions read.
func (l *lowerer) collect(mod *Module) {
	mi := l.mods[mod]
	mi.inEnv = map[*Symbol]bool{}
	walkFuncs(mod.File.Stmts, func(n Node) { l.fnOf(n, mod) })
	// The names functions read that live in the module scope.
	var visit func(n Node, inFunc bool)
	note := func(id *Ident, inFunc bool) {
		if !inFunc || id == nil || id.Sym == nil || id.Sym.Scope != mod.Scope || mi.inEnv[id.Sym] {
			return
		}
		switch id.Sym.Kind {
		case SymVar, SymInput, SymImport, SymModule:
			mi.inEnv[id.Sym] = true
			mi.globals = append(mi.globals, id.Sym)
		case SymFunc:
			if id.Sym.Reassigned {
				mi.inEnv[id.Sym] = true
				mi.globals = append(mi.globals, id.Sym)
			}
		}
	}
	visit = func(n Node, inFunc bool) {
		inspect(n, func(x Node) bool {
			switch x := x.(type) {
			case *FuncDecl:
				for _, s := range x.Body {
					visit(s, true)
				}
				return false
			case *LambdaExpr:
				visit(x.Body, true)
				return false
			case *Ident:
				note(x, inFunc)
			}
			return true
		})
	}
	for _, s := range mod.File.Stmts {
		visit(s, false)
	}
	for _, s := range mod.File.Stmts {
		if imp, ok := s.(*ImportStmt); ok && imp.Module != nil && imp.Kind != ImportModule {
			l.mods[imp.Module].run = true
		}
	}
}

// fnOf returns the function of a def or lambda, numbering it on first
// sight.
func (l *lowerer) fnOf(n Node, mod *Module) *fnInfo {
	if fi := l.fns[n]; fi != nil {
		return fi
	}
	fi := &fnInfo{id: len(l.fnList), mod: mod}
	prefix := l.mods[mod].fn
	switch n := n.(type) {
	case *FuncDecl:
		fi.decl, fi.params, fi.captures, fi.scope = n, n.Params, n.Captures, n.Scope
		fi.name = prefix + "." + n.Name.Name
	case *LambdaExpr:
		fi.lambda, fi.params, fi.captures, fi.scope = n, n.Params, n.Captures, n.Scope
		fi.name = fmt.Sprintf("%s.lambda_%d_%d", prefix, n.ParamsPos.Line, n.ParamsPos.Col)
	}
	for l.m.Func(fi.name) != nil || l.taken(fi.name) {
		fi.name += "_"
	}
	l.fns[n] = fi
	l.fnList = append(l.fnList, fi)
	return fi
}

func (l *lowerer) taken(name string) bool {
	for _, f := range l.fnList {
		if f.name == name {
			return true
		}
	}
	return false
}

// walkFuncs calls fn for every def and lambda in stmts, outer before
// inner, in source order.
func walkFuncs(stmts []Stmt, fn func(Node)) {
	for _, s := range stmts {
		inspect(s, func(n Node) bool {
			switch n.(type) {
			case *FuncDecl, *LambdaExpr:
				fn(n)
			}
			return true
		})
	}
}

// ── Functions ──

// Types of the functions' signatures.
var (
	dyn  = []ir.Type{ir.Dyn}
	dyn2 = []ir.Type{ir.Dyn, ir.Dyn}
	dyn3 = []ir.Type{ir.Dyn, ir.Dyn, ir.Dyn}
)

// function lowers a def or lambda.
func (l *lowerer) function(fi *fnInfo) {
	n := fi.node()
	params := make([]ir.Type, len(fi.params)+len(fi.captures)+2)
	for i := range params {
		params[i] = ir.Dyn
	}
	f := l.m.NewFunc(fi.name, params, dyn2, n.Pos())
	defer shareConsts(f)
	fl := l.newFunc(f, fi.mod, fi.scope)
	fl.fn = fi
	for i, p := range fi.params {
		f.Params[i].Name = p.Name
	}
	for i, c := range fi.captures {
		p := f.Params[len(fi.params)+i]
		p.Name = "cap." + c.Name
		fl.caps[c] = p
	}
	fl.it = f.Params[len(params)-2]
	fl.it.Name = "it"
	fl.env = f.Params[len(params)-1]
	fl.env.Name = "env"
	fl.declareLocals()
	for i, p := range fi.params {
		if p.Sym != nil {
			fl.b.SetPos(p.NamePos)
			fl.b.Set(fl.vars[p.Sym], f.Params[i])
		}
	}
	if fi.decl != nil {
		fl.body(fi.decl.Body)
		if !fl.b.Terminated() {
			fl.b.SetPos(fi.decl.DefPos)
			fl.b.Return(fl.unit(), fl.unit())
		}
		return
	}
	fl.b.SetPos(fi.lambda.Arrow)
	v := fl.expr(fi.lambda.Body)
	if !fl.b.Terminated() {
		fl.b.Return(v, fl.unit())
	}
}

// module lowers a module's top level into its function.
func (l *lowerer) module(mod *Module) {
	mi := l.mods[mod]
	pos := diag.Pos{File: mod.Path, Line: 1, Col: 1}
	f := l.m.NewFunc(mi.fn, dyn3, dyn3, pos)
	defer shareConsts(f)
	f.Params[0].Name, f.Params[1].Name, f.Params[2].Name = "inputs", "it", "envs"
	fl := l.newFunc(f, mod, mod.Scope)
	fl.it = f.Params[1]
	fl.envs = f.Params[2]
	fl.top = true
	fl.declareLocals()
	fl.keepModuleEnv(pos)
	fl.inputs(f.Params[0])
	fl.imports()
	fl.body(mod.File.Stmts)
	if fl.b.Terminated() {
		return
	}
	b := fl.b
	b.SetPos(pos)
	exports := b.Builtin("obj.new")
	for _, e := range mod.Exports {
		if e.Agent || e.Value.Sym == nil {
			continue
		}
		b.SetPos(e.ExportPos)
		exports = b.Builtin("obj.set", exports, b.StringValue(e.Name.Name), fl.read(e.Value))
	}
	b.Return(exports, fl.moduleEnv(), fl.unit())
}

// main lowers @main: it runs the modules imported by name, then the
// entry module, and exports the entry's values.
func (l *lowerer) main() {
	entry := l.prog.Main
	pos := diag.Pos{File: entry.Path, Line: 1, Col: 1}
	f := l.m.NewFunc("main", dyn, dyn, pos)
	f.Params[0].Name = "input"
	b := ir.NewBuilder(f)
	b.SetPos(pos)
	envs := b.Builtin("obj.new")
	unit := b.UnitValue()
	fail := func(step string, raised *ir.Value) {
		failed := b.Op(ir.OpNe, b.Builtin("value.kind", raised), b.Const(ir.I64, 0))
		b.If(failed, nil, func() {
			kind := b.CallSym("vvm.error_kind", dyn, raised)[0]
			msg := b.Builtin("obj.get", b.Builtin("obj.get", raised, b.StringValue("error")), b.StringValue("message"))
			b.Effect(ir.OpStop, step, nil, b.StringValue("failed"), b.Builtin("error.new", kind, msg))
		}, nil)
	}
	for _, mod := range l.prog.Modules {
		mi := l.mods[mod]
		if mod == entry || !mi.run {
			continue
		}
		// A module imported by name runs once, before its importers, with
		// no inputs (its inputs' defaults).
		res := b.CallSym(mi.fn, dyn3, b.Builtin("obj.new"), unit, envs)
		fail("raise in "+mod.Path, res[2])
		envs = b.Builtin("obj.set", envs, b.StringValue(mod.Path), res[1])
	}
	res := b.CallSym(l.mods[entry].fn, dyn3, f.Params[0], unit, envs)
	fail("raise", res[2])
	exports := res[0]
	for _, e := range entry.Exports {
		if e.Agent || e.Value.Sym == nil {
			continue
		}
		b.SetPos(e.ExportPos)
		name := b.StringValue(e.Name.Name)
		// A function is exported as {"$function": name}: its id, captures
		// and env mean nothing outside this run.
		v := b.CallSym("vvm.export_value", dyn, b.Builtin("obj.get", exports, name))[0]
		b.Effect(ir.OpExport, "export "+e.Name.Name, nil, name, v)
	}
	b.SetPos(pos)
	b.Return(exports)
}

// apply builds
//
//	func @vvm.apply(%f, %args, %kwargs, %it: dyn) -> (dyn, dyn)
//
// which calls the function value f with the positional arguments args
// (a list) and the keyword arguments kwargs (an object), binding them to
// the parameters by name as spec.md §11.1 says, and raises thrown when f
// is not a function or the arguments do not fit.
func (l *lowerer) apply() {
	f := l.m.NewFunc("vvm.apply", []ir.Type{ir.Dyn, ir.Dyn, ir.Dyn, ir.Dyn}, dyn2, diag.Pos{})
	fv, args, kwargs, it := f.Params[0], f.Params[1], f.Params[2], f.Params[3]
	fv.Name, args.Name, kwargs.Name, it.Name = "f", "args", "kwargs", "it"
	b := ir.NewBuilder(f)
	unit := b.UnitValue()
	raise := func(msg *ir.Value) {
		b.Return(unit, b.CallSym("vvm.thrown", dyn, msg)[0])
	}
	isFn := b.Builtin("obj.has", fv, b.StringValue("$function"))
	b.If(b.Op(ir.OpNot, isFn), nil, func() {
		raise(b.Builtin("str.concat", b.StringValue("cannot call "), b.CallSym("vvm.kind_name", dyn, fv)[0]))
	}, nil)
	id := b.Builtin("num.to_int", b.Builtin("obj.get", fv, b.StringValue("$id")))
	caps := b.Builtin("obj.get", fv, b.StringValue("$captures"))
	env := b.Builtin("obj.get", fv, b.StringValue("$env"))
	nargs := b.Builtin("list.len", args)
	var cases []ir.Case
	for _, fi := range l.fnList {
		fi := fi
		cases = append(cases, ir.Case{Values: []int64{int64(fi.id)}, Body: func() {
			name := fi.name
			if fi.decl != nil {
				name = fi.decl.Name.Name
			}
			np := int64(len(fi.params))
			tooMany := b.Op(ir.OpGtS, nargs, b.Const(ir.I64, np))
			b.If(tooMany, nil, func() {
				raise(b.StringValue(fmt.Sprintf("%s takes %d argument%s", name, np, plural(int(np)))))
			}, nil)
			// Unknown keywords.
			keys := b.Builtin("obj.keys", kwargs)
			nk := b.Builtin("list.len", keys)
			loop := b.NewLabel("kw")
			b.Loop(loop, []*ir.Value{b.Const(ir.I64, 0)}, nil, func(label string, ps []*ir.Value) {
				b.If(b.Op(ir.OpGeS, ps[0], nk), nil, func() { b.Break(label) }, nil)
				k := b.Builtin("list.get", keys, ps[0])
				known := b.Bool(false)
				for _, p := range fi.params {
					known = b.Op(ir.OpOr, known, b.Builtin("value.eq", k, b.StringValue(p.Name)))
				}
				b.If(b.Op(ir.OpNot, known), nil, func() {
					raise(b.Builtin("str.concat", b.StringValue(name+" has no parameter "), k))
				}, nil)
				b.Continue(label, b.Op(ir.OpAdd, ps[0], b.Const(ir.I64, 1)))
			})
			callArgs := make([]*ir.Value, 0, len(fi.params)+len(fi.captures)+2)
			for i, p := range fi.params {
				pname := b.StringValue(p.Name)
				positional := b.Op(ir.OpGtS, nargs, b.Const(ir.I64, int64(i)))
				byName := b.Builtin("obj.has", kwargs, pname)
				b.If(b.Op(ir.OpAnd, positional, byName), nil, func() {
					raise(b.StringValue(fmt.Sprintf("%s: parameter %s is given twice", name, p.Name)))
				}, nil)
				b.If(b.Op(ir.OpNot, b.Op(ir.OpOr, positional, byName)), nil, func() {
					raise(b.StringValue(fmt.Sprintf("%s: missing argument %s", name, p.Name)))
				}, nil)
				v := b.If(positional, dyn, func() {
					b.Yield(b.Builtin("list.get", args, b.Const(ir.I64, int64(i))))
				}, func() {
					b.Yield(b.Builtin("obj.get", kwargs, pname))
				})[0]
				callArgs = append(callArgs, v)
			}
			for i := range fi.captures {
				callArgs = append(callArgs, b.Builtin("list.get", caps, b.Const(ir.I64, int64(i))))
			}
			callArgs = append(callArgs, it, env)
			r := b.CallSym(fi.name, dyn2, callArgs...)
			b.Return(r[0], r[1])
		}})
	}
	b.Switch(id, nil, cases, func() {
		raise(b.StringValue("cannot call this function value"))
	})
	if !b.Terminated() {
		raise(b.StringValue("cannot call this function value"))
	}
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// ── One IR function ──

// funcLowerer lowers the body of one IR function: a module's top level
// or a VVM function.
type funcLowerer struct {
	l   *lowerer
	f   *ir.Func
	b   *ir.Builder
	mod *Module
	mi  *modInfo
	sc  *Scope // the VVM scope the body is in
	fn  *fnInfo

	top    bool                  // a module's top level
	branch bool                  // a parallel block's branch
	vars   map[*Symbol]*ir.Local // the scope's variables
	caps   map[*Symbol]*ir.Value // a function's captured symbols
	it     *ir.Value             // the current implicit input
	env    *ir.Value             // a function's module globals
	envs   *ir.Value             // a top level's: the earlier modules' globals

	// A top level's env, kept up to date: envVar holds it, and each
	// assignment of a symbol of envSyms updates its key. A call then
	// reads it, where building it afresh would cost the module's globals
	// and exports at every call (and a program's IR would grow with
	// calls times globals).
	envVar  *ir.Local
	envSyms map[*Symbol]bool

	frames []*frame
	caught *ir.Value // the error an except block handles, for a bare raise

	// depth is how many statement lists the statement being lowered is
	// in, 0 for the body's own statements; bound holds the variables an
	// assignment among those has bound. Control reaches every later
	// statement of the body only through that assignment (a body has no
	// loop around it, and leaving the assignment early leaves the body),
	// so reading them needs no unbound check.
	depth int
	bound map[*Symbol]bool
}

func (l *lowerer) newFunc(f *ir.Func, mod *Module, sc *Scope) *funcLowerer {
	return &funcLowerer{l: l, f: f, b: ir.NewBuilder(f), mod: mod, mi: l.mods[mod], sc: sc,
		vars: map[*Symbol]*ir.Local{}, caps: map[*Symbol]*ir.Value{}, bound: map[*Symbol]bool{}, depth: -1}
}

// unbound is the value of a variable before its first binding: an error
// of the runtime's, which no VVM expression produces (VVM error values
// are objects), so reading it can be told from reading any value.
func (fl *funcLowerer) unbound() *ir.Value {
	return fl.b.Builtin("error.new", fl.b.StringValue("vvm.unbound"), fl.b.StringValue(""))
}

func (fl *funcLowerer) unit() *ir.Value { return fl.b.UnitValue() }

// declareLocals makes a var of every symbol the scope binds, unbound.
// The vars share one unbound value, made at the first one's position:
// values are immutable, and one error.new per var cost three
// instructions each at the top level of a module of thousands of
// globals.
func (fl *funcLowerer) declareLocals() {
	b := fl.b
	var unbound *ir.Value
	for _, sym := range fl.sc.Syms {
		if isHoisted(sym) {
			continue // its value is made where it is read, with the env of then
		}
		v := fl.f.NewVar(varName(fl.f, sym.Name), ir.Dyn, sym.Pos)
		fl.vars[sym] = v
		b.SetPos(sym.Pos)
		if unbound == nil {
			unbound = fl.unbound()
		}
		b.Set(v, unbound)
	}
}

// varName returns a var name not used in f yet. f.Local looks names up
// in an index: a scan of f.Locals per name was quadratic at the top
// level of a module of thousands of globals.
func varName(f *ir.Func, name string) string {
	for f.Local(name) != nil {
		name += "_"
	}
	return name
}

// inputs binds the module's inputs from the inputs object: a declared
// input the object has, else its default, else the module raises
// missing_input; a key that is no input raises unknown_input.
func (fl *funcLowerer) inputs(in *ir.Value) {
	b := fl.b
	mod := fl.mod
	if len(mod.Inputs) == 0 {
		return
	}
	if mod != fl.l.prog.Main {
		// A module call passes exactly the inputs; the entry's run input
		// may carry anything else.
		keys := b.Builtin("obj.keys", in)
		n := b.Builtin("list.len", keys)
		b.Loop(b.NewLabel("input"), []*ir.Value{b.Const(ir.I64, 0)}, nil, func(label string, ps []*ir.Value) {
			b.If(b.Op(ir.OpGeS, ps[0], n), nil, func() { b.Break(label) }, nil)
			k := b.Builtin("list.get", keys, ps[0])
			known := b.Bool(false)
			for _, x := range mod.Inputs {
				known = b.Op(ir.OpOr, known, b.Builtin("value.eq", k, b.StringValue(x.Name.Name)))
			}
			b.If(b.Op(ir.OpNot, known), nil, func() {
				fl.raise(fl.errorValue("unknown_input", b.Builtin("str.concat", b.StringValue("no input named "), k), k))
			}, nil)
			b.Continue(label, b.Op(ir.OpAdd, ps[0], b.Const(ir.I64, 1)))
		})
	}
	for _, x := range mod.Inputs {
		x := x
		b.SetPos(x.InputPos)
		name := b.StringValue(x.Name.Name)
		v := b.If(b.Builtin("obj.has", in, name), dyn, func() {
			b.Yield(b.Builtin("obj.get", in, name))
		}, func() {
			if x.Default != nil {
				b.Yield(fl.expr(x.Default))
				return
			}
			fl.raise(fl.errorValue("missing_input", b.StringValue("missing input "+x.Name.Name), name))
		})[0]
		fl.assign(x.Name.Sym, v)
	}
}

// errorValue builds the error value {error: {kind, message, data: {name}}}.
func (fl *funcLowerer) errorValue(kind string, msg, name *ir.Value) *ir.Value {
	b := fl.b
	e := b.CallSym("vvm.error", dyn, b.StringValue(kind), msg)[0]
	inner := b.Builtin("obj.get", e, b.StringValue("error"))
	data := b.Builtin("obj.set", b.Builtin("obj.new"), b.StringValue("name"), name)
	inner = b.Builtin("obj.set", inner, b.StringValue("data"), data)
	return b.Builtin("obj.set", e, b.StringValue("error"), inner)
}

// imports binds the names the module imports by value: each the value
// the other module ended with (it ran before).
func (fl *funcLowerer) imports() {
	b := fl.b
	for _, s := range fl.mod.File.Stmts {
		imp, ok := s.(*ImportStmt)
		if !ok || imp.Kind != ImportValue || imp.Module == nil {
			continue
		}
		local := imp.Local()
		if local == nil || local.Sym == nil {
			continue
		}
		b.SetPos(imp.FromPos)
		env := b.Builtin("obj.get", fl.envs, b.StringValue(imp.Module.Path))
		target := local.Sym.Target
		var v *ir.Value
		switch {
		case target != nil && target.Kind == SymFunc && target.Func != nil && !target.Reassigned:
			fi := fl.l.fnOf(target.Func, imp.Module)
			v = fl.funcValueEnv(fi, env)
		default:
			v = b.Builtin("obj.get", env, b.StringValue(imp.Name.Name))
		}
		fl.assign(local.Sym, v)
	}
}

// keepModuleEnv builds the module's env at the start of its top level,
// with every variable unbound, into envVar, which assign keeps up to
// date from then on.
func (fl *funcLowerer) keepModuleEnv(pos diag.Pos) {
	b := fl.b
	b.SetPos(pos)
	env := b.Builtin("obj.new")
	fl.envSyms = map[*Symbol]bool{}
	for _, sym := range fl.mi.globals {
		env = b.Builtin("obj.set", env, b.StringValue(sym.Name), b.Get(fl.vars[sym]))
		fl.envSyms[sym] = true
	}
	// Every name a module exports by value is in its env too, for its
	// importers.
	for _, e := range fl.mod.Exports {
		if e.Agent || e.Value.Sym == nil || fl.envSyms[e.Value.Sym] {
			continue
		}
		if l, ok := fl.vars[e.Value.Sym]; ok {
			env = b.Builtin("obj.set", env, b.StringValue(e.Value.Sym.Name), b.Get(l))
			fl.envSyms[e.Value.Sym] = true
		}
	}
	env = b.Builtin("obj.set", env, b.StringValue("$envs"), fl.envs)
	fl.envVar = fl.f.NewVar(varName(fl.f, "env"), ir.Dyn, pos)
	b.Set(fl.envVar, env)
}

// moduleEnv is the module's env at this point of its top level: the
// globals functions read, the names it exports by value, and $envs.
func (fl *funcLowerer) moduleEnv() *ir.Value {
	return fl.b.Get(fl.envVar)
}

// currentEnv is the env to call a function of module mod with.
func (fl *funcLowerer) currentEnv(mod *Module) *ir.Value {
	b := fl.b
	if mod == fl.mod {
		if fl.top {
			return fl.moduleEnv()
		}
		return fl.env
	}
	return b.Builtin("obj.get", fl.allEnvs(), b.StringValue(mod.Path))
}

// allEnvs is the envs object of the modules that ran before this one.
func (fl *funcLowerer) allEnvs() *ir.Value {
	if fl.top {
		return fl.envs
	}
	return fl.b.Builtin("obj.get", fl.env, fl.b.StringValue("$envs"))
}

// funcValue builds the value of function fi as seen from here.
func (fl *funcLowerer) funcValue(fi *fnInfo) *ir.Value {
	return fl.funcValueEnv(fi, fl.currentEnv(fi.mod))
}

func (fl *funcLowerer) funcValueEnv(fi *fnInfo, env *ir.Value) *ir.Value {
	b := fl.b
	caps := b.Builtin("list.new")
	for _, c := range fi.captures {
		caps = b.Builtin("list.append", caps, fl.symValue(c))
	}
	name := fi.name
	if fi.decl != nil {
		name = fi.decl.Name.Name
	}
	v := b.Builtin("obj.set", b.Builtin("obj.new"), b.StringValue("$function"), b.StringValue(name))
	v = b.Builtin("obj.set", v, b.StringValue("$id"), b.NumberValue(float64(fi.id)))
	v = b.Builtin("obj.set", v, b.StringValue("$captures"), caps)
	return b.Builtin("obj.set", v, b.StringValue("$env"), env)
}

// isHoisted reports whether sym always holds a hoisted def.
func isHoisted(sym *Symbol) bool {
	return sym.Kind == SymFunc && !sym.Reassigned && sym.Func != nil && sym.Func.Hoisted
}

// symValue is the raw value of a symbol here (possibly unbound).
func (fl *funcLowerer) symValue(sym *Symbol) *ir.Value {
	b := fl.b
	if isHoisted(sym) {
		return fl.funcValue(fl.l.fnOf(sym.Func, sym.Scope.Module))
	}
	if v, ok := fl.caps[sym]; ok {
		return v
	}
	if l, ok := fl.vars[sym]; ok {
		return b.Get(l)
	}
	if sym.Scope != nil && sym.Scope == fl.mod.Scope && !fl.top {
		return b.Builtin("obj.get", fl.env, b.StringValue(sym.Name))
	}
	panic(fmt.Sprintf("vvm: no value for %s %s here", sym.Kind, sym.Name))
}

// assign binds sym.
func (fl *funcLowerer) assign(sym *Symbol, v *ir.Value) {
	if sym == nil {
		return
	}
	l, ok := fl.vars[sym]
	if !ok {
		panic(fmt.Sprintf("vvm: assignment to %s, which is not a local here", sym.Name))
	}
	fl.b.Set(l, v)
	if fl.envSyms[sym] {
		b := fl.b
		b.Set(fl.envVar, b.Builtin("obj.set", b.Get(fl.envVar), b.StringValue(sym.Name), v))
	}
}

// sourceLine returns the text of the line at pos, trimmed and at most
// 100 code points, for notes. It indexes the file's lines once, so that
// a note per statement costs the length of its line, not of the file.
func (l *lowerer) sourceLine(f *File, pos diag.Pos) string {
	if f == nil || pos.Line < 1 {
		return ""
	}
	starts, ok := l.lines[f]
	if !ok {
		starts = []int{0}
		for i, c := range f.Src {
			if c == '\n' {
				starts = append(starts, i+1)
			}
		}
		if l.lines == nil {
			l.lines = map[*File][]int{}
		}
		l.lines[f] = starts
	}
	if pos.Line > len(starts) {
		return ""
	}
	line := f.Src[starts[pos.Line-1]:]
	if i := bytes.IndexByte(line, '\n'); i >= 0 {
		line = line[:i]
	}
	// Only the first 100 code points are kept: cut before converting.
	line = bytes.TrimLeft(line, " \t")
	if len(line) > 4*100+4 {
		line = line[:4*100+4]
	}
	text := strings.TrimSpace(string(line))
	if r := []rune(text); len(r) > 100 {
		text = string(r[:97]) + "..."
	}
	return text
}

// Compile checks and lowers the program whose entry is the file of in,
// reading the modules it imports with in.Import: the IR module, and
// every diagnostic (warnings too). The module is nil when the program
// has errors.
func Compile(in frontend.Input) (*ir.Module, diag.List) {
	prog, diags := Check(in)
	if diags.HasErrors() {
		return nil, diags
	}
	m, ds := lowerVerified(prog)
	return m, append(diags, ds...)
}

// lowerVerified lowers a program Check returned without errors and
// verifies its IR: the module, or nil and the internal errors of a
// compiler bug.
func lowerVerified(p *Program) (*ir.Module, diag.List) {
	m, diags := Lower(p)
	if m == nil {
		return nil, diags
	}
	if vs := ir.VerifyLowered(m, CodeInternal); len(vs) > 0 {
		return nil, append(diags, vs...)
	}
	return m, diags
}

// Language is VVM's entry in the driver's registry.
var Language = &frontend.Language{
	Name:       "VVM",
	Programs:   "VVM programs",
	Extensions: []string{".vvm"},
	OneFile:    "several .vvm files: a program is its entry file, which imports the others",
	Agent:      true,
	Check: func(in frontend.Input) (any, diag.List) {
		return Check(in)
	},
	CheckHolding: CheckHolding,
	Lower: func(checked any) (*ir.Module, diag.List) {
		return lowerVerified(checked.(*Program))
	},
}
