package nanovm

import (
	"fmt"
	"strings"
)

// checkUpstream warns (N013) wherever the program would run differently
// on nano-vm's own runtime because of a known bug of that runtime
// (../shared/reference/nanovm/NOTES.md §12) which this compiler does not
// reproduce (docs/nanovm.md, "Decisions"): a program written for nano-vm
// must not change behaviour unannounced. Each warning says what nano-vm
// does and what happens here. modes are the reachable nodes of the step
// graph (reachedModes).
func checkUpstream(p *Program, modes []bool, r *reporter) {
	names := stepNames(p)
	viaOf := branchSources(p, modes)
	webhook := readsWebhook(p)
	var anyVia *Step
	for _, s := range p.Steps {
		if modes[node(s, true)] && anyVia == nil {
			anyVia = s
		}
		if modes[node(s, true)] {
			upstreamBranchTarget(p, s, viaOf[s], r)
		}
		if webhook && s.Type == Tool && (modes[node(s, false)] || modes[node(s, true)]) {
			upstreamResume(p, s, modes, r)
		}
		if s.Type == Parallel {
			upstreamParallel(s, r)
		}
		if s.Type == Condition && s.Cond != nil {
			upstreamCondition(names, s, r)
		}
	}
	if from := viaOf[anyVia]; anyVia != nil && from != nil {
		for _, b := range []struct {
			budget *Budget
			key    string
			what   string
		}{
			{p.MaxSteps, "max_steps", "does not check max_steps before a step entered as a branch target (%s, from %s), so a run may take a step past the budget there; here the budget guards every step"},
			{p.MaxTokens, "max_tokens", "does not check max_tokens before a step entered as a branch target (%s, from %s), so a run may spend tokens past the budget there; here the budget guards every step"},
			{p.MaxStalledSteps, "max_stalled_steps", "skips the stall check after a step entered as a branch target (%s, from %s) and drops the stalling step from its trace, so a run stalls later there; here every step is checked"},
		} {
			if b.budget != nil {
				r.warnf(b.budget.Node, CodeUpstream, "nano-vm "+b.what, quoteID(anyVia.ID), quoteID(from.ID))
			}
		}
	}
	upstreamSkipped(p, r)
	upstreamRefs(p, names, r)
}

// branchSources returns, for each step reachable as a branch target, a
// condition that enters it so.
func branchSources(p *Program, modes []bool) map[*Step]*Step {
	from := map[*Step]*Step{}
	for _, s := range p.Steps {
		for _, via := range []bool{false, true} {
			if s.Type != Condition || !modes[node(s, via)] {
				continue
			}
			for _, e := range p.successors(s, via) {
				if e.kind == toStep && e.via && from[e.step] == nil {
					from[e.step] = s
				}
			}
		}
	}
	return from
}

func quoteID(id string) string { return fmt.Sprintf("%q", id) }

// at is the node of a step's field, or the step's when it has none.
func at(s *Step, key string) *Node {
	if n := s.Field(key); n != nil {
		return n
	}
	return s.Node
}

// upstreamBranchTarget: s can be entered as a branch target of cond.
func upstreamBranchTarget(p *Program, s, cond *Step, r *reporter) {
	if cond == nil {
		return
	}
	if s.Type == Condition {
		if s.IsTerminal {
			r.warnf(at(s, "is_terminal"), CodeUpstream, "when condition %q is entered as a branch target (from %q), nano-vm ignores its is_terminal and follows its branch; here the run ends after it, as is_terminal says", s.ID, cond.ID)
			return
		}
		for _, br := range []struct {
			target *Node
			name   string
		}{{s.Then, "then"}, {s.Otherwise, "otherwise"}} {
			if br.target == nil {
				r.warnf(at(s, "id"), CodeUpstream, "when condition %q is entered as a branch target (from %q) and has no %s target to take, nano-vm restarts the program from its first step; here the run fails (condition produced no branch target)", s.ID, cond.ID, br.name)
			}
		}
		if s.OnError == Skip {
			after := "the run ends with success, as after any skipped branch target"
			if s.NextStep != nil {
				after = fmt.Sprintf("the run goes on at its next_step %q", s.NextStep.Text)
			}
			r.warnf(at(s, "on_error"), CodeUpstream, "when condition %q is entered as a branch target (from %q) and cannot be evaluated, nano-vm restarts the program from its first step; here it is skipped and %s", s.ID, cond.ID, after)
		}
		return
	}
	if s.IsTerminal && s.NextStep != nil {
		r.warnf(at(s, "is_terminal"), CodeUpstream, "step %q is a branch target (from %q) with both is_terminal and next_step: nano-vm follows next_step %q; here is_terminal ends the run", s.ID, cond.ID, s.NextStep.Text)
	}
}

