package vvm

import (
	"errors"
	"fmt"
	"strings"

	"github.com/antlr4-go/antlr/v4"

	"github.com/genesis-toolchain/genesis/diag"
	"github.com/genesis-toolchain/genesis/frontend/source"
	"github.com/genesis-toolchain/genesis/frontend/vvm/parser"
)

// keywords are the reserved words of spec-newer.md §15.2.1 (spec.md's,
// and parallel), which the lexer makes tokens of (TestKeywords checks
// the two agree).
var keywords = map[string]bool{
	"import": true, "from": true, "as": true, "export": true, "agent": true, "def": true,
	"return": true, "match": true, "case": true, "choose": true, "by": true, "option": true,
	"constrain": true, "require": true, "with": true, "input": true, "if": true, "elif": true,
	"else": true, "while": true, "for": true, "in": true, "parallel": true, "try": true,
	"except": true, "finally": true, "raise": true, "pass": true, "break": true,
	"continue": true, "and": true, "or": true, "not": true, "it": true, "true": true,
	"false": true, "error": true,
}

// isKeyword reports whether s is a reserved word.
func isKeyword(s string) bool { return keywords[s] }

func isKeywordToken(typ int) bool {
	return typ >= parser.VVMLexerIMPORT && typ <= parser.VVMLexerERROR
}

// closest returns the word of known nearest to s, if near enough to be a
// likely typo, else "". known must be in a fixed order: of two words as
// near, the first wins.
func closest(s string, known []string) string {
	return diag.Closest(s, known)
}

// didYouMean is closest as the end of a message: " (did you mean x?)",
// or "".
func didYouMean(s string, known []string) string {
	if c := closest(s, known); c != "" {
		return fmt.Sprintf(" (did you mean %s?)", c)
	}
	return ""
}

// syntaxError is a syntax error of the parser, at token start (an offset
// in the input), waiting for flushSyntaxErrors.
type syntaxError struct {
	pos   diag.Pos
	code  string
	msg   string
	start int
}

// maxSyntaxErrors is how many errors the parser recovers from before it
// gives up on a file: recovering costs time, and past so many errors the
// reports say little more.
const maxSyntaxErrors = 50

// errTooMany is what SyntaxError panics with to stop the parser.
var errTooMany = errors.New("vvm: too many syntax errors")

// SyntaxError records a parser error (the lexer cannot fail: BAD_CHAR
// matches any character). After maxSyntaxErrors it stops the parse.
func (b *builder) SyntaxError(rec antlr.Recognizer, sym any, line, col int, msg string, ex antlr.RecognitionException) {
	pos := diag.Pos{File: b.file, Line: line, Col: col + 1}
	b.syntaxErrors++
	if b.syntaxErrors > maxSyntaxErrors {
		b.stoppedAt = pos
		panic(errTooMany)
	}
	t, ok := sym.(antlr.Token)
	if !ok {
		b.pending = append(b.pending, syntaxError{pos, CodeSyntax, msg, -1})
		return
	}
	if n := len(b.pending); n > 0 && b.pending[n-1].pos.Line == line && !isLayoutToken(t.GetTokenType()) {
		return // only the first error of a line is reported: spare describing the others
	}
	code, m, at := b.describeError(rec, t, ex)
	if at != nil {
		pos = b.pos(at)
	}
	if m != "" {
		b.pending = append(b.pending, syntaxError{pos, code, m, t.GetStart()})
	}
}

// flushSyntaxErrors reports the parser's errors, but those after the
// token source's runaway token, consequences of a lexical error already
// reported. Only the first error of a line is reported.
func (b *builder) flushSyntaxErrors(runaway antlr.Token) {
	for _, e := range b.pending {
		if runaway != nil && e.start >= runaway.GetStart() {
			continue
		}
		b.r.syntaxErrorf(e.pos, e.code, "%s", e.msg)
	}
	b.pending = nil
}

