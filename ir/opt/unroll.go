package opt

import (
	"slices"

	"github.com/genesis-toolchain/genesis/internal/graph"
	"github.com/genesis-toolchain/genesis/ir"
)

// UnrollBudget is the largest self-recursive function unrollRecursion
// unrolls, in instructions, and UnrollCalls the most calls to itself it
// may make: the unrolled body holds one copy of the function per call, so
// it grows to at most UnrollBudget × (1 + UnrollCalls).
const (
	UnrollBudget = 32
	UnrollCalls  = 2
	UnrollLevels = 2
)

// unrollRecursion replaces each call that a small function makes to
// itself by a copy of the function's body, once: the recursion is
// unrolled one level, so it makes about half as many calls, each doing
// twice the work between them (what gcc -O2 does to naive recursion, and
// what fib needs). The copies' own calls to the function stay calls, so
// the result is as recursive as before and the pass always ends. Only a
// function that is its own strongly connected component of the call
// graph (directly recursive, with no other function in its cycle), has no
// effect (inline's reason), at most UnrollCalls calls to itself and at
// most UnrollBudget instructions is unrolled.
func unrollRecursion(m *ir.Module) {
	calls := m.CallGraph()
	for _, comp := range graph.SCC(len(calls), func(v int) []int { return calls[v] }) {
		if len(comp) != 1 || !slices.Contains(calls[comp[0]], comp[0]) {
			continue
		}
		f := m.Funcs[comp[0]]
		var sites []*ir.Instr
		size := 0
		ir.Walk(f.Body, func(in *ir.Instr) {
			size++
			if in.Op.IsEffect() {
				size = 1 << 30
			}
			if in.Op == ir.OpCall && in.Sym == f.Name {
				sites = append(sites, in)
			}
		})
		if size > UnrollBudget || len(sites) > UnrollCalls {
			continue
		}
		// The copies come from a snapshot of the body: expanding a site
		// changes f's body, which must not show in the next copy.
		snap := snapshot(m, f)
		in := &inliner{m: m, f: f}
		for level := 0; level < UnrollLevels; level++ {
			var next []*ir.Instr
			for _, call := range sites {
				in.expand(call, snap)
			}
			ir.Walk(f.Body, func(in *ir.Instr) {
				if in.Op == ir.OpCall && in.Sym == f.Name {
					next = append(next, in)
				}
			})
			sites = next
		}
	}
}

// snapshot returns a copy of function f, not part of m, for expand to
// copy from.
func snapshot(m *ir.Module, f *ir.Func) *ir.Func {
	g := &ir.Func{Name: f.Name, Results: append([]ir.Type(nil), f.Results...), Body: &ir.Region{}, Pos: f.Pos}
	in := &inliner{m: m, f: g, values: namer{}, labels: namer{}, locals: namer{}}
	c := &cloner{in: in, g: f, vals: map[*ir.Value]*ir.Value{}, labels: map[string]string{}, locals: map[string]string{}}
	for _, p := range f.Params {
		np := g.NewValue(p.Type)
		np.Name = p.Name
		g.Params = append(g.Params, np)
		c.vals[p] = np
	}
	for _, l := range f.Locals {
		nl := *l
		g.Locals = append(g.Locals, &nl)
		c.locals[l.Name] = l.Name
	}
	g.Body = c.region(f.Body) // c.ret is empty: returns stay returns
	return g
}
