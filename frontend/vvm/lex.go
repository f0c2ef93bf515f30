package vvm

import (
	"strings"

	"github.com/antlr4-go/antlr/v4"

	"github.com/genesis-toolchain/genesis/diag"
	"github.com/genesis-toolchain/genesis/frontend/vvm/parser"
)

// The deepest nesting a file may have: of brackets, and of blocks
// (Python's limits), and of an expression (maxDepth, in levels: each
// bracket, `not`, lambda, operator of a chain and postfix is one). The
// token source bounds what the parser recurses on (brackets, blocks,
// runs of `not` and `=>`), the builder what the tree holds: every later
// phase recurses on the tree, so this keeps them all within the stack
// and in time linear in the input (docs/vvm.md, Limits).
const (
	maxBrackets = 200
	maxBlocks   = 100
	maxDepth    = 1000
)

// tokenSource sits between the generated lexer and the parser and gives
// the layout of a VVM file the shape of tokens, as Python's tokenizer
// does (spec.md §0.4):
//
//   - NEWLINE ends a logical line. A line break inside brackets ((), [],
//     {}) does not, nor does one on a blank or comment-only line, and
//     neither makes a token. A file that does not end with a line break
//     gets a NEWLINE before its end.
//   - INDENT opens a block: the first token of a logical line is further
//     right than the block it is in. DEDENT closes one, once per block
//     closed, before the first token of the line; at the end of the file
//     every open block is closed. A line that dedents to a column no
//     enclosing block has is inconsistent (E002).
//   - String and template literals are single tokens, so a multi-line
//     one, even at column 0, takes no part in the layout.
//
// It also reports what the lexer leaves to it: a tab in indentation
// (E002), an unterminated string or template (E003, E004), a character
// no token starts with (E001), and brackets never closed. Hidden tokens
// (blanks, comments) and bad characters are dropped here: the parser
// never needs them. Nesting is bounded: brackets and blocks as in Python
// (maxBrackets, maxBlocks), and the brackets, `not`s and `=>`s the
// parser recurses on together (maxDepth): deeper, the file ends there,
// with an error, which keeps the parser within its stack and its time
// linear in the size of any input.
type tokenSource struct {
	*parser.VVMLexer
	r    *reporter
	file string

	queue     []antlr.Token
	indents   []int         // columns of the open blocks, from 0
	brackets  []antlr.Token // the open brackets, innermost last
	prefixes  []int         // per open bracket (and the line, first): the `not`s and `=>`s still open in it
	depth     int           // open brackets plus every open `not` and `=>`: how deep the parser recurses
	lineStart bool          // the next token starts a logical line
	tab       diag.Pos      // a tab in the blanks that start the line; Line 0 if none
	done      bool          // the lexer reached the end (or tooDeep ended the input)

	deep bool // tooDeep ended the input at an expression too deep

	// runaway is the first token after which every syntax error of the
	// parser is a consequence of a lexical one: a bracket never closed,
	// or a literal that runs to the end of the input. nil if none.
	runaway antlr.Token
}

func newTokenSource(lexer *parser.VVMLexer, r *reporter, file string) *tokenSource {
	return &tokenSource{VVMLexer: lexer, r: r, file: file, indents: []int{0}, prefixes: []int{0}, lineStart: true}
}

// NextToken returns the next token for the parser.
func (s *tokenSource) NextToken() antlr.Token {
	for len(s.queue) == 0 {
		s.fill()
	}
	t := s.queue[0]
	s.queue = s.queue[1:]
	if t.GetTokenType() == antlr.TokenEOF {
		// The stream may ask again after the end: give EOF again.
		s.queue = append(s.queue, t)
	}
	return t
}

