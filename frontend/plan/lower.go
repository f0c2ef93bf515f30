package plan

import (
	"github.com/genesis-toolchain/genesis/frontend/internal/jsontree"

	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/genesis-toolchain/genesis/diag"
	"github.com/genesis-toolchain/genesis/ir"
)

// Lower compiles a checked plan (Check returned no error) to an IR
// module. Its entry is
//
//	func @main(%input: dyn) -> dyn
//
// which runs the groups — a plan of one group inline, a larger plan as
// one parallel block whose branches, the groups in p.Order, each wait
// for the group's dependencies — and returns
// {"statuses": {id: "Done", …}, "outputs": {id: [output, …]}, "values": {name: value}}
// when every group is Done; when a group failed (or was blocked by a
// failed dependency) the run ends with stop "failed" and an error naming
// the groups. docs/plan.md describes the scheme.
func Lower(p *Plan) *ir.Module {
	if p.Order == nil && len(p.Groups) > 0 {
		panic("plan: Lower of a plan with errors")
	}
	l := &lowerer{p: p, m: ir.NewModule(), fetched: map[string]bool{}}
	l.main()
	return l.m
}

// The statuses of a group (the seed's GroupStatus).
const (
	statusTodo       = "Todo"
	statusInProgress = "InProgress"
	statusDone       = "Done"
	statusFailed     = "Failed"
)

// The trace events of a group: completed (Done), failed (it ran and
// failed), skipped (blocked by a failed dependency, it did not run).
const (
	eventCompleted = "completed"
	eventFailed    = "failed"
	eventSkipped   = "skipped"
)

// Names of the functions a module holds besides @main (only those it
// uses), of the tool that fetches contract sources, and of the step of
// the final stop.
const (
	fnSubst    = "plan.subst"
	fnFail     = "plan.fail"
	fnMerge    = "plan.merge"
	sourceTool = "contract_source"
	planStep   = "plan"
	groupsStep = "groups"
	kindPlan   = "plan"
)

// value kinds, as value.kind returns them.
const (
	kindUnit   = 0
	kindObject = 5
)

type lowerer struct {
	p *Plan
	m *ir.Module
	f *ir.Func
	b *ir.Builder

	status, outputs, values, failure, sources *ir.Local
	helpers                                   map[string]*ir.Func

	// shared holds the contracts (by key) that more than one group
	// lists: their sources are kept in $sources for the groups after the
	// first that fetches them. fetched holds those an earlier group of
	// the order lists.
	shared  map[string]bool
	fetched map[string]bool
	// sharedAbove holds, per group, the shared contracts its ancestors
	// list (sharedAbove).
	sharedAbove map[*Group]map[string]bool
}

func (l *lowerer) main() {
	p := l.p
	pos := p.Root.Pos
	l.f = l.m.NewFunc("main", []ir.Type{ir.Dyn}, []ir.Type{ir.Dyn}, pos)
	l.f.Params[0].Name = "input"
	l.b = ir.NewBuilder(l.f)
	b := l.b
	l.status = l.f.NewVar("status", ir.Dyn, pos)
	l.outputs = l.f.NewVar("outputs", ir.Dyn, pos)
	l.values = l.f.NewVar("values", ir.Dyn, pos)
	canFail := false
	for _, g := range p.Groups {
		canFail = canFail || l.canFail(g)
	}
	if canFail {
		l.failure = l.f.NewVar("failure", ir.Dyn, pos)
	}
	l.shared = sharedContracts(p)
	l.sharedAbove = sharedAbove(p, l.shared)
	if len(l.shared) > 0 {
		l.sources = l.f.NewVar("sources", ir.Dyn, pos)
	}

	// Every group starts Todo.
	st := b.Builtin("obj.new")
	for _, g := range p.Groups {
		b.SetPos(g.Node.Pos)
		st = b.Builtin("obj.set", st, b.StringValue(g.ID), b.StringValue(statusTodo))
	}
	b.SetPos(pos)
	b.Set(l.status, st)
	b.Set(l.outputs, b.Builtin("obj.new"))
	b.Set(l.values, b.Builtin("obj.new"))
	if l.sources != nil {
		b.Set(l.sources, b.Builtin("obj.new"))
	}
	l.inputs()

	if len(p.Order) == 1 {
		l.group(p.Order[0])
	} else if len(p.Order) > 1 {
		l.groups()
	}

	b.SetPos(pos)
	if l.failure != nil {
		f := b.Get(l.failure)
		failed := b.Op(ir.OpNe, b.Builtin("value.kind", f), b.Const(ir.I64, kindUnit))
		b.If(failed, nil, func() {
			msg := b.Builtin("str.concat", b.StringValue("execution plan failed: "), f)
			err := b.Builtin("error.new", b.StringValue(kindPlan), msg)
			b.Effect(ir.OpStop, planStep, nil, b.StringValue("failed"), err)
		}, nil)
	}
	res := l.object(
		field{"statuses", b.Get(l.status)},
		field{"outputs", b.Get(l.outputs)},
		field{"values", b.Get(l.values)},
	)
	b.Return(res)
}

