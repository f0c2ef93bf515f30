package nanovm

import (
	"fmt"
	"sort"
	"strings"

	"github.com/genesis-toolchain/genesis/diag"
	"github.com/genesis-toolchain/genesis/internal/graph"
)

// edgeKind is where control goes after a step.
type edgeKind uint8

const (
	toStep edgeKind = iota // to Step
	toEnd                  // the run ends with status success
	toFail                 // the run fails: a target that names no step, or a missing branch
)

// edge is one way control can leave a step.
type edge struct {
	kind  edgeKind
	step  *Step // toStep
	via   bool  // toStep: the step is entered as a condition's branch target
	field *Node // the then/otherwise/next_step node the edge comes from, if any
	why   string
}

// successors returns the edges out of a top-level step, in the order the
// step takes them (for a condition: the then edge, then the otherwise
// edge); via says whether the step was entered as a condition's branch
// target. This is nano-vm's successor rule (docs/nanovm.md, "The state
// machine"): is_terminal ends the run; a condition goes to its target,
// which is entered as a branch target — unless the condition was itself
// entered as one, in which case its target is entered as an ordinary
// step (nano-vm restarts its loop there); next_step jumps; a branch
// target without next_step ends the run with success; otherwise the next
// step in the array runs, and after the last one the run succeeds.
//
// A condition with on_error skip has a third edge, taken when its
// evaluation fails: the step is skipped and control goes on as after any
// skipped step (next_step, the end of the run for a branch target, or the
// next step of the array), as in nano-vm's loop for a step entered
// ordinarily.
func (p *Program) successors(s *Step, via bool) []edge {
	if s.IsTerminal {
		return []edge{{kind: toEnd}}
	}
	if s.Type == Condition {
		then, otherwise := p.branch(s, s.Then, "then"), p.branch(s, s.Otherwise, "otherwise")
		then.via, otherwise.via = !via, !via
		if s.OnError == Skip {
			return []edge{then, otherwise, p.plainSuccessor(s, via)}
		}
		return []edge{then, otherwise}
	}
	return []edge{p.plainSuccessor(s, via)}
}

// plainSuccessor is where control goes after a step that does not branch
// (or a condition that was skipped): next_step, the end of the run for a
// branch target, the next step of the array, or the end.
func (p *Program) plainSuccessor(s *Step, via bool) edge {
	if s.NextStep != nil {
		return p.jump(s, s.NextStep, "next_step")
	}
	if via {
		return edge{kind: toEnd}
	}
	if s.Index+1 < len(p.Steps) {
		return edge{kind: toStep, step: p.Steps[s.Index+1]}
	}
	return edge{kind: toEnd}
}

// A node of the step graph is a step and the way it is entered:
// 2*index for an ordinary entry, 2*index+1 for an entry as a branch
// target.
func node(s *Step, via bool) int {
	if via {
		return 2*s.Index + 1
	}
	return 2 * s.Index
}

func (e edge) node() int { return node(e.step, e.via) }

// reachedModes marks the nodes of the step graph reachable from the
// first step (entered ordinarily).
func (p *Program) reachedModes() []bool {
	reached := make([]bool, 2*len(p.Steps))
	reached[0] = true
	work := []int{0}
	for len(work) > 0 {
		v := work[len(work)-1]
		work = work[:len(work)-1]
		for _, e := range p.successors(p.Steps[v/2], v%2 == 1) {
			if e.kind == toStep && !reached[e.node()] {
				reached[e.node()] = true
				work = append(work, e.node())
			}
		}
	}
	return reached
}

func (p *Program) branch(s *Step, target *Node, field string) edge {
	if target == nil {
		return edge{kind: toFail, why: fmt.Sprintf("step '%s': condition produced no branch target (it has no %s)", s.ID, field)}
	}
	return p.jump(s, target, field)
}

func (p *Program) jump(s *Step, target *Node, field string) edge {
	if t := p.byID[target.Text]; t != nil {
		return edge{kind: toStep, step: t, field: target}
	}
	return edge{kind: toFail, field: target, why: fmt.Sprintf("step '%s': %s target '%s' is not a step of the program", s.ID, field, target.Text)}
}

// allSteps returns every step, sub-steps after their parallel step.
func (p *Program) allSteps() []*Step {
	var all []*Step
	for _, s := range p.Steps {
		all = append(all, s)
		all = append(all, s.Sub...)
	}
	return all
}

