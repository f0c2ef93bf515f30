package nanovm

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/genesis-toolchain/genesis/diag"
	"github.com/genesis-toolchain/genesis/ir"
)

// Lower compiles a checked program (Check returned no error) to an IR
// module. Its entry is
//
//	func @main(%context: dyn) -> dyn
//
// which runs the program on the initial context (an object) and returns
// the final output when the run succeeds; every other end is a stop
// effect with the status ("failed", "budget_exceeded", "stalled") and an
// error value, and a suspended run is one waiting in a wait effect.
// docs/nanovm.md describes the scheme.
func Lower(p *Program) *ir.Module {
	l := &lowerer{p: p, m: ir.NewModule(), helpers: map[string]*ir.Func{}}
	l.main()
	return l.m
}

// Names of the functions a module holds besides @main (only those it
// uses).
const (
	fnRef      = "nanovm.ref"
	fnSubst    = "nanovm.subst"
	fnLookup   = "nanovm.lookup"
	fnOrder    = "nanovm.order"
	fnContains = "nanovm.contains"
)

// The statuses of a run that does not succeed, and the kinds of the
// error values this lowering makes.
const (
	statusFailed         = "failed"
	statusBudgetExceeded = "budget_exceeded"
	statusStalled        = "stalled"

	kindBudgetSteps    = "budget.steps"
	kindBudgetTokens   = "budget.tokens"
	kindStalled        = "stalled"
	kindAllowedOutputs = "allowed_outputs"
	kindCondition      = "condition"
	kindNoBranch       = "no_branch"
	kindUnknownStep    = "unknown_step"
)

// value kinds, as value.kind returns them.
const (
	kindNumber = 2
	kindString = 3
	kindList   = 4
	kindObject = 5
)

type lowerer struct {
	p       *Program
	m       *ir.Module
	f       *ir.Func
	b       *ir.Builder
	helpers map[string]*ir.Func

	data, outputs, final, steps, stalled, tokens *ir.Local

	// modes are the reachable nodes of the step graph (a step and the way
	// it is entered, see node). via, only made when some step is entered
	// both ordinarily and as a branch target, is 1 when the step about to
	// run is entered as a branch target; viaNow is its value read at the
	// start of such a step.
	modes  []bool
	via    *ir.Local
	viaNow *ir.Value

	// Per step: the visit counter (the step identity's iteration counter)
	// and the outputs of before the step, for the stall check.
	k      *ir.Value
	before *ir.Value
}

func (l *lowerer) main() {
	p := l.p
	pos := p.Root.Pos
	l.f = l.m.NewFunc("main", []ir.Type{ir.Dyn}, []ir.Type{ir.Dyn}, pos)
	l.f.Params[0].Name = "context"
	l.b = ir.NewBuilder(l.f)
	b := l.b
	l.data = l.f.NewVar("data", ir.Dyn, pos)
	l.outputs = l.f.NewVar("outputs", ir.Dyn, pos)
	l.final = l.f.NewVar("final", ir.Dyn, pos)
	l.steps = l.f.NewVar("steps", ir.I64, pos)
	if p.MaxStalledSteps != nil {
		l.stalled = l.f.NewVar("stalled", ir.I64, p.MaxStalledSteps.Node.Pos)
	}
	if p.MaxTokens != nil {
		l.tokens = l.f.NewVar("tokens", ir.I64, p.MaxTokens.Node.Pos)
	}

	// $data starts as the context (an object; anything else counts as
	// none), $outputs as the empty object.
	ctx := l.f.Params[0]
	isObj := b.Op(ir.OpEq, b.Builtin("value.kind", ctx), b.Const(ir.I64, kindObject))
	d0 := b.If(isObj, []ir.Type{ir.Dyn}, func() { b.Yield(ctx) }, func() { b.Yield(b.Builtin("obj.new")) })
	b.Set(l.data, d0[0])
	b.Set(l.outputs, b.Builtin("obj.new"))

	l.modes = p.reachedModes()
	reached := make([]bool, len(p.Steps))
	for _, s := range p.Steps {
		reached[s.Index] = l.modes[node(s, false)] || l.modes[node(s, true)]
		if l.both(s) && l.via == nil {
			l.via = l.f.NewVar("via", ir.I64, pos)
			b.Set(l.via, b.Const(ir.I64, 0))
		}
	}
	start := b.Const(ir.I64, 0)
	res := b.Loop("run", []*ir.Value{start}, []ir.Type{ir.Dyn}, func(_ string, params []*ir.Value) {
		params[0].Name = "pc"
		var cases []ir.Case
		for _, s := range p.Steps {
			if !reached[s.Index] {
				continue
			}
			cases = append(cases, ir.Case{Values: []int64{int64(s.Index)}, Body: func() { l.step(s) }})
		}
		b.SetPos(pos)
		b.Switch(params[0], nil, cases, func() {
			b.SetPos(pos)
			b.Unreachable()
		})
		b.SetPos(pos)
		b.Unreachable()
	})
	b.SetPos(pos)
	b.Return(res...)
}

// both reports whether step s is entered both ordinarily and as a
// branch target and goes elsewhere after each, so that where it goes next
// is decided at run time. (After a step with is_terminal or a next_step
// the way it was entered makes no difference.)
func (l *lowerer) both(s *Step) bool {
	dependent := !s.IsTerminal && (s.Type == Condition || s.NextStep == nil)
	return dependent && l.modes[node(s, false)] && l.modes[node(s, true)]
}

