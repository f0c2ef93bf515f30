package grimoire

import (
	"strconv"

	"github.com/genesis-toolchain/genesis/diag"

	"github.com/genesis-toolchain/genesis/ir"
)

// action lowers a venue action: a tool call named venue.action with the
// arguments ("args", by position; named ones by name), the constraints
// (the skill's default_constraints, then `with`, under "constraints")
// and the skill used. In simulate mode (the default) the call is noted
// as simulated and answered by the tools configured (mocks); in cast
// mode each side effect is confirmed first: unless the context says yes,
// the run waits for a confirmation ({"kind": "confirm"}, which suspends
// it; resumed with a payload whose "confirm" is true it goes on, anything
// else fails the action with kind "declined"). A failed call raises.
func (fl *funcLowerer) action(s *ActionStmt) *ir.Value {
	b := fl.b
	venue := s.Venue.Name
	skill := s.SkillDecl
	if s.Using != nil && skill == nil {
		for _, sk := range sectionItems(fl.spell.Skills) {
			if sk.Name.Name == s.Using.Name {
				skill = sk
			}
		}
	}
	if s.SkillDecl != nil && len(s.SkillDecl.Adapters) > 0 {
		venue = s.SkillDecl.Adapters[0].Name // the skill's first adapter (G116)
	}
	name := venue + "." + s.Action.Name
	var pos []*ir.Value
	args := b.Builtin("obj.new")
	for _, a := range s.Args {
		v := fl.expr(a.Value)
		if a.Name != nil {
			args = fl.set(args, a.Name.Name, v)
		} else {
			pos = append(pos, v)
		}
	}
	if len(pos) > 0 {
		args = fl.set(args, "args", fl.list(pos...))
	}
	cons := b.Builtin("obj.new")
	constraint := func(a *Arg) {
		key := a.Name.Name
		if k, ok := constraintKeys[key]; ok {
			key = k
		}
		cons = fl.set(cons, key, fl.expr(a.Value))
	}
	if skill != nil {
		for _, a := range skill.Defaults {
			if a.Name != nil {
				constraint(a)
			}
		}
		args = fl.set(args, "skill", fl.str(skill.Name.Name))
	}
	for _, a := range s.With {
		if a.Name != nil {
			constraint(a)
		}
	}
	if len(s.With) > 0 || (skill != nil && len(skill.Defaults) > 0) {
		args = fl.set(args, "constraints", cons)
	}
	at := s.Pos()
	b.SetPos(at)
	ctx := b.Get(fl.ctx)
	cast := b.Builtin("value.eq", fl.get(ctx, "mode"), fl.str("cast"))
	b.If(cast, nil, func() {
		b.If(b.Op(ir.OpNot, b.Builtin("value.truthy", fl.get(ctx, "yes"))), nil, func() {
			step := fl.step("confirm "+name, at)
			reply := b.Effect(ir.OpWait, step, fl.iters, fl.obj("kind", fl.str("confirm"), "action", fl.str(name), "args", args))
			ok := b.Op(ir.OpOr, b.Builtin("value.eq", reply, b.ConstValue(ir.Literal{Kind: ir.LitBool, Int: 1})),
				b.Builtin("value.truthy", fl.get(fl.get(reply, "payload"), "confirm")))
			b.If(b.Op(ir.OpNot, ok), nil, func() { fl.fail("declined", fl.str(name+" was not confirmed")) }, nil)
		}, nil)
	}, func() {
		fl.note(at, "simulated", fl.str(name))
	})
	b.SetPos(at)
	step := fl.step(name, at)
	r := b.Effect(ir.OpTool, step, fl.iters, fl.str(name), args)
	b.Set(fl.acts, b.Builtin("list.append", b.Get(fl.acts), fl.str(name)))
	return fl.check(r)
}

func sectionItems[T Node](s *Section[T]) []T {
	if s == nil {
		return nil
	}
	return s.Items
}

// advisorNamed returns the advisor declared as name, or nil.
func (fl *funcLowerer) advisorNamed(name string) *Advisor {
	for _, a := range sectionItems(fl.spell.Advisors) {
		if a.Name.Name == name {
			return a
		}
	}
	return nil
}

