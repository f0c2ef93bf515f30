package opt

import (
	"github.com/genesis-toolchain/genesis/diag"
	"github.com/genesis-toolchain/genesis/ir"
)

// looprotate turns a loop tested at the top,
//
//	loop ^L(%p = %init) {
//	  H                       ; the header: computes the test
//	  if %c { break ^L %x }
//	  B                       ; the body
//	  continue ^L %next
//	}
//
// into one test before the loop, a guard, and a loop tested at its
// bottom:
//
//	H[%p := %init]
//	if %c' { yield %x' } else {
//	  loop ^L(%p = %init, %hp = %h') {
//	    B[%h := %hp]
//	    H[%p := %next]
//	    if not %c { continue ^L %next, %h }
//	    break ^L %x
//	  }
//	}
//
// where %h are the values of H that B uses, carried into the next
// iteration as loop parameters. The instructions run are the same, in
// the same order: only where the header's code sits changes, so faults,
// effects and memory operations are untouched. The loop then costs one
// conditional jump per iteration (to its top) instead of a conditional
// jump at the top and a jump back at the bottom: the Forge backend lowers
// an if whose then arm only continues to one jump to the loop's head when
// the loop parameters need no moves.
//
// A loop is rotated when:
//
//   - its body is a header, an if whose then arm is only a break of the
//     loop and whose else arm is empty, at least one instruction, and a
//     continue of the loop, the only one;
//   - the header can be copied: no effect, asm, loop, block (whose
//     labels would be duplicated) or branch, and at most maxHeader
//     instructions (the copy is the code rotation adds);
//   - the bottom test is one Forge jump: the condition to continue is a
//     bool, or a comparison eq, ne, lt or gt. A le or ge against a
//     constant becomes lt or gt against its neighbour when that does not
//     wrap (i <= 10 is i < 11). A le or ge of two variables, one of them
//     invariant in the loop (the bound b), becomes lt or gt against b+1
//     or b−1, which is the same comparison for every b but the extreme
//     one where the neighbour wraps (MAX, or MIN, 0 unsigned): the loop
//     is versioned, `if b == extreme { the loop as it was } else { the
//     rotated loop }`, when it can be copied whole (no effect, call or
//     asm, at most maxVersioned instructions); otherwise, since Forge
//     only jumps on less-than and the bottom test would cost two jumps
//     as the top one does, it is left as it is.
func looprotate(m *ir.Module) {
	forEachFunc(m, func(f *ir.Func) {
		r := &rotator{f: f, fl: analyze(f), names: valueNames(f)}
		r.region(f.Body)
	})
}

// maxHeader bounds the instructions (nested ones included) of a header
// that rotation copies.
const maxHeader = 32

type rotator struct {
	f      *ir.Func
	fl     *flow
	names  namer
	labels namer // the function's labels, made when a loop is first versioned
}

// region rotates the loops of r, inner loops first.
func (rt *rotator) region(r *ir.Region) {
	var out []*ir.Instr
	for i, in := range r.Instrs {
		for _, sub := range in.Regions {
			rt.region(sub)
		}
		var repl []*ir.Instr
		if in.Op == ir.OpLoop {
			repl = rt.rotate(in)
		}
		if repl == nil {
			if out != nil {
				out = append(out, in)
			}
			continue
		}
		if out == nil {
			out = append(make([]*ir.Instr, 0, len(r.Instrs)+len(repl)), r.Instrs[:i]...)
		}
		out = append(out, repl...)
	}
	if out != nil {
		r.SetInstrs(out)
	}
}

// exitTest returns the index of the loop's exit test in its body: the
// first instruction that is an if without results whose then arm is
// only a break of the loop and whose else arm is empty; -1 if there is
// none.
func exitTest(loop *ir.Instr) int {
	for i, in := range loop.Regions[0].Instrs {
		if in.Op != ir.OpIf || len(in.Results) > 0 || len(in.Regions[1].Instrs) > 0 {
			continue
		}
		then := in.Regions[0].Instrs
		if len(then) == 1 && then[0].Op == ir.OpBreak && then[0].Label == loop.Label {
			return i
		}
		return -1 // another if first: the header would have to copy it
	}
	return -1
}

