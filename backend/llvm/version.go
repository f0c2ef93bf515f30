package llvm

import (
	"math"
	"slices"

	gir "github.com/genesis-toolchain/genesis/ir"
	"github.com/llir/llvm/ir/enum"
	"github.com/llir/llvm/ir/value"
)

// Loop versioning (docs/backend-llvm.md, "Loop versioning"): an innermost
// loop counted by a parameter j (j < n or j <= n, signed or unsigned, or
// j != n stepping by 1; n fixed before the loop, j stepped by a positive
// constant) whose loads and stores have addresses affine in a parameter
// stepped by a constant (see affine) is emitted twice. Before it, one test computes the last
// iteration the count allows and checks every such access's whole range
// against memory; when it holds, the copy without those checks runs,
// otherwise the original, checked loop, entered from the start — so a
// fault happens at the same access of the same iteration, after the same
// output. The unchecked copy is the checked one minus checks the test
// proved could not fail: every other check (division, other accesses)
// stays.

// versionPlan is what the test before a versioned loop checks.
type versionPlan struct {
	counter           int // the index of the counting parameter
	limit             *gir.Value
	inclusive, signed bool
	step              int64 // the counter's step, > 0
	accesses          []rangedAccess
}

// rangedAccess is a load or store of size bytes at an affine address,
// which moves by step bytes an iteration.
type rangedAccess struct {
	in *gir.Instr
	affine
	step  int64 // coef × the parameter's step: the address's step
	size  int64
	store bool
}

// affine is an address base + coef × (parameter param) + off, where base,
// when not nil, is fixed before the loop, and param, when not −1, is a
// parameter of the loop stepped by a constant.
type affine struct {
	base      *gir.Value
	param     int
	coef, off int64
}

// maxAccessStep bounds the counter's step, the addresses' steps and the
// constants of affine addresses, so that the test's sums and products
// cannot wrap (|step| × last ≤ 2^20 × memory).
const maxAccessStep = 1 << 20

