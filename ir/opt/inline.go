package opt

import (
	"slices"

	"github.com/genesis-toolchain/genesis/internal/graph"
	"github.com/genesis-toolchain/genesis/ir"
)

// InlineBudget is the largest callee inline copies, in instructions
// (counting those of nested regions and terminators). 40 instructions
// cover accessors, small arithmetic helpers and short loops, whose call
// overhead (argument moves, a frame, the call and return) dominates their
// cost, while bounding the growth of the caller: since callees are
// inlined bottom-up, every inlined body is at most this size.
const InlineBudget = 40

// inline replaces direct calls to small functions by a copy of their
// body. A callee is inlined when
//
//   - it is not recursive: it is in no cycle of the direct call graph (so
//     inlining terminates and never unrolls recursion);
//   - it contains no effect: an effect's step identity is its name and
//     source position, which must stay unique in the module, and the
//     runtime derives a callee's steps' identity from the call path;
//   - its size is at most InlineBudget.
//
// Functions are processed bottom-up (callees before their callers), so a
// callee is measured with its own calls already inlined. The copy is a
// block whose results are the call's: parameters become the arguments,
// each return becomes a break out of the block, and the callee's labels,
// locals and value names are renamed apart from the caller's. simplify
// later dissolves the block when the callee returns only at its end.
// Functions are kept even when no call to them remains: which symbols a
// program's entry points need is the linker's business.
func inline(m *ir.Module) {
	recursive := recursiveFuncs(m)
	funcs := m.FuncMap()
	sizes := map[*ir.Func]int{}
	for _, f := range bottomUp(m) {
		in := &inliner{m: m, f: f}
		ir.Walk(f.Body, func(call *ir.Instr) {
			if call.Op != ir.OpCall {
				return
			}
			g := funcs[call.Sym]
			if g == nil || g == f || recursive[g] || !inlinable(g, sizes) {
				return
			}
			in.sites = append(in.sites, site{call, g})
		})
		for _, s := range in.sites {
			in.expand(s.call, s.callee)
		}
		delete(sizes, f) // f grew
	}
}

type site struct {
	call   *ir.Instr
	callee *ir.Func
}

// inlinable reports whether g is small and free of effects; sizes caches
// the sizes of the functions examined, or -1 for those with effects.
func inlinable(g *ir.Func, sizes map[*ir.Func]int) bool {
	n, ok := sizes[g]
	if !ok {
		ir.Walk(g.Body, func(in *ir.Instr) {
			if in.Op.IsEffect() {
				n = -1 << 30
			}
			n++
		})
		sizes[g] = n
	}
	return n >= 0 && n <= InlineBudget
}

// calls returns the functions of funcs that f calls directly, in order of
// first call.
func calls(funcs map[string]*ir.Func, f *ir.Func) []*ir.Func {
	var out []*ir.Func
	seen := map[*ir.Func]bool{}
	ir.Walk(f.Body, func(in *ir.Instr) {
		if in.Op == ir.OpCall {
			if g := funcs[in.Sym]; g != nil && !seen[g] {
				seen[g] = true
				out = append(out, g)
			}
		}
	})
	return out
}

// bottomUp returns m's functions in post-order of the call graph from each
// function in module order: every function after the functions it calls,
// except along a cycle.
func bottomUp(m *ir.Module) []*ir.Func {
	var order []*ir.Func
	funcs := m.FuncMap()
	seen := map[*ir.Func]bool{}
	var visit func(f *ir.Func)
	visit = func(f *ir.Func) {
		if seen[f] {
			return
		}
		seen[f] = true
		for _, g := range calls(funcs, f) {
			visit(g)
		}
		order = append(order, f)
	}
	for _, f := range m.Funcs {
		visit(f)
	}
	return order
}

// recursiveFuncs returns the functions on a cycle of the direct call
// graph (Tarjan's strongly connected components).
func recursiveFuncs(m *ir.Module) map[*ir.Func]bool {
	calls := m.CallGraph()
	rec := map[*ir.Func]bool{}
	for _, comp := range graph.SCC(len(calls), func(v int) []int { return calls[v] }) {
		for _, i := range comp {
			if len(comp) > 1 || slices.Contains(calls[i], i) {
				rec[m.Funcs[i]] = true
			}
		}
	}
	return rec
}