// inputs binds the declared inputs the run's input object has.
func (l *lowerer) inputs() {
	if len(l.p.Inputs) == 0 {
		return
	}
	b := l.b
	b.SetPos(l.p.Root.Get("inputs").Pos)
	arg := l.f.Params[0]
	isObj := b.Op(ir.OpEq, b.Builtin("value.kind", arg), b.Const(ir.I64, kindObject))
	in := b.If(isObj, []ir.Type{ir.Dyn}, func() { b.Yield(arg) }, func() { b.Yield(b.Builtin("obj.new")) })[0]
	for _, x := range l.p.Inputs {
		b.SetPos(x.Node.Pos)
		name := b.StringValue(x.Name)
		b.If(b.Builtin("obj.has", in, name), nil, func() {
			b.Set(l.values, b.Builtin("obj.set", b.Get(l.values), name, b.Builtin("obj.get", in, name)))
		}, nil)
	}
}

// ── Concurrent groups ──

// The keys of a group branch's result object.
const (
	keyStatus   = "status"
	keyOutputs  = "outputs"
	keyValues   = "values"
	keySources  = "sources"
	keyFailure  = "failure"
	keyGroupArg = "values" // of the block's argument: the inputs
)

// groups runs the groups as the branches of one parallel block "groups":
// branch i is group p.Order[i], a function of its own that waits for the
// branches of the group's dependencies (earlier in the order), so a
// group starts as soon as its dependencies are done and independent
// groups run at once. A branch receives the block's argument,
// {"values": the inputs}, and its dependencies' results, and returns
// {"status", "outputs", "values", "sources"?, "failure"?}: its view of
// the vars after its group. The results are merged into the vars in the
// order, so the statuses, outputs, values and failure message do not
// depend on timing.
func (l *lowerer) groups() {
	p, b := l.p, l.b
	index := make(map[*Group]int, len(p.Order))
	for i, g := range p.Order {
		index[g] = i
	}
	funcs := make([]string, len(p.Order))
	waits := make([][]int, len(p.Order))
	for i, g := range p.Order {
		waits[i] = depIndices(g, index)
		funcs[i] = l.groupFunc(g, len(waits[i]) > 0)
	}
	b.SetPos(p.Root.Pos)
	arg := l.object(field{keyGroupArg, b.Get(l.values)})
	results := b.ParallelAfter(groupsStep, nil, b.Const(ir.I64, 0), arg, funcs, waits)
	merge := l.helper(fnMerge).Name
	for i, g := range p.Order {
		b.SetPos(g.Node.Pos)
		r := b.Builtin("list.get", results, b.Const(ir.I64, int64(i)))
		get := func(key string) *ir.Value { return b.Builtin("obj.get", r, b.StringValue(key)) }
		b.Set(l.status, b.Builtin("obj.set", b.Get(l.status), b.StringValue(g.ID), get(keyStatus)))
		b.Set(l.outputs, b.CallSym(merge, []ir.Type{ir.Dyn}, b.Get(l.outputs), get(keyOutputs))[0])
		b.Set(l.values, b.CallSym(merge, []ir.Type{ir.Dyn}, b.Get(l.values), get(keyValues))[0])
		if l.canFail(g) {
			f := get(keyFailure)
			failed := b.Op(ir.OpNe, b.Builtin("value.kind", f), b.Const(ir.I64, kindUnit))
			b.If(failed, nil, func() {
				joined := b.CallSym(l.helper(fnFail).Name, []ir.Type{ir.Dyn}, b.Get(l.failure), b.StringValue(""), f)[0]
				b.Set(l.failure, joined)
			}, nil)
		}
	}
}

