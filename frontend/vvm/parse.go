package vvm

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/antlr4-go/antlr/v4"

	"github.com/genesis-toolchain/genesis/diag"
	"github.com/genesis-toolchain/genesis/frontend/sllparse"
	"github.com/genesis-toolchain/genesis/frontend/source"
	"github.com/genesis-toolchain/genesis/frontend/vvm/parser"
)

// parseFile parses src into a File, reporting to r: chunk by chunk if it
// has chunkMinBytes or more (chunk.go), else whole.
func parseFile(filename string, src []byte, r *reporter) *File {
	f, _ := parseFileChunked(filename, src, r, chunkMinBytes, chunkTokens, nil)
	return f
}

// parseFileChunked is parseFile with the size from which a file is
// parsed chunk by chunk and the fewest tokens of a chunk, for the tests
// that compare the two ways. Given a summary, a file parsed chunk by
// chunk is summarized rather than kept, for a check in two passes
// (twopass.go): the File has no Stmts, sum holds what the first pass
// needs, and summarized is set. A file parsed whole (small, or with a
// syntax error) is kept, sum left empty.
func parseFileChunked(filename string, src []byte, r *reporter, minChunked, target int, sum *summary) (f *File, summarized bool) {
	f = &File{Name: filename, Src: src}
	b := &builder{r: r, file: filename}
	func() {
		defer r.recoverPhase(filename)
		b.checkUTF8(src)
		text := strings.TrimPrefix(string(src), "\uFEFF")
		if sum != nil {
			if summarizeChunks(text, src, b, minChunked, target, sum) {
				summarized = true
				return
			}
			*sum = summary{}
		} else if _, ok := parseChunks(text, src, b, minChunked, target, func(cs []Stmt) { f.Stmts = append(f.Stmts, cs...) }); ok {
			return
		}
		f.Stmts = nil
		b = &builder{r: r, file: filename} // parseChunks may have used b
		lexer := parser.NewVVMLexer(antlr.NewInputStream(text))
		lexer.RemoveErrorListeners()
		lexer.AddErrorListener(b)
		ts := newTokenSource(lexer, r, filename)
		tokens := antlr.NewCommonTokenStream(ts, antlr.TokenDefaultChannel)
		tree, ok := parseProgram(tokens, b)
		b.flushSyntaxErrors(ts.runaway)
		if !ok {
			b.r.errorf(b.stoppedAt, CodeSyntax, "too many syntax errors; the rest of the file is not parsed")
			return
		}
		if ts.runaway != nil {
			pos := b.pos(ts.runaway)
			b.runaway = &pos
		}
		b.deep = ts.deep
		f.Stmts = b.stmts(tree.AllStmt())
	}()
	return f, summarized
}

// parseProgram parses the tokens in two stages (package sllparse): SLL,
// and only if that gives up, again by a fresh parser with full LL
// prediction and error recovery, reporting to b. The token source runs
// once: the second stage reuses the tokens the first one read. ok is
// false when the parser gave up, after too many errors.
func parseProgram(tokens *antlr.CommonTokenStream, b *builder) (tree parser.IProgramContext, ok bool) {
	p := parser.NewVVMParser(tokens)
	if tree, ok := sllparse.Try(p, p.Program); ok {
		return tree, true
	}
	tokens.Seek(0)
	p = parser.NewVVMParser(tokens)
	p.RemoveErrorListeners()
	p.AddErrorListener(b)
	defer func() {
		if r := recover(); r != nil {
			if r != errTooMany {
				panic(r)
			}
			tree, ok = nil, false
		}
	}()
	return p.Program(), true
}

// A builder turns the ANTLR parse tree of a file into the AST, runs the
// checks that need only the tree, and reports syntax errors as the error
// listener of the lexer and parser. Every getter of the parse tree may
// return nil after error recovery: the builder then makes a *BadExpr or
// leaves the piece out, since the error is already reported.
type builder struct {
	*antlr.DefaultErrorListener
	r    *reporter
	file string

	pending      []syntaxError // the parser's errors, reported once the parse is done
	syntaxErrors int           // how many the parser reported, pending or not
	stoppedAt    diag.Pos      // where the parser gave up, after too many errors
	strayIndents int           // unexpected INDENTs reported, whose DEDENTs are not reported again
	runaway      *diag.Pos     // the token source's runaway token: the tree after it is garbage

	depth      int  // levels of the expression being built, up to maxDepth
	deep       bool // an expression nested too deeply was reported (once a file)
	nested     int  // how many statements the current one is inside
	defs       int  // how many defs
	loops      int  // how many loops of the innermost def (or the module)
	executable bool // an executable statement was seen at module scope
}

// checkUTF8 reports the first invalid UTF-8 sequence: ANTLR would read it
// as U+FFFD, and a string literal would silently hold other bytes than
// the file.
func (b *builder) checkUTF8(src []byte) {
	source.InvalidUTF8(src, func(line, col int, c byte) bool {
		b.r.syntaxErrorf(diag.Pos{File: b.file, Line: line, Col: col}, CodeSyntax, "invalid UTF-8 byte 0x%02x", c)
		return false
	})
}

// pos is the position of a token. ANTLR's column, like diag.Pos's, counts
// code points, but from 0.
func (b *builder) pos(t antlr.Token) diag.Pos { return source.TokenPos(b.file, t) }

// tpos is the position of a terminal node, or of nothing.
func (b *builder) tpos(n antlr.TerminalNode) diag.Pos { return source.TerminalPos(b.file, n) }

// cpos is where a rule context starts.
func (b *builder) cpos(c antlr.ParserRuleContext) diag.Pos { return source.ContextPos(b.file, c) }

// errorf reports an error the builder finds in the tree, unless the tree
// is garbage there: after the runaway token, or on a line with a syntax
// error, where the parser's recovery may have built anything.
func (b *builder) errorf(pos diag.Pos, code, format string, args ...any) {
	if b.garbage(pos) {
		return
	}
	b.r.errorf(pos, code, format, args...)
}

