package vvm

import (
	"fmt"
	"slices"
	"strings"

	"github.com/genesis-toolchain/genesis/diag"
	"github.com/genesis-toolchain/genesis/ir"
)

// ── Expressions ──

// expr evaluates e (left to right, spec.md §12.2) and returns its value;
// a failure raises.
func (fl *funcLowerer) expr(e Expr) *ir.Value {
	b := fl.b
	b.SetPos(e.Pos())
	switch e := e.(type) {
	case *Ident:
		return fl.read(e)
	case *ItExpr:
		return fl.it
	case *UnitLit:
		return b.UnitValue()
	case *BoolLit:
		return b.ConstValue(ir.Literal{Kind: ir.LitBool, Int: boolInt(e.Value)})
	case *NumberLit:
		return b.NumberValue(e.Value)
	case *StringLit:
		return b.StringValue(e.Value)
	case *ListLit:
		l := b.Builtin("list.new")
		for _, x := range e.Elems {
			v := fl.expr(x)
			l = b.Builtin("list.append", l, v)
		}
		return l
	case *ObjectLit:
		o := b.Builtin("obj.new")
		for _, f := range e.Fields {
			v := fl.expr(f.Value)
			b.SetPos(f.KeyPos)
			o = b.Builtin("obj.set", o, b.StringValue(f.Key), v)
		}
		return o
	case *UnaryExpr:
		x := fl.cond(e.X, "the operand of not")
		b.SetPos(e.OpPos)
		return b.Builtin("value.bool", b.Op(ir.OpNot, x))
	case *BinaryExpr:
		return fl.binary(e)
	case *CallExpr:
		return fl.call(e)
	case *AgentCall:
		return fl.agentCall(e)
	case *SemPred:
		input := fl.it
		if e.Input != nil {
			input = fl.expr(e.Input)
		}
		return fl.judge(e.Criterion, input, e.QPos, false)
	case *MemberExpr:
		x := fl.expr(e.X)
		b.SetPos(e.NamePos)
		return fl.checked(b.CallSym("vvm.member", dyn2, x, b.StringValue(e.Name)))
	case *IndexExpr:
		x := fl.expr(e.X)
		i := fl.expr(e.Index)
		b.SetPos(e.Lbrack)
		return fl.checked(b.CallSym("vvm.index", dyn2, x, i))
	case *WithExpr:
		x := fl.expr(e.X)
		b.SetPos(e.Dot)
		fl.requireAgent(x, "the value before .with")
		return b.CallSym("vvm.with_config", dyn, x, fl.kwObject(e.Args))[0]
	case *LambdaExpr:
		return fl.funcValue(fl.l.fnOf(e, fl.mod))
	}
	panic(fmt.Sprintf("vvm: no lowering for %T", e))
}

func boolInt(v bool) int64 {
	if v {
		return 1
	}
	return 0
}

// read returns the value of the name id, raising thrown when it is not
// bound yet (spec.md §4.5).
func (fl *funcLowerer) read(id *Ident) *ir.Value {
	b := fl.b
	sym := id.Sym
	if sym == nil {
		panic("vvm: unresolved name " + id.Name)
	}
	b.SetPos(id.NamePos)
	switch sym.Kind {
	case SymAgent:
		if sym.Scope == fl.mod.Agents || sym.Agent != nil {
			return fl.agentConfig(sym)
		}
	case SymBuiltin:
		fl.thrownInExpr(id.Name + " is a standard-library function: call it, or wrap it in a lambda to pass it")
		return b.UnitValue()
	case SymModule:
		fl.thrownInExpr(id.Name + " is a module: call it with its inputs, " + id.Name + "(name=value, …)")
		return b.UnitValue()
	}
	if isHoisted(sym) || sym.Kind == SymParam {
		return fl.symValue(sym)
	}
	if _, isVar := fl.vars[sym]; isVar && fl.bound[sym] {
		return fl.symValue(sym)
	}
	v := fl.symValue(sym)
	b.If(b.Builtin("error.is", v), nil, func() {
		fl.thrown(id.Name + " is not bound yet")
	}, nil)
	return v
}

