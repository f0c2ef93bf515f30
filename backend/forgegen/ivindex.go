package forgegen

import (
	"github.com/genesis-toolchain/genesis/ir"
)

// Indexing a loop's stepped pointers from one register (docs/opt.md,
// "Forge: one stepped register a loop"; docs/decisions.md, "Optimizer,
// fourth step (issue 17)").
//
// ivsimplify steps every address of a loop as a pointer parameter of its
// own: lcs's inner loop carries j, &b[j−1], &prev[j−1], &cur[j], &prev[j]
// and &cur[j−1], six ADDs an iteration. That form is the one LLVM wants
// (the native target vectorizes and addresses it well), so the IR keeps
// it; the Forge backend, which has indexed word and 4-byte accesses
// (LOADWX base + 8·index and friends), lowers such a loop with one
// stepped register, the leader:
//
//   - a pointer parameter p stepped by scale·s (scale 8 or 4) when the
//     leader x is stepped by s (1 or −1), and whose every use is the
//     address of a load or store of an element of that size, is not
//     kept at all: an access at p + off becomes LOADWX base, x with base
//     = p₀ + off − scale·x₀ computed once before the loop. In every
//     iteration p = p₀ + scale·(x − x₀), so base + scale·x is p + off,
//     the same wrapping sum: the access reads, writes and faults exactly
//     where the original one did;
//   - an integer counter j stepped by 1 whose only use is the loop's
//     exit test j′ < n (or j′ ≠ n), with a leader stepped by 1, is not
//     kept either (linear-function test replacement): the test becomes
//     x′ ≠ x₀ + (n − j₀). Every continue of the loop lies in the arm the
//     test takes, so the loop continues only while j′ < n: j′ goes up by
//     one from j₀ + 1 and leaves exactly when it reaches n, n − j₀
//     iterations in, which is when x′ (stepped by one, so never equal to
//     it before 2^64 iterations) reaches the bound. That needs j₀ < n
//     when the loop is entered, for a < test: the loop sits in the then
//     arm of the guard looprotate put before it (the same test on j₀),
//     or j₀ and n are constants with j₀ < n. A ≠ test needs nothing.
//
// A parameter that is used otherwise (passed on, compared, stored, used
// in arithmetic, a loop's argument) keeps its register; so does any
// parameter of a loop whose continues do not all step it by the same
// constant.

// ivAccess is a load or store of a dropped pointer parameter, done by an
// indexed access from the loop's leader.
type ivAccess struct {
	base   reg       // p₀ + off − scale·x₀, computed before the loop
	leader *ir.Value // the leader parameter
	scale  int64     // 8 or 4
}

// loopPlan is how lowering treats the parameters of one loop.
type loopPlan struct {
	drop []bool // parameters not kept in a register
	// folded are the stepped values of the dropped parameters, which
	// are not computed.
	folded []*ir.Value
	bases  []ivBase
	// lftr is the exit test rewritten, if any.
	lftr *lftrTest
	// leader is the index of the leader parameter; next its stepped
	// values.
	leader int
	next   []*ir.Value
}

// ivBase is one base register to compute before the loop: for the
// accesses accs of parameter param at offset off.
type ivBase struct {
	param int
	off   int64
	scale int64
	accs  []*ir.Instr
}

// lftrTest is a loop exit test j′ < n (or ≠) replaced by x′ ≠ x₀ + (n − j₀).
type lftrTest struct {
	cmp     *ir.Instr // the comparison whose branch now tests the leader
	counter int       // the counter parameter's index
	n       *ir.Value // the bound, defined before the loop
	next    *ir.Value // the leader's stepped value, which the test reads
}

// ivParam is what planLoop learns of one loop parameter.
type ivParam struct {
	step    int64 // the constant every continue adds, if iv
	iv      bool
	next    []*ir.Value // the stepped values, one for each continue
	memOnly bool        // every use of p is the address of a load or store at offset in.Int
	accs    []*ir.Instr // those loads and stores
	cmp     *ir.Instr   // for a counter: the exit comparison of its (single) stepped value
	other   bool        // a use that is neither an access nor the step
}

