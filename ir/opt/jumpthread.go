package opt

import "github.com/genesis-toolchain/genesis/ir"

// jumpthread threads the branches of a bool made by an if straight to
// the if that tests it. The frontends build a && b and a || b as an if
// with a bool result,
//
//	%r = if %a -> bool {          if %a {
//	  A                             A
//	  yield %b                      if %b { T } else { E }
//	} else {               ⇒      } else {
//	  yield false                   E
//	}                             }
//	if %r { T } else { E }
//
// and the Forge backend materializes %r (LI, the test, a jump, LI, a
// jump: five to six ticks) before testing it again, where the threaded
// form costs one conditional jump per operand. An arm of the producer
// that yields a constant goes straight to the consumer's arm it selects;
// one that yields a value %b tests it there. The consumer's arms thus
// appear more than once (E twice for &&, T twice for ||): the first
// place takes the original, the others a copy, which is made only of a
// region that can be copied (no effect, whose step identity must stay
// unique, no call, asm, loop or block, at most maxThreadCopy
// instructions). Each path runs the same instructions as before, in the
// same order, less the bool's materialization, so faults, effects and
// memory operations are unchanged.
//
// The producer must have one result, the bool, used once, by the
// consumer or by a chain of nots (each used once) that the consumer
// tests. Between the two may stand those nots, which go, and pure
// instructions that cannot fault, which move before the producer
// (looprotate leaves a not there, and frontends compute operands of the
// consumer's arms there); anything else keeps the two apart. The producer then
// takes over the consumer's results. A consumer is tried again after
// each threading, so a chain a && b && c (an if whose bool an if tests,
// tested in turn) is threaded all the way.
func jumpthread(m *ir.Module) {
	forEachFunc(m, func(f *ir.Func) {
		t := &threader{f: f, names: valueNames(f), uses: countUses(f)}
		t.region(f.Body)
	})
}

// maxThreadCopy bounds the instructions (nested ones included) of a
// consumer's arm that jumpthread copies.
const maxThreadCopy = 12

type threader struct {
	f     *ir.Func
	names namer
	uses  map[*ir.Value]int
}

// region threads the ifs of r, those of nested regions first.
func (t *threader) region(r *ir.Region) {
	for _, in := range r.Instrs {
		for _, sub := range in.Regions {
			t.region(sub)
		}
	}
	for i := len(r.Instrs) - 1; i > 0; i-- {
		for {
			j := t.thread(r, i)
			if j < 0 {
				break
			}
			i = j // the producer, which may be a consumer in turn
		}
	}
}

// thread threads the if at r.Instrs[i] with the producer of the bool it
// tests, if they qualify, and returns the producer's index (where the
// threaded if now stands), or -1.
func (t *threader) thread(r *ir.Region, i int) int {
	cons := r.Instrs[i]
	if cons.Op != ir.OpIf || len(cons.Args) != 1 {
		return -1
	}
	// Back from the consumer to the producer: the nots of the chain
	// (each used once, by the next) go; pure instructions that cannot
	// fault move before the producer (none uses the bool or a not of
	// it: each of those has its one use in the chain).
	c := cons.Args[0]
	swap := false
	var moved []*ir.Instr
	var dropped []int
	j := i - 1
	for ; j >= 0; j-- {
		in := r.Instrs[j]
		if len(in.Results) == 1 && in.Results[0] == c {
			if in.Op != ir.OpNot || t.uses[c] != 1 {
				break
			}
			c = in.Args[0]
			swap = !swap
			continue
		}
		if classify(in) != movable {
			return -1
		}
		if t.uses[in.Results[0]] == 0 {
			// Unused (looprotate's not of the test it inverted):
			// dropped, so that it does not count as a use of the bool.
			for _, a := range in.Args {
				t.uses[a]--
			}
			dropped = append(dropped, j)
			continue
		}
		moved = append(moved, in)
	}
	prod := (*ir.Instr)(nil)
	if j >= 0 {
		prod = r.Instrs[j]
	}
	if prod == nil || prod.Op != ir.OpIf || len(prod.Results) != 1 || prod.Results[0] != c || c.Type != ir.Bool || t.uses[c] != 1 {
		for _, k := range dropped { // not threaded: they stay
			for _, a := range r.Instrs[k].Args {
				t.uses[a]++
			}
		}
		return -1
	}
	then, els := cons.Regions[0], cons.Regions[1]
	if swap {
		then, els = els, then
	}
	// Where each of the consumer's arms goes: nThen and nElse places.
	nThen, nElse := 0, 0
	for _, arm := range prod.Regions {
		last := arm.Last()
		if last == nil || last.Op != ir.OpYield {
			continue // the arm leaves: nothing of it reaches the consumer
		}
		if k, ok := constInt(last.Args[0]); ok {
			if k != 0 {
				nThen++
			} else {
				nElse++
			}
			continue
		}
		nThen++
		nElse++
	}
	if nThen > 1 && !copyableArm(then) || nElse > 1 && !copyableArm(els) {
		return -1
	}

	// The consumer's arms, the first time the originals, then copies.
	usedThen, usedElse := false, false
	take := func(arm *ir.Region, used *bool) []*ir.Instr {
		if !*used {
			*used = true
			return arm.Instrs
		}
		return t.clone(arm.Instrs, map[*ir.Value]*ir.Value{})
	}
	for _, arm := range prod.Regions {
		last := arm.Last()
		if last == nil || last.Op != ir.OpYield {
			continue
		}
		ins := arm.Instrs[:len(arm.Instrs)-1]
		b := last.Args[0]
		if k, ok := constInt(b); ok {
			t.uses[b]--
			if k != 0 {
				ins = append(ins, take(then, &usedThen)...)
			} else {
				ins = append(ins, take(els, &usedElse)...)
			}
			arm.SetInstrs(ins)
			continue
		}
		// if %b { T } else { E }, yielding its results.
		nested := &ir.Instr{Op: ir.OpIf, Args: []*ir.Value{b}, Pos: cons.Pos, Regions: []*ir.Region{{}, {}}}
		nested.Regions[0].SetInstrs(take(then, &usedThen))
		nested.Regions[1].SetInstrs(take(els, &usedElse))
		for _, sub := range nested.Regions {
			sub.Parent = nested
		}
		if not := t.flip(nested); not != nil {
			ins = append(ins, not)
		}
		ins = append(ins, nested)
		at := len(ins) - 1
		if len(cons.Results) > 0 {
			ys := make([]*ir.Value, len(cons.Results))
			for k, v := range cons.Results {
				ys[k] = nested.AddResult(t.f, v.Type)
				ys[k].Name = t.names.fresh(v.Name)
				t.uses[ys[k]] = 1
			}
			ins = append(ins, &ir.Instr{Op: ir.OpYield, Args: ys, Pos: last.Pos})
		}
		arm.SetInstrs(ins)
		// %b may be the bool of an if of A (a && (b || c)).
		for at >= 0 {
			at = t.thread(arm, at)
		}
	}
	// The producer takes over the consumer's results; the bool and its
	// nots go.
	prod.Results = cons.Results
	for _, v := range prod.Results {
		v.Def = prod
	}
	rest := r.Instrs[i+1:]
	ins := r.Instrs[:j]
	for k := len(moved) - 1; k >= 0; k-- {
		ins = append(ins, moved[k])
	}
	if not := t.flip(prod); not != nil {
		ins = append(ins, not)
	}
	// In place: what is written stands at or before the consumer's old
	// index, below rest.
	r.SetInstrs(append(append(ins, prod), rest...))
	return len(ins)
}

