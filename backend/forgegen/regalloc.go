package forgegen

import (
	"math"
	"math/bits"
	"slices"
)

// Register allocation (docs/backend-forge.md, "Register allocation").
//
// The machine-level code of a function is one linear sequence; position
// 2i is instruction i. Liveness is computed over its basic blocks, then
// each virtual register gets precise live segments: [def, last use], with
// holes, so a loop parameter and the value that replaces it share a
// register. Machine registers that the calling convention fixes (r0.. for
// arguments, results and asm bindings) get segments too. Virtual registers
// are then assigned greedily in order of their first definition: a
// register whose segments do not overlap, preferring the register of a
// move partner (so the move disappears) and avoiding registers the calls
// it lives across clobber (so nothing needs saving).

// seg is a half-open-ish live range [s, e]: live after position s and up
// to and including the read at e. Two segments interfere when s1 < e2 and
// s2 < e1.
type seg struct{ s, e int32 }

type bitset []uint64

func newBitset(n int) bitset       { return make(bitset, (n+63)/64) }
func (b bitset) add(i int)         { b[i>>6] |= 1 << (uint(i) & 63) }
func (b bitset) remove(i int)      { b[i>>6] &^= 1 << (uint(i) & 63) }
func (b bitset) has(i int) bool    { return b[i>>6]&(1<<(uint(i)&63)) != 0 }
func (b bitset) copyFrom(c bitset) { copy(b, c) }
func (b bitset) each(fn func(i int)) {
	for w, x := range b {
		for x != 0 {
			t := x & -x
			fn(w*64 + trailing(x))
			x ^= t
		}
	}
}

func trailing(x uint64) int {
	n := 0
	for x&1 == 0 {
		x >>= 1
		n++
	}
	return n
}

// sparseSet is a set of integers below a bound, unordered, that adds,
// removes and clears in time independent of the bound.
type sparseSet struct {
	dense  []int32
	sparse []int32 // the position in dense of each member
}

func newSparseSet(n int) *sparseSet { return &sparseSet{sparse: make([]int32, n)} }

func (s *sparseSet) has(v int32) bool {
	i := s.sparse[v]
	return int(i) < len(s.dense) && s.dense[i] == v
}

func (s *sparseSet) add(v int32) {
	if !s.has(v) {
		s.sparse[v] = int32(len(s.dense))
		s.dense = append(s.dense, v)
	}
}

func (s *sparseSet) remove(v int32) {
	if s.has(v) {
		i, last := s.sparse[v], s.dense[len(s.dense)-1]
		s.dense[i], s.sparse[last] = last, i
		s.dense = s.dense[:len(s.dense)-1]
	}
}

func (s *sparseSet) clear() { s.dense = s.dense[:0] }

type mblock struct {
	start, end int // instructions [start, end)
	succ       []int
	// The virtual registers (indices from firstVirtual, ascending) live
	// into and out of the block, read before any write in it (gen) and
	// written in it (kill). Sorted lists rather than bitsets: a bitset per
	// block is as large as the function, which makes a function of many
	// blocks quadratic in memory.
	liveIn, liveOut []int32
	gen, kill       []int32
}

// blocks splits code into basic blocks.
func blocks(code []*minst) []*mblock {
	var bs []*mblock
	start := 0
	for i, in := range code {
		if in.op == mLabel && i > start {
			bs = append(bs, &mblock{start: start, end: i})
			start = i
		}
		if in.branches() || in.terminates() {
			bs = append(bs, &mblock{start: start, end: i + 1})
			start = i + 1
		}
	}
	if start < len(code) {
		bs = append(bs, &mblock{start: start, end: len(code)})
	}
	at := map[string]int{}
	for bi, b := range bs {
		for i := b.start; i < b.end && code[i].op == mLabel; i++ {
			at[code[i].sym] = bi
		}
	}
	for bi, b := range bs {
		last := code[b.end-1]
		if last.branches() {
			if t, ok := at[last.sym]; ok {
				b.succ = append(b.succ, t)
			}
		}
		if !last.terminates() && bi+1 < len(bs) {
			b.succ = append(b.succ, bi+1)
		}
	}
	return bs
}