// advisorOptions builds the llm options of an advisor: its model, system
// prompt and timeout (the statement's wins), and the tools it may call:
// allowed_tools (tool names) and mcp (MCP server names), which the
// runtime offers the model from its tool providers (docs/runtime.md, "MCP
// tools").
func (fl *funcLowerer) advisorOptions(adv *Advisor, timeout Expr) *ir.Value {
	opts := fl.b.Builtin("obj.new")
	words := func(key string, ws []*Word) {
		if len(ws) == 0 {
			return
		}
		vs := make([]*ir.Value, len(ws))
		for i, w := range ws {
			vs[i] = fl.str(w.Text)
		}
		opts = fl.set(opts, key, fl.list(vs...))
	}
	if adv != nil {
		words("allowed_tools", adv.AllowedTools)
		words("mcp", adv.MCP)
	}
	if adv != nil && adv.Model != nil {
		opts = fl.set(opts, "model", fl.expr(adv.Model))
	}
	if adv != nil && adv.SystemPrompt != nil {
		opts = fl.set(opts, "system", fl.expr(adv.SystemPrompt))
	}
	if timeout == nil && adv != nil {
		timeout = adv.Timeout
	}
	if timeout != nil {
		opts = fl.set(opts, "timeout", fl.expr(timeout))
	}
	return opts
}

// advisoryStarted traces advisory_started for an advisory step of the
// advisor adv (nil: none): the advisor, its model and the skills,
// allowed_tools and mcp it declares (grimoire-vm.md, "Advisory
// metadata": the VM SHOULD surface them in advisory-start events so that
// orchestrators can route tools), and the output schema when there is
// one.
func (fl *funcLowerer) advisoryStarted(pos diag.Pos, stepName string, adv *Advisor, schema *ir.Value) {
	b := fl.b
	words := func(ws []*Word) *ir.Value {
		var vs []*ir.Value
		for _, w := range ws {
			vs = append(vs, fl.str(w.Text))
		}
		return fl.list(vs...)
	}
	data := b.Builtin("obj.new")
	if adv != nil {
		data = fl.set(data, "advisor", fl.str(adv.Name.Name))
		if adv.Model != nil {
			data = fl.set(data, "model", fl.expr(adv.Model))
		}
		data = fl.set(data, "skills", words(adv.Skills))
		data = fl.set(data, "allowed_tools", words(adv.AllowedTools))
		data = fl.set(data, "mcp", words(adv.MCP))
	}
	if schema != nil {
		data = fl.set(data, "output_schema", schema)
	}
	b.SetPos(pos)
	b.Effect(ir.OpTrace, fl.step(stepName, pos), fl.iters, fl.str("advisory_started"), data)
}

// advisory lowers an inline advisory prompt (`**…**`) to a boolean
// judgement. When it cannot be resolved (no model, a timeout, an answer
// that is not a boolean) it is the advisor's fallback, else false, and
// the trace notes it.
func (fl *funcLowerer) advisory(e *Advisory, fallback Expr) *ir.Value {
	b := fl.b
	var adv *Advisor
	if e.Via != nil {
		adv = fl.advisorNamed(e.Via.Name)
	}
	opts := fl.advisorOptions(adv, nil)
	fl.advisoryStarted(e.LitPos, "advisory started", adv, nil)
	b.SetPos(e.LitPos)
	step := fl.step("advisory", e.LitPos)
	r := b.Effect(ir.OpJudge, step, fl.iters, fl.str(e.Prompt), opts)
	return b.If(b.Builtin("error.is", r), dyn, func() {
		var fb *ir.Value
		switch {
		case fallback != nil:
			fb = fl.expr(fallback)
		case adv != nil && adv.Fallback != nil:
			fb = fl.expr(adv.Fallback)
		default:
			fb = b.ConstValue(ir.Literal{Kind: ir.LitBool, Int: 0})
		}
		fb = b.Builtin("value.bool", b.Builtin("value.truthy", fb))
		fl.note(e.LitPos, "advisory_fallback", b.Builtin("str.concat", fl.str("the advisory fell back after: "), b.Builtin("error.message", r)))
		b.Yield(fb)
	}, func() { b.Yield(r) })[0]
}

