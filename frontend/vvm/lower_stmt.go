package vvm

import (
	"fmt"
	"strconv"

	"github.com/genesis-toolchain/genesis/diag"
	"github.com/genesis-toolchain/genesis/ir"
)

// ── Exits: raise, return, break, continue ──

// A frame is a construct that the exits of the statements inside it may
// have to stop at: a loop (break, continue) or a try (raise, and with a
// finally every exit, which the finally body must see first).
type frame struct {
	loop  bool
	label string
	// next is a loop's continue arguments (a for loop's next index).
	next func() []*ir.Value
	// A try frame's block yields (exit, value); catches says a raise
	// stops at it, finally that return, break and continue do too.
	catches, finally bool
	used             [numExits]bool
}

// The ways to leave a try's block, the first result it yields.
const (
	exitNormal = iota
	exitRaise
	exitReturn
	exitBreak
	exitContinue
	numExits
)

// raise raises the error value e: it leaves for the innermost try that
// catches, or returns it from the function.
func (fl *funcLowerer) raise(e *ir.Value) {
	for i := len(fl.frames) - 1; i >= 0; i-- {
		fr := fl.frames[i]
		if !fr.loop && fr.catches {
			fr.used[exitRaise] = true
			fl.b.Break(fr.label, fl.b.Const(ir.I64, exitRaise), e)
			return
		}
	}
	fl.raiseOut(e)
}

// raiseOut returns the raised error e from the function.
func (fl *funcLowerer) raiseOut(e *ir.Value) {
	b := fl.b
	switch {
	case fl.top:
		b.Return(fl.unit(), fl.unit(), e)
	case fl.branch:
		b.Return(raisedResult(b, e))
	default:
		b.Return(fl.unit(), e)
	}
}

// ret returns v from the function, through the finally blocks between.
func (fl *funcLowerer) ret(v *ir.Value) {
	for i := len(fl.frames) - 1; i >= 0; i-- {
		fr := fl.frames[i]
		if !fr.loop && fr.finally {
			fr.used[exitReturn] = true
			fl.b.Break(fr.label, fl.b.Const(ir.I64, exitReturn), v)
			return
		}
	}
	fl.b.Return(v, fl.unit())
}

// loopExit is break (cont false) or continue of the innermost loop,
// through the finally blocks between.
func (fl *funcLowerer) loopExit(cont bool) {
	for i := len(fl.frames) - 1; i >= 0; i-- {
		fr := fl.frames[i]
		if fr.loop {
			if cont {
				fl.b.Continue(fr.label, fr.next()...)
			} else {
				fl.b.Break(fr.label)
			}
			return
		}
		if fr.finally {
			exit := exitBreak
			if cont {
				exit = exitContinue
			}
			fr.used[exit] = true
			fl.b.Break(fr.label, fl.b.Const(ir.I64, int64(exit)), fl.unit())
			return
		}
	}
	panic("vvm: break or continue outside a loop (E081 lets none through)")
}

// checked returns a helper's result and raises its error, for the
// helpers and functions that return (value, raised).
func (fl *funcLowerer) checked(res []*ir.Value) *ir.Value {
	fl.raiseIf(res[1])
	return res[0]
}

// raised reports whether e, a raised error or unit, is an error: a
// call of @vvm.raised, which the optimizer inlines.
func (fl *funcLowerer) raised(e *ir.Value) *ir.Value {
	return fl.b.CallSym("vvm.raised", []ir.Type{ir.Bool}, e)[0]
}

// raiseIf raises e when it is not unit.
func (fl *funcLowerer) raiseIf(e *ir.Value) {
	b := fl.b
	raised := fl.raised(e)
	b.If(raised, nil, func() { fl.raise(e) }, nil)
}

// thrown raises a thrown error with a constant message.
func (fl *funcLowerer) thrown(msg string) {
	fl.raise(fl.b.CallSym("vvm.thrown", dyn, fl.b.StringValue(msg))[0])
}

// thrownInExpr raises a thrown error with a constant message from the
// middle of an expression, such as a call whose arguments do not fit
// its def: the raise sits in an if on a constant true, so that the rest
// of the expression and its statement, never run, still build on a
// point the IR can reach. (A bare raise would end the region there, and
// whatever the expression's caller emitted after it would not verify.)
func (fl *funcLowerer) thrownInExpr(msg string) {
	fl.b.If(fl.b.Bool(true), nil, func() { fl.thrown(msg) }, nil)
}