// liveness computes the live-in and live-out sets of virtual registers:
// the least fixpoint of liveIn = gen ∪ (liveOut − kill), liveOut = ∪ the
// successors' liveIn. Its work is the sizes of those sets times the
// rounds, not the blocks times the function's registers.
func liveness(code []*minst, bs []*mblock, nv int) {
	genAt := make([]int32, nv) // block index + 1 of the last gen or kill entry
	killAt := make([]int32, nv)
	for bi, b := range bs {
		stamp := int32(bi + 1)
		b.gen, b.kill, b.liveIn, b.liveOut = nil, nil, nil, nil
		for i := b.start; i < b.end; i++ {
			for _, u := range code[i].uses {
				if v := u - firstVirtual; u.virtual() && killAt[v] != stamp && genAt[v] != stamp {
					genAt[v] = stamp
					b.gen = append(b.gen, int32(v))
				}
			}
			for _, d := range code[i].defs {
				if v := d - firstVirtual; d.virtual() && killAt[v] != stamp {
					killAt[v] = stamp
					b.kill = append(b.kill, int32(v))
				}
			}
		}
		slices.Sort(b.gen)
		slices.Sort(b.kill)
	}
	var out, tmp, rest, in []int32
	for changed := true; changed; {
		changed = false
		for bi := len(bs) - 1; bi >= 0; bi-- {
			b := bs[bi]
			out = append(out[:0], b.liveOut...)
			for _, s := range b.succ {
				tmp = union(tmp[:0], out, bs[s].liveIn)
				out, tmp = tmp, out
			}
			if len(out) != len(b.liveOut) { // liveOut only grows
				b.liveOut = slices.Clone(out)
			}
			rest = minus(rest[:0], b.liveOut, b.kill)
			in = union(in[:0], b.gen, rest)
			if !slices.Equal(in, b.liveIn) {
				b.liveIn = slices.Clone(in)
				changed = true
			}
		}
	}
}

// union appends to dst the sorted union of the sorted sets a and b.
func union(dst, a, b []int32) []int32 {
	i, j := 0, 0
	for i < len(a) && j < len(b) {
		switch {
		case a[i] < b[j]:
			dst = append(dst, a[i])
			i++
		case a[i] > b[j]:
			dst = append(dst, b[j])
			j++
		default:
			dst = append(dst, a[i])
			i++
			j++
		}
	}
	dst = append(dst, a[i:]...)
	return append(dst, b[j:]...)
}

// minus appends to dst the sorted set a − b of the sorted sets a and b.
func minus(dst, a, b []int32) []int32 {
	j := 0
	for _, x := range a {
		for j < len(b) && b[j] < x {
			j++
		}
		if j == len(b) || b[j] != x {
			dst = append(dst, x)
		}
	}
	return dst
}

// deadCode deletes pure instructions whose results are never used, until
// none is left, and returns the remaining code.
func deadCode(code []*minst, nv int) []*minst {
	for {
		bs := blocks(code)
		liveness(code, bs, nv)
		dead := make([]bool, len(code))
		n := 0
		live := newBitset(nv)
		for _, b := range bs {
			for _, v := range b.liveOut {
				live.add(int(v))
			}
			for i := b.end - 1; i >= b.start; i-- {
				in := code[i]
				if in.pure() && len(in.defs) > 0 {
					used := false
					for _, d := range in.defs {
						if !d.virtual() || live.has(int(d-firstVirtual)) {
							used = true
						}
					}
					if !used {
						dead[i] = true
						n++
						continue
					}
				}
				for _, d := range in.defs {
					if d.virtual() {
						live.remove(int(d - firstVirtual))
					}
				}
				for _, u := range in.uses {
					if u.virtual() {
						live.add(int(u - firstVirtual))
					}
				}
			}
			// Empty again for the next block: what is live here came from
			// liveOut or the block's uses.
			for _, v := range b.liveOut {
				live.remove(int(v))
			}
			for i := b.start; i < b.end; i++ {
				for _, u := range code[i].uses {
					if u.virtual() {
						live.remove(int(u - firstVirtual))
					}
				}
			}
		}
		if n == 0 {
			return code
		}
		out := code[:0]
		for i, in := range code {
			if !dead[i] {
				out = append(out, in)
			}
		}
		code = out
	}
}

