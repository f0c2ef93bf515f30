package grimoire

import (
	"fmt"
	"math/big"
	"runtime/debug"
	"strconv"
	"strings"

	"github.com/genesis-toolchain/genesis/diag"
	"github.com/genesis-toolchain/genesis/frontend"
	"github.com/genesis-toolchain/genesis/ir"
)

// The lowering: a loaded, checked Program becomes one IR module
// (docs/grimoire.md, "Running spells"). Its entry is
//
//	func @main(%input: dyn) -> dyn
//
// which builds the run's context from the input (the trigger to run, the
// event and its payload, parameter overrides, the mode), loads the state,
// evaluates the guards, runs the one trigger the input selects, saves the
// persistent state, exports the bindings, the state and the halt reason,
// and ends the run failed when the trigger failed.
//
// Every body — a trigger's, a block's, a parallel branch's — is a
// function
//
//	func @NAME(%frame: dyn) -> dyn
//
// on a frame {"env", "st", "ctx"}: the body's variables, the state
// variables and the run's context. It returns {"env", "st", "err"}: its
// variables and the state at its end, and the error that ended it (unit
// when none). Inside a body, a failure sets the var $err and breaks out
// to the innermost handler (a try, an atomic block, the body itself), so
// straight-line code needs no checks after it.

// Lower lowers a program that Check returned without errors. The
// diagnostics are those of constructs the lowering cannot compile
// (CodeInternal: a bug).
func Lower(p *Program) (m *ir.Module, diags diag.List) {
	l := &lowerer{prog: p, m: ir.NewModule(), blocks: map[*Block]string{}, sites: map[string]bool{}}
	defer func() {
		if e := recover(); e != nil {
			m = nil
			diags = append(diags, diag.Diagnostic{Pos: diag.Pos{File: p.Spell.File}, Severity: diag.Error, Code: CodeInternal,
				Msg: fmt.Sprintf("internal compiler error: %v\n%s", e, debug.Stack())})
		}
	}()
	l.helpers()
	// Blocks first, so that `do` finds their functions; every spell's
	// blocks, the imported ones' too.
	spells := append([]*Spell{p.Spell}, p.Imports...)
	for si, s := range spells {
		for _, bl := range s.Blocks {
			l.blocks[bl] = fmt.Sprintf("block%d.%s", si, bl.Name.Name)
		}
	}
	for _, s := range spells {
		for _, bl := range s.Blocks {
			bl := bl
			l.body(l.blocks[bl], s, bl.BlockPos, func(fl *funcLowerer) { fl.stmts(bl.Body) })
		}
	}
	for i, t := range p.Spell.Triggers {
		t := t
		l.body("trigger"+strconv.Itoa(i), p.Spell, t.OnPos, func(fl *funcLowerer) { fl.trigger(t) })
	}
	l.main()
	return l.m, diags
}

