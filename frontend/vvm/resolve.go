package vvm

import (
	"fmt"

	"github.com/genesis-toolchain/genesis/diag"
)

// resolver resolves the names of one module and runs the checks that
// need them. The module's imports are resolved before it (Check resolves
// modules in Program.Modules order), so their exports are known.
//
// Names follow spec.md §4.5: a function's locals are its parameters and
// every name its body binds anywhere (blocks open no scope); a name that
// is not local is looked up in the enclosing functions (nested defs and
// lambdas are closures: docs/vvm.md), then the module (hoisted defs,
// imports, inputs and every name module-level code binds), then the
// standard library, then, as a value, the agents (docs/vvm.md). A name
// found nowhere is E051: the spec's placeholder rule (§5.2), applied to
// every name.
type resolver struct {
	r        *reporter
	m        *Module
	registry map[string]*SkillImport // the program's skills, by name
	scopes   []*Scope                // every module and function scope, for W030
	members  []memberUse             // x.key where x may hold a module call's result, for E114
}

// memberUse is an access to member key of the value of sym (nil when
// the value is mod's result directly: m(…).key).
type memberUse struct {
	sym *Symbol
	mod *Module
	key string
	pos diag.Pos
}

// resolveModule resolves m and validates it; registry is the program's
// skill registry, which m's skill imports join. atPeak, when not nil, is
// called once where the resolution holds the most (for the tests of the
// memory of a check): the module's statements (or, for a module checked
// in two passes, its last chunk's) resolved and alive. ok is false when
// a module checked in two passes turns out not to parse: the check must
// start again in one pass.
func resolveModule(m *Module, registry map[string]*SkillImport, r *reporter, atPeak func()) (ok bool) {
	rs := &resolver{r: r, m: m, registry: registry}
	m.Scope = newScope(nil, universe(), m)
	m.Agents = newScope(nil, nil, m)
	rs.scopes = append(rs.scopes, m.Scope)
	if m.sum != nil {
		if !rs.resolveTwoPasses(atPeak) {
			return false
		}
	} else {
		stmts := m.File.Stmts
		rs.declareModule(stmts, func(bind func(*Ident, Node, bool)) { collectBindings(stmts, true, bind) })
		rs.stmts(stmts, m.Scope)
		if atPeak != nil {
			atPeak()
		}
	}
	rs.checkMembers()
	rs.checkUnused(rs.scopes)
	return true
}

// ── Declarations ──

// declareModule declares the module's names: first its declarations,
// hoisted (imports, agents, defs, inputs, exports: the statements of
// decls of those kinds, in order), then every name its top-level code
// binds, which bindings gives to bind in source order (collectBindings
// of the module's statements); then it resolves the exports.
func (rs *resolver) declareModule(decls []Stmt, bindings func(bind func(id *Ident, n Node, direct bool))) {
	m, sc := rs.m, rs.m.Scope
	for _, s := range decls {
		switch s := s.(type) {
		case *SkillImport:
			rs.skillImport(s)
		case *ImportStmt:
			rs.importStmt(s)
		case *AgentStmt:
			rs.declareAgent(s.Name, s, nil)
		case *FuncDecl:
			rs.bind(sc, s.Name, s, true)
		case *InputStmt:
			if prev := sc.Lookup(s.Name.Name); prev != nil && prev.Kind == SymInput {
				rs.r.errorf(s.Name.NamePos, CodeDupInput, "duplicate input %s (first declared at line %d)", s.Name.Name, prev.Pos.Line)
				continue
			}
			rs.bind(sc, s.Name, s, true)
			m.Inputs = append(m.Inputs, s)
		case *ExportStmt:
			m.Exports = append(m.Exports, s)
		}
	}
	bindings(func(id *Ident, n Node, direct bool) { rs.bind(sc, id, n, direct) })
	rs.declareExports()
	if len(m.Inputs) > 0 && len(m.Exports) == 0 {
		rs.r.warnf(m.Inputs[0].InputPos, CodeInputsNoExports, "the module has inputs but no exports: a caller gets nothing back")
	}
}

