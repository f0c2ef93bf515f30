package format

import (
	"bytes"
	"crypto/sha256"
	"strings"

	"github.com/antlr4-go/antlr/v4"

	"github.com/genesis-toolchain/genesis/diag"
	"github.com/genesis-toolchain/genesis/frontend/grimoire"
	"github.com/genesis-toolchain/genesis/frontend/grimoire/parser"
)

// Grimoire returns the canonical form of the Grimoire spell src, in
// whichever of the language's two syntaxes it is written (the
// indentation syntax or the brace syntax; a spell keeps its syntax).
// name is the file name diagnostics carry.
//
// The canonical form (docs/fmt.md, Grimoire) re-indents every line by two
// spaces a level, spaces the tokens of a line by fixed rules, strips
// trailing white space, writes line feeds and ends the file with exactly
// one. It never moves a token to another line, nor a comment: a line of
// the spell is the same line of the result, so positions keep their
// lines and only their columns change. Every comment is kept. The result
// is the same sequence of tokens, and formatting it again changes
// nothing.
//
// A spell that does not parse is not formatted: the error is the
// frontend's diagnostics (a diag.List, whose errors name file, line and
// column, for Render). The result is checked before it is returned: the
// spell it parses to must be the one src parses to; if it were not (a
// bug of this formatter), the error is a G999 diagnostic and src is left
// as it is. Grimoire never panics.
//
// Memory: the text of the spell, as runes, and the result, plus one
// parsed tree and its printed form at a time (the parse of src, then
// that of the result, each with the frontend's chunked parse of a large
// spell), so memory is linear in the spell: about 90 bytes a byte at
// the peak (docs/fmt.md, Grimoire, "Limits and cost").
func Grimoire(name string, src []byte) (out []byte, err error) {
	defer func() {
		if p := recover(); p != nil {
			out = nil
			err = spellInternalError(name, "internal error of the formatter: %v", p)
		}
	}()
	spell, diags := grimoire.ParseFile(name, src)
	if diags.HasErrors() {
		return nil, diags
	}
	want := spellTreeHash(spell)

	out = spellFormat(src)

	again, diags := grimoire.ParseFile(name, out)
	if diags.HasErrors() {
		first := diags[0]
		for _, d := range diags {
			if d.Severity == diag.Error {
				first = d
				break
			}
		}
		return nil, spellInternalError(name, "internal error of the formatter: the formatted spell does not parse (%s); the file is left unformatted", first.Error())
	}
	if spellTreeHash(again) != want {
		return nil, spellInternalError(name, "internal error of the formatter: the formatted spell would compile to another program; the file is left unformatted")
	}
	return out, nil
}

// spellTreeHash is the hash of a parsed spell's printed tree, which holds no
// positions and nothing of the syntax: two spells with the same hash are
// the same program.
func spellTreeHash(s *grimoire.Spell) [sha256.Size]byte {
	return sha256.Sum256([]byte(grimoire.Sprint(s)))
}

// spellInternalError is the G999 diagnostic of a bug of the formatter,
// at the start of the file.
func spellInternalError(name, format string, args ...any) error {
	var l diag.List
	l.Errorf(diag.Pos{File: name, Line: 1, Col: 1}, grimoire.CodeInternal, format, args...)
	return l
}

// spellIndentUnit is one level of indentation, the specification's two
// spaces.
const spellIndentUnit = "  "

// A spellTok is a token of a line: its type, as the lexer gives it, and
// its text, verbatim (a string or a prompt may span lines).
type spellTok struct {
	typ  int
	text string
	// glued is set when no white space precedes the token on its line.
	glued bool
}

// A spellLine is one physical line of the spell (with the lines a token
// spanning lines runs over): its tokens, its comment ("#…", without the
// white space that ends it, or ""), and the column its first token or
// its comment starts at, counted as the frontend's token source counts
// indentation (a tab is two columns).
type spellLine struct {
	toks    []spellTok
	comment string
	col     int
}

// A spellPending is a line without tokens, held until the next line with
// tokens says how deep a comment on it is indented.
type spellPending struct {
	comment string // "" for a blank line
	col     int
}

// A spellBracket is an open bracket: its token type, the level of the
// line it was opened on, and how many `?` wait for their `:` inside it.
type spellBracket struct {
	typ     int
	level   int
	ternary int
}