// copyable reports whether the header instructions ins can be copied:
// no effect, asm, labelled op or branch, and at most maxHeader
// instructions in all.
func copyable(ins []*ir.Instr) bool {
	n := 0
	ok := true
	ir.Walk(&ir.Region{Instrs: ins}, func(in *ir.Instr) {
		n++
		switch {
		case in.Op.IsEffect(), in.Op == ir.OpAsm, in.Op == ir.OpLoop, in.Op == ir.OpBlock,
			in.Op == ir.OpBreak, in.Op == ir.OpContinue, in.Op == ir.OpReturn, in.Op == ir.OpUnreachable:
			ok = false
		}
	})
	return ok && n <= maxHeader
}

// rotate rotates loop, if it qualifies, and returns the instructions
// that replace it in its region (the header's copy and the guard).
func (rt *rotator) rotate(loop *ir.Instr) []*ir.Instr {
	body := loop.Regions[0]
	e := exitTest(loop)
	n := len(body.Instrs)
	if e < 0 || n-e < 3 {
		return nil // no exit test at the top, or no body between it and the continue
	}
	last := body.Instrs[n-1]
	if last.Op != ir.OpContinue || last.Label != loop.Label || len(rt.fl.conts[loop]) != 1 {
		return nil
	}
	header, exit, rest := body.Instrs[:e], body.Instrs[e], body.Instrs[e+1:n-1]
	if !copyable(header) {
		return nil
	}
	if permutes(body, last) || foldsParam(header, body, last) {
		return nil
	}
	bare := len(exit.Regions[0].Instrs[0].Args) == 0 && !entersAlways(loop, header, exit.Args[0])
	ok, konst, vary := rt.oneJump(loop, header, exit.Args[0], bare)
	if !ok {
		return nil
	}
	if konst != nil { // the constant of a comparison made strict
		header = append([]*ir.Instr{konst}, header...)
	}
	var ver *version
	if vary != nil {
		// A le or ge of two variables: versioned on the bound's
		// extreme value, the loop copied as it is for that case.
		if !versionable(loop) {
			return nil
		}
		ver = &version{orig: rt.cloneLoop(loop), pos: loop.Pos}
		var bump []*ir.Instr
		bump, ver.pre, ver.wraps = rt.strictVar(loop, vary)
		header = append(bump, header...)
	}
	brk := exit.Regions[0].Instrs[0]

	// The header's values the rest uses, which become loop parameters.
	defined := map[*ir.Value]bool{}
	for _, in := range header {
		for _, v := range in.Results {
			defined[v] = true
		}
	}
	var carried []*ir.Value
	seen := map[*ir.Value]bool{}
	ir.Walk(&ir.Region{Instrs: append(rest[:len(rest):len(rest)], last)}, func(in *ir.Instr) {
		for _, a := range in.Args {
			if defined[a] && !seen[a] {
				seen[a] = true
				carried = append(carried, a)
			}
		}
	})
	hp := map[*ir.Value]*ir.Value{}
	for _, h := range carried {
		p := rt.f.NewValue(h.Type)
		p.Name = rt.names.fresh(h.Name)
		hp[h] = p
	}
	substitute(rest, hp)
	next := make([]*ir.Value, len(last.Args))
	for i, a := range last.Args {
		next[i] = substOf(hp, a)
	}

	// The guard: the header's copy on the initial values, and the test.
	toInit := map[*ir.Value]*ir.Value{}
	for i, p := range body.Params {
		toInit[p] = loop.Args[i]
	}
	guardHeader := rt.clone(header, toInit)
	cond0 := substOf(toInit, exit.Args[0])
	x0 := make([]*ir.Value, len(brk.Args))
	for i, a := range brk.Args {
		x0[i] = substOf(toInit, a)
	}
	inits := append([]*ir.Value(nil), loop.Args...)
	for _, h := range carried {
		inits = append(inits, substOf(toInit, h))
	}

	// The bottom: the header on the next values, then the test.
	toNext := map[*ir.Value]*ir.Value{}
	for i, p := range body.Params {
		toNext[p] = next[i]
	}
	substitute(header, toNext)
	for i, a := range brk.Args {
		brk.Args[i] = substOf(toNext, a)
	}
	pos := exit.Pos
	var tail []*ir.Instr
	cont := substOf(toNext, exit.Args[0])
	if d := cont.Def; d != nil && d.Op == ir.OpNot && d.Args[0].Type == ir.Bool {
		cont = d.Args[0] // not (not x) is x
	} else {
		not := &ir.Instr{Op: ir.OpNot, Args: []*ir.Value{cont}, Pos: pos}
		cont = not.AddResult(rt.f, ir.Bool)
		tail = append(tail, not)
	}
	last.Args = append(next, carried...)
	test := &ir.Instr{Op: ir.OpIf, Args: []*ir.Value{cont}, Pos: pos,
		Regions: []*ir.Region{{}, {}}}
	test.Regions[0].SetInstrs([]*ir.Instr{last})
	for _, r := range test.Regions {
		r.Parent = test
	}
	ins := make([]*ir.Instr, 0, n+2)
	ins = append(ins, rest...)
	ins = append(ins, header...)
	ins = append(ins, tail...)
	ins = append(ins, test, brk)
	body.SetInstrs(ins)
	for _, h := range carried {
		body.Params = append(body.Params, hp[h])
		rt.fl.params[hp[h]] = body
	}
	loop.Args = inits
	if foldGuard(guardHeader, cond0) {
		// The loop is always entered: no guard. The header's copy, now
		// constants, is deadcode's.
		return ver.wrap(rt, append(guardHeader, loop))
	}

	// The guard's if takes over the loop's results; the loop gets new
	// ones, which the else arm yields.
	guard := &ir.Instr{Op: ir.OpIf, Pos: loop.Pos, Regions: []*ir.Region{{}, {}}}
	guard.Results = loop.Results
	for _, v := range guard.Results {
		v.Def = guard
	}
	loop.Results = nil
	for _, v := range guard.Results {
		w := loop.AddResult(rt.f, v.Type)
		w.Name = rt.names.fresh(v.Name)
	}
	inner := []*ir.Instr{loop}
	if len(guard.Results) > 0 {
		inner = append(inner, &ir.Instr{Op: ir.OpYield, Args: loop.Results, Pos: loop.Pos})
		guard.Args = []*ir.Value{cond0}
		guard.Regions[0].SetInstrs([]*ir.Instr{{Op: ir.OpYield, Args: x0, Pos: pos}})
		guard.Regions[1].SetInstrs(inner)
	} else {
		// No results: if not c' { loop }.
		if d := cond0.Def; d != nil && d.Op == ir.OpNot && d.Args[0].Type == ir.Bool {
			guard.Args = []*ir.Value{d.Args[0]}
		} else {
			neg := &ir.Instr{Op: ir.OpNot, Args: []*ir.Value{cond0}, Pos: pos}
			guardHeader = append(guardHeader, neg)
			guard.Args = []*ir.Value{neg.AddResult(rt.f, ir.Bool)}
		}
		guard.Regions[0].SetInstrs(inner)
	}
	for _, r := range guard.Regions {
		r.Parent = guard
	}
	return ver.wrap(rt, append(guardHeader, guard))
}