// planVersion returns the plan of loop in, or nil when it is not to be
// versioned.
func (fg *fnGen) planVersion(in *gir.Instr) *versionPlan {
	body := in.Regions[0]
	if len(body.Instrs) < 2 {
		return nil
	}
	inside := map[*gir.Value]bool{}
	ok := true
	var conts []*gir.Instr
	var markRegion func(r *gir.Region)
	markRegion = func(r *gir.Region) {
		for _, p := range r.Params {
			inside[p] = true
		}
		for _, x := range r.Instrs {
			for _, res := range x.Results {
				inside[res] = true
			}
			switch x.Op {
			case gir.OpLoop, gir.OpCall, gir.OpCallIndirect, gir.OpAsm:
				// Innermost loops only (each copy at most doubles); a call
				// could expand this very loop again (memlayout.Unrolled).
				ok = false
			case gir.OpContinue:
				if breakTarget(x) == in {
					conts = append(conts, x)
				}
			}
			for _, sub := range x.Regions {
				markRegion(sub)
			}
		}
	}
	markRegion(body)
	// One continue: every iteration steps the parameters alike.
	if !ok || len(conts) != 1 {
		return nil
	}
	cont := conts[0]
	// step of each parameter: its continue argument is param + constant.
	steps := make([]int64, len(body.Params))
	stepped := make([]bool, len(body.Params))
	for i, p := range body.Params {
		arg := cont.Args[i]
		if arg == p {
			stepped[i] = true
			continue
		}
		d := arg.Def
		if d == nil || (d.Op != gir.OpPtrAdd && d.Op != gir.OpAdd) || d.Args[0] != p {
			continue
		}
		if c := d.Args[1].Def; c != nil && c.Op == gir.OpConst {
			steps[i], stepped[i] = c.Lit.Int, true
		}
	}

	// The count: the loop goes on while x REL n, where x is the counter
	// j at the top of the body (if c { break ^in } before any access,
	// continue last) or its next value at the bottom (if c { continue
	// ^in }; break ^in, a rotated loop). Either way iteration t runs only
	// if j0 + step·t REL n.
	plan := &versionPlan{counter: -1}
	var rel gir.Op
	var x, n *gir.Value
	if body.Last() == cont {
		for _, h := range body.Instrs {
			if h.Op == gir.OpIf && onlyJump(h, gir.OpBreak, in) {
				rel, x, n = relation(h.Args[0], false)
				if rel == gir.OpNe && x != nil && !slices.Contains(body.Params, x) {
					x, n = n, x
				}
				break
			}
			if len(h.Regions) > 0 || h.Op == gir.OpLoad || h.Op == gir.OpStore || h.Op == gir.OpCopy {
				return nil // it would run once more, in the iteration that leaves
			}
		}
		for i, p := range body.Params {
			if x != nil && x == p {
				plan.counter = i
			}
		}
	} else {
		br, iff := body.Last(), body.Instrs[len(body.Instrs)-2]
		if br.Op != gir.OpBreak || breakTarget(br) != in || iff.Op != gir.OpIf || !onlyJump(iff, gir.OpContinue, in) {
			return nil
		}
		rel, x, n = relation(iff.Args[0], true)
		if rel == gir.OpNe && x != nil && !slices.Contains(cont.Args, x) {
			x, n = n, x
		}
		for i, p := range body.Params {
			if x != nil && x == cont.Args[i] && x != p {
				plan.counter = i
			}
		}
	}
	if plan.counter < 0 || inside[n] || n.Type.Size() != 8 || x.Type.Size() != 8 {
		return nil
	}
	switch rel {
	case gir.OpNe:
		// j != n with a step of 1 from j0 < n (the test requires it) runs
		// the iterations of j < n.
		if steps[plan.counter] != 1 {
			return nil
		}
	case gir.OpLtU:
	case gir.OpLeU:
		plan.inclusive = true
	case gir.OpLtS:
		plan.signed = true
	case gir.OpLeS:
		plan.signed, plan.inclusive = true, true
	default:
		return nil
	}
	plan.limit = n
	plan.step = steps[plan.counter]
	if !stepped[plan.counter] || plan.step <= 0 || plan.step > maxAccessStep {
		return nil
	}

	// The accesses whose ranges the test can bound.
	param := map[*gir.Value]int{}
	for i, p := range body.Params {
		param[p] = i
	}
	gir.Walk(body, func(x *gir.Instr) {
		var base *gir.Value
		var size int64
		switch x.Op {
		case gir.OpLoad:
			base, size = x.Args[0], x.Type.Size()
		case gir.OpStore:
			base, size = x.Args[1], x.Args[0].Type.Size()
		default:
			return
		}
		if size < 1 || size > 8 {
			return
		}
		af, ok := fg.affineOf(base, inside, param, stepped, 0)
		if !ok {
			return
		}
		af.off += x.Int
		if af.off < -maxAccessStep || af.off > maxAccessStep {
			return
		}
		a := rangedAccess{in: x, affine: af, size: size, store: x.Op == gir.OpStore}
		if af.param >= 0 {
			a.step = af.coef * steps[af.param] // both at most 2^20
			if a.step < -maxAccessStep || a.step > maxAccessStep {
				return
			}
		}
		if d := af.base; d != nil && af.param < 0 && d.Def != nil && d.Def.Op == gir.OpAddrOf && d.Def.Local != "" {
			return // a frame slot, checked (or not) as always
		}
		plan.accesses = append(plan.accesses, a)
	})
	if len(plan.accesses) == 0 {
		return nil
	}
	return plan
}

