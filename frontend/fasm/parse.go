package fasm

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/antlr4-go/antlr/v4"

	"github.com/genesis-toolchain/genesis/diag"
	"github.com/genesis-toolchain/genesis/frontend/fasm/parser"
	"github.com/genesis-toolchain/genesis/frontend/source"
)

// The parser turns each line's ANTLR parse tree into plain values, so that
// the assembler never touches a parse tree, whose nodes may be missing
// after error recovery.

// A line is one source line: its labels and at most one statement.
type line struct {
	labels []operand // each an identOperand or a stringOperand
	stmt   *statement
}

// A statement is an instruction or a directive.
type statement struct {
	name token     // the mnemonic, or the directive with its dot
	hash *token    // the hash operand of .import
	ops  []operand // in source order
}

// A token is a piece of source text and where it starts.
type token struct {
	text string
	pos  diag.Pos
}

type operandKind uint8

const (
	regOperand    operandKind = iota // r0..r255
	intOperand                       // an integer, possibly negative
	identOperand                     // a name written as an identifier
	stringOperand                    // a quoted string: text, or a name
)

// An operand is one comma-separated operand, or a label's name.
type operand struct {
	kind operandKind
	tok  token    // the register, number, identifier or quoted string
	neg  bool     // an intOperand written with a minus sign
	pos  diag.Pos // where the operand starts (its minus sign, if any)
}

// describe names an operand for a message: "register r1", "number -8".
func (op operand) describe() string {
	switch op.kind {
	case regOperand:
		return "register " + op.tok.text
	case intOperand:
		if op.neg {
			return "number -" + op.tok.text
		}
		return "number " + op.tok.text
	case identOperand:
		return "name " + op.tok.text
	}
	return "string " + abbreviate(op.tok.text)
}

// abbreviate shortens s for a message.
func abbreviate(s string) string {
	const max = 24
	if utf8.RuneCountInString(s) <= max {
		return s
	}
	return string([]rune(s)[:max-1]) + "…"
}

// parse reads src one line at a time: the grammar's start rule is a line,
// so a syntax error, and ANTLR's recovery from it, never reach past the
// end of its line. Syntax errors are appended to diags, one per line at
// most: a line with a syntax error keeps its well-formed labels (so that
// references to them do not cascade into more errors) and loses its
// statement.
func parse(file string, src []byte, diags *diag.List) []line {
	return parseLines(file, src, diags, true)
}

// parseLines is parse, with quickScan's fast path or without it.
func parseLines(file string, src []byte, diags *diag.List, quick bool) []line {
	bad := map[int]bool{} // lines that already have a syntax error
	checkUTF8(file, src, bad, diags)

	lp := &lineParser{file: file, bad: bad, diags: diags}
	lexer := parser.NewFASMLexer(nil)
	lexer.RemoveErrorListeners()
	lexer.AddErrorListener(lp)
	p := parser.NewFASMParser(nil)
	p.RemoveErrorListeners()
	p.AddErrorListener(lp)

	texts := strings.Split(string(src), "\n")
	lines := make([]line, len(texts))
	for i, text := range texts {
		if strings.TrimSpace(text) == "" {
			continue
		}
		lp.line = i + 1
		if ln, ok := lp.quickScan(text); ok && quick {
			lines[i] = ln
			continue
		}
		lexer.SetInputStream(antlr.NewInputStream(text))
		p.SetInputStream(antlr.NewCommonTokenStream(lexer, antlr.TokenDefaultChannel))
		lines[i] = lp.convert(p.Line())
	}
	return lines
}

// checkUTF8 reports the first invalid UTF-8 sequence of each line: the
// lexer would read it as U+FFFD and the assembler would silently encode
// other bytes than the file holds.
func checkUTF8(file string, src []byte, bad map[int]bool, diags *diag.List) {
	source.InvalidUTF8(src, func(line, col int, c byte) bool {
		if !bad[line] {
			bad[line] = true
			diags.Errorf(diag.Pos{File: file, Line: line, Col: col}, codeSyntax, "invalid UTF-8 byte 0x%02x", c)
		}
		return true
	})
}

