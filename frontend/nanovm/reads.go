package nanovm

import (
	"fmt"
	"slices"
	"strings"

	"github.com/genesis-toolchain/genesis/frontend/internal/jsontree"
)

// The checks of this file catch what a program reads that it cannot
// have: an output no step can have set yet (N014), and a comparison of
// an llm step's output with a value its allowed_outputs exclude (N015).
// Both are mistakes nano-vm runs without a word — the reference keeps
// its text, or the comparison is always false — and both are common in
// programs a model wrote (docs/planner.md).

// maxReadSteps bounds the programs checkReads looks at: it walks the
// step graph once per step whose output is read, so its cost grows with
// the square of the steps. Programs that large are generated, not
// written by hand or by a model (docs/nanovm.md, "Checks").
const maxReadSteps = 1000

// producers maps each name a reference can read (a step id, an
// output_key) to the steps and sub-steps that set it, in step order.
func producers(p *Program) map[string][]*Step {
	m := map[string][]*Step{}
	for _, s := range p.allSteps() {
		m[s.ID] = append(m[s.ID], s)
		if s.OutputKey != "" && s.OutputKey != s.ID {
			m[s.OutputKey] = append(m[s.OutputKey], s)
		}
	}
	return m
}

// anchor is the top-level step whose run sets a step's output: the
// step, or the parallel step of a sub-step.
func anchor(s *Step) *Step {
	if s.Parent != nil {
		return s.Parent
	}
	return s
}

// checkReads warns (N014) at every $reference to a name only steps that
// cannot have run before the reading step set: none of them reaches the
// reader through the step graph (modes are its reachable nodes). Such a
// reference finds no output; it reads the run's input field of that
// name if there is one, else nothing (its text in a prompt or argument,
// None in a condition). A sub-step's output is set when its parallel
// step has run, so a sub-step cannot read a sibling's.
func checkReads(p *Program, modes []bool, r *reporter) {
	if len(p.Steps) > maxReadSteps {
		return
	}
	prod := producers(p)
	// after[i]: the nodes reachable from step i's reachable nodes by at
	// least one edge, computed once per step whose output is read.
	after := map[int][]bool{}
	reachedAfter := func(s *Step) []bool {
		if a, ok := after[s.Index]; ok {
			return a
		}
		a := make([]bool, len(modes))
		var work []int
		for _, v := range []int{node(s, false), node(s, true)} {
			if !modes[v] {
				continue
			}
			for _, e := range p.successors(s, v%2 == 1) {
				if e.kind == toStep && !a[e.node()] {
					a[e.node()] = true
					work = append(work, e.node())
				}
			}
		}
		for len(work) > 0 {
			v := work[len(work)-1]
			work = work[:len(work)-1]
			for _, e := range p.successors(p.Steps[v/2], v%2 == 1) {
				if e.kind == toStep && !a[e.node()] {
					a[e.node()] = true
					work = append(work, e.node())
				}
			}
		}
		after[s.Index] = a
		return a
	}
	for _, ref := range p.Refs() {
		setters := prod[ref.Ref.Root]
		reader := anchor(ref.Step)
		if len(setters) == 0 || !modes[node(reader, false)] && !modes[node(reader, true)] {
			continue // an input field, or a step that never runs (N005)
		}
		canRun := false
		for _, s := range setters {
			a := reachedAfter(anchor(s))
			if a[node(reader, false)] || a[node(reader, true)] {
				canRun = true
				break
			}
		}
		if canRun {
			continue
		}
		ids := make([]string, len(setters))
		for i, s := range setters {
			ids[i] = quoteID(s.ID)
		}
		who := "step " + ids[0]
		if len(ids) > 1 {
			who = "steps " + strings.Join(ids, ", ")
		}
		why := "no path leads from it to step " + quoteID(reader.ID)
		switch {
		case slices.Contains(setters, ref.Step):
			why = "it is this step's own output, which it does not have yet"
		case anchor(setters[0]) == reader:
			why = "sub-steps of a parallel step run at the same time"
		}
		r.warnAt(ref.Pos, ref.Node.Path, CodeReadBeforeSet,
			"%s is set by %s, which cannot have run before this (%s): it reads only an input field %s, if the run has one (else its text in a prompt or argument, None in a condition)",
			ref.Ref.Text(), who, why, ref.Ref.Root)
	}
}