// warnf is errorf for a warning.
func (b *builder) warnf(pos diag.Pos, code, format string, args ...any) {
	if b.garbage(pos) {
		return
	}
	b.r.warnf(pos, code, format, args...)
}

// garbage reports whether the tree at pos may be what the parser's
// recovery built after a syntax error: after the runaway token, on a
// line with a syntax error, or nowhere (a node of a rule that matched
// nothing).
func (b *builder) garbage(pos diag.Pos) bool {
	return pos.Line == 0 || b.runaway != nil && !before(pos, *b.runaway) || b.r.afterSyntaxError(pos)
}

// ── Names ──

// name makes an Ident of a name: an identifier or a keyword.
func (b *builder) name(c parser.INameContext) *Ident {
	if c == nil || c.GetStart() == nil {
		return nil
	}
	return &Ident{NamePos: b.cpos(c), Name: c.GetText()}
}

// declName makes an Ident of a name that declares something (what: "a
// variable", "a parameter", …), reporting a reserved word (E010), or an
// assignment to it (E060).
func (b *builder) declName(c parser.INameContext, what string) *Ident {
	id := b.name(c)
	if id == nil {
		return nil
	}
	if c.IDENT() == nil {
		b.reserved(id, what)
	}
	return id
}

// reserved reports the reserved word id used as what.
func (b *builder) reserved(id *Ident, what string) {
	if id.Name == "it" && what == "a variable" {
		b.errorf(id.NamePos, CodeAssignIt, "cannot assign to it: it is the implicit input, set by with input, match and choose")
		return
	}
	msg := fmt.Sprintf("%s is a reserved word and cannot name %s", id.Name, what)
	if id.Name == "it" {
		msg += " (it is the implicit input)"
	}
	b.errorf(id.NamePos, CodeReserved, "%s", msg)
}

// ── Statements ──

// stmts builds a statement list. At module scope it checks that inputs
// come before any executable statement (E110).
func (b *builder) stmts(cs []parser.IStmtContext) []Stmt {
	var out []Stmt
	for _, c := range cs {
		for _, s := range b.stmt(c) {
			if b.nested == 0 {
				switch s := s.(type) {
				case *InputStmt:
					if b.executable {
						b.errorf(s.InputPos, CodeInputLate, "input %s is declared after an executable statement: inputs come first in a module", s.Name.Name)
					}
				case *SkillImport, *ImportStmt, *ExportStmt, *AgentStmt, *FuncDecl:
				default:
					b.executable = true
				}
			}
			out = append(out, s)
		}
	}
	return out
}

// stmt builds one statement; an export of several names makes several.
func (b *builder) stmt(c parser.IStmtContext) []Stmt {
	if c == nil {
		return nil
	}
	if s := c.SimpleStmt(); s != nil {
		return b.simple(s)
	}
	if s := c.CompoundStmt(); s != nil {
		if st := b.compound(s); st != nil {
			return []Stmt{st}
		}
	}
	return nil
}

// moduleOnly reports a declaration that may only appear at module scope
// (spec.md §15.1 step 3) when it appears elsewhere.
func (b *builder) moduleOnly(pos diag.Pos, what string) {
	if b.nested > 0 {
		b.errorf(pos, CodeSyntax, "%s is allowed only at module scope, not inside a block or a def", what)
	}
}

func (b *builder) simple(c parser.ISimpleStmtContext) []Stmt {
	one := func(s Stmt) []Stmt {
		if s == nil {
			return nil
		}
		return []Stmt{s}
	}
	switch c := c.(type) {
	case *parser.SkillImportContext:
		s := &SkillImport{ImportPos: b.tpos(c.IMPORT()), Skill: b.str(c.STRING(0)), Source: b.str(c.STRING(1))}
		b.moduleOnly(s.ImportPos, "a skill import")
		return one(s)
	case *parser.ModuleImportContext:
		return one(b.moduleImport(c))
	case *parser.ExportStmtContext:
		return b.export(c)
	case *parser.AgentStmtContext:
		s := &AgentStmt{AgentPos: b.tpos(c.AGENT()), Name: b.declName(c.Name(), "an agent")}
		b.moduleOnly(s.AgentPos, "an agent definition")
		if s.Name == nil {
			return nil
		}
		s.Config = b.kwargsOnly(c.ArgList(), "an agent definition takes keyword arguments key=value")
		return one(s)
	case *parser.InputStmtContext:
		return one(b.input(c))
	case *parser.ReturnStmtContext:
		s := &ReturnStmt{ReturnPos: b.tpos(c.RETURN())}
		if e := c.Expr(); e != nil {
			s.Value = b.expr(e)
		}
		if b.defs == 0 {
			b.errorf(s.ReturnPos, CodeReturnOutside, "return outside a def")
		}
		return one(s)
	case *parser.RaiseStmtContext:
		s := &RaiseStmt{RaisePos: b.tpos(c.RAISE())}
		if e := c.Expr(); e != nil {
			x := b.expr(e)
			lit, ok := x.(*StringLit)
			if !ok {
				b.errorf(x.Pos(), CodeSyntax, "raise takes a string literal, the message: raise \"…\"")
			}
			s.Msg = lit
		}
		return one(s)
	case *parser.PassStmtContext:
		return one(&PassStmt{PassPos: b.tpos(c.PASS())})
	case *parser.BreakStmtContext:
		s := &BreakStmt{BreakPos: b.tpos(c.BREAK())}
		if b.loops == 0 {
			b.errorf(s.BreakPos, CodeLoopControl, "break outside a loop")
		}
		return one(s)
	case *parser.ContinueStmtContext:
		s := &ContinueStmt{ContinuePos: b.tpos(c.CONTINUE())}
		if b.loops == 0 {
			b.errorf(s.ContinuePos, CodeLoopControl, "continue outside a loop")
		}
		return one(s)
	case *parser.AssignStmtContext:
		t := b.declName(c.Name(), "a variable")
		if t == nil {
			return nil
		}
		return one(&AssignStmt{Target: t, EqPos: b.tpos(c.ASSIGN()), Value: b.expr(c.Expr())})
	case *parser.ExprStmtContext:
		return one(&ExprStmt{X: b.expr(c.Expr())})
	}
	return nil
}