// declareExports resolves what each export exports, and reports a name
// exported twice (E113) or never bound (W031).
func (rs *resolver) declareExports() {
	m := rs.m
	type key struct {
		name  string
		agent bool
	}
	seen := map[key]*ExportStmt{}
	for _, e := range m.Exports {
		k := key{e.Name.Name, e.Agent}
		if prev := seen[k]; prev != nil {
			rs.r.errorf(e.Name.NamePos, CodeDupExport, "%s is exported twice (first at line %d)", exportedName(e), prev.Name.NamePos.Line)
			continue
		}
		seen[k] = e
		if e.Agent {
			sym := m.Agents.Lookup(e.Name.Name)
			if sym == nil {
				rs.unknownAgent(e.Name)
				continue
			}
			e.Value.Sym = sym
			sym.reads++
			continue
		}
		sym := m.Scope.Lookup(e.Value.Name)
		if sym == nil {
			sym = m.Agents.Lookup(e.Value.Name)
		}
		if sym == nil {
			rs.r.warnf(e.Value.NamePos, CodeExportUnbound, "exported %s is never assigned in the module%s", e.Value.Name,
				didYouMean(e.Value.Name, symbolNames(m.Scope)))
			continue
		}
		e.Value.Sym = sym
		sym.reads++
	}
}

func exportedName(e *ExportStmt) string {
	if e.Agent {
		return "@" + e.Name.Name
	}
	return e.Name.Name
}

// skillImport registers a skill import in the module and the program's
// registry.
func (rs *resolver) skillImport(s *SkillImport) {
	if s.Skill == nil || s.Source == nil {
		return
	}
	if s.Skill.Value == "" || s.Source.Value == "" {
		rs.r.errorf(s.ImportPos, CodeSkillEmpty, "a skill import needs a skill name and a source: import \"skill\" from \"source\"")
		return
	}
	if !knownSkillSource(s.Source.Value) {
		rs.r.warnf(s.Source.ValuePos, CodeSkillSource, "unknown skill source format %q: the portable forms are github:user/repo, npm:package, ./path and ../path", s.Source.Value)
	}
	for _, prev := range rs.m.Skills {
		if prev.Skill.Value == s.Skill.Value {
			rs.r.errorf(s.Skill.ValuePos, CodeSkillDup, "skill %q is imported twice (first at line %d)", s.Skill.Value, prev.ImportPos.Line)
			return
		}
	}
	rs.m.Skills = append(rs.m.Skills, s)
	if prev := rs.registry[s.Skill.Value]; prev != nil {
		if prev.Source.Value != s.Source.Value {
			rs.r.errorf(s.Source.ValuePos, CodeSkillConflict, "skill %q is imported from %q here and from %q at %s", s.Skill.Value, s.Source.Value, prev.Source.Value, prev.ImportPos)
		}
		return
	}
	rs.registry[s.Skill.Value] = s
}

// knownSkillSource reports whether a skill source has one of the
// portable forms of spec.md §11.2.
func knownSkillSource(src string) bool {
	for _, p := range []string{"github:", "npm:", "./", "../"} {
		if len(src) > len(p) && src[:len(p)] == p {
			return true
		}
	}
	return false
}

// importStmt declares what an import binds, and checks that the module
// exports it (E090).
func (rs *resolver) importStmt(s *ImportStmt) {
	local := s.Local()
	dep := s.Module
	checkable := dep != nil && dep.File != nil && !dep.broken
	switch s.Kind {
	case ImportModule:
		if sym := rs.bind(rs.m.Scope, local, s, true); sym != nil {
			sym.Import = s
		}
	case ImportAgent:
		sym := rs.declareAgent(local, nil, s)
		if sym == nil || !checkable {
			return
		}
		e := dep.export(s.Name.Name, true)
		if e == nil {
			rs.missingExport(s, dep)
			return
		}
		if e.Value.Sym != nil {
			sym.Agent = e.Value.Sym.Agent
		}
	case ImportValue:
		sym := rs.bind(rs.m.Scope, local, s, true)
		if sym == nil {
			return
		}
		sym.Import = s
		if !checkable {
			return
		}
		e := dep.export(s.Name.Name, false)
		if e == nil {
			rs.missingExport(s, dep)
			return
		}
		sym.Target = e.Value.Sym
	}
}

