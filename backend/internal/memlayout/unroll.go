package memlayout

import (
	"slices"

	"github.com/genesis-toolchain/genesis/internal/graph"
	"github.com/genesis-toolchain/genesis/ir"
)

// UnrollBudget is the largest function Unrolled selects, in instructions,
// and UnrollCalls the most calls to itself it may make; UnrollLevels is
// how deep the compiled targets expand them. The expanded function holds
// 2 + 4 + 8 + 16 copies of the body when it calls itself twice: it grows
// at most 31-fold. Each copy keeps the check of the machine stack of the
// call it stands for, and a Go call costs more than that check: Go's fib
// runs 70 M instructions with three levels, 62 M with four (59 M before
// the stacks were charged; gcc -O2's 51 M).
const (
	UnrollBudget = 32
	UnrollCalls  = 2
	UnrollLevels = 4
)

// Unrolled returns the functions whose calls to themselves the native and
// Go targets expand into copies of the body, UnrollLevels deep (the
// copies' own calls at the last level stay calls), as gcc -O2 does to
// naive recursion: fib then makes about a quarter of the calls, each doing
// more work between them. A function qualifies when it is its own
// strongly connected component of the call graph (directly recursive, no
// other function in its cycle), has no effect, calls itself at most
// UnrollCalls times and has at most UnrollBudget instructions.
//
// The expansion is done by the backends as they emit code, not by the
// optimizer, because each copy stands for a call of the Forge program:
// it is charged the call's machine stack and the function's frame, and
// gets a frame of its own, so that recursion faults at the same depth as
// on the Forge Machine (docs/decisions.md, N4).
func Unrolled(m *ir.Module) map[string]bool {
	out := map[string]bool{}
	calls := m.CallGraph()
	for _, comp := range graph.SCC(len(calls), func(v int) []int { return calls[v] }) {
		if len(comp) != 1 || !slices.Contains(calls[comp[0]], comp[0]) {
			continue
		}
		f := m.Funcs[comp[0]]
		size, sites := 0, 0
		ir.Walk(f.Body, func(in *ir.Instr) {
			size++
			if in.Op.IsEffect() {
				size = UnrollBudget + 1
			}
			if in.Op == ir.OpCall && in.Sym == f.Name {
				sites++
			}
		})
		if size <= UnrollBudget && sites <= UnrollCalls {
			out[f.Name] = true
		}
	}
	return out
}