// depIndices returns the branch indices of g's distinct dependencies,
// ascending.
func depIndices(g *Group, index map[*Group]int) []int {
	var ds []int
	for _, d := range g.Deps {
		i := index[d.Group]
		if !slices.Contains(ds, i) {
			ds = append(ds, i)
		}
	}
	slices.Sort(ds)
	return ds
}

// groupFunc lowers group g into the branch function @group.ID — with a
// second parameter, the list of its dependencies' results, when it has
// dependencies — and returns its name. The function has vars of its own
// by the names of @main's, initialized from the block's argument and the
// dependencies' results, so the group's code is that of a plan run
// inline.
func (l *lowerer) groupFunc(g *Group, waits bool) string {
	// The function is built with the lowerer's function, builder and
	// vars switched to its own; the helpers it builds stay.
	save := *l
	defer func() {
		helpers := l.helpers
		*l = save
		l.helpers = helpers
	}()
	pos := g.Node.Pos
	name := "group." + g.ID
	params := []ir.Type{ir.Dyn}
	if waits {
		params = append(params, ir.Dyn)
	}
	l.f = l.m.NewFunc(name, params, []ir.Type{ir.Dyn}, pos)
	l.f.Params[0].Name = "arg"
	if waits {
		l.f.Params[1].Name = "deps"
	}
	l.b = ir.NewBuilder(l.f)
	b := l.b
	b.SetPos(pos)
	l.status = l.f.NewVar("status", ir.Dyn, pos)
	l.outputs = l.f.NewVar("outputs", ir.Dyn, pos)
	l.values = l.f.NewVar("values", ir.Dyn, pos)
	l.failure, l.sources = nil, nil
	if l.canFail(g) {
		l.failure = l.f.NewVar("failure", ir.Dyn, pos)
		b.Set(l.failure, b.UnitValue())
	}
	if save.sources != nil {
		l.sources = l.f.NewVar("sources", ir.Dyn, pos)
	}
	// The state a group sees: the inputs, and what its dependencies (and
	// theirs, transitively) produced.
	values := b.Builtin("obj.get", l.f.Params[0], b.StringValue(keyGroupArg))
	status := b.Builtin("obj.new")
	var sources *ir.Value
	if l.sources != nil {
		sources = b.Builtin("obj.new")
	}
	merge := l.helper(fnMerge).Name
	seen := map[*Group]bool{}
	k := 0
	for _, d := range g.Deps {
		if seen[d.Group] {
			continue
		}
		seen[d.Group] = true
		b.SetPos(d.Node.Pos)
		r := b.Builtin("list.get", l.f.Params[1], b.Const(ir.I64, int64(k)))
		k++
		get := func(key string) *ir.Value { return b.Builtin("obj.get", r, b.StringValue(key)) }
		status = b.Builtin("obj.set", status, b.StringValue(d.Group.ID), get(keyStatus))
		values = b.CallSym(merge, []ir.Type{ir.Dyn}, values, get(keyValues))[0]
		if sources != nil {
			sources = b.CallSym(merge, []ir.Type{ir.Dyn}, sources, get(keySources))[0]
		}
	}
	b.SetPos(pos)
	b.Set(l.status, status)
	b.Set(l.outputs, b.Builtin("obj.new"))
	b.Set(l.values, values)
	if sources != nil {
		b.Set(l.sources, sources)
	}
	// A shared contract is looked up in the sources before it is fetched
	// when an ancestor lists it: a group sees only its ancestors' sources.
	l.fetched = map[string]bool{}
	for key := range l.sharedAbove[g] {
		l.fetched[key] = true
	}

	l.group(g)

	b.SetPos(pos)
	fs := []field{
		{keyStatus, b.Builtin("obj.get", b.Get(l.status), b.StringValue(g.ID))},
		{keyOutputs, b.Get(l.outputs)},
		{keyValues, b.Get(l.values)},
	}
	if l.sources != nil {
		fs = append(fs, field{keySources, b.Get(l.sources)})
	}
	if l.failure != nil {
		fs = append(fs, field{keyFailure, b.Get(l.failure)})
	}
	b.Return(l.object(fs...))
	return name
}