// entersAlways reports whether the exit condition c of loop is false on
// entry, as far as constants tell: the header evaluated on the loop's
// constant initial values (foldGuard's evaluation, without changing
// anything).
func entersAlways(loop *ir.Instr, header []*ir.Instr, c *ir.Value) bool {
	known := map[*ir.Value]int64{}
	val := func(v *ir.Value) (int64, bool) {
		if x, ok := known[v]; ok {
			return x, true
		}
		return constInt(v)
	}
	for i, p := range loop.Regions[0].Params {
		if x, ok := constInt(loop.Args[i]); ok {
			known[p] = x
		}
	}
	return evalHeader(header, c, val, func(in *ir.Instr, t ir.Type, x int64) {
		known[in.Results[0]] = ir.Normalize(t, x)
	})
}

// foldGuard folds the instructions of the guard's header whose
// operands are all constants, in order, and reports whether the guard's
// exit condition c is then the constant false: the loop always runs
// its body once. Rotation creates such guards wherever a loop starts
// from constants (for i in 0..10), and no constfold runs after it.
func foldGuard(header []*ir.Instr, c *ir.Value) bool {
	return evalHeader(header, c, constInt, toConst)
}

// evalHeader evaluates, in order, the integer and bool instructions of
// header whose operands val knows, handing each result to set, and
// reports whether c is then known to be false.
func evalHeader(header []*ir.Instr, c *ir.Value, val func(*ir.Value) (int64, bool), set func(*ir.Instr, ir.Type, int64)) bool {
	for _, in := range header {
		if len(in.Results) != 1 || len(in.Regions) > 0 || len(in.Args) == 0 || len(in.Args) > 2 {
			continue
		}
		t := in.Results[0].Type
		if !(t.IsInt() || t == ir.Bool) {
			continue
		}
		a, ok := val(in.Args[0])
		var b int64
		if ok && len(in.Args) == 2 {
			b, ok = val(in.Args[1])
		}
		if !ok {
			continue
		}
		if x, ok := eval(in.Op, in.Args[0].Type, t, a, b); ok {
			set(in, t, x)
		}
	}
	x, ok := val(c)
	return ok && c.Type == ir.Bool && x == 0
}

