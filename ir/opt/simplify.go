package opt

import (
	"slices"

	"github.com/genesis-toolchain/genesis/ir"
)

// simplify is CFG simplification for the structured IR. Working inside
// out (an op's regions before the op), it:
//
//   - turns a loop that no continue targets into a block: its body runs
//     once, with the parameters bound to the initial values;
//   - turns a break that ends a block's own region and targets that block
//     into a yield, and drops a break without values to a block without
//     results when falling off instead reaches the block's end as well;
//   - splices a block that no break targets into its parent region: its
//     instructions run in place and its yield gives its results;
//   - splices one arm of an if, or the default of a switch, whose regions
//     are all identical (the same instructions on corresponding values;
//     never when they hold effects, whose step identities differ); an if
//     with two empty arms thus disappears;
//   - turns if c {} else { B } into if not c { B } (the printed form
//     omits an empty else), reusing x when c is not x;
//   - drops a trailing empty yield of a region whose op has no results;
//   - removes the instructions after one that never completes (a
//     terminator, an if whose arms all leave the enclosing region, a loop
//     that nothing breaks out of), ending the region with unreachable when
//     it must end in a terminator.
func simplify(m *ir.Module) {
	forEachFunc(m, func(f *ir.Func) {
		s := &simplifier{f: f, fl: analyze(f), subst: map[*ir.Value]*ir.Value{}}
		s.region(f.Body)
		ir.ReplaceUses(f, s.subst)
	})
}

type simplifier struct {
	f     *ir.Func
	fl    *flow
	subst map[*ir.Value]*ir.Value
}

// region simplifies r in one pass: it builds r's new instruction list as
// it goes, so that splicing a block (an inlined call) or inserting a not
// costs the instructions moved, not the region rebuilt — many inlined
// calls in one region stay linear. Until the pass ends r.Instrs is the
// old list, whose last instruction is the one tailBreak asks about.
func (s *simplifier) region(r *ir.Region) {
	ins := r.Instrs
	out := make([]*ir.Instr, 0, len(ins))
	for i := 0; i < len(ins); i++ {
		in := ins[i]
		for j, a := range in.Args {
			in.Args[j] = ir.Resolve(s.subst, a)
		}
		for _, sub := range in.Regions {
			s.region(sub)
		}
		if in.Op == ir.OpBreak && s.tailBreak(in) {
			t := s.fl.ops[in.Label]
			s.fl.breaks[t] = slices.DeleteFunc(s.fl.breaks[t], func(x *ir.Instr) bool { return x == in })
			break
		}
		body, not := s.instr(in)
		if body != nil {
			// The spliced instructions are simplified already.
			var ends bool
			if out, ends = s.splice(in, body, r, out); ends {
				s.forget(ins[i+1:])
				break
			}
			continue
		}
		if not != nil {
			not.Parent = r
			out = append(out, not)
		}
		out = append(out, in)
		if !s.completes(in) && i < len(ins)-1 {
			s.forget(ins[i+1:])
			if !in.Op.IsTerminator() && s.needsTerminator(r) {
				out = append(out, &ir.Instr{Op: ir.OpUnreachable, Pos: in.Pos})
			}
			break
		}
	}
	r.SetInstrs(out)
	if p := r.Parent; p != nil && len(p.Results) == 0 && p.Op != ir.OpLoop {
		if last := r.Last(); last != nil && last.Op == ir.OpYield && len(last.Args) == 0 {
			r.SetInstrs(r.Instrs[:len(r.Instrs)-1])
		}
	}
}

