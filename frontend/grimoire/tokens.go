package grimoire

import (
	"github.com/antlr4-go/antlr/v4"

	"github.com/genesis-toolchain/genesis/frontend/grimoire/parser"
)

// tokenSource stands between the generated lexer and the parser and turns
// the line structure of a spell into the NEWLINE, INDENT and DEDENT tokens
// of the grammar (parser/Grimoire.g4 states the contract). It tracks the
// brackets open at each point:
//
//   - directly inside ( or [, a line break is dropped, so an argument list
//     may span lines;
//   - directly inside {, a line break is a separator (NEWLINE) and
//     indentation means nothing: the brace syntax, whose spells are one
//     braced block, and object literals written over several lines;
//   - outside all brackets, a line deeper than the block it is in opens a
//     block (INDENT), a shallower one closes blocks (one DEDENT each, then
//     NEWLINE), one at the same depth ends a statement (NEWLINE).
//
// Indentation is measured in columns, a tab counting 2 (the
// specification's "tabs are converted to 2 spaces"); a block may be
// indented by any amount, but a dedent must return to the depth of an
// enclosing block. A line break inside a token (a string or an advisory
// prompt spanning lines) is part of the token and never seen here, so
// indentation inside a multi-line string means nothing.
//
// Separators are normalized so that the grammar never needs optional
// ones: no NEWLINE first, last, twice in a row, after '{', ',' or INDENT,
// or before '}'.
type tokenSource struct {
	*parser.GrimoireLexer // the rest of antlr.TokenSource

	input antlr.CharStream
	// indentError reports an inconsistent dedent at a token.
	indentError func(t antlr.Token, msg string)

	brackets []int // the token types of the open brackets, innermost last
	indents  []int // the depths of the open blocks; indents[0] is 0
	queue    []antlr.Token
	// lineBreak is the first of the line breaks since the last token
	// handed out, or nil; lineStart is set with it (and at the start of
	// the file) when the next token starts a line outside brackets.
	lineBreak antlr.Token
	lineStart bool
	last      int // the type of the last token queued; 0 before the first
}

func newTokenSource(lexer *parser.GrimoireLexer, input antlr.CharStream, indentError func(antlr.Token, string)) *tokenSource {
	return &tokenSource{
		GrimoireLexer: lexer,
		input:         input,
		indentError:   indentError,
		indents:       []int{0},
		lineStart:     true,
	}
}

// NextToken returns the next token for the parser.
func (s *tokenSource) NextToken() antlr.Token {
	for len(s.queue) == 0 {
		s.fill()
	}
	t := s.queue[0]
	s.queue = s.queue[1:]
	return t
}

// fill reads the next token from the lexer and queues what it means,
// which may be nothing (a line break inside parentheses).
func (s *tokenSource) fill() {
	t := s.GrimoireLexer.NextToken()
	switch t.GetTokenType() {
	case parser.GrimoireLexerNEWLINE:
		switch s.innermost() {
		case parser.GrimoireLexerLPAREN, parser.GrimoireLexerLBRACK:
			return
		}
		if s.lineBreak == nil {
			s.lineBreak = t
		}
		if len(s.brackets) == 0 {
			s.lineStart = true
		}
		return
	case antlr.TokenEOF:
		// The last line break is dropped; the blocks still open close.
		for len(s.indents) > 1 {
			s.indents = s.indents[:len(s.indents)-1]
			s.push(s.synthetic(parser.GrimoireParserDEDENT, "<dedent>", t))
		}
		s.push(t)
		return
	}
	if s.lineStart && len(s.brackets) == 0 {
		s.indentLine(t)
	} else if s.lineBreak != nil {
		s.separate(t)
	}
	s.lineBreak, s.lineStart = nil, false
	switch typ := t.GetTokenType(); typ {
	case parser.GrimoireLexerLPAREN, parser.GrimoireLexerLBRACK, parser.GrimoireLexerLBRACE:
		s.brackets = append(s.brackets, typ)
	case parser.GrimoireLexerRPAREN, parser.GrimoireLexerRBRACK, parser.GrimoireLexerRBRACE:
		s.close(typ)
	}
	s.push(t)
}

