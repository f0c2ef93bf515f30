package genesis

import (
	"errors"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/antlr4-go/antlr/v4"

	"github.com/genesis-toolchain/genesis/diag"
	"github.com/genesis-toolchain/genesis/frontend"
	"github.com/genesis-toolchain/genesis/frontend/genesis/parser"
	"github.com/genesis-toolchain/genesis/frontend/sllparse"
	"github.com/genesis-toolchain/genesis/frontend/source"
)

// Parse parses one Genesis source file. It always returns a File; when
// the list holds errors the File may have holes (*BadExpr) and is only
// good for tooling: Check must not be given it. Parse never panics,
// whatever src holds, and may be called from several goroutines at once.
func Parse(file string, src []byte) (f *File, diags diag.List) {
	f, r := parse(file, src, true, 0)
	return f, r.sortedDiags()
}

// Source is one source file of a program, for ParseFiles.
type Source = frontend.Source

// ParseFiles parses the files of one program, in order, as Parse does,
// with one error cap for them all (MaxErrors): once it is reached, the
// files after are not parsed and their Files are empty. It returns a File
// for every source, and the diagnostics file by file.
func ParseFiles(srcs []Source) ([]*File, diag.List) {
	var files []*File
	var all diag.List
	errs := 0
	for _, s := range srcs {
		if errs > MaxErrors {
			files = append(files, &File{Name: s.Name, Src: s.Data})
			continue
		}
		f, r := parse(s.Name, s.Data, true, errs)
		files = append(files, f)
		all = append(all, r.sortedDiags()...)
		errs = r.n
	}
	return files, all
}

// parse is Parse, with the concurrent path for large files or without it.
// errs is the number of errors reported before, by the files parsed
// before this one; the returned reporter holds this file's diagnostics and
// the count after it.
func parse(file string, src []byte, concurrent bool, errs int) (f *File, r *reporter) {
	f = &File{Name: file, Src: src}
	if concurrent {
		if decls, ok := parseConcurrently(file, src); ok {
			f.Decls = decls
			return f, &reporter{n: errs}
		}
	}
	b := &builder{file: file, reporter: reporter{n: errs}}
	func() {
		defer b.recoverPhase(file)
		b.checkUTF8(src)
		lexer := parser.NewGenesisLexer(antlr.NewInputStream(string(src)))
		lexer.RemoveErrorListeners()
		lexer.AddErrorListener(b)
		tokens := antlr.NewCommonTokenStream(lexer, antlr.TokenDefaultChannel)
		tokens.Fill()
		if d := source.TooDeep(tokens.GetAllTokens(), depthClass); d != nil {
			if d.Chain {
				b.errorf(b.pos(d.Tok), CodeSyntax, "expression longer than %d operators; split it", MaxChain)
			} else {
				b.errorf(b.pos(d.Tok), CodeSyntax, "nesting deeper than %d levels (brackets, prefix operators, else if); split the expression or the function", MaxNesting)
			}
			return
		}
		b.tokens = tokens
		tree := parseProgram(tokens, b)
		for _, it := range tree.AllItem() {
			if d := b.item(it); d != nil {
				f.Decls = append(f.Decls, d)
			}
		}
	}()
	return f, &b.reporter
}

// parseProgram parses the tokens in two stages (package sllparse): SLL,
// and only if that gives up (a syntax error, or a rare input that needs
// full LL context), again by a fresh parser with full LL prediction and
// error recovery, reporting to errs. Lexical errors are reported once:
// the token stream lexes each token once and the second stage reuses
// them.
func parseProgram(tokens *antlr.CommonTokenStream, errs antlr.ErrorListener) parser.IProgramContext {
	p := parser.NewGenesisParser(tokens)
	if tree, ok := sllparse.Try(p, p.Program); ok {
		return tree
	}
	tokens.Seek(0)
	p = parser.NewGenesisParser(tokens)
	p.RemoveErrorListeners()
	p.AddErrorListener(errs)
	return p.Program()
}

// errBail is what probeStrategy panics with.
var errBail = errors.New("genesis: probe parse stopped")

// A builder turns the ANTLR parse tree of a file into the AST, and
// reports syntax errors as the error listener of the lexer and parser.
// Every getter of the parse tree may return nil after error recovery: the
// builder then makes a *BadExpr or leaves the piece out, since the error
// is already reported.
type builder struct {
	*antlr.DefaultErrorListener
	reporter
	file      string
	tokens    antlr.TokenStream // the file's tokens, for what follows a rule
	lastError int               // line of the last syntax error reported, to report one per line
	errLines  map[int]bool      // the lines with a syntax error, which syntaxf reports no other on
}