// inliner expands the call sites of one caller.
type inliner struct {
	m      *ir.Module
	f      *ir.Func
	sites  []site
	values namer
	labels namer
	locals namer
	// at is the index of each instruction of the regions holding a site,
	// indexed once per region (indexed), so that finding many calls in
	// one region is linear. Expanding replaces a call in place: the
	// indices stay.
	at      map[*ir.Instr]int
	indexed map[*ir.Region]bool
}

// expand replaces call, a call to g in in.f, by a block holding a copy of
// g's body.
func (in *inliner) expand(call *ir.Instr, g *ir.Func) {
	if in.values.used == nil {
		in.values, in.labels, in.locals = valueNames(in.f), labelNames(in.f), newNamer()
		for _, l := range in.f.Locals {
			in.locals.add(l.Name)
		}
	}
	c := &cloner{in: in, g: g, vals: map[*ir.Value]*ir.Value{}, labels: map[string]string{}, locals: map[string]string{}}
	for i, p := range g.Params {
		c.vals[p] = call.Args[i]
	}
	for _, l := range g.Locals {
		nl := *l
		nl.Name = in.locals.fresh(g.Name + "." + l.Name)
		c.locals[l.Name] = nl.Name
		in.f.Locals = append(in.f.Locals, &nl)
	}
	c.ret = in.labels.fresh(g.Name + ".ret")
	blk := &ir.Instr{Op: ir.OpBlock, Label: c.ret, Results: call.Results, Pos: call.Pos}
	for _, r := range blk.Results {
		r.Def = blk
	}
	body := c.region(g.Body)
	body.Parent = blk
	blk.Regions = []*ir.Region{body}
	parent := call.Parent
	if !in.indexed[parent] {
		if in.at == nil {
			in.at, in.indexed = map[*ir.Instr]int{}, map[*ir.Region]bool{}
		}
		for i, x := range parent.Instrs {
			in.at[x] = i
		}
		in.indexed[parent] = true
	}
	parent.Instrs[in.at[call]] = blk
	blk.Parent = parent
}

// cloner copies a callee's instructions into a caller.
type cloner struct {
	in     *inliner
	g      *ir.Func
	vals   map[*ir.Value]*ir.Value
	labels map[string]string
	locals map[string]string
	ret    string // the label of the block replacing the call
}

func (c *cloner) value(v *ir.Value) *ir.Value {
	nv := c.in.f.NewValue(v.Type)
	nv.Name = c.in.values.fresh(prefixed(c.g.Name, v.Name))
	c.vals[v] = nv
	return nv
}

func prefixed(prefix, name string) string {
	if name == "" {
		return ""
	}
	return prefix + "." + name
}

func (c *cloner) region(r *ir.Region) *ir.Region {
	nr := &ir.Region{}
	for _, p := range r.Params {
		nr.Params = append(nr.Params, c.value(p))
	}
	for _, x := range r.Instrs {
		nr.Instrs = append(nr.Instrs, c.instr(x, nr))
	}
	return nr
}

func (c *cloner) instr(x *ir.Instr, parent *ir.Region) *ir.Instr {
	n := *x
	n.Parent = parent
	n.Args = make([]*ir.Value, len(x.Args))
	for i, a := range x.Args {
		n.Args[i] = c.vals[a]
	}
	n.Results = nil
	for _, r := range x.Results {
		nv := c.value(r)
		nv.Def = &n
		n.Results = append(n.Results, nv)
	}
	n.Regs = append([]int(nil), x.Regs...)
	n.Syms = append([]string(nil), x.Syms...)
	for _, w := range x.Waits {
		n.Waits = append(n.Waits, append([]int(nil), w...))
	}
	n.Cases = nil
	for _, vals := range x.Cases {
		n.Cases = append(n.Cases, append([]int64(nil), vals...))
	}
	if x.Local != "" {
		n.Local = c.locals[x.Local]
	}
	switch x.Op {
	case ir.OpLoop, ir.OpBlock:
		c.labels[x.Label] = c.in.labels.fresh(c.g.Name + "." + x.Label)
		n.Label = c.labels[x.Label]
	case ir.OpBreak, ir.OpContinue:
		n.Label = c.labels[x.Label]
	case ir.OpReturn:
		if c.ret != "" { // a copy into a caller: the return leaves the copy
			n.Op, n.Label = ir.OpBreak, c.ret
		}
	}
	n.Regions = nil
	for _, r := range x.Regions {
		nr := c.region(r)
		nr.Parent = &n
		n.Regions = append(n.Regions, nr)
	}
	return &n
}