// sharedAbove returns, for each group, the shared contracts (keys of
// shared) that its ancestors, the groups it depends on directly or not,
// list. Only a shared contract can be listed by an ancestor, so with
// none nothing is computed; else the sets are built once, in the
// order's topological order, each from its dependencies' (a group with
// one dependency that lists none shares that dependency's set): the
// work is linear in the plan for a few shared contracts, where walking
// every group's ancestors was quadratic in a long chain.
func sharedAbove(p *Plan, shared map[string]bool) map[*Group]map[string]bool {
	above := map[*Group]map[string]bool{}
	if len(shared) == 0 {
		return above
	}
	listed := func(g *Group) []string {
		var keys []string
		for _, c := range g.Contracts {
			if !c.Dup && shared[c.key()] {
				keys = append(keys, c.key())
			}
		}
		return keys
	}
	for _, g := range p.Order {
		var set map[string]bool
		owned := false // set is g's own, not a dependency's shared set
		add := func(key string) {
			if set[key] {
				return
			}
			if !owned {
				copied := make(map[string]bool, len(set)+1)
				for k := range set {
					copied[k] = true
				}
				set, owned = copied, true
			}
			set[key] = true
		}
		for _, d := range g.Deps {
			if d.Group == nil {
				continue
			}
			if set == nil {
				set = above[d.Group]
			} else {
				for k := range above[d.Group] {
					add(k)
				}
			}
			for _, k := range listed(d.Group) {
				add(k)
			}
		}
		above[g] = set
	}
	return above
}

// canFail reports whether a group can end Failed: it has dependencies
// (that may fail), operations or contracts (whose effects may).
func (l *lowerer) canFail(g *Group) bool {
	return len(g.Deps) > 0 || len(g.Operations) > 0 || len(g.Contracts) > 0
}

// sharedContracts returns the keys of the contracts listed by more than
// one group.
func sharedContracts(p *Plan) map[string]bool {
	groups := map[string]int{}
	for _, g := range p.Groups {
		for _, c := range g.Contracts {
			if !c.Dup {
				groups[c.key()]++
			}
		}
	}
	shared := map[string]bool{}
	for k, n := range groups {
		if n > 1 {
			shared[k] = true
		}
	}
	return shared
}

// ── One group ──

// group lowers one group: a block that checks its dependencies, marks it
// InProgress, fetches its contracts' sources, runs its operations and
// marks it Done, yielding the trace event and payload of its end
// ("completed" and {"status": "Done", "outputs": […]}); a blocked or
// failed group leaves the block early with "skipped" and the reason, or
// "failed" and the error. After the block a group that is not Done is
// marked Failed and added to the run's failure, and one trace records
// the group's end.
func (l *lowerer) group(g *Group) {
	b := l.b
	b.SetPos(g.Node.Pos)
	res := b.Block(b.NewLabel("group"), []ir.Type{ir.Dyn, ir.Dyn}, func(out string) {
		l.deps(g, out)
		b.SetPos(g.Node.Pos)
		l.setStatus(g, statusInProgress)
		contracts := l.contracts(g, out)
		b.SetPos(g.Node.Pos)
		opts := l.object(field{"system", b.StringValue(systemMessage(g))})
		if contracts != nil {
			opts = b.Builtin("obj.set", opts, b.StringValue("contracts"), contracts)
		}
		outs := b.Builtin("list.new")
		for _, op := range g.Operations {
			outs = l.operation(op, opts, outs, out)
		}
		b.SetPos(g.Node.Pos)
		l.setStatus(g, statusDone)
		b.Set(l.outputs, b.Builtin("obj.set", b.Get(l.outputs), b.StringValue(g.ID), outs))
		payload := l.object(field{"status", b.StringValue(statusDone)}, field{"outputs", outs})
		b.Yield(b.StringValue(eventCompleted), payload)
	})
	ev, payload := res[0], res[1]
	b.SetPos(g.Node.Pos)
	if l.canFail(g) {
		done := b.Builtin("value.eq", ev, b.StringValue(eventCompleted))
		b.If(b.Op(ir.OpNot, done), nil, func() {
			l.setStatus(g, statusFailed)
			prefix := b.StringValue(fmt.Sprintf("group %q: ", g.ID))
			f := b.CallSym(l.helper(fnFail).Name, []ir.Type{ir.Dyn}, b.Get(l.failure), prefix, payload)[0]
			b.Set(l.failure, f)
		}, nil)
	}
	b.Effect(ir.OpTrace, g.ID, nil, ev, payload)
}

