package grimoire

import (
	"fmt"
	"strconv"

	"github.com/genesis-toolchain/genesis/diag"
	"github.com/genesis-toolchain/genesis/ir"
)

// stmts lowers a body. Lowering stops after a statement that never falls
// through (a halt), since nothing may follow a terminator.
func (fl *funcLowerer) stmts(ss []Stmt) {
	for _, s := range ss {
		if fl.b.Terminated() {
			return
		}
		fl.stmt(s)
	}
}

// bind assigns v to the name target: a state variable is written in the
// state, anything else in the body's variables.
func (fl *funcLowerer) bind(target *Ident, v *ir.Value) {
	b := fl.b
	if target == nil {
		return
	}
	if target.Ref == RefState {
		b.Set(fl.st, fl.set(b.Get(fl.st), target.Name, v))
		return
	}
	b.Set(fl.env, fl.set(b.Get(fl.env), target.Name, v))
}

func (fl *funcLowerer) stmt(s Stmt) {
	b := fl.b
	b.SetPos(s.Pos())
	switch s := s.(type) {
	case *AssignStmt:
		fl.bind(s.Target, fl.expr(s.Value))
	case *ActionStmt:
		fl.bind(s.Target, fl.action(s))
	case *AdviseStmt:
		fl.bind(s.Target, fl.advise(s))
	case *PipelineStmt:
		// item, index, acc and what the stages' bodies assign are the
		// stages' own (their scope, check.go): none reaches the body's
		// variables.
		res := fl.newVar("piped", ir.Dyn)
		fl.scoped(nil, true, func() { b.Set(res, fl.pipeline(s)) })
		fl.bind(s.Target, b.Get(res))
	case *IfStmt:
		fl.ifStmt(s.Cond, s.Then, s.Elifs, s.Else)
	case *ForStmt:
		items := fl.expr(s.Iter)
		b.SetPos(s.ForPos)
		isList := b.Op(ir.OpEq, b.Builtin("value.kind", items), b.Const(ir.I64, 4))
		b.If(b.Op(ir.OpNot, isList), nil, func() { fl.fail("type", fl.str("for needs a list")) }, nil)
		fl.scoped([]string{"index"}, false, func() {
			fl.loop(s.ForPos, b.Builtin("list.len", items), func(i *ir.Value) {
				fl.bind(s.Var, b.Builtin("list.get", items, i))
			}, s.Body)
		})
	case *RepeatStmt:
		n := fl.expr(s.Count)
		b.SetPos(s.RepeatPos)
		count := b.Builtin("num.to_int", n)
		bad := b.Op(ir.OpOr, b.Op(ir.OpNe, b.Builtin("value.kind", n), b.Const(ir.I64, 2)), b.Op(ir.OpLeS, count, b.Const(ir.I64, 0)))
		b.If(bad, nil, func() { fl.fail("repeat", fl.str("repeat needs a positive count")) }, nil)
		fl.scoped([]string{"index"}, false, func() { fl.loop(s.RepeatPos, count, nil, s.Body) })
	case *LoopStmt:
		fl.scoped([]string{"index"}, false, func() { fl.loopUntil(s) })
	case *TryStmt:
		fl.try(s)
	case *ParallelStmt:
		fl.parallel(s)
	case *AtomicStmt:
		fl.atomic(s)
	case *EmitStmt:
		payload := b.Builtin("obj.new")
		for i, a := range s.Args {
			key := "arg" + strconv.Itoa(i)
			if a.Name != nil {
				key = a.Name.Name
			}
			payload = fl.set(payload, key, fl.expr(a.Value))
		}
		step := fl.step("emit "+s.Event.Name, s.EmitPos)
		b.Effect(ir.OpEmit, step, fl.iters, fl.str(s.Event.Name), payload)
	case *HaltStmt:
		reason := "halted"
		if s.Reason != nil {
			reason = s.Reason.Value
		}
		fl.fail("halt", fl.str(reason))
	case *WaitStmt:
		d := fl.expr(s.Duration)
		step := fl.step("wait", s.WaitPos)
		// On the virtual clock the run notes that it did not wait.
		b.Effect(ir.OpWait, step, fl.iters, fl.obj("kind", fl.str("sleep"), "seconds", d, "trace_virtual", b.ConstValue(ir.Literal{Kind: ir.LitBool, Int: 1})))
	case *PassStmt:
	case *DoStmt:
		fl.do(s)
	default:
		panic(fmt.Sprintf("grimoire: no lowering for statement %T", s))
	}
}