// instr simplifies in. It returns the region to splice in in's place, if
// any, else the not instruction to insert before in, if any.
func (s *simplifier) instr(in *ir.Instr) (splice *ir.Region, not *ir.Instr) {
	switch in.Op {
	case ir.OpLoop:
		if len(s.fl.conts[in]) > 0 {
			return nil, nil
		}
		body := in.Regions[0]
		for i, p := range body.Params {
			s.subst[p] = in.Args[i]
			delete(s.fl.params, p)
		}
		body.Params, in.Args, in.Op = nil, nil, ir.OpBlock
		if n := len(body.Instrs); len(in.Results) == 0 && n > 1 &&
			body.Instrs[n-1].Op == ir.OpUnreachable && !s.completes(body.Instrs[n-2]) {
			body.SetInstrs(body.Instrs[:n-1]) // a block, unlike a loop, may fall off its end
		}
		s.region(body) // again: breaks to a block may now be dropped
		ir.Walk(body, func(x *ir.Instr) {
			for j, a := range x.Args {
				x.Args[j] = ir.Resolve(s.subst, a)
			}
		})
		fallthrough
	case ir.OpBlock:
		body := in.Regions[0]
		if last := body.Last(); last != nil && last.Op == ir.OpBreak && last.Label == in.Label {
			last.Op, last.Label = ir.OpYield, ""
			s.fl.breaks[in] = slices.DeleteFunc(s.fl.breaks[in], func(x *ir.Instr) bool { return x == last })
		}
		if len(s.fl.breaks[in]) == 0 {
			return body, nil
		}
	case ir.OpIf, ir.OpSwitch:
		same := true
		for _, r := range in.Regions[1:] {
			if !sameRegion(in.Regions[0], r) {
				same = false
				break
			}
		}
		if same {
			return in.Regions[len(in.Regions)-1], nil
		}
		if in.Op == ir.OpIf && len(in.Results) == 0 && empty(in.Regions[0]) && !empty(in.Regions[1]) {
			return nil, s.negate(in)
		}
	}
	return nil, nil
}

// splice appends the instructions of body, a region of in, to out, the
// new instructions of region r, in in's place: a yield ending body gives
// in's results and is dropped. It returns the new out, and whether body
// ends in another terminator, so that the rest of r is unreachable.
func (s *simplifier) splice(in *ir.Instr, body, r *ir.Region, out []*ir.Instr) ([]*ir.Instr, bool) {
	moved := body.Instrs
	ends := false
	if last := body.Last(); last != nil && last.Op.IsTerminator() {
		if last.Op == ir.OpYield {
			for i, res := range in.Results {
				s.subst[res] = last.Args[i]
			}
			moved = moved[:len(moved)-1]
		} else {
			ends = true
		}
	}
	for _, x := range moved {
		x.Parent = r
	}
	return append(out, moved...), ends
}

// forget removes the breaks and continues among ins, at any depth, from
// the flow, as ins are being deleted: one filtering of each target's
// list, however many of its branches go.
func (s *simplifier) forget(ins []*ir.Instr) {
	gone := map[*ir.Instr]bool{}
	var targets []*ir.Instr
	for _, x := range ins {
		ir.Walk(&ir.Region{Instrs: []*ir.Instr{x}}, func(in *ir.Instr) {
			if in.Op != ir.OpBreak && in.Op != ir.OpContinue {
				return
			}
			gone[in] = true
			targets = append(targets, s.fl.ops[in.Label])
		})
	}
	if len(gone) == 0 {
		return
	}
	drop := func(x *ir.Instr) bool { return gone[x] }
	done := map[*ir.Instr]bool{}
	for _, t := range targets {
		if !done[t] {
			done[t] = true
			s.fl.breaks[t] = slices.DeleteFunc(s.fl.breaks[t], drop)
			s.fl.conts[t] = slices.DeleteFunc(s.fl.conts[t], drop)
		}
	}
}

// tailBreak reports whether br, a break, can be dropped because falling
// off its region leads to the same place: it passes no values, targets a
// block without results, and is the last instruction of a region whose
// owner is the block, or an if, switch or block without results that is
// in turn the last instruction of such a region.
func (s *simplifier) tailBreak(br *ir.Instr) bool {
	t := s.fl.ops[br.Label]
	if t == nil || t.Op != ir.OpBlock || len(t.Results) > 0 || len(br.Args) > 0 {
		return false
	}
	for x := br; ; {
		r := x.Parent
		if r.Last() != x || r.Parent == nil {
			return false
		}
		o := r.Parent
		if o == t {
			return true
		}
		if o.Op == ir.OpLoop || len(o.Results) > 0 {
			return false
		}
		x = o
	}
}

// negate swaps the arms of if in and negates its condition. It returns
// the not instruction to insert before in, or nil when the condition was
// a not already and its operand is used instead.
func (s *simplifier) negate(in *ir.Instr) *ir.Instr {
	in.Regions[0], in.Regions[1] = in.Regions[1], in.Regions[0]
	c := ir.Resolve(s.subst, in.Args[0])
	if d := c.Def; d != nil && d.Op == ir.OpNot {
		in.Args[0] = d.Args[0]
		return nil
	}
	not := &ir.Instr{Op: ir.OpNot, Args: []*ir.Value{c}, Pos: in.Pos}
	in.Args[0] = not.AddResult(s.f, ir.Bool)
	return not
}