// advise lowers `x = advise advisor: "prompt"`: an llm call with the
// advisor's model, the prompt (and its context, as canonical JSON) and
// the output schema as the option output_schema, a JSON schema
// (jsonSchema). The runtime sends the schema to the model (structured
// output where the provider has it, else in the prompt) and coerces the
// reply to it (runtime/coerce.go: fences unwrapped, JSON parsed, enums
// matched case-insensitively, numbers clamped, strings cut, patterns
// checked), or fails the call. An answer that cannot be had (no model
// configured, a timeout, a reply no coercion makes valid) is the
// fallback, coerced to the schema too (coerce).
func (fl *funcLowerer) advise(s *AdviseStmt) *ir.Value {
	b := fl.b
	adv := fl.advisorNamed(s.Advisor.Name)
	prompt := fl.str(s.Prompt.Value)
	if len(s.Context) > 0 {
		ctx := b.Builtin("obj.new")
		for _, en := range s.Context {
			ctx = fl.set(ctx, en.Key.Name, fl.expr(en.Value))
		}
		prompt = b.Builtin("str.concat", prompt, b.Builtin("str.concat", fl.str("\nContext: "), b.Builtin("json.canonical", ctx)))
	}
	opts := fl.advisorOptions(adv, s.Timeout)
	var schema *ir.Value
	if s.Output != nil {
		schema = fl.jsonSchema(s.Output)
		opts = fl.set(opts, "output_schema", schema)
	}
	fl.advisoryStarted(s.AdvisePos, "advise "+s.Advisor.Name+" started", adv, schema)
	b.SetPos(s.AdvisePos)
	step := fl.step("advise "+s.Advisor.Name, s.AdvisePos)
	r := b.Effect(ir.OpLLM, step, fl.iters, prompt, opts)
	return b.If(b.Builtin("error.is", r), dyn, func() {
		fb := b.UnitValue()
		if s.Fallback != nil {
			fb = fl.expr(s.Fallback)
		} else if adv != nil && adv.Fallback != nil {
			fb = fl.expr(adv.Fallback)
		}
		fl.note(s.AdvisePos, "advisory_fallback", b.Builtin("str.concat", fl.str("advise used its fallback after: "), b.Builtin("error.message", r)))
		if s.Output != nil {
			c := fl.coerce(fb, s.Output)
			b.SetPos(s.AdvisePos)
			b.If(b.Op(ir.OpNot, b.Builtin("value.eq", c, fb)), nil, func() {
				fl.note(s.AdvisePos, "advisory_coerced", b.Builtin("str.concat", fl.str("the fallback coerced to the output schema: "), b.Builtin("json.encode", fb)))
			}, nil)
			fb = c
		}
		b.Yield(fb)
	}, func() {
		if schema != nil {
			b.Yield(r) // parsed and coerced by the run
			return
		}
		isStr := b.Op(ir.OpEq, b.Builtin("value.kind", r), b.Const(ir.I64, 3))
		b.Yield(b.If(isStr, dyn, func() {
			p := b.Builtin("json.parse", b.Builtin("str.trim", r))
			b.Yield(b.If(b.Builtin("error.is", p), dyn, func() { b.Yield(r) }, func() { b.Yield(p) })[0])
		}, func() { b.Yield(r) })[0])
	})[0]
}

// jsonSchema builds the JSON schema of an output schema:
//
//	boolean  {"type": "boolean"}
//	number   {"type": "number", "minimum", "maximum"}
//	enum     {"enum": [values]}
//	string   {"type": "string", "minLength", "maxLength", "pattern"}
//	object   {"type": "object", "properties": {…}, "required": [every field], "additionalProperties": false}
//	array    {"type": "array", "items": …}
//
// The values are the literals CheckSpell allows (an enum's names are strings).
func (fl *funcLowerer) jsonSchema(s *Schema) *ir.Value {
	b := fl.b
	b.SetPos(s.TypePos)
	o := b.Builtin("obj.new")
	opt := func(key string, x Expr) {
		if x != nil {
			o = fl.set(o, key, fl.expr(x))
		}
	}
	switch s.Type {
	case "boolean", "number", "string":
		o = fl.set(o, "type", fl.str(s.Type))
		opt("minimum", s.Min)
		opt("maximum", s.Max)
		opt("minLength", s.MinLength)
		opt("maxLength", s.MaxLength)
		opt("pattern", s.Pattern)
	case "enum":
		var vals []*ir.Value
		for _, x := range s.Values {
			w, _ := wordValue(x) // names or strings (Check): `values: [low, high]`
			vals = append(vals, fl.str(w))
		}
		o = fl.set(o, "enum", fl.list(vals...))
	case "object":
		props := b.Builtin("obj.new")
		var req []*ir.Value
		for _, f := range s.Fields {
			props = fl.set(props, f.Name.Name, fl.jsonSchema(f.Schema))
			req = append(req, fl.str(f.Name.Name))
		}
		o = fl.set(o, "type", fl.str("object"))
		o = fl.set(o, "properties", props)
		o = fl.set(o, "required", fl.list(req...))
		o = fl.set(o, "additionalProperties", b.ConstValue(ir.Literal{Kind: ir.LitBool, Int: 0}))
	case "array":
		o = fl.set(o, "type", fl.str("array"))
		if s.Items != nil {
			o = fl.set(o, "items", fl.jsonSchema(s.Items))
		}
	}
	return o
}

