package nanovm

import (
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"

	"github.com/antlr4-go/antlr/v4"

	"github.com/genesis-toolchain/genesis/frontend/internal/jsontree"
	"github.com/genesis-toolchain/genesis/frontend/nanovm/parser"
	"github.com/genesis-toolchain/genesis/frontend/sllparse"
)

// Expr is a condition expression. Off is the index, in code points, of
// the expression's first character in the condition string.
type Expr interface {
	Off() int
	exprNode()
}

// LogicalExpr is X and Y, or X or Y (short-circuit, as in Python).
type LogicalExpr struct {
	Op    string // "and" or "or"
	X, Y  Expr
	OpOff int
	off   int // X's: kept, so that Off does not walk down the chain
}

// NotExpr is not X.
type NotExpr struct {
	X   Expr
	off int
}

// CompareExpr is X op Y, op one of == != > >= < <= in, not in, contains.
type CompareExpr struct {
	Op    string
	X, Y  Expr
	OpOff int
	off   int // X's
}

// VarRef is $root.path.to.field.
type VarRef struct {
	Root string
	Path []string
	off  int
}

// Literal is a string, number, True, False or None.
type Literal struct {
	Kind Kind // String, Number, Bool or Null
	Str  string
	Num  float64
	Bool bool
	off  int
}

func (e *LogicalExpr) Off() int { return e.off }
func (e *NotExpr) Off() int     { return e.off }
func (e *CompareExpr) Off() int { return e.off }
func (e *VarRef) Off() int      { return e.off }
func (e *Literal) Off() int     { return e.off }

func (*LogicalExpr) exprNode() {}
func (*NotExpr) exprNode()     {}
func (*CompareExpr) exprNode() {}
func (*VarRef) exprNode()      {}
func (*Literal) exprNode()     {}

// Text returns the reference as written, with its $.
func (v *VarRef) Text() string {
	return "$" + strings.Join(append([]string{v.Root}, v.Path...), ".")
}

// CondError is a syntax error in a condition, at code point Off.
type CondError struct {
	Off int
	Msg string
}

func (e CondError) Error() string { return fmt.Sprintf("%d: %s", e.Off, e.Msg) }

// ParseCondition parses a condition. It returns the expression, or the
// first syntax error. It never panics.
func ParseCondition(src string) (e Expr, err *CondError) {
	defer func() {
		if r := recover(); r != nil {
			e, err = nil, &CondError{Msg: fmt.Sprintf("internal error parsing the condition: %v", r)}
		}
	}()
	if err := condTooDeep(src); err != nil {
		return nil, err
	}
	lexer := parser.NewConditionLexer(antlr.NewInputStream(src))
	lexer.RemoveErrorListeners()
	tokens := antlr.NewCommonTokenStream(lexer, antlr.TokenDefaultChannel)
	p0 := parser.NewConditionParser(tokens)
	tree, ok := sllparse.Try(p0, p0.Condition)
	if !ok {
		tokens.Seek(0)
		l := &condListener{tokens: tokens}
		p := parser.NewConditionParser(tokens)
		p.RemoveErrorListeners()
		p.AddErrorListener(l)
		tree = p.Condition()
		if l.err != nil {
			return nil, l.err
		}
		// Full LL found no error where SLL did: not expected of this
		// grammar, but then the LL tree is the parse.
	}
	b := &condBuilder{}
	e = b.or(tree.OrExpr())
	if b.err != nil {
		return nil, b.err
	}
	walkExpr(e, func(x Expr) {
		if l, ok := x.(*Literal); ok && l.Kind == Number && math.IsInf(l.Num, 0) && err == nil {
			err = &CondError{Off: l.off, Msg: "number out of range"}
		}
	})
	if err != nil {
		return nil, err
	}
	return e, nil
}

// condListener keeps the first syntax error, worded for the language.
type condListener struct {
	*antlr.DefaultErrorListener
	tokens *antlr.CommonTokenStream
	err    *CondError
}

func (l *condListener) SyntaxError(rec antlr.Recognizer, sym any, _, _ int, msg string, _ antlr.RecognitionException) {
	if l.err != nil {
		return
	}
	t, ok := sym.(antlr.Token)
	if !ok {
		l.err = &CondError{Msg: msg}
		return
	}
	l.err = &CondError{Off: t.GetStart(), Msg: l.describe(rec, t)}
	if t.GetTokenType() == antlr.TokenEOF {
		// Point at the end of the condition, just after its last token.
		if prev := l.prev(t); prev != nil {
			l.err.Off = prev.GetStop() + 1
		}
	}
}