// indexLoops enables planLoop; tests turn it off to compare (it is never
// changed while a compilation runs).
var indexLoops = true

// planLoop decides which parameters of loop in are dropped; nil when none
// is. uses and fused are the function's (fusedCompares).
func planLoop(in *ir.Instr, uses map[*ir.Value][]*ir.Instr, fused map[*ir.Value]*ir.Instr) *loopPlan {
	if !indexLoops {
		return nil
	}
	body := in.Regions[0]
	if len(body.Params) < 2 || len(body.Params) != len(in.Args) {
		return nil
	}
	var conts []*ir.Instr
	defined := map[*ir.Value]bool{}
	for _, p := range body.Params {
		defined[p] = true
	}
	ir.Walk(body, func(x *ir.Instr) {
		for _, r := range x.Results {
			defined[r] = true
		}
		for _, sub := range x.Regions {
			for _, p := range sub.Params {
				defined[p] = true
			}
		}
		if x.Op == ir.OpContinue && x.Label == in.Label {
			conts = append(conts, x)
		}
	})
	if len(conts) == 0 {
		return nil
	}
	ps := make([]ivParam, len(body.Params))
	for i, p := range body.Params {
		ps[i] = classifyParam(p, i, conts, uses)
	}
	// The leader: a parameter stepped by ±1 that keeps its register
	// anyway, else a counter that could have been replaced.
	leader := -1
	for i, p := range body.Params {
		q := ps[i]
		counter := q.cmp != nil && len(q.accs) == 0 && !q.other && p.Type == ir.I64
		if q.iv && (q.step == 1 || q.step == -1) && !counter {
			leader = i
			break
		}
	}
	if leader < 0 {
		for i := range ps {
			if ps[i].iv && (ps[i].step == 1 || ps[i].step == -1) {
				leader = i
				break
			}
		}
	}
	if leader < 0 {
		return nil
	}
	s := ps[leader].step
	plan := &loopPlan{drop: make([]bool, len(ps)), leader: leader, next: ps[leader].next}
	dropped := false
	for i, p := range body.Params {
		q := ps[i]
		if i == leader || !q.iv || !q.memOnly || len(q.accs) == 0 || p.Type != ir.Ptr {
			continue
		}
		scale := q.step * s // s is ±1: q.step / s
		if scale != 8 && scale != 4 || !accessesFit(p, q.accs, scale) {
			continue
		}
		plan.drop[i] = true
		plan.folded = append(plan.folded, q.next...)
		dropped = true
		for _, a := range q.accs {
			off := a.Int
			k := -1
			for b := range plan.bases {
				if plan.bases[b].param == i && plan.bases[b].off == off {
					k = b
				}
			}
			if k < 0 {
				plan.bases = append(plan.bases, ivBase{param: i, off: off, scale: scale})
				k = len(plan.bases) - 1
			}
			plan.bases[k].accs = append(plan.bases[k].accs, a)
		}
	}
	if t := planLFTR(in, leader, ps, defined, uses, fused); t != nil {
		plan.drop[t.counter] = true
		plan.folded = append(plan.folded, ps[t.counter].next...)
		plan.lftr = t
		dropped = true
	}
	if !dropped {
		return nil
	}
	return plan
}

