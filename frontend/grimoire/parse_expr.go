package grimoire

import (
	"strings"

	"github.com/antlr4-go/antlr/v4"

	"github.com/genesis-toolchain/genesis/diag"
	"github.com/genesis-toolchain/genesis/frontend/grimoire/parser"
)

// Expressions. An expression with a hole (a missing operand after error
// recovery) is left out whole: a composite node never has a nil child.

// actionCall is `venue.action(args)` while the builder works: it is an
// expression only until the statement holding it becomes an ActionStmt,
// and misplaced anywhere else (an action is a step with effects, not a
// value to compute with).
type actionCall struct {
	venue, action *Ident
	args          []*Arg
}

func (a *actionCall) Pos() diag.Pos { return a.venue.Pos() }
func (*actionCall) exprNode()       {}

// expr converts an expression that is not a statement's whole value.
func (b *builder) expr(c parser.IExpressionContext) Expr {
	if c == nil {
		return nil
	}
	return b.operand(b.top(c))
}

// top converts an expression that is a statement's whole value, which
// may be a venue action.
func (b *builder) top(c parser.IExpressionContext) Expr {
	if c == nil {
		return nil
	}
	return b.node(c)
}

// operand returns x as an operand of a larger expression: a venue action
// cannot be one.
func (b *builder) operand(x Expr) Expr {
	if a, ok := x.(*actionCall); ok {
		b.errorf(a.Pos(), CodeMisplaced, "the venue action %s.%s must be a statement of its own, or the whole right side of an assignment",
			a.venue.Name, a.action.Name)
		return nil
	}
	return x
}

// node converts one level of the expression grammar.
func (b *builder) node(t antlr.Tree) Expr {
	switch c := t.(type) {
	case *parser.ExpressionContext:
		x := b.node(c.OrExpr())
		if c.QUESTION() == nil {
			return x
		}
		cond, yes, no := b.operand(x), b.expr(c.GetYes()), b.expr(c.GetNo())
		if cond == nil || yes == nil || no == nil {
			return nil
		}
		return &CondExpr{QuestionPos: b.tpos(c.QUESTION()), Cond: cond, Then: yes, Else: no}
	case *parser.OrExprContext, *parser.AndExprContext, *parser.EqualityContext,
		*parser.ComparisonContext, *parser.AdditiveContext, *parser.MultiplicativeContext:
		return b.chain(c.(antlr.ParserRuleContext))
	case *parser.NotExprContext:
		if c.NOT() == nil {
			return b.node(c.Equality())
		}
		return b.unary(c.NOT(), c.NotExpr())
	case *parser.UnaryContext:
		if c.Postfix() != nil {
			return b.node(c.Postfix())
		}
		op := c.MINUS()
		if op == nil {
			op = c.PLUS()
		}
		return b.unary(op, c.Unary())
	case *parser.PostfixContext:
		return b.postfix(c)
	case parser.IPrimaryContext:
		return b.primary(c)
	}
	return nil
}

func (b *builder) unary(op antlr.TerminalNode, operand antlr.Tree) Expr {
	x := b.operand(b.node(operand))
	if op == nil || x == nil {
		return nil
	}
	return &UnaryExpr{OpPos: b.tpos(op), Op: op.GetText(), X: x}
}

// chain converts a left-associative chain of binary operators: the
// children of c alternate operands and operator tokens.
func (b *builder) chain(c antlr.ParserRuleContext) Expr {
	var x Expr
	var op antlr.Token
	operands := 0
	for _, ch := range c.GetChildren() {
		switch ch := ch.(type) {
		case antlr.ErrorNode:
			return nil
		case antlr.TerminalNode:
			op = ch.GetSymbol()
		case antlr.ParserRuleContext:
			y := b.node(ch)
			operands++
			if operands == 1 {
				x = y
				continue
			}
			x, y = b.operand(x), b.operand(y)
			if x == nil || y == nil || op == nil {
				return nil
			}
			x = &BinaryExpr{OpPos: b.pos(op), Op: op.GetText(), X: x, Y: y}
		}
	}
	return x
}

func (b *builder) postfix(c *parser.PostfixContext) Expr {
	x := b.node(c.Primary())
	for _, oc := range c.AllPostfixOp() {
		if x == nil {
			return nil
		}
		switch oc := oc.(type) {
		case *parser.MemberOpContext:
			name := b.anyName(oc.AnyName())
			x = b.operand(x)
			if name == nil || x == nil {
				return nil
			}
			x = &MemberExpr{X: x, Name: name}
		case *parser.IndexOpContext:
			index := b.expr(oc.Expression())
			x = b.operand(x)
			if index == nil || x == nil {
				return nil
			}
			x = &IndexExpr{X: x, Index: index}
		case *parser.CallOpContext:
			x = b.call(x, b.args(oc.Args()))
		default:
			return nil
		}
	}
	return x
}