// missingExport reports an import of a name its module does not export
// (spec.md §11.3, step 5).
func (rs *resolver) missingExport(s *ImportStmt, dep *Module) {
	agent := s.Kind == ImportAgent
	name := s.Name.Name
	shown := name
	if agent {
		shown = "@" + name
	}
	msg := fmt.Sprintf("export '%s' not found in module '%s'", shown, s.Path.Value)
	switch {
	case dep.export(name, !agent) != nil && agent:
		msg += fmt.Sprintf(": it exports the value %s; import it without @", name)
	case dep.export(name, !agent) != nil:
		msg += fmt.Sprintf(": it exports the agent @%s; import @%[1]s", name)
	default:
		msg += didYouMean(name, dep.exportNames(agent))
	}
	rs.r.errorf(s.Name.NamePos, CodeModule, "%s", msg)
}

// declareAgent declares an agent, defined by decl or imported by imp,
// reporting a duplicate (E020).
func (rs *resolver) declareAgent(id *Ident, decl *AgentStmt, imp *ImportStmt) *Symbol {
	if id == nil || isKeyword(id.Name) {
		return nil
	}
	if prev := rs.m.Agents.Lookup(id.Name); prev != nil {
		rs.r.errorf(id.NamePos, CodeDupAgent, "duplicate agent %s (first defined at line %d)", id.Name, prev.Pos.Line)
		return nil
	}
	sym := rs.m.Agents.insert(id.Name, SymAgent, id.NamePos)
	sym.Agent, sym.Import = decl, imp
	id.Sym = sym
	return sym
}

// bind records that n binds id in sc, declaring the name on its first
// binding. direct is set when n is directly in the scope's body, not in
// a block: two defs of a name directly in one body are E021 (in two
// branches of an if, they are two ways to define it).
func (rs *resolver) bind(sc *Scope, id *Ident, n Node, direct bool) *Symbol {
	if id == nil || isKeyword(id.Name) {
		return nil // a reserved word, reported by the parser (E010, E060)
	}
	fd, isDef := n.(*FuncDecl)
	sym := sc.Lookup(id.Name)
	if sym == nil {
		kind := SymVar
		switch n := n.(type) {
		case *FuncDecl:
			kind = SymFunc
		case *InputStmt:
			kind = SymInput
		case *ImportStmt:
			kind = SymImport
			if n.Kind == ImportModule {
				kind = SymModule
			}
		}
		sym = sc.insert(id.Name, kind, id.NamePos)
		if isDef {
			sym.Func = fd
		}
	} else {
		if isDef && direct && sym.defs > 0 {
			rs.r.errorf(id.NamePos, CodeDupFunc, "duplicate function %s (first defined at line %d)", id.Name, sym.Pos.Line)
		}
		sym.Reassigned = true
		sym.binds = append(sym.binds, id.NamePos)
	}
	if isDef && direct {
		sym.defs++
	}
	id.Sym = sym
	switch n := n.(type) {
	case *AssignStmt:
		sym.assigned = true
		sym.values = append(sym.values, n.Value)
	case *ErrorPattern:
		sym.assigned = true
		sym.other = true
	default:
		sym.other = true
	}
	return sym
}