// fill reads tokens from the lexer until it has queued at least one for
// the parser.
func (s *tokenSource) fill() {
	if s.done {
		return
	}
	t := s.VVMLexer.NextToken()
	switch t.GetTokenType() {
	case parser.VVMLexerWS:
		// A tab is reported only if a token follows on its line: it is
		// then indentation.
		if s.lineStart && t.GetColumn() == 0 {
			if i := strings.IndexByte(t.GetText(), '\t'); i >= 0 {
				s.tab = s.pos(t.GetLine(), i)
			}
		}
	case parser.VVMLexerCOMMENT:
	case parser.VVMLexerBAD_CHAR:
		s.r.syntaxErrorf(s.tokPos(t), CodeSyntax, "unexpected character %s", quoteRune(t.GetText()))
	case parser.VVMLexerNEWLINE:
		s.tab = diag.Pos{}
		if len(s.brackets) == 0 && !s.lineStart {
			s.lineStart = true
			s.queue = append(s.queue, t)
			s.prefix(t)
		}
	case antlr.TokenEOF:
		s.done = true
		for _, b := range s.brackets {
			s.r.syntaxErrorf(s.tokPos(b), CodeSyntax, "%s is never closed", describeToken(b))
		}
		if len(s.brackets) > 0 {
			s.setRunaway(s.brackets[0])
		}
		if !s.lineStart {
			s.queue = append(s.queue, s.layoutToken(parser.VVMParserNEWLINE, t))
		}
		for len(s.indents) > 1 {
			s.indents = s.indents[:len(s.indents)-1]
			s.queue = append(s.queue, s.layoutToken(parser.VVMParserDEDENT, t))
		}
		s.queue = append(s.queue, t)
	default:
		if s.lineStart {
			s.lineStart = false
			if s.tab.Line != 0 {
				s.r.syntaxErrorf(s.tab, CodeIndent, "tab in indentation: indent with spaces")
			}
			s.indent(t)
		}
		t = s.checkLiteral(t)
		s.bracket(t)
		s.prefix(t)
		s.queue = append(s.queue, t)
		if len(s.brackets) > maxBrackets || len(s.indents) > maxBlocks+1 || s.depth > maxDepth {
			s.tooDeep(t)
		}
	}
}

// tooDeep ends the input at t, nested too deeply: the parser sees the
// end of the file after it, and reports nothing about it.
func (s *tokenSource) tooDeep(t antlr.Token) {
	switch {
	case len(s.brackets) > maxBrackets:
		s.r.syntaxErrorf(s.tokPos(t), CodeSyntax, "brackets nested too deeply (the limits are %d brackets and %d blocks)", maxBrackets, maxBlocks)
	case len(s.indents) > maxBlocks+1:
		s.r.syntaxErrorf(s.tokPos(t), CodeSyntax, "blocks nested too deeply (the limits are %d brackets and %d blocks)", maxBrackets, maxBlocks)
	default:
		s.deep = true
		s.r.syntaxErrorf(s.tokPos(t), CodeSyntax, "expression nested too deeply: more than %d levels of brackets, not, lambdas, operators and postfixes", maxDepth)
	}
	s.setRunaway(t)
	s.brackets, s.prefixes, s.depth = nil, []int{0}, 0
	s.done = true
	s.queue = append(s.queue, s.layoutToken(parser.VVMParserNEWLINE, t))
	for len(s.indents) > 1 {
		s.indents = s.indents[:len(s.indents)-1]
		s.queue = append(s.queue, s.layoutToken(parser.VVMParserDEDENT, t))
	}
	eof := antlr.CommonTokenFactoryDEFAULT.Create(t.GetSource(), antlr.TokenEOF, "<EOF>", antlr.TokenDefaultChannel,
		t.GetStop()+1, t.GetStop(), t.GetLine(), t.GetColumn())
	s.queue = append(s.queue, eof)
}

// indent queues the INDENT or DEDENTs that t, the first token of a
// logical line, makes.
func (s *tokenSource) indent(t antlr.Token) {
	col := t.GetColumn()
	top := s.indents[len(s.indents)-1]
	switch {
	case col > top:
		s.indents = append(s.indents, col)
		s.queue = append(s.queue, s.layoutToken(parser.VVMParserINDENT, t))
	case col < top:
		for len(s.indents) > 1 && s.indents[len(s.indents)-1] > col {
			s.indents = s.indents[:len(s.indents)-1]
			s.queue = append(s.queue, s.layoutToken(parser.VVMParserDEDENT, t))
		}
		if s.indents[len(s.indents)-1] != col {
			// The line belongs to no block: take it as part of the block
			// it dedented to, and report it.
			s.r.syntaxErrorf(s.tokPos(t), CodeIndent, "unindent does not match any outer indentation level")
		}
	}
}

// bracket tracks bracket nesting, inside which line breaks do not count.
func (s *tokenSource) bracket(t antlr.Token) {
	switch t.GetTokenType() {
	case parser.VVMLexerLPAREN, parser.VVMLexerLBRACK, parser.VVMLexerLBRACE:
		s.brackets = append(s.brackets, t)
		s.prefixes = append(s.prefixes, 0)
		s.depth++
	case parser.VVMLexerRPAREN, parser.VVMLexerRBRACK, parser.VVMLexerRBRACE:
		// A closing bracket that closes nothing, or the wrong kind, is the
		// parser's to report.
		if n := len(s.brackets); n > 0 {
			s.brackets = s.brackets[:n-1]
			s.depth -= 1 + s.prefixes[n]
			s.prefixes = s.prefixes[:n]
		}
	}
}