// A lineParser converts the parse tree of a line, and reports the line's
// syntax errors as the ANTLR error listener of its lexer and parser.
type lineParser struct {
	*antlr.DefaultErrorListener
	file  string
	line  int          // the number of the line being parsed
	bad   map[int]bool // lines that already have a syntax error
	diags *diag.List

	quickBuf []quickToken // quickScan's token buffer, reused from line to line
}

// pos is the position of a token of the current line. ANTLR's column, like
// diag.Pos's, counts code points, but from 0.
func (lp *lineParser) pos(t antlr.Token) diag.Pos {
	return diag.Pos{File: lp.file, Line: lp.line, Col: t.GetColumn() + 1}
}

func (lp *lineParser) token(t antlr.Token) token {
	return token{text: t.GetText(), pos: lp.pos(t)}
}

// convert converts a line's parse tree.
func (lp *lineParser) convert(lc parser.ILineContext) line {
	var ln line
	for _, lab := range lc.AllLabel() {
		if op, ok := lp.name(lab.Name()); ok && lab.COLON() != nil && !hasErrorNode(lab) {
			ln.labels = append(ln.labels, op)
		}
	}
	st := lc.Statement()
	if st == nil || lp.bad[lp.line] {
		return ln
	}
	if s, ok := lp.statement(st); ok && !hasErrorNode(st) {
		ln.stmt = s
		return ln
	}
	// Error recovery changed the tree without a report: not expected,
	// but never assemble a guess.
	lp.bad[lp.line] = true
	lp.diags.Errorf(lp.pos(st.GetStart()), codeSyntax, "malformed statement")
	return ln
}

// hasErrorNode reports whether error recovery inserted or skipped a token
// in the tree t.
func hasErrorNode(t antlr.Tree) bool {
	if _, ok := t.(antlr.ErrorNode); ok {
		return true
	}
	for _, c := range t.GetChildren() {
		if hasErrorNode(c) {
			return true
		}
	}
	return false
}

// statement converts a statement; ok is false if error recovery left a
// part of it out.
func (lp *lineParser) statement(st parser.IStatementContext) (s *statement, ok bool) {
	var name antlr.TerminalNode
	var list parser.IOperandListContext
	s = &statement{}
	if in := st.Instruction(); in != nil {
		name, list = in.IDENT(), in.OperandList()
	} else if d := st.Directive(); d != nil {
		name, list = d.DIRECTIVE(), d.OperandList()
		if h := d.HASH(); h != nil {
			t := lp.token(h.GetSymbol())
			s.hash = &t
		}
	}
	if name == nil {
		return nil, false
	}
	s.name = lp.token(name.GetSymbol())
	if list == nil {
		return s, true
	}
	for _, oc := range list.AllOperand() {
		var op operand
		switch oc := oc.(type) {
		case *parser.RegOperandContext:
			op = operand{kind: regOperand, tok: lp.token(oc.REG().GetSymbol())}
			op.pos = op.tok.pos
		case *parser.IntOperandContext:
			if oc.INT() == nil {
				return nil, false
			}
			op = operand{kind: intOperand, tok: lp.token(oc.INT().GetSymbol()), neg: oc.MINUS() != nil}
			op.pos = op.tok.pos
			if op.neg {
				op.pos = lp.pos(oc.MINUS().GetSymbol())
			}
		case *parser.NameOperandContext:
			if op, ok = lp.name(oc.Name()); !ok {
				return nil, false
			}
		default:
			return nil, false // an operand that did not parse
		}
		s.ops = append(s.ops, op)
	}
	return s, true
}

// name converts a name; ok is false if it did not parse.
func (lp *lineParser) name(n parser.INameContext) (operand, bool) {
	if n == nil {
		return operand{}, false
	}
	op := operand{kind: identOperand}
	t := n.IDENT()
	if t == nil {
		op.kind, t = stringOperand, n.STRING()
	}
	if t == nil {
		return operand{}, false
	}
	op.tok = lp.token(t.GetSymbol())
	op.pos = op.tok.pos
	return op, true
}

