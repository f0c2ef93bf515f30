package vvm

import (
	"math"
	"runtime"
	"unicode/utf8"

	"github.com/antlr4-go/antlr/v4"

	"github.com/genesis-toolchain/genesis/diag"
	"github.com/genesis-toolchain/genesis/frontend"
)

// A check in two passes (docs/decisions.md, "VVM checked in two passes
// (issue 13)"). Check keeps the tree of every module, which the lowering
// needs: some 19 bytes a byte of source. A check needs no tree once a
// statement is checked, and the resolution of a top-level statement
// needs only the module's declarations and the names its top-level code
// binds (its scope: blocks open none, spec.md §4.5), never another
// statement. So CheckHolding loads a large module (one parsed chunk by
// chunk, chunk.go) in two passes:
//
//   - pass 1, while loading: each chunk is parsed with its top-level
//     defs blanked out (summarizeChunks: only their names matter to the
//     module, and their bodies are most of a program), summarized and
//     dropped. The summary holds the declarations (imports, exports,
//     skill imports kept as they are; agents, defs and inputs as stubs
//     without their bodies) and every name the top-level code binds, in
//     order, with a stub of what binds it: of an assigned value only
//     whether it is a call, of which function, and the names of a
//     pack(…)'s keywords (what E114 and a placeholder's hint read). The
//     module scope is declared from the summary by the one-pass code
//     (declareModule, bind), so every symbol, its kind, position,
//     duplicates (E020, E021, E111, E113) and exports are the same;
//   - pass 2, in module order as Check resolves: the chunks are parsed
//     again, whole, by a fresh builder that sees every statement in
//     order as the one-pass builder does (its diagnostics are put where
//     the one-pass parse reports them: withBuilderDiags), and each
//     top-level statement is resolved by the one-pass code in the module
//     scope, then the checks that only its own functions' scopes feed
//     (W030 of their locals, E114 on them) run, and the statement is
//     dropped. The module's own checks (W030 of its variables, E114 on
//     them) run at its end, as in Check. A chunk that does not parse
//     (a def pass 1 did not parse is not valid) starts the check again
//     in one pass, which reports the error.
//
// Diagnostics are sorted by position, stably, and none of those that
// move earlier (a statement's W030 and E114) can share a position with
// one of another statement, so the list is Check's: TestCheckHoldingIsCheck
// compares the two on programs cut a statement a chunk.

// A summary is what pass 1 keeps of a module parsed chunk by chunk.
type summary struct {
	decls  []Stmt    // the top-level declarations, in order: declareModule's decls
	binds  []binding // the names top-level code binds, in order (collectBindings)
	chunks []chunk   // the file's chunks, to parse again
	bom    int       // the bytes of a byte-order mark before the text

	defs    []defSpan // pass 1: the top-level defs, not parsed
	nextDef int       // pass 1: the first def not yet in decls

	// diagAt is where the diagnostics of the builder go in the list:
	// where the one-pass parse of the file reports them, which pass 2
	// finds (diags) as it builds the tree.
	diagAt int
	diags  diag.List
}

// A binding is one call of collectBindings' bind, with a stub of n.
type binding struct {
	id     *Ident
	n      Node
	direct bool
}

// Stubs of the nodes that bind a name, where bind reads nothing but
// their type: anything but an assignment, a def, an input or an import
// (otherBinding), and error(name) (errorBinding). notCall is an assigned
// value that is not a call, and a keyword value of a pack(…) stub.
var (
	otherBinding Node = &PassStmt{}
	errorBinding Node = &ErrorPattern{}
	notCall      Expr = &BadExpr{}
)