// grimoireFormatter holds the state of one formatting, line by line.
type grimoireFormatter struct {
	out bytes.Buffer

	// brackets are the brackets open, innermost last; indents the
	// columns of the indented blocks open in the source (indents[0] is
	// 0), as the frontend's token source follows them.
	brackets []spellBracket
	indents  []int
	// ternary counts the `?` outside all brackets waiting for their `:`.
	ternary int

	// pending are the lines without tokens since the last line with.
	pending []spellPending

	// The type of the last token written (0 before any), and what it
	// was: they decide the spacing of the next.
	prev          int
	prevStmtStart bool
	prevUnary     bool
	prevName      bool
	// prevHyphen is set when the last token was a hyphen (see spellHyphen).
	prevHyphen bool
	// assignStmt is set when the last `=` written was an assignment.
	assignStmt bool
	// level is the level of the line being written.
	level int
}

// spellFormat is the formatting proper, which Grimoire checks; a
// variable so that a test can break it.
var spellFormat = formatSpell

// formatSpell formats src, which parses: it reads the tokens of the
// frontend's lexer a line at a time and writes each line as it ends.
func formatSpell(src []byte) []byte {
	input := antlr.NewInputStream(string(src))
	lexer := parser.NewGrimoireLexer(input)
	lexer.RemoveErrorListeners()
	f := &grimoireFormatter{indents: []int{0}}
	f.out.Grow(len(src) + len(src)/8)

	next := 0 // the index of the first character not yet read
	var line spellLine
	started := false // the line has a token or a comment
	for {
		t := lexer.NextToken()
		typ := t.GetTokenType()
		gap := ""
		if t.GetStart() > next {
			gap = input.GetText(next, t.GetStart()-1)
		}
		if typ == parser.GrimoireLexerNEWLINE || typ == antlr.TokenEOF {
			// The gap before a line break holds the line's comment, if
			// it has one: a comment runs to the end of its line.
			if i := strings.IndexByte(gap, '#'); i >= 0 {
				if !started {
					line.col = spellColumn(gap[:i])
				}
				line.comment = strings.TrimRight(gap[i:], " \t\f\r\v")
				started = true
			}
			f.line(line, started)
			if typ == antlr.TokenEOF {
				break
			}
			line, started = spellLine{}, false
			next = t.GetStop() + 1
			continue
		}
		if !started {
			line.col = spellColumn(gap)
			started = true
		}
		line.toks = append(line.toks, spellTok{typ: typ, text: t.GetText(), glued: gap == "" && len(line.toks) > 0})
		next = t.GetStop() + 1
	}
	f.end()
	return f.out.Bytes()
}

// spellColumn measures leading white space as the frontend's token
// source does: a space is one column, a tab two, anything else none.
func spellColumn(ws string) int {
	n := 0
	for _, r := range ws {
		switch r {
		case ' ':
			n++
		case '\t':
			n += 2
		}
	}
	return n
}

// line takes one line of the spell; started is false for a blank one.
func (f *grimoireFormatter) line(l spellLine, started bool) {
	if len(l.toks) == 0 {
		if started {
			f.pending = append(f.pending, spellPending{comment: l.comment, col: l.col})
		} else {
			f.pending = append(f.pending, spellPending{})
		}
		return
	}
	hi, indents, inBrackets := f.innerLevel(), f.indents, len(f.brackets) > 0
	level := f.levelOf(l)
	f.flush(level, hi, l.col, indents, inBrackets)
	f.indent(level)
	f.level = level
	for i, t := range l.toks {
		f.token(t, i == 0, spellHyphen(l.toks, i))
	}
	if l.comment != "" {
		f.out.WriteByte(' ')
		f.out.WriteString(l.comment)
	}
	f.out.WriteByte('\n')
}

// end writes the comments after the last token, dropping the blank lines
// that end the file.
func (f *grimoireFormatter) end() {
	for len(f.pending) > 0 && f.pending[len(f.pending)-1].comment == "" {
		f.pending = f.pending[:len(f.pending)-1]
	}
	f.flush(0, f.innerLevel(), 0, f.indents, len(f.brackets) > 0)
}

// innerLevel is the level a line that closes nothing would have at this
// point: inside the innermost bracket, or in the innermost indented
// block.
func (f *grimoireFormatter) innerLevel() int {
	if n := len(f.brackets); n > 0 {
		return f.brackets[n-1].level + 1
	}
	return len(f.indents) - 1
}

// levelOf is the level of indentation of a line with tokens. Outside all
// brackets it is the depth of the indented blocks the line is in, which
// the line's column opens or closes exactly as the frontend's token
// source does (the spell parsed, so its indentation is consistent).
// Inside brackets, where line breaks or indentation mean nothing to the
// parser, it is one more than the level of the line that opened the
// innermost bracket, or, for a line that starts by closing a bracket,
// that bracket's opening line's level.
func (f *grimoireFormatter) levelOf(l spellLine) int {
	if len(f.brackets) == 0 {
		top := f.indents[len(f.indents)-1]
		switch {
		case l.col > top:
			f.indents = append(f.indents, l.col)
		case l.col < top:
			for len(f.indents) > 1 && l.col < f.indents[len(f.indents)-1] {
				f.indents = f.indents[:len(f.indents)-1]
			}
		}
		return len(f.indents) - 1
	}
	if open := spellOpener(l.toks[0].typ); open != 0 {
		for i := len(f.brackets) - 1; i >= 0; i-- {
			if f.brackets[i].typ == open {
				return f.brackets[i].level
			}
		}
	}
	return f.brackets[len(f.brackets)-1].level + 1
}