// binary lowers the binary operators (spec.md §3.1.3, §8.1).
func (fl *funcLowerer) binary(e *BinaryExpr) *ir.Value {
	b := fl.b
	switch e.Op {
	case OpAnd, OpOr:
		x := fl.cond(e.X, "the left operand of "+e.Op.String())
		b.SetPos(e.OpPos)
		var r *ir.Value
		if e.Op == OpAnd {
			r = b.If(x, []ir.Type{ir.Bool}, func() {
				b.Yield(fl.cond(e.Y, "the right operand of and"))
			}, func() { b.Yield(b.Bool(false)) })[0]
		} else {
			r = b.If(x, []ir.Type{ir.Bool}, func() { b.Yield(b.Bool(true)) }, func() {
				b.Yield(fl.cond(e.Y, "the right operand of or"))
			})[0]
		}
		return b.Builtin("value.bool", r)
	}
	x := fl.expr(e.X)
	y := fl.expr(e.Y)
	b.SetPos(e.OpPos)
	switch e.Op {
	case OpEq, OpNe:
		eq := fl.checkedBool(b.CallSym("vvm.eq", []ir.Type{ir.Bool, ir.Dyn}, x, y))
		if e.Op == OpNe {
			eq = b.Op(ir.OpNot, eq)
		}
		return b.Builtin("value.bool", eq)
	case OpLt, OpLe, OpGt, OpGe:
		c := fl.checkedInt(b.CallSym("vvm.compare", []ir.Type{ir.I64, ir.Dyn}, x, y))
		op := map[Op]ir.Op{OpLt: ir.OpLtS, OpLe: ir.OpLeS, OpGt: ir.OpGtS, OpGe: ir.OpGeS}[e.Op]
		return b.Builtin("value.bool", b.Op(op, c, b.Const(ir.I64, 0)))
	case OpAdd:
		return fl.checked(b.CallSym("vvm.add", dyn2, x, y))
	case OpSub:
		return fl.checked(b.CallSym("vvm.sub", dyn2, x, y))
	}
	panic("vvm: no lowering for operator " + e.Op.String())
}

func (fl *funcLowerer) checkedInt(res []*ir.Value) *ir.Value {
	fl.raiseIf(res[1])
	return res[0]
}

// kwObject evaluates keyword arguments into an object, in order.
func (fl *funcLowerer) kwObject(kws []*KwArg) *ir.Value {
	b := fl.b
	o := b.Builtin("obj.new")
	for _, kw := range kws {
		v := fl.expr(kw.Value)
		b.SetPos(kw.NamePos)
		o = b.Builtin("obj.set", o, b.StringValue(kw.Name), v)
	}
	return o
}

// ── Templates and judgements ──

// render renders a template (spec.md §5): its text, {} as the primary
// input and {name.member…} as that value, each rendered by @vvm.render
// (a string as itself, a ref as its preview, anything else as canonical
// JSON).
func (fl *funcLowerer) render(t *Template, primary *ir.Value) *ir.Value {
	b := fl.b
	var acc *ir.Value
	add := func(v *ir.Value) {
		if acc == nil {
			acc = v
		} else {
			acc = b.Builtin("str.concat", acc, v)
		}
	}
	for _, p := range t.Parts {
		b.SetPos(p.Pos())
		switch p.Kind {
		case TextPart:
			add(b.StringValue(p.Text))
		case InputPart:
			add(b.CallSym("vvm.render", dyn, primary)[0])
		case NamePart:
			v := fl.read(p.Name)
			for _, m := range p.Path {
				v = fl.checked(b.CallSym("vvm.member", dyn2, v, b.StringValue(m)))
			}
			add(b.CallSym("vvm.render", dyn, v)[0])
		}
	}
	if acc == nil {
		acc = b.StringValue("")
	}
	return acc
}