// oneJump reports whether the loop's condition to go on, not c, is
// tested with one Forge jump: a bool, or (through a chain of nots) a
// comparison eq, ne, lt or gt. A le or ge of a header comparison with a
// constant operand is rewritten into the strict comparison with the
// constant's neighbour, when that does not wrap: the constant returned
// must then be added to the header.
//
// A loop whose exit passes no values and whose continue condition is an
// lt or gt already costs one jump per iteration: its exit test lowers to
// "JLT body; JMP exit", which the backend's peephole copies to the
// bottom of the loop. Rotating it pays only when the guard folds away
// (the loop always runs once), saving the test where the loop is
// entered; otherwise (bare) the guard costs what the top test did, plus
// moves, and the loop is left alone. An exit test of eq, ne, a bool, or
// lt/gt, and an exit passing values (the moves before its jump stop the
// peephole), cost a second jump per iteration, which rotation saves.
func (rt *rotator) oneJump(loop *ir.Instr, header []*ir.Instr, c *ir.Value, bare bool) (ok bool, konst, vary *ir.Instr) {
	odd := true // the continue condition is not c
	v := c
	for v.Def != nil && v.Def.Op == ir.OpNot && v.Def.Args[0].Type == ir.Bool {
		odd = !odd
		v = v.Def.Args[0]
	}
	cmp := v.Def
	if cmp == nil || !isComparison(cmp.Op) {
		return true, nil, nil // a bool: JZ or JNZ
	}
	op := cmp.Op
	if odd {
		op = invertCmp[op]
	}
	switch op {
	case ir.OpEq, ir.OpNe:
		return true, nil, nil
	case ir.OpLtS, ir.OpLtU, ir.OpGtS, ir.OpGtU:
		return !bare, nil, nil
	}
	// Only a comparison of the header, which the rotation copies, is
	// rewritten (the constant goes into the header).
	if !inHeader(header, cmp) || !cmp.Args[0].Type.IsInt() {
		return false, nil, nil
	}
	_, k0 := constInt(cmp.Args[0])
	_, k1 := constInt(cmp.Args[1])
	if !k0 && !k1 {
		// Two variables: the bound must be invariant, and the loop is
		// then versioned (strictVar).
		if bound(loop, rt.fl, cmp) < 0 {
			return false, nil, nil
		}
		return true, nil, cmp
	}
	konst = rt.strict(cmp)
	return konst != nil, konst, nil
}

// bound returns the index of the operand of cmp, a comparison of two
// variables in loop's header, that is defined outside loop (the second
// when both are), or -1.
func bound(loop *ir.Instr, fl *flow, cmp *ir.Instr) int {
	for k := 1; k >= 0; k-- {
		if a := cmp.Args[k]; a.Def != loop && !fl.definedIn(a, loop) {
			return k
		}
	}
	return -1
}

// maxVersioned bounds the instructions (nested ones included) of a loop
// that rotation versions, which copies it whole.
const maxVersioned = 64

// versionable reports whether loop can be copied whole for versioning:
// no effect (whose step identity must stay unique), call or asm, and at
// most maxVersioned instructions.
func versionable(loop *ir.Instr) bool {
	n := 0
	ok := true
	ir.Walk(loop.Regions[0], func(in *ir.Instr) {
		n++
		if in.Op.IsEffect() || in.Op == ir.OpAsm || in.Op == ir.OpCall || in.Op == ir.OpCallIndirect {
			ok = false
		}
	})
	return ok && n <= maxVersioned
}