// ranges computes the live segments of every virtual register and of the
// allocatable machine registers the code names.
func ranges(code []*minst, bs []*mblock, nv int) (vsegs [][]seg, fixed [numAllocatable][]seg) {
	vsegs = make([][]seg, nv)
	open := make([]int32, nv)
	for i := range open {
		open[i] = -1
	}
	var popen [numAllocatable]int32
	var touched []int32 // the values opened in the block
	for _, b := range bs {
		for i := range popen {
			popen[i] = -1
		}
		startPos, endPos := int32(2*b.start), int32(2*(b.end-1)+1)
		touched = touched[:0]
		for _, v := range b.liveOut {
			open[v] = endPos
			touched = append(touched, v)
		}
		for i := b.end - 1; i >= b.start; i-- {
			p := int32(2 * i)
			in := code[i]
			for _, d := range in.defs {
				if d.virtual() {
					v := d - firstVirtual
					if open[v] >= 0 {
						vsegs[v] = append(vsegs[v], seg{p, open[v]})
						open[v] = -1
					} else {
						vsegs[v] = append(vsegs[v], seg{p, p + 1})
					}
				} else if d < numAllocatable {
					if popen[d] >= 0 {
						fixed[d] = append(fixed[d], seg{p, popen[d]})
						popen[d] = -1
					} else {
						fixed[d] = append(fixed[d], seg{p, p + 1})
					}
				}
			}
			for _, u := range in.uses {
				if u.virtual() {
					if v := u - firstVirtual; open[v] < 0 {
						open[v] = p
						touched = append(touched, int32(v))
					}
				} else if u < numAllocatable && popen[u] < 0 {
					popen[u] = p
				}
			}
		}
		// The values still open are live into the block; each is touched
		// once, or it was closed (and maybe opened again, touched again).
		for _, v := range touched {
			if e := open[v]; e >= 0 {
				vsegs[v] = append(vsegs[v], seg{startPos, e})
				open[v] = -1
			}
		}
		for r, e := range popen {
			if e >= 0 {
				fixed[r] = append(fixed[r], seg{startPos, e})
			}
		}
	}
	return vsegs, fixed
}

// lowestFree returns the lowest allocatable register in neither busy nor
// avoid (when not nil), or -1.
func lowestFree(busy, avoid *regSet) reg {
	for w := range busy {
		x := allAllocatable[w] &^ busy[w]
		if avoid != nil {
			x &^= avoid[w]
		}
		if x != 0 {
			return reg(w*64 + bits.TrailingZeros64(x))
		}
	}
	return -1
}

// allocation is the result of register allocation for one function.
type allocation struct {
	code   []*minst
	assign []reg // virtual register index → machine register
	vsegs  [][]seg
}

// maxSpillRounds bounds the rounds of allocate: the values a round
// spills are replaced by ones live for a single instruction, so a second
// round succeeds unless one instruction needs more registers than exist.
const maxSpillRounds = 3

// allocate assigns machine registers to the virtual registers of l.code.
// clobberOf gives the registers a call instruction may change. When more
// values are live at once than there are registers, the values that found
// none are spilled to the function's frame (spill) and allocation runs
// again.
func (l *fnLower) allocate(clobberOf func(*minst) regSet) *allocation {
	for round := 0; ; round++ {
		a, unassigned := l.tryAllocate(clobberOf)
		if len(unassigned) == 0 {
			return a
		}
		if round+1 == maxSpillRounds {
			l.errorf(l.f.Pos, codeCodegen, "one instruction needs more than %d registers", numAllocatable)
			return nil
		}
		l.spill(a.code, chooseSpills(a, unassigned))
	}
}

// spillMargin is the registers kept free where values are spilled, for
// the short-lived registers that load and store the spilled values and
// for the machine registers instructions use directly.
const spillMargin = 16