// collectBindings calls bind for every name that stmts bind in the scope
// they are in (spec.md §4.5: =, for, except as, choose as, and
// parallel as, constrain, error(name) and a def in a block, which
// docs/vvm.md adds), in source order. It does not enter defs (their
// bodies are their own scope) and skips the hoisted ones (declared
// before). direct tells whether stmts are the scope's body itself.
func collectBindings(stmts []Stmt, direct bool, bind func(id *Ident, n Node, direct bool)) {
	for _, s := range stmts {
		switch s := s.(type) {
		case *AssignStmt:
			bind(s.Target, s, direct)
		case *FuncDecl:
			if !s.Hoisted {
				bind(s.Name, s, direct)
			}
		case *ForStmt:
			bind(s.Var, s, direct)
			collectBindings(s.Body, false, bind)
		case *IfStmt:
			collectBindings(s.Then, false, bind)
			for _, e := range s.Elifs {
				collectBindings(e.Body, false, bind)
			}
			collectBindings(s.Else, false, bind)
		case *WhileStmt:
			collectBindings(s.Body, false, bind)
		case *MatchStmt:
			for _, c := range s.Cases {
				if p, ok := c.Pattern.(*ErrorPattern); ok && p.Bind != nil {
					bind(p.Bind, p, false)
				}
				collectBindings(c.Body, false, bind)
			}
		case *ChooseStmt:
			bind(s.As, s, direct)
			for _, o := range s.Options {
				collectBindings(o.Body, false, bind)
			}
		case *ConstrainStmt:
			bind(s.Target, s, direct)
		case *WithInputStmt:
			collectBindings(s.Body, false, bind)
		case *TryStmt:
			collectBindings(s.Body, false, bind)
			if s.Except != nil {
				bind(s.Except.Var, s.Except, false)
				collectBindings(s.Except.Body, false, bind)
			}
			if s.Finally != nil {
				collectBindings(s.Finally.Body, false, bind)
			}
		case *ParallelStmt:
			bind(s.As, s, direct)
		}
	}
}

// funcScope opens the scope of a def or lambda: its parameters, then
// the names its body binds.
func (rs *resolver) funcScope(owner Node, params []*Ident, body []Stmt, parent *Scope) *Scope {
	fs := newScope(owner, parent, rs.m)
	rs.scopes = append(rs.scopes, fs)
	for _, p := range params {
		if fs.Lookup(p.Name) != nil {
			continue // a duplicate parameter, reported by the parser
		}
		p.Sym = fs.insert(p.Name, SymParam, p.NamePos)
	}
	collectBindings(body, true, func(id *Ident, n Node, direct bool) { rs.bind(fs, id, n, direct) })
	return fs
}

// ── Uses ──

func (rs *resolver) stmts(list []Stmt, sc *Scope) {
	for _, s := range list {
		rs.stmt(s, sc)
	}
}

func (rs *resolver) stmt(s Stmt, sc *Scope) {
	switch s := s.(type) {
	case *AgentStmt:
		for _, kw := range s.Config {
			rs.expr(kw.Value, sc)
		}
		rs.checkAgent(s)
	case *InputStmt:
		if s.Default != nil {
			rs.expr(s.Default, sc)
		}
	case *FuncDecl:
		fs := rs.funcScope(s, s.Params, s.Body, sc)
		s.Scope = fs
		rs.stmts(s.Body, fs)
	case *ReturnStmt:
		if s.Value != nil {
			rs.expr(s.Value, sc)
		}
	case *AssignStmt:
		rs.expr(s.Value, sc)
	case *ExprStmt:
		rs.expr(s.X, sc)
	case *IfStmt:
		rs.expr(s.Cond, sc)
		rs.stmts(s.Then, sc)
		for _, e := range s.Elifs {
			rs.expr(e.Cond, sc)
			rs.stmts(e.Body, sc)
		}
		rs.stmts(s.Else, sc)
	case *WhileStmt:
		rs.expr(s.Cond, sc)
		rs.stmts(s.Body, sc)
	case *ForStmt:
		rs.expr(s.Iter, sc)
		rs.stmts(s.Body, sc)
	case *MatchStmt:
		rs.expr(s.Subject, sc)
		for _, c := range s.Cases {
			if p, ok := c.Pattern.(*PredPattern); ok {
				rs.template(p.Criterion, sc, nil)
			}
			rs.stmts(c.Body, sc)
		}
	case *ChooseStmt:
		rs.expr(s.Subject, sc)
		rs.template(s.Criterion, sc, nil)
		for _, o := range s.Options {
			rs.stmts(o.Body, sc)
		}
	case *ConstrainStmt:
		rs.constrain(s)
		for _, kw := range s.Options {
			rs.expr(kw.Value, sc)
		}
		for _, rq := range s.Requires {
			rs.template(rq.Criterion, sc, nil)
		}
	case *WithInputStmt:
		rs.expr(s.Input, sc)
		rs.stmts(s.Body, sc)
	case *TryStmt:
		rs.stmts(s.Body, sc)
		if s.Except != nil {
			rs.stmts(s.Except.Body, sc)
		}
		if s.Finally != nil {
			rs.stmts(s.Finally.Body, sc)
		}
	case *ParallelStmt:
		for _, kw := range s.Options {
			rs.expr(kw.Value, sc)
		}
		for _, b := range s.Branches {
			rs.expr(b.Value, sc)
			if sc.branches == nil {
				sc.branches = map[string]*ParallelStmt{}
			}
			// What a hint reads of the block, not the block, which
			// would keep its branches alive in a module scope.
			sc.branches[b.Target.Name] = &ParallelStmt{ParallelPos: s.ParallelPos, As: s.As}
		}
		rs.checkParallel(s)
	}
}

