package llvm

import (
	"math"

	gir "github.com/genesis-toolchain/genesis/ir"
	"github.com/llir/llvm/ir/enum"
	"github.com/llir/llvm/ir/value"
)

// Loop versioning (docs/backend-llvm.md, "Loop versioning"): an innermost
// loop counted by a parameter j (j < n or j <= n, signed or unsigned, n
// fixed before the loop, j stepped by a positive constant) whose loads
// and stores go through pointers stepped by constants (or fixed before
// the loop) is emitted twice. Before it, one test computes the last
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

// rangedAccess is a load or store at param + off (stepped by step per
// iteration) or, when param < 0, at the fixed base + off.
type rangedAccess struct {
	in        *gir.Instr
	param     int
	base      *gir.Value
	off, step int64
	size      int64
	store     bool
}

// maxAccessStep bounds the steps of versioned pointers, so that the test's
// products cannot wrap (step × iterations ≤ memory).
const maxAccessStep = 1 << 20

// planVersion returns the plan of loop in, or nil when it is not to be
// versioned.
func (fg *fnGen) planVersion(in *gir.Instr) *versionPlan {
	body := in.Regions[0]
	if len(body.Instrs) < 3 || len(body.Instrs[0].Results) != 1 {
		return nil
	}
	inside := map[*gir.Value]bool{}
	ok := true
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
				if breakTarget(x) == in && x != body.Last() {
					ok = false // every iteration must step the parameters alike
				}
			}
			for _, sub := range x.Regions {
				markRegion(sub)
			}
		}
	}
	markRegion(body)
	last := body.Last()
	if !ok || last.Op != gir.OpContinue || breakTarget(last) != in {
		return nil
	}
	// step of each parameter: its continue argument is param + constant.
	steps := make([]int64, len(body.Params))
	stepped := make([]bool, len(body.Params))
	for i, p := range body.Params {
		arg := last.Args[i]
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

	// The header: [cmp; not;] if c { break ^in } {}.
	plan := &versionPlan{counter: -1}
	cmp, negated, at := body.Instrs[0], false, 1
	if body.Instrs[1].Op == gir.OpNot && body.Instrs[1].Args[0] == cmp.Results[0] {
		negated, at = true, 2
	}
	iff := body.Instrs[at]
	if iff.Op != gir.OpIf || iff.Args[0] != body.Instrs[at-1].Results[0] || len(iff.Regions) != 2 ||
		len(iff.Regions[1].Instrs) != 0 || len(iff.Regions[0].Instrs) != 1 {
		return nil
	}
	if br := iff.Regions[0].Instrs[0]; br.Op != gir.OpBreak || breakTarget(br) != in {
		return nil
	}
	if len(cmp.Args) != 2 {
		return nil
	}
	// The loop goes on while j REL n.
	rel := cmp.Op
	if !negated {
		// if j >= n break: goes on while j < n.
		switch rel {
		case gir.OpGeU:
			rel = gir.OpLtU
		case gir.OpGtU:
			rel = gir.OpLeU
		case gir.OpGeS:
			rel = gir.OpLtS
		case gir.OpGtS:
			rel = gir.OpLeS
		default:
			return nil
		}
	}
	switch rel {
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
	for i, p := range body.Params {
		if cmp.Args[0] == p {
			plan.counter = i
		}
	}
	if plan.counter < 0 || inside[cmp.Args[1]] || cmp.Args[1].Type.Size() != 8 || cmp.Args[0].Type.Size() != 8 {
		return nil
	}
	plan.limit = cmp.Args[1]
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
		off := x.Int
		for base.Def != nil && base.Def.Op == gir.OpPtrAdd && inside[base] {
			c := base.Def.Args[1].Def
			if c == nil || c.Op != gir.OpConst {
				break
			}
			off += c.Lit.Int
			base = base.Def.Args[0]
		}
		if off < -maxAccessStep || off > maxAccessStep {
			return
		}
		a := rangedAccess{in: x, param: -1, base: base, off: off, size: size, store: x.Op == gir.OpStore}
		if i, isParam := param[base]; isParam {
			if !stepped[i] || steps[i] < -maxAccessStep || steps[i] > maxAccessStep {
				return
			}
			a.param, a.step = i, steps[i]
		} else if inside[base] {
			return
		} else if d := base.Def; d != nil && d.Op == gir.OpAddrOf && d.Local != "" {
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
		var a0 value.Value
		if a.param >= 0 {
			a0 = args[a.param]
		} else {
			a0 = fg.vals[a.base]
		}
		if a.off != 0 {
			a0 = b.NewAdd(a0, i64(a.off))
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