// modal emits f for the ways step s is entered: f(via) alone when s is
// entered one way only, else an if on the via flag read at its start.
func (l *lowerer) modal(s *Step, f func(via bool)) {
	if !l.both(s) {
		f(l.modes[node(s, true)])
		return
	}
	b := l.b
	viaNow := l.viaNow
	isVia := b.Op(ir.OpNe, viaNow, b.Const(ir.I64, 0))
	b.If(isVia, nil, func() { f(true) }, func() { f(false) })
	b.SetPos(s.Node.Pos)
	b.Unreachable()
}

// ── One step ──

// step lowers one top-level step: the budget guards, the step's work,
// the state updates, the stall check and the jump to its successor.
// Every path ends in continue ^run (the next step), break ^run (success,
// with the final output) or a stop.
func (l *lowerer) step(s *Step) {
	b := l.b
	b.SetPos(s.Node.Pos)
	l.viaNow = nil
	if l.both(s) {
		l.viaNow = b.Get(l.via)
	}
	l.budgetGuards(s)
	b.SetPos(s.Node.Pos)
	n := b.Get(l.steps)
	l.k = b.Op(ir.OpAdd, n, b.Const(ir.I64, 1))
	b.Set(l.steps, l.k)
	l.before = nil
	if l.stalled != nil {
		l.before = b.Get(l.outputs)
	}
	switch s.Type {
	case Condition:
		l.condition(s)
	case Parallel:
		l.parallel(s)
	default:
		outputs, data := l.state(stepRefs(s))
		out, ok := l.leaf(s, outputs, data, true)
		b.SetPos(s.Node.Pos)
		l.store(s, out, ok)
		l.stallCheck(s)
		l.successor(s, false)
	}
}

// state returns the current $outputs and $data for a step that reads
// references, nil for one that does not.
func (l *lowerer) state(refs bool) (outputs, data *ir.Value) {
	if !refs {
		return nil, nil
	}
	return l.b.Get(l.outputs), l.b.Get(l.data)
}

// stepRefs reports whether a step (or one of its sub-steps) has a
// $reference in its prompt, system message, arguments or condition.
func stepRefs(s *Step) bool {
	if s.Prompt != nil && len(s.Prompt.Refs()) > 0 || s.System != nil && len(s.System.Refs()) > 0 {
		return true
	}
	if s.Args != nil && nodeRefs(s.Args) {
		return true
	}
	if s.Cond != nil {
		found := false
		walkExpr(s.Cond, func(e Expr) {
			if _, ok := e.(*VarRef); ok {
				found = true
			}
		})
		if found {
			return true
		}
	}
	for _, sub := range s.Sub {
		if stepRefs(sub) {
			return true
		}
	}
	return false
}

// nodeRefs reports whether a string of the value n has a $reference.
func nodeRefs(n *Node) bool {
	switch n.Kind {
	case String:
		return refPattern.MatchString(n.Text)
	case Array:
		for _, it := range n.Items {
			if nodeRefs(it) {
				return true
			}
		}
	case Object:
		for _, f := range n.Fields {
			if nodeRefs(f.Value) {
				return true
			}
		}
	}
	return false
}

// stop ends the run: the stop effect of step name at pos, with the
// status and an error value of that kind and message.
func (l *lowerer) stop(name string, pos diag.Pos, iters []*ir.Value, status string, err *ir.Value) {
	b := l.b
	b.SetPos(pos)
	b.Effect(ir.OpStop, name, iters, b.StringValue(status), err)
}

// newError makes an error value.
func (l *lowerer) newError(kind string, msg *ir.Value) *ir.Value {
	return l.b.Builtin("error.new", l.b.StringValue(kind), msg)
}

// budgetGuards stops the run with budget_exceeded when max_steps steps
// have run or max_tokens tokens are spent, before the step runs. The
// stops are at the budget's key, so that each has its own identity.
func (l *lowerer) budgetGuards(s *Step) {
	b := l.b
	p := l.p
	if p.MaxSteps != nil {
		b.SetPos(p.MaxSteps.Node.Pos)
		n := b.Get(l.steps)
		over := b.Op(ir.OpGeS, n, b.Const(ir.I64, p.MaxSteps.N))
		b.If(over, nil, func() {
			msg := fmt.Sprintf("max_steps=%d exceeded after %d step(s)", p.MaxSteps.N, p.MaxSteps.N)
			l.stop(s.ID, p.MaxSteps.Node.Pos, []*ir.Value{n}, statusBudgetExceeded, l.newError(kindBudgetSteps, b.StringValue(msg)))
		}, nil)
	}
	if p.MaxTokens != nil {
		b.SetPos(p.MaxTokens.Node.Pos)
		n := b.Get(l.steps)
		used := b.Get(l.tokens)
		over := b.Op(ir.OpGeS, used, b.Const(ir.I64, p.MaxTokens.N))
		b.If(over, nil, func() {
			msg := b.StringValue(fmt.Sprintf("max_tokens=%d exceeded: ", p.MaxTokens.N))
			msg = b.Builtin("str.concat", msg, b.Builtin("num.from_int", used))
			msg = b.Builtin("str.concat", msg, b.StringValue(" tokens consumed"))
			l.stop(s.ID, p.MaxTokens.Node.Pos, []*ir.Value{n}, statusBudgetExceeded, l.newError(kindBudgetTokens, msg))
		}, nil)
	}
}