// chooseSpills picks the values to spill after a failed round: those that
// found no register, and then the values with the longest live ranges
// among those live where more than numAllocatable − spillMargin values
// are live at once, until nowhere are there more. Freeing registers only
// where the failures happened would not do: the long-lived values there
// would keep every register, and the loads of the spilled values find
// none.
func chooseSpills(a *allocation, unassigned []reg) []reg {
	const limit = numAllocatable - spillMargin
	// How many values are live at each position p, for the segments'
	// positions s+1 … e: from a difference array, into a tree that adds to
	// and finds the maximum of a range in O(log n) (walking the positions
	// of every segment would be the sum of the live ranges: quadratic when
	// many values live long).
	diff := make([]int32, 2*len(a.code)+3)
	length := make([]int32, len(a.vsegs))
	for v, segs := range a.vsegs {
		for _, sg := range segs {
			if sg.s < sg.e {
				diff[sg.s+1]++
				diff[sg.e+1]--
			}
			length[v] += sg.e - sg.s
		}
	}
	for p := 1; p < len(diff); p++ {
		diff[p] += diff[p-1]
	}
	live := newMaxTree(diff)
	spilled := map[int]bool{}
	drop := func(v int) {
		spilled[v] = true
		for _, sg := range a.vsegs[v] {
			live.add(int(sg.s)+1, int(sg.e)+1, -1)
		}
	}
	for _, r := range unassigned {
		drop(int(r - firstVirtual))
	}
	order := make([]int, 0, len(a.vsegs))
	for v := range a.vsegs {
		if !spilled[v] && length[v] > 0 {
			order = append(order, v)
		}
	}
	slices.SortStableFunc(order, func(x, y int) int { return int(length[y] - length[x]) })
	for _, v := range order {
		crowded := false
		for _, sg := range a.vsegs[v] {
			crowded = crowded || live.max(int(sg.s)+1, int(sg.e)+1) > limit
		}
		if crowded {
			drop(v)
		}
	}
	out := make([]reg, 0, len(spilled))
	for v := range a.vsegs {
		if spilled[v] {
			out = append(out, firstVirtual+reg(v))
		}
	}
	return out
}

// maxTree holds integers at positions: add adds to a range and max
// returns the largest of a range, each in O(log n). A node's mx is the
// maximum of its range, including the additions to the whole node (lz),
// which stay there.
type maxTree struct {
	n      int // leaves, a power of two
	mx, lz []int32
}

func newMaxTree(vals []int32) *maxTree {
	n := 1
	for n < len(vals) {
		n <<= 1
	}
	t := &maxTree{n: n, mx: make([]int32, 2*n), lz: make([]int32, 2*n)}
	copy(t.mx[n:], vals)
	for i := n - 1; i > 0; i-- {
		t.mx[i] = max(t.mx[2*i], t.mx[2*i+1])
	}
	return t
}

// add adds d to the positions [l, r).
func (t *maxTree) add(l, r int, d int32) { t.addAt(1, 0, t.n, l, r, d) }

func (t *maxTree) addAt(i, lo, hi, l, r int, d int32) {
	if r <= lo || hi <= l || l >= r {
		return
	}
	if l <= lo && hi <= r {
		t.mx[i] += d
		t.lz[i] += d
		return
	}
	mid := (lo + hi) / 2
	t.addAt(2*i, lo, mid, l, r, d)
	t.addAt(2*i+1, mid, hi, l, r, d)
	t.mx[i] = max(t.mx[2*i], t.mx[2*i+1]) + t.lz[i]
}

// max returns the largest value at the positions [l, r), or MinInt32
// when the range is empty.
func (t *maxTree) max(l, r int) int32 { return t.maxAt(1, 0, t.n, l, r) }

func (t *maxTree) maxAt(i, lo, hi, l, r int) int32 {
	if r <= lo || hi <= l || l >= r {
		return math.MinInt32
	}
	if l <= lo && hi <= r {
		return t.mx[i]
	}
	mid := (lo + hi) / 2
	m := max(t.maxAt(2*i, lo, mid, l, r), t.maxAt(2*i+1, mid, hi, l, r))
	if m == math.MinInt32 {
		return m
	}
	return m + t.lz[i]
}