// describeError makes the message of a syntax error at token t, the
// one the parser failed at; "" when the error is not to be reported. at
// is the token the error is about when it is another than t.
func (b *builder) describeError(rec antlr.Recognizer, t antlr.Token, ex antlr.RecognitionException) (code, msg string, at antlr.Token) {
	p, ok := rec.(antlr.Parser)
	if !ok {
		return CodeSyntax, "unexpected " + describeToken(t), nil
	}
	var prev antlr.Token
	if i := t.GetTokenIndex(); i > 0 {
		prev = p.GetTokenStream().Get(i - 1)
	}
	switch t.GetTokenType() {
	case parser.VVMParserINDENT:
		b.strayIndents++
		if n := len(b.pending); n > 0 && prev != nil && b.pending[n-1].pos.Line >= prev.GetLine() {
			// The block of a statement the error before made the parser
			// drop: a consequence.
			return "", "", nil
		}
		return CodeIndent, "unexpected indent", nil
	case parser.VVMParserDEDENT:
		if b.strayIndents > 0 {
			// The end of a block opened by an unexpected indent.
			b.strayIndents--
			return "", "", nil
		}
		if len(b.pending) > 0 {
			// The end of a block after an error in it: a consequence.
			return "", "", nil
		}
		// A block ended where its statement needed more: the line before
		// is where something is missing.
		return CodeIndent, "unexpected end of the block: the statement before it is incomplete", nil
	}
	m := "unexpected " + describeToken(t)
	typ := t.GetTokenType()
	prevTyp := 0
	if prev != nil {
		prevTyp = prev.GetTokenType()
	}
	expected := source.Tokens(p.GetExpectedTokens())
	// The token is not what could stand there, even where a recovering
	// parser's set says so (`[1,, 2]`).
	delete(expected, typ)
	// After a failed prediction, the parser's set is the one where the
	// prediction started, before t: it does not say what could stand at
	// t.
	reliable := true
	if _, nva := ex.(*antlr.NoViableAltException); nva {
		if cur := p.GetCurrentToken(); cur != nil && cur.GetTokenIndex() < t.GetTokenIndex() {
			reliable = false
		}
	}
	switch {
	case len(expected) == 1 && expected[parser.VVMLexerASSIGN] && isKeywordToken(prevTyp):
		// A keyword read as the name of an assignment: it is out of place.
		return CodeSyntax, misplacedKeyword(prevTyp, typ), prev
	case prevTyp == parser.VVMLexerWITH && typ != parser.VVMLexerINPUT:
		return CodeSyntax, m + ", expected input: with input value:", nil
	case typ == parser.VVMLexerASSIGN && (prevTyp == parser.VVMLexerPLUS || prevTyp == parser.VVMLexerMINUS):
		return CodeSyntax, m + ": there is no augmented assignment; write x = x + …", nil
	case typ == parser.VVMLexerSTAR:
		return CodeSyntax, m + ": the arithmetic operators are + and -", nil
	case !reliable:
		return CodeSyntax, m, nil
	case len(expected) == 1 && expected[parser.VVMParserNEWLINE] && prevTyp == parser.VVMLexerCOLON:
		return CodeSyntax, m + ": a block starts on the next line after ':', indented", nil
	case expected[parser.VVMLexerLPAREN] && prevTyp == parser.VVMLexerTEMPLATE:
		return CodeSyntax, m + ", expected '(': an agent call ends with its arguments, @agent `…`() even when empty", nil
	case typ == parser.VVMLexerASSIGN && expected[parser.VVMParserNEWLINE]:
		return CodeSyntax, m + ": only a name can be assigned to (name = …)", nil
	case typ == parser.VVMLexerMINUS && expected[parser.VVMLexerNUMBER]:
		return CodeSyntax, m + ": there is no unary minus; write 0 - x", nil
	case isKeywordToken(typ) && expected[parser.VVMLexerIDENT] && !expected[parser.VVMLexerNUMBER]:
		return CodeSyntax, m + fmt.Sprintf(": %s is a reserved word, not a name", t.GetText()), nil
	}
	if want := describeExpected(expected); want != "" {
		m += ", expected " + want
	}
	return CodeSyntax, m, nil
}