// coerce lowers the coercion of an advise's fallback to its schema, as
// the conformance matrix has it ("fallback true coerced to first enum
// value"); the model's replies are coerced by the run (runtime/coerce.go),
// which refuses what it cannot make valid — a fallback has nothing to
// fall back to, so this coercion always gives a value:
//
//	boolean  its truthiness
//	number   a number (a numeric string or bool converted, else the min or
//	         0), clamped to min and max
//	enum     v when it is one of the values, else the first value
//	string   its string rendering, cut to max_length
//	object   each field coerced from v's field of that name, in schema order
//	array    each item coerced (a non-list is the empty list)
func (fl *funcLowerer) coerce(v *ir.Value, s *Schema) *ir.Value {
	b := fl.b
	b.SetPos(s.TypePos)
	switch s.Type {
	case "boolean":
		return b.Builtin("value.bool", b.Builtin("value.truthy", v))
	case "number":
		n := b.CallSym("grim.to_number", dyn, v)[0]
		def := b.NumberValue(0)
		if s.Min != nil {
			def = fl.expr(s.Min)
		}
		n = b.If(b.Builtin("error.is", n), dyn, func() { b.Yield(def) }, func() { b.Yield(n) })[0]
		if s.Min != nil {
			n = b.CallSym("grim.max", dyn, fl.list(n, fl.expr(s.Min)))[0]
		}
		if s.Max != nil {
			n = b.CallSym("grim.min", dyn, fl.list(n, fl.expr(s.Max)))[0]
		}
		return n
	case "enum":
		if len(s.Values) == 0 {
			return v
		}
		var vals []*ir.Value
		for _, x := range s.Values {
			w, _ := wordValue(x)
			vals = append(vals, fl.str(w))
		}
		in := b.Builtin("value.contains", fl.list(vals...), v)
		return b.If(in, dyn, func() { b.Yield(v) }, func() { b.Yield(vals[0]) })[0]
	case "string":
		str := b.Builtin("value.string", v)
		if v.Type == ir.Dyn {
			str = b.If(b.Op(ir.OpEq, b.Builtin("value.kind", v), b.Const(ir.I64, 0)), dyn, func() { b.Yield(fl.str("")) }, func() { b.Yield(str) })[0]
		}
		if s.MaxLength != nil {
			str = b.Builtin("str.slice", str, b.Const(ir.I64, 0), b.Builtin("num.to_int", fl.expr(s.MaxLength)))
		}
		return str
	case "object":
		o := b.Builtin("obj.new")
		for _, f := range s.Fields {
			o = fl.set(o, f.Name.Name, fl.coerce(fl.get(v, f.Name.Name), f.Schema))
		}
		return o
	case "array":
		if s.Items == nil {
			return v
		}
		out := fl.newVar("items", ir.Dyn)
		b.Set(out, b.Builtin("list.new"))
		isList := b.Op(ir.OpEq, b.Builtin("value.kind", v), b.Const(ir.I64, 4))
		b.If(isList, nil, func() {
			i := fl.newVar("i", ir.I64)
			b.Set(i, b.Const(ir.I64, 0))
			n := b.Builtin("list.len", v)
			b.Loop(b.NewLabel("items"), nil, nil, func(label string, _ []*ir.Value) {
				iv := b.Get(i)
				b.If(b.Op(ir.OpGeS, iv, n), nil, func() { b.Break(label) }, nil)
				item := fl.coerce(b.Builtin("list.get", v, iv), s.Items)
				b.Set(out, b.Builtin("list.append", b.Get(out), item))
				b.Set(i, b.Op(ir.OpAdd, iv, b.Const(ir.I64, 1)))
				b.Continue(label)
			})
		}, nil)
		return b.Get(out)
	}
	return v
}

// stageValue runs a stage's body for one item and returns what it
// computes: the value of the body's last assignment, or def when it
// assigns nothing (a body of `pass`).
func (fl *funcLowerer) stageValue(st *Stage, def *ir.Value) *ir.Value {
	fl.stmts(st.Body)
	var last *Ident
	for _, s := range st.Body {
		switch s := s.(type) {
		case *AssignStmt:
			last = s.Target
		case *ActionStmt:
			last = s.Target
		case *AdviseStmt:
			last = s.Target
		case *PipelineStmt:
			last = s.Target
		}
	}
	if st.Arg != nil && st.Op.Name != "reduce" && st.Op.Name != "take" && st.Op.Name != "skip" {
		return fl.expr(st.Arg)
	}
	if last == nil {
		return def
	}
	return fl.ident(last)
}