// call makes the call of fun: a built-in function's (`min(a, b)`) or a
// venue action (`dex.swap(...)`); nothing else can be called.
func (b *builder) call(fun Expr, args []*Arg) Expr {
	switch f := fun.(type) {
	case *Ident:
		for _, a := range args {
			if a.Name != nil {
				b.errorf(a.Pos(), CodeMisplaced, "the arguments of %s are positional", f.Name)
				return nil
			}
		}
		return &CallExpr{Fun: f, Args: args}
	case *MemberExpr:
		if venue, ok := f.X.(*Ident); ok {
			return &actionCall{venue: venue, action: f.Name, args: args}
		}
	}
	b.errorf(b.operandPos(fun), CodeMisplaced, "only built-in functions, name(...), and venue actions, venue.action(...), can be called")
	return nil
}

// operandPos is where x starts, for a message about it; x may be a
// misplaced action.
func (b *builder) operandPos(x Expr) diag.Pos {
	if x == nil {
		return diag.Pos{File: b.file}
	}
	return x.Pos()
}

func (b *builder) args(c parser.IArgsContext) []*Arg {
	if c == nil {
		return nil
	}
	var out []*Arg
	for _, ac := range c.AllArg() {
		a := &Arg{Value: b.expr(ac.Expression())}
		if ac.ASSIGN() != nil {
			a.Name = b.anyName(ac.AnyName())
			if a.Name == nil {
				continue
			}
		}
		if a.Value != nil {
			out = append(out, a)
		}
	}
	return out
}

func (b *builder) primary(c parser.IPrimaryContext) Expr {
	switch c := c.(type) {
	case *parser.NumberLitContext:
		t := c.NUMBER().GetSymbol()
		raw := t.GetText()
		if unit := c.ID(); unit != nil {
			return &UnitLit{LitPos: b.pos(t), Raw: raw, Amount: numberValue(raw, Plain), Unit: &Ident{NamePos: b.tpos(unit), Name: unit.GetText()}}
		}
		return &NumberLit{LitPos: b.pos(t), Kind: Plain, Raw: raw, Value: numberValue(raw, Plain)}
	case *parser.PercentLitContext:
		t := c.PERCENT_NUMBER().GetSymbol()
		return &NumberLit{LitPos: b.pos(t), Kind: Percent, Raw: t.GetText(), Value: numberValue(t.GetText(), Percent)}
	case *parser.DurationLitContext:
		t := c.DURATION().GetSymbol()
		return &NumberLit{LitPos: b.pos(t), Kind: Duration, Raw: t.GetText(), Value: numberValue(t.GetText(), Duration)}
	case *parser.HexLitContext:
		return &AddressLit{LitPos: b.tpos(c.HEX()), Value: c.HEX().GetText()}
	case *parser.StringLitContext:
		if s := b.stringLit(c.STRING()); s != nil {
			return s
		}
	case *parser.BoolLitContext:
		if c.TRUE() != nil {
			return &BoolLit{LitPos: b.tpos(c.TRUE()), Value: true}
		}
		return &BoolLit{LitPos: b.tpos(c.FALSE())}
	case *parser.VenueLitContext:
		return &VenueRef{AtPos: b.tpos(c.VENUE_REF()), Name: strings.TrimPrefix(c.VENUE_REF().GetText(), "@")}
	case *parser.AdvisoryLitContext:
		text := c.ADVISORY().GetText()
		// A prompt is prose: written over several lines, it is one line
		// of text, the line breaks and indentation being layout.
		a := &Advisory{LitPos: b.tpos(c.ADVISORY()), Prompt: strings.Join(strings.Fields(text[2:len(text)-2]), " ")}
		if c.VIA() != nil {
			if a.Via = b.name(c.Name()); a.Via == nil {
				return nil
			}
		}
		return a
	case *parser.ListLitContext:
		l := &ListLit{LbrackPos: b.tpos(c.LBRACK())}
		for _, ec := range c.AllExpression() {
			if x := b.expr(ec); x != nil {
				l.Elems = append(l.Elems, x)
			}
		}
		return l
	case *parser.ObjectExprContext:
		if c.ObjectLit() != nil {
			return b.objectLit(c.ObjectLit())
		}
	case *parser.ParenExprContext:
		return b.expr(c.Expression())
	case *parser.NameExprContext:
		if id := b.name(c.Name()); id != nil {
			return id
		}
	}
	return nil
}