// indentLine queues what the indentation of t's line means, t being the
// first token of a line outside brackets: INDENT, or DEDENTs and NEWLINE,
// or NEWLINE.
func (s *tokenSource) indentLine(t antlr.Token) {
	depth := s.depth(t)
	top := s.indents[len(s.indents)-1]
	switch {
	case depth > top:
		s.indents = append(s.indents, depth)
		s.push(s.synthetic(parser.GrimoireParserINDENT, "<indent>", t))
		return
	case depth < top:
		for len(s.indents) > 1 && depth < s.indents[len(s.indents)-1] {
			s.indents = s.indents[:len(s.indents)-1]
			s.push(s.synthetic(parser.GrimoireParserDEDENT, "<dedent>", t))
		}
		if depth != s.indents[len(s.indents)-1] {
			// Python's "unindent does not match any outer indentation
			// level". The line is taken to be in the block it returned
			// to, so that the rest of the file parses.
			s.indentError(t, "this line is less indented than the block it ends, but more than the block it returns to")
		}
	}
	s.separate(t)
}

// separate queues a NEWLINE before t, unless the normalization drops it.
func (s *tokenSource) separate(t antlr.Token) {
	switch s.last {
	case 0, parser.GrimoireLexerNEWLINE, parser.GrimoireParserINDENT, parser.GrimoireLexerLBRACE, parser.GrimoireLexerCOMMA:
		return
	}
	switch t.GetTokenType() {
	case parser.GrimoireLexerRBRACE, antlr.TokenEOF:
		return
	}
	nl := s.lineBreak
	if nl == nil {
		// A dedent at the start of the file's first line cannot happen;
		// every other line start follows a line break.
		nl = s.synthetic(parser.GrimoireLexerNEWLINE, "\n", t)
	}
	s.push(nl)
}

// close pops the bracket typ closes. A closer that matches no open
// bracket changes nothing (the parser reports it); one that matches a
// bracket further out closes the ones inside too.
func (s *tokenSource) close(typ int) {
	open := parser.GrimoireLexerLPAREN
	switch typ {
	case parser.GrimoireLexerRBRACK:
		open = parser.GrimoireLexerLBRACK
	case parser.GrimoireLexerRBRACE:
		open = parser.GrimoireLexerLBRACE
	}
	for i := len(s.brackets) - 1; i >= 0; i-- {
		if s.brackets[i] == open {
			s.brackets = s.brackets[:i]
			return
		}
	}
}

// innermost is the type of the innermost open bracket, 0 if none.
func (s *tokenSource) innermost() int {
	if len(s.brackets) == 0 {
		return 0
	}
	return s.brackets[len(s.brackets)-1]
}

// depth is the indentation of the line t starts: its leading blanks, in
// columns, a tab counting 2.
func (s *tokenSource) depth(t antlr.Token) int {
	start := t.GetStart() - t.GetColumn()
	if t.GetColumn() == 0 || start < 0 {
		return 0
	}
	depth := 0
	for _, r := range s.input.GetTextFromInterval(antlr.NewInterval(start, t.GetStart()-1)) {
		switch r {
		case ' ':
			depth++
		case '\t':
			depth += 2
		}
	}
	return depth
}

func (s *tokenSource) push(t antlr.Token) {
	s.queue = append(s.queue, t)
	s.last = t.GetTokenType()
}

// synthetic makes a token of type typ at the position of at.
func (s *tokenSource) synthetic(typ int, text string, at antlr.Token) antlr.Token {
	return antlr.CommonTokenFactoryDEFAULT.Create(at.GetSource(), typ, text, antlr.TokenDefaultChannel,
		at.GetStart(), at.GetStart()-1, at.GetLine(), at.GetColumn())
}
