package graph

import (
	"fmt"
	"testing"
)

func TestSCC(t *testing.T) {
	// 0 → 1 → 2 → 0 (a cycle), 2 → 3, 3 → 3 (a self-loop), 4 alone, 5 → 4.
	edges := [][]int{{1}, {2}, {0, 3}, {3}, nil, {4}}
	got := fmt.Sprint(SCC(len(edges), func(v int) []int { return edges[v] }))
	// Components after the ones they reach: {3} before {0 1 2}; {4} before {5}.
	if want := "[[3] [0 1 2] [4] [5]]"; got != want {
		t.Errorf("SCC = %s, want %s", got, want)
	}
}

// TestSCCDeep checks that a long chain does not recurse.
func TestSCCDeep(t *testing.T) {
	const n = 1_000_000
	comps := SCC(n, func(v int) []int {
		if v+1 < n {
			return []int{v + 1}
		}
		return []int{0}
	})
	if len(comps) != 1 || len(comps[0]) != n {
		t.Fatalf("a ring of %d nodes gave %d components", n, len(comps))
	}
}
