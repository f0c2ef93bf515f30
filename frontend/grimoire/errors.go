package grimoire

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/antlr4-go/antlr/v4"

	"github.com/genesis-toolchain/genesis/diag"
	"github.com/genesis-toolchain/genesis/frontend/grimoire/parser"
	"github.com/genesis-toolchain/genesis/frontend/source"
)

// Syntax errors: ANTLR reports them to the builder, which words them for
// people: "unexpected end of line, expected ':'" rather than ANTLR's
// "mismatched input '\n' expecting ':'".

// SyntaxError reports a lexer or parser error. Only the first error of a
// line is reported: the ones after it on the line are most often its
// consequences. So is, after an earlier error, a block's end where the
// file should end: error recovery left the spell early.
func (b *builder) SyntaxError(rec antlr.Recognizer, sym any, line, col int, msg string, ex antlr.RecognitionException) {
	pos, code, m := b.syntaxMessage(rec, sym, diag.Pos{File: b.file, Line: line, Col: col + 1}, msg)
	if t, ok := sym.(antlr.Token); ok && b.syntaxErrors > 0 && t.GetTokenType() == parser.GrimoireParserDEDENT {
		if p, ok := rec.(antlr.Parser); ok {
			if expected := source.Tokens(p.GetExpectedTokens()); len(expected) == 1 && expected[antlr.TokenEOF] {
				return
			}
		}
	}
	if b.errLines[pos.Line] {
		return
	}
	b.errLines[pos.Line] = true
	b.syntaxErrors++
	b.reporter.errorf(pos, code, "%s", m)
}

// syntaxMessage words a syntax error: its position (moved to the end of
// the line where something is missing there), code and message.
func (b *builder) syntaxMessage(rec antlr.Recognizer, sym any, pos diag.Pos, msg string) (diag.Pos, string, string) {
	t, ok := sym.(antlr.Token)
	if !ok {
		// The lexer cannot fail (BAD_CHAR matches any character); keep
		// ANTLR's message if it ever does.
		return pos, CodeLexical, msg
	}
	if m, ok := lexicalError(t); ok {
		return pos, CodeLexical, m
	}
	var expected source.TokenSet
	var prev antlr.Token
	if p, ok := rec.(antlr.Parser); ok {
		expected = source.Tokens(p.GetExpectedTokens())
		prev = p.GetTokenStream().LT(-1)
	}
	switch typ := t.GetTokenType(); {
	case typ == parser.GrimoireParserINDENT && expected[parser.GrimoireLexerCOLON]:
		// `on manual` or `if x > 1` without its ':': the indented block
		// shows where it was missing.
		if prev != nil {
			pos = b.after(prev)
		}
		return pos, CodeSyntax, "expected ':' at the end of the line, before the indented block"
	case typ == parser.GrimoireParserINDENT:
		return pos, CodeIndent, "unexpected indentation: this line is indented deeper than the line before, which opens no block"
	case expected[parser.GrimoireParserINDENT] && (typ == parser.GrimoireLexerNEWLINE || typ == parser.GrimoireParserDEDENT || typ == antlr.TokenEOF):
		return pos, CodeIndent, "expected an indented block after ':'"
	}
	what := describeToken(t)
	switch t.GetTokenType() {
	case parser.GrimoireParserDEDENT, antlr.TokenEOF:
		// What is missing is missing at the end of the last line, not
		// where the next line (or the end of the file) starts.
		if prev != nil && prev.GetLine() < t.GetLine() {
			pos = b.after(prev)
			if t.GetTokenType() == parser.GrimoireParserDEDENT {
				what = "end of line"
			}
		}
	}
	m := "unexpected " + what
	if want := describeExpected(expected); want != "" {
		m += ", expected " + want
	}
	return pos, CodeSyntax, m + hint(prev, t, expected, rec)
}

// recovery is ANTLR's default error strategy but for where it resumes
// after an error. Like the default, it skips tokens up to one that can
// follow the rules being parsed; unlike it, it skips a nested block
// whole, an INDENT with its DEDENT or a '{' with its '}', so that the
// DEDENT or '}' closing an enclosing block still closes that block and
// the statements after the error are parsed (and their errors reported).
type recovery struct {
	*antlr.DefaultErrorStrategy
	lastIndex int // where the last recovery began
}

func newRecovery() *recovery {
	return &recovery{DefaultErrorStrategy: antlr.NewDefaultErrorStrategy(), lastIndex: -1}
}

