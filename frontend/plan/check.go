package plan

import (
	"container/heap"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/genesis-toolchain/genesis/diag"
	"github.com/genesis-toolchain/genesis/frontend/internal/jsontree"
	"github.com/genesis-toolchain/genesis/internal/graph"
)

// checkPlan checks what a plan executor discovers only at run time, or
// never: group ids, dependencies, cycles, the names operations bind and
// the placeholders that read them. It sets p.Order when there is no
// error.
func checkPlan(p *Plan, r *reporter) {
	checkIDs(p, r)
	checkDeps(p, r)
	cyclic := checkCycles(p, r)
	checkContracts(p, r)
	names := checkNames(p, r)
	checkPlaceholders(p, names, r)
	if !r.diags.HasErrors() && !cyclic {
		p.Order = order(p)
	}
}

// where names a group for a message: its id, and its path.
func where(g *Group) string {
	return fmt.Sprintf("group %q (%s)", g.ID, g.Node.Path)
}

func checkIDs(p *Plan, r *reporter) {
	for _, g := range p.Groups {
		first, dup := p.byID[g.ID]
		if !dup {
			p.byID[g.ID] = g
			continue
		}
		switch {
		case g.IDNode != nil && first.IDNode != nil:
			r.errorf(g.IDNode, CodeDupID, "duplicate group id %q: %s has it too", g.ID, first.Node.Path)
		case g.IDNode != nil:
			r.errorf(g.IDNode, CodeDupID, "duplicate group id %q: it is the id of %s, which has no \"id\" and so is named by its index", g.ID, first.Node.Path)
		default:
			r.errorf(g.Node, CodeDupID, "this group has no \"id\", so its id is its index, %q, which is the \"id\" of %s too", g.ID, first.Node.Path)
		}
	}
}

func checkDeps(p *Plan, r *reporter) {
	byIndex := map[int64]*Group{}
	for _, g := range p.Groups {
		byIndex[int64(g.Index)] = g
	}
	for _, g := range p.Groups {
		seen := map[*Group]bool{}
		for _, d := range g.Deps {
			n := d.Node
			if n.Kind == jsontree.Number {
				d.Group = byIndex[n.Int]
				if d.Group == nil {
					r.errorf(n, CodeUnknownDep, "dependency %d names no group: %s", n.Int, indexRange(p))
					continue
				}
			} else {
				d.Group = p.byID[n.Text]
				if d.Group == nil {
					msg := fmt.Sprintf("dependency %q names no group", n.Text)
					if s := diag.Closest(n.Text, groupIDs(p)); s != "" {
						msg += fmt.Sprintf(" (did you mean %q?)", s)
					}
					r.errorf(n, CodeUnknownDep, "%s", msg)
					continue
				}
			}
			if seen[d.Group] {
				r.warnf(n, CodeNoEffect, "group %q is already a dependency of this group", d.Group.ID)
			}
			seen[d.Group] = true
		}
	}
}

func indexRange(p *Plan) string {
	n := len(p.Root.Get("groups").Items)
	switch n {
	case 0:
		return "the plan has no groups"
	case 1:
		return "the plan has one group, index 0"
	}
	return fmt.Sprintf("the plan has %d groups, indices 0 to %d", n, n-1)
}

func groupIDs(p *Plan) []string {
	ids := make([]string, 0, len(p.Groups))
	for _, g := range p.Groups {
		ids = append(ids, g.ID)
	}
	return ids
}

// checkCycles reports every dependency cycle, naming its groups in
// order, once per strongly connected component, at the dependency of the
// component's first group (in plan order) that the cycle follows. It
// reports whether there is one.
func checkCycles(p *Plan, r *reporter) bool {
	found := false
	for _, scc := range components(p.Groups) {
		in := map[*Group]bool{}
		for _, g := range scc {
			in[g] = true
		}
		first := scc[0]
		self := false
		for _, d := range first.Deps {
			if d.Group == first {
				self = true
			}
		}
		if len(scc) == 1 && !self {
			continue
		}
		found = true
		if self {
			for _, d := range first.Deps {
				if d.Group == first {
					r.errorf(d.Node, CodeCycle, "group %q depends on itself: it can never run", first.ID)
					break
				}
			}
			if len(scc) == 1 {
				continue
			}
		}
		path, dep := cyclePath(first, in)
		names := make([]string, len(path))
		for i, g := range path {
			names[i] = strconv.Quote(g.ID)
		}
		names = append(names, strconv.Quote(first.ID))
		msg := fmt.Sprintf("dependency cycle %s (each group depends on the next): these groups wait for each other and can never run", strings.Join(names, " → "))
		if len(scc) > len(path) {
			others := []string{}
			onPath := map[*Group]bool{}
			for _, g := range path {
				onPath[g] = true
			}
			for _, g := range scc {
				if !onPath[g] {
					others = append(others, strconv.Quote(g.ID))
				}
			}
			msg += fmt.Sprintf("; %s, in the same tangle, cannot either", strings.Join(others, ", "))
		}
		r.errorf(dep.Node, CodeCycle, "%s", msg)
	}
	return found
}