// classifyParam finds whether parameter p (the i-th) is stepped by a
// constant by every continue of conts, and how it is used.
func classifyParam(p *ir.Value, i int, conts []*ir.Instr, uses map[*ir.Value][]*ir.Instr) ivParam {
	q := ivParam{memOnly: true}
	if p.Type != ir.Ptr && p.Type != ir.I64 {
		q.other = true
		return q
	}
	steps := map[*ir.Instr]bool{}
	q.iv = true
	for k, c := range conts {
		a := c.Args[i]
		d := a.Def
		step, ok := int64(0), false
		if d != nil && len(d.Results) == 1 {
			switch {
			case d.Op == ir.OpPtrAdd && d.Args[0] == p:
				step, ok = constOf(d.Args[1])
			case d.Op == ir.OpAdd && d.Args[0] == p:
				step, ok = constOf(d.Args[1])
			case d.Op == ir.OpAdd && d.Args[1] == p:
				step, ok = constOf(d.Args[0])
			case d.Op == ir.OpSub && d.Args[0] == p && d.Args[1] != p:
				step, ok = constOf(d.Args[1])
				step = -step
			}
		}
		if !ok || k > 0 && step != q.step {
			q.iv = false
			break
		}
		q.step = step
		steps[d] = true
		q.next = append(q.next, a)
	}
	for _, u := range uses[p] {
		switch {
		case q.iv && steps[u]:
		case u.Op == ir.OpLoad && u.Args[0] == p:
			q.accs = append(q.accs, u)
		case u.Op == ir.OpStore && u.Args[1] == p && u.Args[0] != p:
			q.accs = append(q.accs, u)
		default:
			q.other = true
			q.memOnly = false
		}
	}
	if !q.iv {
		return q
	}
	// Each stepped value may go only to its continue, in position i; a
	// counter's (single) stepped value may also feed one comparison.
	for _, v := range q.next {
		for _, u := range uses[v] {
			switch {
			case u.Op == ir.OpContinue && onlyAt(u.Args, v, i):
			case len(q.next) == 1 && isCompare(u.Op) && q.cmp == nil:
				q.cmp = u
			default:
				q.other = true
				q.memOnly = false
				q.cmp = nil
				return q
			}
		}
	}
	if q.cmp != nil {
		// A pointer compared is not an address only.
		q.memOnly = false
	}
	return q
}

// onlyAt reports whether v appears in args at index i and nowhere else.
func onlyAt(args []*ir.Value, v *ir.Value, i int) bool {
	for k, a := range args {
		if (a == v) != (k == i) {
			return false
		}
	}
	return true
}

// accessesFit reports whether every access of p loads or stores an
// element of scale bytes that the indexed instructions handle: any 8-byte
// value for LOADWX and STOREWX; a 4-byte integer for LOAD32SX (which
// sign-extends it: the canonical form) and STORE32X.
func accessesFit(p *ir.Value, accs []*ir.Instr, scale int64) bool {
	for _, a := range accs {
		t := a.Type
		if a.Op == ir.OpStore {
			t = a.Args[0].Type
		}
		if t.Size() != scale || scale == 4 && !t.IsInt() || t == ir.Dyn {
			return false
		}
	}
	return true
}

// planLFTR finds an integer counter of loop in whose only use is the
// exit test, and which the leader can test instead (see the file's
// comment); nil if there is none.
func planLFTR(in *ir.Instr, leader int, ps []ivParam, defined map[*ir.Value]bool, uses map[*ir.Value][]*ir.Instr, fused map[*ir.Value]*ir.Instr) *lftrTest {
	body := in.Regions[0]
	x := ps[leader]
	if x.step != 1 || len(x.next) != 1 {
		return nil
	}
	for j, q := range ps {
		if j == leader || !q.iv || q.step != 1 || q.cmp == nil || len(q.accs) > 0 || body.Params[j].Type != ir.I64 {
			continue
		}
		// q.other is set by the comparison; every other use was the step.
		if len(uses[body.Params[j]]) != 1 {
			continue
		}
		cmp := q.cmp
		next := q.next[0]
		var n *ir.Value
		op := cmp.Op
		switch {
		case (op == ir.OpLtU || op == ir.OpLtS || op == ir.OpNe) && cmp.Args[0] == next && cmp.Args[1] != next:
			n = cmp.Args[1]
		case (op == ir.OpGtU || op == ir.OpGtS || op == ir.OpNe) && cmp.Args[1] == next && cmp.Args[0] != next:
			n = cmp.Args[0]
			op = map[ir.Op]ir.Op{ir.OpGtU: ir.OpLtU, ir.OpGtS: ir.OpLtS, ir.OpNe: ir.OpNe}[op]
		default:
			continue
		}
		if defined[n] || n.Type != ir.I64 {
			continue
		}
		c := cmp.Results[0]
		if fused[c] != cmp || len(uses[c]) != 1 {
			continue
		}
		br := uses[c][0]
		if br.Op != ir.OpIf || br.Args[0] != c || !continuesOnlyIn(body, in.Label, br.Regions[0]) {
			continue
		}
		// The leader's stepped value must be computed before the branch,
		// in its region.
		xn := x.next[0].Def
		if xn.Parent != br.Parent || indexIn(br.Parent, xn) > indexIn(br.Parent, br) {
			continue
		}
		if op != ir.OpNe && !entersBelow(in, in.Args[j], n, op) {
			continue
		}
		return &lftrTest{cmp: cmp, counter: j, n: n, next: x.next[0]}
	}
	return nil
}