// tryAllocate is one round of allocate: the allocation, with -1 for the
// virtual registers listed in unassigned, which found no register.
func (l *fnLower) tryAllocate(clobberOf func(*minst) regSet) (_ *allocation, unassigned []reg) {
	nv := int(l.nextV - firstVirtual)
	code := deadCode(l.code, nv)
	code = l.splitAtCalls(code, nv, clobberOf)
	nv = int(l.nextV - firstVirtual)
	bs := blocks(code)
	liveness(code, bs, nv)
	vsegs, fixed := ranges(code, bs, nv)

	// Calls and what they clobber, by position: the calls a value lives
	// across are those strictly inside one of its segments.
	size := 2*len(code) + 2
	var calls *orTree
	for i, in := range code {
		if in.isCall() {
			in.clob = clobberOf(in)
			if calls == nil {
				calls = newOrTree(size, false, true)
			}
			calls.add(int32(2*i), int32(2*i+1), &in.clob)
		}
	}
	// Move partners, for coalescing.
	partners := make([][]reg, nv)
	for _, in := range code {
		if in.op != mMove {
			continue
		}
		d, s := in.defs[0], in.uses[0]
		if d.virtual() {
			partners[d-firstVirtual] = append(partners[d-firstVirtual], s)
		}
		if s.virtual() {
			partners[s-firstVirtual] = append(partners[s-firstVirtual], d)
		}
	}

	order := make([]int, 0, nv)
	first := make([]int32, nv)
	for v, ss := range vsegs {
		if len(ss) == 0 {
			continue
		}
		first[v] = ss[0].s
		for _, s := range ss {
			first[v] = min(first[v], s.s)
		}
		order = append(order, v)
	}
	slices.SortStableFunc(order, func(a, b int) int { return int(first[a] - first[b]) })

	assign := make([]reg, nv)
	for i := range assign {
		assign[i] = -1
	}
	// The segments each machine register holds: the fixed ones, then
	// those of the values assigned to it.
	degenerate := false
	for _, segs := range vsegs {
		for _, sg := range segs {
			degenerate = degenerate || sg.s == sg.e
		}
	}
	for _, segs := range fixed {
		for _, sg := range segs {
			degenerate = degenerate || sg.s == sg.e
		}
	}
	occ := newOccupancy(size, degenerate)
	defer occ.release()
	defer calls.release()
	for r, segs := range fixed {
		for _, sg := range segs {
			occ.add(sg, reg(r))
		}
	}
	regOf := func(r reg) reg {
		if r.virtual() {
			return assign[r-firstVirtual]
		}
		return r
	}
	// firstHint returns the first register, in the order of v's move
	// partners and then their partners, that ok accepts, or -1. It stops
	// at the first: the partners of a partner may be many (a variable
	// assigned in every branch of a long function) and collecting them
	// all for every value would be quadratic.
	firstHint := func(v int, ok func(reg) bool) reg {
		for _, p := range partners[v] {
			if r := regOf(p); r >= 0 && r < numAllocatable && ok(r) {
				return r
			}
		}
		for _, p := range partners[v] {
			if p.virtual() {
				for _, q := range partners[p-firstVirtual] {
					if r := regOf(q); r >= 0 && r < numAllocatable && ok(r) {
						return r
					}
				}
			}
		}
		return -1
	}
	for _, v := range order {
		segs := vsegs[v]
		var avoid, busy regSet
		for _, sg := range segs {
			if calls != nil {
				calls.query(sg.s+1, sg.e, &avoid)
			}
			occ.busy(sg, &busy)
		}
		// In order: a partner's register that the calls v lives across
		// leave alone, any such register, a partner's register, any
		// register. (The lowest register of a set is the first a scan
		// from r0 finds.)
		chosen := firstHint(v, func(r reg) bool { return !avoid.has(r) && !busy.has(r) })
		if chosen < 0 {
			chosen = lowestFree(&busy, &avoid)
		}
		if chosen < 0 {
			chosen = firstHint(v, func(r reg) bool { return !busy.has(r) })
		}
		if chosen < 0 {
			chosen = lowestFree(&busy, nil)
		}
		if chosen < 0 {
			unassigned = append(unassigned, firstVirtual+reg(v))
			continue
		}
		assign[v] = chosen
		for _, sg := range segs {
			occ.add(sg, chosen)
		}
	}
	// What callers of this function see changed.
	for _, r := range assign {
		if r >= 0 {
			l.clobbered.add(r)
		}
	}
	for _, in := range code {
		for _, d := range in.defs {
			if d < numAllocatable {
				l.clobbered.add(d)
			}
		}
		// A call inside the function's own component adds nothing: the
		// component's clobber set is the union of its members'.
		if in.isCall() && !(in.op == mCall && !l.c.done[in.sym]) {
			l.clobbered.union(&in.clob)
		}
	}
	return &allocation{code: code, assign: assign, vsegs: vsegs}, unassigned
}