// setStatus sets the group's status in $status.
func (l *lowerer) setStatus(g *Group, status string) {
	b := l.b
	b.Set(l.status, b.Builtin("obj.set", b.Get(l.status), b.StringValue(g.ID), b.StringValue(status)))
}

// deps leaves the group's block with "skipped" when a dependency is not
// Done: it came earlier in the order, so it is Failed (it failed, or was
// blocked itself).
func (l *lowerer) deps(g *Group, out string) {
	b := l.b
	seen := map[*Group]bool{}
	for _, d := range g.Deps {
		if seen[d.Group] {
			continue
		}
		seen[d.Group] = true
		b.SetPos(d.Node.Pos)
		s := b.Builtin("obj.get", b.Get(l.status), b.StringValue(d.Group.ID))
		done := b.Builtin("value.eq", s, b.StringValue(statusDone))
		b.If(b.Op(ir.OpNot, done), nil, func() {
			why := fmt.Sprintf("blocked: dependency %q is %s", d.Group.ID, statusFailed)
			b.Break(out, b.StringValue(eventSkipped), b.StringValue(why))
		}, nil)
	}
}

// contracts fetches the sources of the group's contracts — the seed's
// source fetcher, which must make them available before the model is
// asked — with one contract_source tool call per contract, and returns
// the list of {"chain_id", "address", "name", "source"} the operations'
// options carry; nil when the group lists none. A source that cannot be
// fetched fails the group. A contract that an earlier group of the order
// lists is looked up in $sources first (that group may have been
// blocked, in which case it is fetched here).
func (l *lowerer) contracts(g *Group, out string) *ir.Value {
	if len(g.Contracts) == 0 {
		return nil
	}
	b := l.b
	b.SetPos(g.Field("contracts").Pos)
	list := b.Builtin("list.new")
	for _, c := range g.Contracts {
		if c.Dup {
			continue
		}
		b.SetPos(c.Node.Pos)
		args := l.object(
			field{"chain_id", b.StringValue(c.ChainID)},
			field{"address", b.StringValue(c.Address)},
			field{"name", b.StringValue(c.Name)},
		)
		key := c.key()
		var src *ir.Value
		if l.fetched[key] {
			k := b.StringValue(key)
			has := b.Builtin("obj.has", b.Get(l.sources), k)
			src = b.If(has, []ir.Type{ir.Dyn}, func() {
				b.Yield(b.Builtin("obj.get", b.Get(l.sources), k))
			}, func() {
				b.Yield(l.fetch(g, c, args, out))
			})[0]
			b.SetPos(c.Node.Pos)
		} else {
			src = l.fetch(g, c, args, out)
		}
		l.fetched[key] = true
		list = b.Builtin("list.append", list, b.Builtin("obj.set", args, b.StringValue("source"), src))
	}
	return list
}

// fetch calls contract_source for one contract with args
// {"chain_id", "address", "name"}; on an error it leaves the group's
// block with "failed".
func (l *lowerer) fetch(g *Group, c *Contract, args *ir.Value, out string) *ir.Value {
	b := l.b
	b.SetPos(c.Node.Pos)
	step := g.ID + ".contract." + strconv.Itoa(c.Index)
	r := b.Effect(ir.OpTool, step, nil, b.StringValue(sourceTool), args)
	b.If(b.Builtin("error.is", r), nil, func() {
		what := fmt.Sprintf("contract %q (chain %s, %s): source unavailable: ", c.Name, c.ChainID, c.Address)
		l.fail(out, r, what)
	}, nil)
	if l.shared[c.key()] {
		b.Set(l.sources, b.Builtin("obj.set", b.Get(l.sources), b.StringValue(c.key()), r))
	}
	return r
}

