package opt

import (
	"fmt"
	"strings"

	"github.com/genesis-toolchain/genesis/ir"
)

// ivsimplify steps addresses with their loop's induction variable: an
// address `ptradd %p, off` inside a loop, where %p is defined outside
// the loop and off is a linear function of an induction variable %k
// (a loop parameter of type i64 that every continue advances by the
// same loop-invariant %s), becomes a new loop parameter %q, starting
// at %p + off(init) and advanced by off's slope times %s at every
// continue:
//
//	loop ^L(%k = %k0) {              %q0 = ptradd %p, off(%k0)
//	  %o = shl (add (mul %i, %n), %k), 3    loop ^L(%k = %k0, %q = %q0) {
//	  %a = ptradd %p, %o         ⇒     … load %q …
//	  … load %a …                         %q1 = ptradd %q, 8
//	  continue ^L (add %k, 1)              continue ^L (add %k, 1), %q1
//	}                                   }
//
// The offset's computation, a multiplication among it, goes with
// deadcode when nothing else uses it; the loop pays one addition per
// address instead. off is built of add, sub, mul, shl and neg, of %k,
// constants and values defined outside the loop or computed inside it
// from such values by pure operations (those are recomputed before the
// loop); a multiplication or shift has one factor free of %k. Integer
// arithmetic wraps modulo 2^64 like ptradd, and such an expression is
// linear modulo 2^64 (off(k+s) = off(k) + slope·s for every k), so the
// pointer equals the address it replaces at every iteration, whatever
// wraps. Nothing that can fault is moved or added: the new instructions
// are pure, and loads and stores keep their place.
//
// Inner loops are done first, so that the start address an inner loop
// gets before it is in turn stepped by the enclosing loop (the rows and
// columns of a matrix product).
func ivsimplify(m *ir.Module) {
	forEachFunc(m, func(f *ir.Func) {
		s := &stepper{f: f, fl: analyze(f), subst: map[*ir.Value]*ir.Value{}, names: valueNames(f), uses: countUses(f),
			effects: &numberer{effects: map[*ir.Instr]effect{}}}
		s.region(f.Body)
		if len(s.subst) > 0 {
			ir.ReplaceUses(f, s.subst)
		}
	})
}

// maxStepped bounds the pointers one loop gets, so that stepping cannot
// push a function past the registers the backends have.
const maxStepped = 8

type stepper struct {
	f     *ir.Func
	fl    *flow
	subst map[*ir.Value]*ir.Value
	names namer
	// uses counts the uses of each value when the pass started; the
	// values it creates have none counted, and at most one use.
	uses map[*ir.Value]int
	// inv memoizes invariant for the loop being stepped, lin linear for
	// its induction variable being considered, so that shared operands
	// are looked at once.
	inv, lin map[*ir.Value]bool
	// effects caches whether a loop calls, at any depth.
	effects *numberer
}

// region steps the loops of r, inner loops first.
func (s *stepper) region(r *ir.Region) {
	for i := 0; i < len(r.Instrs); i++ {
		in := r.Instrs[i]
		for _, sub := range in.Regions {
			s.region(sub)
		}
		if in.Op != ir.OpLoop {
			continue
		}
		if pre := s.loop(in); len(pre) > 0 {
			r.SetInstrs(append(r.Instrs[:i:i], append(pre, r.Instrs[i:]...)...))
			i += len(pre)
		}
	}
}