// versionTest emits, in the current block, the test that every access of
// plan stays in memory in every iteration the loop's count allows; args
// are the loop's initial values.
func (fg *fnGen) versionTest(plan *versionPlan, args []value.Value) value.Value {
	b := fg.cur
	memory := fg.machineValue(fg.g.memory)
	j0, n := args[plan.counter], fg.vals[plan.limit]
	k := plan.step
	var conds []value.Value
	// end: the loop goes on while j < end (signed or not); end = n + 1
	// for <=, where n must not be the largest value.
	end := n
	ltPred, lePred := enum.IPredULT, enum.IPredULE
	maxEnd := i64(-k) // j + k does not wrap while j < end ≤ 2^64 − k
	if plan.signed {
		ltPred, lePred = enum.IPredSLT, enum.IPredSLE
		maxEnd = i64(math.MaxInt64 - k + 1)
	}
	if plan.inclusive {
		top := i64(-1)
		if plan.signed {
			top = i64(math.MaxInt64)
		}
		conds = append(conds, b.NewICmp(enum.IPredNE, n, top))
		end = b.NewAdd(n, i64(1))
	}
	conds = append(conds, b.NewICmp(lePred, end, maxEnd), b.NewICmp(ltPred, j0, end))
	// last: the index of the last iteration the count allows, bounded by
	// memory so that step × last does not wrap.
	last := b.NewUDiv(b.NewSub(b.NewSub(end, i64(1)), j0), i64(k))
	conds = append(conds, b.NewICmp(enum.IPredULE, last, memory))
	hs := int64(fg.g.layout.HeapStart)
	for _, a := range plan.accesses {
		// The address in iteration 0, modulo 2^64 as the loop computes it.
		var a0 value.Value = i64(a.off)
		if a.param >= 0 {
			var p value.Value = args[a.param]
			if a.coef != 1 {
				p = b.NewMul(p, i64(a.coef))
			}
			a0 = b.NewAdd(p, a0)
		}
		if a.base != nil {
			a0 = b.NewAdd(fg.vals[a.base], a0)
		}
		hi := b.NewSub(memory, i64(a.size)) // memory holds at least 8 bytes
		lo := int64(0)
		if a.store {
			lo = hs
		}
		if lo != 0 {
			conds = append(conds, b.NewICmp(enum.IPredUGE, a0, i64(lo)))
		}
		conds = append(conds, b.NewICmp(enum.IPredULE, a0, hi))
		switch {
		case a.step > 0:
			// a0 ≤ memory and step × last ≤ step × memory: no wrap while
			// memory < 2^43 (maxAccessStep 2^20).
			span := b.NewMul(last, i64(a.step))
			conds = append(conds, b.NewICmp(enum.IPredULE, b.NewAdd(a0, span), hi))
		case a.step < 0:
			span := b.NewMul(last, i64(-a.step))
			conds = append(conds, b.NewICmp(enum.IPredULE, span, b.NewSub(a0, i64(lo))))
		}
	}
	// Memory small enough for the products above not to wrap.
	conds = append(conds, b.NewICmp(enum.IPredULE, memory, i64(maxVersionedMemory)))
	all := conds[0]
	for _, c := range conds[1:] {
		all = b.NewAnd(all, c)
	}
	return all
}

// maxVersionedMemory is the largest memory for which loops run their
// unchecked copies: step × last ≤ 2^20 × memory stays below 2^63.
const maxVersionedMemory = 1 << 42

// onlyJump reports whether if instruction iff holds only a jump of kind op
// (break or continue) to loop in, when its condition holds, and nothing
// otherwise.
func onlyJump(iff *gir.Instr, op gir.Op, in *gir.Instr) bool {
	if len(iff.Regions) != 2 || len(iff.Regions[1].Instrs) != 0 || len(iff.Regions[0].Instrs) != 1 || len(iff.Results) != 0 {
		return false
	}
	j := iff.Regions[0].Instrs[0]
	return j.Op == op && breakTarget(j) == in
}

// negated maps each comparison to the one true exactly when it is false.
var negated = map[gir.Op]gir.Op{
	gir.OpLtU: gir.OpGeU, gir.OpGeU: gir.OpLtU, gir.OpLeU: gir.OpGtU, gir.OpGtU: gir.OpLeU,
	gir.OpLtS: gir.OpGeS, gir.OpGeS: gir.OpLtS, gir.OpLeS: gir.OpGtS, gir.OpGtS: gir.OpLeS,
}

// swapped maps each comparison to the one of the swapped operands.
var swapped = map[gir.Op]gir.Op{
	gir.OpLtU: gir.OpGtU, gir.OpGtU: gir.OpLtU, gir.OpLeU: gir.OpGeU, gir.OpGeU: gir.OpLeU,
	gir.OpLtS: gir.OpGtS, gir.OpGtS: gir.OpLtS, gir.OpLeS: gir.OpGeS, gir.OpGeS: gir.OpLeS,
}

