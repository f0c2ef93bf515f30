package opt

import "github.com/genesis-toolchain/genesis/ir"

// copyprop removes the copies of structured SSA: the loop parameters and
// region results that are only another name for a value already visible.
// It is the structured form of removing trivial φ-functions:
//
//   - a loop parameter whose initial value is v and that every continue
//     passes either v or the parameter itself is v;
//   - a result of an if, switch, block or loop that every exit (the
//     yields ending its regions, the breaks to it) passes the same value
//     v, defined outside the op, is v. A result without any exit (all
//     arms return) is left alone.
//
// Each such parameter or result is deleted, together with the operands
// that fed it, and its uses are rewritten to v. Removing one can make
// another trivial, so the pass repeats until nothing changes.
func copyprop(m *ir.Module) {
	forEachFunc(m, propagate)
}

func propagate(f *ir.Func) {
	fl := analyze(f)
	subst := map[*ir.Value]*ir.Value{}
	var ops []*ir.Instr
	ir.Walk(f.Body, func(in *ir.Instr) {
		switch in.Op {
		case ir.OpIf, ir.OpSwitch, ir.OpBlock, ir.OpLoop:
			ops = append(ops, in)
		}
	})
	find := func(v *ir.Value) *ir.Value { return ir.Resolve(subst, v) }
	for changed := true; changed; {
		changed = false
		for _, op := range ops {
			if op.Op == ir.OpLoop {
				body := op.Regions[0]
				for i := len(body.Params) - 1; i >= 0; i-- {
					p, v := body.Params[i], find(op.Args[i])
					trivial := true
					for _, c := range fl.conts[op] {
						if a := find(c.Args[i]); a != p && a != v {
							trivial = false
							break
						}
					}
					if trivial {
						subst[p] = v
						fl.removeParam(op, i)
						changed = true
					}
				}
			}
			for i := len(op.Results) - 1; i >= 0; i-- {
				exits := fl.exits(op)
				if len(exits) == 0 {
					break
				}
				v := find(exits[0].Args[i])
				same := !fl.definedIn(v, op)
				for _, x := range exits[1:] {
					if find(x.Args[i]) != v {
						same = false
						break
					}
				}
				if same {
					subst[op.Results[i]] = v
					fl.removeResult(op, i)
					changed = true
				}
			}
		}
	}
	ir.ReplaceUses(f, subst)
}