// misplacedKeyword describes a statement that starts with keyword kw
// where that keyword cannot start one, followed by a token of type next.
func misplacedKeyword(kw, next int) string {
	switch kw {
	case parser.VVMLexerELSE:
		if next == parser.VVMLexerIF {
			return "else if is written elif"
		}
		return "else without an if before it, at the same indentation"
	case parser.VVMLexerELIF:
		return "elif without an if before it, at the same indentation"
	case parser.VVMLexerEXCEPT, parser.VVMLexerFINALLY:
		return "except and finally follow a try block, at the same indentation"
	case parser.VVMLexerCASE:
		return "case belongs in a match block"
	case parser.VVMLexerOPTION:
		return "option belongs in a choose block"
	case parser.VVMLexerREQUIRE:
		return "require belongs in a constrain block"
	}
	name := strings.Trim(parser.VVMLexerLexerStaticData.LiteralNames[kw], "'")
	return fmt.Sprintf("unexpected keyword %s here", name)
}

func isLayoutToken(typ int) bool {
	return typ == parser.VVMParserINDENT || typ == parser.VVMParserDEDENT
}

// describeToken names a token for a message.
func describeToken(t antlr.Token) string {
	text := t.GetText()
	switch typ := t.GetTokenType(); {
	case typ == antlr.TokenEOF:
		return "end of file"
	case typ == parser.VVMParserNEWLINE:
		return "end of line"
	case typ == parser.VVMLexerIDENT:
		return "name " + abbreviate(text)
	case typ == parser.VVMLexerNUMBER:
		return "number " + abbreviate(text)
	case typ == parser.VVMLexerSTRING:
		return "string " + abbreviate(strings.SplitN(text, "\n", 2)[0])
	case typ == parser.VVMLexerTEMPLATE:
		return "template " + abbreviate(strings.SplitN(text, "\n", 2)[0])
	case isKeywordToken(typ):
		return "keyword " + text
	}
	return "'" + text + "'"
}

// expectedNames lists, in the order messages give them, the tokens worth
// naming when the parser expected them. NUMBER stands for "an
// expression" (only an expression starts with one), IDENT for "a name".
var expectedNames = []source.TokenName{
	{Type: parser.VVMLexerNUMBER, Name: "an expression"},
	{Type: parser.VVMLexerIDENT, Name: "a name"},
	{Type: parser.VVMLexerSTRING, Name: "a string"},
	{Type: parser.VVMLexerTEMPLATE, Name: "a template `…`"},
	{Type: parser.VVMLexerCOLON, Name: "':'"},
	{Type: parser.VVMLexerASSIGN, Name: "'='"},
	{Type: parser.VVMLexerCOMMA, Name: "','"},
	{Type: parser.VVMLexerRPAREN, Name: "')'"},
	{Type: parser.VVMLexerRBRACK, Name: "']'"},
	{Type: parser.VVMLexerRBRACE, Name: "'}'"},
	{Type: parser.VVMLexerLPAREN, Name: "'('"},
	{Type: parser.VVMLexerIMPORT, Name: "import"},
	{Type: parser.VVMLexerAS, Name: "as"},
	{Type: parser.VVMLexerIN, Name: "in"},
	{Type: parser.VVMLexerBY, Name: "by"},
	{Type: parser.VVMLexerINPUT, Name: "input"},
	{Type: parser.VVMLexerCASE, Name: "case"},
	{Type: parser.VVMLexerOPTION, Name: "option"},
	{Type: parser.VVMLexerREQUIRE, Name: "require"},
	{Type: parser.VVMParserNEWLINE, Name: "end of line"},
	{Type: antlr.TokenEOF, Name: "end of file"},
}

// describeExpected names the useful tokens of set, at most five.
func describeExpected(set source.TokenSet) string {
	covered := source.TokenSet{}
	if set[parser.VVMLexerNUMBER] {
		// An expression covers every token that starts one.
		for _, typ := range []int{parser.VVMLexerIDENT, parser.VVMLexerSTRING, parser.VVMLexerLPAREN,
			parser.VVMLexerLBRACK, parser.VVMLexerLBRACE, parser.VVMLexerAT, parser.VVMLexerQUESTION} {
			covered[typ] = true
		}
	}
	if set[parser.VVMLexerIDENT] && set[parser.VVMLexerIMPORT] && set[parser.VVMLexerERROR] {
		// Where a name is expected, so is every keyword (rule name).
		for typ := parser.VVMLexerIMPORT; typ <= parser.VVMLexerERROR; typ++ {
			covered[typ] = true
		}
	}
	names := set.Named(covered, expectedNames)
	return source.Alternatives(names)
}