// summarizeChunks is pass 1 of a check in two passes of the file of b,
// whose text is text: it cuts it into chunks of at least target tokens
// as parseChunks does, parses each chunk with its top-level defs blanked
// and summarizes it into sum. Only a def's name matters to the module,
// and a def's body is most of a program, so that pass 1 parses little
// of it: a top-level statement that starts `def name(` is a def (if it
// is not valid, pass 2 finds out, and the check starts again in one
// pass), whose text up to the next statement is spaces but for its line
// ends, so that every other statement keeps its line and column. ok is
// false when the file cannot be parsed that way (parseChunks'
// conditions); the builder's diagnostics are pass 2's to report.
func summarizeChunks(text string, src []byte, b *builder, minBytes, target int, sum *summary) (ok bool) {
	if len(src) < minBytes || !utf8.Valid(src) {
		return false
	}
	chunks, defs, ok := splitStmts(antlr.NewInputStream(text), b.file, target)
	if !ok || len(chunks) < 2 {
		return false
	}
	byteOffsets(text, len(chunks), func(k int) (*int, *int, *int, *int) {
		c := &chunks[k]
		return &c.start, &c.end, &c.bstart, &c.bend
	})
	byteOffsets(text, len(defs), func(k int) (*int, *int, *int, *int) {
		d := &defs[k]
		return &d.start, &d.end, &d.bstart, &d.bend
	})
	real := b.r
	b.r = &reporter{}
	defer func() { b.r = real }()
	sum.defs = defs
	d := 0
	for _, c := range chunks {
		t := text[c.bstart:c.bend]
		if d < len(defs) && defs[d].bstart < c.bend {
			buf := []byte(t)
			for ; d < len(defs) && defs[d].bstart < c.bend; d++ {
				for i := defs[d].bstart; i < defs[d].bend; i++ {
					if ch := buf[i-c.bstart]; ch != '\n' && ch != '\r' {
						buf[i-c.bstart] = ' '
					}
				}
			}
			t = string(buf)
		}
		stmts, ok := parseChunk(t, c, b)
		if !ok {
			return false
		}
		sum.add(stmts)
	}
	sum.defsBefore(math.MaxInt)
	sum.defs = nil
	sum.chunks = chunks
	sum.bom = len(src) - len(text)
	return true
}

// defsBefore adds the stubs of the defs of pass 1 before line to the
// declarations.
func (s *summary) defsBefore(line int) {
	for ; s.nextDef < len(s.defs) && s.defs[s.nextDef].def.DefPos.Line < line; s.nextDef++ {
		s.decls = append(s.decls, s.defs[s.nextDef].def)
	}
}

// add summarizes the statements of one chunk. A def blanked out of the
// chunk comes before the first statement of a later line: top-level
// statements start on lines of their own.
func (s *summary) add(stmts []Stmt) {
	for _, st := range stmts {
		s.defsBefore(st.Pos().Line)
		switch st := st.(type) {
		case *SkillImport, *ImportStmt, *ExportStmt:
			s.decls = append(s.decls, st)
		case *AgentStmt:
			// memoryKey reads an agent's memory (W040); checkAgent,
			// in pass 2, the whole statement.
			a := &AgentStmt{AgentPos: st.AgentPos, Name: st.Name}
			for _, kw := range st.Config {
				if kw.Name == "memory" {
					a.Config = []*KwArg{kw}
					break
				}
			}
			s.decls = append(s.decls, a)
		case *FuncDecl:
			s.decls = append(s.decls, &FuncDecl{DefPos: st.DefPos, Name: st.Name, Hoisted: st.Hoisted})
		case *InputStmt:
			s.decls = append(s.decls, &InputStmt{InputPos: st.InputPos, Name: st.Name, Doc: st.Doc})
		}
	}
	collectBindings(stmts, true, func(id *Ident, n Node, direct bool) {
		s.binds = append(s.binds, binding{id: id, n: bindingStub(n), direct: direct})
	})
}

// bindingStub returns what bind needs of n: its kind, and an
// assignment's value (valueStub).
func bindingStub(n Node) Node {
	switch n := n.(type) {
	case *AssignStmt:
		return &AssignStmt{Target: n.Target, EqPos: n.EqPos, Value: valueStub(n.Value)}
	case *FuncDecl:
		return &FuncDecl{DefPos: n.DefPos, Name: n.Name, Hoisted: n.Hoisted}
	case *ErrorPattern:
		return errorBinding
	}
	return otherBinding
}

// valueStub returns what is read of a value assigned to a module's
// variable: whether it is a call, and of what (moduleResult), with the
// names of its keywords if it is pack(…) (inputKeyHint).
func valueStub(v Expr) Expr {
	call, ok := v.(*CallExpr)
	if !ok {
		return notCall
	}
	stub := &CallExpr{Fun: &Ident{NamePos: call.Fun.NamePos, Name: call.Fun.Name}, Lparen: call.Lparen}
	if call.Fun.Name == "pack" {
		for _, kw := range call.Kwargs {
			stub.Kwargs = append(stub.Kwargs, &KwArg{NamePos: kw.NamePos, Name: kw.Name, Value: notCall})
		}
	}
	return stub
}