// cyclePath finds a shortest cycle through first inside the component
// in (a breadth-first search along dependencies): the groups of the
// cycle from first, and first's dependency the cycle leaves it by.
func cyclePath(first *Group, in map[*Group]bool) ([]*Group, *Dep) {
	type step struct {
		g    *Group
		prev *step
		dep  *Dep // the dependency of the first group taken
	}
	seen := map[*Group]bool{}
	queue := []*step{{g: first}}
	for len(queue) > 0 {
		s := queue[0]
		queue = queue[1:]
		for _, d := range s.g.Deps {
			next := d.Group
			if next == nil || !in[next] {
				continue
			}
			dep := s.dep
			if dep == nil {
				dep = d
			}
			if next == first && s.g != first {
				var path []*Group
				for t := s; t != nil; t = t.prev {
					path = append(path, t.g)
				}
				for i, j := 0, len(path)-1; i < j; i, j = i+1, j-1 {
					path[i], path[j] = path[j], path[i]
				}
				return path, dep
			}
			if next == first || seen[next] {
				continue
			}
			seen[next] = true
			queue = append(queue, &step{g: next, prev: s, dep: dep})
		}
	}
	panic("plan: a component without a cycle")
}

// components returns the strongly connected components of the
// dependency graph, each sorted by group index, in the order of their
// first groups.
func components(groups []*Group) [][]*Group {
	pos := make(map[*Group]int, len(groups))
	for i, g := range groups {
		pos[g] = i
	}
	comps := graph.SCC(len(groups), func(v int) []int {
		var out []int
		for _, d := range groups[v].Deps {
			if i, ok := pos[d.Group]; ok && d.Group != nil {
				out = append(out, i)
			}
		}
		return out
	})
	out := make([][]*Group, len(comps))
	for k, comp := range comps {
		for _, i := range comp {
			out[k] = append(out[k], groups[i])
		}
		sort.Slice(out[k], func(i, j int) bool { return out[k][i].Index < out[k][j].Index })
	}
	sort.Slice(out, func(i, j int) bool { return out[i][0].Index < out[j][0].Index })
	return out
}

// checkContracts warns about a contract listed twice in one group.
func checkContracts(p *Plan, r *reporter) {
	for _, g := range p.Groups {
		seen := map[string]*Contract{}
		for _, c := range g.Contracts {
			if first, ok := seen[c.key()]; ok {
				c.Dup = true
				r.warnf(c.Node, CodeNoEffect, "contract %s on chain %s is already listed at %s", c.Address, c.ChainID, first.Node.Path)
				continue
			}
			seen[c.key()] = c
		}
	}
}

// checkNames collects the names that inputs and operations bind: each
// is bound once in the whole plan.
func checkNames(p *Plan, r *reporter) map[string]any {
	names := map[string]any{}
	for _, in := range p.Inputs {
		if prev, ok := names[in.Name]; ok {
			r.errorf(in.Node, CodeDupName, "input %q is already declared at %s", in.Name, prev.(*Input).Node.Path)
			continue
		}
		names[in.Name] = in
	}
	for _, g := range p.Groups {
		for _, op := range g.Operations {
			if op.Output == "" {
				continue
			}
			switch prev := names[op.Output].(type) {
			case *Input:
				r.errorf(op.OutputNode, CodeDupName, "%q is an input of the plan (%s): an operation cannot bind it too", op.Output, prev.Node.Path)
			case *Operation:
				r.errorf(op.OutputNode, CodeDupName, "%q is already bound by operation %d of %s", op.Output, prev.Index, where(prev.Group))
			default:
				names[op.Output] = op
			}
		}
	}
	return names
}