// constrain checks that the constrained name is bound before the
// statement (E070), in the scope the statement rebinds it in.
func (rs *resolver) constrain(s *ConstrainStmt) {
	sym := s.Target.Sym
	if sym == nil {
		return
	}
	sym.reads++
	switch sym.Kind {
	case SymParam, SymInput, SymImport, SymModule, SymFunc:
		return
	}
	for _, p := range sym.binds {
		if before(p, s.ConstrainPos) {
			return
		}
	}
	msg := fmt.Sprintf("constrain %s: %s is not bound before this statement", sym.Name, sym.Name)
	if sym.Scope.isFunc() && rs.m.Scope.Lookup(sym.Name) != nil {
		msg += " (constrain rebinds it, so it is a local of the def, not the module's)"
	}
	rs.r.errorf(s.Target.NamePos, CodeConstrainUnbound, "%s", msg)
}

// before reports whether a comes before b in the same file.
func before(a, b diag.Pos) bool {
	return a.File == b.File && (a.Line < b.Line || a.Line == b.Line && a.Col < b.Col)
}

func (rs *resolver) expr(e Expr, sc *Scope) {
	switch e := e.(type) {
	case *Ident:
		rs.use(e, sc, false, nil)
	case *ListLit:
		for _, x := range e.Elems {
			rs.expr(x, sc)
		}
	case *ObjectLit:
		for _, f := range e.Fields {
			rs.expr(f.Value, sc)
		}
	case *UnaryExpr:
		rs.expr(e.X, sc)
	case *BinaryExpr:
		rs.expr(e.X, sc)
		rs.expr(e.Y, sc)
	case *CallExpr:
		rs.call(e, sc)
	case *AgentCall:
		rs.agentRef(e.Agent, sc)
		if e.Input != nil {
			rs.expr(e.Input, sc)
		}
		for _, kw := range e.Options {
			rs.expr(kw.Value, sc)
		}
		rs.template(e.Template, sc, e.Input)
		rs.checkCallOptions(e)
	case *SemPred:
		if e.Input != nil {
			rs.expr(e.Input, sc)
		}
		rs.template(e.Criterion, sc, e.Input)
	case *MemberExpr:
		rs.expr(e.X, sc)
		switch x := e.X.(type) {
		case *Ident:
			if x.Sym != nil {
				rs.members = append(rs.members, memberUse{sym: x.Sym, key: e.Name, pos: e.NamePos})
			}
		case *CallExpr:
			if x.Fun.Sym != nil && x.Fun.Sym.Kind == SymModule && x.Fun.Sym.Import != nil {
				rs.members = append(rs.members, memberUse{mod: x.Fun.Sym.Import.Module, key: e.Name, pos: e.NamePos})
			}
		}
	case *IndexExpr:
		rs.expr(e.X, sc)
		rs.expr(e.Index, sc)
	case *WithExpr:
		rs.expr(e.X, sc)
		for _, kw := range e.Args {
			rs.expr(kw.Value, sc)
		}
		rs.checkConfig(e.Args, "agent configuration key")
	case *LambdaExpr:
		fs := rs.funcScope(e, e.Params, nil, sc)
		e.Scope = fs
		rs.expr(e.Body, fs)
	}
}