func (r *recovery) Recover(p antlr.Parser, _ antlr.RecognitionException) {
	stream := p.GetTokenStream()
	if stream.Index() == r.lastIndex {
		// A second error where the last recovery began: skip a token, so
		// as not to loop (the default strategy does the same).
		p.Consume()
	}
	r.lastIndex = stream.Index()
	follow := source.Tokens(r.GetErrorRecoverySet(p))
	depth := 0
	for {
		t := stream.LA(1)
		if t == antlr.TokenEOF || depth == 0 && follow[t] {
			return
		}
		switch t {
		case parser.GrimoireParserINDENT, parser.GrimoireLexerLBRACE:
			depth++
		case parser.GrimoireParserDEDENT, parser.GrimoireLexerRBRACE:
			depth = max(depth-1, 0)
		}
		p.Consume()
	}
}

// after is the position just after t, a token on one line.
func (b *builder) after(t antlr.Token) diag.Pos {
	p := b.pos(t)
	if text := t.GetText(); !strings.ContainsAny(text, "\r\n") {
		p.Col += utf8.RuneCountInString(text)
	}
	return p
}

// hint is advice for the mistakes people bring from other languages:
// `=` to compare, `else if`, `||` and `&&`.
func hint(prev, t antlr.Token, expected source.TokenSet, rec antlr.Recognizer) string {
	var next antlr.Token
	if p, ok := rec.(antlr.Parser); ok {
		next = p.GetTokenStream().LT(2)
	}
	switch t.GetTokenType() {
	case parser.GrimoireLexerASSIGN:
		if !expected[parser.GrimoireLexerASSIGN] {
			return "; to compare, write =="
		}
	case parser.GrimoireLexerIF:
		if prev != nil && prev.GetTokenType() == parser.GrimoireLexerELSE {
			return "; else if is written elif"
		}
	case parser.GrimoireLexerPIPE:
		if next != nil && next.GetTokenType() == parser.GrimoireLexerPIPE ||
			prev != nil && prev.GetTokenType() == parser.GrimoireLexerPIPE {
			return "; the logical operators are and, or, not"
		}
	}
	return ""
}

// lexicalError words the error tokens of the lexer.
func lexicalError(t antlr.Token) (string, bool) {
	text := t.GetText()
	switch t.GetTokenType() {
	case parser.GrimoireLexerUNTERMINATED_STRING:
		return "unterminated string", true
	case parser.GrimoireLexerUNTERMINATED_ADVISORY:
		return "unterminated advisory prompt: ** without the closing **", true
	case parser.GrimoireLexerBAD_NUMBER:
		return fmt.Sprintf("malformed number %s: a unit goes after a space (50 bps, 1.5 USDC), and durations take one of s, m, h, d", abbreviate(text)), true
	case parser.GrimoireLexerBAD_CHAR:
		r, _ := utf8.DecodeRuneInString(text)
		switch r {
		case '&':
			return "unexpected character '&'; the logical operators are and, or, not", true
		case '!':
			return "unexpected character '!'; negation is not, and inequality !=", true
		case '@':
			return "unexpected character '@'; an adapter is @name", true
		}
		return fmt.Sprintf("unexpected character %q", r), true
	}
	return "", false
}

// describeToken names a token for a message.
func describeToken(t antlr.Token) string {
	text := t.GetText()
	switch typ := t.GetTokenType(); typ {
	case antlr.TokenEOF:
		return "end of file"
	case parser.GrimoireLexerNEWLINE:
		return "end of line"
	case parser.GrimoireParserINDENT:
		return "indentation"
	case parser.GrimoireParserDEDENT:
		return "end of block"
	case parser.GrimoireLexerNUMBER, parser.GrimoireLexerPERCENT_NUMBER, parser.GrimoireLexerDURATION, parser.GrimoireLexerHEX:
		return "number " + abbreviate(text)
	case parser.GrimoireLexerID:
		return "name " + abbreviate(text)
	case parser.GrimoireLexerSTRING:
		return "string " + abbreviate(text)
	case parser.GrimoireLexerADVISORY:
		return "advisory prompt " + abbreviate(text)
	case parser.GrimoireLexerVENUE_REF:
		return "adapter " + text
	default:
		if isKeyword(typ) {
			return "keyword " + text
		}
	}
	return "'" + text + "'"
}

