package format

import (
	"fmt"
	"strings"
)

// Element kinds that are not tokens of a lexer: the comments, which the
// formatters interleave with the tokens.
const (
	elemLineComment  = -100
	elemBlockComment = -101
)

// A srcElem is a token or a comment of a source file, in file order, with
// what the formatters need of the blank space before it.
type srcElem struct {
	text string
	typ  int // the token type, or elemLineComment or elemBlockComment
	tok  int // index of the token among the file's tokens; -1 for a comment
	nl   int // line breaks in the blank space before it
	col  int // column (in code points, from 0) where it starts
}

func (e *srcElem) comment() bool { return e.typ == elemLineComment || e.typ == elemBlockComment }

// A linePrinter builds the formatted text line by line. Lines are indented
// with unit per level; trailing blanks are never written.
type linePrinter struct {
	b     strings.Builder
	unit  string
	empty bool // nothing written yet
	level int  // indentation level of the current line
	lines int  // lines started
}

func newLinePrinter(unit string) *linePrinter { return &linePrinter{unit: unit, empty: true} }

// line ends the current line (unless nothing was written yet) and starts
// one at level, after a blank line if blank.
func (p *linePrinter) line(level int, blank bool) {
	if !p.empty {
		p.b.WriteByte('\n')
		if blank {
			p.b.WriteByte('\n')
		}
	}
	p.empty = false
	p.level = level
	p.lines++
	for i := 0; i < level; i++ {
		p.b.WriteString(p.unit)
	}
}

// write appends text to the current line, after sep.
func (p *linePrinter) write(sep, text string) {
	if p.empty {
		p.empty = false
		sep = ""
	}
	p.b.WriteString(sep)
	p.b.WriteString(text)
}

// bytes returns the text: ending with one line break, or empty.
func (p *linePrinter) bytes() []byte {
	if p.empty {
		return []byte{}
	}
	return []byte(p.b.String() + "\n")
}

// gapComments splits the blank space and comments between two tokens
// (gap, in code points; col the column where it starts) into comment
// elems, appended to out, and returns out and the line breaks after the
// last comment. lineStart and blockStart say where a comment of the
// language starts ("//" and "/*", or "#" and ""); any other
// non-blank character is an error, since the lexer made a token of it.
func gapComments(gap []rune, col int, lineStart, blockStart string, out []srcElem) ([]srcElem, int, error) {
	nl := 0
	for i := 0; i < len(gap); {
		r := gap[i]
		switch {
		case r == '\n':
			nl++
			col = 0
			i++
		case r == ' ' || r == '\t' || r == '\r' || r == '\f':
			col++
			i++
		case runesHavePrefix(gap[i:], lineStart):
			j := i
			for j < len(gap) && gap[j] != '\n' {
				j++
			}
			text := strings.TrimRight(string(gap[i:j]), " \t\r\f")
			out = append(out, srcElem{text: text, typ: elemLineComment, tok: -1, nl: nl, col: col})
			nl = 0
			col += j - i
			i = j
		case blockStart != "" && runesHavePrefix(gap[i:], blockStart):
			j := i + len(blockStart)
			for j < len(gap) && !(gap[j] == '/' && gap[j-1] == '*' && j-1 >= i+len(blockStart)) {
				j++
			}
			if j == len(gap) {
				return nil, 0, fmt.Errorf("unterminated comment")
			}
			j++
			text := string(gap[i:j])
			out = append(out, srcElem{text: text, typ: elemBlockComment, tok: -1, nl: nl, col: col})
			nl = 0
			if k := strings.LastIndexByte(text, '\n'); k >= 0 {
				col = len([]rune(text[k+1:]))
			} else {
				col += j - i
			}
			i = j
		default:
			return nil, 0, fmt.Errorf("unexpected %q between tokens", r)
		}
	}
	return out, nl, nil
}

func runesHavePrefix(rs []rune, p string) bool {
	if p == "" || len(rs) < len(p) {
		return false
	}
	for i := 0; i < len(p); i++ {
		if rs[i] != rune(p[i]) {
			return false
		}
	}
	return true
}

// columnAfter is the column after text, which starts at col.
func columnAfter(text string, col int) int {
	if k := strings.LastIndexByte(text, '\n'); k >= 0 {
		return len([]rune(text[k+1:]))
	}
	return col + len([]rune(text))
}

// gluesTokens reports whether writing b right after a, without a blank, could
// make one token of the end of a and the start of b: two characters that
// form an operator or a comment opener.
func gluesTokens(a, b string) bool {
	if a == "" || b == "" {
		return false
	}
	pair := a[len(a)-1:] + b[:1]
	switch pair {
	case "&&", "||", "==", "!=", "<=", ">=", "<<", ">>", "->", "=>", "//", "/*", "*/", "--", "++", "**":
		return true
	}
	return isWordByte(a[len(a)-1]) && isWordByte(b[0])
}

func isWordByte(c byte) bool {
	return c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= 0x80
}

// commentsOf returns the texts of the comments among elems, in order.
func commentsOf(elems []srcElem) []string {
	var texts []string
	for i := range elems {
		if elems[i].comment() {
			texts = append(texts, elems[i].text)
		}
	}
	return texts
}

// firstDifference reports whether a and b are equal, and if not, the first
// index where they differ.
func firstDifference(a, b []string) (int, bool) {
	for i := range a {
		if i >= len(b) || a[i] != b[i] {
			return i, false
		}
	}
	if len(b) != len(a) {
		return len(a), false
	}
	return 0, true
}

// recoverFormatter turns a panic of a formatter into an internal error.
func recoverFormatter(name string, err *error) {
	if r := recover(); r != nil {
		*err = internalErrorf(name, "panic: %v", r)
	}
}