// readsWebhook reports whether the program reads the payload or the
// source of a resumption: it is written to be suspended and resumed.
func readsWebhook(p *Program) bool {
	found := false
	is := func(root string) bool { return root == "__webhook__" || root == "__webhook_source__" }
	eachRef(p, func(_ *Step, ref *VarRef, _ *Node, _ refPlace) { found = found || is(ref.Root) })
	for _, s := range p.Steps {
		if s.Cond != nil {
			walkExpr(s.Cond, func(e Expr) {
				if v, ok := e.(*VarRef); ok && is(v.Root) {
					found = true
				}
			})
		}
	}
	return found
}

// upstreamResume: a tool step that may answer "PENDING" in a program
// written to be resumed, whose successor is not the next step of the
// array (nano-vm resumes there whatever the step says: NOTES.md B2).
func upstreamResume(p *Program, s *Step, modes []bool, r *reporter) {
	next := "the end of the program"
	if s.Index+1 < len(p.Steps) {
		next = fmt.Sprintf("step %q", p.Steps[s.Index+1].ID)
	}
	var here string
	switch {
	case s.IsTerminal && s.Index+1 < len(p.Steps):
		here = "the run ends, as is_terminal says"
	case s.NextStep != nil && (s.Index+1 >= len(p.Steps) || s.NextStep.Text != p.Steps[s.Index+1].ID):
		here = fmt.Sprintf("the run goes on at its next_step %q", s.NextStep.Text)
	case s.NextStep == nil && !s.IsTerminal && modes[node(s, true)] && s.Index+1 < len(p.Steps):
		here = "entered as a branch target, the run ends after it"
	default:
		return
	}
	r.warnf(at(s, "tool"), CodeUpstream, "if tool %q answers \"PENDING\", nano-vm resumes the run at %s, the next step of the array; here %s", s.Tool, next, here)
}

// upstreamParallel: nano-vm ignores a sub-step's own policy and
// output_key, and retries a parallel step as a whole (NOTES.md B6).
func upstreamParallel(s *Step, r *reporter) {
	if s.OnError == Retry {
		r.warnf(at(s, "on_error"), CodeUpstream, "nano-vm retries parallel step %q by running every sub-step again, those that succeeded included; here only a sub-step that failed is tried again", s.ID)
	}
	for _, sub := range s.Sub {
		for _, key := range []string{"on_error", "max_retries", "output_key"} {
			if v := sub.Field(key); v != nil && v.Kind != Null {
				r.warnf(v, CodeUpstream, "nano-vm ignores %s on a sub-step (the parallel step's on_error governs every sub-step, and only the sub-step's id names its output); here sub-step %q keeps its own %s", key, sub.ID, key)
			}
		}
	}
}

// upstreamCondition: nano-vm's condition engine reads `contains`
// backwards, drops parentheses, folds and/or left to right, accepts
// `not` only first (NOTES.md B8), and wraps step outputs (B9).
func upstreamCondition(names names, s *Step, r *reporter) {
	n := s.CondNode
	if off := parenOffset(n.Text); off >= 0 {
		r.warnAt(n.RunePos(off), n.Path, CodeUpstream, "nano-vm ignores parentheses in a condition (its README: no grouping), which then reads and/or left to right; here they group")
	}
	walkExpr(s.Cond, func(e Expr) {
		switch e := e.(type) {
		case *CompareExpr:
			if e.Op == "contains" {
				r.warnAt(n.RunePos(e.OpOff), n.Path, CodeUpstream, "nano-vm evaluates `a contains b` as `a in b`; here it is `b in a`, as in English (write it with in to mean the same in both)")
			}
		case *LogicalExpr:
			if y, ok := e.Y.(*LogicalExpr); ok && e.Op == "or" && y.Op == "and" {
				r.warnAt(n.RunePos(e.OpOff), n.Path, CodeUpstream, "nano-vm folds and/or left to right, reading `a or b and c` as `(a or b) and c`; here and binds tighter: `a or (b and c)`")
			}
		case *NotExpr:
			if e.off > leadingSpace(n.Text) {
				r.warnAt(n.RunePos(e.off), n.Path, CodeUpstream, "nano-vm accepts not only at the start of a condition: there this condition cannot be evaluated and the run fails; here it is evaluated")
			}
		case *VarRef:
			if names.ids[e.Root] && !names.keys[e.Root] && (len(e.Path) == 0 || e.Path[0] != "output") {
				r.warnAt(n.RunePos(e.off), n.Path, CodeUpstream, "in nano-vm's conditions %s is the wrapper {\"output\": …} of step %q's output (so %s reads nothing useful there); here it is the output itself: write $%s to mean the same in both",
					e.Text(), e.Root, e.Text(), strings.Join(append([]string{e.Root, "output"}, e.Path...), "."))
			}
		}
	})
}

