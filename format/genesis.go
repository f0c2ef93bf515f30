package format

import (
	"fmt"

	"github.com/antlr4-go/antlr/v4"

	"github.com/genesis-toolchain/genesis/frontend/genesis"
	"github.com/genesis-toolchain/genesis/frontend/genesis/parser"
	"github.com/genesis-toolchain/genesis/frontend/sllparse"
)

// genesisIndent is one level of indentation of Genesis: two spaces, as
// every Genesis program of the repository and the specification has.
const genesisIndent = "  "

// Genesis formats a Genesis source file (.gen) as docs/fmt.md says: one
// item and one statement a line, braces of a construct written over
// several lines K&R style, two spaces a level, one space around binary
// operators, line breaks inside an expression kept where they follow an
// opening bracket, a comma, `=`, `=>` or a binary operator. It is a
// Formatter.
func Genesis(name string, src []byte) (out []byte, err error) {
	defer recoverFormatter(name, &err)
	if _, diags := genesis.Parse(name, src); diags.HasErrors() {
		return nil, syntaxErrorOf(diags)
	}
	g, err := newGenesisFile(name, src)
	if err != nil {
		return nil, err
	}
	out = g.print()
	if err := checkGenesis(name, g, out); err != nil {
		return nil, err
	}
	return out, nil
}

// genesisTokens lexes src with the frontend's lexer, returning the token
// stream (filled) and the elems: the tokens but EOF, and the comments,
// which the lexer skips, from the blank space between the tokens.
func genesisTokens(src []byte) (*antlr.CommonTokenStream, []srcElem, error) {
	text := string(src)
	runes := []rune(text)
	lexer := parser.NewGenesisLexer(antlr.NewInputStream(text))
	lexer.RemoveErrorListeners()
	stream := antlr.NewCommonTokenStream(lexer, antlr.TokenDefaultChannel)
	stream.Fill()
	var elems []srcElem
	prev, col := 0, 0
	for _, t := range stream.GetAllTokens() {
		start := t.GetStart()
		if t.GetTokenType() == antlr.TokenEOF {
			start = len(runes)
		}
		if start < prev || start > len(runes) {
			return nil, nil, fmt.Errorf("token %q out of place", t.GetText())
		}
		var nl int
		var err error
		elems, nl, err = gapComments(runes[prev:start], col, "//", "/*", elems)
		if err != nil {
			return nil, nil, err
		}
		if t.GetTokenType() == antlr.TokenEOF {
			break
		}
		elems = append(elems, srcElem{text: t.GetText(), typ: t.GetTokenType(), tok: t.GetTokenIndex(), nl: nl, col: t.GetColumn()})
		prev = t.GetStop() + 1
		col = columnAfter(t.GetText(), t.GetColumn())
	}
	return stream, elems, nil
}

// gtok is what the parse tree says of a token's layout.
type gtok struct {
	noSpaceBefore bool // `(` of a call, `[` of an index, `->` of a field access
	noSpaceAfter  bool // prefix operators, `*` of a pointer type
	binary        bool // a binary operator, after which a line break is kept
	unit          bool // starts a line of its own: an item, a statement, an arm or field of a construct over several lines
	expanded      bool // `{` or `}` of a construct written over several lines
	brace         bool // `{` or `}` of a construct
	asm           bool // in an asm instruction, which is never split
}

// genesisFile is a parsed file being formatted.
type genesisFile struct {
	name   string
	elems  []srcElem
	toks   []gtok           // by token index
	elemOf []int            // elem index of each token
	cons   []braceConstruct // the braced constructs, for the expansion decision
	stack  []int            // the constructs open during walk (indexes in cons)
}

// braceConstruct is a pair of braces: a block, struct or enum body, match,
// struct literal or asm body.
type braceConstruct struct {
	open, close int   // token indexes of `{` and `}`
	forced      bool  // over several lines whatever the source: it, or a construct inside, is a block of several statements
	units       []int // the first tokens of its units: statements, fields, variants, arms, instructions
}

