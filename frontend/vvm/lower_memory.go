package vvm

import (
	"github.com/genesis-toolchain/genesis/diag"
	"github.com/genesis-toolchain/genesis/ir"
)

// Agent memory (spec.md §3.5). An agent with memory={scope, key[, path]}
// keeps {"digest": text, "ledger": [{"digest"?, "retain"?}, …]} in the
// run's persistent state under "vvm.memory/SCOPE/KEY" (the host's state
// store, docs/runtime.md, is the memory's file system). A call in mode
// continue (the default) or dry_run loads it and prepends a memory
// context with the Memory Update Protocol to the prompt; every call of
// such an agent strips a ```vvm-memory block from the reply, and in mode
// continue a block holding a JSON object is the patch that replaces the
// digest and appends to the ledger. fresh neither reads nor writes.

// memoryMark opens the patch block in a reply.
const memoryMark = "```vvm-memory"

// memoryProtocol is the Memory Update Protocol snippet of §3.5.4.
const memoryProtocol = "\n\n## Memory Update Protocol\n" +
	"To update this memory, end your reply with a fenced block:\n" +
	memoryMark + "\n" +
	`{"digest": "the whole new digest", "retain": ["a fact worth recalling later"]}` + "\n```\n" +
	"The digest replaces the current one; retained facts are appended to the ledger. " +
	"Never put secrets in memory. In dry_run mode the patch is ignored.\n\n## Task\n"

// mayHaveMemory reports whether an agent call's agent may carry a memory
// binding: false only when it is known statically not to.
func mayHaveMemory(ref *AgentRef) bool {
	if ref.HasWith && kwarg(ref.With, "memory") != nil {
		return true
	}
	switch {
	case ref.Name == nil:
		return kwarg(ref.Inline, "memory") != nil
	case ref.Name.Sym != nil && ref.Name.Sym.Kind == SymAgent && ref.Name.Sym.Agent != nil:
		return kwarg(ref.Name.Sym.Agent.Config, "memory") != nil
	}
	return true // an agent value
}

// memoryCall makes an agent call with memory: call(prompt) makes the
// call itself and returns its result (a VVM value). mode is the call's
// memory_mode option, nil when it has none (continue).
func (fl *funcLowerer) memoryCall(agent, prompt, mode *ir.Value, pos diag.Pos, call func(prompt *ir.Value) *ir.Value) *ir.Value {
	b := fl.b
	if mode == nil {
		mode = b.StringValue("continue")
	}
	key := b.CallSym("vvm.memory_key", dyn, agent)[0]
	bound := b.Op(ir.OpNe, b.Builtin("value.kind", key), b.Const(ir.I64, 0))
	fresh := b.Builtin("value.eq", mode, b.StringValue("fresh"))
	load := b.Op(ir.OpAnd, bound, b.Op(ir.OpNot, fresh))
	b.SetPos(pos)
	res := b.If(load, dyn2, func() {
		mem := b.Effect(ir.OpStateGet, "memory.load", nil, key)
		ctx := b.CallSym("vvm.memory_context", dyn, mem, key)[0]
		b.Yield(mem, b.Builtin("str.concat", ctx, prompt))
	}, func() { b.Yield(b.UnitValue(), prompt) })
	mem, prompt := res[0], res[1]
	r := call(prompt)
	b.SetPos(pos)
	return b.If(bound, dyn, func() {
		split := b.CallSym("vvm.memory_split", dyn2, r)
		text, patch := split[0], split[1]
		apply := b.Op(ir.OpAnd, b.Builtin("value.eq", mode, b.StringValue("continue")),
			b.Op(ir.OpNe, b.Builtin("value.kind", patch), b.Const(ir.I64, 0)))
		b.If(apply, nil, func() {
			b.Effect(ir.OpStatePut, "memory.save", nil, key, b.CallSym("vvm.memory_apply", dyn, mem, patch)[0])
		}, nil)
		b.Yield(text)
	}, func() { b.Yield(r) })[0]
}

// memoryHelpers adds the pure functions of agent memory to the module.
func (l *lowerer) memoryHelpers() {
	l.memoryKey()
	l.memoryContext()
	l.memorySplit()
	l.memoryApply()
}