// pipeline lowers `source | stage: body | …`. Each stage binds item and
// index (and acc) in the body's variables. filter and where keep the
// items whose body (or argument) is truthy, map and pmap replace each by
// its body's value (pmap running the bodies concurrently), reduce(init) folds into acc and yields [acc] (as the
// reference runtime does), take and skip slice, sort orders by its key
// (the item when none), stably, asc by default.
func (fl *funcLowerer) pipeline(s *PipelineStmt) *ir.Value {
	b := fl.b
	cur := fl.newVar("pipe", ir.Dyn)
	b.Set(cur, fl.expr(s.Source))
	for _, st := range s.Stages {
		st := st
		b.SetPos(st.PipePos)
		in := b.Get(cur)
		isList := b.Op(ir.OpEq, b.Builtin("value.kind", in), b.Const(ir.I64, 4))
		b.If(b.Op(ir.OpNot, isList), nil, func() { fl.fail("type", fl.str(st.Op.Name+" needs a list")) }, nil)
		n := b.Builtin("list.len", in)
		op := st.Op.Name
		switch op {
		case "take", "skip":
			k := b.Const(ir.I64, 0)
			if st.Arg != nil {
				k = b.Builtin("num.to_int", fl.expr(st.Arg))
			}
			from, to := b.Const(ir.I64, 0), k
			if op == "skip" {
				from, to = k, n
			}
			b.Set(cur, fl.slice(in, from, to))
			continue
		case "pmap":
			b.Set(cur, fl.pmap(st, in, n))
			continue
		}
		out := fl.newVar("out", ir.Dyn)
		keys := fl.newVar("keys", ir.Dyn)
		b.Set(out, b.Builtin("list.new"))
		b.Set(keys, b.Builtin("list.new"))
		if op == "reduce" {
			b.Set(out, fl.expr(st.Arg))
		}
		fl.stageLoop(st, in, n, out, keys)
		switch op {
		case "reduce":
			b.Set(cur, fl.list(b.Get(out)))
		case "sort":
			sorted := b.Builtin("list.sort_by", b.Get(out), b.Get(keys))
			if st.Order != nil && st.Order.Name == "desc" {
				sorted = fl.reverse(sorted)
			}
			b.Set(cur, sorted)
		default:
			b.Set(cur, b.Get(out))
		}
	}
	return b.Get(cur)
}

// stageLoop runs a stage's body on every item of in (n of them),
// collecting into out (and keys, for sort).
func (fl *funcLowerer) stageLoop(st *Stage, in, n *ir.Value, out, keys *ir.Local) {
	b := fl.b
	op := st.Op.Name
	i := fl.newVar("i", ir.I64)
	b.Set(i, b.Const(ir.I64, 0))
	b.Loop(b.NewLabel("stage"), nil, nil, func(label string, _ []*ir.Value) {
		iv := b.Get(i)
		b.If(b.Op(ir.OpGeS, iv, n), nil, func() { b.Break(label) }, nil)
		b.SetPos(st.PipePos)
		item := b.Builtin("list.get", in, iv)
		fl.bind(&Ident{Name: "item"}, item)
		fl.bind(&Ident{Name: "index"}, b.Builtin("num.from_int", iv))
		if op == "reduce" {
			fl.bind(&Ident{Name: "acc"}, b.Get(out))
		}
		fl.iters = append(fl.iters, iv)
		switch op {
		case "filter", "where":
			keep := fl.stageValue(st, b.ConstValue(ir.Literal{Kind: ir.LitBool, Int: 1}))
			b.If(b.Builtin("value.truthy", keep), nil, func() { b.Set(out, b.Builtin("list.append", b.Get(out), item)) }, nil)
		case "map":
			b.Set(out, b.Builtin("list.append", b.Get(out), fl.stageValue(st, item)))
		case "reduce":
			b.Set(out, fl.stageValue(st, b.Get(out)))
		case "sort":
			fl.stmts(st.Body)
			key := item
			if st.By != nil {
				key = fl.expr(st.By)
			}
			b.Set(out, b.Builtin("list.append", b.Get(out), item))
			b.Set(keys, b.Builtin("list.append", b.Get(keys), key))
		}
		fl.iters = fl.iters[:len(fl.iters)-1]
		b.Set(i, b.Op(ir.OpAdd, iv, b.Const(ir.I64, 1)))
		b.Continue(label)
	})
}

// pmapLimit bounds the bodies a pmap stage runs at once (as VVM's pmap
// does): a map over a long list must not start hundreds of model calls
// together.
const pmapLimit = 8