// fail leaves the group's block with "failed" and the error value of an
// effect's error e: its kind, and its message after what.
func (l *lowerer) fail(out string, e *ir.Value, what string) {
	b := l.b
	msg := b.Builtin("str.concat", b.StringValue(what), b.Builtin("error.message", e))
	err := b.Builtin("error.new", b.Builtin("error.kind", e), msg)
	b.Break(out, b.StringValue(eventFailed), err)
}

// operation lowers one operation: its prompt (the text with the
// placeholders replaced by their values), the llm effect, and on success
// the output appended to outs (returned) and bound to its name.
func (l *lowerer) operation(op *Operation, opts, outs *ir.Value, out string) *ir.Value {
	b := l.b
	prompt := l.prompt(op)
	b.SetPos(op.Node.Pos)
	r := b.Effect(ir.OpLLM, op.Step(), nil, prompt, opts)
	b.If(b.Builtin("error.is", r), nil, func() {
		l.fail(out, r, fmt.Sprintf("operation %d (%q) failed: ", op.Index, jsontree.Abbreviate(op.Text)))
	}, nil)
	outs = b.Builtin("list.append", outs, r)
	if op.Output != "" {
		b.SetPos(op.OutputNode.Pos)
		v := b.Builtin("str.trim", r)
		b.Set(l.values, b.Builtin("obj.set", b.Get(l.values), b.StringValue(op.Output), v))
	}
	return outs
}

// prompt builds an operation's prompt: literal text, and for each
// placeholder the string rendering of its value (an input that the run
// was not given stays as written). An operation that binds a name asks
// for that value alone.
func (l *lowerer) prompt(op *Operation) *ir.Value {
	b := l.b
	var acc *ir.Value
	var lit strings.Builder
	add := func(v *ir.Value) {
		if acc == nil {
			acc = v
		} else {
			acc = b.Builtin("str.concat", acc, v)
		}
	}
	flush := func() {
		if lit.Len() > 0 {
			b.SetPos(op.TextNode.Pos)
			add(b.StringValue(lit.String()))
			lit.Reset()
		}
	}
	var values *ir.Value
	for _, part := range op.Parts {
		if part.Name == "" || part.Source == nil {
			if part.Name == "" {
				lit.WriteString(part.Lit)
			} else {
				lit.WriteString("{$" + part.Name + "}")
			}
			continue
		}
		flush()
		b.SetPos(op.TextNode.RunePos(part.Off))
		if values == nil {
			values = b.Get(l.values)
		}
		name := b.StringValue(part.Name)
		switch part.Source.(type) {
		case *Input:
			text := b.StringValue("{$" + part.Name + "}")
			add(b.CallSym(l.helper(fnSubst).Name, []ir.Type{ir.Dyn}, values, name, text)[0])
		default:
			add(b.Builtin("value.string", b.Builtin("obj.get", values, name)))
		}
	}
	if op.Output != "" {
		lit.WriteString(fmt.Sprintf("\n\nReply with the value of {$%s} alone.", op.Output))
	}
	flush()
	return acc
}

// systemMessage is the system message of a group's operations: the
// group's description, all its operations (the seed hands a group's
// operations to the model together) and its contracts.
func systemMessage(g *Group) string {
	var s strings.Builder
	s.WriteString("You carry out one operation of an execution plan; the user message is that operation.\n")
	fmt.Fprintf(&s, "It belongs to group %q", g.ID)
	if d := strings.TrimSpace(g.Description); d != "" {
		s.WriteString(": " + d)
	}
	s.WriteString("\nThe group's operations, in order:")
	for _, op := range g.Operations {
		fmt.Fprintf(&s, "\n%d. %s", op.Index, op.Text)
	}
	first := true
	for _, c := range g.Contracts {
		if c.Dup {
			continue
		}
		if first {
			s.WriteString("\nContracts:")
			first = false
		}
		fmt.Fprintf(&s, "\n- %s at %s on chain %s", c.Name, c.Address, c.ChainID)
	}
	return s.String()
}

// field is one key of an object built by object.
type field struct {
	key string
	v   *ir.Value
}