// flip turns an if without results whose then arm is empty and whose
// else arm is not, if %b {} else { E }, into if not %b { E }, as
// simplify writes it (the backends lower an if by its then arm), and
// returns the not to place before it, or nil when there is none to
// place (%b is itself a not, whose operand the if then tests).
func (t *threader) flip(in *ir.Instr) *ir.Instr {
	if len(in.Results) > 0 || !onlyConsts(in.Regions[0]) || onlyConsts(in.Regions[1]) {
		return nil
	}
	// The constants of an arm are seen only in it: an arm of only
	// constants (the one that yielded the bool) is empty.
	in.Regions[0].SetInstrs(nil)
	in.Regions[0], in.Regions[1] = in.Regions[1], in.Regions[0]
	b := in.Args[0]
	t.uses[b]--
	if d := b.Def; d != nil && d.Op == ir.OpNot {
		in.Args[0] = d.Args[0]
		t.uses[d.Args[0]]++
		return nil
	}
	not := &ir.Instr{Op: ir.OpNot, Args: []*ir.Value{b}, Pos: in.Pos}
	in.Args[0] = not.AddResult(t.f, ir.Bool)
	t.uses[b]++
	t.uses[in.Args[0]] = 1
	return not
}

// copyableArm reports whether the instructions of arm can be copied:
// no effect, call, asm, loop or block, and at most maxThreadCopy
// instructions in all.
func copyableArm(arm *ir.Region) bool {
	n := 0
	ok := true
	ir.Walk(arm, func(in *ir.Instr) {
		n++
		switch {
		case in.Op.IsEffect(), in.Op == ir.OpAsm, in.Op == ir.OpLoop, in.Op == ir.OpBlock,
			in.Op == ir.OpCall, in.Op == ir.OpCallIndirect:
			ok = false
		}
	})
	return ok && n <= maxThreadCopy
}

// clone returns copies of ins with their operands mapped through vals,
// to which it adds each original result and its copy; the copies' uses
// are counted.
func (t *threader) clone(ins []*ir.Instr, vals map[*ir.Value]*ir.Value) []*ir.Instr {
	out := cloneInstrs(t.f, &t.names, ins, vals)
	ir.Walk(&ir.Region{Instrs: out}, func(in *ir.Instr) {
		for _, a := range in.Args {
			t.uses[a]++
		}
	})
	return out
}

// cloneInstrs returns copies of ins (which hold no labelled op and no
// region parameters) with their operands mapped through vals, to which
// it adds each original result and its copy, named afresh by names.
func cloneInstrs(f *ir.Func, names *namer, ins []*ir.Instr, vals map[*ir.Value]*ir.Value) []*ir.Instr {
	out := make([]*ir.Instr, len(ins))
	for i, in := range ins {
		c := *in
		c.Args = make([]*ir.Value, len(in.Args))
		for j, a := range in.Args {
			c.Args[j] = substOf(vals, a)
		}
		c.Results = nil
		for _, v := range in.Results {
			w := c.AddResult(f, v.Type)
			w.Name = names.fresh(v.Name)
			vals[v] = w
		}
		c.Cases = append([][]int64(nil), in.Cases...)
		c.Regs = append([]int(nil), in.Regs...)
		c.Regions = make([]*ir.Region, len(in.Regions))
		for j, r := range in.Regions {
			nr := &ir.Region{Parent: &c}
			nr.SetInstrs(cloneInstrs(f, names, r.Instrs, vals))
			c.Regions[j] = nr
		}
		out[i] = &c
	}
	return out
}

// onlyConsts reports whether r holds nothing but constants (or nothing).
func onlyConsts(r *ir.Region) bool {
	for _, in := range r.Instrs {
		if in.Op != ir.OpConst {
			return false
		}
	}
	return true
}