// judge evaluates the semantic predicate ?`criterion` on input: a
// judgement by the model, true or false (spec.md §6). require says the
// predicate is a constrain's requirement (§9.1).
//
// A judgement the model gave but that is neither true nor false (kind
// "judge": "maybe", a sentence) or that it refused (kind "refused") is
// uncertain: the predicate is false and a requirement violated — "if
// uncertain, return false" (§6), "if a requirement is uncertain, treat
// it as violated" (§9.1) — and the run says so: an event
// vvm.predicate_uncertain (the result's events, the trace) and a
// warning note (the narration). A run without a model stops (stopIf);
// any other failure (a timeout, an unreachable service) is a failed
// evaluation and raises thrown (§6).
func (fl *funcLowerer) judge(t *Template, input *ir.Value, pos diag.Pos, require bool) *ir.Value {
	b := fl.b
	question := fl.render(t, input)
	question = b.CallSym("vvm.with_input", dyn, question, input)[0]
	b.SetPos(pos)
	name := predName(t)
	r := b.Effect(ir.OpJudge, name, nil, question, b.Builtin("obj.new"))
	outcome := b.CallSym("vvm.effect_outcome", []ir.Type{ir.I64}, r)[0]
	fl.stopIf(outcome, r, "the semantic predicate "+name, name, t.Open)
	b.If(b.Op(ir.OpEq, outcome, b.Const(ir.I64, outcomeFailed)), nil, func() {
		fl.raise(b.CallSym("vvm.judge_failed", dyn, b.StringValue(name), r)[0])
	}, nil)
	return b.If(b.Op(ir.OpEq, outcome, b.Const(ir.I64, outcomeUncertain)), dyn, func() {
		falseV := b.ConstValue(ir.Literal{Kind: ir.LitBool})
		treated, rule := falseV, "false (spec.md §6: if uncertain, return false)"
		if require {
			treated, rule = b.StringValue("violated"), "violated (spec.md §9.1: if a requirement is uncertain, treat it as violated)"
		}
		b.SetPos(pos)
		event := b.CallSym("vvm.uncertain_event", dyn, b.StringValue(t.Raw), r, treated)[0]
		b.Effect(ir.OpEmit, "uncertain", nil, b.StringValue("vvm.predicate_uncertain"), event)
		note := b.CallSym("vvm.uncertain_note", dyn, b.StringValue(name), r, b.StringValue(rule))[0]
		b.Effect(ir.OpTrace, "warning", nil, b.StringValue("note"), note)
		b.Yield(falseV)
	}, func() { b.Yield(r) })[0]
}

// The outcomes of an effect, as @vvm.effect_outcome classifies its result.
const (
	outcomeOK        = 0 // a value
	outcomeConfig    = 1 // kind "config": the host has no model for it
	outcomeUncertain = 2 // kind "judge" or "refused": a judgement the model did not decide
	outcomeFailed    = 3 // any other failure
)

// stopUnconfigured ends the run when the effect result r says the host
// has no model for it (stopIf).
func (fl *funcLowerer) stopUnconfigured(r *ir.Value, what, step string, pos diag.Pos) {
	fl.stopIf(fl.b.CallSym("vvm.effect_outcome", []ir.Type{ir.I64}, r)[0], r, what, step, pos)
}