// loop steps the addresses of loop by its induction variables and
// returns the instructions to place before it.
func (s *stepper) loop(loop *ir.Instr) []*ir.Instr {
	conts := s.fl.conts[loop]
	if len(conts) == 0 {
		return nil
	}
	if s.effects.effect(loop)&fxCalls != 0 {
		// A pointer stepped in a loop that calls lives across the
		// call: the Forge backend saves and restores it around each
		// (a PUSH and a POP, 2 ticks) and steps it on every iteration,
		// where the address it replaces is computed only where it is
		// used, often in an arm that the call's own test guards, and
		// again after the call (gvn does not carry values across
		// calls). licm leaves such loops alone for the same reason.
		return nil
	}
	body := loop.Regions[0]
	var pre []*ir.Instr
	stepped := 0
	var addrs []*ir.Instr
	ir.Walk(body, func(in *ir.Instr) {
		if in.Op == ir.OpPtrAdd {
			addrs = append(addrs, in)
		}
	})
	if len(addrs) == 0 {
		return nil
	}
	s.inv = map[*ir.Value]bool{}
	for pi, k := range body.Params {
		if k.Type != ir.I64 {
			continue
		}
		step, back := s.stepOf(loop, pi)
		if step == nil {
			continue
		}
		s.lin = map[*ir.Value]bool{}
		// The addresses of the loop that are linear in k, each (base,
		// offset) once: offsets computed alike (in two arms of an if,
		// which gvn, running later, cannot merge once each is a loop
		// parameter) are one offset.
		type key struct {
			p   *ir.Value
			off string
		}
		done := map[key]*ir.Value{}
		ids := map[*ir.Value]int{}
		for _, in := range addrs {
			if stepped >= maxStepped {
				break
			}
			p, off := in.Args[0], in.Args[1]
			if _, gone := s.subst[in.Results[0]]; gone || s.fl.definedIn(p, loop) || !s.linear(loop, k, off, 8) {
				continue
			}
			kk := key{p, s.exprKey(loop, off, ids)}
			if q, ok := done[kk]; ok {
				s.subst[in.Results[0]] = q
				continue
			}
			if !s.pays(loop, k, p, off) {
				continue
			}
			b := &seqBuilder{s: s, loop: loop, k: k, clones: map[*ir.Value]*ir.Value{}}
			start := b.ptradd(p, b.at(off, loop.Args[pi]))
			slope := b.slope(off)
			if slope == nil {
				continue // off does not depend on k after all
			}
			stride := b.mul(slope, b.inv(step))
			if back {
				stride = b.op(ir.OpNeg, stride, nil)
			}
			pre = append(pre, b.ins...)
			q := s.f.NewValue(ir.Ptr)
			q.Name = s.names.fresh(in.Results[0].Name)
			body.Params = append(body.Params, q)
			s.fl.params[q] = body
			loop.Args = append(loop.Args, start)
			// The next address is computed in the body's own region,
			// before the instruction holding each continue: an if whose
			// arm only continues stays a single jump to the loop's head
			// (looprotate's bottom test).
			advanced := map[*ir.Instr]*ir.Value{}
			for _, c := range conts {
				anc := c
				for anc.Parent != body {
					anc = anc.Parent.Parent
				}
				next, ok := advanced[anc]
				if !ok {
					adv := &ir.Instr{Op: ir.OpPtrAdd, Args: []*ir.Value{q, stride}, Pos: c.Pos}
					next = adv.AddResult(s.f, ir.Ptr)
					insertBefore(body, anc, adv)
					advanced[anc] = next
				}
				c.Args = append(c.Args, next)
			}
			s.subst[in.Results[0]] = q
			done[kk] = q
			stepped++
		}
	}
	return pre
}

// exprKey describes the computation of v, an offset linear in an
// induction variable of loop: the pure operations linear allows (add,
// sub, mul, shl, neg) computed in the loop, by operator, type and
// operands; constants by value; any other value by itself (ids numbers
// them). Two offsets with the same key have the same value at every
// iteration.
func (s *stepper) exprKey(loop *ir.Instr, v *ir.Value, ids map[*ir.Value]int) string {
	if c, ok := constInt(v); ok {
		return fmt.Sprintf("%s:%d", v.Type, c)
	}
	if d := v.Def; d != nil && len(v.Def.Results) == 1 && s.fl.definedIn(v, loop) {
		switch d.Op {
		case ir.OpAdd, ir.OpSub, ir.OpMul, ir.OpShl, ir.OpNeg:
			var b strings.Builder
			fmt.Fprintf(&b, "(%d %s", d.Op, v.Type)
			for _, a := range d.Args {
				b.WriteByte(' ')
				b.WriteString(s.exprKey(loop, a, ids))
			}
			b.WriteByte(')')
			return b.String()
		}
	}
	id, ok := ids[v]
	if !ok {
		id = len(ids)
		ids[v] = id
	}
	return fmt.Sprintf("v%d", id)
}

// insertBefore inserts in before at, an instruction of r.
func insertBefore(r *ir.Region, at, in *ir.Instr) {
	for j, x := range r.Instrs {
		if x == at {
			r.SetInstrs(append(r.Instrs[:j:j], append([]*ir.Instr{in}, r.Instrs[j:]...)...))
			return
		}
	}
	panic("insertBefore: the instruction is not in the region")
}

// pays reports whether stepping ptradd p, off saves instructions at
// every iteration: the operations of off that depend on k and that
// nothing else uses (k+1 is the next k, too), and the addition itself
// unless p is a constant (which the backends fold into the memory
// access's offset), against the one addition that steps the pointer.
func (s *stepper) pays(loop *ir.Instr, k, p, off *ir.Value) bool {
	n := 0
	var count func(v *ir.Value)
	count = func(v *ir.Value) {
		if v == k || s.invariant(loop, v, 8) || s.uses[v] > 1 {
			return
		}
		n++
		for _, a := range v.Def.Args {
			count(a)
		}
	}
	count(off)
	if _, ok := constInt(p); !ok {
		n++
	}
	return n > 1
}