func newGenesisFile(name string, src []byte) (*genesisFile, error) {
	stream, elems, err := genesisTokens(src)
	if err != nil {
		return nil, internalErrorf(name, "%v", err)
	}
	stream.Seek(0)
	p := parser.NewGenesisParser(stream)
	tree, ok := sllparse.Try(p, p.Program)
	if !ok {
		stream.Seek(0)
		p = parser.NewGenesisParser(stream)
		p.RemoveErrorListeners()
		l := &parseErrorCount{DefaultErrorListener: antlr.NewDefaultErrorListener()}
		p.AddErrorListener(l)
		tree = p.Program()
		if l.n > 0 {
			return nil, internalErrorf(name, "the file parses for the compiler but not for the formatter")
		}
	}
	n := len(stream.GetAllTokens())
	g := &genesisFile{name: name, elems: elems, toks: make([]gtok, n), elemOf: make([]int, n)}
	for i := range g.elemOf {
		g.elemOf[i] = -1
	}
	for i, e := range elems {
		if e.tok >= 0 {
			g.elemOf[e.tok] = i
		}
	}
	g.walk(tree)
	g.decide()
	return g, nil
}

// parseErrorCount counts syntax errors.
type parseErrorCount struct {
	*antlr.DefaultErrorListener
	n int
}

func (l *parseErrorCount) SyntaxError(antlr.Recognizer, any, int, int, string, antlr.RecognitionException) {
	l.n++
}

func genesisTokIndex(n antlr.TerminalNode) int {
	if n == nil {
		return -1
	}
	return n.GetSymbol().GetTokenIndex()
}

func genesisCtxStart(c antlr.ParserRuleContext) int {
	if c == nil || c.GetStart() == nil {
		return -1
	}
	return c.GetStart().GetTokenIndex()
}

func (g *genesisFile) set(i int, f func(t *gtok)) {
	if i >= 0 && i < len(g.toks) {
		f(&g.toks[i])
	}
}

func (g *genesisFile) noSpaceBefore(n antlr.TerminalNode) {
	g.set(genesisTokIndex(n), func(t *gtok) { t.noSpaceBefore = true })
}

func (g *genesisFile) noSpaceAfter(n antlr.TerminalNode) {
	g.set(genesisTokIndex(n), func(t *gtok) { t.noSpaceAfter = true })
}

func (g *genesisFile) unit(i int) { g.set(i, func(t *gtok) { t.unit = true }) }