// stopIf ends the run, status failed and kind "config", when outcome is
// outcomeConfig: the host has no model for the effect (no LLM provider,
// or none that knows which model to use). what, e.g. "agent @writer",
// names the call in the message. A missing configuration is no failure
// of the call that a program could handle (an error value, spec.md
// §3.4) but of the run: without the stop every agent call would
// "succeed" with an error value in the exports. The stop is at pos
// under the effect's step name, so the result names the effect's step.
func (fl *funcLowerer) stopIf(outcome, r *ir.Value, what, step string, pos diag.Pos) {
	b := fl.b
	b.If(b.Op(ir.OpEq, outcome, b.Const(ir.I64, outcomeConfig)), nil, func() {
		e := b.CallSym("vvm.config_error", dyn, b.StringValue(what), r)[0]
		b.SetPos(pos)
		b.Effect(ir.OpStop, step, nil, b.StringValue("failed"), e)
	}, nil)
}

// predName is the step name of a predicate: ?`its criterion`, shortened.
func predName(t *Template) string {
	text := strings.Join(strings.Fields(t.Raw), " ")
	if r := []rune(text); len(r) > 40 {
		text = string(r[:37]) + "..."
	}
	return "?`" + text + "`"
}

// ── Agents ──

// agentConfig builds the configuration value of a declared agent:
// {"$agent": name, key: value, …} (its values are literals, E041).
func (fl *funcLowerer) agentConfig(sym *Symbol) *ir.Value {
	b := fl.b
	o := b.Builtin("obj.set", b.Builtin("obj.new"), b.StringValue("$agent"), b.StringValue(sym.Name))
	if sym.Agent == nil {
		return o
	}
	for _, kw := range sym.Agent.Config {
		v := fl.expr(kw.Value)
		o = b.Builtin("obj.set", o, b.StringValue(kw.Name), v)
	}
	return o
}

// requireAgent raises thrown when v is not an agent value.
func (fl *funcLowerer) requireAgent(v *ir.Value, what string) {
	b := fl.b
	isAgent := b.Builtin("obj.has", v, b.StringValue("$agent"))
	b.If(b.Op(ir.OpNot, isAgent), nil, func() {
		msg := b.Builtin("str.concat", b.StringValue(what+" must be an agent, not "), b.CallSym("vvm.kind_name", dyn, v)[0])
		fl.raise(b.CallSym("vvm.thrown", dyn, msg)[0])
	}, nil)
}

// agentRef evaluates the agent of a call, and names its step.
func (fl *funcLowerer) agentRef(ref *AgentRef) (agent *ir.Value, name string) {
	b := fl.b
	b.SetPos(ref.At)
	switch {
	case ref.Name == nil:
		o := fl.kwObject(ref.Inline)
		agent, name = b.Builtin("obj.set", o, b.StringValue("$agent"), b.StringValue("inline")), "agent"
	case ref.Name.Sym != nil && ref.Name.Sym.Kind == SymAgent:
		agent, name = fl.agentConfig(ref.Name.Sym), ref.Name.Name
	default:
		agent, name = fl.read(ref.Name), ref.Name.Name
		fl.requireAgent(agent, "@"+ref.Name.Name)
	}
	if ref.HasWith {
		agent = b.CallSym("vvm.with_config", dyn, agent, fl.kwObject(ref.With))[0]
	}
	return agent, name
}

// The error kinds retry=n retries (spec.md §3.4).
var retryKinds = []string{"spawn_failed", "timeout", "rejected"}