// scoped runs body, a construct that binds names only inside it (a
// loop's index), or, with whole, whose every binding is its own (a
// pipeline: item, index, acc and what the stages' bodies assign, D21):
// after it — ended or failed — the body's variables have none of them
// (grim.unscope; with whole, the variables of before it), so they never
// reach the final bindings, and an enclosing loop's index is its own
// again.
func (fl *funcLowerer) scoped(names []string, whole bool, body func()) {
	b := fl.b
	env0 := b.Get(fl.env)
	fl.block(body)
	if whole {
		b.Set(fl.env, env0)
	} else {
		var ns []*ir.Value
		for _, n := range names {
			ns = append(ns, fl.str(n))
		}
		b.Set(fl.env, b.CallSym("grim.unscope", dyn, b.Get(fl.env), env0, fl.list(ns...))[0])
	}
	b.If(fl.failed(), nil, func() { fl.raise(b.Get(fl.err)) }, nil)
}

// ifStmt lowers if/elif/else.
func (fl *funcLowerer) ifStmt(cond Expr, then []Stmt, elifs []*Elif, els []Stmt) {
	b := fl.b
	c := fl.truthy(cond)
	b.If(c, nil, func() { fl.stmts(then) }, func() {
		if len(elifs) > 0 {
			b.SetPos(elifs[0].ElifPos)
			fl.ifStmt(elifs[0].Cond, elifs[0].Body, elifs[1:], els)
			return
		}
		fl.stmts(els)
	})
}

// loop runs body n (an i64) times with `index` bound to the iteration
// from 0; each iteration's effects are told apart by the counter.
func (fl *funcLowerer) loop(pos diag.Pos, n *ir.Value, bindItem func(i *ir.Value), body []Stmt) {
	b := fl.b
	i := fl.newVar("i", ir.I64)
	b.Set(i, b.Const(ir.I64, 0))
	b.Loop(b.NewLabel("loop"), nil, nil, func(label string, _ []*ir.Value) {
		iv := b.Get(i)
		b.If(b.Op(ir.OpGeS, iv, n), nil, func() { b.Break(label) }, nil)
		b.SetPos(pos)
		fl.bind(&Ident{Name: "index"}, b.Builtin("num.from_int", iv))
		if bindItem != nil {
			bindItem(iv)
		}
		fl.iters = append(fl.iters, iv)
		fl.stmts(body)
		fl.iters = fl.iters[:len(fl.iters)-1]
		if !b.Terminated() {
			b.Set(i, b.Op(ir.OpAdd, iv, b.Const(ir.I64, 1)))
			b.Continue(label)
		}
	})
}

// loopUntil lowers `loop until c max n`: the condition is tested before
// each iteration; a loop that has run n times without it holding fails
// (kind "loop_max"), as the VM specification requires.
func (fl *funcLowerer) loopUntil(s *LoopStmt) {
	b := fl.b
	var max *ir.Value
	if s.Max != nil {
		max = b.Builtin("num.to_int", fl.expr(s.Max))
	} else {
		max = b.Const(ir.I64, 1000)
	}
	i := fl.newVar("i", ir.I64)
	b.Set(i, b.Const(ir.I64, 0))
	b.Loop(b.NewLabel("until"), nil, nil, func(label string, _ []*ir.Value) {
		iv := b.Get(i)
		fl.iters = append(fl.iters, iv)
		done := fl.truthy(s.Until)
		b.If(done, nil, func() { b.Break(label) }, nil)
		b.SetPos(s.LoopPos)
		b.If(b.Op(ir.OpGeS, iv, max), nil, func() {
			fl.fail("loop_max", b.Builtin("str.concat", fl.str("loop until: the condition still fails after the maximum of "),
				b.Builtin("value.string", b.Builtin("num.from_int", max))))
		}, nil)
		fl.bind(&Ident{Name: "index"}, b.Builtin("num.from_int", iv))
		fl.stmts(s.Body)
		fl.iters = fl.iters[:len(fl.iters)-1]
		if !b.Terminated() {
			b.Set(i, b.Op(ir.OpAdd, iv, b.Const(ir.I64, 1)))
			b.Continue(label)
		}
	})
}