func (l *condListener) prev(t antlr.Token) antlr.Token {
	i := t.GetTokenIndex() - 1
	if i < 0 || i >= len(l.tokens.GetAllTokens()) {
		return nil
	}
	return l.tokens.Get(i)
}

func (l *condListener) next(t antlr.Token) antlr.Token {
	i := t.GetTokenIndex() + 1
	if i < 0 || i >= len(l.tokens.GetAllTokens()) {
		return nil
	}
	return l.tokens.Get(i)
}

func (l *condListener) describe(rec antlr.Recognizer, t antlr.Token) string {
	text := t.GetText()
	typ := t.GetTokenType()
	switch typ {
	case parser.ConditionLexerUNTERMINATED_STRING:
		return "unterminated string: it needs its closing " + text[:1]
	case parser.ConditionLexerBAD_CHAR:
		switch text {
		case "$":
			return "'$' must be followed by a name, as in $answer or $step.output"
		case "+", "-", "*", "/", "%":
			return fmt.Sprintf("unexpected '%s': conditions have no arithmetic", text)
		case "=":
			if n := l.next(t); n != nil && n.GetText() == "=" {
				break
			}
			return "unexpected '=': compare with '=='"
		case "!":
			return "unexpected '!': negate with 'not'"
		case "&", "|":
			return fmt.Sprintf("unexpected '%s': combine conditions with 'and' and 'or'", text)
		case "[", "]":
			return fmt.Sprintf("unexpected '%s': index with a path, as in $list.0", text)
		}
		return fmt.Sprintf("unexpected character %q", text)
	case parser.ConditionLexerWORD:
		if n := l.next(t); n != nil && n.GetTokenType() == parser.ConditionLexerLPAREN {
			return fmt.Sprintf("function calls are not supported (%s(…))", text)
		}
		switch strings.ToLower(text) {
		case "true":
			return fmt.Sprintf("unexpected word %q: the boolean is True", text)
		case "false":
			return fmt.Sprintf("unexpected word %q: the boolean is False", text)
		case "none", "null", "nil":
			return fmt.Sprintf("unexpected word %q: the empty value is None", text)
		case "and", "or", "not", "in", "contains":
			return fmt.Sprintf("unexpected word %q: operators are lower case (%s)", text, strings.ToLower(text))
		}
		return fmt.Sprintf("unexpected word %q: a string needs quotes ('%s'), a reference a $ ($%s)", text, text, text)
	case parser.ConditionLexerLPAREN:
		if p := l.prev(t); p != nil && p.GetTokenType() == parser.ConditionLexerVAR {
			return "method calls are not supported"
		}
	case antlr.TokenEOF:
		m := "unexpected end of the condition"
		if p := l.prev(t); p == nil {
			m = "the condition is empty"
		}
		if want := expectedIn(rec); want != "" {
			m += ", expected " + want
		}
		return m
	}
	if isCompareToken(typ) {
		if p, ok := rec.(antlr.Parser); ok && !hasToken(p.GetExpectedTokens(), typ) && !hasToken(p.GetExpectedTokens(), parser.ConditionLexerVAR) {
			return fmt.Sprintf("unexpected %s: comparisons do not chain; join them with and/or", describeCondToken(t))
		}
	}
	m := "unexpected " + describeCondToken(t)
	if want := expectedIn(rec); want != "" {
		m += ", expected " + want
	}
	return m
}

func isCompareToken(typ int) bool {
	switch typ {
	case parser.ConditionLexerEQ, parser.ConditionLexerNE, parser.ConditionLexerGT, parser.ConditionLexerGE,
		parser.ConditionLexerLT, parser.ConditionLexerLE, parser.ConditionLexerIN, parser.ConditionLexerCONTAINS:
		return true
	}
	return false
}

func describeCondToken(t antlr.Token) string {
	text := t.GetText()
	switch t.GetTokenType() {
	case antlr.TokenEOF:
		return "end of the condition"
	case parser.ConditionLexerVAR:
		return "reference " + text
	case parser.ConditionLexerSTRING:
		return "string " + jsontree.Abbreviate(text)
	case parser.ConditionLexerNUMBER:
		return "number " + text
	}
	return "'" + text + "'"
}

func hasToken(set *antlr.IntervalSet, typ int) bool {
	if set == nil {
		return false
	}
	for _, iv := range set.GetIntervals() {
		if typ >= iv.Start && typ < iv.Stop {
			return true
		}
	}
	return false
}