// checkAllowed warns (N015) at a condition's comparison of an llm
// step's output with a string its allowed_outputs never give: the
// output of a step with allowed_outputs is always one of them (stripped
// of surrounding space; the first on a skip or a timeout fallback), so
// $decision == 'Yes' after allowed_outputs ["yes", "no"] is always
// false, and 'approved' in $decision too. The check reads a reference
// to an output_key or step id that only llm steps with allowed_outputs
// set.
func checkAllowed(p *Program, r *reporter) {
	if !slices.ContainsFunc(p.Steps, func(s *Step) bool { return s.Type == Condition && s.Cond != nil }) {
		return
	}
	prod := producers(p)
	// allowed returns the outputs a reference can read, or nil.
	allowed := func(v *VarRef) []string {
		if len(v.Path) > 0 && !(len(v.Path) == 1 && v.Path[0] == "output") {
			return nil
		}
		setters := prod[v.Root]
		if len(setters) == 0 {
			return nil
		}
		var out []string
		for _, s := range setters {
			if s.Type != LLM || s.AllowedOutputs == nil {
				return nil
			}
			for _, a := range s.AllowedOutputs {
				if !slices.Contains(out, a) {
					out = append(out, a)
				}
			}
		}
		return out
	}
	for _, s := range p.Steps {
		if s.Type != Condition || s.Cond == nil {
			continue
		}
		n := s.CondNode
		walkExpr(s.Cond, func(e Expr) {
			c, ok := e.(*CompareExpr)
			if !ok {
				return
			}
			var ref *VarRef
			var lit *Literal
			substring := false
			switch c.Op {
			case "==", "!=":
				ref, lit = asRefLit(c.X, c.Y)
				if ref == nil {
					ref, lit = asRefLit(c.Y, c.X)
				}
			case "in", "not in":
				ref, lit = asRefLit(c.Y, c.X)
				substring = true
			case "contains":
				ref, lit = asRefLit(c.X, c.Y)
				substring = true
			}
			if ref == nil {
				return
			}
			outs := allowed(ref)
			if outs == nil {
				return
			}
			for _, o := range outs {
				if o == lit.Str || substring && strings.Contains(o, lit.Str) {
					return
				}
			}
			always := "false"
			if c.Op == "!=" || c.Op == "not in" {
				always = "true"
			}
			quoted := make([]string, len(outs))
			for i, o := range outs {
				quoted[i] = "'" + jsontree.Abbreviate(o) + "'"
			}
			what := "never '" + jsontree.Abbreviate(lit.Str) + "'"
			if substring {
				what = "none of which contains '" + jsontree.Abbreviate(lit.Str) + "'"
			}
			msg := fmt.Sprintf("%s is one of %s (allowed_outputs), %s: this comparison is always %s", ref.Text(), strings.Join(quoted, ", "), what, always)
			for _, o := range outs {
				if strings.EqualFold(o, lit.Str) {
					msg += fmt.Sprintf(" (did you mean '%s'?)", jsontree.Abbreviate(o))
					break
				}
			}
			r.warnAt(n.RunePos(lit.off), n.Path, CodeNeverOutput, "%s", msg)
		})
	}
}

// asRefLit returns x as a reference and y as a string literal, when
// they are.
func asRefLit(x, y Expr) (*VarRef, *Literal) {
	v, ok := x.(*VarRef)
	l, ok2 := y.(*Literal)
	if !ok || !ok2 || l.Kind != String {
		return nil, nil
	}
	return v, l
}