// empty reports whether r does nothing: no instructions, or only an empty
// yield.
func empty(r *ir.Region) bool {
	return len(r.Instrs) == 0 || len(r.Instrs) == 1 && r.Instrs[0].Op == ir.OpYield && len(r.Instrs[0].Args) == 0
}

// completes reports whether control can reach the instruction after in.
func (s *simplifier) completes(in *ir.Instr) bool {
	switch {
	case in.Op.IsTerminator():
		return false
	case in.Op == ir.OpIf || in.Op == ir.OpSwitch:
		for _, r := range in.Regions {
			if s.fallsThrough(r) {
				return true
			}
		}
		return false
	case in.Op == ir.OpBlock:
		return s.fallsThrough(in.Regions[0]) || len(s.fl.breaks[in]) > 0
	case in.Op == ir.OpLoop:
		return len(s.fl.breaks[in]) > 0
	}
	return true
}

// fallsThrough reports whether control can reach the end of r, or a yield
// ending it.
func (s *simplifier) fallsThrough(r *ir.Region) bool {
	last := r.Last()
	return last == nil || last.Op == ir.OpYield || s.completes(last)
}

// needsTerminator reports whether r must end in a terminator: a loop body,
// a region of an op with results, or the body of a function with
// results.
func (s *simplifier) needsTerminator(r *ir.Region) bool {
	if r.Parent == nil {
		return len(s.f.Results) > 0
	}
	return r.Parent.Op == ir.OpLoop || len(r.Parent.Results) > 0
}

// sameRegion reports whether regions a and b do the same thing: the same
// instructions, with the same attributes, on values that are the same or
// defined at corresponding places. Positions are ignored, so regions
// holding effects (whose step identity includes the position) never
// compare equal.
func sameRegion(a, b *ir.Region) bool {
	c := &comparer{vals: map[*ir.Value]*ir.Value{}, labels: map[string]string{}}
	return c.region(a, b)
}

type comparer struct {
	vals   map[*ir.Value]*ir.Value // a value of a → its counterpart in b
	labels map[string]string
}

func (c *comparer) region(a, b *ir.Region) bool {
	if len(a.Instrs) != len(b.Instrs) || len(a.Params) != len(b.Params) {
		return false
	}
	for i, p := range a.Params {
		if p.Type != b.Params[i].Type {
			return false
		}
		c.vals[p] = b.Params[i]
	}
	for i, x := range a.Instrs {
		if !c.instr(x, b.Instrs[i]) {
			return false
		}
	}
	return true
}

func (c *comparer) value(x, y *ir.Value) bool {
	if m, ok := c.vals[x]; ok {
		return m == y
	}
	return x == y
}

func (c *comparer) instr(x, y *ir.Instr) bool {
	if x.Op != y.Op || x.Op.IsEffect() || x.Type != y.Type || x.Lit != y.Lit || x.Int != y.Int ||
		x.Sym != y.Sym || x.Local != y.Local || x.Str != y.Str || x.Iters != y.Iters ||
		!slices.Equal(x.Regs, y.Regs) || !slices.EqualFunc(x.Cases, y.Cases, slices.Equal) ||
		len(x.Args) != len(y.Args) || len(x.Results) != len(y.Results) || len(x.Regions) != len(y.Regions) {
		return false
	}
	switch x.Op {
	case ir.OpLoop, ir.OpBlock:
		c.labels[x.Label] = y.Label
	case ir.OpBreak, ir.OpContinue:
		if l, ok := c.labels[x.Label]; ok && l != y.Label || !ok && x.Label != y.Label {
			return false
		}
	}
	for i, a := range x.Args {
		if !c.value(a, y.Args[i]) {
			return false
		}
	}
	for i, r := range x.Results {
		if r.Type != y.Results[i].Type {
			return false
		}
		c.vals[r] = y.Results[i]
	}
	for i, r := range x.Regions {
		if !c.region(r, y.Regions[i]) {
			return false
		}
	}
	return true
}