// strictVar rewrites cmp, a le, lt, ge or gt of two variables in the
// loop's header, one of them (the bound b) invariant, into the
// comparison of the other strictness against b's neighbour, b+1 or
// b−1: the same comparison for every value of b but one, the extreme
// (MAX for b+1, MIN for b−1: 0 unsigned), where the neighbour wraps. It
// returns the instructions computing the neighbour (to go first in the
// header: they depend on b only), and those computing wraps, whether b
// is that extreme (to go before the loop).
func (rt *rotator) strictVar(loop, cmp *ir.Instr) (bump, pre []*ir.Instr, wraps *ir.Value) {
	k := bound(loop, rt.fl, cmp)
	if k < 0 {
		panic("looprotate: strictVar without an invariant bound")
	}
	b := cmp.Args[k]
	t := b.Type
	signed := cmp.Op == ir.OpLtS || cmp.Op == ir.OpLeS || cmp.Op == ir.OpGtS || cmp.Op == ir.OpGeS
	less := cmp.Op == ir.OpLtS || cmp.Op == ir.OpLtU || cmp.Op == ir.OpLeS || cmp.Op == ir.OpLeU
	boundRight := k == 1 == less // the bound is the larger side
	strictNow := cmp.Op == ir.OpLtS || cmp.Op == ir.OpLtU || cmp.Op == ir.OpGtS || cmp.Op == ir.OpGtU
	up := boundRight != strictNow // as in strict
	n := uint(t.Bits())
	var extreme int64
	switch {
	case up && signed:
		extreme = int64(uint64(1)<<(n-1) - 1)
	case up:
		extreme = -1 // all ones, normalized below
	case signed:
		extreme = int64(uint64(1) << (n - 1))
	default:
		extreme = 0
	}
	delta := int64(-1)
	if up {
		delta = 1
	}
	pos := cmp.Pos
	dc := &ir.Instr{Op: ir.OpConst, Type: t, Lit: ir.Literal{Kind: ir.LitInt, Int: ir.Normalize(t, delta)}, Pos: pos}
	add := &ir.Instr{Op: ir.OpAdd, Args: []*ir.Value{b, dc.AddResult(rt.f, t)}, Pos: pos}
	cmp.Args[k] = add.AddResult(rt.f, t)
	cmp.Op = strictSwap[cmp.Op]
	ec := &ir.Instr{Op: ir.OpConst, Type: t, Lit: ir.Literal{Kind: ir.LitInt, Int: ir.Normalize(t, extreme)}, Pos: pos}
	eq := &ir.Instr{Op: ir.OpEq, Args: []*ir.Value{b, ec.AddResult(rt.f, t)}, Pos: pos}
	wraps = eq.AddResult(rt.f, ir.Bool)
	return []*ir.Instr{dc, add}, []*ir.Instr{ec, eq}, wraps
}

// A version is the loop as it was, for the one value of its bound for
// which the rotated loop's strict comparison would differ.
type version struct {
	orig  *ir.Instr   // the copy of the loop before rotation
	pre   []*ir.Instr // computing wraps
	wraps *ir.Value
	pos   diag.Pos
}

// wrap returns the instructions that replace the loop: with no version,
// repl; otherwise pre and if wraps { the original loop } else { repl },
// the if taking over the results of repl's last instruction (the
// loop's).
func (ver *version) wrap(rt *rotator, repl []*ir.Instr) []*ir.Instr {
	if ver == nil {
		return repl
	}
	owner := repl[len(repl)-1]
	vif := &ir.Instr{Op: ir.OpIf, Args: []*ir.Value{ver.wraps}, Pos: ver.pos, Regions: []*ir.Region{{}, {}}}
	vif.Results = owner.Results
	for _, v := range vif.Results {
		v.Def = vif
	}
	owner.Results = nil
	for _, v := range vif.Results {
		w := owner.AddResult(rt.f, v.Type)
		w.Name = rt.names.fresh(v.Name)
	}
	then := []*ir.Instr{ver.orig}
	els := repl
	if len(vif.Results) > 0 {
		then = append(then, &ir.Instr{Op: ir.OpYield, Args: ver.orig.Results, Pos: ver.pos})
		els = append(els, &ir.Instr{Op: ir.OpYield, Args: owner.Results, Pos: ver.pos})
	}
	vif.Regions[0].SetInstrs(then)
	vif.Regions[1].SetInstrs(els)
	for _, r := range vif.Regions {
		r.Parent = vif
	}
	return append(ver.pre, vif)
}