func (rs *resolver) call(e *CallExpr, sc *Scope) {
	rs.use(e.Fun, sc, false, nil)
	for _, a := range e.Args {
		rs.expr(a, sc)
	}
	for _, kw := range e.Kwargs {
		rs.expr(kw.Value, sc)
	}
	sym := e.Fun.Sym
	if sym == nil {
		return
	}
	e.Func = staticFunc(sym)
	switch {
	case sym.Kind == SymBuiltin && sym.Name == "pack":
		// spec.md §14.1: a positional argument's name is its key.
		for _, a := range e.Args {
			if _, ok := a.(*Ident); !ok {
				rs.r.errorf(a.Pos(), CodeSyntax, "pack's positional arguments are names, which become the keys: name the value, or use pack(key=…)")
			}
		}
	case sym.Kind == SymModule && len(e.Args) > 0:
		rs.r.errorf(e.Args[0].Pos(), CodeSyntax, "a module call takes keyword arguments, the module's inputs: %s(name=value, …)", e.Fun.Name)
	}
}

// staticFunc returns the def that a call of sym always runs, or nil:
// sym is a def (or imports one, however indirectly) and nothing else
// binds it.
func staticFunc(sym *Symbol) *FuncDecl {
	for i := 0; sym != nil && i < 100; i++ {
		if sym.Reassigned {
			return nil
		}
		switch sym.Kind {
		case SymFunc:
			return sym.Func
		case SymImport:
			sym = sym.Target
		default:
			return nil
		}
	}
	return nil
}

// agentRef resolves the agent of a call: an agent of the module, or else
// a name that holds an agent value (docs/vvm.md), or E040.
func (rs *resolver) agentRef(ref *AgentRef, sc *Scope) {
	for _, kw := range ref.Inline {
		rs.expr(kw.Value, sc)
	}
	for _, kw := range ref.With {
		rs.expr(kw.Value, sc)
	}
	if ref.Name == nil {
		rs.checkConfig(ref.Inline, "agent configuration key")
		return
	}
	rs.checkConfig(ref.With, "agent configuration key")
	if sym := rs.m.Agents.Lookup(ref.Name.Name); sym != nil {
		ref.Name.Sym = sym
		sym.reads++
		return
	}
	if sym := rs.lookup(ref.Name.Name, sc); sym != nil && sym.Kind != SymAgent && sym.Kind != SymBuiltin {
		ref.Name.Sym = sym
		sym.reads++
		return
	}
	rs.unknownAgent(ref.Name)
}

// unknownAgent reports an @name that names no agent (E040).
func (rs *resolver) unknownAgent(id *Ident) {
	rs.r.errorf(id.NamePos, CodeUnknownAgent, "unknown agent @%s%s", id.Name, didYouMean(id.Name, symbolNames(rs.m.Agents)))
}

// template resolves the names of a template's placeholders. input is
// the explicit input of the call or predicate the template belongs to,
// if any: a placeholder naming one of its keys gets a hint.
func (rs *resolver) template(t *Template, sc *Scope, input Expr) {
	if t == nil {
		return
	}
	for _, p := range t.Parts {
		if p.Kind != NamePart {
			continue
		}
		if !rs.use(p.Name, sc, true, input) {
			continue
		}
		if len(p.Path) > 0 {
			pos := p.Name.NamePos
			pos.Col += len(p.Name.Name) + 1 // names are ASCII
			rs.members = append(rs.members, memberUse{sym: p.Name.Sym, key: p.Path[0], pos: pos})
		}
	}
}