// agentCall lowers @agent `template`(input, options) (spec.md §3.4): the
// agent, the input (or it), the options, the prompt — the rendered
// template, and the input in the text encoding of §3.4 — and one llm
// effect whose failure is an error value.
func (fl *funcLowerer) agentCall(e *AgentCall) *ir.Value {
	b := fl.b
	agent, step := fl.agentRef(e.Agent)
	input := fl.it
	if e.Input != nil {
		input = fl.expr(e.Input)
	}
	opts := b.CallSym("vvm.agent_options", dyn, agent)[0]
	var mode *ir.Value
	for _, kw := range e.Options {
		v := fl.expr(kw.Value)
		b.SetPos(kw.NamePos)
		switch kw.Name {
		case "memory_mode":
			mode = v
			opts = b.Builtin("obj.set", opts, b.StringValue(kw.Name), v)
		case "retry":
			opts = b.Builtin("obj.set", opts, b.StringValue("retries"), v)
			kinds := b.Builtin("list.new")
			for _, k := range retryKinds {
				kinds = b.Builtin("list.append", kinds, b.StringValue(k))
			}
			opts = b.Builtin("obj.set", opts, b.StringValue("retry_on"), kinds)
		case "timeout":
			opts = b.Builtin("obj.set", opts, b.StringValue("timeout"), v) // seconds, or a duration string
		case "name":
			if s, ok := kw.Value.(*StringLit); ok && s.Value != "" {
				step = s.Value
			}
			opts = b.Builtin("obj.set", opts, b.StringValue("name"), v)
		default:
			opts = b.Builtin("obj.set", opts, b.StringValue(kw.Name), v)
		}
	}
	b.SetPos(e.Template.Open)
	prompt := fl.render(e.Template, input)
	prompt = b.CallSym("vvm.with_input", dyn, prompt, input)[0]
	call := func(prompt *ir.Value) *ir.Value {
		b.SetPos(e.Agent.At)
		r := b.Effect(ir.OpLLM, step, nil, prompt, opts)
		fl.stopUnconfigured(r, "agent "+agentLabel(e.Agent, step), step, e.Template.Open)
		return b.CallSym("vvm.from_effect", dyn, r)[0]
	}
	if !mayHaveMemory(e.Agent) {
		return call(prompt)
	}
	return fl.memoryCall(agent, prompt, mode, e.Agent.At, call)
}

// agentLabel names the agent of a call in a message: @name (and the
// step name when name= renames it), or the inline agent.
func agentLabel(ref *AgentRef, step string) string {
	if ref.Name == nil {
		return "@{…} (inline)"
	}
	if step != ref.Name.Name {
		return "@" + ref.Name.Name + " (" + step + ")"
	}
	return "@" + ref.Name.Name
}

// ── Calls ──

// call lowers f(args): a standard-library function, a module call, a
// direct call of a def known statically, or a call of a function value.
func (fl *funcLowerer) call(e *CallExpr) *ir.Value {
	b := fl.b
	sym := e.Fun.Sym
	if sym != nil && sym.Kind == SymBuiltin {
		return fl.builtin(e)
	}
	if sym != nil && sym.Kind == SymModule && sym.Import != nil && sym.Import.Module != nil {
		return fl.moduleCall(e, sym.Import.Module)
	}
	if e.Func != nil {
		if fi := fl.l.fnOf(e.Func, fl.declModule(e.Func)); fl.capturesHere(fi) {
			return fl.directCall(e, fi)
		}
	}
	f := fl.read(e.Fun)
	args := b.Builtin("list.new")
	for _, a := range e.Args {
		v := fl.expr(a)
		args = b.Builtin("list.append", args, v)
	}
	kwargs := fl.kwObject(e.Kwargs)
	b.SetPos(e.Lparen)
	return fl.checked(b.CallSym("vvm.apply", dyn2, f, args, kwargs, fl.it))
}

// declModule returns the module a def is declared in.
func (fl *funcLowerer) declModule(d *FuncDecl) *Module {
	if d.Scope != nil && d.Scope.Module != nil {
		return d.Scope.Module
	}
	return fl.mod
}

// capturesHere reports whether every capture of fi has its value here,
// so that a direct call can pass them.
func (fl *funcLowerer) capturesHere(fi *fnInfo) bool {
	for _, c := range fi.captures {
		_, isVar := fl.vars[c]
		_, isCap := fl.caps[c]
		if !isVar && !isCap {
			return false
		}
	}
	return true
}