// try lowers try/catch/finally. A failure of the body runs the first
// catch that matches its kind (`catch *` and `catch:` match any); a
// catch with a retry policy runs the body again first, up to
// max_attempts more times, waiting the backoff between attempts. Its
// action then decides: skip (the default) handles the failure, halt
// fails the run with a halt, revert restores the variables and state of
// before the try and handles it. The finally block always runs; a
// failure nobody handled raises again after it.
func (fl *funcLowerer) try(s *TryStmt) {
	b := fl.b
	env0, st0 := b.Get(fl.env), b.Get(fl.st)
	attempt := fl.newVar("attempt", ir.I64)
	pending := fl.newVar("pending", ir.Dyn)
	b.Set(attempt, b.Const(ir.I64, 0))
	b.Set(pending, b.UnitValue())
	b.Loop(b.NewLabel("try"), nil, nil, func(label string, _ []*ir.Value) {
		av := b.Get(attempt)
		b.Set(fl.err, b.UnitValue())
		fl.iters = append(fl.iters, av)
		fl.block(func() { fl.stmts(s.Body) })
		fl.iters = fl.iters[:len(fl.iters)-1]
		b.If(b.Op(ir.OpNot, fl.failed()), nil, func() { b.Break(label) }, nil)
		e := b.Get(fl.err)
		kind := b.Builtin("error.kind", e)
		handled := b.Bool(false)
		for _, c := range s.Catches {
			c := c
			b.SetPos(c.CatchPos)
			match := b.Bool(true)
			if c.Error != nil && c.Error.Name != "*" {
				match = b.Builtin("value.eq", kind, fl.str(c.Error.Name))
			}
			take := b.Op(ir.OpAnd, match, b.Op(ir.OpNot, handled))
			b.If(take, nil, func() {
				if c.Retry != nil {
					fl.retry(c.Retry, av, label, attempt, env0, st0)
				}
				b.Set(fl.err, b.UnitValue())
				envC := b.Get(fl.env)
				fl.bind(&Ident{Name: "error"}, fl.obj("kind", kind, "message", b.Builtin("error.message", e)))
				fl.block(func() { fl.stmts(c.Body) })
				b.Set(fl.env, b.CallSym("grim.unscope", dyn, b.Get(fl.env), envC, fl.list(fl.str("error")))[0])
				b.If(fl.failed(), nil, func() { b.Set(pending, b.Get(fl.err)) }, func() {
					switch action := catchAction(c); action {
					case "halt":
						b.Set(pending, b.Builtin("error.new", fl.str("halt"), b.Builtin("str.concat", fl.str("halted after "), b.Builtin("error.message", e))))
					case "revert":
						b.Set(fl.env, env0)
						fl.restoreState(st0)
					}
				})
			}, nil)
			handled = b.Op(ir.OpOr, handled, match)
		}
		b.If(b.Op(ir.OpNot, handled), nil, func() { b.Set(pending, e) }, nil)
		b.Break(label)
	})
	if s.Finally != nil {
		b.SetPos(s.FinallyPos)
		b.Set(fl.err, b.UnitValue())
		fl.stmts(s.Finally)
	}
	if !b.Terminated() {
		p := b.Get(pending)
		b.If(b.Builtin("error.is", p), nil, func() { fl.raise(p) }, nil)
	}
}

// catchAction is a catch's action: skip, halt or revert (default skip).
func catchAction(c *Catch) string {
	if c.Action != nil {
		return c.Action.Name
	}
	return "skip"
}

// retry runs the try body again (continue label) while attempt is below
// the policy's max_attempts, after the policy's backoff, from the
// variables and state of before the try.
func (fl *funcLowerer) retry(r *Retry, attempt *ir.Value, label string, av *ir.Local, env0, st0 *ir.Value) {
	b := fl.b
	max := b.Const(ir.I64, 1)
	if r.MaxAttempts != nil {
		max = b.Builtin("num.to_int", fl.expr(r.MaxAttempts))
	}
	b.If(b.Op(ir.OpLtS, attempt, max), nil, func() {
		backoff := "exponential"
		if r.Backoff != nil {
			backoff = r.Backoff.Name
		}
		if backoff != "none" {
			base := b.NumberValue(1)
			if r.BackoffBase != nil {
				base = fl.expr(r.BackoffBase)
			}
			n := b.Builtin("num.from_int", b.Op(ir.OpAdd, attempt, b.Const(ir.I64, 1)))
			var secs *ir.Value
			if backoff == "linear" {
				secs = b.Builtin("num.mul", base, n)
			} else {
				f := b.Builtin("num.from_int", b.Op(ir.OpShl, b.Const(ir.I64, 1), attempt))
				secs = b.Builtin("num.mul", base, f)
			}
			if r.MaxBackoff != nil {
				mb := fl.expr(r.MaxBackoff)
				secs = b.CallSym("grim.min", dyn, fl.list(secs, mb))[0]
			}
			step := fl.step("retry backoff", r.RetryPos)
			b.Effect(ir.OpWait, step, append(fl.iters, attempt), fl.obj("kind", fl.str("backoff"), "seconds", secs, "trace_virtual", b.ConstValue(ir.Literal{Kind: ir.LitBool, Int: 1})))
		}
		b.Set(fl.env, env0)
		fl.restoreState(st0)
		b.Set(av, b.Op(ir.OpAdd, attempt, b.Const(ir.I64, 1)))
		b.Continue(label)
	}, nil)
}