// succeed ends the run with success: break ^run with the final output.
func (l *lowerer) succeed() {
	l.b.Break("run", l.b.Get(l.final))
}

// store records a step's output: in $outputs under its id, in $data
// under its output_key, and as the final output when the step succeeded
// (ok nil means it did). A skipped step's output is None (unit).
func (l *lowerer) store(s *Step, out, ok *ir.Value) {
	b := l.b
	l.storeOutput(s, out)
	if ok == nil {
		b.Set(l.final, out)
		return
	}
	b.If(ok, nil, func() { b.Set(l.final, out) }, nil)
}

// storeOutput writes out to $outputs[id] and $data[output_key], and
// puts the output_key in the result's outputs (a trace "output", at the
// output_key's value).
func (l *lowerer) storeOutput(s *Step, out *ir.Value) {
	l.storeOutputAt(s, out, diag.Pos{})
}

// storeOutputAt is storeOutput with the trace "output" at pos when it is
// set: a step that stores its output on two paths (a condition evaluated
// or skipped) needs two identities.
func (l *lowerer) storeOutputAt(s *Step, out *ir.Value, pos diag.Pos) {
	b := l.b
	b.Set(l.outputs, b.Builtin("obj.set", b.Get(l.outputs), b.StringValue(s.ID), out))
	if s.OutputKey != "" {
		at := s.Field("output_key").Pos
		if pos.Line > 0 {
			at = pos
		}
		b.SetPos(at)
		key := b.StringValue(s.OutputKey)
		b.Set(l.data, b.Builtin("obj.set", b.Get(l.data), key, out))
		b.Effect(ir.OpTrace, s.ID, []*ir.Value{l.k}, b.StringValue("output"), b.Builtin("obj.set", b.Builtin("obj.new"), key, out))
		b.SetPos(s.Node.Pos)
	}
}

// stalledKeyPos is the position of the program's max_stalled_steps key.
func (l *lowerer) stalledKeyPos() diag.Pos {
	for _, f := range l.p.Root.Fields {
		if f.Key == "max_stalled_steps" {
			return f.KeyPos
		}
	}
	return diag.Pos{}
}

// stallCheck counts the steps in a row after which $outputs is unchanged
// and stops the run with stalled when they reach max_stalled_steps.
func (l *lowerer) stallCheck(s *Step) {
	l.stallCheckAt(s, diag.Pos{})
}

// stallCheckAt is stallCheck with its stop at pos when it is set (a
// second identity for a step checked on two paths).
func (l *lowerer) stallCheckAt(s *Step, pos diag.Pos) {
	if l.stalled == nil {
		return
	}
	b := l.b
	at := l.p.MaxStalledSteps.Node.Pos
	if pos.Line > 0 {
		at = pos
	}
	b.SetPos(at)
	lim := l.p.MaxStalledSteps.N
	same := b.Builtin("value.eq", l.before, b.Get(l.outputs))
	cnt := b.If(same, []ir.Type{ir.I64}, func() {
		b.Yield(b.Op(ir.OpAdd, b.Get(l.stalled), b.Const(ir.I64, 1)))
	}, func() {
		b.Yield(b.Const(ir.I64, 0))
	})
	b.Set(l.stalled, cnt[0])
	over := b.Op(ir.OpGeS, cnt[0], b.Const(ir.I64, lim))
	b.If(over, nil, func() {
		msg := fmt.Sprintf("max_stalled_steps=%d exceeded: %d consecutive no-op step(s)", lim, lim)
		l.stop(s.ID, at, []*ir.Value{l.k}, statusStalled, l.newError(kindStalled, b.StringValue(msg)))
	}, nil)
	b.SetPos(s.Node.Pos)
}

// successor jumps to where control goes after a step that is not a
// condition. A next_step that names no step stops the run, at the
// next_step value (or, on the way from a resumption, at its key: each
// stop has its own identity).
func (l *lowerer) successor(s *Step, resumed bool) {
	l.b.SetPos(s.Node.Pos)
	viaNow := l.viaNow
	l.modal(s, func(via bool) {
		l.viaNow = viaNow
		l.b.SetPos(s.Node.Pos)
		e := l.p.plainSuccessor(s, via)
		if s.IsTerminal {
			e = edge{kind: toEnd}
		}
		if e.kind == toFail {
			at := e.field.Pos
			if resumed {
				at = s.keyPos("next_step")
			}
			l.stop(s.ID, at, []*ir.Value{l.k}, statusFailed, l.newError(kindUnknownStep, l.b.StringValue(e.why)))
			return
		}
		l.takeEdge(e)
	})
}

// takeEdge jumps to a step or ends the run with success.
func (l *lowerer) takeEdge(e edge) {
	b := l.b
	if e.field != nil {
		b.SetPos(e.field.Pos)
	}
	switch e.kind {
	case toStep:
		if l.via != nil && l.both(e.step) {
			v := int64(0)
			if e.via {
				v = 1
			}
			b.Set(l.via, b.Const(ir.I64, v))
		}
		b.Continue("run", b.Const(ir.I64, int64(e.step.Index)))
	case toEnd:
		l.succeed()
	default:
		panic("nanovm: takeEdge of a failing edge")
	}
}