// cloneLoop returns a copy of loop, whose labels (its own and those of
// the loops and blocks in it) and values are new, its results too.
func (rt *rotator) cloneLoop(loop *ir.Instr) *ir.Instr {
	if rt.labels.used == nil {
		rt.labels = labelNames(rt.f)
	}
	return rt.cloneDeep([]*ir.Instr{loop}, map[*ir.Value]*ir.Value{}, map[string]string{})[0]
}

// cloneDeep returns copies of ins with their operands mapped through
// vals and their labels through labs, to which it adds each value and
// label it copies.
func (rt *rotator) cloneDeep(ins []*ir.Instr, vals map[*ir.Value]*ir.Value, labs map[string]string) []*ir.Instr {
	out := make([]*ir.Instr, len(ins))
	for i, in := range ins {
		c := *in
		if in.Op == ir.OpLoop || in.Op == ir.OpBlock {
			c.Label = rt.labels.fresh(in.Label)
			labs[in.Label] = c.Label
		} else if l, ok := labs[in.Label]; ok && in.Label != "" {
			c.Label = l
		}
		c.Args = make([]*ir.Value, len(in.Args))
		for j, a := range in.Args {
			c.Args[j] = substOf(vals, a)
		}
		c.Results = nil
		for _, v := range in.Results {
			w := c.AddResult(rt.f, v.Type)
			w.Name = rt.names.fresh(v.Name)
			vals[v] = w
		}
		c.Cases = append([][]int64(nil), in.Cases...)
		c.Regs = append([]int(nil), in.Regs...)
		c.Regions = make([]*ir.Region, len(in.Regions))
		for j, r := range in.Regions {
			nr := &ir.Region{Parent: &c}
			for _, p := range r.Params {
				q := rt.f.NewValue(p.Type)
				q.Name = rt.names.fresh(p.Name)
				vals[p] = q
				nr.Params = append(nr.Params, q)
				rt.fl.params[q] = nr
			}
			nr.SetInstrs(rt.cloneDeep(r.Instrs, vals, labs))
			c.Regions[j] = nr
		}
		out[i] = &c
	}
	return out
}

// permutes reports whether the continue cont passes a parameter of the
// loop body to another parameter (a swap: a, b = b, a + b). The
// backend then needs moves before the jump back, and a bottom test
// whose continue needs moves costs two jumps (to the moves, and back to
// the head), no fewer than the loop tested at the top: such a loop is
// left alone.
func permutes(body *ir.Region, cont *ir.Instr) bool {
	for i, a := range cont.Args {
		for j, p := range body.Params {
			if a == p && i != j {
				return true
			}
		}
	}
	return false
}

// foldsParam reports whether the header, moved to the bottom, would
// load or store at a constant offset from the next value of a loop
// parameter (while *p != 0 { …; p = p + 1 }). The Forge backend folds
// the constant of ptradd %p, 1 into the access (LOAD r, p, 1), which
// keeps the old %p alive beside the new one: they no longer share a
// register, and the continue needs a move, which costs a second jump.
func foldsParam(header []*ir.Instr, body *ir.Region, cont *ir.Instr) bool {
	next := map[*ir.Value]bool{}
	for i, a := range cont.Args {
		if i < len(body.Params) && a != body.Params[i] {
			next[a] = true
		}
	}
	params := map[*ir.Value]bool{}
	for _, p := range body.Params {
		params[p] = true
	}
	folds := false
	ir.Walk(&ir.Region{Instrs: header}, func(in *ir.Instr) {
		var addr *ir.Value
		switch in.Op {
		case ir.OpLoad:
			addr = in.Args[0]
		case ir.OpStore:
			addr = in.Args[1]
		default:
			return
		}
		// In the header, the address is computed from a parameter; at
		// the bottom, from its next value.
		d := addr.Def
		if params[addr] {
			for i, p := range body.Params {
				if p == addr && i < len(cont.Args) {
					d = cont.Args[i].Def
				}
			}
		}
		if d != nil && d.Op == ir.OpPtrAdd && next[d.Results[0]] {
			for k, a := range d.Args {
				if _, ok := constInt(a); ok && params[d.Args[1-k]] {
					folds = true
				}
			}
		}
	})
	return folds
}

// inHeader reports whether in is one of the top-level instructions of
// header.
func inHeader(header []*ir.Instr, in *ir.Instr) bool {
	for _, h := range header {
		if h == in {
			return true
		}
	}
	return false
}