// stepOf returns the step of loop parameter pi of loop: the value s
// such that every continue passes add k, s (or add s, k), or sub k, s
// (then neg is true), with s one value for every continue (or equal
// constants) defined outside the loop or a constant; nil if there is
// none.
func (s *stepper) stepOf(loop *ir.Instr, pi int) (step *ir.Value, neg bool) {
	k := loop.Regions[0].Params[pi]
	for i, c := range s.fl.conts[loop] {
		d := c.Args[pi].Def
		if d == nil || d.Op != ir.OpAdd && d.Op != ir.OpSub {
			return nil, false
		}
		var st *ir.Value
		switch {
		case d.Args[0] == k:
			st = d.Args[1]
		case d.Args[1] == k && d.Op == ir.OpAdd:
			st = d.Args[0]
		default:
			return nil, false
		}
		if _, ok := constInt(st); !ok && s.fl.definedIn(st, loop) {
			return nil, false
		}
		if i == 0 {
			step, neg = st, d.Op == ir.OpSub
			continue
		}
		if neg != (d.Op == ir.OpSub) {
			return nil, false
		}
		if st != step {
			x, ok := constInt(step)
			if !ok || !sameConst(st, x) {
				return nil, false
			}
		}
	}
	return step, neg
}

func sameConst(v *ir.Value, x int64) bool {
	y, ok := constInt(v)
	return ok && x == y
}

// invariant reports whether v has the same value at every iteration of
// loop and can be computed before it: defined outside it, or computed
// inside it by pure, non-faulting operations of such values.
func (s *stepper) invariant(loop *ir.Instr, v *ir.Value, depth int) bool {
	if x, ok := s.inv[v]; ok {
		return x
	}
	x := s.invariant1(loop, v, depth)
	s.inv[v] = x
	return x
}

func (s *stepper) invariant1(loop *ir.Instr, v *ir.Value, depth int) bool {
	if !s.fl.definedIn(v, loop) {
		return true
	}
	d := v.Def
	if d == nil || depth == 0 || len(d.Regions) > 0 {
		return false // a parameter of the loop or of one nested in it
	}
	switch d.Op {
	case ir.OpConst:
		return d.Type != ir.Dyn
	case ir.OpAdd, ir.OpSub, ir.OpMul, ir.OpShl, ir.OpShrU, ir.OpShrS, ir.OpAnd, ir.OpOr, ir.OpXor,
		ir.OpNeg, ir.OpNot, ir.OpSext, ir.OpZext, ir.OpTrunc, ir.OpPtrAdd, ir.OpPtrToInt, ir.OpIntToPtr:
		for _, a := range d.Args {
			if !s.invariant(loop, a, depth-1) {
				return false
			}
		}
		return true
	}
	return false
}

// linear reports whether v, an i64, is a linear function of k built of
// add, sub, neg, and mul and shl by a factor free of k, over k and
// invariant values.
func (s *stepper) linear(loop *ir.Instr, k, v *ir.Value, depth int) bool {
	if x, ok := s.lin[v]; ok {
		return x
	}
	x := s.linear1(loop, k, v, depth)
	s.lin[v] = x
	return x
}

func (s *stepper) linear1(loop *ir.Instr, k, v *ir.Value, depth int) bool {
	if v == k || s.invariant(loop, v, 8) {
		return v.Type == ir.I64
	}
	d := v.Def
	if d == nil || depth == 0 || v.Type != ir.I64 {
		return false
	}
	switch d.Op {
	case ir.OpAdd, ir.OpSub:
		return s.linear(loop, k, d.Args[0], depth-1) && s.linear(loop, k, d.Args[1], depth-1)
	case ir.OpNeg:
		return s.linear(loop, k, d.Args[0], depth-1)
	case ir.OpMul:
		a, b := d.Args[0], d.Args[1]
		return s.invariant(loop, b, 8) && s.linear(loop, k, a, depth-1) ||
			s.invariant(loop, a, 8) && s.linear(loop, k, b, depth-1)
	case ir.OpShl:
		return s.invariant(loop, d.Args[1], 8) && s.linear(loop, k, d.Args[0], depth-1)
	}
	return false
}

// seqBuilder builds the instructions placed before a loop: an offset
// evaluated at the initial value of k, and its slope.
type seqBuilder struct {
	s      *stepper
	loop   *ir.Instr
	k      *ir.Value
	ins    []*ir.Instr
	clones map[*ir.Value]*ir.Value // invariant values of the loop, computed before it
}