// walk annotates the tokens of the tree and collects its constructs.
func (g *genesisFile) walk(tree antlr.Tree) {
	c, ok := tree.(antlr.ParserRuleContext)
	if !ok {
		return
	}
	k := -1 // the construct c is, if any
	var units []int
	push := func(open, close antlr.TerminalNode, forced bool) {
		if open == nil || close == nil || genesisTokIndex(open) < 0 || genesisTokIndex(close) < 0 {
			return
		}
		g.cons = append(g.cons, braceConstruct{open: genesisTokIndex(open), close: genesisTokIndex(close)})
		k = len(g.cons) - 1
		g.stack = append(g.stack, k)
		if forced {
			for _, j := range g.stack {
				g.cons[j].forced = true
			}
		}
	}
	switch c := c.(type) {
	case *parser.ProgramContext:
		for _, it := range c.AllItem() {
			g.unit(genesisCtxStart(it))
		}
	case *parser.BlockContext:
		stmts := c.AllStatement()
		push(c.LBRACE(), c.RBRACE(), len(stmts) > 1)
		for _, s := range stmts {
			units = append(units, genesisCtxStart(s))
		}
	case *parser.StructDefContext:
		push(c.LBRACE(), c.RBRACE(), false)
		for _, f := range c.AllField() {
			units = append(units, genesisCtxStart(f))
		}
	case *parser.EnumDefContext:
		push(c.LBRACE(), c.RBRACE(), false)
		for _, v := range c.AllVariant() {
			units = append(units, genesisCtxStart(v))
		}
	case *parser.VariantContext:
		g.noSpaceBefore(c.LPAREN())
	case *parser.MatchExprContext:
		push(c.LBRACE(), c.RBRACE(), false)
		for _, a := range c.AllMatchArm() {
			units = append(units, genesisCtxStart(a))
		}
	case *parser.StructLitContext:
		push(c.LBRACE(), c.RBRACE(), false)
		for _, f := range c.AllFieldInit() {
			units = append(units, genesisCtxStart(f))
		}
	case *parser.AsmBodyContext:
		push(c.LBRACE(), c.RBRACE(), false)
		afterInstr := false
		for _, ch := range c.GetChildren() {
			switch ch := ch.(type) {
			case *parser.AsmInstructionContext:
				units = append(units, genesisCtxStart(ch))
				afterInstr = true
				if ch.GetStart() != nil && ch.GetStop() != nil {
					for i := ch.GetStart().GetTokenIndex(); i <= ch.GetStop().GetTokenIndex(); i++ {
						g.set(i, func(t *gtok) { t.asm = true })
					}
				}
			case antlr.TerminalNode:
				if ch.GetSymbol().GetTokenType() == parser.GenesisParserSEMI {
					// A `;` ends the instruction before it; one that
					// follows no instruction is a unit of its own.
					if !afterInstr {
						units = append(units, genesisTokIndex(ch))
					}
					afterInstr = false
				}
			}
		}
	case *parser.FunctionContext:
		g.noSpaceBefore(c.LPAREN())
	case *parser.FuncTypeContext:
		g.noSpaceAfter(c.STAR())
		g.noSpaceBefore(c.LPAREN())
	case *parser.PointerTypeContext:
		g.noSpaceAfter(c.STAR())
	case *parser.IntPatternContext:
		g.noSpaceAfter(c.MINUS())
	case *parser.VariantPatternContext:
		g.noSpaceBefore(c.LPAREN())
	case *parser.AsmOperandContext:
		g.noSpaceAfter(c.MINUS())
	case *parser.UnaryContext:
		if c.GetChildCount() == 2 {
			if op, ok := c.GetChild(0).(antlr.TerminalNode); ok {
				g.noSpaceAfter(op)
			}
		}
	case *parser.CallOpContext:
		g.noSpaceBefore(c.LPAREN())
	case *parser.IndexOpContext:
		g.noSpaceBefore(c.LBRACK())
	case *parser.ArrowOpContext:
		g.noSpaceBefore(c.ARROW())
		g.noSpaceAfter(c.ARROW())
	case *parser.OrExprContext, *parser.AndExprContext, *parser.CmpOpContext, *parser.BitorExprContext,
		*parser.BitxorExprContext, *parser.BitandExprContext, *parser.ShiftExprContext, *parser.AddExprContext,
		*parser.MulExprContext:
		// The operator tokens among the children are binary.
		for _, ch := range c.GetChildren() {
			if t, ok := ch.(antlr.TerminalNode); ok {
				g.set(genesisTokIndex(t), func(t *gtok) { t.binary = true })
			}
		}
	}
	if k >= 0 {
		g.cons[k].units = units
		g.set(g.cons[k].open, func(t *gtok) { t.brace = true })
		g.set(g.cons[k].close, func(t *gtok) { t.brace = true })
	}
	for _, ch := range c.GetChildren() {
		g.walk(ch)
	}
	if k >= 0 {
		g.stack = g.stack[:len(g.stack)-1]
	}
}

// decide lays each construct out on one line or over several: over
// several when the source has a line break (or a comment) inside its
// braces, or when it holds a block of more than one statement; its
// units then start lines of their own. An empty construct (no token and
// no comment inside) is always `{}`.
func (g *genesisFile) decide() {
	breaks := make([]int, len(g.elems)+1) // breaks[i]: elems before i with a line break before them
	for i, e := range g.elems {
		breaks[i+1] = breaks[i]
		if e.nl > 0 {
			breaks[i+1]++
		}
	}
	for _, c := range g.cons {
		a, b := g.elemOf[c.open], g.elemOf[c.close]
		if a < 0 || b < 0 || b == a+1 {
			continue
		}
		if c.forced || breaks[b+1]-breaks[a+1] > 0 {
			g.toks[c.open].expanded = true
			g.toks[c.close].expanded = true
			for _, u := range c.units {
				g.unit(u)
			}
		}
	}
}