// ── llm and tool steps ──

// leaf lowers the work of an llm or tool step (top-level or a sub-step):
// the attempts with their retry policy. It returns the step's output and,
// when the step may be skipped, a bool that is false when it was. A
// failure under on_error fail (or after the last retry) stops the run.
// outputs and data are the state the step reads its references from.
// top is false for sub-steps, where "PENDING" is an ordinary output.
func (l *lowerer) leaf(s *Step, outputs, data *ir.Value, top bool) (out, ok *ir.Value) {
	b := l.b
	b.SetPos(s.Node.Pos)
	// The request is resolved once: every attempt sends the same one.
	var callee, arg *ir.Value
	switch s.Type {
	case LLM:
		callee = l.template(s.Prompt, outputs, data)
		arg = l.llmOptions(s, outputs, data)
	case Tool:
		b.SetPos(s.Field("tool").Pos)
		callee = b.StringValue(s.Tool)
		if s.Args != nil {
			arg = l.literal(s.Args, outputs, data)
		} else {
			b.SetPos(s.Node.Pos)
			arg = b.Builtin("obj.new")
		}
	}
	// A top-level step that may be skipped also yields whether it ran
	// (a skip leaves the final output as it is); a skipped sub-step is
	// just its None.
	canSkip := s.OnError == Skip && top
	results := []ir.Type{ir.Dyn}
	if canSkip {
		results = append(results, ir.Bool)
	}
	b.SetPos(s.Node.Pos)
	rs := b.Block(b.NewLabel("out"), results, func(label string) {
		if s.OnError != Retry {
			l.attempt(s, label, "", callee, arg, nil, top, canSkip)
			return
		}
		b.Loop(b.NewLabel("try"), []*ir.Value{b.Const(ir.I64, 1)}, nil, func(try string, params []*ir.Value) {
			l.attempt(s, label, try, callee, arg, params[0], top, canSkip)
		})
		b.SetPos(s.Node.Pos)
		b.Unreachable()
	})
	if canSkip {
		return rs[0], rs[1]
	}
	return rs[0], nil
}

// attempt lowers one attempt of an llm or tool step inside the block
// labelled out; under on_error retry it is the body of the loop labelled
// try and a is the attempt number (1, 2, …), otherwise a is nil. The
// attempt either leaves out with the output, or computes the error value
// of its failure (the effect's error, or an output outside
// allowed_outputs) and handles it by the step's policy: retry after a
// wait, skip (trace the skip, output None), or stop the run.
func (l *lowerer) attempt(s *Step, out, try string, callee, arg, a *ir.Value, top, canSkip bool) {
	b := l.b
	b.SetPos(s.Node.Pos)
	iters := []*ir.Value{l.k}
	if a != nil {
		iters = append(iters, a)
	}
	op := ir.OpLLM
	if s.Type == Tool {
		op = ir.OpTool
	}
	r := b.Effect(op, s.ID, iters, callee, arg)
	leave := func(v *ir.Value, ok bool) {
		if canSkip {
			b.Break(out, v, b.Bool(ok))
		} else {
			b.Break(out, v)
		}
	}
	errs := b.Block(b.NewLabel("err"), []ir.Type{ir.Dyn}, func(errLabel string) {
		b.If(b.Builtin("error.is", r), nil, func() {
			if s.Type == LLM && s.OnTimeoutFallback {
				b.SetPos(s.Field("on_timeout").Pos)
				timedOut := b.Builtin("value.eq", b.Builtin("error.kind", r), b.StringValue("timeout"))
				b.If(timedOut, nil, func() {
					fb := ""
					if len(s.AllowedOutputs) > 0 {
						fb = s.AllowedOutputs[0]
					}
					leave(b.StringValue(fb), true)
				}, nil)
				b.SetPos(s.Node.Pos)
			}
			b.Break(errLabel, r)
		}, nil)
		text := r
		if s.Type == LLM && l.tokens != nil {
			// With max_tokens the completion is {"text", "usage"}.
			b.SetPos(l.p.MaxTokens.Node.Pos)
			text = b.Builtin("obj.get", r, b.StringValue("text"))
			used := b.Builtin("num.to_int", b.Builtin("path.get", r, b.StringValue("usage.total_tokens")))
			b.Set(l.tokens, b.Op(ir.OpAdd, b.Get(l.tokens), used))
			b.SetPos(s.Node.Pos)
		}
		if s.Type == Tool && top {
			l.pending(s, r)
		}
		if len(s.AllowedOutputs) > 0 {
			field := s.Field("allowed_outputs")
			b.SetPos(field.Pos)
			text = b.Builtin("str.trim", text)
			list := b.Builtin("list.new")
			for i, o := range s.AllowedOutputs {
				b.SetPos(field.Items[i].Pos)
				list = b.Builtin("list.append", list, b.StringValue(o))
			}
			b.SetPos(field.Pos)
			allowed := b.Builtin("value.contains", list, text)
			b.If(b.Op(ir.OpNot, allowed), nil, func() {
				if s.OnError == Skip {
					// Under skip, an output outside the list is the
					// first allowed one, and the step succeeds.
					leave(b.StringValue(s.AllowedOutputs[0]), true)
					return
				}
				msg := b.Builtin("str.concat", b.StringValue("output "), b.Builtin("json.encode", text))
				msg = b.Builtin("str.concat", msg, b.StringValue(" is not one of the allowed outputs "+quoteList(s.AllowedOutputs)))
				b.Break(errLabel, l.newError(kindAllowedOutputs, msg))
			}, nil)
			b.SetPos(s.Node.Pos)
		}
		leave(text, true)
	})
	e := errs[0]
	policyAt := onErrorPos(s)
	if a != nil {
		b.SetPos(policyAt)
		more := b.Op(ir.OpLtS, a, b.Const(ir.I64, s.MaxRetries))
		b.If(more, nil, func() {
			l.backoff(s, a, policyAt)
			b.Continue(try, b.Op(ir.OpAdd, a, b.Const(ir.I64, 1)))
		}, nil)
	}
	if s.OnError == Skip {
		b.SetPos(policyAt)
		b.Effect(ir.OpTrace, s.ID, iters, b.StringValue("skipped"), e)
		leave(b.UnitValue(), false)
		return
	}
	l.stop(s.ID, s.Field("id").Pos, iters, statusFailed, e)
}