// ── Statements ──

// stmts lowers a statement list; statements after one that always
// leaves (a raise, return, break, continue) are never reached and not
// lowered.
func (fl *funcLowerer) stmts(list []Stmt) {
	fl.depth++
	defer func() { fl.depth-- }()
	for _, s := range list {
		if fl.b.Terminated() {
			return
		}
		fl.stmt(s)
	}
}

// body lowers the statements of a function's or module's body.
func (fl *funcLowerer) body(list []Stmt) { fl.stmts(list) }

// note records in the trace what the program does, for narration
// (docs/runtime.md, Narration): kind "statement", "loop", "decision" or
// "bind".
func (fl *funcLowerer) note(pos diag.Pos, kind string, text *ir.Value) {
	b := fl.b
	data := b.CallSym("vvm.note", dyn, b.StringValue(kind), text)[0]
	b.SetPos(pos)
	b.Effect(ir.OpTrace, kind, nil, b.StringValue("note"), data)
}

func (fl *funcLowerer) stmt(s Stmt) {
	b := fl.b
	b.SetPos(s.Pos())
	switch s := s.(type) {
	case *SkillImport, *ImportStmt, *ExportStmt, *AgentStmt, *InputStmt, *PassStmt:
		// Declarations act before the statements (hoisting, inputs, the
		// module's exports at its end).
	case *FuncDecl:
		if !s.Hoisted && s.Name.Sym != nil {
			fl.assign(s.Name.Sym, fl.funcValue(fl.l.fnOf(s, fl.mod)))
		}
	case *AssignStmt:
		fl.statementNote(s)
		v := fl.expr(s.Value)
		b.SetPos(s.EqPos)
		fl.assign(s.Target.Sym, v)
		if fl.depth == 0 && s.Target.Sym != nil {
			fl.bound[s.Target.Sym] = true
		}
		if _, ok := s.Value.(*AgentCall); ok {
			fl.note(s.EqPos, "bind", b.StringValue(s.Target.Name+" bound"))
		}
	case *ExprStmt:
		fl.statementNote(s)
		fl.expr(s.X)
	case *ReturnStmt:
		fl.statementNote(s)
		v := fl.unit()
		if s.Value != nil {
			v = fl.expr(s.Value)
		}
		b.SetPos(s.ReturnPos)
		fl.ret(v)
	case *RaiseStmt:
		fl.statementNote(s)
		var e *ir.Value
		switch {
		case s.Msg != nil:
			e = b.CallSym("vvm.thrown", dyn, b.StringValue(s.Msg.Value))[0]
		case fl.caught != nil:
			e = fl.caught
		default:
			e = b.CallSym("vvm.thrown", dyn, b.StringValue(""))[0]
		}
		fl.raise(e)
	case *BreakStmt:
		fl.loopExit(false)
	case *ContinueStmt:
		fl.loopExit(true)
	case *IfStmt:
		fl.statementNote(s)
		fl.ifStmt(s.Cond, s.Then, s.Elifs, s.Else, "the condition of if")
	case *WhileStmt:
		fl.statementNote(s)
		fl.whileStmt(s)
	case *ForStmt:
		fl.statementNote(s)
		fl.forStmt(s)
	case *MatchStmt:
		fl.statementNote(s)
		fl.matchStmt(s)
	case *ChooseStmt:
		fl.statementNote(s)
		fl.chooseStmt(s)
	case *ConstrainStmt:
		fl.statementNote(s)
		fl.constrainStmt(s)
	case *WithInputStmt:
		fl.statementNote(s)
		saved := fl.it
		fl.it = fl.expr(s.Input)
		fl.stmts(s.Body)
		fl.it = saved
	case *TryStmt:
		fl.tryStmt(s)
	case *ParallelStmt:
		fl.statementNote(s)
		fl.parallelStmt(s)
	default:
		panic(fmt.Sprintf("vvm: no lowering for %T", s))
	}
}

// statementNote notes that a statement starts, with its first line.
func (fl *funcLowerer) statementNote(s Stmt) {
	text := fl.l.sourceLine(fl.mod.File, s.Pos())
	if text == "" {
		return
	}
	fl.note(s.Pos(), "statement", fl.b.StringValue(text))
}