// pmapResult is the variable a pmap branch leaves its body's value in; it
// never reaches the spell's variables.
const pmapResult = "$pmap"

// pmap lowers a pmap stage over the list in (n items): one branch per
// item, run concurrently by the IR's parallel.each (at most pmapLimit at
// once), each on the variables and state of the stage's start with item
// and index bound, its value the body's value as in map. The results are
// in the items' order, not the order the branches finished. The branches'
// writes to variables and state are applied in item order, as a parallel
// block's are; when a body fails, the stage fails with the first failure
// in item order (after every branch has run), and no write is kept.
func (fl *funcLowerer) pmap(st *Stage, in, n *ir.Value) *ir.Value {
	b := fl.b
	fl.l.nfuncs++
	name := "pmap" + strconv.Itoa(fl.l.nfuncs)
	fl.l.body(name, fl.spell, st.PipePos, func(bl *funcLowerer) {
		frame := bl.f.Params[0]
		bl.bind(&Ident{Name: "item"}, bl.get(frame, "item"))
		bl.bind(&Ident{Name: "index"}, bl.get(frame, "index"))
		v := bl.stageValue(st, bl.get(frame, "item"))
		if !bl.b.Terminated() {
			bl.b.Set(bl.env, bl.set(bl.b.Get(bl.env), pmapResult, v))
		}
	})
	b.SetPos(st.PipePos)
	env0, st0, ctx := b.Get(fl.env), b.Get(fl.st), b.Get(fl.ctx)
	// Each branch's frame: what the body function reads (env, st, ctx)
	// plus its item and index.
	frames := fl.newVar("frames", ir.Dyn)
	i := fl.newVar("i", ir.I64)
	b.Set(frames, b.Builtin("list.new"))
	b.Set(i, b.Const(ir.I64, 0))
	b.Loop(b.NewLabel("pack"), nil, nil, func(label string, _ []*ir.Value) {
		iv := b.Get(i)
		b.If(b.Op(ir.OpGeS, iv, n), nil, func() { b.Break(label) }, nil)
		f := fl.obj("env", env0, "st", st0, "ctx", ctx, "item", b.Builtin("list.get", in, iv), "index", b.Builtin("num.from_int", iv))
		b.Set(frames, b.Builtin("list.append", b.Get(frames), f))
		b.Set(i, b.Op(ir.OpAdd, iv, b.Const(ir.I64, 1)))
		b.Continue(label)
	})
	step := fl.step("pmap", st.PipePos)
	res := b.ParallelEach(step, fl.iters, b.Const(ir.I64, pmapLimit), b.Get(frames), name)
	// The first failure in item order fails the stage.
	b.Set(i, b.Const(ir.I64, 0))
	b.Loop(b.NewLabel("pmaperr"), nil, nil, func(label string, _ []*ir.Value) {
		iv := b.Get(i)
		b.If(b.Op(ir.OpGeS, iv, n), nil, func() { b.Break(label) }, nil)
		e := fl.get(b.Builtin("list.get", res, iv), "err")
		b.If(b.Builtin("error.is", e), nil, func() { fl.raise(e) }, nil)
		b.Set(i, b.Op(ir.OpAdd, iv, b.Const(ir.I64, 1)))
		b.Continue(label)
	})
	out := fl.newVar("out", ir.Dyn)
	b.Set(out, b.Builtin("list.new"))
	b.Set(i, b.Const(ir.I64, 0))
	b.Loop(b.NewLabel("pmapjoin"), nil, nil, func(label string, _ []*ir.Value) {
		iv := b.Get(i)
		b.If(b.Op(ir.OpGeS, iv, n), nil, func() { b.Break(label) }, nil)
		r := b.Builtin("list.get", res, iv)
		envI := fl.get(r, "env")
		b.Set(out, b.Builtin("list.append", b.Get(out), fl.get(envI, pmapResult)))
		b.Set(fl.env, b.CallSym("grim.merge", dyn, b.Get(fl.env), env0, envI)[0])
		b.Set(fl.st, b.CallSym("grim.merge", dyn, b.Get(fl.st), st0, fl.get(r, "st"))[0])
		b.Set(i, b.Op(ir.OpAdd, iv, b.Const(ir.I64, 1)))
		b.Continue(label)
	})
	b.Set(fl.env, fl.dropKey(b.Get(fl.env), pmapResult))
	return b.Get(out)
}