// checkProgram runs the checks nano-vm does not: unique ids, known
// targets, reachability and cycles that cannot be left.
func checkProgram(p *Program, r *reporter) {
	seen := map[string]*Step{}
	subOf := map[string]*Step{}
	for _, s := range p.allSteps() {
		if !s.valid {
			continue
		}
		if prev := seen[s.ID]; prev != nil {
			r.errorf(s.Field("id"), CodeDupID, "duplicate step id %q: the step at line %d has it too (outputs and jumps need unique ids)", s.ID, prev.Node.Pos.Line)
			continue
		}
		seen[s.ID] = s
		if s.Parent == nil {
			p.byID[s.ID] = s
		} else {
			subOf[s.ID] = s.Parent
		}
	}
	if r.hasErrors() {
		return
	}
	for _, s := range p.allSteps() {
		if other := p.byID[s.OutputKey]; other != nil && other != s {
			r.warnf(s.Field("output_key"), CodeNoEffect, "output_key %q is also the id of step %q: once that step has run, $%s names its output, not this one",
				s.OutputKey, other.ID, s.OutputKey)
		}
	}
	for _, s := range p.Steps {
		if s.Type == Condition {
			checkTarget(p, s.Then, "then", subOf, r)
			checkTarget(p, s.Otherwise, "otherwise", subOf, r)
		}
		if s.Type != Condition || s.OnError == Skip {
			checkTarget(p, s.NextStep, "next_step", subOf, r)
		}
	}

	// Reachability from the first step.
	modes := p.reachedModes()
	reached := make([]bool, len(p.Steps))
	for i := range reached {
		reached[i] = modes[2*i] || modes[2*i+1]
	}
	for i, s := range p.Steps {
		if !reached[i] {
			r.warnf(s.Field("id"), CodeUnreachable, "step %q is never reached: no path from the first step leads to it, so it is not compiled", s.ID)
		}
	}

	checkCycles(p, modes, r)
	if !r.hasErrors() {
		checkUpstream(p, modes, r)
		checkReads(p, modes, r)
		checkAllowed(p, r)
	}
}

func checkTarget(p *Program, target *Node, field string, subOf map[string]*Step, r *reporter) {
	if target == nil || p.byID[target.Text] != nil {
		return
	}
	if par := subOf[target.Text]; par != nil {
		r.warnf(target, CodeTarget, "%s names %q, a sub-step of parallel step %q: only top-level steps can be jumped to, so the run fails here", field, target.Text, par.ID)
		return
	}
	ids := make([]string, 0, len(p.Steps))
	for _, s := range p.Steps {
		ids = append(ids, s.ID)
	}
	msg := fmt.Sprintf("%s names %q, which is not a step of the program: the run fails if it gets here", field, target.Text)
	if c := diag.Closest(target.Text, ids); c != "" {
		msg += fmt.Sprintf(" (did you mean %q?)", c)
	}
	r.warnf(target, CodeTarget, "%s", msg)
}

// checkCycles reports every cycle of reachable steps from which no path
// leads to the end of the run: such a run can only end by failing or by
// exhausting a budget. It works on the nodes of the step graph (a step
// and the way it is entered), reached being the reachable nodes.
func checkCycles(p *Program, reached []bool, r *reporter) {
	n := 2 * len(p.Steps)
	succ := func(v int) []edge { return p.successors(p.Steps[v/2], v%2 == 1) }
	// canEnd: the nodes from which some path ends the run with success.
	preds := make([][]int, n)
	canEnd := make([]bool, n)
	var work []int
	for v := 0; v < n; v++ {
		for _, e := range succ(v) {
			switch e.kind {
			case toEnd:
				if !canEnd[v] {
					canEnd[v] = true
					work = append(work, v)
				}
			case toStep:
				preds[e.node()] = append(preds[e.node()], v)
			}
		}
	}
	for len(work) > 0 {
		i := work[len(work)-1]
		work = work[:len(work)-1]
		for _, j := range preds[i] {
			if !canEnd[j] {
				canEnd[j] = true
				work = append(work, j)
			}
		}
	}
	comps := graph.SCC(n, func(v int) []int {
		var out []int
		for _, e := range succ(v) {
			if e.kind == toStep {
				out = append(out, e.node())
			}
		}
		return out
	})
	sort.Slice(comps, func(i, j int) bool { return minOf(comps[i]) < minOf(comps[j]) })
	reported := map[int]bool{}
	for _, scc := range comps {
		v0 := minOf(scc)
		if !reached[v0] || canEnd[v0] {
			continue
		}
		cyclic := len(scc) > 1
		if !cyclic {
			for _, e := range succ(v0) {
				if e.kind == toStep && e.node() == v0 {
					cyclic = true
				}
			}
		}
		if !cyclic {
			continue
		}
		// The steps of the cycle, each once, in array order.
		var idx []int
		seen := map[int]bool{}
		for _, v := range scc {
			if !seen[v/2] {
				seen[v/2] = true
				idx = append(idx, v/2)
			}
		}
		sort.Ints(idx)
		if reported[idx[0]] {
			continue
		}
		reported[idx[0]] = true
		ids := make([]string, len(idx))
		for i, k := range idx {
			ids[i] = fmt.Sprintf("%q", p.Steps[k].ID)
		}
		first := p.Steps[idx[0]]
		what := "step " + ids[0] + " loops on itself"
		if len(ids) > 1 {
			what = "steps " + strings.Join(ids, ", ") + " form a cycle"
		}
		r.errorf(first.Field("id"), CodeCycle, "%s that no path leaves: the run could only end by failing or exhausting a budget (add a condition with a way out, or is_terminal)", what)
	}
}

func minOf(xs []int) int {
	m := xs[0]
	for _, x := range xs[1:] {
		if x < m {
			m = x
		}
	}
	return m
}