// isKeyword reports whether typ is a keyword's token type: the keywords
// are the tokens from SPELL to FALSE, in the grammar's order.
func isKeyword(typ int) bool {
	return typ >= parser.GrimoireLexerSPELL && typ <= parser.GrimoireLexerFALSE
}

// abbreviate shortens a token's text for a message: its first line, at
// most 24 characters.
func abbreviate(s string) string {
	if i := strings.IndexAny(s, "\r\n"); i >= 0 {
		s = s[:i] + "…"
	}
	if utf8.RuneCountInString(s) > 24 {
		s = string([]rune(s)[:24]) + "…"
	}
	return s
}

// classes name sets of tokens: when a set expected holds a class's
// witness, the class is named once instead of its members.
var classes = []struct {
	name    string
	witness int
	members []int
}{
	{"a statement", parser.GrimoireLexerEMIT, []int{
		parser.GrimoireLexerIF, parser.GrimoireLexerFOR, parser.GrimoireLexerREPEAT, parser.GrimoireLexerLOOP,
		parser.GrimoireLexerTRY, parser.GrimoireLexerPARALLEL, parser.GrimoireLexerATOMIC, parser.GrimoireLexerEMIT,
		parser.GrimoireLexerHALT, parser.GrimoireLexerWAIT, parser.GrimoireLexerPASS, parser.GrimoireLexerDO,
	}},
	{"an expression", parser.GrimoireLexerNUMBER, []int{
		parser.GrimoireLexerNUMBER, parser.GrimoireLexerPERCENT_NUMBER, parser.GrimoireLexerDURATION,
		parser.GrimoireLexerHEX, parser.GrimoireLexerSTRING, parser.GrimoireLexerTRUE, parser.GrimoireLexerFALSE,
		parser.GrimoireLexerVENUE_REF, parser.GrimoireLexerADVISORY, parser.GrimoireLexerLBRACK,
		parser.GrimoireLexerLBRACE, parser.GrimoireLexerLPAREN, parser.GrimoireLexerMINUS,
		parser.GrimoireLexerPLUS, parser.GrimoireLexerNOT,
		// A name is an expression too: where one is expected, it is not
		// named again.
		parser.GrimoireLexerID, parser.GrimoireLexerMAX, parser.GrimoireLexerEVERY, parser.GrimoireLexerWHERE,
		parser.GrimoireLexerBY, parser.GrimoireLexerORDER, parser.GrimoireLexerBLOCK,
	}},
	{"a name", parser.GrimoireLexerID, []int{
		parser.GrimoireLexerID, parser.GrimoireLexerMAX, parser.GrimoireLexerEVERY, parser.GrimoireLexerWHERE,
		parser.GrimoireLexerBY, parser.GrimoireLexerORDER, parser.GrimoireLexerBLOCK,
	}},
}

// expectedNames are the tokens a message names, in the order it names
// them.
var expectedNames = []source.TokenName{
	{Type: parser.GrimoireLexerCOLON, Name: "':'"},
	{Type: parser.GrimoireLexerASSIGN, Name: "'='"},
	{Type: parser.GrimoireLexerLBRACE, Name: "'{'"},
	{Type: parser.GrimoireLexerRBRACE, Name: "'}'"},
	{Type: parser.GrimoireLexerLPAREN, Name: "'('"},
	{Type: parser.GrimoireLexerRPAREN, Name: "')'"},
	{Type: parser.GrimoireLexerRBRACK, Name: "']'"},
	{Type: parser.GrimoireLexerCOMMA, Name: "','"},
	{Type: parser.GrimoireLexerSTRING, Name: "a string"},
	{Type: parser.GrimoireLexerIN, Name: "in"},
	{Type: parser.GrimoireLexerUNTIL, Name: "until"},
	{Type: parser.GrimoireLexerSPELL, Name: "spell"},
	{Type: parser.GrimoireLexerNEWLINE, Name: "end of line"},
	{Type: parser.GrimoireParserINDENT, Name: "an indented block"},
	{Type: antlr.TokenEOF, Name: "end of file"},
}

// describeExpected names what the parser expected: at most five things,
// the classes first.
func describeExpected(set source.TokenSet) string {
	covered := source.TokenSet{}
	var names []string
	for _, c := range classes {
		if set[c.witness] && !covered[c.witness] {
			names = append(names, c.name)
			for _, m := range c.members {
				covered[m] = true
			}
		}
	}
	return source.Alternatives(append(names, set.Named(covered, expectedNames)...))
}