// checkUTF8 reports the first invalid UTF-8 sequence: ANTLR would read it
// as U+FFFD, and a string literal would silently hold other bytes than
// the file.
func (b *builder) checkUTF8(src []byte) {
	source.InvalidUTF8(src, func(line, col int, c byte) bool {
		b.errorf(diag.Pos{File: b.file, Line: line, Col: col}, CodeSyntax, "invalid UTF-8 byte 0x%02x", c)
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

// ident makes an Ident of a terminal node; nil if it is missing.
func (b *builder) ident(n antlr.TerminalNode) *Ident {
	if n == nil {
		return nil
	}
	id := &Ident{Name: n.GetText()}
	id.pos = b.tpos(n)
	return id
}

// ── Items ──

func (b *builder) item(c parser.IItemContext) Decl {
	switch {
	case c.Function() != nil:
		return b.function(c.Function())
	case c.TypeAlias() != nil:
		a := c.TypeAlias()
		name := b.ident(a.IDENT())
		if name == nil {
			return nil
		}
		return &AliasDecl{TypePos: b.tpos(a.TYPE()), Name: name, Target: b.typ(a.Type_())}
	case c.StructDef() != nil:
		s := c.StructDef()
		name := b.ident(s.IDENT())
		if name == nil {
			return nil
		}
		d := &StructDecl{StructPos: b.tpos(s.STRUCT()), Name: name}
		for _, fc := range s.AllField() {
			if n := b.ident(fc.IDENT()); n != nil {
				d.Fields = append(d.Fields, &FieldDecl{Name: n, Type: b.typ(fc.Type_())})
			}
		}
		return d
	case c.EnumDef() != nil:
		e := c.EnumDef()
		name := b.ident(e.IDENT())
		if name == nil {
			return nil
		}
		d := &EnumDecl{EnumPos: b.tpos(e.ENUM()), Name: name}
		for _, vc := range e.AllVariant() {
			n := b.ident(vc.IDENT())
			if n == nil {
				continue
			}
			v := &VariantDecl{Name: n}
			for _, tc := range vc.AllType_() {
				v.Payload = append(v.Payload, b.typ(tc))
			}
			d.Variants = append(d.Variants, v)
		}
		return d
	}
	return nil
}

func (b *builder) function(c parser.IFunctionContext) Decl {
	name := b.ident(c.IDENT())
	if name == nil {
		return nil
	}
	d := &FuncDecl{FnPos: b.tpos(c.FN()), Name: name, Result: b.typ(c.Type_())}
	for _, pc := range c.AllParam() {
		if n := b.ident(pc.IDENT()); n != nil {
			d.Params = append(d.Params, &Param{Name: n, Type: b.typ(pc.Type_())})
		}
	}
	d.Body = b.block(c.Block())
	return d
}

// ── Types ──

// typ converts a type. A missing type becomes a NamedType with an empty
// name, which Check resolves to Invalid without a message.
func (b *builder) typ(c parser.ITypeContext) TypeExpr {
	switch c := c.(type) {
	case *parser.PointerTypeContext:
		t := &PointerType{Mut: c.MUT() != nil, Elem: b.typ(c.Type_())}
		t.pos = b.tpos(c.STAR())
		return t
	case *parser.ArrayTypeContext:
		t := &ArrayType{Elem: b.typ(c.Type_())}
		t.pos = b.tpos(c.LBRACK())
		if n := c.INTEGER(); n != nil {
			t.Len, _ = b.integer(n)
		}
		return t
	case *parser.FuncTypeContext:
		t := &FuncTypeExpr{}
		t.pos = b.tpos(c.STAR())
		types := c.AllType_()
		if len(types) == 0 {
			t.Result = b.typ(nil)
			return t
		}
		for _, pc := range types[:len(types)-1] {
			t.Params = append(t.Params, b.typ(pc))
		}
		t.Result = b.typ(types[len(types)-1])
		return t
	case *parser.NamedTypeContext:
		t := &NamedType{Name: c.IDENT().GetText()}
		t.pos = b.tpos(c.IDENT())
		return t
	}
	t := &NamedType{}
	if c != nil {
		t.pos = b.cpos(c)
	}
	return t
}

// ── Statements ──

func (b *builder) block(c parser.IBlockContext) *BlockExpr {
	blk := &BlockExpr{}
	if c == nil {
		return blk
	}
	blk.pos = b.tpos(c.LBRACE())
	blk.End = b.tpos(c.RBRACE())
	stmts := c.AllStatement()
	for i, sc := range stmts {
		if es := sc.ExprStmt(); es != nil {
			s, tail := b.exprStmt(es, i == len(stmts)-1)
			if tail != nil {
				blk.Tail = tail
			} else if s != nil {
				blk.Stmts = append(blk.Stmts, s)
			}
			continue
		}
		if s := b.stmt(sc); s != nil {
			blk.Stmts = append(blk.Stmts, s)
		}
	}
	return blk
}

// exprStmt converts an expression statement, an assignment or, when last
// is set and it has no ';', the tail of its block, which it returns as
// tail. Only an `if` may end a statement without a ';' (as in Rust, `if c
// { 1 } else { 2 }` last in a block without one is the block's value).
func (b *builder) exprStmt(c parser.IExprStmtContext, last bool) (s Stmt, tail Expr) {
	xs := c.AllExpression()
	if len(xs) == 0 {
		return nil, nil
	}
	if eq := c.ASSIGN(); eq != nil {
		a := &AssignStmt{Target: b.expr(xs[0]), EqPos: b.tpos(eq)}
		if len(xs) > 1 {
			a.Value = b.expr(xs[1])
		} else {
			a.Value = &BadExpr{}
			a.Value.(*BadExpr).pos = b.tpos(eq)
		}
		if isUnary(xs[0]) {
			b.checkLvalue(a.Target)
		} else if !b.errLines[eq.GetSymbol().GetLine()] {
			// Not a unary expression, which §13's forms all are: the
			// '=' is where the statement goes wrong.
			b.markLine(eq.GetSymbol().GetLine())
			b.errorf(a.EqPos, CodeSyntax, "cannot assign to %s; the target must be a variable, *p, a[i], s.f or p->f", describeExpr(a.Target))
		}
		if c.SEMI() == nil {
			b.expectedSemi(c, "';'")
		}
		return a, nil
	}
	var x Expr
	if ic := xs[0].IfExpr(); ic != nil {
		x = b.ifExpr(ic, true)
	} else {
		x = b.expr(xs[0])
	}
	switch ie, isIf := x.(*IfExpr); {
	case c.SEMI() != nil:
		return &ExprStmt{X: x, semi: true}, nil
	case last && (!isIf || ie.Else != nil):
		return nil, x
	case !isIf:
		b.expectedSemi(c, "';' or '}'")
	}
	return &ExprStmt{X: x}, nil
}

// expectedSemi reports the token after c, where a ';' must end c (or,
// as want says, the '}' of the block).
func (b *builder) expectedSemi(c antlr.ParserRuleContext, want string) {
	t := b.after(c)
	if t == nil {
		return
	}
	b.syntaxf(t, "unexpected %s, expected %s", describeToken(t), want)
}

// isUnary reports whether the expression c is a unary expression of the
// grammar, `(x + 1)` included: the rules of the ladder down to unary,
// each with one child.
func isUnary(c antlr.Tree) bool {
	for {
		switch c.(type) {
		case *parser.UnaryContext:
			return true
		case *parser.ExpressionContext, *parser.OrExprContext, *parser.AndExprContext,
			*parser.CmpExprContext, *parser.BitorExprContext, *parser.BitxorExprContext,
			*parser.BitandExprContext, *parser.ShiftExprContext, *parser.AddExprContext,
			*parser.MulExprContext, *parser.CastExprContext:
			if c.GetChildCount() != 1 {
				return false
			}
			c = c.GetChild(0)
		default:
			return false
		}
	}
}

// markLine records that a syntax error is reported on line.
func (b *builder) markLine(line int) {
	if b.errLines == nil {
		b.errLines = map[int]bool{}
	}
	b.errLines[line] = true
}

// syntaxf reports a syntax error the builder finds at t, unless one is
// reported on t's line already: after the parser recovered from an error,
// what it built is mostly the error's consequence.
func (b *builder) syntaxf(t antlr.Token, format string, args ...any) {
	if b.errLines[t.GetLine()] {
		return
	}
	b.markLine(t.GetLine())
	b.errorf(b.pos(t), CodeSyntax, format, args...)
}

// after returns the token that follows c, or nil.
func (b *builder) after(c antlr.ParserRuleContext) antlr.Token {
	stop := c.GetStop()
	if b.tokens == nil || stop == nil || stop.GetTokenIndex() < 0 {
		return nil
	}
	return b.tokens.Get(stop.GetTokenIndex() + 1)
}

func (b *builder) stmt(c parser.IStatementContext) Stmt {
	switch {
	case c.LetStmt() != nil:
		l := c.LetStmt()
		name := b.ident(l.IDENT())
		if name == nil {
			return nil
		}
		return &LetStmt{LetPos: b.tpos(l.LET()), Mut: l.MUT() != nil, Name: name, Type: b.typ(l.Type_()), Value: b.expr(l.Expression())}
	case c.WhileStmt() != nil:
		w := c.WhileStmt()
		return &WhileStmt{WhilePos: b.tpos(w.WHILE()), Cond: b.expr(w.Expression()), Body: b.block(w.Block())}
	case c.ReturnStmt() != nil:
		r := c.ReturnStmt()
		s := &ReturnStmt{ReturnPos: b.tpos(r.RETURN())}
		if e := r.Expression(); e != nil {
			s.Value = b.expr(e)
		}
		return s
	case c.BREAK() != nil:
		return &BranchStmt{KwPos: b.tpos(c.BREAK())}
	case c.CONTINUE() != nil:
		return &BranchStmt{KwPos: b.tpos(c.CONTINUE()), Continue: true}
	case c.AsmStmt() != nil:
		return b.asm(c.AsmStmt())
	}
	return nil
}

// checkLvalue reports a target that is none of §13's lvalue forms: a
// name, *p, a[i], s.f or p->f.
func (b *builder) checkLvalue(e Expr) bool {
	switch e := e.(type) {
	case *Ident, *IndexExpr, *FieldExpr, *BadExpr:
		return true
	case *UnaryExpr:
		if e.Op == OpDeref {
			return true
		}
	}
	b.errorf(e.Pos(), CodeSyntax, "cannot assign to %s; the target must be a variable, *p, a[i], s.f or p->f", describeExpr(e))
	return false
}

// describeExpr names the kind of an expression for a message; a name, by
// what it refers to once Check has resolved it.
func describeExpr(e Expr) string {
	switch e := e.(type) {
	case *Ident:
		switch obj := e.Obj.(type) {
		case *Func:
			return e.Name + ", which is a function"
		case *Variant:
			return e.Name + ", which is a variant of " + obj.Enum.Name
		}
		return e.Name
	case *IntLit, *ByteLit, *BoolLit, *StringLit:
		return "a literal"
	case *UnaryExpr:
		return "the result of " + e.Op.String()
	case *BinaryExpr:
		return "the result of " + e.Op.String()
	case *CastExpr:
		return "a cast"
	case *CallExpr:
		return "a call"
	case *IndexExpr:
		return "an element of " + describeExpr(e.X)
	case *FieldExpr:
		if e.Name != nil {
			return "field " + e.Name.Name + " of " + describeExpr(e.X)
		}
	case *ArrayLit:
		return "an array literal"
	case *StructLit:
		return "a struct literal"
	case *BlockExpr:
		return "a block"
	case *IfExpr:
		return "an if expression"
	case *MatchExpr:
		return "a match expression"
	}
	return "this expression"
}

// ifExpr converts an if; stmt says whether it is a statement, where the
// else is optional, as it is in the else-if chain of one.
func (b *builder) ifExpr(c parser.IIfExprContext, stmt bool) *IfExpr {
	e := &IfExpr{Cond: b.expr(c.Expression()), Then: b.block(c.Block(0))}
	e.pos = b.tpos(c.IF())
	switch {
	case c.ELSE() == nil:
		if !stmt {
			if t := b.after(c); t != nil {
				b.syntaxf(t, "unexpected %s, expected 'else': an if used as a value needs an else branch", describeToken(t))
			}
		}
	case c.IfExpr() != nil:
		e.Else = b.ifExpr(c.IfExpr(), stmt)
	case c.Block(1) != nil:
		e.Else = b.block(c.Block(1))
	}
	return e
}

// ── Inline assembly ──

func (b *builder) asm(c parser.IAsmStmtContext) Stmt {
	s := &AsmStmt{AsmPos: b.tpos(c.ASM())}
	for _, bc := range c.AllAsmBinding() {
		if bd := b.asmBinding(bc); bd != nil {
			s.Bindings = append(s.Bindings, bd)
		}
	}
	body := c.AsmBody()
	if body == nil {
		return s
	}
	// Instructions end at a line break or ';': the grammar ends the
	// operand list at a line break, this loop rejects two instructions
	// on one line without a ';' between them.
	lastLine, separated := 0, true
	for _, ch := range body.GetChildren() {
		switch ch := ch.(type) {
		case antlr.TerminalNode:
			if ch.GetSymbol().GetTokenType() == parser.GenesisLexerSEMI {
				separated = true
			}
		case parser.IAsmInstructionContext:
			in := b.asmInst(ch)
			if in == nil {
				continue
			}
			if !separated && in.MnemonicPos.Line == lastLine {
				b.errorf(in.MnemonicPos, CodeSyntax, "expected a line break or ';' before instruction %s", in.Mnemonic)
			}
			s.Insts = append(s.Insts, in)
			lastLine, separated = ch.GetStop().GetLine(), false
		}
	}
	return s
}

// asmBinding converts `in rN = expr` or `out lvalue = rN`; nil if it is
// malformed (reported).
func (b *builder) asmBinding(c parser.IAsmBindingContext) *AsmBinding {
	word := c.IDENT()
	if word == nil {
		return nil
	}
	bd := &AsmBinding{WordPos: b.tpos(word)}
	lhs, rhs := b.expr(c.Unary()), b.expr(c.Expression())
	var reg Expr
	switch word.GetText() {
	case "in":
		reg, bd.Value = lhs, rhs
	case "out":
		bd.Out, reg, bd.Value = true, rhs, lhs
		if !b.checkLvalue(lhs) {
			return nil
		}
	default:
		b.errorf(bd.WordPos, CodeSyntax, "unexpected %s in an asm binding, expected 'in' or 'out'", word.GetText())
		return nil
	}
	bd.RegPos = reg.Pos()
	r, ok := b.register(reg)
	if !ok {
		return nil
	}
	bd.Reg = r
	return bd
}

// register reads an expression that must be a register r0..r255.
func (b *builder) register(e Expr) (uint8, bool) {
	if _, bad := e.(*BadExpr); bad {
		return 0, false
	}
	id, ok := e.(*Ident)
	if !ok || !isRegisterName(id.Name) {
		b.errorf(e.Pos(), CodeAsm, "expected a register r0 to r255, found %s", describeAsmExpr(e))
		return 0, false
	}
	n, err := strconv.ParseUint(id.Name[1:], 10, 64)
	if err != nil || n > 255 {
		b.errorf(e.Pos(), CodeAsm, "register %s does not exist; registers are r0 to r255", id.Name)
		return 0, false
	}
	return uint8(n), true
}

func describeAsmExpr(e Expr) string {
	if id, ok := e.(*Ident); ok {
		return "'" + id.Name + "'"
	}
	return describeExpr(e)
}

// isRegisterName reports whether name is spelled as a register: r and
// decimal digits. Outside asm it is an ordinary name.
func isRegisterName(name string) bool {
	if len(name) < 2 || name[0] != 'r' {
		return false
	}
	for _, c := range name[1:] {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

func (b *builder) asmInst(c parser.IAsmInstructionContext) *AsmInst {
	m := c.IDENT()
	if m == nil {
		return nil
	}
	in := &AsmInst{MnemonicPos: b.tpos(m), Mnemonic: m.GetText()}
	for _, oc := range c.AllAsmOperand() {
		op := &AsmOperand{OpPos: b.cpos(oc)}
		switch {
		case oc.IDENT() != nil:
			id := b.ident(oc.IDENT())
			if isRegisterName(id.Name) {
				r, ok := b.register(id)
				if !ok {
					continue
				}
				op.Kind, op.Reg = AsmReg, r
			} else {
				op.Kind, op.Name = AsmName, id
			}
		case oc.INTEGER() != nil:
			v, ok := b.integer(oc.INTEGER())
			if !ok {
				continue
			}
			if oc.MINUS() != nil {
				if v > 1<<63 {
					b.errorf(op.OpPos, CodeAsm, "immediate -%s is out of range", oc.INTEGER().GetText())
					continue
				}
				v = -v
			}
			op.Kind, op.Imm = AsmImm, v
		case oc.BYTE() != nil:
			op.Kind, op.Imm = AsmImm, uint64(b.byteValue(oc.BYTE()))
		default:
			continue
		}
		in.Operands = append(in.Operands, op)
	}
	return in
}

// ── Expressions ──

// expr converts any expression rule of the precedence ladder.
func (b *builder) expr(t antlr.Tree) Expr {
	switch c := t.(type) {
	case *parser.ExpressionContext:
		switch {
		case c.OrExpr() != nil:
			return b.expr(c.OrExpr())
		case c.IfExpr() != nil:
			return b.expr(c.IfExpr())
		case c.MatchExpr() != nil:
			return b.expr(c.MatchExpr())
		case c.Block() != nil:
			return b.block(c.Block())
		}
	case *parser.OrExprContext, *parser.AndExprContext, *parser.CmpExprContext,
		*parser.BitorExprContext, *parser.BitxorExprContext, *parser.BitandExprContext,
		*parser.ShiftExprContext, *parser.AddExprContext, *parser.MulExprContext:
		return b.binary(c.(antlr.ParserRuleContext))
	case *parser.CastExprContext:
		x := b.expr(c.Unary())
		for i, tc := range c.AllType_() {
			ce := &CastExpr{X: x, To: b.typ(tc)}
			ce.pos = b.tpos(c.AS(i))
			x = ce
		}
		return x
	case *parser.UnaryContext:
		if p := c.Postfix(); p != nil {
			return b.expr(p)
		}
		if c.GetChildCount() == 0 {
			break
		}
		opTok, ok := c.GetChild(0).(antlr.TerminalNode)
		if !ok {
			break
		}
		e := &UnaryExpr{Op: unaryOps[opTok.GetSymbol().GetTokenType()], X: b.expr(c.Unary())}
		e.pos = b.tpos(opTok)
		if e.Op == OpNone {
			break
		}
		return e
	case *parser.PostfixContext:
		return b.postfix(c)
	case *parser.IfExprContext:
		return b.ifExpr(c, false)
	case *parser.MatchExprContext:
		e := &MatchExpr{X: b.expr(c.Expression())}
		e.pos = b.tpos(c.MATCH())
		for _, ac := range c.AllMatchArm() {
			if p := b.pattern(ac.Pattern()); p != nil {
				e.Arms = append(e.Arms, &MatchArm{Pattern: p, Body: b.expr(ac.Expression())})
			}
		}
		return e
	case *parser.BlockContext:
		return b.block(c)
	}
	e := &BadExpr{}
	if c, ok := t.(antlr.ParserRuleContext); ok && c != nil {
		e.pos = b.cpos(c)
	} else {
		e.pos = diag.Pos{File: b.file}
	}
	return e
}

var unaryOps = map[int]Op{
	parser.GenesisLexerBANG:  OpNot,
	parser.GenesisLexerMINUS: OpNeg,
	parser.GenesisLexerSTAR:  OpDeref,
	parser.GenesisLexerAMP:   OpAddr,
	parser.GenesisLexerTILDE: OpCompl,
}

var binaryOps = map[int]Op{
	parser.GenesisLexerOROR:    OpOrOr,
	parser.GenesisLexerANDAND:  OpAndAnd,
	parser.GenesisLexerEQ:      OpEq,
	parser.GenesisLexerNE:      OpNe,
	parser.GenesisLexerLT:      OpLt,
	parser.GenesisLexerGT:      OpGt,
	parser.GenesisLexerLE:      OpLe,
	parser.GenesisLexerGE:      OpGe,
	parser.GenesisLexerPIPE:    OpOr,
	parser.GenesisLexerCARET:   OpXor,
	parser.GenesisLexerAMP:     OpAnd,
	parser.GenesisLexerSHL:     OpShl,
	parser.GenesisLexerSHR:     OpShr,
	parser.GenesisLexerPLUS:    OpAdd,
	parser.GenesisLexerMINUS:   OpSub,
	parser.GenesisLexerSTAR:    OpMul,
	parser.GenesisLexerSLASH:   OpDiv,
	parser.GenesisLexerPERCENT: OpRem,
}

// binary converts one level of the ladder, `x (op y)*`, left-associative.
// Its children alternate operands and operators (the comparison operator
// is a cmpOp rule of its own).
func (b *builder) binary(c antlr.ParserRuleContext) Expr {
	var x Expr
	var op Op
	var opPos diag.Pos
	for _, ch := range c.GetChildren() {
		var tok antlr.TerminalNode
		switch ch := ch.(type) {
		case antlr.ErrorNode:
			return b.bad(c)
		case antlr.TerminalNode:
			tok = ch
		case *parser.CmpOpContext:
			t, ok := ch.GetChild(0).(antlr.TerminalNode)
			if !ok {
				return b.bad(c)
			}
			tok = t
		default:
			y := b.expr(ch)
			if x == nil {
				x = y
				continue
			}
			if op == OpNone {
				return b.bad(c)
			}
			e := &BinaryExpr{Op: op, X: x, Y: y}
			e.pos = opPos
			x, op = e, OpNone
			continue
		}
		op, opPos = binaryOps[tok.GetSymbol().GetTokenType()], b.tpos(tok)
	}
	if x == nil || op != OpNone {
		return b.bad(c)
	}
	return x
}

func (b *builder) bad(c antlr.ParserRuleContext) Expr {
	e := &BadExpr{}
	e.pos = b.cpos(c)
	return e
}

func (b *builder) postfix(c *parser.PostfixContext) Expr {
	x := b.primary(c.Primary())
	for _, oc := range c.AllPostfixOp() {
		switch oc := oc.(type) {
		case *parser.CallOpContext:
			e := &CallExpr{Fun: x}
			e.pos = b.tpos(oc.LPAREN())
			for _, ac := range oc.AllExpression() {
				e.Args = append(e.Args, b.expr(ac))
			}
			x = e
		case *parser.IndexOpContext:
			e := &IndexExpr{X: x, Index: b.expr(oc.Expression())}
			e.pos = b.tpos(oc.LBRACK())
			x = e
		case *parser.FieldOpContext:
			e := &FieldExpr{X: x, Name: b.ident(oc.IDENT())}
			e.pos = b.tpos(oc.DOT())
			if e.Name == nil {
				return b.bad(oc)
			}
			x = e
		case *parser.ArrowOpContext:
			e := &FieldExpr{X: x, Arrow: true, Name: b.ident(oc.IDENT())}
			e.pos = b.tpos(oc.ARROW())
			if e.Name == nil {
				return b.bad(oc)
			}
			x = e
		default:
			return b.bad(c)
		}
	}
	return x
}

func (b *builder) primary(c parser.IPrimaryContext) Expr {
	switch c := c.(type) {
	case *parser.IntLitContext:
		e := &IntLit{Text: c.INTEGER().GetText()}
		e.pos = b.tpos(c.INTEGER())
		e.Value, _ = b.integer(c.INTEGER())
		return e
	case *parser.ByteLitContext:
		e := &ByteLit{Value: b.byteValue(c.BYTE())}
		e.pos = b.tpos(c.BYTE())
		return e
	case *parser.StringLitContext:
		e := &StringLit{Value: b.str(c.STRING())}
		e.pos = b.tpos(c.STRING())
		return e
	case *parser.BoolLitContext:
		e := &BoolLit{Value: c.TRUE() != nil}
		e.pos = b.cpos(c)
		return e
	case *parser.IdentExprContext:
		return b.ident(c.IDENT())
	case *parser.StructLitContext:
		e := &StructLit{Name: b.ident(c.IDENT())}
		e.pos = b.tpos(c.IDENT())
		for _, fc := range c.AllFieldInit() {
			if n := b.ident(fc.IDENT()); n != nil {
				e.Fields = append(e.Fields, &FieldInit{Name: n, Value: b.expr(fc.Expression())})
			}
		}
		return e
	case *parser.ParenExprContext:
		return b.expr(c.Expression())
	case *parser.ArrayLitContext:
		e := &ArrayLit{Elem: b.expr(c.Expression())}
		e.pos = b.tpos(c.LBRACK())
		if n := c.INTEGER(); n != nil {
			e.Len, _ = b.integer(n)
		}
		return e
	}
	e := &BadExpr{}
	e.pos = diag.Pos{File: b.file}
	if c != nil {
		e.pos = b.cpos(c)
	}
	return e
}

// ── Patterns ──

func (b *builder) pattern(c parser.IPatternContext) Pattern {
	switch c := c.(type) {
	case *parser.WildcardPatternContext:
		return &WildcardPattern{At: b.cpos(c)}
	case *parser.IntPatternContext:
		v, _ := b.integer(c.INTEGER())
		return &IntPattern{At: b.cpos(c), Text: c.GetText(), Neg: c.MINUS() != nil, Value: v}
	case *parser.BytePatternContext:
		return &IntPattern{At: b.cpos(c), Text: c.GetText(), Value: uint64(b.byteValue(c.BYTE()))}
	case *parser.BoolPatternContext:
		return &BoolPattern{At: b.cpos(c), Value: c.TRUE() != nil}
	case *parser.VariantPatternContext:
		name := b.ident(c.IDENT())
		if name == nil {
			return nil
		}
		p := &VariantPattern{Name: name}
		for _, bc := range c.AllPatternBinding() {
			var id *Ident
			if bc.IDENT() != nil {
				id = b.ident(bc.IDENT())
			} else {
				id = b.ident(bc.UNDERSCORE())
			}
			if id != nil {
				p.Bindings = append(p.Bindings, id)
			}
		}
		return p
	}
	return nil
}

// ── Literals ──

// integer reads an INTEGER token: decimal, 0x hexadecimal or 0b binary
// (§3.2), at most 2^64-1. A malformed one is reported; ok is false.
func (b *builder) integer(n antlr.TerminalNode) (v uint64, ok bool) {
	if n == nil {
		return 0, false
	}
	text := n.GetText()
	if strings.HasPrefix(text, "0y") {
		// Not a BYTE token (§3.2: 0y and exactly two hexadecimal
		// digits), so the lexer took it for a number.
		b.errorf(b.tpos(n), CodeSyntax, "malformed byte literal %s: a byte literal is 0y and two hexadecimal digits", abbreviate(text))
		return 0, false
	}
	digits, base := text, 10
	switch {
	case strings.HasPrefix(text, "0x"):
		digits, base = text[2:], 16
	case strings.HasPrefix(text, "0b"):
		digits, base = text[2:], 2
	}
	// ParseUint would accept underscores and other prefixes; §3.2 does not.
	valid := digits != ""
	for _, c := range digits {
		if digitValue(c) >= base {
			valid = false
		}
	}
	if !valid {
		b.errorf(b.tpos(n), CodeSyntax, "malformed integer literal %s", abbreviate(text))
		return 0, false
	}
	v, err := strconv.ParseUint(digits, base, 64)
	if err != nil {
		b.errorf(b.tpos(n), CodeSyntax, "integer literal %s does not fit in 64 bits", abbreviate(text))
		return 0, false
	}
	return v, true
}

func digitValue(c rune) int {
	switch {
	case c >= '0' && c <= '9':
		return int(c - '0')
	case c >= 'a' && c <= 'f':
		return int(c-'a') + 10
	case c >= 'A' && c <= 'F':
		return int(c-'A') + 10
	}
	return 99
}

// byteValue reads a BYTE token, 0y and two hexadecimal digits (the
// lexer guarantees the shape).
func (b *builder) byteValue(n antlr.TerminalNode) uint8 {
	if n == nil || len(n.GetText()) != 4 {
		return 0
	}
	v, _ := strconv.ParseUint(n.GetText()[2:], 16, 8)
	return uint8(v)
}

// str decodes a STRING token's escapes: \n \t \r \0 \\ \" \' and \xHH.
// A bad escape is reported at its own column.
func (b *builder) str(n antlr.TerminalNode) []byte {
	if n == nil {
		return nil
	}
	text := n.GetText()
	text = text[1 : len(text)-1]
	pos := b.tpos(n)
	pos.Col++ // past the opening quote
	var out []byte
	for i := 0; i < len(text); {
		c := text[i]
		if c != '\\' {
			r, size := utf8.DecodeRuneInString(text[i:])
			out = append(out, text[i:i+size]...)
			i += size
			if r == '\n' {
				pos.Line, pos.Col = pos.Line+1, 1
			} else {
				pos.Col++
			}
			continue
		}
		esc := pos
		next := byte(0)
		if i+1 < len(text) {
			next = text[i+1]
		}
		width := 2
		switch next {
		case 'n':
			out = append(out, '\n')
		case 't':
			out = append(out, '\t')
		case 'r':
			out = append(out, '\r')
		case '0':
			out = append(out, 0)
		case '\\', '"', '\'':
			out = append(out, next)
		case 'x':
			if i+4 <= len(text) && digitValue(rune(text[i+2])) < 16 && digitValue(rune(text[i+3])) < 16 {
				out = append(out, byte(digitValue(rune(text[i+2]))<<4|digitValue(rune(text[i+3]))))
				width = 4
			} else {
				b.errorf(esc, CodeSyntax, "\\x must be followed by two hexadecimal digits")
			}
		default:
			r, _ := utf8.DecodeRuneInString(text[i+1:])
			b.errorf(esc, CodeSyntax, "unknown escape sequence \\%c", r)
			if r == '\n' {
				// The escape spans the line break; keep the count right.
				pos.Line, pos.Col = pos.Line+1, 0
				width = 1
			}
		}
		i += width
		pos.Col += width
	}
	return out
}

// abbreviate shortens s for a message.
func abbreviate(s string) string {
	const max = 24
	if utf8.RuneCountInString(s) <= max {
		return s
	}
	return string([]rune(s)[:max-1]) + "…"
}

// ── Syntax errors ──

// SyntaxError reports a lexer or parser error. Only the first error of a
// line is reported: the ones after it are mostly its consequences.
func (b *builder) SyntaxError(rec antlr.Recognizer, sym any, line, col int, msg string, ex antlr.RecognitionException) {
	if line == b.lastError {
		return
	}
	t, ok := sym.(antlr.Token)
	if ok && t.GetTokenType() == antlr.TokenEOF && len(b.errLines) > 0 {
		// The end of the file after an error is where the parser's
		// recovery ran out, not a mistake of its own.
		return
	}
	b.lastError = line
	b.markLine(line)
	pos := diag.Pos{File: b.file, Line: line, Col: col + 1}
	if !ok {
		// The lexer cannot fail (BAD_CHAR matches any character); keep
		// ANTLR's message if it ever does.
		b.errorf(pos, CodeSyntax, "%s", msg)
		return
	}
	switch t.GetTokenType() {
	case parser.GenesisLexerUNTERMINATED_STRING:
		b.errorf(pos, CodeSyntax, "unterminated string literal")
		return
	case parser.GenesisLexerUNTERMINATED_COMMENT:
		b.errorf(pos, CodeSyntax, "unterminated block comment")
		return
	case parser.GenesisLexerBAD_CHAR:
		b.errorf(pos, CodeSyntax, "unexpected character %q", t.GetText())
		return
	}
	m := "unexpected " + describeToken(t)
	if p, ok := rec.(antlr.Parser); ok {
		expected := expectedAt(p, t, ex)
		switch {
		case isComparisonToken(t.GetTokenType()) && !hasToken(expected, t.GetTokenType()) && endsOperand(p.GetTokenStream(), t):
			m += "; comparison operators do not chain, use parentheses or &&"
		case onlyToken(expected, parser.GenesisLexerELSE):
			m += ", expected 'else': an if used as a value needs an else branch"
		case afterAssignment(p.GetParserRuleContext()):
			m += ", expected ';'"
		default:
			if want := describeExpected(expected); want != "" {
				m += ", expected " + want
			}
		}
	}
	b.errorf(pos, CodeSyntax, "%s", m)
}

// afterAssignment reports whether ctx is a block whose last statement so
// far is an assignment without its ';' (`a = b = 1` fails at the second
// '=' there).
func afterAssignment(ctx antlr.ParserRuleContext) bool {
	blk, ok := ctx.(*parser.BlockContext)
	if !ok || blk.GetChildCount() == 0 {
		return false
	}
	st, ok := blk.GetChild(blk.GetChildCount() - 1).(*parser.StatementContext)
	if !ok {
		return false
	}
	es := st.ExprStmt()
	return es != nil && es.ASSIGN() != nil && es.SEMI() == nil
}

// expectedAt is the set of tokens the parser could have accepted instead
// of t, the token it failed at; nil if unknown. The parser's own set is
// the one at its current state, which is t's except after a failed
// prediction that read tokens past the decision (`f(1, 2;` fails at ';'
// but is decided at f): its set is then what could start the statement.
// Those tokens are probed instead.
func expectedAt(p antlr.Parser, t antlr.Token, ex antlr.RecognitionException) source.TokenSet {
	_, nva := ex.(*antlr.NoViableAltException)
	// A failed prediction leaves the parser at the decision's first token.
	cur := p.GetCurrentToken()
	if !nva || cur == nil || cur.GetTokenIndex() >= t.GetTokenIndex() {
		return source.Tokens(p.GetExpectedTokens())
	}
	return probeExpected(p.GetTokenStream(), p.GetParserRuleContext(), cur, t)
}

// probeTokens are the tokens probeExpected tries: those describeExpected
// names (BANG standing for an expression's start), and DOT, which tells
// that an operand has just ended.
var probeTokens = []int{
	parser.GenesisLexerLET, parser.GenesisLexerBANG, parser.GenesisLexerUNDERSCORE,
	parser.GenesisLexerINTEGER, parser.GenesisLexerIDENT, parser.GenesisLexerSEMI,
	parser.GenesisLexerCOMMA, parser.GenesisLexerCOLON, parser.GenesisLexerASSIGN,
	parser.GenesisLexerARROW, parser.GenesisLexerFAT_ARROW, parser.GenesisLexerLBRACE,
	parser.GenesisLexerRPAREN, parser.GenesisLexerRBRACK, parser.GenesisLexerRBRACE,
	parser.GenesisLexerLPAREN, parser.GenesisLexerELSE, parser.GenesisLexerDOT,
}

// maxProbeTokens bounds the prefix probeExpected parses again, so that
// errors in a huge function stay cheap.
const maxProbeTokens = 2000

// probeExpected finds which of probeTokens could stand in place of bad,
// where a prediction of the parser, in rule context ctx, failed after
// reading the tokens from from on. For each, it parses again the tokens
// before bad with the token in bad's place: it is expected if the parse
// gets past it. The tokens parsed again are those of the statement from
// starts, in a function of its own, when the prediction chose between
// statements; else those of the top-level item bad is in. The result is
// nil when it cannot be trusted: the tokens do not parse up to bad (an
// earlier error), or bad itself would be accepted (the reporting parser
// was in another state, after recovering from an earlier error).
func probeExpected(ts antlr.TokenStream, ctx antlr.ParserRuleContext, from, bad antlr.Token) source.TokenSet {
	lexer, ok := ts.GetTokenSource().(*parser.GenesisLexer)
	if !ok {
		return nil
	}
	end := bad.GetTokenIndex()
	var toks []antlr.Token
	start := 0
	switch ctx.(type) {
	case *parser.BlockContext, *parser.StatementContext:
		// fn f() -> t { and the statement
		for _, typ := range []int{parser.GenesisLexerFN, parser.GenesisLexerIDENT, parser.GenesisLexerLPAREN,
			parser.GenesisLexerRPAREN, parser.GenesisLexerARROW, parser.GenesisLexerIDENT, parser.GenesisLexerLBRACE} {
			toks = append(toks, copyToken(from, typ))
		}
		start = from.GetTokenIndex()
	default:
		depth := 0
		for i := 0; i < end; i++ {
			switch ts.Get(i).GetTokenType() {
			case parser.GenesisLexerLBRACE, parser.GenesisLexerLPAREN, parser.GenesisLexerLBRACK:
				depth++
			case parser.GenesisLexerRBRACE, parser.GenesisLexerRPAREN, parser.GenesisLexerRBRACK:
				depth = max(depth-1, 0)
			case parser.GenesisLexerFN, parser.GenesisLexerSTRUCT, parser.GenesisLexerENUM, parser.GenesisLexerTYPE:
				if depth == 0 {
					start = i
				}
			}
		}
	}
	if end-start > maxProbeTokens {
		return nil
	}
	// Copies: a token stream numbers the tokens it hands out.
	for i := start; i < end; i++ {
		toks = append(toks, copyToken(ts.Get(i), ts.Get(i).GetTokenType()))
	}
	toks = append(toks, nil)
	eof := copyToken(bad, antlr.TokenEOF)
	if probe(lexer, toks, bad, bad.GetTokenType(), eof) {
		return nil
	}
	set := source.TokenSet{}
	for _, typ := range probeTokens {
		if probe(lexer, toks, bad, typ, eof) {
			set[typ] = true
		}
	}
	if len(set) == 0 {
		return nil
	}
	return set
}

// probe reports whether toks, whose last element is left for it, parses
// up to and past a token of type typ put there, at bad's place.
func probe(lexer *parser.GenesisLexer, toks []antlr.Token, bad antlr.Token, typ int, eof antlr.Token) (past bool) {
	at := len(toks) - 1
	toks[at] = copyToken(bad, typ)
	failed := -1
	defer func() {
		if r := recover(); r != nil {
			past = r == errBail && failed > at
		}
	}()
	p := parser.NewGenesisParser(antlr.NewCommonTokenStream(&sliceSource{GenesisLexer: lexer, toks: toks, eof: eof}, antlr.TokenDefaultChannel))
	newProbeStrategy(p, &failed)
	p.Program()
	return true
}

// copyToken copies t, with the token type typ.
func copyToken(t antlr.Token, typ int) antlr.Token {
	return antlr.CommonTokenFactoryDEFAULT.Create(t.GetSource(), typ, t.GetText(),
		t.GetChannel(), t.GetStart(), t.GetStop(), t.GetLine(), t.GetColumn())
}

// probeStrategy ends a probe's parse at its first syntax error, which it
// records: the index of the token the parse failed at. The default
// ReportError reports the error to the strategy as the parser's error
// listener, with the right token (a NoViableAltException's own
// GetOffendingToken is where the failed prediction started).
type probeStrategy struct {
	*antlr.DefaultErrorStrategy
	*antlr.DefaultErrorListener
	failed *int
}

func newProbeStrategy(p *parser.GenesisParser, failed *int) {
	s := probeStrategy{antlr.NewDefaultErrorStrategy(), antlr.NewDefaultErrorListener(), failed}
	p.RemoveErrorListeners()
	p.AddErrorListener(s)
	p.SetErrorHandler(s)
}

func (s probeStrategy) SyntaxError(_ antlr.Recognizer, sym any, _, _ int, _ string, _ antlr.RecognitionException) {
	if t, ok := sym.(antlr.Token); ok && *s.failed < 0 {
		*s.failed = t.GetTokenIndex()
	}
	panic(errBail)
}
func (probeStrategy) Recover(antlr.Parser, antlr.RecognitionException) { panic(errBail) }
func (s probeStrategy) RecoverInline(p antlr.Parser) antlr.Token {
	s.SyntaxError(p, p.GetCurrentToken(), 0, 0, "", nil)
	return nil
}
func (probeStrategy) Sync(antlr.Parser) {}

// endsOperand reports whether the token before t ends an operand, so
// that an operator could follow it.
func endsOperand(ts antlr.TokenStream, t antlr.Token) bool {
	i := t.GetTokenIndex() - 1
	if i < 0 {
		return false
	}
	switch ts.Get(i).GetTokenType() {
	case parser.GenesisLexerIDENT, parser.GenesisLexerINTEGER, parser.GenesisLexerBYTE,
		parser.GenesisLexerSTRING, parser.GenesisLexerTRUE, parser.GenesisLexerFALSE,
		parser.GenesisLexerRPAREN, parser.GenesisLexerRBRACK, parser.GenesisLexerRBRACE:
		return true
	}
	return false
}

// onlyToken reports whether set is exactly {typ}.
func onlyToken(set source.TokenSet, typ int) bool {
	return len(set) == 1 && set[typ]
}

func isComparisonToken(typ int) bool {
	switch typ {
	case parser.GenesisLexerEQ, parser.GenesisLexerNE, parser.GenesisLexerLT,
		parser.GenesisLexerGT, parser.GenesisLexerLE, parser.GenesisLexerGE:
		return true
	}
	return false
}

func hasToken(set source.TokenSet, typ int) bool { return set[typ] }

// describeToken names a token for a syntax error message.
func describeToken(t antlr.Token) string {
	text := t.GetText()
	switch t.GetTokenType() {
	case antlr.TokenEOF:
		return "end of file"
	case parser.GenesisLexerINTEGER, parser.GenesisLexerBYTE:
		return "number " + abbreviate(text)
	case parser.GenesisLexerIDENT:
		return "name " + abbreviate(text)
	case parser.GenesisLexerSTRING:
		return "string " + abbreviate(text)
	}
	if t.GetTokenType() >= parser.GenesisLexerFN && t.GetTokenType() <= parser.GenesisLexerFALSE {
		return "keyword " + text
	}
	return "'" + text + "'"
}

// expectedNames lists, in the order messages give them, the tokens worth
// naming when the parser expected them. Some stand for a whole class:
// only a statement starts with let, only an expression (or a statement)
// with !, and an integer literal with `_` only in a pattern.
var expectedNames = []source.TokenName{
	{Type: parser.GenesisLexerLET, Name: "a statement"},
	{Type: parser.GenesisLexerBANG, Name: "an expression"},
	{Type: parser.GenesisLexerUNDERSCORE, Name: "a pattern"},
	{Type: parser.GenesisLexerINTEGER, Name: "an integer literal"},
	{Type: parser.GenesisLexerIDENT, Name: "a name"},
	{Type: parser.GenesisLexerSEMI, Name: "';'"},
	{Type: parser.GenesisLexerCOMMA, Name: "','"},
	{Type: parser.GenesisLexerCOLON, Name: "':'"},
	{Type: parser.GenesisLexerASSIGN, Name: "'='"},
	{Type: parser.GenesisLexerARROW, Name: "'->'"},
	{Type: parser.GenesisLexerFAT_ARROW, Name: "'=>'"},
	{Type: parser.GenesisLexerLBRACE, Name: "'{'"},
	{Type: parser.GenesisLexerRPAREN, Name: "')'"},
	{Type: parser.GenesisLexerRBRACK, Name: "']'"},
	{Type: parser.GenesisLexerRBRACE, Name: "'}'"},
	{Type: parser.GenesisLexerLPAREN, Name: "'('"},
	{Type: parser.GenesisLexerELSE, Name: "'else'"},
	{Type: parser.GenesisLexerFN, Name: "'fn'"},
	{Type: parser.GenesisLexerSTRUCT, Name: "'struct'"},
	{Type: parser.GenesisLexerENUM, Name: "'enum'"},
	{Type: parser.GenesisLexerTYPE, Name: "'type'"},
	{Type: antlr.TokenEOF, Name: "end of file"},
}

// describeExpected names the useful tokens of set, at most five.
func describeExpected(set source.TokenSet) string {
	// What a class covers is not named again.
	covered := source.TokenSet{}
	cover := func(typs ...int) {
		for _, t := range typs {
			covered[t] = true
		}
	}
	switch {
	case set[parser.GenesisLexerLET]:
		cover(parser.GenesisLexerBANG, parser.GenesisLexerUNDERSCORE, parser.GenesisLexerINTEGER,
			parser.GenesisLexerIDENT, parser.GenesisLexerLBRACE, parser.GenesisLexerLPAREN)
	case set[parser.GenesisLexerBANG]:
		cover(parser.GenesisLexerINTEGER, parser.GenesisLexerIDENT, parser.GenesisLexerLBRACE, parser.GenesisLexerLPAREN)
	case set[parser.GenesisLexerUNDERSCORE] && set[parser.GenesisLexerINTEGER]:
		cover(parser.GenesisLexerINTEGER, parser.GenesisLexerIDENT)
	}
	binding := set[parser.GenesisLexerUNDERSCORE] && !set[parser.GenesisLexerINTEGER]
	if binding {
		// A pattern binding: a name or _, named last.
		cover(parser.GenesisLexerUNDERSCORE)
	}
	if set[parser.GenesisLexerDOT] {
		// An operand has just ended: '(' would call it, '->' reach a
		// field; neither is what is missing. Nor, where the expression
		// could end, are '=' (of an assignment) and '{' (of a struct
		// literal; a block's '{' cannot follow where a ';', ',' or a
		// closing bracket can).
		cover(parser.GenesisLexerLPAREN, parser.GenesisLexerARROW)
		for _, typ := range []int{parser.GenesisLexerSEMI, parser.GenesisLexerCOMMA, parser.GenesisLexerRPAREN,
			parser.GenesisLexerRBRACK, parser.GenesisLexerRBRACE} {
			if set[typ] {
				cover(parser.GenesisLexerASSIGN, parser.GenesisLexerLBRACE)
			}
		}
	}
	names := set.Named(covered, expectedNames)
	if binding {
		names = append(names, "'_'")
	}
	return source.Alternatives(names)
}