// directCall calls a def known statically, binding the arguments to its
// parameters here (bindArgs).
func (fl *funcLowerer) directCall(e *CallExpr, fi *fnInfo) *ir.Value {
	b := fl.b
	params := make([]string, len(fi.params))
	for i, p := range fi.params {
		params[i] = p.Name
	}
	vals, ok := fl.bindArgs(e, fi.decl.Name.Name, params)
	if !ok {
		return b.UnitValue()
	}
	b.SetPos(e.Lparen)
	args := append([]*ir.Value(nil), vals...)
	for _, c := range fi.captures {
		args = append(args, fl.symValue(c))
	}
	args = append(args, fl.it, fl.currentEnv(fi.mod))
	return fl.checked(b.CallSym(fi.name, dyn2, args...))
}

// moduleCall runs a module imported with `* as` with its inputs, the
// keyword arguments (spec-newer.md §11.6): its exports, or an error
// value (missing_input, unknown_input, or module_failed around what the
// module raised).
func (fl *funcLowerer) moduleCall(e *CallExpr, mod *Module) *ir.Value {
	b := fl.b
	inputs := fl.kwObject(e.Kwargs)
	b.SetPos(e.Lparen)
	res := b.CallSym(fl.l.mods[mod].fn, dyn3, inputs, b.UnitValue(), fl.allEnvs())
	raised := res[2]
	failed := fl.raised(raised)
	return b.If(failed, dyn, func() {
		kind := b.CallSym("vvm.error_kind", dyn, raised)[0]
		contract := b.Op(ir.OpOr, b.Builtin("value.eq", kind, b.StringValue("missing_input")),
			b.Builtin("value.eq", kind, b.StringValue("unknown_input")))
		b.Yield(b.If(contract, dyn, func() { b.Yield(raised) }, func() {
			err := b.CallSym("vvm.error", dyn, b.StringValue("module_failed"),
				b.StringValue("module "+mod.Path+" raised an error"))[0]
			data := b.Builtin("obj.set", b.Builtin("obj.new"), b.StringValue("module"), b.StringValue(mod.Path))
			data = b.Builtin("obj.set", data, b.StringValue("error"), raised)
			inner := b.Builtin("obj.set", b.Builtin("obj.get", err, b.StringValue("error")), b.StringValue("data"), data)
			b.Yield(b.Builtin("obj.set", err, b.StringValue("error"), inner))
		})[0])
	}, func() { b.Yield(res[0]) })[0]
}

// bindArgs evaluates a call's arguments, left to right, and binds them to
// params by position and by name (spec.md §11.1); a parameter whose name
// ends in "?" is optional, and nil when not given. Arguments that do not
// fit — too many, an unknown or repeated keyword, a missing one — raise
// thrown when the call runs, as the spec says, and ok is false.
func (fl *funcLowerer) bindArgs(e *CallExpr, name string, params []string) (vals []*ir.Value, ok bool) {
	vals = make([]*ir.Value, len(params))
	problem := ""
	fail := func(format string, args ...any) {
		if problem == "" {
			problem = fmt.Sprintf(format, args...)
		}
	}
	for i, a := range e.Args {
		v := fl.expr(a)
		if i < len(params) {
			vals[i] = v
		} else {
			fail("%s takes %d argument%s, not %d", name, len(params), plural(len(params)), len(e.Args))
		}
	}
	for _, kw := range e.Kwargs {
		v := fl.expr(kw.Value)
		i := slices.IndexFunc(params, func(p string) bool { return strings.TrimSuffix(p, "?") == kw.Name })
		switch {
		case i < 0:
			fail("%s has no parameter %s", name, kw.Name)
		case vals[i] != nil:
			fail("%s: parameter %s is given twice", name, kw.Name)
		default:
			vals[i] = v
		}
	}
	for i, p := range params {
		if vals[i] == nil && !strings.HasSuffix(p, "?") {
			fail("%s: missing argument %s", name, p)
		}
	}
	if problem != "" {
		fl.b.SetPos(e.Lparen)
		fl.thrownInExpr(problem)
		return nil, false
	}
	return vals, true
}