// spill moves the virtual registers vs of code to 8-byte slots of the
// function's frame, and makes code the function's code again: every
// definition of a spilled value goes to a fresh register stored to the
// slot right after, every use reads the slot into a fresh register right
// before. The fresh registers live within one instruction. A function
// without a frame gets one (its prologue after the entry; finish adds the
// epilogues from the frame size).
func (l *fnLower) spill(code []*minst, vs []reg) {
	slot := map[reg]int64{}
	for _, v := range vs {
		slot[v] = l.frameSize
		l.frameSize += 8
	}
	l.frameSize = (l.frameSize + maxFrameAlign - 1) &^ (maxFrameAlign - 1)
	var out []*minst
	if l.frameLI == nil {
		// The prologue goes right after the entry, which comes first.
		saved := l.code
		l.code = nil
		l.emitPrologue()
		prologue := l.code
		l.code = saved
		out = append(out, code[0])
		out = append(out, prologue...)
		code = code[1:]
	}
	l.frameLI.imm = l.frameSize
	for _, in := range code {
		var stores []*minst
		for k, u := range in.uses {
			if off, ok := slot[u]; ok {
				t := l.newV()
				out = append(out, &minst{op: mLoad, name: "LOADW", defs: []reg{t}, uses: []reg{rFrame}, imm: off})
				in.uses[k] = t
			}
		}
		for k, d := range in.defs {
			if off, ok := slot[d]; ok {
				t := l.newV()
				in.defs[k] = t
				stores = append(stores, &minst{op: mStore, name: "STOREW", uses: []reg{t, rFrame}, imm: off})
			}
		}
		out = append(out, in)
		out = append(out, stores...)
	}
	l.code = out
}