func (l *lowerer) helperFunc(name string, params []string, results []ir.Type) (*ir.Func, *ir.Builder) {
	ts := make([]ir.Type, len(params))
	for i := range ts {
		ts[i] = ir.Dyn
	}
	f := l.m.NewFunc(name, ts, results, diag.Pos{})
	for i, p := range params {
		f.Params[i].Name = p
	}
	return f, ir.NewBuilder(f)
}

// memoryKey builds @vvm.memory_key(%agent): the state key of the
// agent's memory, "vvm.memory/SCOPE/KEY" (and "@PATH" for scope path),
// or unit when the agent has no memory binding.
func (l *lowerer) memoryKey() {
	f, b := l.helperFunc("vvm.memory_key", []string{"agent"}, dyn)
	m := b.Builtin("obj.get", f.Params[0], b.StringValue("memory"))
	isObj := b.Op(ir.OpEq, b.Builtin("value.kind", m), b.Const(ir.I64, 5))
	b.If(b.Op(ir.OpNot, isObj), nil, func() { b.Return(b.UnitValue()) }, nil)
	get := func(k string) *ir.Value { return b.Builtin("value.string", b.Builtin("obj.get", m, b.StringValue(k))) }
	scope := get("scope")
	key := b.Builtin("str.concat", b.StringValue("vvm.memory/"), scope)
	key = b.Builtin("str.concat", b.Builtin("str.concat", key, b.StringValue("/")), get("key"))
	isPath := b.Builtin("value.eq", scope, b.StringValue("path"))
	key = b.If(isPath, dyn, func() {
		b.Yield(b.Builtin("str.concat", b.Builtin("str.concat", key, b.StringValue("@")), get("path")))
	}, func() { b.Yield(key) })[0]
	b.Return(key)
}

// memoryContext builds @vvm.memory_context(%mem, %key): the memory
// context prepended to the prompt: the digest, the facts retained by the
// last ten patches, and the Memory Update Protocol.
func (l *lowerer) memoryContext() {
	f, b := l.helperFunc("vvm.memory_context", []string{"mem", "key"}, dyn)
	mem, key := f.Params[0], f.Params[1]
	text := b.Builtin("str.concat", b.StringValue("## Agent memory ("), key)
	text = b.Builtin("str.concat", text, b.StringValue(")\n"))
	digest := b.Builtin("obj.get", mem, b.StringValue("digest"))
	empty := b.Op(ir.OpEq, b.Builtin("str.len", digest), b.Const(ir.I64, 0))
	digest = b.If(empty, dyn, func() { b.Yield(b.StringValue("(empty)")) }, func() { b.Yield(digest) })[0]
	text = b.Builtin("str.concat", text, digest)
	ledger := b.Builtin("obj.get", mem, b.StringValue("ledger"))
	n := b.Builtin("list.len", ledger)
	start := b.Op(ir.OpSub, n, b.Const(ir.I64, 10))
	start = b.If(b.Op(ir.OpLtS, start, b.Const(ir.I64, 0)), []ir.Type{ir.I64}, func() { b.Yield(b.Const(ir.I64, 0)) },
		func() { b.Yield(start) })[0]
	text = b.Loop(b.NewLabel("entry"), []*ir.Value{start, text}, dyn, func(label string, ps []*ir.Value) {
		i, acc := ps[0], ps[1]
		b.If(b.Op(ir.OpGeS, i, n), nil, func() { b.Break(label, acc) }, nil)
		retain := b.Builtin("obj.get", b.Builtin("list.get", ledger, i), b.StringValue("retain"))
		m := b.Builtin("list.len", retain)
		acc = b.Loop(b.NewLabel("fact"), []*ir.Value{b.Const(ir.I64, 0), acc}, dyn, func(inner string, qs []*ir.Value) {
			j, acc := qs[0], qs[1]
			b.If(b.Op(ir.OpGeS, j, m), nil, func() { b.Break(inner, acc) }, nil)
			line := b.Builtin("str.concat", b.StringValue("\n- "), b.Builtin("value.string", b.Builtin("list.get", retain, j)))
			b.Continue(inner, b.Op(ir.OpAdd, j, b.Const(ir.I64, 1)), b.Builtin("str.concat", acc, line))
		})[0]
		b.Continue(label, b.Op(ir.OpAdd, i, b.Const(ir.I64, 1)), acc)
	})[0]
	b.Return(b.Builtin("str.concat", text, b.StringValue(memoryProtocol)))
}