// slice is the elements of list l from index from up to to, clamped.
func (fl *funcLowerer) slice(l, from, to *ir.Value) *ir.Value {
	b := fl.b
	out := fl.newVar("slice", ir.Dyn)
	i := fl.newVar("i", ir.I64)
	b.Set(out, b.Builtin("list.new"))
	b.Set(i, from)
	n := b.Builtin("list.len", l)
	b.Loop(b.NewLabel("slice"), nil, nil, func(label string, _ []*ir.Value) {
		iv := b.Get(i)
		b.If(b.Op(ir.OpOr, b.Op(ir.OpGeS, iv, to), b.Op(ir.OpGeS, iv, n)), nil, func() { b.Break(label) }, nil)
		b.If(b.Op(ir.OpGeS, iv, b.Const(ir.I64, 0)), nil, func() {
			b.Set(out, b.Builtin("list.append", b.Get(out), b.Builtin("list.get", l, iv)))
		}, nil)
		b.Set(i, b.Op(ir.OpAdd, iv, b.Const(ir.I64, 1)))
		b.Continue(label)
	})
	return b.Get(out)
}

// reverse is list l backwards.
func (fl *funcLowerer) reverse(l *ir.Value) *ir.Value {
	b := fl.b
	out := fl.newVar("rev", ir.Dyn)
	i := fl.newVar("i", ir.I64)
	b.Set(out, b.Builtin("list.new"))
	b.Set(i, b.Op(ir.OpSub, b.Builtin("list.len", l), b.Const(ir.I64, 1)))
	b.Loop(b.NewLabel("rev"), nil, nil, func(label string, _ []*ir.Value) {
		iv := b.Get(i)
		b.If(b.Op(ir.OpLtS, iv, b.Const(ir.I64, 0)), nil, func() { b.Break(label) }, nil)
		b.Set(out, b.Builtin("list.append", b.Get(out), b.Builtin("list.get", l, iv)))
		b.Set(i, b.Op(ir.OpSub, iv, b.Const(ir.I64, 1)))
		b.Continue(label)
	})
	return b.Get(out)
}