// splitAtCalls saves the values that live across a call changing every
// register (a call within the recursive component, an indirect call)
// explicitly: PUSH v as early as possible in the call's block, POP into a
// fresh register v' after the call, and v' replaces v in the rest of the
// block. v and v' are allocated independently, so the argument in r0 can
// stay in r0 up to the call and a result can be pushed straight from r0.
// Only values that are not live out of the block, are defined more than
// by a single LI (those are re-loaded instead) and have no other def in
// between qualify; the others are saved around the call by finish.
//
// It is one pass over each block, so that many such calls in one block
// stay linear: a backward scan records the values live after each call,
// under their original names; the forward scan then renames each use to
// the value's current name (its last POP, until the value is defined
// again), and inserts a call's PUSHes into the instructions since the
// previous split only, where all of them go.
func (l *fnLower) splitAtCalls(code []*minst, nv int, clobberOf func(*minst) regSet) []*minst {
	splits := func(in *minst) bool {
		return (in.op == mCall || in.op == mCallInd) && clobberOf(in) == allAllocatable
	}
	if !slices.ContainsFunc(code, splits) {
		return code
	}
	// Single-LI values are re-materialized by finish.
	ndefs := make([]int, nv)
	isLI := make([]bool, nv)
	for _, in := range code {
		for _, d := range in.defs {
			if d.virtual() {
				ndefs[d-firstVirtual]++
				isLI[d-firstVirtual] = in.op == mLI
			}
		}
	}
	bs := blocks(code)
	liveness(code, bs, nv)
	// cur is the current name of each original virtual register (an
	// index, as are live sets); lastDef, per virtual register, is 1 + the
	// position in out of its last definition.
	cur := make([]int32, nv)
	for v := range cur {
		cur[v] = int32(v)
	}
	var lastDef []int
	// origOf, per value a split made (index − nv), the original register
	// it stands for.
	var origOf []int32
	origin := func(v int32) int32 {
		if int(v) < nv {
			return v
		}
		return origOf[int(v)-nv]
	}
	renameUses := func(in *minst) {
		for k, u := range in.uses {
			if u.virtual() && int(u-firstVirtual) < nv {
				in.uses[k] = firstVirtual + reg(cur[u-firstVirtual])
			}
		}
	}
	setDef := func(v reg, at int) {
		i := int(v - firstVirtual)
		for len(lastDef) <= i {
			lastDef = append(lastDef, 0)
		}
		lastDef[i] = at
	}
	live := newSparseSet(nv)
	var liveAfter [][]int32 // per splitting call of the block, in reverse order
	var renamed []int32     // the originals renamed in the block
	out := make([]*minst, 0, len(code))
	for _, b := range bs {
		blk := code[b.start:b.end]
		if !slices.ContainsFunc(blk, splits) {
			out = append(out, blk...)
			continue
		}
		// Backward: the original virtual registers live after each call.
		live.clear()
		for _, v := range b.liveOut {
			live.add(v)
		}
		liveAfter = liveAfter[:0]
		for i := len(blk) - 1; i >= 0; i-- {
			in := blk[i]
			if splits(in) {
				liveAfter = append(liveAfter, slices.Clone(live.dense))
			}
			for _, d := range in.defs {
				if d.virtual() {
					live.remove(int32(d - firstVirtual))
				}
			}
			for _, u := range in.uses {
				if u.virtual() {
					live.add(int32(u - firstVirtual))
				}
			}
		}
		// Forward. The saves of a call are pushed after the POPs of the
		// call split before it in the block (floor), so that each call's
		// PUSHes and POPs nest.
		start := len(out)
		floor := start
		for _, in := range blk {
			renameUses(in)
			for _, d := range in.defs {
				if d.virtual() && int(d-firstVirtual) < nv {
					cur[d-firstVirtual] = int32(d - firstVirtual)
				}
			}
			if !splits(in) {
				for _, d := range in.defs {
					if d.virtual() {
						setDef(d, len(out)+1)
					}
				}
				out = append(out, in)
				continue
			}
			orig := liveAfter[len(liveAfter)-1]
			liveAfter = liveAfter[:len(liveAfter)-1]
			names := make([]int32, len(orig))
			for k, v := range orig {
				names[k] = cur[v]
			}
			slices.Sort(names)
			type save struct {
				v, nv reg
				at    int
			}
			var saves []save
			ci := len(out)
			for _, v := range names {
				if _, liveOut := slices.BinarySearch(b.liveOut, v); int(v) < nv && (liveOut || (ndefs[v] == 1 && isLI[v])) {
					continue // (a split's value is defined once, by a POP, and dies in the block)
				}
				// Where v is last defined before the call in this block.
				at := start
				if int(v) < len(lastDef) && lastDef[v] > start {
					at = lastDef[v]
				}
				// Labels stay at the head of the block.
				for at < ci && out[at].op == mLabel {
					at++
				}
				at = max(at, floor)
				saves = append(saves, save{v: firstVirtual + reg(v), nv: l.newV(), at: at})
			}
			for _, d := range in.defs {
				if d.virtual() {
					setDef(d, len(out)+1)
				}
			}
			if len(saves) == 0 {
				out = append(out, in)
				continue
			}
			// Renames after the call, up to a redefinition.
			for _, sv := range saves {
				o := origin(int32(sv.v - firstVirtual))
				for len(origOf) <= int(sv.nv-firstVirtual)-nv {
					origOf = append(origOf, -1)
				}
				origOf[int(sv.nv-firstVirtual)-nv] = o
				cur[o] = int32(sv.nv - firstVirtual)
				renamed = append(renamed, o)
			}
			// PUSHes in order of position (the earliest first), POPs in
			// reverse after the call.
			slices.SortStableFunc(saves, func(x, y save) int { return x.at - y.at })
			seg := slices.Clone(out[floor:])
			out = out[:floor]
			k := 0
			for i, x := range seg {
				for k < len(saves) && saves[k].at == floor+i {
					out = append(out, &minst{op: mPush, uses: []reg{saves[k].v}})
					k++
				}
				out = append(out, x)
			}
			for ; k < len(saves); k++ {
				out = append(out, &minst{op: mPush, uses: []reg{saves[k].v}})
			}
			out = append(out, in)
			for j := len(saves) - 1; j >= 0; j-- {
				out = append(out, &minst{op: mPop, defs: []reg{saves[j].nv}})
				setDef(saves[j].nv, len(out))
			}
			floor = len(out)
		}
		// Renames end with the block.
		for _, o := range renamed {
			cur[o] = o
		}
		renamed = renamed[:0]
	}
	return out
}
