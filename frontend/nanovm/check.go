package nanovm

import (
	"fmt"
	"sort"
	"strings"

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
	field *Node // the then/otherwise/next_step node the edge comes from, if any
	why   string
}

// successors returns the edges out of a top-level step, in the order the
// step takes them (for a condition: the then edge, then the otherwise
// edge). This is the one successor rule of the state machine (docs
// /nanovm.md): is_terminal ends the run; a condition goes to its target;
// next_step jumps; otherwise the next step in the array runs, and after
// the last one the run succeeds. A branch target is an ordinary step: it
// follows the same rule.
func (p *Program) successors(s *Step) []edge {
	if s.IsTerminal {
		return []edge{{kind: toEnd}}
	}
	if s.Type == Condition {
		return []edge{p.branch(s, s.Then, "then"), p.branch(s, s.Otherwise, "otherwise")}
	}
	if s.NextStep != nil {
		return []edge{p.jump(s, s.NextStep, "next_step")}
	}
	if s.Index+1 < len(p.Steps) {
		return []edge{{kind: toStep, step: p.Steps[s.Index+1]}}
	}
	return []edge{{kind: toEnd}}
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
// targets, reachability, cycles that cannot be left, and branch targets
// that run on into their sibling.
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
		} else {
			checkTarget(p, s.NextStep, "next_step", subOf, r)
		}
	}

	// Reachability from the first step.
	reached := make([]bool, len(p.Steps))
	work := []*Step{p.Steps[0]}
	reached[0] = true
	for len(work) > 0 {
		s := work[len(work)-1]
		work = work[:len(work)-1]
		for _, e := range p.successors(s) {
			if e.kind == toStep && !reached[e.step.Index] {
				reached[e.step.Index] = true
				work = append(work, e.step)
			}
		}
	}
	for i, s := range p.Steps {
		if !reached[i] {
			r.warnf(s.Field("id"), CodeUnreachable, "step %q is never reached: no path from the first step leads to it, so it is not compiled", s.ID)
		}
	}

	checkCycles(p, reached, r)
	checkFallThrough(p, reached, r)
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
	if c := Closest(target.Text, ids); c != "" {
		msg += fmt.Sprintf(" (did you mean %q?)", c)
	}
	r.warnf(target, CodeTarget, "%s", msg)
}

// checkCycles reports every cycle of reachable steps from which no path
// leads to the end of the run: such a run can only end by failing or by
// exhausting a budget.
func checkCycles(p *Program, reached []bool, r *reporter) {
	n := len(p.Steps)
	// canEnd: the steps from which some path ends the run with success.
	preds := make([][]int, n)
	canEnd := make([]bool, n)
	var work []int
	for _, s := range p.Steps {
		for _, e := range p.successors(s) {
			switch e.kind {
			case toEnd:
				if !canEnd[s.Index] {
					canEnd[s.Index] = true
					work = append(work, s.Index)
				}
			case toStep:
				preds[e.step.Index] = append(preds[e.step.Index], s.Index)
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
	for _, scc := range stronglyConnected(p) {
		if !reached[scc[0]] || canEnd[scc[0]] {
			continue
		}
		cyclic := len(scc) > 1
		if !cyclic {
			for _, e := range p.successors(p.Steps[scc[0]]) {
				if e.kind == toStep && e.step.Index == scc[0] {
					cyclic = true
				}
			}
		}
		if !cyclic {
			continue
		}
		ids := make([]string, len(scc))
		for i, k := range scc {
			ids[i] = fmt.Sprintf("%q", p.Steps[k].ID)
		}
		first := p.Steps[scc[0]]
		what := "step " + ids[0] + " loops on itself"
		if len(ids) > 1 {
			what = "steps " + strings.Join(ids, ", ") + " form a cycle"
		}
		r.errorf(first.Field("id"), CodeCycle, "%s that no path leaves: the run could only end by failing or exhausting a budget (add a condition with a way out, or is_terminal)", what)
	}
}

// stronglyConnected returns the strongly connected components of the
// step graph (Tarjan's algorithm), each sorted by step index, in the
// order of their first steps.
func stronglyConnected(p *Program) [][]int {
	comps := graph.SCC(len(p.Steps), func(v int) []int {
		var out []int
		for _, e := range p.successors(p.Steps[v]) {
			if e.kind == toStep {
				out = append(out, e.step.Index)
			}
		}
		return out
	})
	sort.Slice(comps, func(i, j int) bool { return comps[i][0] < comps[j][0] })
	return comps
}

// checkFallThrough warns when one branch target of a condition, having
// neither is_terminal nor next_step, runs on into the step after it in
// the array, which is the other branch's target: both branches then run.
// (nano-vm's runtime stops after a branch target instead; docs/nanovm.md
// explains why this compiler follows the state machine of the spec.)
func checkFallThrough(p *Program, reached []bool, r *reporter) {
	warned := map[*Step]bool{}
	for _, c := range p.Steps {
		if c.Type != Condition || c.IsTerminal || !reached[c.Index] || c.Then == nil || c.Otherwise == nil {
			continue
		}
		pairs := [][2]*Node{{c.Then, c.Otherwise}, {c.Otherwise, c.Then}}
		for i, pr := range pairs {
			t, o := p.byID[pr[0].Text], p.byID[pr[1].Text]
			if t == nil || o == nil || t == o || warned[t] || t.Type == Condition || t.IsTerminal || t.NextStep != nil {
				continue
			}
			if t.Index+1 < len(p.Steps) && p.Steps[t.Index+1] == o {
				warned[t] = true
				names := [2]string{"then", "otherwise"}
				r.warnf(t.Field("id"), CodeFallThrough,
					"step %q, the %s branch of condition %q, runs on into %q, its %s branch, so both run: give %q is_terminal: true or a next_step",
					t.ID, names[i], c.ID, o.ID, names[1-i], t.ID)
			}
		}
	}
}