// cond evaluates a condition: it must be true or false.
//
// An expression whose value was just made of a bool (a comparison, not,
// and, or) is that bool: @vvm.bool would take it back, and never fail.
// The value.bool, last in the region and used by nothing else, goes.
func (fl *funcLowerer) cond(e Expr, what string) *ir.Value {
	v := fl.expr(e)
	if x := boolOf(v); x != nil {
		if r := fl.b.Region(); len(r.Instrs) > 0 && r.Instrs[len(r.Instrs)-1] == v.Def {
			r.Instrs[len(r.Instrs)-1] = nil
			r.Instrs = r.Instrs[:len(r.Instrs)-1]
		}
		return x
	}
	fl.b.SetPos(e.Pos())
	return fl.checkedBool(fl.b.CallSym("vvm.bool", []ir.Type{ir.Bool, ir.Dyn}, v, fl.b.StringValue(what)))
}

// boolOf returns the bool that v, the result of a value.bool builtin,
// was made of, or nil.
func boolOf(v *ir.Value) *ir.Value {
	if in := v.Def; in != nil && in.Op == ir.OpBuiltin && in.Sym == "value.bool" && len(in.Args) == 1 {
		return in.Args[0]
	}
	return nil
}

func (fl *funcLowerer) checkedBool(res []*ir.Value) *ir.Value {
	fl.raiseIf(res[1])
	return res[0]
}

// ifStmt lowers an if statement. With elif clauses it is a block that
// the first branch whose condition holds leaves, rather than ifs nested
// in elses: the IR is no deeper than the source, however many elifs, so
// every later phase stays within its stack and linear (docs/vvm.md,
// Limits).
func (fl *funcLowerer) ifStmt(cond Expr, then []Stmt, elifs []*ElifClause, els []Stmt, what string) {
	b := fl.b
	if len(elifs) == 0 {
		c := fl.cond(cond, what)
		b.If(c, nil, func() { fl.stmts(then) }, func() { fl.stmts(els) })
		return
	}
	b.Block(fl.label("if"), nil, func(label string) {
		branch := func(cond Expr, body []Stmt, what string) {
			c := fl.cond(cond, what)
			b.If(c, nil, func() {
				fl.stmts(body)
				if !b.Terminated() {
					b.Break(label)
				}
			}, nil)
		}
		branch(cond, then, what)
		for _, e := range elifs {
			if b.Terminated() {
				return
			}
			b.SetPos(e.ElifPos)
			branch(e.Cond, e.Body, "the condition of elif")
		}
		if !b.Terminated() {
			fl.stmts(els)
		}
	})
}

func (fl *funcLowerer) whileStmt(s *WhileStmt) {
	b := fl.b
	label := fl.label("while")
	b.Loop(label, []*ir.Value{b.Const(ir.I64, 1)}, nil, func(label string, ps []*ir.Value) {
		n := ps[0]
		c := fl.cond(s.Cond, "the condition of while")
		b.If(b.Op(ir.OpNot, c), nil, func() { b.Break(label) }, nil)
		fl.iterationNote(s.WhilePos, "while: iteration ", n)
		next := func() []*ir.Value { return []*ir.Value{b.Op(ir.OpAdd, n, b.Const(ir.I64, 1))} }
		fl.frames = append(fl.frames, &frame{loop: true, label: label, next: next})
		fl.stmts(s.Body)
		fl.frames = fl.frames[:len(fl.frames)-1]
		if !b.Terminated() {
			b.SetPos(s.WhilePos)
			b.Continue(label, next()...)
		}
	})
}

// iterationNote notes the start of iteration n (from 1) of a loop.
func (fl *funcLowerer) iterationNote(pos diag.Pos, text string, n *ir.Value) {
	b := fl.b
	b.SetPos(pos)
	fl.note(pos, "loop", b.Builtin("str.concat", b.StringValue(text), b.Builtin("num.from_int", n)))
}