func (b *builder) moduleImport(c *parser.ModuleImportContext) Stmt {
	s := &ImportStmt{FromPos: b.tpos(c.FROM()), Path: b.str(c.STRING())}
	b.moduleOnly(s.FromPos, "a module import")
	spec := c.ImportSpec()
	if spec == nil || s.Path == nil {
		return nil
	}
	names := spec.AllName()
	switch {
	case spec.STAR() != nil:
		s.Kind = ImportModule
		if len(names) > 0 {
			s.Alias = b.declName(names[0], "an import alias")
		}
	default:
		if spec.AT() != nil {
			s.Kind = ImportAgent
		}
		if len(names) > 0 {
			// The imported name is the exporter's: a keyword there was
			// reported there. Only the local name is declared here.
			s.Name = b.name(names[0])
			if len(names) > 1 {
				s.Alias = b.declName(names[1], "an import alias")
			} else if s.Name != nil && names[0].IDENT() == nil {
				b.reserved(s.Name, "an import")
			}
		}
	}
	if s.Local() == nil {
		return nil
	}
	return s
}

// export builds `export x`, `export @a` and `export pack(k=v, x, …)`.
func (b *builder) export(c *parser.ExportStmtContext) []Stmt {
	pos := b.tpos(c.EXPORT())
	b.moduleOnly(pos, "an export")
	if c.AT() != nil {
		name := b.name(c.Name())
		if name == nil {
			return nil
		}
		return []Stmt{&ExportStmt{ExportPos: pos, Agent: true, Name: name, Value: name}}
	}
	x := b.expr(c.Expr())
	switch x := x.(type) {
	case *Ident:
		return []Stmt{&ExportStmt{ExportPos: pos, Name: x, Value: x}}
	case *CallExpr:
		if x.Fun.Name != "pack" {
			break
		}
		var out []Stmt
		for _, a := range x.Args {
			id, ok := a.(*Ident)
			if !ok {
				b.errorf(a.Pos(), CodeSyntax, "export pack(…) takes names and key=name arguments; name the value first: x = …")
				continue
			}
			out = append(out, &ExportStmt{ExportPos: pos, Name: id, Value: id})
		}
		for _, kw := range x.Kwargs {
			id, ok := kw.Value.(*Ident)
			if !ok {
				b.errorf(kw.Value.Pos(), CodeSyntax, "export pack(…) takes names and key=name arguments; name the value first: x = …")
				continue
			}
			out = append(out, &ExportStmt{ExportPos: pos, Name: &Ident{NamePos: kw.NamePos, Name: kw.Name}, Value: id})
		}
		return out
	case *BadExpr:
		return nil
	}
	b.errorf(x.Pos(), CodeSyntax, "export takes a name: export x (or export @agent, or export pack(key=x, …))")
	return nil
}

func (b *builder) input(c *parser.InputStmtContext) Stmt {
	s := &InputStmt{InputPos: b.tpos(c.INPUT()), Name: b.declName(c.Name(), "an input")}
	b.moduleOnly(s.InputPos, "an input declaration")
	if s.Name == nil {
		return nil
	}
	if c.STRING() != nil {
		s.Doc = b.str(c.STRING())
		if s.Doc != nil && strings.TrimSpace(s.Doc.Value) == "" {
			b.warnf(s.Doc.ValuePos, CodeEmptyInputDoc, "input %s has an empty description", s.Name.Name)
		}
	}
	if e := c.Expr(); e != nil {
		s.Default = b.expr(e)
	}
	if c.COLON() == nil && c.ASSIGN() == nil {
		b.errorf(s.Name.NamePos, CodeSyntax, "input %s needs a description or a default: input %[1]s: \"…\" or input %[1]s = …", s.Name.Name)
	}
	return s
}

// block builds the statements of a block. A block that is missing (the
// line after colon is not indented) is reported (E002).
func (b *builder) block(c parser.IBlockContext, colon antlr.TerminalNode) []Stmt {
	if c == nil {
		return nil
	}
	if c.INDENT() == nil {
		b.missingBlock(colon, "an indented block")
		return nil
	}
	b.nested++
	defer func() { b.nested-- }()
	return b.stmts(c.AllStmt())
}

// missingBlock reports a compound statement without its block, at the
// colon that should open it.
func (b *builder) missingBlock(colon antlr.TerminalNode, what string) {
	if colon == nil {
		return
	}
	b.errorf(b.tpos(colon), CodeIndent, "expected %s after ':', on the next lines, indented", what)
}