// use resolves a name where it is read, and reports whether it could.
// A placeholder's name is used with the input of its template, if it has
// one, which an unknown name's message may mention.
func (rs *resolver) use(id *Ident, sc *Scope, placeholder bool, input Expr) bool {
	sym := rs.lookup(id.Name, sc)
	if sym != nil {
		id.Sym = sym
		sym.reads++
		return true
	}
	if hint := branchHint(id.Name, sc); hint != "" {
		rs.r.errorf(id.NamePos, CodeUnknownName, "unknown name %s: %s", id.Name, hint)
		return false
	}
	if !placeholder {
		rs.r.errorf(id.NamePos, CodeUnknownName, "unknown name %s%s", id.Name, didYouMean(id.Name, rs.visible(sc)))
		return false
	}
	msg := fmt.Sprintf("unknown name %s in placeholder {%[1]s}", id.Name)
	if hint := inputKeyHint(input, id.Name); hint != "" {
		msg += ": " + hint
	} else {
		msg += didYouMean(id.Name, rs.visible(sc))
	}
	rs.r.errorf(id.NamePos, CodeUnknownName, "%s", msg)
	return false
}

// branchHint explains an unknown name that is the name of a parallel
// branch: a field of the block's result, not a variable.
func branchHint(name string, sc *Scope) string {
	for s := sc; s != nil; s = s.Parent {
		if p := s.branches[name]; p != nil {
			return fmt.Sprintf("%s is a branch of the parallel block at line %d, a field of its result, not a variable: write %s.%s", name, p.ParallelPos.Line, p.As.Name, name)
		}
	}
	return ""
}

// inputKeyHint explains an unknown placeholder name that is a key of the
// call's input, built by pack(key=…): a placeholder reads a name in
// scope, not a key of the input (spec.md §5.2).
func inputKeyHint(input Expr, name string) string {
	hasKey := func(e Expr) bool {
		call, ok := e.(*CallExpr)
		return ok && call.Fun.Name == "pack" && kwarg(call.Kwargs, name) != nil
	}
	switch x := input.(type) {
	case *CallExpr:
		if hasKey(x) {
			return fmt.Sprintf("%s is a key of the input pack(…), and a placeholder reads a name in scope, not a key of the input", name)
		}
	case *Ident:
		if x.Sym == nil {
			return ""
		}
		for _, v := range x.Sym.values {
			if hasKey(v) {
				return fmt.Sprintf("%s is a key of %s, the input, and a placeholder reads a name in scope: write {%s.%s}", name, x.Name, x.Name, name)
			}
		}
	}
	return ""
}

// lookup finds the symbol a name denotes in sc: in sc and the scopes
// around it, then among the agents. A local of an enclosing function
// becomes a capture of every function between.
func (rs *resolver) lookup(name string, sc *Scope) *Symbol {
	for s := sc; s != nil; s = s.Parent {
		sym := s.Lookup(name)
		if sym == nil {
			continue
		}
		if s.isFunc() {
			for f := sc; f != s; f = f.Parent {
				addCapture(f.Owner, sym)
			}
		}
		return sym
	}
	return rs.m.Agents.Lookup(name)
}

// addCapture records that the function owner refers to sym, a local of
// an enclosing function.
func addCapture(owner Node, sym *Symbol) {
	var caps *[]*Symbol
	switch o := owner.(type) {
	case *FuncDecl:
		caps = &o.Captures
	case *LambdaExpr:
		caps = &o.Captures
	default:
		return
	}
	for _, c := range *caps {
		if c == sym {
			return
		}
	}
	*caps = append(*caps, sym)
}

// visible lists the names visible in sc, innermost first, for a "did
// you mean".
func (rs *resolver) visible(sc *Scope) []string {
	var names []string
	for s := sc; s != nil; s = s.Parent {
		names = append(names, symbolNames(s)...)
	}
	return append(names, symbolNames(rs.m.Agents)...)
}

// symbolNames lists the names of a scope's symbols, in order.
func symbolNames(s *Scope) []string {
	names := make([]string, len(s.Syms))
	for i, sym := range s.Syms {
		names[i] = sym.Name
	}
	return names
}