// strict rewrites cmp, a comparison of an integer with an integer
// constant, into the equivalent comparison whose strictness is the
// other (le ↔ lt, ge ↔ gt, against the constant's neighbour), when the
// neighbour does not wrap. It returns the neighbour's const instruction,
// not yet in any region, or nil when it cannot.
func (rt *rotator) strict(cmp *ir.Instr) *ir.Instr {
	t := cmp.Args[0].Type
	if !t.IsInt() {
		return nil
	}
	k := 1
	c, ok := constInt(cmp.Args[1])
	if !ok {
		if c, ok = constInt(cmp.Args[0]); !ok {
			return nil
		}
		k = 0
	}
	signed := cmp.Op == ir.OpLtS || cmp.Op == ir.OpLeS || cmp.Op == ir.OpGtS || cmp.Op == ir.OpGeS
	n := uint(t.Bits())
	lo, hi := uint64(0), uint64(1)<<n-1 // unsigned bounds, as n-bit words
	if signed {
		lo, hi = uint64(1)<<(n-1), uint64(1)<<(n-1)-1
	}
	w := word(t, c)
	// x le C = x lt C+1; x lt C = x le C-1; C le x = C-1 lt x;
	// C lt x = C+1 le x; ge and gt are the same with the operands swapped.
	less := cmp.Op == ir.OpLtS || cmp.Op == ir.OpLtU || cmp.Op == ir.OpLeS || cmp.Op == ir.OpLeU
	constRight := k == 1 == less // the constant is the larger side
	strictNow := cmp.Op == ir.OpLtS || cmp.Op == ir.OpLtU || cmp.Op == ir.OpGtS || cmp.Op == ir.OpGtU
	up := constRight != strictNow // le with C larger: C+1; lt with C larger: C-1
	if up && w == hi || !up && w == lo {
		return nil
	}
	delta := int64(-1)
	if up {
		delta = 1
	}
	cc := &ir.Instr{Op: ir.OpConst, Type: t, Lit: ir.Literal{Kind: ir.LitInt, Int: ir.Normalize(t, c+delta)}, Pos: cmp.Pos}
	cmp.Args[k] = cc.AddResult(rt.f, t)
	cmp.Op = strictSwap[cmp.Op]
	return cc
}

// strictSwap maps each ordered comparison to the one of the other
// strictness in the same direction.
var strictSwap = map[ir.Op]ir.Op{
	ir.OpLtS: ir.OpLeS, ir.OpLeS: ir.OpLtS, ir.OpLtU: ir.OpLeU, ir.OpLeU: ir.OpLtU,
	ir.OpGtS: ir.OpGeS, ir.OpGeS: ir.OpGtS, ir.OpGtU: ir.OpGeU, ir.OpGeU: ir.OpGtU,
}

// invertCmp maps each comparison to its negation.
var invertCmp = map[ir.Op]ir.Op{
	ir.OpEq: ir.OpNe, ir.OpNe: ir.OpEq,
	ir.OpLtS: ir.OpGeS, ir.OpGeS: ir.OpLtS, ir.OpLtU: ir.OpGeU, ir.OpGeU: ir.OpLtU,
	ir.OpGtS: ir.OpLeS, ir.OpLeS: ir.OpGtS, ir.OpGtU: ir.OpLeU, ir.OpLeU: ir.OpGtU,
}

func isComparison(op ir.Op) bool { return op >= ir.OpEq && op <= ir.OpGeU }

// substitute rewrites the operands of ins, at any depth, through subst,
// one step: subst may map a loop parameter to another (a continue that
// swaps two), which a chain would follow around.
func substitute(ins []*ir.Instr, subst map[*ir.Value]*ir.Value) {
	if len(subst) == 0 {
		return
	}
	ir.Walk(&ir.Region{Instrs: ins}, func(in *ir.Instr) {
		for i, a := range in.Args {
			in.Args[i] = substOf(subst, a)
		}
	})
}

// substOf returns what subst maps v to, or v.
func substOf(subst map[*ir.Value]*ir.Value, v *ir.Value) *ir.Value {
	if w, ok := subst[v]; ok {
		return w
	}
	return v
}

// clone returns copies of ins (which hold no labelled op and no region
// parameters) with their operands mapped through vals, to which it adds
// each original result and its copy.
func (rt *rotator) clone(ins []*ir.Instr, vals map[*ir.Value]*ir.Value) []*ir.Instr {
	return cloneInstrs(rt.f, &rt.names, ins, vals)
}