// continuesOnlyIn reports whether every continue of label in body lies
// inside region arm.
func continuesOnlyIn(body *ir.Region, label string, arm *ir.Region) bool {
	inside := 0
	ir.Walk(arm, func(x *ir.Instr) {
		if x.Op == ir.OpContinue && x.Label == label {
			inside++
		}
	})
	all := 0
	ir.Walk(body, func(x *ir.Instr) {
		if x.Op == ir.OpContinue && x.Label == label {
			all++
		}
	})
	return inside == all
}

func indexIn(r *ir.Region, x *ir.Instr) int {
	for i, y := range r.Instrs {
		if y == x {
			return i
		}
	}
	return len(r.Instrs)
}

// entersBelow reports whether loop is entered only with j0 < n in the
// order of op (lt.u or lt.s), so that the counter, going up by one from
// j0 + 1 while below n, leaves exactly at n: both are constants with
// j0 < n, or the loop sits in the then arm of an if on op(j0, n).
func entersBelow(loop *ir.Instr, j0, n *ir.Value, op ir.Op) bool {
	a, aok := constOf(j0)
	b, bok := constOf(n)
	if aok && bok {
		if op == ir.OpLtS {
			return a < b
		}
		return uint64(a) < uint64(b)
	}
	r := loop.Parent
	if r == nil || r.Parent == nil || r.Parent.Op != ir.OpIf || r.Parent.Regions[0] != r {
		return false
	}
	g := r.Parent.Args[0].Def
	return g != nil && g.Op == op && g.Args[0] == j0 && g.Args[1] == n
}

// lowerPlan emits, before loop in, what plan needs: each base register
// of the indexed accesses and the bound of the replaced exit test; it
// records the accesses (l.ivAcc), the values no longer computed
// (l.folded) and the new test (l.fused). inits are the registers of the
// loop's initial arguments.
func (l *fnLower) lowerPlan(plan *loopPlan, in *ir.Instr, inits []reg) {
	body := in.Regions[0]
	x0 := inits[plan.leader]
	scaled := map[int64]reg{}
	for _, b := range plan.bases {
		k, ok := scaled[b.scale]
		if !ok {
			k = l.newV()
			shift := int64(3)
			if b.scale == 4 {
				shift = 2
			}
			l.li(rScratch0, shift)
			l.alu("SHL", k, x0, rScratch0)
			scaled[b.scale] = k
		}
		p0 := inits[b.param]
		if b.off != 0 {
			t := l.newV()
			l.li(rScratch0, b.off)
			l.alu("ADD", t, p0, rScratch0)
			p0 = t
		}
		base := l.newV()
		l.alu("SUB", base, p0, k)
		for _, a := range b.accs {
			l.ivAcc[a] = ivAccess{base: base, leader: body.Params[plan.leader], scale: b.scale}
		}
	}
	for _, v := range plan.folded {
		l.folded[v] = true
	}
	// The leader's step goes after the accesses that read the leader
	// where it can: the stepped value and the parameter are then not
	// live together, so that they share a register and the continue
	// moves nothing.
	if len(plan.bases) > 0 {
		for _, v := range plan.next {
			l.sunk[v.Def] = true
		}
	}
	if t := plan.lftr; t != nil {
		d := l.newV()
		l.alu("SUB", d, l.val(t.n), inits[t.counter])
		bound := l.newV()
		l.alu("ADD", bound, x0, d)
		// The bound is no value of the function: a value of its own,
		// known only to this test.
		v := &ir.Value{ID: -1, Type: t.next.Type}
		l.vals[v] = bound
		l.fused[t.cmp.Results[0]] = &ir.Instr{Op: ir.OpNe, Args: []*ir.Value{t.next, v}, Pos: t.cmp.Pos}
	}
}