func (fl *funcLowerer) forStmt(s *ForStmt) {
	b := fl.b
	items := fl.expr(s.Iter)
	b.SetPos(s.Iter.Pos())
	fl.raiseIf(b.CallSym("vvm.list", dyn, items, b.StringValue("the items of for"))[0])
	n := b.Builtin("list.len", items)
	label := fl.label("for")
	b.SetPos(s.ForPos)
	b.Loop(label, []*ir.Value{b.Const(ir.I64, 0)}, nil, func(label string, ps []*ir.Value) {
		i := ps[0]
		b.If(b.Op(ir.OpGeS, i, n), nil, func() { b.Break(label) }, nil)
		b.SetPos(s.Var.NamePos)
		fl.assign(s.Var.Sym, b.Builtin("list.get", items, i))
		fl.iterationNote(s.ForPos, "for "+s.Var.Name+": iteration ", b.Op(ir.OpAdd, i, b.Const(ir.I64, 1)))
		next := func() []*ir.Value { return []*ir.Value{b.Op(ir.OpAdd, i, b.Const(ir.I64, 1))} }
		fl.frames = append(fl.frames, &frame{loop: true, label: label, next: next})
		fl.stmts(s.Body)
		fl.frames = fl.frames[:len(fl.frames)-1]
		if !b.Terminated() {
			b.SetPos(s.ForPos)
			b.Continue(label, next()...)
		}
	})
}

// label returns a new label for a loop or block of this function.
func (fl *funcLowerer) label(prefix string) string {
	return fl.b.NewLabel(prefix)
}

// matchStmt runs the first case whose pattern matches, with it = the
// subject (spec.md §7): a block that each case body leaves.
func (fl *funcLowerer) matchStmt(s *MatchStmt) {
	b := fl.b
	subject := fl.expr(s.Subject)
	saved := fl.it
	fl.it = subject
	defer func() { fl.it = saved }()
	b.SetPos(s.MatchPos)
	b.Block(fl.label("match"), nil, func(label string) {
		for _, c := range s.Cases {
			if b.Terminated() {
				return
			}
			c := c
			b.SetPos(c.CasePos)
			body := func() {
				fl.note(c.CasePos, "decision", b.StringValue("match: "+fl.l.sourceLine(fl.mod.File, c.CasePos)))
				fl.stmts(c.Body)
				if !b.Terminated() {
					b.Break(label)
				}
			}
			switch p := c.Pattern.(type) {
			case *WildcardPattern:
				body()
			case *ErrorPattern:
				isErr := b.CallSym("vvm.is_error", []ir.Type{ir.Bool}, subject)[0]
				if p.Kind != nil {
					isErr = b.If(isErr, []ir.Type{ir.Bool}, func() {
						kind := b.CallSym("vvm.error_kind", dyn, subject)[0]
						b.Yield(b.Builtin("value.eq", kind, b.StringValue(p.Kind.Value)))
					}, func() { b.Yield(b.Bool(false)) })[0]
				}
				b.If(isErr, nil, func() {
					if p.Bind != nil && p.Bind.Sym != nil {
						fl.assign(p.Bind.Sym, subject)
					}
					body()
				}, nil)
			case *PredPattern:
				ok := fl.judge(p.Criterion, subject, p.QPos, false)
				b.If(b.Builtin("value.truthy", ok), nil, body, nil)
			default:
				panic(fmt.Sprintf("vvm: no lowering for pattern %T", p))
			}
		}
	})
}