// names are the ids of the steps and sub-steps (nano-vm keeps every
// output by id) and their output_keys (in nano-vm's conditions the data,
// where output_keys go, wins over the step outputs).
type names struct{ ids, keys map[string]bool }

func stepNames(p *Program) names {
	n := names{ids: map[string]bool{}, keys: map[string]bool{}}
	for _, s := range p.allSteps() {
		n.ids[s.ID] = true
		if s.OutputKey != "" {
			n.keys[s.OutputKey] = true
		}
	}
	return n
}

// parenOffset returns the offset (in runes) of the first parenthesis of
// a condition outside its string literals, or -1.
func parenOffset(src string) int {
	var quote rune
	i := 0
	for _, c := range src {
		switch {
		case quote != 0:
			if c == quote {
				quote = 0
			}
		case c == '\'' || c == '"':
			quote = c
		case c == '(' || c == ')':
			return i
		}
		i++
	}
	return -1
}

func leadingSpace(src string) int {
	i := 0
	for _, c := range src {
		if c != ' ' && c != '\t' && c != '\n' && c != '\r' {
			break
		}
		i++
	}
	return i
}

// refPlace is where a reference is: a prompt or system message, a tool
// argument (depth 1: a value of args; deeper: inside one).
type refPlace struct {
	prompt bool
	depth  int
}

// eachRef calls fn for every $reference of a prompt, system message or
// tool argument string of every step and sub-step, with the string node.
func eachRef(p *Program, fn func(s *Step, ref *VarRef, n *Node, where refPlace)) {
	for _, s := range p.allSteps() {
		for _, t := range []*Template{s.Prompt, s.System} {
			if t == nil {
				continue
			}
			for _, ref := range t.Refs() {
				fn(s, ref, t.Node, refPlace{prompt: true})
			}
		}
		if s.Args != nil {
			var walk func(n *Node, depth int)
			walk = func(n *Node, depth int) {
				switch n.Kind {
				case String:
					for _, ref := range parseTemplate(n.Text, n).Refs() {
						fn(s, ref, n, refPlace{depth: depth})
					}
				case Array:
					for _, it := range n.Items {
						walk(it, depth+1)
					}
				case Object:
					for _, f := range n.Fields {
						walk(f.Value, depth+1)
					}
				}
			}
			walk(s.Args, 0)
		}
	}
}

// upstreamRefs: nano-vm resolves in prompts and arguments only $key of
// the data and $step.path of a step's output, and arguments only at the
// top level of args (NOTES.md B10); the rest stays as written there.
func upstreamRefs(p *Program, names names, r *reporter) {
	eachRef(p, func(s *Step, ref *VarRef, n *Node, where refPlace) {
		pos := n.RunePos(ref.off)
		switch {
		case where.depth > 1:
			r.warnAt(pos, n.Path, CodeUpstream, "nano-vm does not resolve %s inside a nested value of args (only the top-level values of args): it passes the text as written; here it is resolved", ref.Text())
		case !names.ids[ref.Root] && len(ref.Path) > 0:
			r.warnAt(pos, n.Path, CodeUpstream, "nano-vm does not resolve a dotted path into the data (%s) in a prompt or argument: it leaves the text as written; here it is resolved", ref.Text())
		}
	})
}

// upstreamSkipped: nano-vm records nothing for a skipped step, so a later
// $reference to its id or output_key in a prompt or argument stays as
// written; here the skipped step's output is None (decision 3). (In
// conditions both read None.)
func upstreamSkipped(p *Program, r *reporter) {
	skippable := map[string]*Step{}
	for _, s := range p.Steps {
		if s.OnError != Skip || s.Type == Parallel {
			continue // a parallel step under skip succeeds; its sub-steps' None is nano-vm's too
		}
		skippable[s.ID] = s
		if s.OutputKey != "" && skippable[s.OutputKey] == nil {
			skippable[s.OutputKey] = s
		}
	}
	if len(skippable) == 0 {
		return
	}
	eachRef(p, func(s *Step, ref *VarRef, n *Node, _ refPlace) {
		if sk := skippable[ref.Root]; sk != nil && sk != s {
			r.warnAt(n.RunePos(ref.off), n.Path, CodeUpstream, "if step %q is skipped, %s is None here (null in text); nano-vm records nothing for a skipped step and leaves %s as written", sk.ID, ref.Text(), ref.Text())
		}
	})
}