func (b *builder) compound(c parser.ICompoundStmtContext) Stmt {
	switch c := c.(type) {
	case *parser.DefStmtContext:
		return b.def(c)
	case *parser.IfStmtContext:
		s := &IfStmt{IfPos: b.tpos(c.IF()), Cond: b.expr(c.Expr()), Then: b.block(c.Block(), c.COLON())}
		for _, e := range c.AllElifClause() {
			s.Elifs = append(s.Elifs, &ElifClause{ElifPos: b.tpos(e.ELIF()), Cond: b.expr(e.Expr()), Body: b.block(e.Block(), e.COLON())})
		}
		if e := c.ElseClause(); e != nil {
			s.ElsePos = b.tpos(e.ELSE())
			s.Else = b.block(e.Block(), e.COLON())
			if s.Else == nil {
				s.Else = []Stmt{} // an else clause, if empty after an error
			}
		}
		return s
	case *parser.WhileStmtContext:
		s := &WhileStmt{WhilePos: b.tpos(c.WHILE()), Cond: b.expr(c.Expr())}
		b.loops++
		s.Body = b.block(c.Block(), c.COLON())
		b.loops--
		return s
	case *parser.ForStmtContext:
		s := &ForStmt{ForPos: b.tpos(c.FOR()), Var: b.declName(c.Name(), "a variable"), Iter: b.expr(c.Expr())}
		b.loops++
		s.Body = b.block(c.Block(), c.COLON())
		b.loops--
		if s.Var == nil {
			return nil
		}
		return s
	case *parser.MatchStmtContext:
		s := &MatchStmt{MatchPos: b.tpos(c.MATCH()), Subject: b.expr(c.Expr())}
		if c.INDENT() == nil {
			b.missingBlock(c.COLON(), "the cases of the match")
		}
		b.nested++
		for _, cc := range c.AllCaseClause() {
			s.Cases = append(s.Cases, &CaseClause{CasePos: b.tpos(cc.CASE()), Pattern: b.pattern(cc.Pattern()), Body: b.block(cc.Block(), cc.COLON())})
		}
		b.nested--
		return s
	case *parser.ChooseStmtContext:
		return b.choose(c)
	case *parser.ConstrainStmtContext:
		return b.constrain(c)
	case *parser.WithInputStmtContext:
		return &WithInputStmt{WithPos: b.tpos(c.WITH()), Input: b.expr(c.Expr()), Body: b.block(c.Block(), c.COLON())}
	case *parser.TryStmtContext:
		s := &TryStmt{TryPos: b.tpos(c.TRY()), Body: b.block(c.Block(), c.COLON())}
		if e := c.ExceptClause(); e != nil {
			s.Except = &ExceptClause{ExceptPos: b.tpos(e.EXCEPT())}
			if e.AS() == nil {
				b.errorf(s.Except.ExceptPos, CodeSyntax, "except needs a name for the error: except as err:")
			} else {
				s.Except.Var = b.declName(e.Name(), "a variable")
			}
			s.Except.Body = b.block(e.Block(), e.COLON())
		}
		if f := c.FinallyClause(); f != nil {
			s.Finally = &FinallyClause{FinallyPos: b.tpos(f.FINALLY()), Body: b.block(f.Block(), f.COLON())}
		}
		if s.Except == nil && s.Finally == nil {
			b.errorf(s.TryPos, CodeTryAlone, "try without except or finally")
		}
		return s
	case *parser.ParallelStmtContext:
		return b.parallel(c)
	}
	return nil
}

func (b *builder) def(c *parser.DefStmtContext) Stmt {
	names := c.AllName()
	if len(names) == 0 {
		return nil
	}
	s := &FuncDecl{DefPos: b.tpos(c.DEF()), Name: b.declName(names[0], "a function"), Hoisted: b.nested == 0}
	seen := map[string]bool{}
	for _, n := range names[1:] {
		p := b.declName(n, "a parameter")
		if p == nil {
			continue
		}
		if seen[p.Name] {
			b.errorf(p.NamePos, CodeSyntax, "duplicate parameter %s", p.Name)
		}
		seen[p.Name] = true
		s.Params = append(s.Params, p)
	}
	// A def's body is a world of its own: its loops are not the caller's.
	defs, loops := b.defs, b.loops
	b.defs, b.loops = defs+1, 0
	s.Body = b.block(c.Block(), c.COLON())
	b.defs, b.loops = defs, loops
	if s.Name == nil {
		return nil
	}
	return s
}

func (b *builder) choose(c *parser.ChooseStmtContext) Stmt {
	exprs := c.AllExpr()
	s := &ChooseStmt{ChoosePos: b.tpos(c.CHOOSE()), As: b.declName(c.Name(), "a variable")}
	if len(exprs) > 0 {
		s.Subject = b.expr(exprs[0])
	}
	if len(exprs) > 1 {
		s.Criterion = b.criterion(b.expr(exprs[1]), "choose … by")
	}
	if c.INDENT() == nil {
		b.missingBlock(c.COLON(), "the options of the choose")
	}
	b.nested++
	labels := map[string]bool{}
	for _, oc := range c.AllOptionClause() {
		o := &OptionClause{OptionPos: b.tpos(oc.OPTION())}
		if e := oc.Expr(); e != nil {
			x := b.expr(e)
			if lit, ok := x.(*StringLit); ok {
				o.Label = lit
				if labels[lit.Value] {
					b.errorf(lit.ValuePos, CodeSyntax, "duplicate option %q", lit.Value)
				}
				labels[lit.Value] = true
			} else if _, bad := x.(*BadExpr); !bad {
				b.errorf(x.Pos(), CodeSyntax, "an option's label is a string literal: option \"…\":")
			}
		}
		o.Body = b.block(oc.Block(), oc.COLON())
		s.Options = append(s.Options, o)
	}
	b.nested--
	if s.Subject == nil || s.As == nil {
		return nil
	}
	return s
}

func (b *builder) constrain(c *parser.ConstrainStmtContext) Stmt {
	s := &ConstrainStmt{ConstrainPos: b.tpos(c.CONSTRAIN()), Target: b.declName(c.Name(), "a variable")}
	s.Options = b.kwargsOnly(c.ArgList(), "constrain takes keyword options: constrain x(attempts=3)")
	if c.INDENT() == nil {
		b.missingBlock(c.COLON(), "the requirements of the constrain")
	}
	for _, rc := range c.AllRequireClause() {
		rq := &RequireClause{RequirePos: b.tpos(rc.REQUIRE())}
		if e := rc.Expr(); e != nil {
			rq.Criterion = b.criterion(b.expr(e), "require")
		}
		s.Requires = append(s.Requires, rq)
	}
	if s.Target == nil {
		return nil
	}
	return s
}

// criterion checks that x, the criterion of a choose or a require, is a
// semantic predicate without an input, and returns its template.
func (b *builder) criterion(x Expr, where string) *Template {
	switch x := x.(type) {
	case *SemPred:
		if x.Input != nil {
			b.errorf(x.Input.Pos(), CodeSyntax, "the criterion of %s judges it and takes no input: drop the (…)", where)
		}
		return x.Criterion
	case *BadExpr:
		return nil
	}
	b.errorf(x.Pos(), CodeSyntax, "%s needs a semantic predicate ?`…`", where)
	return nil
}