// lowerPending lowers, before in, the sunk instructions of pending that in
// needs (through its operands, a comparison its branch evaluates, or the
// instructions of its regions), with those of pending they need, in
// their order; it returns the others. A sunk instruction is a pure
// operation on a loop parameter and a constant, so lowering it later in
// its region computes the same value; one that nothing after it in its
// region needs is not lowered at all (its only users were folded).
func (l *fnLower) lowerPending(pending []*ir.Instr, in *ir.Instr, yt *yieldTarget) []*ir.Instr {
	need := func(x *ir.Instr) bool {
		for _, r := range x.Results {
			if l.needs(in, r) {
				return true
			}
		}
		return false
	}
	keep := pending[:0:0]
	var now []*ir.Instr
	for _, x := range pending {
		if need(x) {
			now = append(now, x)
		} else {
			keep = append(keep, x)
		}
	}
	for _, x := range now {
		delete(l.sunk, x)
		l.lowerInstr(x, yt)
	}
	return keep
}

// needs reports whether instruction in reads v: as an operand, as an
// operand of a comparison fused into its branch, or in its regions.
func (l *fnLower) needs(in *ir.Instr, v *ir.Value) bool {
	for _, a := range in.Args {
		if a == v {
			return true
		}
		if t := l.fused[a]; t != nil {
			for _, b := range t.Args {
				if b == v {
					return true
				}
			}
		}
	}
	for _, r := range in.Regions {
		for _, x := range r.Instrs {
			if l.needs(x, v) {
				return true
			}
		}
	}
	return false
}

// constHoist gathers the constants that the lowering of a loop nest's
// instructions needs besides the IR's own (the shift of a narrow
// result's sign extension, the mask of a zero extension, the 1 of a
// bool's not, a slot's frame offset): each is loaded once, before the
// outermost loop, instead of by an LI into the scratch register at every
// use (docs/decisions.md, "Optimizer, fourth step (issue 17)").
type constHoist struct {
	at    int           // where their LIs go in l.code: the end of the loop's preheader
	regs  map[int64]reg // constant → register, the IR's hoisted constants included
	order []int64       // the constants added, in the order they were
	src   *ir.Instr     // the loop
}

// maxHoistedImm bounds the constants one loop nest hoists for imm.
const maxHoistedImm = 16

// imm returns a register that holds c: in a loop nest that hoists its
// constants, one loaded before the loop; elsewhere the scratch register,
// loaded here (to use right away, before anything else loads it).
func (l *fnLower) imm(c int64) reg {
	if h := l.hoist; h != nil {
		if r, ok := h.regs[c]; ok {
			return r
		}
		if len(h.order) < maxHoistedImm {
			r := l.newV()
			h.regs[c] = r
			h.order = append(h.order, c)
			return r
		}
	}
	l.li(rScratch0, c)
	return rScratch0
}

// spliceHoisted inserts the LIs of the constants the loop nest hoisted
// at the end of its preheader, and ends the hoisting.
func (l *fnLower) spliceHoisted() {
	h := l.hoist
	l.hoist = nil
	if len(h.order) == 0 {
		return
	}
	lis := make([]*minst, len(h.order))
	for i, c := range h.order {
		lis[i] = &minst{op: mLI, defs: []reg{h.regs[c]}, imm: c, src: h.src}
	}
	l.code = append(l.code[:h.at], append(lis, l.code[h.at:]...)...)
}

// callsIn reports whether region r calls anything (a function, a
// builtin, an effect, an asm block): registers live across a call may
// cost saves, so such a loop's constants stay loaded where used.
func callsIn(r *ir.Region) bool {
	found := false
	ir.Walk(r, func(in *ir.Instr) {
		switch in.Op {
		case ir.OpCall, ir.OpCallIndirect, ir.OpAsm, ir.OpBuiltin:
			found = true
		}
		if in.Info().Flags&ir.Effect != 0 {
			found = true
		}
	})
	return found
}