// object builds an object value from its fields, in order.
func (l *lowerer) object(fs ...field) *ir.Value {
	b := l.b
	o := b.Builtin("obj.new")
	for _, f := range fs {
		o = b.Builtin("obj.set", o, b.StringValue(f.key), f.v)
	}
	return o
}

// ── Helpers ──

// helper returns the module's function of that name, building it on
// first use.
func (l *lowerer) helper(name string) *ir.Func {
	if l.helpers == nil {
		l.helpers = map[string]*ir.Func{}
	}
	if f := l.helpers[name]; f != nil {
		return f
	}
	var f *ir.Func
	switch name {
	case fnSubst:
		f = l.buildSubst()
	case fnFail:
		f = l.buildFail()
	case fnMerge:
		f = l.buildMerge()
	default:
		panic("plan: unknown helper " + name)
	}
	l.helpers[name] = f
	return f
}

func (l *lowerer) newHelper(name string, params []string) (*ir.Func, *ir.Builder) {
	ts := make([]ir.Type, len(params))
	for i := range ts {
		ts[i] = ir.Dyn
	}
	// Helpers have no source position: nothing in them is a construct
	// of the plan.
	f := l.m.NewFunc(name, ts, []ir.Type{ir.Dyn}, diag.Pos{})
	for i, p := range params {
		f.Params[i].Name = p
	}
	return f, ir.NewBuilder(f)
}

// buildSubst builds
//
//	func @plan.subst(%values, %name, %text: dyn) -> dyn
//
// the string rendering of an input's value, or text (the placeholder as
// written) when the run was not given it: the seed keeps placeholders as
// variables unless a value is provided.
func (l *lowerer) buildSubst() *ir.Func {
	f, b := l.newHelper(fnSubst, []string{"values", "name", "text"})
	values, name, text := f.Params[0], f.Params[1], f.Params[2]
	b.If(b.Builtin("obj.has", values, name), nil, func() {
		b.Return(b.Builtin("value.string", b.Builtin("obj.get", values, name)))
	}, nil)
	b.Return(text)
	return f
}

// buildFail builds
//
//	func @plan.fail(%failure, %prefix, %why: dyn) -> dyn
//
// the run's failure message with one more failed group: prefix (`group
// "id": `) and why (an error's message, or a reason string), after the
// failure so far and "; " (failure is unit before the first).
func (l *lowerer) buildFail() *ir.Func {
	f, b := l.newHelper(fnFail, []string{"failure", "prefix", "why"})
	failure, prefix, why := f.Params[0], f.Params[1], f.Params[2]
	isErr := b.Builtin("error.is", why)
	text := b.If(isErr, []ir.Type{ir.Dyn}, func() {
		b.Yield(b.Builtin("error.message", why))
	}, func() {
		b.Yield(b.Builtin("value.string", why))
	})[0]
	msg := b.Builtin("str.concat", prefix, text)
	first := b.Op(ir.OpEq, b.Builtin("value.kind", failure), b.Const(ir.I64, kindUnit))
	b.If(first, nil, func() { b.Return(msg) }, nil)
	b.Return(b.Builtin("str.concat", b.Builtin("str.concat", failure, b.StringValue("; ")), msg))
	return f
}

// buildMerge builds
//
//	func @plan.merge(%into, %from: dyn) -> dyn
//
// object into with every key of object from set to from's value, in
// from's key order.
func (l *lowerer) buildMerge() *ir.Func {
	f, b := l.newHelper(fnMerge, []string{"into", "from"})
	into, from := f.Params[0], f.Params[1]
	keys := b.Builtin("obj.keys", from)
	n := b.Builtin("list.len", keys)
	out := b.Loop(b.NewLabel("key"), []*ir.Value{b.Const(ir.I64, 0), into}, []ir.Type{ir.Dyn}, func(label string, ps []*ir.Value) {
		i, acc := ps[0], ps[1]
		b.If(b.Op(ir.OpGeS, i, n), nil, func() { b.Break(label, acc) }, nil)
		k := b.Builtin("list.get", keys, i)
		next := b.Builtin("obj.set", acc, k, b.Builtin("obj.get", from, k))
		b.Continue(label, b.Op(ir.OpAdd, i, b.Const(ir.I64, 1)), next)
	})[0]
	b.Return(out)
	return f
}