// Parallel options (spec-newer.md §12.5.1) and their values.
var (
	parallelOptions = []string{"count", "join", "on_fail"}
	joinValues      = []string{"all", "first", "any"}
	onFailValues    = []string{"fail-fast", "continue", "ignore"}
)

func (b *builder) parallel(c *parser.ParallelStmtContext) Stmt {
	s := &ParallelStmt{ParallelPos: b.tpos(c.PARALLEL()), Join: "all", OnFail: "fail-fast", As: b.declName(c.Name(), "a variable")}
	s.Options = b.kwargsOnly(c.ArgList(), "parallel takes keyword options: parallel(join=\"all\") as results:")
	blk := c.Block()
	if blk != nil && blk.INDENT() == nil {
		b.errorf(b.tpos(c.COLON()), CodeEmptyParallel, "empty parallel block: it needs at least one branch name = expr, on the next lines, indented")
	} else if blk != nil {
		b.nested++
		names := map[string]bool{}
		for _, st := range b.stmts(blk.AllStmt()) {
			switch st := st.(type) {
			case *AssignStmt:
				if names[st.Target.Name] {
					b.errorf(st.Target.NamePos, CodeDupBranch, "duplicate branch %s in the parallel block", st.Target.Name)
				}
				names[st.Target.Name] = true
				s.Branches = append(s.Branches, st)
			case *ExprStmt:
				b.errorf(st.Pos(), CodeAnonBranch, "every branch of a parallel block has a name: name = expr")
			default:
				b.errorf(st.Pos(), CodeSyntax, "a parallel block holds only branches name = expr")
			}
		}
		b.nested--
	}
	var count *KwArg
	joinOK := true
	for _, o := range s.Options {
		switch o.Name {
		case "join":
			v, ok := b.stringOption(o, joinValues, CodeJoin)
			if ok {
				s.Join = v
			}
			joinOK = ok
		case "on_fail":
			if v, ok := b.stringOption(o, onFailValues, CodeOnFail); ok {
				s.OnFail = v
			}
		case "count":
			count = o
			n, ok := o.Value.(*NumberLit)
			if !ok || !n.Int {
				b.errorf(o.Value.Pos(), CodeCountRange, "count must be an integer literal")
				continue
			}
			s.Count = int(min(n.Value, 1<<30))
		default:
			msg := fmt.Sprintf("unknown parallel option %s", o.Name)
			if sug := closest(o.Name, parallelOptions); sug != "" {
				msg += fmt.Sprintf(" (did you mean %s?)", sug)
			}
			b.errorf(o.NamePos, CodeSyntax, "%s", msg)
		}
	}
	if count != nil && joinOK {
		n, lit := count.Value.(*NumberLit)
		switch {
		case s.Join != "any":
			b.errorf(count.NamePos, CodeCountJoin, "count is only valid with join=\"any\"")
		case lit && n.Int && (s.Count < 1 || s.Count > len(s.Branches)):
			b.errorf(count.Value.Pos(), CodeCountRange, "count must be between 1 and the number of branches, %d", len(s.Branches))
		}
	}
	if s.Join == "first" && len(s.Branches) == 1 {
		b.warnf(s.ParallelPos, CodeSingleRace, "join=\"first\" with a single branch: there is no race")
	}
	if s.As == nil {
		return nil
	}
	return s
}

// stringOption reads an option whose value must be one of a string
// literal's values, reporting code otherwise.
func (b *builder) stringOption(o *KwArg, values []string, code string) (string, bool) {
	lit, ok := o.Value.(*StringLit)
	if ok {
		for _, v := range values {
			if lit.Value == v {
				return v, true
			}
		}
	}
	b.errorf(o.Value.Pos(), code, "%s must be %s", o.Name, oneOf(values))
	return "", false
}

// oneOf lists quoted values: "a", "b" or "c".
func oneOf(values []string) string {
	q := make([]string, len(values))
	for i, v := range values {
		q[i] = strconv.Quote(v)
	}
	return strings.Join(q[:len(q)-1], ", ") + " or " + q[len(q)-1]
}

// ── Patterns ──

func (b *builder) pattern(c parser.IPatternContext) Pattern {
	switch c := c.(type) {
	case *parser.ErrorPatternContext:
		p := &ErrorPattern{ErrorPos: b.tpos(c.ERROR())}
		args, kwargs := b.args(c.ArgList())
		switch {
		case len(args) == 1 && len(kwargs) == 0:
			if id, ok := args[0].(*Ident); ok {
				if id.Name != "_" {
					p.Bind = id
				}
				return p
			}
		case len(args) == 0 && len(kwargs) == 1 && kwargs[0].Name == "kind":
			if lit, ok := kwargs[0].Value.(*StringLit); ok {
				p.Kind = lit
				return p
			}
		}
		b.errorf(p.ErrorPos, CodePattern, "invalid error pattern: use error(_), error(kind=\"…\") or error(name)")
		return p
	case *parser.ExprPatternContext:
		x := b.expr(c.Expr())
		switch x := x.(type) {
		case *Ident:
			if x.Name == "_" {
				return &WildcardPattern{UnderscorePos: x.NamePos}
			}
		case *SemPred:
			if x.Input != nil {
				b.errorf(x.Input.Pos(), CodePattern, "a case predicate judges the match subject and takes no input: drop the (…), or match on that value")
			}
			return &PredPattern{QPos: x.QPos, Criterion: x.Criterion}
		case *BadExpr:
			return &WildcardPattern{UnderscorePos: x.BadPos}
		}
		b.errorf(x.Pos(), CodePattern, "invalid case pattern: use _, error(_), error(kind=\"…\") or ?`…`")
		return &WildcardPattern{UnderscorePos: x.Pos()}
	}
	return &WildcardPattern{UnderscorePos: b.cpos(c)}
}

// ── Expressions ──