// relation reads the bool c (negated when holds is false) as x REL n with
// REL a less-than (signed or not, strict or not); x is nil when it is
// not such a comparison.
func relation(c *gir.Value, holds bool) (gir.Op, *gir.Value, *gir.Value) {
	d := c.Def
	for d != nil && d.Op == gir.OpNot && c.Type.Kind() == gir.KindBool {
		holds = !holds
		c = d.Args[0]
		d = c.Def
	}
	if d == nil || len(d.Args) != 2 {
		return 0, nil, nil
	}
	if (d.Op == gir.OpNe && holds) || (d.Op == gir.OpEq && !holds) {
		return gir.OpNe, d.Args[0], d.Args[1]
	}
	op, ok := d.Op, false
	if _, ok = negated[op]; !ok {
		return 0, nil, nil
	}
	if !holds {
		op = negated[op]
	}
	switch op {
	case gir.OpLtU, gir.OpLeU, gir.OpLtS, gir.OpLeS:
		return op, d.Args[0], d.Args[1]
	}
	return swapped[op], d.Args[1], d.Args[0]
}

// affineOf reads v as an affine address (see affine): sums, differences
// and products by constants (shifts included) of one value fixed before
// the loop, one parameter stepped by a constant and constants, all of 64
// bits, where arithmetic modulo 2^64 is that of the addresses. Constants
// stay within maxAccessStep.
func (fg *fnGen) affineOf(v *gir.Value, inside map[*gir.Value]bool, param map[*gir.Value]int, stepped []bool, depth int) (affine, bool) {
	none := affine{param: -1}
	if v.Type.Size() != 8 || depth > 16 {
		return none, false
	}
	if i, ok := param[v]; ok {
		if !stepped[i] {
			return none, false
		}
		return affine{param: i, coef: 1}, true
	}
	if !inside[v] {
		return affine{base: v, param: -1}, true
	}
	d := v.Def
	if d == nil {
		return none, false
	}
	small := func(c int64) bool { return c >= -maxAccessStep && c <= maxAccessStep }
	constOf := func(w *gir.Value) (int64, bool) {
		if w.Def != nil && w.Def.Op == gir.OpConst && small(w.Def.Lit.Int) {
			return w.Def.Lit.Int, true
		}
		return 0, false
	}
	if c, ok := constOf(v); ok {
		return affine{param: -1, off: c}, true
	}
	scale := func(a affine, k int64) (affine, bool) {
		a.coef *= k
		a.off *= k
		return a, a.base == nil && small(a.coef) && small(a.off)
	}
	switch d.Op {
	case gir.OpAdd, gir.OpPtrAdd, gir.OpSub:
		x, ok1 := fg.affineOf(d.Args[0], inside, param, stepped, depth+1)
		y, ok2 := fg.affineOf(d.Args[1], inside, param, stepped, depth+1)
		if !ok1 || !ok2 {
			return none, false
		}
		if d.Op == gir.OpSub {
			if y, ok2 = scale(y, -1); !ok2 {
				return none, false
			}
		}
		if x.base != nil && y.base != nil {
			return none, false
		}
		if x.base == nil {
			x.base = y.base
		}
		if x.param >= 0 && y.param >= 0 && x.param != y.param {
			return none, false
		}
		if x.param < 0 {
			x.param = y.param
		}
		x.coef += y.coef
		x.off += y.off
		if !small(x.coef) || !small(x.off) {
			return none, false
		}
		if x.coef == 0 {
			x.param = -1
		}
		return x, true
	case gir.OpIntToPtr, gir.OpPtrToInt:
		return fg.affineOf(d.Args[0], inside, param, stepped, depth+1)
	case gir.OpShl, gir.OpMul:
		k, ok := constOf(d.Args[1])
		if d.Op == gir.OpShl {
			if !ok || k < 0 || k > 20 {
				return none, false
			}
			k = 1 << k
		} else if !ok {
			return none, false
		}
		x, ok := fg.affineOf(d.Args[0], inside, param, stepped, depth+1)
		if !ok {
			return none, false
		}
		return scale(x, k)
	}
	return none, false
}
