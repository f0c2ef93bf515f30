package nanovm

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/genesis-toolchain/genesis/diag"
)

// StepType is the type of a step.
type StepType string

// The step types.
const (
	LLM       StepType = "llm"
	Tool      StepType = "tool"
	Condition StepType = "condition"
	Parallel  StepType = "parallel"
)

// OnError is what a step does when it fails.
type OnError string

// The on_error policies.
const (
	Fail  OnError = "fail"
	Skip  OnError = "skip"
	Retry OnError = "retry"
)

// Program is a decoded nano-vm program.
type Program struct {
	File        string
	Root        *Node
	Name        string // "unnamed" when absent
	Description string
	Version     string // "1.0" when absent
	Steps       []*Step

	// The budgets; nil when absent (no limit).
	MaxSteps, MaxStalledSteps, MaxTokens *Budget

	byID map[string]*Step // the top-level steps by id (the first of each id)
}

// Budget is one of the program's limits.
type Budget struct {
	N    int64
	Node *Node
}

// Step is one step of a program, or a sub-step of a parallel step.
type Step struct {
	Node   *Node // the step's object
	Index  int   // in Program.Steps, or in the parent's Sub
	Parent *Step // the parallel step of a sub-step; nil at the top level

	ID        string
	Type      StepType
	Prompt    *Template // llm
	System    *Template // llm; nil when absent
	OutputKey string
	Tool      string // tool
	Args      *Node  // tool: an object; nil when absent
	Cond      Expr   // condition
	CondNode  *Node
	Then      *Node // condition: a string node, nil when absent
	Otherwise *Node
	NextStep  *Node   // a string node, nil when absent
	Sub       []*Step // parallel
	// MaxConcurrency bounds the sub-steps of a parallel step that run at
	// once; 0 means no bound.
	MaxConcurrency int64
	OnError        OnError
	onErrorSet     bool
	// MaxRetries is the number of attempts in all under on_error: retry.
	MaxRetries     int64
	IsTerminal     bool
	AllowedOutputs []string // llm; nil when absent
	Timeout        float64  // llm: seconds; 0 when absent
	// OnTimeoutFallback is on_timeout: fallback: a timed-out llm step
	// succeeds with allowed_outputs[0], or "".
	OnTimeoutFallback bool

	valid bool // id and type decoded
}

// Field returns the node of a field of the step's object, or nil. The
// keys of an object are unique (jsontree.Field), so the object's fields
// are looked up in place: a map per step would hold more than the step's
// text (docs/decisions.md, "Grimoire and nano-vm checks in bounded
// memory").
func (s *Step) Field(key string) *Node { return s.Node.Get(key) }

// keyPos returns where the key of a field of the step's object is, or the
// zero position when the object has no such key.
func (s *Step) keyPos(key string) diag.Pos {
	for _, f := range s.Node.Fields {
		if f.Key == key {
			return f.KeyPos
		}
	}
	return diag.Pos{}
}

// StepByID returns the top-level step with the given id, or nil.
func (p *Program) StepByID(id string) *Step { return p.byID[id] }

var programKeys = []string{"name", "description", "version", "steps", "max_steps", "max_stalled_steps", "max_tokens"}

// stepKeys lists every key of a step and the step types it has an effect
// on (empty: all).
var stepKeys = map[string][]StepType{
	"id": nil, "type": nil, "output_key": nil, "on_error": nil, "max_retries": nil,
	"is_terminal": nil, "next_step": nil,
	"prompt": {LLM}, "system": {LLM}, "allowed_outputs": {LLM}, "timeout_seconds": {LLM}, "on_timeout": {LLM},
	"tool": {Tool}, "args": {Tool},
	"condition": {Condition}, "then": {Condition}, "otherwise": {Condition},
	"parallel_steps": {Parallel}, "max_concurrency": {Parallel},
}