// openBracket is an open bracket while printing.
type openBracket struct {
	outer, inner int  // the level of its closing bracket's line, and of the lines inside
	line         int  // the output line it opens on
	broken       bool // a line break follows it: its closing bracket starts a line
	unitLevel    int  // the unit context it interrupts, restored when it closes
	unitSeq      int
	seq          int // its elem index
}

// print writes the formatted file.
func (g *genesisFile) print() []byte {
	p := newLinePrinter(genesisIndent)
	var stack []*openBracket
	unitLevel, unitSeq := 0, -1
	prevTok := -1 // elem index of the last token
	// lineBase is the level of the current line, or of the line where a
	// bracket closed on it opened if that is less: a bracket opened on
	// the line is one level deeper than that (the body of a function
	// whose parameters take several lines is one level deeper than fn).
	lineBase := 0
	lineFirst := 0 // the elem that starts the current line
	top := func() *openBracket {
		if len(stack) == 0 {
			return nil
		}
		return stack[len(stack)-1]
	}
	// nextTok[i] is the elem index of the first token after elem i, or -1.
	nextTok := make([]int, len(g.elems))
	next := -1
	for i := len(g.elems) - 1; i >= 0; i-- {
		nextTok[i] = next
		if g.elems[i].tok >= 0 {
			next = i
		}
	}
	// continuation is the level of a line that continues the current
	// unit: inside the innermost bracket opened in the unit, or one level
	// deeper than the unit.
	continuation := func() int {
		if t := top(); t != nil && t.seq > unitSeq {
			return t.inner
		}
		return unitLevel + 1
	}
	// inside is the level of the lines inside the innermost bracket.
	inside := func() int {
		if t := top(); t != nil {
			return t.inner
		}
		return 0
	}
	for i := range g.elems {
		e := &g.elems[i]
		var t *gtok
		if e.tok >= 0 {
			t = &g.toks[e.tok]
		}
		closer := t != nil && isGenesisCloser(e.typ)
		// Does a line start with e?
		brk := false
		switch {
		case i == 0:
		case g.elems[i-1].typ == elemLineComment:
			brk = true
		case e.comment():
			brk = e.nl > 0
		case t.unit:
			// A unit starts a line, unless a block comment that starts
			// the line comes before it: `/* note */ x = 1;` stays.
			brk = !(e.nl == 0 && g.elems[i-1].typ == elemBlockComment && lineFirst == i-1)
		case closer && (t.expanded || top() != nil && top().broken):
			brk = true
		case e.nl > 0 && g.keepsBreakAfter(i-1):
			brk = true
		}
		if brk {
			if tp := top(); tp != nil && tp.seq == prevTok {
				tp.broken = true // the line breaks right after the bracket
			}
			blank := e.nl > 1 && i > 0 && !closer && !isGenesisOpener(g.elems[i-1].typ)
			var level int
			switch {
			case closer && top() != nil:
				level = top().outer
			case t != nil && t.unit:
				level = inside()
			case e.comment():
				level = continuation()
				if next := nextTok[i]; next < 0 || g.toks[g.elems[next].tok].unit || isGenesisCloser(g.elems[next].typ) {
					level = inside()
				}
			default:
				level = continuation()
			}
			p.line(level, blank)
			lineBase = level
			lineFirst = i
		} else {
			sep := " "
			if i > 0 && g.noSpace(i-1, i) {
				sep = ""
			}
			p.write(sep, "")
		}
		if t != nil && t.unit {
			unitLevel, unitSeq = p.level, i
		}
		if closer {
			if b := top(); b != nil {
				unitLevel, unitSeq = b.unitLevel, b.unitSeq
				stack = stack[:len(stack)-1]
				if b.line < p.lines {
					lineBase = min(lineBase, b.outer)
				}
			}
		}
		p.write("", e.text)
		if t != nil && isGenesisOpener(e.typ) {
			stack = append(stack, &openBracket{outer: lineBase, inner: lineBase + 1, line: p.lines, unitLevel: unitLevel, unitSeq: unitSeq, seq: i})
		}
		if e.tok >= 0 {
			prevTok = i
		}
	}
	return p.bytes()
}