func quoteList(xs []string) string {
	q := make([]string, len(xs))
	for i, x := range xs {
		q[i] = strconv.Quote(x)
	}
	return "[" + strings.Join(q, ", ") + "]"
}

// onErrorPos is the position of the on_error field that governs a step
// (a sub-step's parent's when it has none): where the wait between two
// attempts, or the trace of a skip, is.
func onErrorPos(s *Step) diag.Pos {
	at := s.Field("on_error")
	if at == nil && s.Parent != nil {
		at = s.Parent.Field("on_error")
	}
	if at == nil {
		return s.Node.Pos
	}
	return at.Pos
}

// backoff waits before attempt a+1: min(2^(a-1), 30) seconds, a wait
// {"kind": "backoff", "seconds": n}, which the runtime does not count as
// a step (nano-vm's sleep between attempts is not one either).
func (l *lowerer) backoff(s *Step, a *ir.Value, pos diag.Pos) {
	b := l.b
	b.SetPos(pos)
	one := b.Const(ir.I64, 1)
	exp := b.Op(ir.OpSub, a, one)
	small := b.Op(ir.OpLtS, exp, b.Const(ir.I64, 5))
	secs := b.If(small, []ir.Type{ir.I64}, func() {
		b.Yield(b.Op(ir.OpShl, one, exp))
	}, func() {
		b.Yield(b.Const(ir.I64, 30))
	})
	req := b.Builtin("obj.set", b.Builtin("obj.new"), b.StringValue("kind"), b.StringValue("backoff"))
	req = b.Builtin("obj.set", req, b.StringValue("seconds"), b.Builtin("num.from_int", secs[0]))
	b.Effect(ir.OpWait, s.ID, []*ir.Value{l.k, a}, req)
}

// pending suspends the run when a top-level tool step returns the
// sentinel "PENDING": a wait for the step's resumption, whose reply (the
// webhook event {"payload", "source"}) lands in $data as __webhook__ and
// __webhook_source__; the run then goes on with the step's successor.
// The pending step has no output.
func (l *lowerer) pending(s *Step, r *ir.Value) {
	b := l.b
	b.SetPos(s.Field("tool").Pos)
	isPending := b.Builtin("value.eq", r, b.StringValue("PENDING"))
	b.If(isPending, nil, func() {
		req := b.Builtin("obj.set", b.Builtin("obj.new"), b.StringValue("kind"), b.StringValue("resume"))
		req = b.Builtin("obj.set", req, b.StringValue("step"), b.StringValue(s.ID))
		ev := b.Effect(ir.OpWait, s.ID, []*ir.Value{l.k}, req)
		d := b.Builtin("obj.set", b.Get(l.data), b.StringValue("__webhook__"), b.Builtin("obj.get", ev, b.StringValue("payload")))
		d = b.Builtin("obj.set", d, b.StringValue("__webhook_source__"), b.Builtin("obj.get", ev, b.StringValue("source")))
		b.Set(l.data, d)
		l.successor(s, true)
	}, nil)
	b.SetPos(s.Node.Pos)
}

// llmOptions builds the options of an llm effect: no retries of the
// runtime's own (on_error is the only retry policy), the system message,
// the timeout, and whether the reply must carry the token usage.
func (l *lowerer) llmOptions(s *Step, outputs, data *ir.Value) *ir.Value {
	b := l.b
	opts := b.Builtin("obj.set", b.Builtin("obj.new"), b.StringValue("retries"), b.NumberValue(0))
	if s.System != nil {
		sys := l.template(s.System, outputs, data)
		b.SetPos(s.System.Node.Pos)
		opts = b.Builtin("obj.set", opts, b.StringValue("system"), sys)
	}
	if s.Timeout > 0 {
		b.SetPos(s.Field("timeout_seconds").Pos)
		opts = b.Builtin("obj.set", opts, b.StringValue("timeout"), b.NumberValue(s.Timeout))
	}
	if l.tokens != nil {
		b.SetPos(l.p.MaxTokens.Node.Pos)
		opts = b.Builtin("obj.set", opts, b.StringValue("usage"), b.ConstValue(ir.Literal{Kind: ir.LitBool, Int: 1}))
	}
	b.SetPos(s.Node.Pos)
	return opts
}

// ── Templates and tool arguments ──

