package forgegen

import (
	"math/rand/v2"
	"testing"
)

// TestOccupancy checks the trees of register allocation against the
// definition they replace: a segment interferes with a register's when
// s1 < e2 && s2 < e1, for random segments, degenerate ones included, and
// that the calls a segment crosses are those strictly inside it.
func TestOccupancy(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	const size = 300
	randSeg := func() seg {
		s := int32(rng.IntN(size - 1))
		e := s + int32(rng.IntN(min(12, size-1-int(s))+1))
		if rng.IntN(8) == 0 {
			e = s
		}
		return seg{s, e}
	}
	for round := 0; round < 50; round++ {
		occ := newOccupancy(size, true)
		var held [8][]seg
		for k := 0; k < 200; k++ {
			x := randSeg()
			var busy regSet
			occ.busy(x, &busy)
			for r := range held {
				want := false
				for _, y := range held[r] {
					want = want || x.s < y.e && y.s < x.e
				}
				if busy.has(reg(r)) != want {
					t.Fatalf("round %d: %v against r%d holding %v: busy %v, want %v", round, x, r, held[r], busy.has(reg(r)), want)
				}
			}
			if r := rng.IntN(len(held)); !busy.has(reg(r)) {
				occ.add(x, reg(r))
				held[r] = append(held[r], x)
			}
		}
		occ.release()

		calls := newOrTree(size, false, true)
		var at []int32
		for k := 0; k < 30; k++ {
			p := int32(rng.IntN(size))
			var m regSet
			m.add(reg(k % 64))
			calls.add(p, p+1, &m)
			at = append(at, p)
		}
		for k := 0; k < 200; k++ {
			x := randSeg()
			var got, want regSet
			calls.query(x.s+1, x.e, &got)
			for i, p := range at {
				if x.s < p && p < x.e {
					want.add(reg(i % 64))
				}
			}
			if got != want {
				t.Fatalf("calls across %v: %v, want %v", x, got, want)
			}
		}
		calls.release()
	}
}

// TestMaxTree checks the tree of spill selection against an array.
func TestMaxTree(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for round := 0; round < 20; round++ {
		n := 1 + rng.IntN(200)
		vals := make([]int32, n)
		for i := range vals {
			vals[i] = int32(rng.IntN(10))
		}
		tree := newMaxTree(vals)
		for k := 0; k < 300; k++ {
			l := rng.IntN(n + 1)
			r := l + rng.IntN(n+1-l)
			if rng.IntN(2) == 0 {
				d := int32(rng.IntN(5) - 2)
				tree.add(l, r, d)
				for i := l; i < r; i++ {
					vals[i] += d
				}
				continue
			}
			want := int32(-1 << 31)
			for i := l; i < r; i++ {
				want = max(want, vals[i])
			}
			if got := tree.max(l, r); got != want {
				t.Fatalf("max [%d, %d) = %d, want %d", l, r, got, want)
			}
		}
	}
}
