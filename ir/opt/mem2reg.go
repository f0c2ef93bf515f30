package opt

import "github.com/genesis-toolchain/genesis/ir"

// mem2reg promotes the vars of every function to SSA values, as docs/ir.md
// ("Locals") intends: a var has no address, so its value at each point is
// known from the sets before it.
//
// The pass walks each function in program order with an environment, the
// current value of each var. set updates the environment and disappears;
// get disappears and its uses take the environment's value. Where control
// flow joins, the values of the vars set inside become explicit:
//
//   - an if, switch or block gets one extra result per var set inside it,
//     and every exit (the yield ending a region, a break to the block)
//     passes the var's value there;
//   - a loop gets one extra parameter per var set inside it, initialized
//     with the value before the loop and passed by every continue, and one
//     extra result, passed by every break.
//
// A var read before any set reads its zero value, a constant placed at the
// start of the function. Vars of function type have no constant zero
// value, so they stay vars. The extra parameters and results that only
// carry a value through are removed by copyprop, those nobody reads by
// deadcode.
func mem2reg(m *ir.Module) {
	forEachFunc(m, promote)
}

// promoter is mem2reg's state for one function.
type promoter struct {
	f     *ir.Func
	vars  []*ir.Local    // the promoted vars
	index map[string]int // var name → index in vars
	// mods lists, for each structured op, the indices (ascending) of the
	// promoted vars set inside it.
	mods    map[*ir.Instr][]int
	targets map[string]*ir.Instr // label → loop or block
	subst   map[*ir.Value]*ir.Value
	names   namer
}

func promote(f *ir.Func) {
	p := &promoter{f: f, index: map[string]int{}, mods: map[*ir.Instr][]int{},
		targets: map[string]*ir.Instr{}, subst: map[*ir.Value]*ir.Value{}}
	var keep []*ir.Local
	for _, l := range f.Locals {
		if l.Kind == ir.Var && l.Type.Kind() != ir.KindFunc {
			p.index[l.Name] = len(p.vars)
			p.vars = append(p.vars, l)
		} else {
			keep = append(keep, l)
		}
	}
	if len(p.vars) == 0 {
		return
	}
	p.names = valueNames(f)
	ir.Walk(f.Body, func(in *ir.Instr) {
		if _, ok := p.index[in.Local]; ok && in.Op == ir.OpGet {
			p.names.remove(in.Results[0].Name) // the get disappears
		}
	})
	p.modified(f.Body)
	env := make([]*ir.Value, len(p.vars))
	zeros := make([]*ir.Instr, len(p.vars))
	for i, l := range p.vars {
		zeros[i] = zeroConst(f, l)
		env[i] = zeros[i].Results[0]
	}
	p.region(f.Body, env, nil)
	f.Body.SetInstrs(append(zeros, f.Body.Instrs...))
	f.Locals = keep
	ir.ReplaceUses(f, p.subst)
}

// zeroConst returns a const instruction of var l's zero value.
func zeroConst(f *ir.Func, l *ir.Local) *ir.Instr {
	in := &ir.Instr{Op: ir.OpConst, Type: l.Type, Pos: l.Pos}
	if l.Type == ir.Dyn {
		in.Lit = ir.Literal{Kind: ir.LitUnit}
	}
	in.AddResult(f, l.Type)
	return in
}

// modified records in p.mods the promoted vars set inside each structured
// op of r and returns those set anywhere in r, as a set.
func (p *promoter) modified(r *ir.Region) map[int]bool {
	set := map[int]bool{}
	for _, in := range r.Instrs {
		if in.Op == ir.OpSet {
			if k, ok := p.index[in.Local]; ok {
				set[k] = true
			}
		}
		if len(in.Regions) == 0 {
			continue
		}
		inner := map[int]bool{}
		for _, sub := range in.Regions {
			for k := range p.modified(sub) {
				inner[k] = true
			}
		}
		var ks []int
		for k := range p.vars {
			if inner[k] {
				ks = append(ks, k)
				set[k] = true
			}
		}
		p.mods[in] = ks
	}
	return set
}

// values returns the environment's values of the vars ks.
func values(env []*ir.Value, ks []int) []*ir.Value {
	out := make([]*ir.Value, len(ks))
	for i, k := range ks {
		out[i] = env[k]
	}
	return out
}

// region rewrites r given the environment on entry (which it updates to
// the environment at r's end). yields lists the vars a yield ending r
// must pass: those of r's if, switch or block owner; nil elsewhere.
func (p *promoter) region(r *ir.Region, env []*ir.Value, yields []int) {
	old := r.Instrs
	out := make([]*ir.Instr, 0, len(old))
	for _, in := range old {
		for i, a := range in.Args {
			in.Args[i] = ir.Resolve(p.subst, a)
		}
		switch in.Op {
		case ir.OpGet:
			if k, ok := p.index[in.Local]; ok {
				p.subst[in.Results[0]] = env[k]
				continue
			}
		case ir.OpSet:
			if k, ok := p.index[in.Local]; ok {
				env[k] = in.Args[0]
				continue
			}
		case ir.OpIf, ir.OpSwitch:
			ks := p.mods[in]
			for _, sub := range in.Regions {
				p.region(sub, append([]*ir.Value(nil), env...), ks)
			}
			p.addResults(in, ks, env)
		case ir.OpBlock:
			p.targets[in.Label] = in
			ks := p.mods[in]
			p.region(in.Regions[0], append([]*ir.Value(nil), env...), ks)
			p.addResults(in, ks, env)
		case ir.OpLoop:
			p.targets[in.Label] = in
			ks := p.mods[in]
			inner := append([]*ir.Value(nil), env...)
			body := in.Regions[0]
			for _, k := range ks {
				v := p.f.NewValue(p.vars[k].Type)
				v.Name = p.names.fresh(p.vars[k].Name)
				body.Params = append(body.Params, v)
				in.Args = append(in.Args, env[k])
				inner[k] = v
			}
			p.region(body, inner, nil)
			p.addResults(in, ks, env)
		case ir.OpBreak, ir.OpContinue:
			in.Args = append(in.Args, values(env, p.mods[p.targets[in.Label]])...)
		case ir.OpYield:
			in.Args = append(in.Args, values(env, yields)...)
		}
		out = append(out, in)
	}
	if len(yields) > 0 {
		if len(out) == 0 || !out[len(out)-1].Op.IsTerminator() {
			y := &ir.Instr{Op: ir.OpYield, Args: values(env, yields), Pos: r.Parent.Pos}
			out = append(out, y)
		}
	}
	r.SetInstrs(out)
}

// addResults gives structured op in one result per var of ks, and makes
// them the vars' values in env.
func (p *promoter) addResults(in *ir.Instr, ks []int, env []*ir.Value) {
	for _, k := range ks {
		v := in.AddResult(p.f, p.vars[k].Type)
		v.Name = p.names.fresh(p.vars[k].Name)
		env[k] = v
	}
}