// keepsBreakAfter reports whether a line break of the source after elem
// i is kept: after an opening bracket, a comma, `=`, `=>`, a binary
// operator, or a comment; never inside an asm instruction.
func (g *genesisFile) keepsBreakAfter(i int) bool {
	e := g.elems[i]
	if e.comment() {
		return true
	}
	if g.toks[e.tok].asm {
		return false
	}
	switch e.typ {
	case parser.GenesisLexerLPAREN, parser.GenesisLexerLBRACK, parser.GenesisLexerCOMMA,
		parser.GenesisLexerASSIGN, parser.GenesisLexerFAT_ARROW:
		return true
	}
	return g.toks[e.tok].binary
}

// noSpace reports whether elems a and b, on one line, are written
// without a blank between them.
func (g *genesisFile) noSpace(a, b int) bool {
	ea, eb := g.elems[a], g.elems[b]
	no := false
	if ea.tok >= 0 {
		ta := g.toks[ea.tok]
		switch ea.typ {
		case parser.GenesisLexerLPAREN, parser.GenesisLexerLBRACK, parser.GenesisLexerDOT:
			no = true
		case parser.GenesisLexerLBRACE:
			no = eb.typ == parser.GenesisLexerRBRACE
		}
		no = no || ta.noSpaceAfter
	}
	if eb.tok >= 0 {
		tb := g.toks[eb.tok]
		switch eb.typ {
		case parser.GenesisLexerRPAREN, parser.GenesisLexerRBRACK, parser.GenesisLexerCOMMA,
			parser.GenesisLexerSEMI, parser.GenesisLexerCOLON, parser.GenesisLexerDOT:
			no = true
		}
		no = no || tb.noSpaceBefore
	}
	if ea.typ == elemBlockComment || eb.typ == elemBlockComment {
		// A comment on a line is set off by blanks, except from an
		// opening bracket before it and a closing one or comma after.
		no = ea.tok >= 0 && (ea.typ == parser.GenesisLexerLPAREN || ea.typ == parser.GenesisLexerLBRACK) ||
			eb.tok >= 0 && (eb.typ == parser.GenesisLexerRPAREN || eb.typ == parser.GenesisLexerRBRACK ||
				eb.typ == parser.GenesisLexerCOMMA || eb.typ == parser.GenesisLexerSEMI)
	}
	if eb.typ == elemLineComment {
		no = false
	}
	return no && !gluesTokens(ea.text, eb.text)
}

func isGenesisOpener(typ int) bool {
	return typ == parser.GenesisLexerLPAREN || typ == parser.GenesisLexerLBRACK || typ == parser.GenesisLexerLBRACE
}

func isGenesisCloser(typ int) bool {
	return typ == parser.GenesisLexerRPAREN || typ == parser.GenesisLexerRBRACK || typ == parser.GenesisLexerRBRACE
}

// checkGenesis checks the formatted text: the same tokens and comments
// as the source, and so the same parse.
func checkGenesis(name string, g *genesisFile, out []byte) error {
	_, elems, err := genesisTokens(out)
	if err != nil {
		return internalErrorf(name, "the output does not lex: %v", err)
	}
	var a, b []string
	for _, e := range g.elems {
		a = append(a, e.text)
	}
	for _, e := range elems {
		b = append(b, e.text)
	}
	if i, ok := firstDifference(a, b); !ok {
		return internalErrorf(name, "the output's tokens differ from the source's at token %d", i)
	}
	// With the same tokens, the output parses as the source did unless a
	// line break moved where the grammar looks at them: in an asm body
	// (an instruction's operands start on its mnemonic's line), the one
	// rule of the grammar that sees line breaks. Only then is the output
	// parsed again.
	hasAsm := false
	for _, e := range g.elems {
		hasAsm = hasAsm || e.typ == parser.GenesisLexerASM
	}
	if hasAsm {
		if _, diags := genesis.Parse(name, out); diags.HasErrors() {
			return internalErrorf(name, "the output does not parse: %v", diags.Error())
		}
	}
	return nil
}
