package vvm

import (
	"fmt"
	"slices"
	"strings"
)

// The checks of agents, calls and parallel blocks, which need resolved
// names, and the module-wide ones run after resolution.

// Known keys, in order of name (a "did you mean" picks the first of two
// equally near).
var (
	// agentKeys are the portable agent configuration keys (spec.md
	// §3.3.2); any other is host-defined (W020).
	agentKeys = []string{"memory", "model", "permissions", "prompt", "skills"}
	// callOptions are the portable agent call options (spec.md §3.4).
	callOptions = []string{"backoff", "memory_mode", "name", "retry", "timeout"}
	// permKeys are the portable permission keys (spec.md §3.3.3).
	permKeys = []string{"bash", "execute", "network", "read", "write"}
	// memoryKeys are the keys of an agent memory binding (spec.md §3.5.1).
	memoryKeys = []string{"key", "path", "scope"}
)

// checkAgent checks an agent definition's configuration (spec.md
// §3.3.5): every value a literal (E041), the keys known (W020), skills
// a non-empty list of names (W011) imported in the module (W010).
func (rs *resolver) checkAgent(s *AgentStmt) {
	for _, kw := range s.Config {
		if !rs.isLiteral(kw.Value) {
			rs.r.errorf(kw.Value.Pos(), CodeAgentConfig, "agent %s: %s is not a literal: an agent definition holds literals, lists, objects and perm(…); derive an agent at the call site with @%[1]s.with(…)", s.Name.Name, kw.Name)
			continue
		}
		if kw.Name == "skills" {
			if _, ok := kw.Value.(*ListLit); !ok {
				rs.r.errorf(kw.Value.Pos(), CodeAgentConfig, "agent %s: skills is a list of skill names: skills=[\"…\"]", s.Name.Name)
			}
		}
		if kw.Name == "memory" {
			if _, ok := kw.Value.(*ObjectLit); !ok {
				rs.r.errorf(kw.Value.Pos(), CodeAgentConfig, "agent %s: memory is an object: memory={scope: \"project\", key: \"…\"}", s.Name.Name)
			}
		}
	}
	rs.checkConfig(s.Config, "agent configuration key")
}

// checkConfig checks the keys of an agent configuration: an agent
// definition, .with(…) or an inline @{…}. Values that are not literals
// are the caller's to check, or to allow.
func (rs *resolver) checkConfig(config []*KwArg, what string) {
	for _, kw := range config {
		switch kw.Name {
		case "skills":
			rs.checkSkills(kw.Value)
		case "permissions":
			switch v := kw.Value.(type) {
			case *CallExpr:
				if v.Fun.Sym != nil && v.Fun.Sym.Kind == SymBuiltin && v.Fun.Name == "perm" {
					rs.checkKeys(v.Kwargs, permKeys, "permission key")
				}
			case *ObjectLit:
				rs.checkFields(v, permKeys, "permission key")
			}
		case "memory":
			if v, ok := kw.Value.(*ObjectLit); ok {
				rs.checkFields(v, memoryKeys, "memory key")
			}
		}
	}
	rs.checkKeys(config, agentKeys, what)
}

// checkSkills checks a literal skills list: not empty (W011), and every
// skill imported in the module (W010).
func (rs *resolver) checkSkills(v Expr) {
	list, ok := v.(*ListLit)
	if !ok {
		return
	}
	if len(list.Elems) == 0 {
		rs.r.warnf(list.Lbrack, CodeEmptySkills, "empty skills=[]: leave the key out for an agent without skills")
		return
	}
	var imported []string
	for _, s := range rs.m.Skills {
		imported = append(imported, s.Skill.Value)
	}
	for _, e := range list.Elems {
		lit, ok := e.(*StringLit)
		if !ok {
			if rs.isLiteral(e) {
				rs.r.errorf(e.Pos(), CodeAgentConfig, "a skill is named by a string")
			}
			continue
		}
		if !slices.Contains(imported, lit.Value) {
			rs.r.warnf(lit.ValuePos, CodeSkillNotImported, "skill %q is not imported in this module: import %[1]q from \"…\"%s", lit.Value, didYouMean(lit.Value, imported))
		}
	}
}

// checkKeys reports keyword arguments whose name is not among known
// (W020).
func (rs *resolver) checkKeys(kws []*KwArg, known []string, what string) {
	for _, kw := range kws {
		if !slices.Contains(known, kw.Name) {
			rs.r.warnf(kw.NamePos, CodeUnknownKey, "unknown %s %s: hosts may ignore it%s", what, kw.Name, didYouMean(kw.Name, known))
		}
	}
}

// checkFields reports fields of an object literal whose key is not among
// known (W020).
func (rs *resolver) checkFields(o *ObjectLit, known []string, what string) {
	for _, f := range o.Fields {
		if !slices.Contains(known, f.Key) {
			rs.r.warnf(f.KeyPos, CodeUnknownKey, "unknown %s %s: hosts may ignore it%s", what, f.Key, didYouMean(f.Key, known))
		}
	}
}

// checkCallOptions reports an agent call option that is not portable
// (W020: spec.md §3.4 lets hosts ignore unknown options).
func (rs *resolver) checkCallOptions(c *AgentCall) {
	rs.checkKeys(c.Options, callOptions, "agent call option")
}

