package opt

import "github.com/genesis-toolchain/genesis/ir"

// deadcode removes what has no effect and no used result, by mark and
// sweep as in Go's SSA deadcode pass.
//
// An instruction is necessary when removing it could change what the
// program does: stores, copies, sets, loads (they may fault), calls,
// effects, asm blocks, division by a value that is not a nonzero constant
// (it may fault), the terminators that move control (break, continue,
// return, unreachable), every loop (it may not terminate), and an if,
// switch or block holding a necessary instruction. The rest is removable:
// the ops the table marks pure, get, builtins (which never perform effects
// and report failures as error values), division and remainder by a
// nonzero constant, and if, switch and block ops holding only removable
// instructions.
//
// The operands of necessary instructions are live. A live result of a
// removable instruction makes its operands live; a live result of a
// structured op makes live the operand each exit passes for it (and the
// condition of an if or switch); a live loop parameter makes live its
// initial value and the operand each continue passes for it.
//
// The sweep then deletes the results of structured ops and the loop
// parameters that are not live, with the operands that fed them, and the
// removable instructions without live results. Loop-carried values that
// only feed themselves (a counter nobody reads) go this way. Finally,
// slots whose address is never taken are dropped.
func deadcode(m *ir.Module) {
	forEachFunc(m, func(f *ir.Func) {
		eliminate(f)
		deadSlots(f)
	})
}

type eliminator struct {
	fl        *flow
	necessary map[*ir.Instr]bool
	live      map[*ir.Value]bool
	work      []*ir.Value
}

func eliminate(f *ir.Func) {
	d := &eliminator{fl: analyze(f), necessary: map[*ir.Instr]bool{}, live: map[*ir.Value]bool{}}
	d.findNecessary(f.Body)
	ir.Walk(f.Body, func(in *ir.Instr) {
		if !d.necessary[in] {
			return
		}
		switch in.Op {
		case ir.OpLoop, ir.OpYield, ir.OpBreak, ir.OpContinue:
			// Their operands are live when the parameter or result they
			// feed is.
		default:
			for _, a := range in.Args {
				d.mark(a)
			}
		}
	})
	for len(d.work) > 0 {
		v := d.work[len(d.work)-1]
		d.work = d.work[:len(d.work)-1]
		d.propagate(v)
	}
	d.sweepFlow(f.Body)
	d.sweep(f.Body)
}

// findNecessary records the necessary instructions of r and reports
// whether r holds one.
func (d *eliminator) findNecessary(r *ir.Region) bool {
	found := false
	for _, in := range r.Instrs {
		inner := false
		for _, sub := range in.Regions {
			if d.findNecessary(sub) {
				inner = true
			}
		}
		if inner || !removable(in) {
			d.necessary[in] = true
			found = true
		}
	}
	return found
}

// removable reports whether in, leaving aside its regions, may be removed
// when its results are unused.
func removable(in *ir.Instr) bool {
	switch in.Op {
	case ir.OpIf, ir.OpSwitch, ir.OpBlock, ir.OpYield, ir.OpGet, ir.OpBuiltin:
		return true
	case ir.OpDivS, ir.OpDivU, ir.OpRemS, ir.OpRemU:
		b, ok := constInt(in.Args[1])
		return ok && b != 0
	}
	return in.Info().Flags&ir.Pure != 0
}

func (d *eliminator) mark(v *ir.Value) {
	if !d.live[v] {
		d.live[v] = true
		d.work = append(d.work, v)
	}
}

// propagate marks what the live value v depends on.
func (d *eliminator) propagate(v *ir.Value) {
	if def := v.Def; def != nil {
		switch def.Op {
		case ir.OpIf, ir.OpSwitch, ir.OpBlock, ir.OpLoop:
			i := index(def.Results, v)
			for _, x := range d.fl.exits(def) {
				d.mark(x.Args[i])
			}
			if def.Op == ir.OpIf || def.Op == ir.OpSwitch {
				d.mark(def.Args[0])
			}
		default:
			for _, a := range def.Args {
				d.mark(a)
			}
		}
		return
	}
	r := d.fl.params[v]
	if r == nil {
		return // a function parameter
	}
	loop := r.Parent
	i := index(r.Params, v)
	d.mark(loop.Args[i])
	for _, c := range d.fl.conts[loop] {
		d.mark(c.Args[i])
	}
}

func index(vs []*ir.Value, v *ir.Value) int {
	for i, x := range vs {
		if x == v {
			return i
		}
	}
	return -1
}

// sweepFlow deletes the results and loop parameters that are not live.
func (d *eliminator) sweepFlow(r *ir.Region) {
	ir.Walk(r, func(op *ir.Instr) {
		switch op.Op {
		case ir.OpIf, ir.OpSwitch, ir.OpBlock, ir.OpLoop:
		default:
			return
		}
		for i := len(op.Results) - 1; i >= 0; i-- {
			if !d.live[op.Results[i]] {
				d.fl.removeResult(op, i)
			}
		}
		if op.Op == ir.OpLoop {
			ps := op.Regions[0].Params
			for i := len(ps) - 1; i >= 0; i-- {
				if !d.live[ps[i]] {
					d.fl.removeParam(op, i)
				}
			}
		}
	})
}

// sweep deletes the removable instructions without live results.
func (d *eliminator) sweep(r *ir.Region) {
	keep := r.Instrs[:0]
	for _, in := range r.Instrs {
		if d.necessary[in] || in.Op.IsTerminator() || d.anyLive(in.Results) {
			for _, sub := range in.Regions {
				d.sweep(sub)
			}
			keep = append(keep, in)
		}
	}
	clear(r.Instrs[len(keep):])
	r.SetInstrs(keep)
}

func (d *eliminator) anyLive(vs []*ir.Value) bool {
	for _, v := range vs {
		if d.live[v] {
			return true
		}
	}
	return false
}

// deadSlots removes the slots of f whose address is never taken.
func deadSlots(f *ir.Func) {
	used := map[string]bool{}
	ir.Walk(f.Body, func(in *ir.Instr) {
		if in.Op == ir.OpAddrOf && in.Local != "" {
			used[in.Local] = true
		}
	})
	keep := f.Locals[:0]
	for _, l := range f.Locals {
		if l.Kind == ir.Var || used[l.Name] {
			keep = append(keep, l)
		}
	}
	f.Locals = keep
}