func (b *builder) bad(c antlr.ParserRuleContext) Expr {
	return &BadExpr{BadPos: b.cpos(c)}
}

// deeper enters n more levels of an expression, the first of them at
// pos(0), the last at pos(n-1), unless that goes past maxDepth: then it
// reports the level that does (once a file) and returns false, and the
// caller builds a *BadExpr instead of the subtree. A caller that
// entered leaves with b.depth -= n.
func (b *builder) deeper(n int, pos func(i int) diag.Pos) bool {
	if b.depth+n <= maxDepth {
		b.depth += n
		return true
	}
	if !b.deep {
		b.deep = true
		b.r.syntaxErrorf(pos(maxDepth-b.depth), CodeSyntax, "expression nested too deeply: more than %d levels of brackets, not, lambdas, operators and postfixes", maxDepth)
	}
	return false
}

func (b *builder) expr(c parser.IExprContext) Expr {
	if c == nil {
		return b.bad(c)
	}
	if !b.deeper(1, func(int) diag.Pos { return b.cpos(c) }) {
		return b.bad(c)
	}
	defer func() { b.depth-- }()
	switch c := c.(type) {
	case *parser.LambdaExprContext:
		return b.lambda(c)
	case *parser.OperatorExprContext:
		return b.or(c.OrExpr())
	}
	return b.bad(c)
}

func (b *builder) lambda(c *parser.LambdaExprContext) Expr {
	pc := c.LambdaParams()
	if pc == nil {
		return b.bad(c)
	}
	l := &LambdaExpr{ParamsPos: b.cpos(pc), Arrow: b.tpos(c.ARROW())}
	seen := map[string]bool{}
	for _, n := range pc.AllIDENT() {
		p := &Ident{NamePos: b.tpos(n), Name: n.GetText()}
		if seen[p.Name] {
			b.errorf(p.NamePos, CodeSyntax, "duplicate parameter %s", p.Name)
		}
		seen[p.Name] = true
		l.Params = append(l.Params, p)
	}
	l.Body = b.expr(c.Expr())
	return l
}

// chain builds `x op y op z …`, left-associative: operands are the
// operand contexts, ops the operator nodes between them (terminals, or
// the cmpOp contexts), op the Op of each, build an operand. The tree is
// as deep as the chain is long, and counts so against maxDepth.
func (b *builder) chain(operands []antlr.ParserRuleContext, ops []antlr.Tree, op func(antlr.Tree) Op, build func(antlr.ParserRuleContext) Expr) Expr {
	n := len(operands) - 1
	if n > len(ops) {
		n = len(ops) // the parser's recovery left an operator out
	}
	if !b.deeper(n, func(i int) diag.Pos { return b.treePos(ops[i]) }) {
		return b.bad(operands[0])
	}
	defer func() { b.depth -= n }()
	x := build(operands[0])
	for i := 0; i < n; i++ {
		x = &BinaryExpr{X: x, OpPos: b.treePos(ops[i]), Op: op(ops[i]), Y: build(operands[i+1])}
	}
	return x
}

// treePos is where a terminal or rule node of the parse tree starts.
func (b *builder) treePos(t antlr.Tree) diag.Pos {
	switch t := t.(type) {
	case antlr.TerminalNode:
		return b.tpos(t)
	case antlr.ParserRuleContext:
		return b.cpos(t)
	}
	return diag.Pos{File: b.file}
}

// operators returns the children of c that are operators between its
// operands: its terminals of the given token types, in order.
func operators(c antlr.ParserRuleContext, types ...int) []antlr.Tree {
	var ops []antlr.Tree
	for _, ch := range c.GetChildren() {
		if t, ok := ch.(antlr.TerminalNode); ok {
			for _, typ := range types {
				if t.GetSymbol().GetTokenType() == typ {
					ops = append(ops, t)
				}
			}
		}
	}
	return ops
}

func (b *builder) or(c parser.IOrExprContext) Expr {
	if c == nil {
		return b.bad(c)
	}
	ands := c.AllAndExpr()
	if len(ands) == 0 {
		return b.bad(c)
	}
	operands := make([]antlr.ParserRuleContext, len(ands))
	for i, a := range ands {
		operands[i] = a
	}
	return b.chain(operands, operators(c, parser.VVMLexerOR), func(antlr.Tree) Op { return OpOr },
		func(a antlr.ParserRuleContext) Expr { return b.and(a.(parser.IAndExprContext)) })
}

func (b *builder) and(c parser.IAndExprContext) Expr {
	nots := c.AllNotExpr()
	if len(nots) == 0 {
		return b.bad(c)
	}
	operands := make([]antlr.ParserRuleContext, len(nots))
	for i, n := range nots {
		operands[i] = n
	}
	return b.chain(operands, operators(c, parser.VVMLexerAND), func(antlr.Tree) Op { return OpAnd },
		func(n antlr.ParserRuleContext) Expr { return b.not(n.(parser.INotExprContext)) })
}

func (b *builder) not(c parser.INotExprContext) Expr {
	if c == nil {
		return b.bad(c)
	}
	n := c.NOT()
	if n == nil {
		return b.cmp(c.CmpExpr())
	}
	if !b.deeper(1, func(int) diag.Pos { return b.tpos(n) }) {
		return b.bad(c)
	}
	defer func() { b.depth-- }()
	return &UnaryExpr{OpPos: b.tpos(n), Op: OpNot, X: b.not(c.NotExpr())}
}

var cmpOps = map[int]Op{
	parser.VVMLexerEQ: OpEq, parser.VVMLexerNE: OpNe, parser.VVMLexerLT: OpLt,
	parser.VVMLexerLE: OpLe, parser.VVMLexerGT: OpGt, parser.VVMLexerGE: OpGe,
}