// prefix tracks the `not`s and `=>`s whose operand or body t may still
// be in: the parser recurses once for each (notExpr : NOT notExpr, expr :
// lambdaParams ARROW expr). One ends, at the latest, with an `and` or
// `or`, a comma, a colon, an `=`, the logical line or its bracket, so
// counting them from there over-counts at worst, and never misses one.
func (s *tokenSource) prefix(t antlr.Token) {
	top := len(s.prefixes) - 1
	switch t.GetTokenType() {
	case parser.VVMLexerNOT, parser.VVMLexerARROW:
		s.prefixes[top]++
		s.depth++
	case parser.VVMLexerAND, parser.VVMLexerOR, parser.VVMLexerCOMMA, parser.VVMLexerCOLON,
		parser.VVMLexerASSIGN, parser.VVMLexerNEWLINE:
		s.depth -= s.prefixes[top]
		s.prefixes[top] = 0
	}
}

// checkLiteral reports an unterminated string or template, and returns
// the token for the parser: an UNTERMINATED_STRING becomes a STRING, so
// that the parser reports nothing more about it.
func (s *tokenSource) checkLiteral(t antlr.Token) antlr.Token {
	text := t.GetText()
	switch t.GetTokenType() {
	case parser.VVMLexerUNTERMINATED_STRING:
		s.r.syntaxErrorf(s.tokPos(t), CodeUnterminatedStr, "unterminated string literal: it needs a closing \" on the same line (use \"\"\"…\"\"\" for text over several lines)")
		return antlr.CommonTokenFactoryDEFAULT.Create(t.GetSource(), parser.VVMLexerSTRING, text, t.GetChannel(),
			t.GetStart(), t.GetStop(), t.GetLine(), t.GetColumn())
	case parser.VVMLexerSTRING:
		if strings.HasPrefix(text, `"""`) && (len(text) < 6 || !strings.HasSuffix(text, `"""`)) {
			s.r.syntaxErrorf(s.tokPos(t), CodeUnterminatedStr, `unterminated string literal: no closing """`)
			s.setRunaway(t)
		}
	case parser.VVMLexerTEMPLATE:
		if !templateClosed(text) {
			s.r.syntaxErrorf(s.tokPos(t), CodeUnterminatedTmpl, "unterminated template literal: no closing backtick")
			s.setRunaway(t)
		}
	}
	return t
}

// setRunaway records t as the runaway token, unless there is an earlier
// one.
func (s *tokenSource) setRunaway(t antlr.Token) {
	if s.runaway == nil || t.GetStart() < s.runaway.GetStart() {
		s.runaway = t
	}
}

// templateClosed reports whether a TEMPLATE token's text ends with its
// closing backtick: it does unless the token ran into the end of the
// input, where it ends with an escaped backtick, backslashes or neither.
func templateClosed(text string) bool {
	if len(text) < 2 || text[len(text)-1] != '`' {
		return false
	}
	// A backtick after backslashes is an escaped one.
	return text[len(text)-2] != '\\'
}

// layoutToken makes a NEWLINE, INDENT or DEDENT token at the position
// of at, empty.
func (s *tokenSource) layoutToken(typ int, at antlr.Token) antlr.Token {
	return antlr.CommonTokenFactoryDEFAULT.Create(at.GetSource(), typ, layoutText[typ], antlr.TokenDefaultChannel,
		at.GetStart(), at.GetStart()-1, at.GetLine(), at.GetColumn())
}

// layoutText is the text of a layout token, for messages and debugging.
var layoutText = map[int]string{
	parser.VVMParserNEWLINE: "<NEWLINE>",
	parser.VVMParserINDENT:  "<INDENT>",
	parser.VVMParserDEDENT:  "<DEDENT>",
}

func (s *tokenSource) pos(line, col0 int) diag.Pos {
	return diag.Pos{File: s.file, Line: line, Col: col0 + 1}
}

func (s *tokenSource) tokPos(t antlr.Token) diag.Pos {
	return s.pos(t.GetLine(), t.GetColumn())
}