// parallel lowers a parallel block: each branch is a body function run
// by the IR's parallel op (concurrently, with the trace in branch order),
// on the variables and state of the block's start. The join decides
// which branches' results count and whether the block fails:
//
//	all       every branch must succeed (on_fail=continue: the failed
//	          ones are ignored); all their writes are kept
//	any       at least count (default 1) must succeed; their writes are kept
//	majority  more than half must succeed; their writes are kept
//	first     the first branch (in source order) that succeeded; its writes
//	best      the successful branch whose metric is highest (order=max,
//	          the default) or lowest (order=min); its writes
//
// A branch's writes are the variables and state keys it changed; they
// are applied in branch order. A failing block fails with the first
// failed branch's error (kind "parallel" when none failed but too few
// succeeded).
func (fl *funcLowerer) parallel(s *ParallelStmt) {
	b := fl.b
	var names []string
	for _, br := range s.Branches {
		br := br
		fl.l.nfuncs++
		name := "branch" + strconv.Itoa(fl.l.nfuncs) + "." + br.Name.Name
		fl.l.body(name, fl.spell, br.Name.Pos(), func(bl *funcLowerer) {
			bl.stmts(br.Body)
			if s.Metric != nil && !bl.b.Terminated() {
				bl.b.Set(bl.env, bl.set(bl.b.Get(bl.env), "$metric", bl.expr(s.Metric)))
			}
		})
		names = append(names, name)
	}
	join, onFail := "all", "abort"
	if s.Join != nil {
		join = s.Join.Name
	}
	if s.OnFail != nil {
		onFail = s.OnFail.Name
	}
	b.SetPos(s.ParallelPos)
	env0, st0 := b.Get(fl.env), b.Get(fl.st)
	frame := fl.obj("env", env0, "st", st0, "ctx", b.Get(fl.ctx))
	step := fl.step("parallel", s.ParallelPos)
	res := b.Parallel(step, fl.iters, b.Const(ir.I64, 0), frame, names)
	n := len(names)
	oks := make([]*ir.Value, n)
	rs := make([]*ir.Value, n)
	okCount := b.Const(ir.I64, 0)
	firstErr := fl.newVar("perr", ir.Dyn)
	b.Set(firstErr, b.UnitValue())
	for i := range names {
		rs[i] = b.Builtin("list.get", res, b.Const(ir.I64, int64(i)))
		e := fl.get(rs[i], "err")
		oks[i] = b.Op(ir.OpNot, b.Builtin("error.is", e))
		okCount = b.Op(ir.OpAdd, okCount, b.Cast(ir.OpZext, ir.I64, oks[i]))
		b.If(b.Op(ir.OpAnd, b.Op(ir.OpNot, oks[i]), b.Op(ir.OpNot, b.Builtin("error.is", b.Get(firstErr)))), nil, func() {
			b.Set(firstErr, e)
			fl.note(s.ParallelPos, "branch_failed", b.Builtin("str.concat", fl.str("branch "+s.Branches[i].Name.Name+" failed: "), b.Builtin("error.message", e)))
		}, nil)
	}
	tooFew := func(enough *ir.Value) {
		b.If(b.Op(ir.OpNot, enough), nil, func() {
			fe := b.Get(firstErr)
			b.If(b.Builtin("error.is", fe), nil, func() { fl.raise(fe) }, nil)
			fl.fail("parallel", fl.str("parallel join="+join+": too few branches succeeded"))
		}, nil)
	}
	merge := func(i int) {
		envI, stI := fl.get(rs[i], "env"), fl.get(rs[i], "st")
		b.Set(fl.env, b.CallSym("grim.merge", dyn, b.Get(fl.env), env0, envI)[0])
		b.Set(fl.st, b.CallSym("grim.merge", dyn, b.Get(fl.st), st0, stI)[0])
	}
	switch join {
	case "first", "best":
		tooFew(b.Op(ir.OpGtS, okCount, b.Const(ir.I64, 0)))
		chosen := fl.newVar("chosen", ir.I64)
		b.Set(chosen, b.Const(ir.I64, -1))
		best := fl.newVar("best", ir.Dyn)
		b.Set(best, b.UnitValue())
		cmp := ir.OpGtS
		if s.Order != nil && s.Order.Name == "min" {
			cmp = ir.OpLtS
		}
		for i := range names {
			i := i
			none := b.Op(ir.OpEq, b.Get(chosen), b.Const(ir.I64, -1))
			var take *ir.Value
			if join == "first" {
				take = b.Op(ir.OpAnd, oks[i], none)
			} else {
				m := fl.get(fl.get(rs[i], "env"), "$metric")
				better := b.Op(cmp, b.Builtin("value.compare", m, b.Get(best)), b.Const(ir.I64, 0))
				take = b.Op(ir.OpAnd, oks[i], b.Op(ir.OpOr, none, better))
				b.If(take, nil, func() { b.Set(best, m) }, nil)
			}
			b.If(take, nil, func() { b.Set(chosen, b.Const(ir.I64, int64(i))) }, nil)
		}
		c := b.Get(chosen)
		for i := range names {
			i := i
			b.If(b.Op(ir.OpEq, c, b.Const(ir.I64, int64(i))), nil, func() { merge(i) }, nil)
		}
		b.Set(fl.env, fl.dropKey(b.Get(fl.env), "$metric"))
		return
	case "any":
		count := b.Const(ir.I64, 1)
		if s.Count != nil {
			count = b.Builtin("num.to_int", fl.expr(s.Count))
		}
		tooFew(b.Op(ir.OpGeS, okCount, count))
	case "majority":
		tooFew(b.Op(ir.OpGtS, b.Op(ir.OpMul, okCount, b.Const(ir.I64, 2)), b.Const(ir.I64, int64(n))))
	default: // all
		if onFail == "abort" {
			tooFew(b.Op(ir.OpEq, okCount, b.Const(ir.I64, int64(n))))
		}
	}
	for i := range names {
		i := i
		b.If(oks[i], nil, func() { merge(i) }, nil)
	}
}

// dropKey is object o without key (it must be its last key, as the
// $metric a best join adds is).
func (fl *funcLowerer) dropKey(o *ir.Value, key string) *ir.Value {
	b := fl.b
	out := fl.newVar("obj", ir.Dyn)
	i := fl.newVar("i", ir.I64)
	b.Set(out, b.Builtin("obj.new"))
	b.Set(i, b.Const(ir.I64, 0))
	keys := b.Builtin("obj.keys", o)
	n := b.Builtin("list.len", keys)
	b.Loop(b.NewLabel("drop"), nil, nil, func(label string, _ []*ir.Value) {
		iv := b.Get(i)
		b.If(b.Op(ir.OpGeS, iv, n), nil, func() { b.Break(label) }, nil)
		k := b.Builtin("list.get", keys, iv)
		b.If(b.Op(ir.OpNot, b.Builtin("value.eq", k, fl.str(key))), nil, func() {
			b.Set(out, b.Builtin("obj.set", b.Get(out), k, b.Builtin("obj.get", o, k)))
		}, nil)
		b.Set(i, b.Op(ir.OpAdd, iv, b.Const(ir.I64, 1)))
		b.Continue(label)
	})
	return b.Get(out)
}