func sortedStepKeys() []string {
	keys := make([]string, 0, len(stepKeys))
	for k := range stepKeys {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// article returns "a tool", "an llm", … for a step type.
func article(t StepType) string {
	if t == LLM {
		return "an llm"
	}
	return "a " + string(t)
}

// synonyms are keys of other workflow languages that mean a key of
// nano-vm's.
var synonyms = map[string]string{
	"parameters": "args", "params": "args", "arguments": "args", "inputs": "args",
	"retries": "max_retries", "retry": "on_error", "next": "next_step", "goto": "next_step",
	"else": "otherwise", "if": "condition", "when": "condition", "terminal": "is_terminal",
	"output": "output_key", "timeout": "timeout_seconds", "substeps": "parallel_steps",
	"concurrency": "max_concurrency", "system_prompt": "system",
}

// unknownKey reports a key the schema does not have, suggesting the
// closest known key.
func unknownKey(r *reporter, f Field, path, where string, known []string) {
	msg := fmt.Sprintf("unknown key %q in %s: nano-vm ignores it", f.Key, where)
	s := diag.Closest(f.Key, known)
	if syn, ok := synonyms[f.Key]; ok && s == "" && slices.Contains(known, syn) {
		s = syn
	}
	if s != "" {
		msg += fmt.Sprintf(" (did you mean %q?)", s)
	}
	r.warnAt(f.KeyPos, ChildPath(path, f.Key), CodeUnknownKey, "%s", msg)
}

// decoder decodes the nodes of a document into a Program, reporting
// every mismatch with the schema (reference/nanovm/program.schema.json).
type decoder struct {
	r *reporter
}

func decodeProgram(root *Node, r *reporter) *Program {
	d := &decoder{r: r}
	if root.Kind != Object {
		r.errorf(root, CodeSchema, "a program is an object with a \"steps\" array, not %s", root.Describe())
		return nil
	}
	p := &Program{File: root.Pos.File, Root: root, Name: "unnamed", Version: "1.0", byID: map[string]*Step{}}
	var steps *Node
	for _, f := range root.Fields {
		v := f.Value
		switch f.Key {
		case "name":
			d.str(v, &p.Name)
		case "description":
			d.str(v, &p.Description)
		case "version":
			d.str(v, &p.Version)
		case "steps":
			steps = v
		case "max_steps":
			p.MaxSteps = d.budget(v, 0)
		case "max_stalled_steps":
			p.MaxStalledSteps = d.budget(v, 1)
		case "max_tokens":
			p.MaxTokens = d.budget(v, 0)
		default:
			unknownKey(r, f, root.Path, "the program", programKeys)
		}
	}
	switch {
	case steps == nil:
		r.errorf(root, CodeSchema, "the program has no \"steps\"")
	case steps.Kind != Array:
		r.errorf(steps, CodeSchema, "\"steps\" must be an array of steps, not %s", steps.Describe())
	case len(steps.Items) == 0:
		r.errorf(steps, CodeSchema, "\"steps\" is empty: a program needs at least one step")
	default:
		for i, it := range steps.Items {
			if s := d.step(it, i, nil); s != nil {
				p.Steps = append(p.Steps, s)
			}
		}
		for _, s := range p.Steps {
			d.checkRetries(s)
			for _, sub := range s.Sub {
				d.checkRetries(sub)
			}
		}
	}
	return p
}

// str decodes a string field; null keeps the default.
func (d *decoder) str(n *Node, dst *string) bool {
	switch n.Kind {
	case Null:
		return false
	case String:
		*dst = n.Text
		return true
	}
	d.r.errorf(n, CodeSchema, "expected a string, not %s", n.Describe())
	return false
}

// integer decodes an integer field; null keeps the default.
func (d *decoder) integer(n *Node, dst *int64) bool {
	switch {
	case n.Kind == Null:
		return false
	case n.Kind == Number && n.IsInt:
		*dst = n.Int
		return true
	}
	d.r.errorf(n, CodeSchema, "expected an integer, not %s", n.Describe())
	return false
}

func (d *decoder) boolean(n *Node, dst *bool) bool {
	switch n.Kind {
	case Null:
		return false
	case Bool:
		*dst = n.Bool
		return true
	}
	d.r.errorf(n, CodeSchema, "expected true or false, not %s", n.Describe())
	return false
}

// budget decodes a budget: an integer of at least lo, or null.
func (d *decoder) budget(n *Node, lo int64) *Budget {
	var x int64
	if !d.integer(n, &x) {
		return nil
	}
	if x < lo {
		d.r.errorf(n, CodeSchema, "a budget must be at least %d, not %d", lo, x)
		return nil
	}
	return &Budget{N: x, Node: n}
}

// stepID decodes a target field (then, otherwise, next_step): a step id,
// or null. An empty string counts as absent, as in nano-vm (where "" is
// false), with a warning.
func (d *decoder) target(n *Node) *Node {
	var s string
	if !d.str(n, &s) {
		return nil
	}
	if s == "" {
		d.r.warnf(n, CodeNoEffect, "an empty step id counts as no target")
		return nil
	}
	return n
}

func (d *decoder) step(n *Node, index int, parent *Step) *Step {
	if n.Kind != Object {
		d.r.errorf(n, CodeSchema, "a step is an object, not %s", n.Describe())
		return nil
	}
	s := &Step{Node: n, Index: index, Parent: parent, OnError: Fail, MaxRetries: 3}
	idNode, typeNode := n.Get("id"), n.Get("type")
	okID := false
	if idNode == nil {
		d.r.errorf(n, CodeSchema, "the step has no \"id\"")
	} else if d.str(idNode, &s.ID) {
		okID = true
		if s.ID == "" {
			d.r.errorf(idNode, CodeSchema, "a step id must not be empty")
			okID = false
		}
	} else if idNode.Kind == Null {
		d.r.errorf(idNode, CodeSchema, "a step id must be a string, not null")
	}
	okType := false
	if typeNode == nil {
		d.r.errorf(n, CodeSchema, "the step has no \"type\" (llm, tool, condition or parallel)")
	} else if typeNode.Kind != String {
		d.r.errorf(typeNode, CodeSchema, "the step type must be llm, tool, condition or parallel, not %s", typeNode.Describe())
	} else {
		switch t := StepType(typeNode.Text); t {
		case LLM, Tool, Condition, Parallel:
			s.Type, okType = t, true
		default:
			msg := fmt.Sprintf("unknown step type %q: it must be llm, tool, condition or parallel", typeNode.Text)
			if c := diag.Closest(typeNode.Text, []string{"llm", "tool", "condition", "parallel"}); c != "" {
				msg += fmt.Sprintf(" (did you mean %q?)", c)
			}
			d.r.errorf(typeNode, CodeSchema, "%s", msg)
		}
	}
	s.valid = okID && okType

	for _, f := range n.Fields {
		v := f.Value
		if types, known := stepKeys[f.Key]; !known {
			unknownKey(d.r, f, n.Path, "a step", sortedStepKeys())
			continue
		} else if okType && len(types) > 0 && types[0] != s.Type && !isDefault(f.Key, v) {
			if f.Key == "allowed_outputs" {
				// nano-vm rejects the program.
				d.r.errorf(v, CodeSchema, "allowed_outputs is only for llm steps, not for %s step", article(s.Type))
			} else {
				d.r.warnf(v, CodeNoEffect, "%s has no effect on %s step (it is for %s steps)", f.Key, article(s.Type), types[0])
			}
			continue
		}
		switch f.Key {
		case "prompt":
			var t string
			if d.str(v, &t) {
				s.Prompt = parseTemplate(t, v)
			}
		case "system":
			var t string
			if d.str(v, &t) {
				s.System = parseTemplate(t, v)
			}
		case "output_key":
			d.str(v, &s.OutputKey)
		case "tool":
			d.str(v, &s.Tool)
		case "args":
			switch v.Kind {
			case Object:
				s.Args = v
			case Null:
				d.r.errorf(v, CodeSchema, "args must be an object (omit it for no arguments), not null")
			default:
				d.r.errorf(v, CodeSchema, "args must be an object of argument names and values, not %s", v.Describe())
			}
		case "condition":
			var t string
			if d.str(v, &t) {
				s.CondNode = v
				s.Cond = parseConditionNode(t, v, d.r)
			}
		case "then":
			s.Then = d.target(v)
		case "otherwise":
			s.Otherwise = d.target(v)
		case "next_step":
			s.NextStep = d.target(v)
		case "parallel_steps":
			d.parallel(s, v)
		case "max_concurrency":
			if d.integer(v, &s.MaxConcurrency) && s.MaxConcurrency < 1 {
				d.r.errorf(v, CodeSchema, "max_concurrency must be at least 1 (nano-vm deadlocks on %d)", s.MaxConcurrency)
			}
		case "on_error":
			var t string
			if d.str(v, &t) {
				switch e := OnError(t); e {
				case Fail, Skip, Retry:
					s.OnError, s.onErrorSet = e, true
				default:
					d.r.errorf(v, CodeSchema, "on_error must be fail, skip or retry, not %q", t)
				}
			}
		case "max_retries":
			d.integer(v, &s.MaxRetries)
		case "is_terminal":
			d.boolean(v, &s.IsTerminal)
		case "allowed_outputs":
			d.allowed(s, v)
		case "timeout_seconds":
			switch v.Kind {
			case Null:
			case Number:
				if v.Num <= 0 {
					d.r.errorf(v, CodeSchema, "timeout_seconds must be positive, not %s", v.Text)
				} else {
					s.Timeout = v.Num
				}
			default:
				d.r.errorf(v, CodeSchema, "expected a number of seconds, not %s", v.Describe())
			}
		case "on_timeout":
			var t string
			if d.str(v, &t) {
				switch t {
				case "fail":
				case "fallback":
					s.OnTimeoutFallback = true
				default:
					d.r.warnf(v, CodeNoEffect, "on_timeout is fail or fallback; %q counts as fail", t)
				}
			}
		}
	}
	if s.Type == Parallel {
		inheritPolicies(s)
	}
	if okType {
		d.requireByType(s)
	}
	return s
}

// isDefault reports whether a field holds its default value, so that
// having it on a step of another type is harmless.
func isDefault(key string, v *Node) bool {
	switch {
	case v.Kind == Null:
		return true
	case key == "args" && v.Kind == Object && len(v.Fields) == 0:
		return true
	case key == "parallel_steps" && v.Kind == Array && len(v.Items) == 0:
		return true
	case key == "on_timeout" && v.Kind == String && v.Text == "fail":
		return true
	}
	return false
}

// requireByType checks the fields each step type needs (what nano-vm
// checks when it loads a program) and warns about fields without effect.
func (d *decoder) requireByType(s *Step) {
	n := s.Node
	switch s.Type {
	case LLM:
		if s.Prompt == nil && !d.r.hasErrorAt(s.Field("prompt")) {
			d.r.errorf(n, CodeSchema, "an llm step needs a \"prompt\"")
		}
	case Tool:
		if s.Tool == "" && !d.r.hasErrorAt(s.Field("tool")) {
			d.r.errorf(n, CodeSchema, "a tool step needs a \"tool\" (the tool's name)")
		}
	case Condition:
		if s.CondNode == nil && !d.r.hasErrorAt(s.Field("condition")) {
			d.r.errorf(n, CodeSchema, "a condition step needs a \"condition\"")
		}
		if s.Field("then") == nil && s.Field("otherwise") == nil {
			d.r.errorf(n, CodeSchema, "a condition step needs \"then\" or \"otherwise\" (or both)")
		}
		if v := s.Field("on_error"); v != nil && s.OnError == Retry {
			// nano-vm evaluates it again after each backoff, with the
			// same state: the same failure every time.
			d.r.warnf(v, CodeNoEffect, "on_error retry has no effect on a condition step: evaluating it again gives the same result, so a condition that cannot be evaluated fails the run")
			s.OnError = Fail
		}
		if v := s.Field("next_step"); v != nil && s.NextStep != nil && s.OnError != Skip {
			d.r.warnf(v, CodeNoEffect, "next_step has no effect on a condition step: it goes on at its then or otherwise target (or, with on_error skip, at next_step when the condition cannot be evaluated)")
		}
		if v := s.Field("is_terminal"); v != nil && s.IsTerminal {
			d.r.warnf(v, CodeNoEffect, "is_terminal on a condition step ends the run after the condition is evaluated, before it branches")
		}
	case Parallel:
		if s.Field("parallel_steps") == nil {
			d.r.errorf(n, CodeSchema, "a parallel step needs \"parallel_steps\"")
		}
	}
	if s.Parent != nil {
		if v := s.Field("next_step"); v != nil && s.NextStep != nil {
			d.r.warnf(v, CodeNoEffect, "next_step has no effect on a sub-step: the parallel step goes on when all its sub-steps are done")
		}
		if v := s.Field("is_terminal"); v != nil && s.IsTerminal {
			d.r.warnf(v, CodeNoEffect, "is_terminal has no effect on a sub-step")
		}
	}
}

// checkRetries checks max_retries once the policies of sub-steps are
// inherited.
func (d *decoder) checkRetries(s *Step) {
	v := s.Field("max_retries")
	if v == nil || v.Kind == Null || s.Type == Condition {
		return
	}
	switch {
	case s.OnError != Retry:
		d.r.warnf(v, CodeNoEffect, "max_retries has no effect unless on_error is retry")
	case s.MaxRetries < 1:
		d.r.errorf(v, CodeSchema, "max_retries counts every attempt, the first included: it must be at least 1, not %d", s.MaxRetries)
	}
}

func (d *decoder) parallel(s *Step, v *Node) {
	if v.Kind != Array {
		d.r.errorf(v, CodeSchema, "parallel_steps must be an array of steps, not %s", v.Describe())
		return
	}
	if len(v.Items) == 0 {
		d.r.errorf(v, CodeSchema, "parallel_steps is empty: a parallel step needs at least one sub-step")
		return
	}
	for i, it := range v.Items {
		sub := d.step(it, i, s)
		if sub == nil {
			continue
		}
		if sub.valid && sub.Type != LLM && sub.Type != Tool {
			d.r.errorf(sub.Field("type"), CodeSchema, "a sub-step of a parallel step must be an llm or tool step, not %s", sub.Type)
			sub.valid = false
		}
		s.Sub = append(s.Sub, sub)
	}
}

// inheritPolicies gives the sub-steps of a parallel step its on_error
// and max_retries where they have none of their own.
func inheritPolicies(s *Step) {
	for _, sub := range s.Sub {
		if !sub.onErrorSet {
			sub.OnError = s.OnError
		}
		if v := sub.Field("max_retries"); v == nil || v.Kind == Null {
			sub.MaxRetries = s.MaxRetries
		}
	}
}

func (d *decoder) allowed(s *Step, v *Node) {
	switch v.Kind {
	case Null:
		return
	case Array:
	default:
		d.r.errorf(v, CodeSchema, "allowed_outputs must be an array of strings, not %s", v.Describe())
		return
	}
	if len(v.Items) == 0 {
		d.r.errorf(v, CodeSchema, "allowed_outputs must not be empty")
		return
	}
	out := []string{}
	for _, it := range v.Items {
		if it.Kind != String {
			d.r.errorf(it, CodeSchema, "expected a string, not %s", it.Describe())
			continue
		}
		out = append(out, it.Text)
	}
	s.AllowedOutputs = out
}

// hasErrorAt reports whether an error was already reported at n.
func (r *reporter) hasErrorAt(n *Node) bool {
	if n == nil {
		return false
	}
	for _, d := range r.diags {
		if d.Pos == n.Pos && strings.HasPrefix(d.Msg, n.Path+":") {
			return true
		}
	}
	return false
}