// resolveTwoPasses declares the module from its summary and resolves
// its statements chunk by chunk (pass 2). atPeak, when not nil, is
// called at the last chunk. ok is false when a chunk does not parse (a
// def that pass 1 did not parse is not valid): the check must start
// again in one pass, which reports it.
func (rs *resolver) resolveTwoPasses(atPeak func()) (ok bool) {
	m, sum := rs.m, rs.m.sum
	binds := sum.binds
	rs.declareModule(sum.decls, func(bind func(*Ident, Node, bool)) {
		for _, b := range binds {
			bind(b.id, b.n, b.direct)
		}
	})
	sum.decls, sum.binds, binds = nil, nil, nil
	// The functions of the values of module variables are resolved in
	// the module scope, where pass 2 resolves the statements that
	// assign them (as use does, without counting a read).
	for _, sym := range m.Scope.Syms {
		for _, v := range sym.values {
			if call, ok := v.(*CallExpr); ok {
				call.Fun.Sym = rs.lookup(call.Fun.Name, m.Scope)
			}
		}
	}
	b := &builder{r: &reporter{}, file: m.File.Name}
	src := m.File.Src[sum.bom:]
	for i, c := range sum.chunks {
		stmts, ok := parseChunk(string(src[c.bstart:c.bend]), c, b)
		if !ok {
			return false
		}
		for _, s := range stmts {
			rs.resolveTop(s)
		}
		if i == len(sum.chunks)-1 && atPeak != nil {
			atPeak()
			runtime.KeepAlive(stmts)
		}
	}
	sum.diags = b.r.diags
	return true
}

// withBuilderDiags returns diags with the diagnostics of the builder of
// each module of parsed (the modules in the order they were parsed)
// checked in two passes inserted where the one-pass parse reports them,
// so that the list is Check's before it is sorted (a stable sort keeps
// the order of diagnostics at one position).
func withBuilderDiags(diags diag.List, parsed []*Module) diag.List {
	var pending []*summary
	extra := 0
	for _, m := range parsed {
		if m.sum != nil && len(m.sum.diags) > 0 {
			pending = append(pending, m.sum) // diagAt increases with the order of parsing
			extra += len(m.sum.diags)
		}
	}
	if len(pending) == 0 {
		return diags
	}
	out := make(diag.List, 0, len(diags)+extra)
	for i := 0; i <= len(diags); i++ {
		for len(pending) > 0 && pending[0].diagAt == i {
			out = append(out, pending[0].diags...)
			pending[0].diags = nil
			pending = pending[1:]
		}
		if i < len(diags) {
			out = append(out, diags[i])
		}
	}
	return out
}

// resolveTop resolves one top-level statement of pass 2, then runs the
// checks of what only it feeds: the unused variables of the functions it
// defines and the members read from them (a local is read only in its
// function), so that nothing keeps the statement alive after.
func (rs *resolver) resolveTop(s Stmt) {
	m := rs.m
	// The names s binds get the module's symbols, as bind gave them in
	// pass 1 to the same names of the first tree (constrain reads its
	// target's).
	collectBindings([]Stmt{s}, true, func(id *Ident, _ Node, _ bool) {
		if id != nil && !isKeyword(id.Name) {
			id.Sym = m.Scope.Lookup(id.Name)
		}
	})
	first := len(rs.members)
	rs.stmt(s, m.Scope)
	kept := rs.members[:first]
	for _, u := range rs.members[first:] {
		if u.sym != nil && !u.sym.Scope.isFunc() {
			kept = append(kept, u) // a module variable: its values are all known at the end
			continue
		}
		rs.checkMember(u)
	}
	clear(rs.members[len(kept):])
	rs.members = kept
	rs.checkUnused(rs.scopes[1:])
	clear(rs.scopes[1:])
	rs.scopes = rs.scopes[:1]
}

// CheckHolding reports what Check reports on the program of in (the
// same list), holding less: a module of chunkMinBytes or more that
// parses chunk by chunk is checked in two passes (twopass.go), and no
// tree of it is kept. atPeak, when not nil, is called once, where it
// holds the most (for the tests of its memory).
func CheckHolding(in frontend.Input, atPeak func()) diag.List {
	_, diags := check(in, true, chunkMinBytes, chunkTokens, atPeak)
	return diags
}