// flush writes the lines without tokens held before a line of the given
// level and source column (col). A comment goes with the line after it,
// unless that line is less indented than the code before the comment,
// which was at level hi: the line closes brackets or ends indented
// blocks. A comment before a closing bracket is inside the bracket, and
// indented as its contents (level hi). Before the end of indented
// blocks, a comment written deeper than the line after it stays with
// the code before it, in the deepest block that its column reaches, by
// the columns the blocks had in the source (indents, those open before
// the line). The rule reads only levels and the order of columns, so a
// formatted spell keeps its comments where they are.
func (f *grimoireFormatter) flush(level, hi, col int, indents []int, inBrackets bool) {
	for _, p := range f.pending {
		if p.comment == "" {
			f.out.WriteByte('\n')
			continue
		}
		at := level
		switch {
		case level >= hi:
		case inBrackets:
			at = hi
		case p.col > col:
			at = hi
			for at > level && at < len(indents) && indents[at] > p.col {
				at--
			}
		}
		f.indent(at)
		f.out.WriteString(p.comment)
		f.out.WriteByte('\n')
	}
	f.pending = f.pending[:0]
}

func (f *grimoireFormatter) indent(level int) {
	for range level {
		f.out.WriteString(spellIndentUnit)
	}
}

// spellHyphen reports whether toks[i] is a `-` written between two names
// without spaces, as in the ids of the skills, allowed_tools and mcp
// lists (`web-search`), which the language reads back as the text they
// were written as: such a `-` stays unspaced (docs/fmt.md, Grimoire).
func spellHyphen(toks []spellTok, i int) bool {
	if toks[i].typ != parser.GrimoireLexerMINUS || i == 0 || i+1 >= len(toks) || !toks[i].glued || !toks[i+1].glued {
		return false
	}
	return spellName(toks[i-1].typ) && spellName(toks[i+1].typ)
}

// spellName reports whether a token of type typ is a name: an
// identifier or a contextual keyword.
func spellName(typ int) bool {
	switch typ {
	case parser.GrimoireLexerID, parser.GrimoireLexerMAX, parser.GrimoireLexerEVERY, parser.GrimoireLexerWHERE,
		parser.GrimoireLexerBY, parser.GrimoireLexerORDER, parser.GrimoireLexerBLOCK:
		return true
	}
	return false
}

// spellOpener is the opening bracket of a closing bracket's type, or 0.
func spellOpener(typ int) int {
	switch typ {
	case parser.GrimoireLexerRPAREN:
		return parser.GrimoireLexerLPAREN
	case parser.GrimoireLexerRBRACK:
		return parser.GrimoireLexerLBRACK
	case parser.GrimoireLexerRBRACE:
		return parser.GrimoireLexerLBRACE
	}
	return 0
}

// token writes one token, and the space before it that the spacing rules
// (docs/fmt.md, Grimoire) give; first is set for the first token of a
// line, written after the indentation.
func (f *grimoireFormatter) token(t spellTok, first, joined bool) {
	typ := t.typ
	innermost := 0
	if n := len(f.brackets); n > 0 {
		innermost = f.brackets[n-1].typ
	}
	// A statement starts a line outside brackets or directly inside
	// braces, or follows an opening brace: its `=` is an assignment,
	// spaced, unlike the `=` of options and named arguments.
	stmtStart := (first && (innermost == 0 || innermost == parser.GrimoireLexerLBRACE)) || f.prev == parser.GrimoireLexerLBRACE
	if first && (innermost == 0 || innermost == parser.GrimoireLexerLBRACE) {
		// A line break there ends the expression: no `?` waits any more.
		f.setTernary(0)
	}
	unary := (typ == parser.GrimoireLexerMINUS || typ == parser.GrimoireLexerPLUS) && !f.operandEnds()
	ternaryColon := false
	switch typ {
	case parser.GrimoireLexerQUESTION:
		f.setTernary(f.ternaryCount() + 1)
	case parser.GrimoireLexerCOLON:
		if n := f.ternaryCount(); n > 0 {
			ternaryColon = true
			f.setTernary(n - 1)
		}
	case parser.GrimoireLexerCOMMA:
		f.setTernary(0)
	}
	if !first && !joined && !f.prevHyphen && f.spaced(typ, ternaryColon) {
		f.out.WriteByte(' ')
	}
	f.out.WriteString(t.text)

	switch typ {
	case parser.GrimoireLexerLPAREN, parser.GrimoireLexerLBRACK, parser.GrimoireLexerLBRACE:
		f.brackets = append(f.brackets, spellBracket{typ: typ, level: f.level})
	case parser.GrimoireLexerRPAREN, parser.GrimoireLexerRBRACK, parser.GrimoireLexerRBRACE:
		open := spellOpener(typ)
		for i := len(f.brackets) - 1; i >= 0; i-- {
			if f.brackets[i].typ == open {
				f.brackets = f.brackets[:i]
				break
			}
		}
	}
	// A name after `.` is a name whatever its word (`x.if`), and so is
	// a contextual keyword used as one (`max(a, b)`).
	name := typ == parser.GrimoireLexerID || typ == parser.GrimoireLexerMAX || typ == parser.GrimoireLexerBLOCK ||
		(f.prev == parser.GrimoireLexerDOT && typ != parser.GrimoireLexerDOT)
	if typ == parser.GrimoireLexerASSIGN {
		f.assignStmt = f.prevStmtStart
	}
	f.prev = typ
	f.prevStmtStart, f.prevUnary, f.prevName, f.prevHyphen = stmtStart, unary, name, joined
}