func (b *builder) cmp(c parser.ICmpExprContext) Expr {
	if c == nil {
		return b.bad(c)
	}
	adds := c.AllAddExpr()
	if len(adds) == 0 {
		return b.bad(c)
	}
	operands := make([]antlr.ParserRuleContext, len(adds))
	for i, a := range adds {
		operands[i] = a
	}
	var ops []antlr.Tree
	for _, ch := range c.GetChildren() {
		if oc, ok := ch.(parser.ICmpOpContext); ok {
			ops = append(ops, oc)
		}
	}
	if len(ops) < len(adds)-1 {
		return b.bad(c)
	}
	if len(ops) > 1 {
		b.errorf(b.treePos(ops[1]), CodeSyntax, "comparisons do not chain: write a %s b and b %s c", ops[0].(parser.ICmpOpContext).GetText(), ops[1].(parser.ICmpOpContext).GetText())
	}
	return b.chain(operands, ops, func(t antlr.Tree) Op { return cmpOps[t.(parser.ICmpOpContext).GetStart().GetTokenType()] },
		func(a antlr.ParserRuleContext) Expr { return b.add(a.(parser.IAddExprContext)) })
}

func (b *builder) add(c parser.IAddExprContext) Expr {
	if c == nil {
		return b.bad(c)
	}
	ops := c.AllPostfixExpr()
	if len(ops) == 0 {
		return b.bad(c)
	}
	operands := make([]antlr.ParserRuleContext, len(ops))
	for i, o := range ops {
		operands[i] = o
	}
	return b.chain(operands, operators(c, parser.VVMLexerPLUS, parser.VVMLexerMINUS), func(t antlr.Tree) Op {
		if t.(antlr.TerminalNode).GetSymbol().GetTokenType() == parser.VVMLexerMINUS {
			return OpSub
		}
		return OpAdd
	}, func(o antlr.ParserRuleContext) Expr { return b.postfix(o.(parser.IPostfixExprContext)) })
}

func (b *builder) postfix(c parser.IPostfixExprContext) Expr {
	if c == nil {
		return b.bad(c)
	}
	pcs := c.AllPostfix()
	if !b.deeper(len(pcs), func(i int) diag.Pos { return b.cpos(pcs[i]) }) {
		return b.bad(c)
	}
	defer func() { b.depth -= len(pcs) }()
	x := b.primary(c.Primary())
	for _, pc := range pcs {
		switch pc := pc.(type) {
		case *parser.WithPostfixContext:
			x = &WithExpr{X: x, Dot: b.tpos(pc.DOT()), Args: b.kwargsOnly(pc.ArgList(), ".with takes keyword arguments key=value")}
		case *parser.MemberPostfixContext:
			n := b.name(pc.Name())
			if n == nil {
				return b.bad(c)
			}
			x = &MemberExpr{X: x, Dot: b.tpos(pc.DOT()), Name: n.Name, NamePos: n.NamePos}
		case *parser.IndexPostfixContext:
			x = &IndexExpr{X: x, Lbrack: b.tpos(pc.LBRACK()), Index: b.expr(pc.Expr())}
		}
	}
	return x
}

func (b *builder) primary(c parser.IPrimaryContext) Expr {
	switch c := c.(type) {
	case *parser.UnitLitContext:
		return &UnitLit{Lparen: b.tpos(c.LPAREN())}
	case *parser.TrueLitContext:
		return &BoolLit{ValuePos: b.tpos(c.TRUE()), Value: true}
	case *parser.FalseLitContext:
		return &BoolLit{ValuePos: b.tpos(c.FALSE())}
	case *parser.NumberLitContext:
		return b.number(c.NUMBER())
	case *parser.StringLitContext:
		if s := b.str(c.STRING()); s != nil {
			return s
		}
	case *parser.ItExprContext:
		return &ItExpr{ItPos: b.tpos(c.IT())}
	case *parser.CallExprContext:
		call := &CallExpr{Fun: &Ident{NamePos: b.tpos(c.IDENT()), Name: c.IDENT().GetText()}, Lparen: b.tpos(c.LPAREN())}
		call.Args, call.Kwargs = b.args(c.ArgList())
		return call
	case *parser.NameExprContext:
		return &Ident{NamePos: b.tpos(c.IDENT()), Name: c.IDENT().GetText()}
	case *parser.ListLitContext:
		l := &ListLit{Lbrack: b.tpos(c.LBRACK())}
		for _, e := range c.AllExpr() {
			l.Elems = append(l.Elems, b.expr(e))
		}
		return l
	case *parser.ObjectLitContext:
		return b.object(c)
	case *parser.AgentCallContext:
		return b.agentCall(c)
	case *parser.SemPredContext:
		p := &SemPred{QPos: b.tpos(c.QUESTION()), Criterion: b.template(c.TEMPLATE())}
		if e := c.Expr(); e != nil {
			p.Input = b.expr(e)
		}
		if p.Criterion == nil {
			return b.bad(c)
		}
		return p
	case *parser.ParenExprContext:
		return b.expr(c.Expr())
	}
	return b.bad(c)
}

func (b *builder) object(c *parser.ObjectLitContext) Expr {
	o := &ObjectLit{Lbrace: b.tpos(c.LBRACE())}
	for _, fc := range c.AllField() {
		f := &Field{Value: b.expr(fc.Expr())}
		if n := fc.Name(); n != nil {
			id := b.name(n)
			if id == nil {
				continue
			}
			f.KeyPos, f.Key = id.NamePos, id.Name
		} else if s := b.str(fc.STRING()); s != nil {
			f.KeyPos, f.Key = s.ValuePos, s.Value
		} else {
			continue
		}
		o.Fields = append(o.Fields, f)
	}
	return o
}