// template renders a template to a string value: its text with each
// reference replaced by the rendering of the referenced value (strings
// as themselves, anything else as JSON), or left as written when it
// resolves to nothing.
func (l *lowerer) template(t *Template, outputs, data *ir.Value) *ir.Value {
	b := l.b
	var acc *ir.Value
	add := func(v *ir.Value) {
		if acc == nil {
			acc = v
		} else {
			acc = b.Builtin("str.concat", acc, v)
		}
	}
	for _, p := range t.Parts {
		if p.Ref == nil {
			b.SetPos(t.Node.Pos)
			add(b.StringValue(p.Lit))
			continue
		}
		v := l.subst(p.Ref, t.Node, outputs, data)
		add(b.Builtin("value.string", v))
	}
	if acc == nil {
		b.SetPos(t.Node.Pos)
		acc = b.StringValue("")
	}
	return acc
}

// subst resolves a reference of a template: the value, or the reference's
// text when it resolves to nothing.
func (l *lowerer) subst(ref *VarRef, at *Node, outputs, data *ir.Value) *ir.Value {
	b := l.b
	b.SetPos(at.RunePos(ref.off))
	path := l.segments(ref)
	r := b.CallSym(l.helper(fnSubst).Name, []ir.Type{ir.Dyn}, outputs, data, b.StringValue(ref.Root), path, b.StringValue(ref.Text()))
	return r[0]
}

// segments builds the list of a reference's path segments.
func (l *lowerer) segments(ref *VarRef) *ir.Value {
	b := l.b
	path := b.Builtin("list.new")
	for _, seg := range ref.Path {
		path = b.Builtin("list.append", path, b.StringValue(seg))
	}
	return path
}

// literal builds the value of a document node (a tool's args), resolving
// the references of its strings at every depth. A string that is one
// whole reference gives the referenced value itself.
func (l *lowerer) literal(n *Node, outputs, data *ir.Value) *ir.Value {
	b := l.b
	b.SetPos(n.Pos)
	switch n.Kind {
	case Null:
		return b.UnitValue()
	case Bool:
		lit := ir.Literal{Kind: ir.LitBool}
		if n.Bool {
			lit.Int = 1
		}
		return b.ConstValue(lit)
	case Number:
		return b.NumberValue(n.Num)
	case String:
		t := parseTemplate(n.Text, n)
		if ref := t.Single(); ref != nil {
			return l.subst(ref, n, outputs, data)
		}
		return l.template(t, outputs, data)
	case Array:
		v := b.Builtin("list.new")
		for _, it := range n.Items {
			x := l.literal(it, outputs, data)
			b.SetPos(it.Pos)
			v = b.Builtin("list.append", v, x)
		}
		return v
	}
	v := b.Builtin("obj.new")
	for _, f := range n.Fields {
		x := l.literal(f.Value, outputs, data)
		b.SetPos(f.KeyPos)
		v = b.Builtin("obj.set", v, b.StringValue(f.Key), x)
	}
	return v
}

// ── Condition steps ──

// condition lowers a condition step: evaluate, trace the step with the
// id of the target it chose as its output, record that output, and jump
// there. Every failure of the step — a comparison that cannot be
// evaluated, a missing branch, a target that names no step — leaves the
// block with an error value, and one stop ends the run.
func (l *lowerer) condition(s *Step) {
	b := l.b
	outputs, data := l.state(stepRefs(s))
	// A condition that cannot be evaluated is recorded as a failed step
	// (nano-vm lists it), then handled by its on_error: skip goes on as
	// after any skipped step (its output None, the final output
	// unchanged); fail stops the run. A missing or unknown branch target
	// fails the run whatever on_error says, as in nano-vm, where only the
	// evaluation is under the step's policy. The block yields the error
	// and whether the evaluation failed.
	res := b.Block(b.NewLabel("cond"), []ir.Type{ir.Dyn, ir.Bool}, func(fail string) {
		l.evaluate(s, outputs, data, fail)
	})
	b.SetPos(s.Field("id").Pos)
	b.If(res[1], nil, func() {
		b.SetPos(s.Field("id").Pos)
		b.Effect(ir.OpTrace, s.ID, []*ir.Value{l.k}, b.StringValue("failed"), res[0])
		if s.OnError != Skip {
			return
		}
		b.SetPos(onErrorPos(s))
		b.Effect(ir.OpTrace, s.ID, []*ir.Value{l.k}, b.StringValue("skipped"), res[0])
		// The evaluated path has the output_key's and max_stalled_steps's
		// values for its identities; this one has their keys.
		l.storeOutputAt(s, b.UnitValue(), s.keyPos("output_key"))
		l.stallCheckAt(s, l.stalledKeyPos())
		l.successor(s, false)
	}, nil)
	l.stop(s.ID, s.CondNode.Pos, []*ir.Value{l.k}, statusFailed, res[0])
}

