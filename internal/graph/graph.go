// Package graph holds the graph algorithms several phases share.
package graph

import "sort"

// SCC returns the strongly connected components of the directed graph of
// nodes 0 … n-1 whose edges from node v are succ(v) (Tarjan's algorithm,
// without recursion, so deep graphs cannot overflow the stack). Nodes are
// visited from 0 upward and their successors in the order succ gives, so
// the result is deterministic. Components come in reverse topological
// order: a component comes after every component it has an edge to
// (callees before callers). The nodes of each component are sorted.
func SCC(n int, succ func(v int) []int) [][]int {
	index := make([]int, n)
	low := make([]int, n)
	onStack := make([]bool, n)
	for i := range index {
		index[i] = -1
	}
	type frame struct {
		v    int
		next int // the next successor of v to look at
		succ []int
	}
	var (
		stack  []int
		frames []frame
		comps  [][]int
		count  int
	)
	for root := 0; root < n; root++ {
		if index[root] >= 0 {
			continue
		}
		index[root], low[root] = count, count
		count++
		stack = append(stack, root)
		onStack[root] = true
		frames = append(frames[:0], frame{v: root, succ: succ(root)})
		for len(frames) > 0 {
			f := &frames[len(frames)-1]
			if f.next < len(f.succ) {
				w := f.succ[f.next]
				f.next++
				switch {
				case index[w] < 0:
					index[w], low[w] = count, count
					count++
					stack = append(stack, w)
					onStack[w] = true
					frames = append(frames, frame{v: w, succ: succ(w)})
				case onStack[w]:
					low[f.v] = min(low[f.v], index[w])
				}
				continue
			}
			v := f.v
			frames = frames[:len(frames)-1]
			if len(frames) > 0 {
				u := frames[len(frames)-1].v
				low[u] = min(low[u], low[v])
			}
			if low[v] != index[v] {
				continue
			}
			var comp []int
			for {
				w := stack[len(stack)-1]
				stack = stack[:len(stack)-1]
				onStack[w] = false
				comp = append(comp, w)
				if w == v {
					break
				}
			}
			sort.Ints(comp)
			comps = append(comps, comp)
		}
	}
	return comps
}