func (b *builder) agentCall(c *parser.AgentCallContext) Expr {
	rc := c.AgentRef()
	if rc == nil {
		return b.bad(c)
	}
	ref := &AgentRef{At: b.tpos(rc.AT())}
	if rc.LBRACE() != nil {
		ref.Inline = b.kwargsOnly(rc.ArgList(), "an inline agent @{…} takes key=value pairs")
		if ref.Inline == nil {
			ref.Inline = []*KwArg{}
		}
	} else {
		ref.Name = b.name(rc.Name())
		if ref.Name == nil {
			return b.bad(c)
		}
		if rc.WITH() != nil {
			ref.HasWith = true
			ref.With = b.kwargsOnly(rc.ArgList(), ".with takes keyword arguments key=value")
		}
	}
	call := &AgentCall{Agent: ref, Template: b.template(c.TEMPLATE()), Lparen: b.tpos(c.LPAREN())}
	if call.Template == nil {
		return b.bad(c)
	}
	args, kwargs := b.args(c.ArgList())
	if len(args) > 0 {
		call.Input = args[0]
	}
	if len(args) > 1 {
		b.errorf(args[1].Pos(), CodeSyntax, "an agent call takes one input: pass several values as a list [a, b] or pack(a, b)")
	}
	call.Options = kwargs
	return call
}

// args builds an argument list: the positional arguments, then the
// keyword ones. A positional argument after a keyword one, or a keyword
// given twice, is reported.
func (b *builder) args(c parser.IArgListContext) (args []Expr, kwargs []*KwArg) {
	if c == nil {
		return nil, nil
	}
	seen := map[string]bool{}
	for _, ac := range c.AllArg() {
		if ac.ASSIGN() == nil {
			x := b.expr(ac.Expr())
			if len(kwargs) > 0 {
				b.errorf(x.Pos(), CodeSyntax, "positional argument after a keyword argument")
			}
			args = append(args, x)
			continue
		}
		n := b.name(ac.Name())
		if n == nil {
			continue
		}
		if seen[n.Name] {
			b.errorf(n.NamePos, CodeSyntax, "duplicate keyword argument %s", n.Name)
		}
		seen[n.Name] = true
		kwargs = append(kwargs, &KwArg{NamePos: n.NamePos, Name: n.Name, Value: b.expr(ac.Expr())})
	}
	return args, kwargs
}

// kwargsOnly builds an argument list that takes only keyword arguments,
// reporting positional ones with msg.
func (b *builder) kwargsOnly(c parser.IArgListContext, msg string) []*KwArg {
	args, kwargs := b.args(c)
	for _, a := range args {
		b.errorf(a.Pos(), CodeSyntax, "%s", msg)
	}
	return kwargs
}

// ── Literals ──

var numberRE = regexp.MustCompile(`^[0-9]+(\.[0-9]+)?$`)

func (b *builder) number(n antlr.TerminalNode) Expr {
	pos := b.tpos(n)
	text := n.GetText()
	if !numberRE.MatchString(text) {
		b.errorf(pos, CodeSyntax, "malformed number %s: a number is digits, with an optional fraction (3.14)", abbreviate(text))
		return &NumberLit{ValuePos: pos, Text: text}
	}
	v, _ := strconv.ParseFloat(text, 64)
	return &NumberLit{ValuePos: pos, Text: text, Value: v, Int: !strings.Contains(text, ".")}
}

// str decodes a STRING token: "…" or """…""", with JSON's escapes
// (spec.md §0.5.1). An unknown escape is reported at its own column
// (E005). The token may be unterminated (the token source reported it):
// the string is then what there is.
func (b *builder) str(n antlr.TerminalNode) *StringLit {
	if n == nil {
		return nil
	}
	text := n.GetText()
	lit := &StringLit{ValuePos: b.tpos(n)}
	quote := `"`
	if strings.HasPrefix(text, `"""`) {
		quote = `"""`
	}
	pos := lit.ValuePos
	pos.Col += len(quote)
	rest := text[len(quote):]
	var out strings.Builder
	for len(rest) > 0 && !strings.HasPrefix(rest, quote) {
		r, size := utf8.DecodeRuneInString(rest)
		if r != '\\' {
			out.WriteString(rest[:size])
			rest = rest[size:]
			if r == '\n' {
				pos.Line, pos.Col = pos.Line+1, 1
			} else {
				pos.Col++
			}
			continue
		}
		esc := pos
		e, size := utf8.DecodeRuneInString(rest[1:])
		n := 2 // the escape's length in code points
		switch e {
		case '"', '\\', '/':
			out.WriteRune(e)
		case 'b':
			out.WriteByte('\b')
		case 'f':
			out.WriteByte('\f')
		case 'n':
			out.WriteByte('\n')
		case 'r':
			out.WriteByte('\r')
		case 't':
			out.WriteByte('\t')
		case 'u':
			hex := prefix(rest[2:], 4)
			if v, err := strconv.ParseUint(hex, 16, 32); err == nil && len(hex) == 4 {
				out.WriteRune(rune(v))
				n = 6
			} else {
				b.errorf(esc, CodeEscape, "unknown escape sequence: \\u must be followed by four hexadecimal digits")
			}
		case '\n', '\r':
			b.errorf(esc, CodeEscape, "unknown escape sequence: a backslash before a line break")
			if e == '\n' {
				rest = rest[1+size:]
				pos.Line, pos.Col = pos.Line+1, 1
				continue
			}
		default:
			if size == 0 {
				// A backslash ends an unterminated string.
				n, size = 1, 0
				break
			}
			b.errorf(esc, CodeEscape, "unknown escape sequence \\%c (a string knows \\\" \\\\ \\/ \\b \\f \\n \\r \\t and \\uXXXX)", e)
			out.WriteRune(e)
		}
		bytes := 1 + size
		if n == 6 {
			bytes = 6
		}
		rest = rest[bytes:]
		pos.Col += n
	}
	lit.Value = out.String()
	return lit
}

// prefix returns at most the first n bytes of s.
func prefix(s string, n int) string {
	if len(s) < n {
		return s
	}
	return s[:n]
}

// abbreviate shortens s for a message.
func abbreviate(s string) string {
	const max = 24
	if utf8.RuneCountInString(s) <= max {
		return s
	}
	return string([]rune(s)[:max-1]) + "…"
}

// quoteRune quotes the text of a one-character token for a message.
func quoteRune(s string) string {
	return strconv.Quote(s)
}