// memorySplit builds @vvm.memory_split(%reply) -> (text, patch): the
// reply without its ```vvm-memory block, and the block's JSON object
// (unit when there is no block, or it holds no JSON object: the patch is
// then ignored, as §3.5.5 says).
func (l *lowerer) memorySplit() {
	f, b := l.helperFunc("vvm.memory_split", []string{"reply"}, dyn2)
	reply := f.Params[0]
	const far = 1 << 62
	unit := b.UnitValue()
	i := b.Builtin("str.index", reply, b.StringValue(memoryMark))
	b.If(b.Op(ir.OpLtS, i, b.Const(ir.I64, 0)), nil, func() { b.Return(reply, unit) }, nil)
	after := b.Builtin("str.slice", reply, b.Op(ir.OpAdd, i, b.Const(ir.I64, int64(len([]rune(memoryMark))))), b.Const(ir.I64, far))
	j := b.Builtin("str.index", after, b.StringValue("```"))
	b.If(b.Op(ir.OpLtS, j, b.Const(ir.I64, 0)), nil, func() { b.Return(reply, unit) }, nil)
	body := b.Builtin("str.slice", after, b.Const(ir.I64, 0), j)
	rest := b.Builtin("str.slice", after, b.Op(ir.OpAdd, j, b.Const(ir.I64, 3)), b.Const(ir.I64, far))
	text := b.Builtin("str.trim", b.Builtin("str.concat", b.Builtin("str.slice", reply, b.Const(ir.I64, 0), i), rest))
	patch := b.Builtin("json.parse", body)
	isObj := b.Op(ir.OpEq, b.Builtin("value.kind", patch), b.Const(ir.I64, 5))
	patch = b.If(isObj, dyn, func() { b.Yield(patch) }, func() { b.Yield(unit) })[0]
	b.Return(text, patch)
}

// memoryApply builds @vvm.memory_apply(%mem, %patch): the memory after
// a patch: its digest replaced when the patch has a string digest, and a
// ledger entry with the patch's digest and retain list appended.
func (l *lowerer) memoryApply() {
	f, b := l.helperFunc("vvm.memory_apply", []string{"mem", "patch"}, dyn)
	mem, patch := f.Params[0], f.Params[1]
	digest := b.Builtin("obj.get", patch, b.StringValue("digest"))
	isStr := b.Op(ir.OpEq, b.Builtin("value.kind", digest), b.Const(ir.I64, 3))
	entry := b.Builtin("obj.new")
	entry = b.If(isStr, dyn, func() { b.Yield(b.Builtin("obj.set", entry, b.StringValue("digest"), digest)) },
		func() { b.Yield(entry) })[0]
	retain := b.Builtin("obj.get", patch, b.StringValue("retain"))
	isList := b.Op(ir.OpEq, b.Builtin("value.kind", retain), b.Const(ir.I64, 4))
	entry = b.If(isList, dyn, func() { b.Yield(b.Builtin("obj.set", entry, b.StringValue("retain"), retain)) },
		func() { b.Yield(entry) })[0]
	old := b.Builtin("obj.get", mem, b.StringValue("digest"))
	newDigest := b.If(isStr, dyn, func() { b.Yield(digest) }, func() { b.Yield(old) })[0]
	ledger := b.Builtin("obj.get", mem, b.StringValue("ledger"))
	hasLedger := b.Op(ir.OpEq, b.Builtin("value.kind", ledger), b.Const(ir.I64, 4))
	ledger = b.If(hasLedger, dyn, func() { b.Yield(ledger) }, func() { b.Yield(b.Builtin("list.new")) })[0]
	out := b.Builtin("obj.set", b.Builtin("obj.new"), b.StringValue("digest"), newDigest)
	b.Return(b.Builtin("obj.set", out, b.StringValue("ledger"), b.Builtin("list.append", ledger, entry)))
}