func (b *seqBuilder) emit(in *ir.Instr, t ir.Type) *ir.Value {
	in.Pos = b.loop.Pos
	b.ins = append(b.ins, in)
	return in.AddResult(b.s.f, t)
}

func (b *seqBuilder) konst(x int64) *ir.Value {
	return b.emit(&ir.Instr{Op: ir.OpConst, Type: ir.I64, Lit: ir.Literal{Kind: ir.LitInt, Int: x}}, ir.I64)
}

// op builds op x, y (y nil for neg), folding constants and the
// identities of 0 and 1 so that the slope of i*8 is the constant 8.
func (b *seqBuilder) op(op ir.Op, x, y *ir.Value) *ir.Value {
	a, aok := constInt(x)
	var c int64
	cok := false
	if y != nil {
		c, cok = constInt(y)
	}
	if aok && (y == nil || cok) {
		if r, ok := eval(op, ir.I64, ir.I64, a, c); ok {
			return b.konst(r)
		}
	}
	switch {
	case op == ir.OpAdd && aok && a == 0:
		return y
	case (op == ir.OpAdd || op == ir.OpSub || op == ir.OpShl) && cok && c == 0:
		return x
	case op == ir.OpMul && (aok && a == 0 || cok && c == 0):
		return b.konst(0)
	case op == ir.OpMul && aok && a == 1:
		return y
	case op == ir.OpMul && cok && c == 1:
		return x
	}
	args := []*ir.Value{x}
	if y != nil {
		args = append(args, y)
	}
	return b.emit(&ir.Instr{Op: op, Args: args}, x.Type)
}

func (b *seqBuilder) mul(x, y *ir.Value) *ir.Value { return b.op(ir.OpMul, x, y) }

func (b *seqBuilder) ptradd(p, off *ir.Value) *ir.Value {
	if x, ok := constInt(off); ok && x == 0 {
		return p
	}
	return b.emit(&ir.Instr{Op: ir.OpPtrAdd, Args: []*ir.Value{p, off}}, ir.Ptr)
}

// inv returns invariant v computed before the loop: v itself when it is
// defined outside, else a copy of its computation.
func (b *seqBuilder) inv(v *ir.Value) *ir.Value {
	if !b.s.fl.definedIn(v, b.loop) {
		return v
	}
	if c, ok := b.clones[v]; ok {
		return c
	}
	d := v.Def
	c := *d
	c.Args = make([]*ir.Value, len(d.Args))
	for i, a := range d.Args {
		c.Args[i] = b.inv(a)
	}
	c.Results = nil
	w := b.emit(&c, v.Type)
	b.clones[v] = w
	return w
}

// at returns linear v with k replaced by k0, computed before the loop.
func (b *seqBuilder) at(v, k0 *ir.Value) *ir.Value {
	if v == b.k {
		return k0
	}
	if b.s.invariant(b.loop, v, 8) {
		return b.inv(v)
	}
	d := v.Def
	switch d.Op {
	case ir.OpNeg:
		return b.op(ir.OpNeg, b.at(d.Args[0], k0), nil)
	default: // add, sub, mul, shl: linear in both or one operand
		x, y := d.Args[0], d.Args[1]
		return b.op(d.Op, b.at(x, k0), b.at(y, k0))
	}
}

// slope returns the slope of linear v in k, computed before the loop,
// or nil when it is 0 (v does not depend on k).
func (b *seqBuilder) slope(v *ir.Value) *ir.Value {
	if v == b.k {
		return b.konst(1)
	}
	if b.s.invariant(b.loop, v, 8) {
		return nil
	}
	d := v.Def
	switch d.Op {
	case ir.OpNeg:
		if x := b.slope(d.Args[0]); x != nil {
			return b.op(ir.OpNeg, x, nil)
		}
		return nil
	case ir.OpAdd, ir.OpSub:
		x, y := b.slope(d.Args[0]), b.slope(d.Args[1])
		switch {
		case x == nil && y == nil:
			return nil
		case y == nil:
			return x
		case x == nil && d.Op == ir.OpAdd:
			return y
		case x == nil:
			return b.op(ir.OpNeg, y, nil)
		}
		return b.op(d.Op, x, y)
	case ir.OpMul:
		x, y := d.Args[0], d.Args[1]
		if b.s.invariant(b.loop, x, 8) {
			x, y = y, x
		}
		if sx := b.slope(x); sx != nil {
			return b.op(ir.OpMul, sx, b.inv(y))
		}
		return nil
	case ir.OpShl:
		if sx := b.slope(d.Args[0]); sx != nil {
			return b.op(ir.OpShl, sx, b.inv(d.Args[1]))
		}
		return nil
	}
	return nil
}