// atomic lowers an atomic block: a failure inside restores the
// variables and the state of its start (its state writes are undone),
// notes in the trace the actions it performed, which cannot be undone,
// and then, by the block's mode, fails (revert, the default), fails
// with a halt (halt) or goes on (skip). Actions are tool calls no host
// here can take back, so whenever the block performed one, failed or
// not, the run warns that atomicity was not enforced (grimoire-vm.md:
// "If atomicity is not possible in the host, the VM MUST: execute the
// steps in order; emit a warning that atomicity was not enforced").
func (fl *funcLowerer) atomic(s *AtomicStmt) {
	b := fl.b
	env0, st0 := b.Get(fl.env), b.Get(fl.st)
	// The block's actions are counted from none; the enclosing body's
	// list gets them after it.
	outer := b.Get(fl.acts)
	b.Set(fl.acts, b.Builtin("list.new"))
	fl.block(func() { fl.stmts(s.Body) })
	b.SetPos(s.AtomicPos)
	acts := b.Get(fl.acts)
	b.Set(fl.acts, b.CallSym("grim.concat", dyn, outer, acts)[0])
	performed := b.Op(ir.OpGtS, b.Builtin("list.len", acts), b.Const(ir.I64, 0))
	b.If(performed, nil, func() {
		// The warning must not clear a pending failure: warn keeps $err.
		fl.warn(s.AtomicPos, b.Builtin("str.concat", fl.str(fmt.Sprintf("atomicity was not enforced (atomic at line %d): the actions ", s.AtomicPos.Line)),
			b.Builtin("str.concat", b.Builtin("json.encode", acts), fl.str(" cannot be rolled back by this host"))))
	}, nil)
	b.If(fl.failed(), nil, func() {
		e := b.Get(fl.err)
		b.Set(fl.env, env0)
		fl.restoreState(st0)
		text := b.Builtin("str.concat", fl.str("atomic block rolled back its state writes after: "), b.Builtin("error.message", e))
		text = b.If(performed, dyn, func() {
			b.Yield(b.Builtin("str.concat", text, b.Builtin("str.concat", fl.str("; could not undo the actions "), b.Builtin("json.encode", acts))))
		}, func() { b.Yield(text) })[0]
		fl.note(s.AtomicPos, "rollback", text)
		mode := "revert"
		if s.Mode != nil {
			mode = s.Mode.Name
		}
		switch mode {
		case "skip":
			b.Set(fl.err, b.UnitValue())
		case "halt":
			fl.raise(b.Builtin("error.new", fl.str("halt"), b.Builtin("str.concat", fl.str("atomic block failed: "), b.Builtin("error.message", e))))
		default:
			fl.raise(e)
		}
	}, nil)
}

// do calls a block's function with its arguments as its variables and
// the state; the state it ends with is the caller's.
func (fl *funcLowerer) do(s *DoStmt) {
	b := fl.b
	if s.Block == nil {
		fl.fail("undefined", fl.str("no block "+s.Path[len(s.Path)-1].Name))
		return
	}
	env := b.Builtin("obj.new")
	for i, a := range s.Args {
		name := "arg" + strconv.Itoa(i)
		if a.Name != nil {
			name = a.Name.Name
		} else if i < len(s.Block.Params) {
			name = s.Block.Params[i].Name
		}
		env = fl.set(env, name, fl.expr(a.Value))
	}
	b.SetPos(s.DoPos)
	res := b.CallSym(fl.l.blocks[s.Block], dyn, fl.obj("env", env, "st", b.Get(fl.st), "ctx", b.Get(fl.ctx)))[0]
	b.Set(fl.st, fl.get(res, "st"))
	fl.check(fl.get(res, "err"))
}