// checkPlaceholders resolves every placeholder: to the operation's own
// output (left as written), an earlier operation of its group, an
// operation of a group its group depends on (directly or transitively),
// or an input. Anything else is an error: the value would not exist
// when the operation runs.
func checkPlaceholders(p *Plan, names map[string]any, r *reporter) {
	dependsOn := reachability(p)
	for _, g := range p.Groups {
		for _, op := range g.Operations {
			for i := range op.Parts {
				part := &op.Parts[i]
				if part.Name == "" || part.Name == op.Output {
					continue
				}
				pos := op.TextNode.RunePos(part.Off)
				fail := func(format string, args ...any) {
					r.add(pos, errorSev, op.TextNode.Path, CodePlaceholder, "{$%s} %s", append([]any{part.Name}, fmt.Sprintf(format, args...))...)
				}
				switch src := names[part.Name].(type) {
				case *Input:
					part.Source = src
				case *Operation:
					switch {
					case src.Group == g && src.Index < op.Index:
						part.Source = src
					case src.Group == g:
						fail("is the output of operation %d of this group, which runs after this one (operation %d)", src.Index, op.Index)
					case dependsOn(g, src.Group):
						part.Source = src
					default:
						fail("is the output of %s, which group %q does not depend on: add %s to its \"dependencies\"", where(src.Group), g.ID, depRef(src.Group))
					}
				default:
					msg := fmt.Sprintf("names no output of an earlier operation of group %q or of a group it depends on, and no input", g.ID)
					if s := diag.Closest(part.Name, visible(p, g, op, dependsOn)); s != "" {
						msg += fmt.Sprintf(" (did you mean {$%s}?)", s)
					} else {
						msg += fmt.Sprintf(": bind it with \"output\": %q on the operation that computes it, or declare it in the plan's \"inputs\"", part.Name)
					}
					fail("%s", msg)
				}
			}
		}
	}
}

// depRef is how a dependency on g is written: its id, or its index when
// it has no id.
func depRef(g *Group) string {
	if g.IDNode == nil {
		return strconv.Itoa(g.Index)
	}
	return strconv.Quote(g.ID)
}

// reachability returns whether a group depends on another, directly or
// transitively: a search along the dependencies, memoized per pair and
// reusing what earlier searches found (a group that reaches h, or one a
// failed search visited, which does not), so that the queries of a plan
// of thousands of groups stay near linear where ancestor sets would be
// quadratic.
func reachability(p *Plan) func(g, h *Group) bool {
	type pair struct{ g, h *Group }
	memo := map[pair]bool{}
	mark := map[*Group]int{}
	gen := 0
	return func(g, h *Group) bool {
		if r, ok := memo[pair{g, h}]; ok {
			return r
		}
		gen++
		found := false
		var visited []*Group
		work := []*Group{g}
		for len(work) > 0 && !found {
			x := work[len(work)-1]
			work = work[:len(work)-1]
			for _, d := range x.Deps {
				w := d.Group
				if w == nil || mark[w] == gen {
					continue
				}
				r, known := memo[pair{w, h}]
				if w == h || known && r {
					found = true
					break
				}
				mark[w] = gen
				if !known {
					visited = append(visited, w)
					work = append(work, w)
				}
			}
		}
		if !found {
			for _, w := range visited {
				memo[pair{w, h}] = false
			}
		}
		memo[pair{g, h}] = found
		return found
	}
}

// visible lists the names a placeholder of op may read.
func visible(p *Plan, g *Group, op *Operation, dependsOn func(g, h *Group) bool) []string {
	var names []string
	for _, in := range p.Inputs {
		names = append(names, in.Name)
	}
	for _, h := range p.Groups {
		for _, o := range h.Operations {
			if o.Output != "" && (h == g && o.Index < op.Index || h != g && dependsOn(g, h)) {
				names = append(names, o.Output)
			}
		}
	}
	return names
}

// order returns the groups in a topological order of their
// dependencies: among the groups whose dependencies have all come, the
// one with the smallest index first — the order in which the seed's
// next_ready_group hands them out when every group succeeds.
func order(p *Plan) []*Group {
	waiting := map[*Group]int{}
	dependents := map[*Group][]*Group{}
	h := &groupHeap{}
	for _, g := range p.Groups {
		seen := map[*Group]bool{}
		for _, d := range g.Deps {
			if !seen[d.Group] {
				seen[d.Group] = true
				waiting[g]++
				dependents[d.Group] = append(dependents[d.Group], g)
			}
		}
		if waiting[g] == 0 {
			heap.Push(h, g)
		}
	}
	var out []*Group
	for h.Len() > 0 {
		g := heap.Pop(h).(*Group)
		out = append(out, g)
		for _, d := range dependents[g] {
			waiting[d]--
			if waiting[d] == 0 {
				heap.Push(h, d)
			}
		}
	}
	if len(out) != len(p.Groups) {
		panic("plan: order of a plan with a cycle")
	}
	return out
}

type groupHeap []*Group

func (h groupHeap) Len() int           { return len(h) }
func (h groupHeap) Less(i, j int) bool { return h[i].Index < h[j].Index }
func (h groupHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *groupHeap) Push(x any)        { *h = append(*h, x.(*Group)) }
func (h *groupHeap) Pop() any {
	old := *h
	g := old[len(old)-1]
	*h = old[:len(old)-1]
	return g
}