// evaluate lowers a condition step's evaluation, the record of its
// output and its branch inside the block labelled fail, which a failure
// leaves with its error value and whether it was the evaluation's (true)
// or a branch that is missing or names no step (false).
func (l *lowerer) evaluate(s *Step, outputs, data *ir.Value, fail string) {
	b := l.b
	c := &condLowerer{l: l, s: s, outputs: outputs, data: data, fail: fail}
	taken := c.boolean(s.Cond)
	b.SetPos(s.Node.Pos)
	out := b.If(taken, []ir.Type{ir.Dyn}, func() {
		b.Yield(l.targetName(s.Then))
	}, func() {
		b.Yield(l.targetName(s.Otherwise))
	})
	b.SetPos(s.Node.Pos)
	b.Effect(ir.OpTrace, s.ID, []*ir.Value{l.k}, b.StringValue("completed"), out[0])
	l.store(s, out[0], nil)
	l.stallCheck(s)
	b.SetPos(s.Node.Pos)
	if s.IsTerminal {
		// is_terminal ends the run once the condition is evaluated.
		l.succeed()
		return
	}
	branch := func(target *Node, e edge) func() {
		return func() {
			switch {
			case e.kind != toFail:
				l.takeEdge(e)
			case target == nil:
				b.SetPos(s.Node.Pos)
				b.Break(fail, l.newError(kindNoBranch, b.StringValue(e.why)), b.Bool(false))
			default:
				b.SetPos(target.Pos)
				b.Break(fail, l.newError(kindUnknownStep, b.StringValue(e.why)), b.Bool(false))
			}
		}
	}
	l.modal(s, func(via bool) {
		edges := l.p.successors(s, via)
		b.SetPos(s.Node.Pos)
		b.If(taken, nil, branch(s.Then, edges[0]), branch(s.Otherwise, edges[1]))
		b.SetPos(s.Node.Pos)
		b.Unreachable()
	})
}

// targetName is a target's id as a value, unit when there is none.
func (l *lowerer) targetName(n *Node) *ir.Value {
	if n == nil {
		return l.b.UnitValue()
	}
	l.b.SetPos(n.Pos)
	return l.b.StringValue(n.Text)
}

type condLowerer struct {
	l             *lowerer
	s             *Step
	outputs, data *ir.Value
	fail          string // the label to leave with the error value of a failure (and true)
}

func (c *condLowerer) pos(e Expr) diag.Pos { return c.s.CondNode.RunePos(e.Off()) }

// boolean lowers e in a boolean context: comparisons and logic as such,
// a bare value by its truthiness (Python's).
func (c *condLowerer) boolean(e Expr) *ir.Value {
	b := c.l.b
	switch e := e.(type) {
	case *LogicalExpr:
		x := c.boolean(e.X)
		b.SetPos(c.s.CondNode.RunePos(e.OpOff))
		r := b.If(x, []ir.Type{ir.Bool}, func() {
			if e.Op == "and" {
				b.Yield(c.boolean(e.Y))
			} else {
				b.SetPos(c.s.CondNode.RunePos(e.OpOff))
				b.Yield(b.Bool(true))
			}
		}, func() {
			if e.Op == "and" {
				b.SetPos(c.s.CondNode.RunePos(e.OpOff))
				b.Yield(b.Bool(false))
			} else {
				b.Yield(c.boolean(e.Y))
			}
		})
		return r[0]
	case *NotExpr:
		x := c.boolean(e.X)
		b.SetPos(c.pos(e))
		return b.Op(ir.OpNot, x)
	case *CompareExpr:
		return c.compare(e)
	}
	v := c.value(e)
	b.SetPos(c.pos(e))
	return b.Builtin("value.truthy", v)
}

// value lowers e as a value: references and literals as themselves,
// comparisons and logic as a bool value.
func (c *condLowerer) value(e Expr) *ir.Value {
	b := c.l.b
	switch e := e.(type) {
	case *VarRef:
		b.SetPos(c.pos(e))
		path := c.l.segments(e)
		r := b.CallSym(c.l.helper(fnLookup).Name, []ir.Type{ir.Dyn}, c.outputs, c.data, b.StringValue(e.Root), path)
		return r[0]
	case *Literal:
		b.SetPos(c.pos(e))
		switch e.Kind {
		case String:
			return b.StringValue(e.Str)
		case Number:
			return b.NumberValue(e.Num)
		case Bool:
			lit := ir.Literal{Kind: ir.LitBool}
			if e.Bool {
				lit.Int = 1
			}
			return b.ConstValue(lit)
		}
		return b.UnitValue()
	}
	x := c.boolean(e)
	b.SetPos(c.pos(e))
	return b.Builtin("value.bool", x)
}