// SyntaxError reports the first syntax error of a line as a diagnostic:
// the ones after it are mostly its consequences.
func (lp *lineParser) SyntaxError(rec antlr.Recognizer, sym any, _, col int, msg string, _ antlr.RecognitionException) {
	if lp.bad[lp.line] {
		return
	}
	lp.bad[lp.line] = true
	pos := diag.Pos{File: lp.file, Line: lp.line, Col: col + 1}
	t, ok := sym.(antlr.Token)
	if !ok {
		// The lexer cannot fail (BAD_CHAR matches any character), so
		// this is not expected; keep ANTLR's own message.
		lp.diags.Errorf(pos, codeSyntax, "%s", msg)
		return
	}
	switch t.GetTokenType() {
	case parser.FASMLexerUNTERMINATED_STRING:
		lp.diags.Errorf(pos, codeSyntax, "unterminated string")
		return
	case parser.FASMLexerBAD_CHAR:
		lp.diags.Errorf(pos, codeSyntax, "unexpected character %q", t.GetText())
		return
	}
	m := "unexpected " + describeToken(t)
	if p, ok := rec.(antlr.Parser); ok {
		// ANTLR reports some errors only once the rule that could take
		// more has ended, and then expects what follows the rule: the
		// token before the offending one tells what was really expected.
		want := describeExpected(p.GetExpectedTokens())
		prev := antlr.Token(nil)
		if i := t.GetTokenIndex(); i > 0 {
			prev = p.GetTokenStream().Get(i - 1)
		}
		switch {
		case prev == nil || prev.GetTokenType() == parser.FASMLexerCOLON:
			want = "a label, an instruction or a directive"
		case isOperandToken(prev.GetTokenType()) && (isOperandToken(t.GetTokenType()) || t.GetTokenType() == parser.FASMLexerMINUS):
			want = "',' or end of line"
		}
		if want != "" {
			m += ", expected " + want
		}
	}
	lp.diags.Errorf(pos, codeSyntax, "%s", m)
}

// isOperandToken reports whether a token of type typ can end an operand.
func isOperandToken(typ int) bool {
	switch typ {
	case parser.FASMLexerREG, parser.FASMLexerINT, parser.FASMLexerIDENT, parser.FASMLexerSTRING:
		return true
	}
	return false
}

// describeToken names a token for a syntax error message.
func describeToken(t antlr.Token) string {
	text := t.GetText()
	switch t.GetTokenType() {
	case antlr.TokenEOF:
		return "end of line"
	case parser.FASMLexerHASH:
		return "hash " + abbreviate(text)
	case parser.FASMLexerREG:
		return "register " + text
	case parser.FASMLexerINT:
		return "number " + abbreviate(text)
	case parser.FASMLexerIDENT:
		return "name " + abbreviate(text)
	case parser.FASMLexerDIRECTIVE:
		return "directive " + abbreviate(text)
	case parser.FASMLexerSTRING:
		return "string " + abbreviate(text)
	}
	return "'" + text + "'"
}

// expectedNames lists, in the order messages give them, what the token
// types the parser may expect are called. MINUS starts a number.
var expectedNames = []struct {
	types []int
	name  string
}{
	{[]int{parser.FASMLexerREG}, "a register"},
	{[]int{parser.FASMLexerINT, parser.FASMLexerMINUS}, "a number"},
	{[]int{parser.FASMLexerIDENT}, "a name"},
	{[]int{parser.FASMLexerSTRING}, "a string"},
	{[]int{parser.FASMLexerHASH}, "a hash"},
	{[]int{parser.FASMLexerDIRECTIVE}, "a directive"},
	{[]int{parser.FASMLexerCOMMA}, "','"},
	{[]int{parser.FASMLexerCOLON}, "':'"},
	{[]int{antlr.TokenEOF}, "end of line"},
}

// describeExpected names the token types of set; where every kind of
// operand may come, it says "an operand".
func describeExpected(set *antlr.IntervalSet) string {
	if set == nil {
		return ""
	}
	has := func(typ int) bool {
		for _, iv := range set.GetIntervals() {
			if typ >= iv.Start && typ < iv.Stop {
				return true
			}
		}
		return false
	}
	var names []string
	for _, e := range expectedNames {
		for _, typ := range e.types {
			if has(typ) {
				names = append(names, e.name)
				break
			}
		}
	}
	if len(names) >= 4 && names[0] == "a register" && names[1] == "a number" && names[2] == "a name" && names[3] == "a string" {
		names = append([]string{"an operand"}, names[4:]...)
	}
	switch len(names) {
	case 0:
		return ""
	case 1:
		return names[0]
	}
	return fmt.Sprintf("%s or %s", strings.Join(names[:len(names)-1], ", "), names[len(names)-1])
}