// Compile checks and lowers the spell that is the file of in, reading
// the spells it imports with in.Import: the IR module, and every
// diagnostic (warnings too). The module is nil when the spell has
// errors.
func Compile(in frontend.Input) (*ir.Module, diag.List) {
	prog, diags := Check(in)
	if prog == nil || diags.HasErrors() {
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

// Language is Grimoire's entry in the driver's registry.
var Language = &frontend.Language{
	Name:       "Grimoire",
	Programs:   "Grimoire spells",
	Extensions: []string{".spell"},
	OneFile:    "several .spell files: a program is its entry file, which imports the others",
	Agent:      true,
	Check: func(in frontend.Input) (any, diag.List) {
		return Check(in)
	},
	Lower: func(checked any) (*ir.Module, diag.List) {
		return lowerVerified(checked.(*Program))
	},
}

// lowerer holds what the lowering of a whole program shares.
type lowerer struct {
	prog   *Program
	m      *ir.Module
	blocks map[*Block]string // the function of every block
	sites  map[string]bool   // the (step name, position) pairs used
	nfuncs int               // numbers the functions of branches and stages
}

var (
	dyn  = []ir.Type{ir.Dyn}
	dyn2 = []ir.Type{ir.Dyn, ir.Dyn}
	dyn3 = []ir.Type{ir.Dyn, ir.Dyn, ir.Dyn}
)

// funcLowerer lowers one body function.
type funcLowerer struct {
	l     *lowerer
	spell *Spell
	f     *ir.Func
	b     *ir.Builder

	env, st, ctx, err *ir.Local // the body's variables, the state, the context, the pending error
	acts              *ir.Local // the actions performed so far in this body (for atomic's log)
	handlers          []string  // the labels a failure breaks to, innermost last
	iters             []*ir.Value
	nvars             int
}

// body adds the body function name, whose statements fill lowers.
func (l *lowerer) body(name string, s *Spell, pos diag.Pos, fill func(fl *funcLowerer)) *ir.Func {
	f := l.m.NewFunc(name, dyn, dyn, pos)
	f.Params[0].Name = "frame"
	fl := &funcLowerer{l: l, spell: s, f: f, b: ir.NewBuilder(f)}
	b := fl.b
	b.SetPos(pos)
	frame := f.Params[0]
	fl.env = f.NewVar("env", ir.Dyn, pos)
	fl.st = f.NewVar("st", ir.Dyn, pos)
	fl.ctx = f.NewVar("ctx", ir.Dyn, pos)
	fl.err = f.NewVar("err", ir.Dyn, pos)
	fl.acts = f.NewVar("acts", ir.Dyn, pos)
	b.Set(fl.env, fl.get(frame, "env"))
	b.Set(fl.st, fl.get(frame, "st"))
	b.Set(fl.ctx, fl.get(frame, "ctx"))
	b.Set(fl.err, b.UnitValue())
	b.Set(fl.acts, b.Builtin("list.new"))
	fl.block(func() { fill(fl) })
	b.SetPos(pos)
	out := fl.obj("env", b.Get(fl.env), "st", b.Get(fl.st), "err", b.Get(fl.err))
	b.Return(out)
	return f
}

// block runs body with a new handler: a failure inside breaks out of it
// with $err set. Code after block runs either way.
func (fl *funcLowerer) block(body func()) {
	label := fl.b.NewLabel("h")
	fl.b.Block(label, nil, func(label string) {
		fl.handlers = append(fl.handlers, label)
		body()
		fl.handlers = fl.handlers[:len(fl.handlers)-1]
	})
}

// raise fails with the error value e: it breaks to the innermost handler.
func (fl *funcLowerer) raise(e *ir.Value) {
	fl.b.Set(fl.err, e)
	fl.b.Break(fl.handlers[len(fl.handlers)-1])
}

// fail raises a new error of kind with message, first noting the raise
// (kind "raised") at the current position, so that the run's stop names
// the statement that failed rather than the spell (docs/runtime.md,
// Step identity).
func (fl *funcLowerer) fail(kind string, msg *ir.Value) {
	pos := fl.b.Pos()
	fl.b.Effect(ir.OpTrace, fl.step("raised", pos), fl.iters, fl.str("note"), fl.obj("kind", fl.str("raised"), "text", msg))
	fl.b.SetPos(pos)
	fl.raise(fl.b.Builtin("error.new", fl.b.StringValue(kind), msg))
}

// check raises v when it is an error value and returns it otherwise.
func (fl *funcLowerer) check(v *ir.Value) *ir.Value {
	fl.b.If(fl.b.Builtin("error.is", v), nil, func() { fl.raise(v) }, nil)
	return v
}

// failed is whether $err holds an error.
func (fl *funcLowerer) failed() *ir.Value { return fl.b.Builtin("error.is", fl.b.Get(fl.err)) }

func (fl *funcLowerer) str(s string) *ir.Value { return fl.b.StringValue(s) }

func (fl *funcLowerer) get(o *ir.Value, key string) *ir.Value {
	return fl.b.Builtin("obj.get", o, fl.str(key))
}

func (fl *funcLowerer) set(o *ir.Value, key string, v *ir.Value) *ir.Value {
	return fl.b.Builtin("obj.set", o, fl.str(key), v)
}

// obj builds an object of alternating keys (string) and values.
func (fl *funcLowerer) obj(kv ...any) *ir.Value {
	o := fl.b.Builtin("obj.new")
	for i := 0; i < len(kv); i += 2 {
		o = fl.set(o, kv[i].(string), kv[i+1].(*ir.Value))
	}
	return o
}

func (fl *funcLowerer) list(vs ...*ir.Value) *ir.Value {
	l := fl.b.Builtin("list.new")
	for _, v := range vs {
		l = fl.b.Builtin("list.append", l, v)
	}
	return l
}

// newVar declares a fresh var of type t.
func (fl *funcLowerer) newVar(prefix string, t ir.Type) *ir.Local {
	fl.nvars++
	return fl.f.NewVar(fmt.Sprintf("%s%d", prefix, fl.nvars), t, fl.b.Pos())
}

// step returns a step name unique with pos in the module: the verifier
// requires (name, position) pairs to be, and one statement may perform
// several effects.
func (fl *funcLowerer) step(name string, pos diag.Pos) string {
	fl.b.SetPos(pos)
	n := name
	for i := 2; fl.l.sites[n+"@"+pos.String()]; i++ {
		n = fmt.Sprintf("%s #%d", name, i)
	}
	fl.l.sites[n+"@"+pos.String()] = true
	return n
}

// note writes a note to the trace (docs/runtime.md, Trace): what the
// run decided, for the run log.
func (fl *funcLowerer) note(pos diag.Pos, kind string, text *ir.Value) {
	name := fl.step("note", pos)
	fl.b.Effect(ir.OpTrace, name, fl.iters, fl.str("note"), fl.obj("kind", fl.str(kind), "text", text))
}

// warningsKey is the key of the run's warnings in a body's state object
// (absent until the first warning):
// the state travels through every body, block, branch and pmap item and
// back, so a warning raised anywhere reaches the result (grim.merge
// appends a branch's new warnings; rollbacks keep them). It is no state
// variable: stateObject and the store see declared variables only.
const warningsKey = "$warnings"

// warn records a warning: a note of kind "warning" in the trace (and the
// narration), and an entry of the result's exports.warnings.
func (fl *funcLowerer) warn(pos diag.Pos, text *ir.Value) {
	b := fl.b
	fl.note(pos, "warning", text)
	st := b.Get(fl.st)
	ws := b.If(b.Builtin("obj.has", st, fl.str(warningsKey)), dyn, func() { b.Yield(fl.get(st, warningsKey)) }, func() { b.Yield(b.Builtin("list.new")) })[0]
	b.Set(fl.st, fl.set(st, warningsKey, b.Builtin("list.append", ws, text)))
}

// restoreState sets the state back to st0 (a rollback), keeping the
// warnings raised since: a rollback undoes writes, not what the run told.
func (fl *funcLowerer) restoreState(st0 *ir.Value) {
	b := fl.b
	st := b.Get(fl.st)
	b.Set(fl.st, b.If(b.Builtin("obj.has", st, fl.str(warningsKey)), dyn, func() {
		b.Yield(fl.set(st0, warningsKey, fl.get(st, warningsKey)))
	}, func() { b.Yield(st0) })[0])
}

// guardSeverity is a guard's severity: "warn", "revert", "halt" or
// "pause" as written, "halt" when none is.
func guardSeverity(g *Guard) string {
	for _, m := range g.Meta {
		if m.Name != nil && m.Name.Name == "severity" {
			if w, ok := wordValue(m.Value); ok {
				return w
			}
		}
	}
	return "halt"
}

// ratFloat converts an exact number to the float64 of the reference
// runtime's numbers.
func ratFloat(r *big.Rat) float64 {
	f, _ := r.Float64()
	return f
}

// trigger lowers a trigger's body: a condition trigger runs it when its
// condition holds, an event trigger when its filter does; otherwise the
// run notes that the trigger did not fire and ends with no effect.
func (fl *funcLowerer) trigger(t *Trigger) {
	b := fl.b
	var cond Expr
	switch t.Kind {
	case Condition:
		cond = t.Cond
	case Event:
		cond = t.Where
	}
	if cond == nil {
		fl.stmts(t.Body)
		return
	}
	c := fl.truthy(cond)
	b.SetPos(t.OnPos)
	b.If(c, nil, func() { fl.stmts(t.Body) }, func() {
		fl.note(t.OnPos, "trigger_skipped", fl.str("the "+t.Kind.String()+" trigger's condition does not hold"))
	})
}

// stateKey is the key of a persistent state variable in the store: the
// spell's name and the variable's, so that spells can share a store.
func stateKey(s *Spell, v *StateVar) string { return s.Name.Name + "." + v.Name.Name }

// main lowers @main (see the top of this file).
func (l *lowerer) main() {
	s := l.prog.Spell
	pos := s.SpellPos
	f := l.m.NewFunc("main", dyn, dyn, pos)
	f.Params[0].Name = "input"
	in := f.Params[0]
	fl := &funcLowerer{l: l, spell: s, f: f, b: ir.NewBuilder(f)}
	b := fl.b
	b.SetPos(pos)
	fl.env = f.NewVar("env", ir.Dyn, pos)
	fl.st = f.NewVar("st", ir.Dyn, pos)
	fl.ctx = f.NewVar("ctx", ir.Dyn, pos)
	fl.err = f.NewVar("err", ir.Dyn, pos)
	fl.acts = f.NewVar("acts", ir.Dyn, pos)
	b.Set(fl.env, b.Builtin("obj.new"))
	b.Set(fl.st, b.Builtin("obj.new"))
	b.Set(fl.err, b.UnitValue())
	b.Set(fl.acts, b.Builtin("list.new"))
	mode := fl.get(in, "mode")
	mode = b.If(b.Builtin("value.truthy", mode), dyn, func() { b.Yield(mode) }, func() { b.Yield(fl.str("simulate")) })[0]
	payload := fl.get(in, "event_payload")
	b.Set(fl.ctx, fl.obj("mode", mode, "yes", b.Builtin("value.bool", b.Builtin("value.truthy", fl.get(in, "yes"))),
		"event", payload, "params", b.Builtin("obj.new"), "limits", b.Builtin("obj.new")))
	loaded := f.NewVar("loaded", ir.Dyn, pos) // the persistent state as loaded
	b.Set(loaded, b.Builtin("obj.new"))
	fl.block(func() {
		// Limits, then parameters (defaults, overridden by the input's).
		limits := b.Builtin("obj.new")
		for _, lim := range sectionItems(s.Limits) {
			limits = fl.set(limits, lim.Name.Name, fl.expr(lim.Value))
		}
		b.Set(fl.ctx, fl.set(b.Get(fl.ctx), "limits", limits))
		over := fl.get(in, "params")
		params := b.Builtin("obj.new")
		for _, p := range sectionItems(s.Params) {
			p := p
			b.SetPos(p.Name.Pos())
			name := fl.str(p.Name.Name)
			v := b.If(b.Builtin("obj.has", over, name), dyn, func() { b.Yield(b.Builtin("obj.get", over, name)) }, func() {
				if p.Default != nil {
					b.Yield(fl.expr(p.Default))
				} else {
					b.Yield(b.UnitValue())
				}
			})[0]
			params = b.Builtin("obj.set", params, name, v)
		}
		b.Set(fl.ctx, fl.set(b.Get(fl.ctx), "params", params))
		// The state: persistent variables from the store (their initial
		// value when absent), ephemeral ones from their initial value.
		for _, v := range sectionItems(s.State) {
			v := v
			b.SetPos(v.Name.Pos())
			var x *ir.Value
			if v.Scope == Persistent {
				step := fl.step("load "+v.Name.Name, v.Name.Pos())
				got := b.Effect(ir.OpStateGet, step, nil, fl.str(stateKey(s, v)))
				b.Set(loaded, fl.set(b.Get(loaded), v.Name.Name, got))
				x = b.If(b.Op(ir.OpEq, b.Builtin("value.kind", got), b.Const(ir.I64, 0)), dyn, func() { b.Yield(fl.expr(v.Init)) }, func() { b.Yield(got) })[0]
			} else {
				x = fl.expr(v.Init)
			}
			b.Set(fl.st, fl.set(b.Get(fl.st), v.Name.Name, x))
		}
		// The guards, before the trigger.
		for _, g := range sectionItems(s.Guards) {
			g := g
			b.SetPos(g.Name.Pos())
			var ok *ir.Value
			if adv, isAdv := g.Check.(*Advisory); isAdv {
				var fb Expr
				for _, m := range g.Meta {
					if m.Name != nil && m.Name.Name == "fallback" {
						fb = m.Value
					}
				}
				ok = b.Builtin("value.truthy", fl.advisory(adv, fb))
			} else {
				ok = fl.truthy(g.Check)
			}
			msg := "guard " + g.Name.Name + " failed"
			for _, m := range g.Meta {
				if m.Name != nil && m.Name.Name == "message" {
					if sl, isStr := m.Value.(*StringLit); isStr {
						msg += ": " + sl.Value
					}
				}
			}
			if guardSeverity(g) == "warn" {
				// severity="warn": the run warns and goes on (ir.md's
				// Guard severity "warn").
				b.If(b.Op(ir.OpNot, ok), nil, func() { fl.warn(g.Name.Pos(), fl.str(msg+" (severity warn: the run goes on)")) }, nil)
				continue
			}
			b.If(b.Op(ir.OpNot, ok), nil, func() { fl.fail("guard", fl.str(msg)) }, nil)
		}
		fl.runTrigger(in)
	})
	// Save the persistent variables the run changed, whether it failed
	// or not: what it did before a failure stays done.
	b.SetPos(pos)
	for _, v := range sectionItems(s.State) {
		if v.Scope != Persistent {
			continue
		}
		v := v
		x := fl.get(b.Get(fl.st), v.Name.Name)
		changed := b.Op(ir.OpNot, b.Builtin("value.eq", x, fl.get(b.Get(loaded), v.Name.Name)))
		b.If(b.Op(ir.OpAnd, changed, b.Op(ir.OpNe, b.Builtin("value.kind", x), b.Const(ir.I64, 0))), nil, func() {
			step := fl.step("save "+v.Name.Name, v.Name.Pos())
			b.Effect(ir.OpStatePut, step, nil, fl.str(stateKey(s, v)), x)
		}, nil)
	}
	b.SetPos(pos)
	// The final bindings (grimoire-vm.md: "resolved values for params,
	// state, and outputs"): the parameters with their overrides, then the
	// trigger's variables; the state is exported beside them.
	env := b.CallSym("grim.merge", dyn, fl.obj("params", fl.get(b.Get(fl.ctx), "params")), b.Builtin("obj.new"), b.Get(fl.env))[0]
	b.Effect(ir.OpExport, fl.step("export bindings", pos), nil, fl.str("bindings"), env)
	b.Effect(ir.OpExport, fl.step("export state", pos), nil, fl.str("state"), fl.stateObject(b.Get(fl.st)))
	warnings := fl.get(b.Get(fl.st), warningsKey)
	b.If(b.Op(ir.OpGtS, b.Builtin("list.len", warnings), b.Const(ir.I64, 0)), nil, func() {
		b.Effect(ir.OpExport, fl.step("export warnings", pos), nil, fl.str("warnings"), warnings)
	}, nil)
	e := b.Get(fl.err)
	b.If(b.Builtin("error.is", e), nil, func() {
		b.If(b.Builtin("value.eq", b.Builtin("error.kind", e), fl.str("halt")), nil, func() {
			b.Effect(ir.OpExport, fl.step("export halt_reason", pos), nil, fl.str("halt_reason"), b.Builtin("error.message", e))
		}, nil)
		b.Effect(ir.OpStop, fl.step("failed", pos), nil, fl.str("failed"), e)
	}, nil)
	b.Return(env)
}

// triggerLabel names a trigger for messages and the run's log: its kind,
// with the event's name or the cron expression, and its line.
func triggerLabel(t *Trigger) string {
	s := t.Kind.String()
	switch {
	case t.Kind == Event && t.Event != nil:
		s += " " + strconv.Quote(t.Event.Value)
	case t.Kind == Cron && t.Cron != nil:
		s += " " + strconv.Quote(t.Cron.Value)
	}
	return s + " (line " + strconv.Itoa(t.OnPos.Line) + ")"
}

// needsHost is why a trigger cannot run unless the host chooses it: it
// waits for an event or a schedule that a one-shot run has no source for
// (grimoire-vm.md, "Trigger selection": such a trigger SHOULD NOT be
// selected). "" for `on manual` and a condition trigger without `every`,
// which need nothing but the run itself.
func needsHost(t *Trigger) string {
	switch t.Kind {
	case Manual:
		return ""
	case Condition:
		if t.Every == nil {
			return ""
		}
		return "polls on a schedule (every)"
	case Event:
		return "waits for an event"
	}
	return "runs on a schedule"
}

// defaultTrigger is the trigger a run that chooses none runs, and why:
// `on manual` (the default of hosts without a scheduler), else the first
// declared trigger that needs no event or schedule; -1 when there is none.
func defaultTrigger(ts []*Trigger) (int, string) {
	var eligible []int
	for i, t := range ts {
		if needsHost(t) == "" {
			eligible = append(eligible, i)
		}
	}
	for _, i := range eligible {
		if ts[i].Kind == Manual {
			why := "the default: on manual"
			if len(eligible) > 1 {
				why += fmt.Sprintf(", of %d triggers that need no event or schedule", len(eligible))
			}
			return i, why
		}
	}
	if len(eligible) == 0 {
		return -1, ""
	}
	why := "the only trigger that needs no event or schedule"
	if len(eligible) > 1 {
		why = fmt.Sprintf("the first declared of %d triggers that need no event or schedule", len(eligible))
	}
	return eligible[0], why
}

// runTrigger selects the one trigger the run executes
// (grimoire-vm.md, "Trigger selection"), logs the choice — a note in the
// trace (and the narration) and the result's exports.trigger
// {"kind", "line", "reason"} (with "event" for an event trigger) — and
// runs it:
//
//   - input "event" NAME: the first event trigger of that name;
//   - else input "trigger" KIND: the first trigger of that kind, whatever
//     it needs (the host chose it);
//   - else the default (defaultTrigger).
//
// When none fits, the run fails (kind "trigger") with a message that
// lists the spell's triggers.
func (fl *funcLowerer) runTrigger(in *ir.Value) {
	b := fl.b
	s := fl.spell
	if len(s.Triggers) == 0 {
		fl.fail("trigger", fl.str("the spell has no trigger"))
		return
	}
	var labels []string
	for _, t := range s.Triggers {
		labels = append(labels, triggerLabel(t))
	}
	has := "; the spell has " + joinList(labels)
	ev, kind := fl.get(in, "event"), fl.get(in, "trigger")
	hasEv := b.Op(ir.OpNe, b.Builtin("value.kind", ev), b.Const(ir.I64, 0))
	hasKind := b.Op(ir.OpNe, b.Builtin("value.kind", kind), b.Const(ir.I64, 0))
	sel := fl.newVar("trigger", ir.I64)
	why := fl.newVar("why", ir.Dyn)
	def, defWhy := defaultTrigger(s.Triggers)
	b.If(hasEv, nil, func() {
		b.Set(sel, b.Const(ir.I64, -1))
		for i, t := range s.Triggers {
			if t.Kind != Event {
				continue
			}
			none := b.Op(ir.OpEq, b.Get(sel), b.Const(ir.I64, -1))
			b.If(b.Op(ir.OpAnd, none, b.Builtin("value.eq", ev, fl.str(t.Event.Value))), nil, func() {
				b.Set(sel, b.Const(ir.I64, int64(i)))
			}, nil)
		}
		b.Set(why, b.Builtin("str.concat", fl.str("chosen by the host: the event "), b.Builtin("value.string", ev)))
	}, func() {
		b.If(hasKind, nil, func() {
			b.Set(sel, b.Const(ir.I64, -1))
			for i, t := range s.Triggers {
				none := b.Op(ir.OpEq, b.Get(sel), b.Const(ir.I64, -1))
				b.If(b.Op(ir.OpAnd, none, b.Builtin("value.eq", kind, fl.str(t.Kind.String()))), nil, func() {
					b.Set(sel, b.Const(ir.I64, int64(i)))
				}, nil)
			}
			b.Set(why, b.Builtin("str.concat", fl.str("chosen by the host: trigger "), b.Builtin("value.string", kind)))
		}, func() {
			b.Set(sel, b.Const(ir.I64, int64(def)))
			b.Set(why, fl.str(defWhy))
		})
	})
	var cases []ir.Case
	for i, t := range s.Triggers {
		i, t := i, t
		cases = append(cases, ir.Case{Values: []int64{int64(i)}, Body: func() {
			b.SetPos(t.OnPos)
			info := fl.obj("kind", fl.str(t.Kind.String()))
			if t.Kind == Event && t.Event != nil {
				info = fl.set(info, "event", fl.str(t.Event.Value))
			}
			info = fl.set(info, "line", b.NumberValue(float64(t.OnPos.Line)))
			info = fl.set(info, "reason", b.Get(why))
			fl.note(t.OnPos, "decision", b.Builtin("str.concat", fl.str("Trigger "+triggerLabel(t)+" selected: "), b.Get(why)))
			b.Effect(ir.OpExport, fl.step("export trigger", t.OnPos), nil, fl.str("trigger"), info)
			frame := fl.obj("env", b.Builtin("obj.new"), "st", b.Get(fl.st), "ctx", b.Get(fl.ctx))
			res := b.CallSym("trigger"+strconv.Itoa(i), dyn, frame)[0]
			b.Set(fl.env, fl.get(res, "env"))
			b.Set(fl.st, fl.get(res, "st"))
			b.Set(fl.err, fl.get(res, "err"))
		}})
	}
	b.Switch(b.Get(sel), nil, cases, func() {
		what := b.If(hasEv, dyn, func() {
			b.Yield(b.Builtin("str.concat", fl.str("no event trigger for "), b.Builtin("value.string", ev)))
		}, func() {
			b.Yield(b.If(hasKind, dyn, func() {
				b.Yield(b.Builtin("str.concat", fl.str("no trigger of kind "), b.Builtin("value.string", kind)))
			}, func() {
				b.Yield(fl.str("no trigger can run without a choice: each waits for an event or a schedule; choose one with --trigger KIND or --event NAME"))
			})[0])
		})[0]
		fl.raise(b.Builtin("error.new", fl.str("trigger"), b.Builtin("str.concat", what, fl.str(has))))
	})
}

// joinList joins words as "a, b and c".
func joinList(ws []string) string {
	switch len(ws) {
	case 0:
		return ""
	case 1:
		return ws[0]
	}
	return strings.Join(ws[:len(ws)-1], ", ") + " and " + ws[len(ws)-1]
}