// compare lowers a comparison. Ordered comparisons need two numbers or
// two strings, and in/contains a container (a string holding a string, a
// list, an object); otherwise the condition cannot be evaluated and the
// step fails, as a Python TypeError fails it in nano-vm.
func (c *condLowerer) compare(e *CompareExpr) *ir.Value {
	b := c.l.b
	x, y := c.value(e.X), c.value(e.Y)
	b.SetPos(c.s.CondNode.RunePos(e.OpOff))
	typeError := func(what string) {
		msg := fmt.Sprintf("condition %q: %s", c.s.CondNode.Text, what)
		b.Break(c.fail, c.l.newError(kindCondition, b.StringValue(msg)), b.Bool(true))
	}
	switch e.Op {
	case "==":
		return b.Builtin("value.eq", x, y)
	case "!=":
		return b.Op(ir.OpNot, b.Builtin("value.eq", x, y))
	case "in", "not in", "contains":
		h, n := y, x
		if e.Op == "contains" {
			h, n = x, y
		}
		r := b.CallSym(c.l.helper(fnContains).Name, []ir.Type{ir.I64}, h, n)[0]
		bad := b.Op(ir.OpLtS, r, b.Const(ir.I64, 0))
		b.If(bad, nil, func() {
			typeError(fmt.Sprintf("'%s' needs a string, list or object to look in (and a string to find in a string)", e.Op))
		}, nil)
		found := b.Op(ir.OpNe, r, b.Const(ir.I64, 0))
		if e.Op == "not in" {
			return b.Op(ir.OpNot, found)
		}
		return found
	}
	r := b.CallSym(c.l.helper(fnOrder).Name, []ir.Type{ir.I64}, x, y)[0]
	bad := b.Op(ir.OpEq, r, b.Const(ir.I64, 2))
	b.If(bad, nil, func() {
		typeError(fmt.Sprintf("'%s' compares two numbers or two strings", e.Op))
	}, nil)
	zero := b.Const(ir.I64, 0)
	switch e.Op {
	case ">":
		return b.Op(ir.OpGtS, r, zero)
	case ">=":
		return b.Op(ir.OpGeS, r, zero)
	case "<":
		return b.Op(ir.OpLtS, r, zero)
	}
	return b.Op(ir.OpLeS, r, zero)
}

// ── Parallel steps ──

// parallel lowers a parallel step: every sub-step runs on the state of
// before the step (none sees another's output), each under its own
// on_error policy (the parent's when it has none); the step's output is
// {sub_id: output} in sub-step order, with None for a skipped sub-step
// (the partial-result contract), and each sub-step's output is also
// recorded under its own id and output_key. The parallel block is the
// step (the runtime traces it, its sub-steps under it). A sub-step that
// fails stops the run (after the others have finished, as the runtime's
// parallel blocks do).
//
// Each sub-step is a function of its own, @STEP.SUB(value) -> value,
// called by one parallel block with at most max_concurrency at once. It
// receives {"outputs", "data", "k"} (the state before the step and the
// step's visit count, its effects' iteration counter) and returns
// {"out": its output, "tokens": the tokens it used}.
func (l *lowerer) parallel(s *Step) {
	b := l.b
	outputs, data := l.state(true)
	b.SetPos(s.Node.Pos)
	arg := b.Builtin("obj.set", b.Builtin("obj.new"), b.StringValue("outputs"), outputs)
	arg = b.Builtin("obj.set", arg, b.StringValue("data"), data)
	arg = b.Builtin("obj.set", arg, b.StringValue("k"), b.Builtin("num.from_int", l.k))
	funcs := make([]string, len(s.Sub))
	for i, sub := range s.Sub {
		funcs[i] = l.branchFunc(s, sub)
	}
	b.SetPos(s.Node.Pos)
	results := b.Parallel(s.ID, []*ir.Value{l.k}, b.Const(ir.I64, s.MaxConcurrency), arg, funcs)
	agg := b.Builtin("obj.new")
	for i, sub := range s.Sub {
		b.SetPos(sub.Node.Pos)
		r := b.Builtin("list.get", results, b.Const(ir.I64, int64(i)))
		out := b.Builtin("obj.get", r, b.StringValue("out"))
		if l.tokens != nil {
			used := b.Builtin("num.to_int", b.Builtin("obj.get", r, b.StringValue("tokens")))
			b.Set(l.tokens, b.Op(ir.OpAdd, b.Get(l.tokens), used))
		}
		agg = b.Builtin("obj.set", agg, b.StringValue(sub.ID), out)
		l.storeOutput(sub, out)
	}
	b.SetPos(s.Node.Pos)
	l.store(s, agg, nil)
	l.stallCheck(s)
	l.successor(s, false)
}

// branchFunc lowers sub-step sub of parallel step s into a function of
// its own and returns its name.
func (l *lowerer) branchFunc(s, sub *Step) string {
	saveF, saveB, saveK, saveTokens := l.f, l.b, l.k, l.tokens
	defer func() { l.f, l.b, l.k, l.tokens = saveF, saveB, saveK, saveTokens }()
	pos := sub.Node.Pos
	name := s.ID + "." + sub.ID
	for l.m.Func(name) != nil {
		name += "_"
	}
	l.f = l.m.NewFunc(name, []ir.Type{ir.Dyn}, []ir.Type{ir.Dyn}, pos)
	l.f.Params[0].Name = "state"
	l.b = ir.NewBuilder(l.f)
	b := l.b
	b.SetPos(pos)
	st := l.f.Params[0]
	outputs := b.Builtin("obj.get", st, b.StringValue("outputs"))
	data := b.Builtin("obj.get", st, b.StringValue("data"))
	l.k = b.Builtin("num.to_int", b.Builtin("obj.get", st, b.StringValue("k")))
	if saveTokens != nil {
		l.tokens = l.f.NewVar("tokens", ir.I64, pos)
		b.Set(l.tokens, b.Const(ir.I64, 0))
	}
	out, _ := l.leaf(sub, outputs, data, false) // a skipped sub-step's output is None already
	b.SetPos(pos)
	used := b.Const(ir.I64, 0)
	if l.tokens != nil {
		used = b.Get(l.tokens)
	}
	r := b.Builtin("obj.set", b.Builtin("obj.new"), b.StringValue("out"), out)
	r = b.Builtin("obj.set", r, b.StringValue("tokens"), b.Builtin("num.from_int", used))
	b.Return(r)
	return name
}