// chooseStmt asks the model to pick one option label by the criterion,
// never running an option to decide (spec.md §10), binds the label and
// runs that option alone.
func (fl *funcLowerer) chooseStmt(s *ChooseStmt) {
	b := fl.b
	subject := fl.expr(s.Subject)
	saved := fl.it
	fl.it = subject
	defer func() { fl.it = saved }()
	b.SetPos(s.Criterion.Open)
	criterion := fl.render(s.Criterion, subject)
	labels := b.Builtin("list.new")
	quoted := ""
	for i, o := range s.Options {
		labels = b.Builtin("list.append", labels, b.StringValue(o.Label.Value))
		if i > 0 {
			quoted += ", "
		}
		quoted += strconv.Quote(o.Label.Value)
	}
	prompt := b.Builtin("str.concat", b.StringValue("Choose the option that best satisfies this criterion: "), criterion)
	prompt = b.Builtin("str.concat", prompt, b.StringValue("\nOptions: "+quoted+
		"\nAnswer with the label of one option alone. When several fit equally well, answer the first of them."))
	prompt = b.CallSym("vvm.with_input", dyn, prompt, subject)[0]
	b.SetPos(s.ChoosePos)
	reply := b.Effect(ir.OpLLM, "choose "+s.As.Name, nil, prompt, b.Builtin("obj.new"))
	outcome := b.CallSym("vvm.effect_outcome", []ir.Type{ir.I64}, reply)[0]
	fl.stopIf(outcome, reply, "choose "+s.As.Name, "choose "+s.As.Name, s.Criterion.Open)
	b.If(b.Op(ir.OpEq, outcome, b.Const(ir.I64, outcomeFailed)), nil, func() {
		msg := b.Builtin("str.concat", b.StringValue("choose could not select an option: "), b.Builtin("error.message", reply))
		fl.raise(b.CallSym("vvm.thrown", dyn, msg)[0])
	}, nil)
	// A refusal, or a reply that names no option, is an uncertain choice:
	// the first option, conservatively, and the run says so.
	refused := b.Op(ir.OpEq, outcome, b.Const(ir.I64, outcomeUncertain))
	picked := b.If(refused, []ir.Type{ir.I64}, func() { b.Yield(b.Const(ir.I64, -1)) }, func() {
		b.Yield(b.CallSym("vvm.pick", []ir.Type{ir.I64}, reply, labels)[0])
	})[0]
	index := b.If(b.Op(ir.OpLtS, picked, b.Const(ir.I64, 0)), []ir.Type{ir.I64}, func() {
		b.SetPos(s.ChoosePos)
		first := b.StringValue(s.Options[0].Label.Value)
		shown := b.If(b.Builtin("error.is", reply), dyn, func() { b.Yield(b.Builtin("error.message", reply)) },
			func() { b.Yield(reply) })[0]
		reason := b.If(b.Builtin("error.is", reply), dyn, func() { b.Yield(shown) }, func() {
			q := b.Builtin("str.concat", b.StringValue("the reply \""), b.Builtin("value.string", reply))
			b.Yield(b.Builtin("str.concat", q, b.StringValue("\" names no option")))
		})[0]
		event := b.Builtin("obj.set", b.Builtin("obj.new"), b.StringValue("choose"), b.StringValue(s.As.Name))
		event = b.Builtin("obj.set", event, b.StringValue("reply"), shown)
		event = b.Builtin("obj.set", event, b.StringValue("treated_as"), first)
		b.Effect(ir.OpEmit, "uncertain", nil, b.StringValue("vvm.choice_uncertain"), event)
		note := b.CallSym("vvm.choice_note", dyn, b.StringValue("choose "+s.As.Name), reason, first)[0]
		b.Effect(ir.OpTrace, "warning", nil, b.StringValue("note"), note)
		b.Yield(b.Const(ir.I64, 0))
	}, func() { b.Yield(picked) })[0]
	label := b.Builtin("list.get", labels, index)
	fl.assign(s.As.Sym, label)
	fl.note(s.ChoosePos, "decision", b.Builtin("str.concat", b.StringValue("choose: option "), label))
	var cases []ir.Case
	for i, o := range s.Options {
		o := o
		cases = append(cases, ir.Case{Values: []int64{int64(i)}, Body: func() {
			b.SetPos(o.OptionPos)
			fl.stmts(o.Body)
		}})
	}
	b.Switch(index, nil, cases, func() {})
}

// constrainStmt judges each requirement with it = the value and rebinds
// the name to the value, or to a constraint_violation error value
// (spec.md §9).
func (fl *funcLowerer) constrainStmt(s *ConstrainStmt) {
	b := fl.b
	v := fl.read(s.Target)
	saved := fl.it
	fl.it = v
	defer func() { fl.it = saved }()
	violations := b.Builtin("list.new")
	requirements := b.Builtin("list.new")
	for _, r := range s.Requires {
		b.SetPos(r.RequirePos)
		text := b.StringValue(r.Criterion.Raw)
		requirements = b.Builtin("list.append", requirements, text)
		ok := b.Builtin("value.truthy", fl.judge(r.Criterion, v, r.RequirePos, true))
		violations = b.If(ok, dyn, func() { b.Yield(violations) }, func() {
			b.Yield(b.Builtin("list.append", violations, text))
		})[0]
	}
	b.SetPos(s.ConstrainPos)
	for _, kw := range s.Options {
		fl.expr(kw.Value) // bounds are hints (spec.md §9.2), evaluated for their errors
	}
	met := b.Op(ir.OpEq, b.Builtin("list.len", violations), b.Const(ir.I64, 0))
	out := b.If(met, dyn, func() { b.Yield(v) }, func() {
		e := b.CallSym("vvm.error", dyn, b.StringValue("constraint_violation"), b.StringValue("Constraints not satisfied"))[0]
		data := b.Builtin("obj.set", b.Builtin("obj.new"), b.StringValue("value"), v)
		data = b.Builtin("obj.set", data, b.StringValue("violations"), violations)
		data = b.Builtin("obj.set", data, b.StringValue("requirements"), requirements)
		inner := b.Builtin("obj.set", b.Builtin("obj.get", e, b.StringValue("error")), b.StringValue("data"), data)
		b.Yield(b.Builtin("obj.set", e, b.StringValue("error"), inner))
	})[0]
	fl.assign(s.Target.Sym, out)
}

