// Package source holds what every frontend does with its input text
// around ANTLR: finding the bytes that are not UTF-8 (ANTLR would read
// them as U+FFFD, and a literal would silently hold other bytes than the
// file), and turning ANTLR's tokens and rule contexts into diag
// positions.
package source

import (
	"strings"
	"unicode/utf8"

	"github.com/antlr4-go/antlr/v4"

	"github.com/genesis-toolchain/genesis/diag"
)

// InvalidUTF8 calls bad for each byte of src that does not start a valid
// UTF-8 sequence, in order, with its line and column (in code points,
// counting an invalid byte as one, from 1), until bad returns false.
func InvalidUTF8(src []byte, bad func(line, col int, b byte) bool) {
	if utf8.Valid(src) {
		return
	}
	line, col := 1, 1
	for len(src) > 0 {
		r, n := utf8.DecodeRune(src)
		switch {
		case r == '\n':
			line, col = line+1, 1
		case r == utf8.RuneError && n == 1:
			if !bad(line, col, src[0]) {
				return
			}
			col++
		default:
			col++
		}
		src = src[n:]
	}
}

// TokenPos is the position of token t of file; the file alone when t is
// nil. ANTLR's column, like diag.Pos's, counts code points, but from 0.
func TokenPos(file string, t antlr.Token) diag.Pos {
	if t == nil {
		return diag.Pos{File: file}
	}
	return diag.Pos{File: file, Line: t.GetLine(), Col: t.GetColumn() + 1}
}

// TerminalPos is the position of terminal node n, or of the file when n
// is nil (a token the parser did not find).
func TerminalPos(file string, n antlr.TerminalNode) diag.Pos {
	if n == nil {
		return diag.Pos{File: file}
	}
	return TokenPos(file, n.GetSymbol())
}

// ContextPos is where rule context c starts, or the file when c is nil.
func ContextPos(file string, c antlr.ParserRuleContext) diag.Pos {
	if c == nil {
		return diag.Pos{File: file}
	}
	return TokenPos(file, c.GetStart())
}

// TokenSet is a set of token types, such as those a parser expected.
type TokenSet map[int]bool

// TokenName is a token type a syntax error may name, and how it names it.
type TokenName struct {
	Type int
	Name string
}

// Named returns the names of the tokens of names that are in s and not
// in covered (the tokens a class already named stands for), in the order
// of names.
func (s TokenSet) Named(covered TokenSet, names []TokenName) []string {
	var out []string
	for _, n := range names {
		if s[n.Type] && !covered[n.Type] {
			out = append(out, n.Name)
		}
	}
	return out
}

// Alternatives joins what a parser expected for a message, at most five
// of them: "a", "a or b", "a, b or c"; none gives "".
func Alternatives(names []string) string {
	if len(names) > 5 {
		names = names[:5]
	}
	switch len(names) {
	case 0:
		return ""
	case 1:
		return names[0]
	}
	return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
}

// Tokens converts an ANTLR set of token types; nil gives the empty set.
func Tokens(iv *antlr.IntervalSet) TokenSet {
	set := TokenSet{}
	if iv == nil {
		return set
	}
	for _, in := range iv.GetIntervals() {
		for typ := in.Start; typ < in.Stop; typ++ {
			set[typ] = true
		}
	}
	return set
}