// expectedIn names what the parser expected: an operand, an operator, a
// ')' or the end.
func expectedIn(rec antlr.Recognizer) string {
	p, ok := rec.(antlr.Parser)
	if !ok {
		return ""
	}
	set := p.GetExpectedTokens()
	var names []string
	if hasToken(set, parser.ConditionLexerVAR) {
		names = append(names, "a value ($reference, string, number, True, False or None)")
	}
	if hasToken(set, parser.ConditionLexerEQ) {
		names = append(names, "a comparison")
	}
	if hasToken(set, parser.ConditionLexerAND) {
		names = append(names, "and/or")
	}
	if hasToken(set, parser.ConditionLexerIN) && !hasToken(set, parser.ConditionLexerEQ) {
		names = append(names, "'in'")
	}
	if hasToken(set, parser.ConditionLexerRPAREN) {
		names = append(names, "')'")
	}
	if hasToken(set, antlr.TokenEOF) {
		names = append(names, "the end")
	}
	switch len(names) {
	case 0:
		return ""
	case 1:
		return names[0]
	}
	return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
}

// ── Parse tree to AST ──

// maxCondDepth bounds how deep a condition nests: each parenthesis,
// `not` and and/or operator of a chain is a level (`$a or $b or $c` is
// two). The parser recurses on parentheses and `not`s, and the tree is as
// deep as its chains are long; every phase after recurses on it, so the
// bound keeps them within the stack and linear in the condition's length
// (docs/nanovm.md, Limits).
const maxCondDepth = jsontree.MaxDepth

// tooDeepMsg is the message of a condition nested deeper than
// maxCondDepth.
var tooDeepMsg = fmt.Sprintf("the condition nests deeper than %d levels (parentheses, not, and/or operators)", maxCondDepth)

// condTooDeep finds, before the parser runs, where src's parentheses and
// runs of `not` nest deeper than maxCondDepth: there the parser would
// recurse that deep. A `not` is open until the next and/or, or the end
// of its parentheses.
func condTooDeep(src string) *CondError {
	lexer := parser.NewConditionLexer(antlr.NewInputStream(src))
	lexer.RemoveErrorListeners()
	nots := []int{0} // per open parenthesis (and the whole, first)
	depth := 0
	for t := lexer.NextToken(); t.GetTokenType() != antlr.TokenEOF; t = lexer.NextToken() {
		top := len(nots) - 1
		switch t.GetTokenType() {
		case parser.ConditionLexerLPAREN:
			nots = append(nots, 0)
			depth++
		case parser.ConditionLexerRPAREN:
			if top > 0 {
				depth -= 1 + nots[top]
				nots = nots[:top]
			}
		case parser.ConditionLexerNOT:
			nots[top]++
			depth++
		case parser.ConditionLexerAND, parser.ConditionLexerOR:
			depth -= nots[top]
			nots[top] = 0
		}
		if depth > maxCondDepth {
			return &CondError{Off: t.GetStart(), Msg: tooDeepMsg}
		}
	}
	return nil
}

// condBuilder turns the parse tree into the AST, counting its depth:
// err is set, at the level past maxCondDepth, when it goes deeper.
type condBuilder struct {
	depth int
	err   *CondError
}

// deeper enters n levels, the i-th at offset off(i); false, with err
// set, past maxCondDepth.
func (b *condBuilder) deeper(n int, off func(i int) int) bool {
	if b.err != nil {
		return false
	}
	if b.depth+n > maxCondDepth {
		b.err = &CondError{Off: off(maxCondDepth - b.depth), Msg: tooDeepMsg}
		return false
	}
	b.depth += n
	return true
}

// chain builds a left-associative and/or chain: the operands, and the
// operator tokens of c between them.
func (b *condBuilder) chain(op string, c antlr.ParserRuleContext, typ int, n int, operand func(i int) Expr) Expr {
	var offs []int
	for _, ch := range c.GetChildren() {
		if t, ok := ch.(antlr.TerminalNode); ok && t.GetSymbol().GetTokenType() == typ {
			offs = append(offs, t.GetSymbol().GetStart())
		}
	}
	if n < 1 {
		return &Literal{Kind: Null} // no operand: the parser reported it
	}
	if len(offs) > n-1 {
		offs = offs[:n-1]
	}
	if !b.deeper(len(offs), func(i int) int { return offs[i] }) {
		return &Literal{Kind: Null}
	}
	defer func() { b.depth -= len(offs) }()
	e := operand(0)
	for i, off := range offs {
		e = &LogicalExpr{Op: op, X: e, Y: operand(i + 1), OpOff: off, off: e.Off()}
	}
	return e
}

func (b *condBuilder) or(c parser.IOrExprContext) Expr {
	ands := c.AllAndExpr()
	return b.chain("or", c, parser.ConditionLexerOR, len(ands), func(i int) Expr { return b.and(ands[i]) })
}

func (b *condBuilder) and(c parser.IAndExprContext) Expr {
	nots := c.AllNotExpr()
	return b.chain("and", c, parser.ConditionLexerAND, len(nots), func(i int) Expr { return b.not(nots[i]) })
}