// isLiteral reports whether e is a literal, a list or object of
// literals, or a perm(…) call of literals: what an agent definition may
// hold (spec.md §3.3.5).
func (rs *resolver) isLiteral(e Expr) bool {
	switch e := e.(type) {
	case *StringLit, *NumberLit, *BoolLit, *UnitLit:
		return true
	case *ListLit:
		for _, x := range e.Elems {
			if !rs.isLiteral(x) {
				return false
			}
		}
		return true
	case *ObjectLit:
		for _, f := range e.Fields {
			if !rs.isLiteral(f.Value) {
				return false
			}
		}
		return true
	case *CallExpr:
		if e.Fun.Sym == nil || e.Fun.Sym.Kind != SymBuiltin || e.Fun.Name != "perm" {
			return false
		}
		for _, a := range e.Args {
			if !rs.isLiteral(a) {
				return false
			}
		}
		for _, kw := range e.Kwargs {
			if !rs.isLiteral(kw.Value) {
				return false
			}
		}
		return true
	}
	return false
}

// checkParallel warns about branches that call agents sharing a memory
// key without memory_mode="fresh" (W040, spec-newer.md §12.5.10): they
// contend for its lock.
func (rs *resolver) checkParallel(s *ParallelStmt) {
	first := map[string]*AssignStmt{}
	for _, b := range s.Branches {
		call, ok := b.Value.(*AgentCall)
		if !ok {
			continue
		}
		key := memoryKey(call)
		if key == "" {
			continue
		}
		if prev := first[key]; prev != nil {
			rs.r.warnf(b.Target.NamePos, CodeSharedMemory, "branches %s and %s share the memory %s without memory_mode=\"fresh\": they wait for each other's lock", prev.Target.Name, b.Target.Name, key)
			continue
		}
		first[key] = b
	}
}

// memoryKey returns the memory a call reads and writes, as "scope:key",
// when it is known statically and the call does not run fresh; else "".
func memoryKey(call *AgentCall) string {
	if mode := kwarg(call.Options, "memory_mode"); mode != nil {
		if lit, ok := mode.(*StringLit); !ok || lit.Value == "fresh" {
			return ""
		}
	}
	ref := call.Agent
	var mem Expr
	switch {
	case ref.Name == nil:
		mem = kwarg(ref.Inline, "memory")
	case kwarg(ref.With, "memory") != nil:
		mem = kwarg(ref.With, "memory")
	case ref.Name.Sym != nil && ref.Name.Sym.Kind == SymAgent && ref.Name.Sym.Agent != nil:
		mem = kwarg(ref.Name.Sym.Agent.Config, "memory")
	}
	obj, ok := mem.(*ObjectLit)
	if !ok {
		return ""
	}
	var scope, key string
	for _, f := range obj.Fields {
		lit, ok := f.Value.(*StringLit)
		if !ok {
			return ""
		}
		switch f.Key {
		case "scope":
			scope = lit.Value
		case "key":
			key = lit.Value
		}
	}
	if key == "" {
		return ""
	}
	return fmt.Sprintf("%s:%s", scope, key)
}

// kwarg returns the value of the keyword argument name, or nil.
func kwarg(kws []*KwArg, name string) Expr {
	for _, kw := range kws {
		if kw.Name == name {
			return kw.Value
		}
	}
	return nil
}

// checkMembers reports a member read from a module call's result that
// the module does not export (E114, spec-newer.md §11.6.3): on m(…).key,
// or on x.key where every value ever assigned to x is a call of the same
// module. The key error is exempt: a failed module call returns an error
// value, which a program inspects.
func (rs *resolver) checkMembers() {
	for _, u := range rs.members {
		rs.checkMember(u)
	}
}

// checkMember reports u if it reads an output the module does not have
// (E114).
func (rs *resolver) checkMember(u memberUse) {
	mod := u.mod
	if u.sym != nil {
		mod = moduleResult(u.sym)
	}
	if mod == nil || mod.File == nil || mod.broken || u.key == "error" || mod.export(u.key, false) != nil {
		return
	}
	outputs := mod.exportNames(false)
	msg := fmt.Sprintf("module %s has no output %s", mod.Path, u.key)
	if len(outputs) == 0 {
		msg += ": it exports nothing"
	} else {
		msg += fmt.Sprintf(" (its outputs: %s)%s", strings.Join(outputs, ", "), didYouMean(u.key, outputs))
	}
	rs.r.errorf(u.pos, CodeUnknownOutput, "%s", msg)
}

// moduleResult returns the module whose call result sym always holds, or
// nil.
func moduleResult(sym *Symbol) *Module {
	if sym.Kind != SymVar || sym.other || len(sym.values) == 0 {
		return nil
	}
	var mod *Module
	for _, v := range sym.values {
		call, ok := v.(*CallExpr)
		if !ok || call.Fun.Sym == nil || call.Fun.Sym.Kind != SymModule || call.Fun.Sym.Import == nil {
			return nil
		}
		m := call.Fun.Sym.Import.Module
		if m == nil || mod != nil && m != mod {
			return nil
		}
		mod = m
	}
	return mod
}

// checkUnused warns about the variables of scopes assigned and never used (W030,
// best-effort): a name read nowhere in its scope or the functions in
// it, not exported. Names that start with _ are meant to be unused; so
// are names a statement's syntax requires (for, as).
func (rs *resolver) checkUnused(scopes []*Scope) {
	for _, sc := range scopes {
		for _, sym := range sc.Syms {
			if sym.Kind == SymVar && sym.assigned && sym.reads == 0 && !strings.HasPrefix(sym.Name, "_") {
				rs.r.warnf(sym.Pos, CodeUnused, "%s is assigned but never used", sym.Name)
			}
		}
	}
}