// tryStmt lowers try/except/finally (spec.md §13.3): the try body is a
// block that a raise (and, with a finally, every exit) leaves with its
// kind and value; the except body runs for a raise, in a block of its
// own when a finally must see its exits; the finally body runs after
// either, then the exit that stopped at the try goes on.
func (fl *funcLowerer) tryStmt(s *TryStmt) {
	b := fl.b
	hasFinally := s.Finally != nil
	tryFrame := &frame{label: fl.label("try"), catches: true, finally: hasFinally}
	b.SetPos(s.TryPos)
	body := fl.frameBlock(tryFrame, s.Body)
	exits := tryFrame.used // the exits that may leave the statement's blocks
	res := body
	if ex := s.Except; ex != nil {
		exits[exitRaise] = false // the except body handles it
		raised := b.Op(ir.OpEq, body[0], b.Const(ir.I64, exitRaise))
		res = b.If(raised, []ir.Type{ir.I64, ir.Dyn}, func() {
			b.SetPos(ex.ExceptPos)
			err := body[1]
			if ex.Var != nil && ex.Var.Sym != nil {
				fl.assign(ex.Var.Sym, err)
			}
			savedCaught := fl.caught
			fl.caught = err
			defer func() { fl.caught = savedCaught }()
			if !hasFinally {
				// Its exits leave directly: nothing stops at the try.
				fl.stmts(ex.Body)
				if !b.Terminated() {
					b.Yield(b.Const(ir.I64, exitNormal), fl.unit())
				}
				return
			}
			exFrame := &frame{label: fl.label("except"), catches: true, finally: true}
			out := fl.frameBlock(exFrame, ex.Body)
			for k, u := range exFrame.used {
				exits[k] = exits[k] || u
			}
			b.Yield(out[0], out[1])
		}, func() { b.Yield(body[0], body[1]) })
	}
	if hasFinally {
		b.SetPos(s.Finally.FinallyPos)
		fl.stmts(s.Finally.Body)
		if b.Terminated() {
			return
		}
	}
	// Go on with the exit that stopped at the try.
	exit, val := res[0], res[1]
	for k, used := range exits {
		if !used || k == exitNormal {
			continue
		}
		k := k
		b.If(b.Op(ir.OpEq, exit, b.Const(ir.I64, int64(k))), nil, func() {
			switch k {
			case exitRaise:
				fl.raise(val)
			case exitReturn:
				fl.ret(val)
			case exitBreak:
				fl.loopExit(false)
			case exitContinue:
				fl.loopExit(true)
			}
		}, nil)
	}
}

// frameBlock lowers body in a block of frame fr that yields (exit,
// value): (exitNormal, unit) when body ends normally.
func (fl *funcLowerer) frameBlock(fr *frame, body []Stmt) []*ir.Value {
	b := fl.b
	return b.Block(fr.label, []ir.Type{ir.I64, ir.Dyn}, func(string) {
		fl.frames = append(fl.frames, fr)
		fl.stmts(body)
		fl.frames = fl.frames[:len(fl.frames)-1]
		if !b.Terminated() {
			b.Yield(b.Const(ir.I64, exitNormal), fl.unit())
		}
	})
}

// A parallel branch returns its value, or raisedResult of the error it
// raised: an error of the runtime's (which no VVM value is) of kind
// vvm.raised carrying the error value as JSON. The block's output in
// the trace and the result then shows the branches' values as they are.
func raisedResult(b *ir.Builder, e *ir.Value) *ir.Value {
	return b.Builtin("error.new", b.StringValue("vvm.raised"), b.Builtin("json.encode", e))
}

// branchResult splits a branch's result r into its value and the error
// it raised (unit when none).
func branchResult(b *ir.Builder, r *ir.Value) (v, raised *ir.Value) {
	isRaised := b.Builtin("error.is", r)
	res := b.If(isRaised, dyn2, func() {
		b.Yield(b.UnitValue(), b.Builtin("json.parse", b.Builtin("error.message", r)))
	}, func() {
		b.Yield(r, b.UnitValue())
	})
	return res[0], res[1]
}
