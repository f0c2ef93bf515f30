package forgegen

import "sync"

// orTree is a segment tree of register sets over the positions [0, n):
// add puts a set on a range of positions and query returns the union of
// the sets put on any position of a range, each in O(log n) — so that
// register allocation checks a value's segments against every register
// at once, in time independent of how many segments the registers hold.
// Either half may be left out: all (the sets put on a whole node) serves
// queries of single positions, any (the union of a node's subtree) the
// queries of ranges of single positions put by add.
type orTree struct {
	n        int // leaves, a power of two
	all, any []regSet
}

// newOrTree returns a tree over size positions; withAll and withAny keep
// the halves that the tree's queries need (see orTree).
func newOrTree(size int, withAll, withAny bool) *orTree {
	n := 1
	for n < size {
		n <<= 1
	}
	t := &orTree{n: n}
	if withAll {
		t.all = getSets(2 * n)
	}
	if withAny {
		t.any = getSets(2 * n)
	}
	return t
}

// release gives the tree's storage back for the next function's trees.
func (t *orTree) release() {
	if t == nil {
		return
	}
	putSets(t.all)
	putSets(t.any)
	t.all, t.any = nil, nil
}

// setPool recycles the storage of trees: allocation makes one per round
// per function, and most functions are small, so allocating them afresh
// would cost more than the rest of allocation.
var setPool sync.Pool // of *[]regSet

// getSets returns n empty register sets.
func getSets(n int) []regSet {
	if p, _ := setPool.Get().(*[]regSet); p != nil && cap(*p) >= n {
		s := (*p)[:n]
		clear(s)
		return s
	}
	return make([]regSet, n)
}

func putSets(s []regSet) {
	if s != nil {
		setPool.Put(&s)
	}
}

// add puts m on the positions [l, r).
func (t *orTree) add(l, r int32, m *regSet) {
	if l >= r {
		return
	}
	lo, hi := int(l)+t.n, int(r)+t.n
	for a, b := lo, hi; a < b; a, b = a>>1, b>>1 {
		if a&1 == 1 {
			t.put(a, m)
			a++
		}
		if b&1 == 1 {
			b--
			t.put(b, m)
		}
	}
	// The nodes put are all below the paths from lo and hi−1 to the root.
	if t.any != nil {
		for i := lo >> 1; i > 0; i >>= 1 {
			t.any[i].union(m)
		}
		for i := (hi - 1) >> 1; i > 0; i >>= 1 {
			t.any[i].union(m)
		}
	}
}

func (t *orTree) put(i int, m *regSet) {
	if t.all != nil {
		t.all[i].union(m)
	}
	if t.any != nil {
		t.any[i].union(m)
	}
}

// query adds to into the union of the sets put on any of the positions
// [l, r).
func (t *orTree) query(l, r int32, into *regSet) {
	if l >= r {
		return
	}
	lo, hi := int(l)+t.n, int(r)+t.n
	for a, b := lo, hi; a < b; a, b = a>>1, b>>1 {
		if a&1 == 1 {
			t.get(a, into)
			a++
		}
		if b&1 == 1 {
			b--
			t.get(b, into)
		}
	}
	// What was put on a node above the range's nodes covers them too: those
	// nodes are on the paths from lo and hi−1 to the root.
	if t.all != nil {
		for i := lo >> 1; i > 0; i >>= 1 {
			into.union(&t.all[i])
		}
		for i := (hi - 1) >> 1; i > 0; i >>= 1 {
			into.union(&t.all[i])
		}
	}
}

func (t *orTree) get(i int, into *regSet) {
	if t.any != nil {
		into.union(&t.any[i])
	} else {
		into.union(&t.all[i])
	}
}

// occupancy records which machine registers hold which live segments, so
// that the registers whose segments interfere with a given one are found
// in O(log n), as a set. Segments s < e interfere when they share a unit
// cell (c, c+1); a degenerate segment [p, p] (a value read by the first
// instruction of a block and live into it) interferes with the segments
// s < p < e, and never with another degenerate one — the rule of
// s1 < e2 && s2 < e1.
type occupancy struct {
	cells    *orTree // cell c is (c, c+1)
	interior *orTree // the positions strictly inside a segment; nil without degenerate segments
	points   *orTree // the degenerate segments; nil without them
}

// newOccupancy returns an empty occupancy over the positions [0, size);
// degenerate says whether any segment [p, p] may be added or looked up.
func newOccupancy(size int, degenerate bool) *occupancy {
	o := &occupancy{cells: newOrTree(size, true, true)}
	if degenerate {
		o.interior = newOrTree(size, true, false)
		o.points = newOrTree(size, false, true)
	}
	return o
}

// release gives the trees' storage back.
func (o *occupancy) release() {
	o.cells.release()
	o.interior.release()
	o.points.release()
}

// add records that register r holds sg.
func (o *occupancy) add(sg seg, r reg) {
	var m regSet
	m.add(r)
	if sg.s < sg.e {
		o.cells.add(sg.s, sg.e, &m)
		if o.interior != nil {
			o.interior.add(sg.s+1, sg.e, &m)
		}
	} else {
		o.points.add(sg.s, sg.s+1, &m)
	}
}

// busy adds to into the registers holding a segment that interferes with
// sg.
func (o *occupancy) busy(sg seg, into *regSet) {
	if sg.s < sg.e {
		o.cells.query(sg.s, sg.e, into)
		if o.points != nil {
			o.points.query(sg.s+1, sg.e, into)
		}
	} else {
		o.interior.query(sg.s, sg.s+1, into)
	}
}