func (f *grimoireFormatter) ternaryCount() int {
	if n := len(f.brackets); n > 0 {
		return f.brackets[n-1].ternary
	}
	return f.ternary
}

func (f *grimoireFormatter) setTernary(v int) {
	if n := len(f.brackets); n > 0 {
		f.brackets[n-1].ternary = v
		return
	}
	f.ternary = v
}

// operandEnds reports whether the last token written ends an operand, so
// that a `-` or `+` after it is binary.
func (f *grimoireFormatter) operandEnds() bool {
	if f.prevName {
		return true
	}
	switch f.prev {
	case parser.GrimoireLexerNUMBER, parser.GrimoireLexerPERCENT_NUMBER, parser.GrimoireLexerDURATION,
		parser.GrimoireLexerHEX, parser.GrimoireLexerSTRING, parser.GrimoireLexerTRUE, parser.GrimoireLexerFALSE,
		parser.GrimoireLexerVENUE_REF, parser.GrimoireLexerADVISORY,
		parser.GrimoireLexerRPAREN, parser.GrimoireLexerRBRACK, parser.GrimoireLexerRBRACE:
		return true
	}
	return false
}

// spaced reports whether a space separates the last token written from
// the next one, of type typ, on the same line. Where it says none, the
// two tokens never lex as other tokens when joined (a name and `(`, `-`
// and an operand, …); every other pair is spaced, which keeps `17 % 5`
// from becoming the percentage `17%`, `* *` from becoming a prompt's
// `**`, and `50 bps` a unit amount.
func (f *grimoireFormatter) spaced(typ int, ternaryColon bool) bool {
	const (
		lparen = parser.GrimoireLexerLPAREN
		rparen = parser.GrimoireLexerRPAREN
		lbrack = parser.GrimoireLexerLBRACK
		rbrack = parser.GrimoireLexerRBRACK
		lbrace = parser.GrimoireLexerLBRACE
		rbrace = parser.GrimoireLexerRBRACE
		assign = parser.GrimoireLexerASSIGN
		dot    = parser.GrimoireLexerDOT
	)
	switch {
	case f.prev == lparen || f.prev == lbrack:
		return false
	case f.prev == lbrace:
		return typ != rbrace // `{}`, but `{ a: 1 }`
	case typ == rparen || typ == rbrack || typ == parser.GrimoireLexerCOMMA:
		return false
	case typ == rbrace:
		return true
	case typ == dot || f.prev == dot:
		return false
	case typ == parser.GrimoireLexerCOLON:
		return ternaryColon // `key: v`, `on manual:`, but `c ? a : b`
	case f.prevUnary:
		return false // `-x`
	case typ == lparen:
		// A call (`f(x)`, `emit e(k=v)`, `do b.c(x)`) is not spaced;
		// a parenthesized expression after a keyword or an operator is.
		return !(f.prevName || f.prev == rparen || f.prev == rbrack)
	case typ == lbrack:
		// An index (`x[0]`) is not spaced; a list is.
		return !(f.prevName || f.prev == rparen || f.prev == rbrack)
	case typ == assign:
		// `x = 1` is spaced; `join=all`, `with slippage=5`, `f(k=v)` not.
		return f.prevStmtStart
	case f.prev == assign:
		// The `=` was an assignment if the name before it started a
		// statement.
		return f.assignStmt
	}
	return true
}
