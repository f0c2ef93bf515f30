package opt

import (
	"strconv"

	"github.com/genesis-toolchain/genesis/ir"
)

// This file holds the analyses and rewrites several passes share: the
// control-flow edges of structured ops, use counts, the region that
// defines a value, splicing a region into its parent, and fresh names.

// flow records, for one function, the edges of its structured control
// flow: which terminators leave each loop, block, if and switch, and
// which region defines each region parameter.
type flow struct {
	// ops maps a label to the loop or block that declares it.
	ops map[string]*ir.Instr
	// breaks and conts map a loop or block to the break and continue
	// instructions that target it, in program order.
	breaks, conts map[*ir.Instr][]*ir.Instr
	// params maps a region parameter to its region.
	params map[*ir.Value]*ir.Region
}

// analyze computes the flow of f.
func analyze(f *ir.Func) *flow {
	fl := &flow{
		ops:    map[string]*ir.Instr{},
		breaks: map[*ir.Instr][]*ir.Instr{},
		conts:  map[*ir.Instr][]*ir.Instr{},
		params: map[*ir.Value]*ir.Region{},
	}
	var walk func(r *ir.Region)
	walk = func(r *ir.Region) {
		for _, p := range r.Params {
			fl.params[p] = r
		}
		for _, in := range r.Instrs {
			switch in.Op {
			case ir.OpLoop, ir.OpBlock:
				fl.ops[in.Label] = in
			case ir.OpBreak:
				t := fl.ops[in.Label]
				fl.breaks[t] = append(fl.breaks[t], in)
			case ir.OpContinue:
				t := fl.ops[in.Label]
				fl.conts[t] = append(fl.conts[t], in)
			}
			for _, sub := range in.Regions {
				walk(sub)
			}
		}
	}
	walk(f.Body)
	return fl
}

// exits returns the terminators that leave op with its results: the
// yields ending its regions (if, switch, block) and the breaks targeting
// it (block, loop). Each has one operand per result of op.
func (fl *flow) exits(op *ir.Instr) []*ir.Instr {
	var out []*ir.Instr
	if op.Op != ir.OpLoop {
		for _, r := range op.Regions {
			if last := r.Last(); last != nil && last.Op == ir.OpYield {
				out = append(out, last)
			}
		}
	}
	return append(out, fl.breaks[op]...)
}

// removeResult deletes result i of the structured op and operand i of
// each of its exits. The result must be unused or already replaced.
func (fl *flow) removeResult(op *ir.Instr, i int) {
	for _, x := range fl.exits(op) {
		x.Args = deleteAt(x.Args, i)
	}
	op.Results = deleteAt(op.Results, i)
}

// removeParam deletes loop parameter i of loop op, its initial value and
// operand i of every continue targeting it. The parameter must be unused
// or already replaced.
func (fl *flow) removeParam(op *ir.Instr, i int) {
	body := op.Regions[0]
	delete(fl.params, body.Params[i])
	body.Params = deleteAt(body.Params, i)
	op.Args = deleteAt(op.Args, i)
	for _, c := range fl.conts[op] {
		c.Args = deleteAt(c.Args, i)
	}
}

// region returns the region that defines v, or nil for a parameter of
// the function (defined outside every region but the body).
func (fl *flow) region(v *ir.Value) *ir.Region {
	if v.Def != nil {
		return v.Def.Parent
	}
	return fl.params[v]
}

// definedIn reports whether v is defined inside one of op's regions, at
// any depth, so that it is not visible after op.
func (fl *flow) definedIn(v *ir.Value, op *ir.Instr) bool {
	for r := fl.region(v); r != nil && r.Parent != nil; r = r.Parent.Parent {
		if r.Parent == op {
			return true
		}
	}
	return false
}

func deleteAt[T any](s []T, i int) []T {
	return append(s[:i:i], s[i+1:]...)
}

// countUses returns how many operands of f's instructions name each
// value.
func countUses(f *ir.Func) map[*ir.Value]int {
	uses := map[*ir.Value]int{}
	ir.Walk(f.Body, func(in *ir.Instr) {
		for _, a := range in.Args {
			uses[a]++
		}
	})
	return uses
}

// constInt returns the integer, bool or ptr constant v, if v is one.
func constInt(v *ir.Value) (int64, bool) {
	d := v.Def
	if d == nil || d.Op != ir.OpConst || d.Lit.Kind != ir.LitInt || d.Type == ir.Dyn {
		return 0, false
	}
	return d.Lit.Int, true
}

// namer hands out names not yet used in a function, for values, labels
// or locals (each kind has its own namer).
type namer struct {
	used map[string]bool
	// next is, per base, an N such that base.1 … base.N−1 are all used:
	// where fresh starts looking, so that handing out base.1 … base.n is
	// linear rather than quadratic in n. Names only ever become used,
	// but by remove, which forgets it.
	next map[string]int
}

func newNamer() namer { return namer{used: map[string]bool{}} }

// add marks name used.
func (n *namer) add(name string) { n.used[name] = true }

// remove marks name unused.
func (n *namer) remove(name string) {
	delete(n.used, name)
	n.next = nil
}

// valueNames returns a namer holding the names of f's values.
func valueNames(f *ir.Func) namer {
	n := newNamer()
	for _, p := range f.Params {
		n.add(p.Name)
	}
	var walk func(r *ir.Region)
	walk = func(r *ir.Region) {
		for _, p := range r.Params {
			n.add(p.Name)
		}
		for _, in := range r.Instrs {
			for _, x := range in.Results {
				n.add(x.Name)
			}
			for _, sub := range in.Regions {
				walk(sub)
			}
		}
	}
	walk(f.Body)
	return n
}

// labelNames returns a namer holding the labels of f.
func labelNames(f *ir.Func) namer {
	n := newNamer()
	ir.Walk(f.Body, func(in *ir.Instr) {
		if in.Op == ir.OpLoop || in.Op == ir.OpBlock {
			n.add(in.Label)
		}
	})
	return n
}

// fresh returns base if it is unused, else base.N for the smallest N ≥ 1
// that is unused, and marks it used. An empty base stays empty (an
// unnamed value).
func (n *namer) fresh(base string) string {
	if base == "" {
		return ""
	}
	if !n.used[base] {
		n.used[base] = true
		return base
	}
	if n.next == nil {
		n.next = map[string]int{}
	}
	i := max(n.next[base], 1)
	name := base + "." + strconv.Itoa(i)
	for n.used[name] {
		i++
		name = base + "." + strconv.Itoa(i)
	}
	n.next[base] = i + 1
	n.used[name] = true
	return name
}