func (b *condBuilder) not(c parser.INotExprContext) Expr {
	if n := c.NOT(); n != nil {
		off := n.GetSymbol().GetStart()
		if !b.deeper(1, func(int) int { return off }) {
			return &Literal{Kind: Null}
		}
		defer func() { b.depth-- }()
		return &NotExpr{X: b.not(c.NotExpr()), off: off}
	}
	return b.comparison(c.Comparison())
}

func (b *condBuilder) comparison(c parser.IComparisonContext) Expr {
	ops := c.AllOperand()
	x := b.operand(ops[0])
	op := c.CompOp()
	if op == nil {
		return x
	}
	name := op.GetText()
	if op.NOT() != nil {
		name = "not in"
	}
	return &CompareExpr{Op: name, X: x, Y: b.operand(ops[1]), OpOff: op.GetStart().GetStart(), off: x.Off()}
}

func (b *condBuilder) operand(c parser.IOperandContext) Expr {
	off := c.GetStart().GetStart()
	switch {
	case c.VAR() != nil:
		segs := strings.Split(c.VAR().GetText()[1:], ".")
		return &VarRef{Root: segs[0], Path: segs[1:], off: off}
	case c.STRING() != nil:
		t := c.STRING().GetText()
		return &Literal{Kind: String, Str: t[1 : len(t)-1], off: off}
	case c.NUMBER() != nil:
		f, _ := strconv.ParseFloat(c.NUMBER().GetText(), 64)
		return &Literal{Kind: Number, Num: f, off: off}
	case c.TRUE() != nil:
		return &Literal{Kind: Bool, Bool: true, off: off}
	case c.FALSE() != nil:
		return &Literal{Kind: Bool, off: off}
	case c.NONE() != nil:
		return &Literal{Kind: Null, off: off}
	}
	if !b.deeper(1, func(int) int { return off }) {
		return &Literal{Kind: Null}
	}
	defer func() { b.depth-- }()
	return b.or(c.OrExpr())
}

// quotedRef finds a $reference inside a string literal.
var quotedRef = regexp.MustCompile(`\$[\p{L}\p{N}_]+(?:\.[\p{L}\p{N}_]+)*`)

// parseConditionNode parses the condition held by the string node n,
// reporting a syntax error at its place in the file, and warns about
// references written inside quotes, which conditions compare as text.
func parseConditionNode(src string, n *Node, r *reporter) Expr {
	e, err := ParseCondition(src)
	if err != nil {
		r.errorAt(n.RunePos(err.Off), n.Path, CodeCondition, "invalid condition: %s", err.Msg)
		return nil
	}
	walkExpr(e, func(x Expr) {
		if l, ok := x.(*Literal); ok && l.Kind == String {
			if m := quotedRef.FindString(l.Str); m != "" {
				r.warnAt(n.RunePos(l.off), n.Path, CodeQuotedVar,
					"the string '%s' is compared as written: conditions do not replace %s inside quotes (write %s without quotes)",
					jsontree.Abbreviate(l.Str), m, m)
			}
		}
	})
	return e
}

// walkExpr calls fn for e and every expression inside it, in source order.
func walkExpr(e Expr, fn func(Expr)) {
	fn(e)
	switch e := e.(type) {
	case *LogicalExpr:
		walkExpr(e.X, fn)
		walkExpr(e.Y, fn)
	case *NotExpr:
		walkExpr(e.X, fn)
	case *CompareExpr:
		walkExpr(e.X, fn)
		walkExpr(e.Y, fn)
	}
}

// FormatExpr renders an expression fully parenthesized, in the
// condition language (a string holding both kinds of quotes has no
// rendering that parses back), for tests and messages.
func FormatExpr(e Expr) string {
	switch e := e.(type) {
	case *LogicalExpr:
		return "(" + FormatExpr(e.X) + " " + e.Op + " " + FormatExpr(e.Y) + ")"
	case *NotExpr:
		return "(not " + FormatExpr(e.X) + ")"
	case *CompareExpr:
		return "(" + FormatExpr(e.X) + " " + e.Op + " " + FormatExpr(e.Y) + ")"
	case *VarRef:
		return e.Text()
	case *Literal:
		switch e.Kind {
		case String:
			if strings.Contains(e.Str, "'") {
				return `"` + e.Str + `"`
			}
			return "'" + e.Str + "'"
		case Number:
			return strconv.FormatFloat(e.Num, 'f', -1, 64)
		case Bool:
			if e.Bool {
				return "True"
			}
			return "False"
		}
		return "None"
	}
	return "?"
}
