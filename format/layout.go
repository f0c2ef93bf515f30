package format

import (
	"fmt"
	"strings"
)

// Element kinds that are not tokens of a lexer: the comments, which the
// formatters interleave with the tokens.
const (
	lineComment  = -100
	blockComment = -101
)

// An elem is a token or a comment of a source file, in file order, with
// what the formatters need of the blank space before it.
type elem struct {
	text string
	typ  int // the token type, or lineComment or blockComment
	tok  int // index of the token among the file's tokens; -1 for a comment
	nl   int // line breaks in the blank space before it
	col  int // column (in code points, from 0) where it starts
}

func (e *elem) comment() bool { return e.typ == lineComment || e.typ == blockComment }

// A printer builds the formatted text line by line. Lines are indented
// with unit per level; trailing blanks are never written.
type printer struct {
	b     strings.Builder
	unit  string
	empty bool // nothing written yet
	level int  // indentation level of the current line
	lines int  // lines started
}

func newPrinter(unit string) *printer { return &printer{unit: unit, empty: true} }

// line ends the current line (unless nothing was written yet) and starts
// one at level, after a blank line if blank.
func (p *printer) line(level int, blank bool) {
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
func (p *printer) write(sep, text string) {
	if p.empty {
		p.empty = false
		sep = ""
	}
	p.b.WriteString(sep)
	p.b.WriteString(text)
}

// bytes returns the text: ending with one line break, or empty.
func (p *printer) bytes() []byte {
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
func gapComments(gap []rune, col int, lineStart, blockStart string, out []elem) ([]elem, int, error) {
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
		case hasPrefix(gap[i:], lineStart):
			j := i
			for j < len(gap) && gap[j] != '\n' {
				j++
			}
			text := strings.TrimRight(string(gap[i:j]), " \t\r\f")
			out = append(out, elem{text: text, typ: lineComment, tok: -1, nl: nl, col: col})
			nl = 0
			col += j - i
			i = j
		case blockStart != "" && hasPrefix(gap[i:], blockStart):
			j := i + len(blockStart)
			for j < len(gap) && !(gap[j] == '/' && gap[j-1] == '*' && j-1 >= i+len(blockStart)) {
				j++
			}
			if j == len(gap) {
				return nil, 0, fmt.Errorf("unterminated comment")
			}
			j++
			text := string(gap[i:j])
			out = append(out, elem{text: text, typ: blockComment, tok: -1, nl: nl, col: col})
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

func hasPrefix(rs []rune, p string) bool {
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

// endCol is the column after text, which starts at col.
func endCol(text string, col int) int {
	if k := strings.LastIndexByte(text, '\n'); k >= 0 {
		return len([]rune(text[k+1:]))
	}
	return col + len([]rune(text))
}

// glues reports whether writing b right after a, without a blank, could
// make one token of the end of a and the start of b: two characters that
// form an operator or a comment opener.
func glues(a, b string) bool {
	if a == "" || b == "" {
		return false
	}
	pair := a[len(a)-1:] + b[:1]
	switch pair {
	case "&&", "||", "==", "!=", "<=", ">=", "<<", ">>", "->", "=>", "//", "/*", "*/", "--", "++", "**":
		return true
	}
	return isWord(a[len(a)-1]) && isWord(b[0])
}

func isWord(c byte) bool {
	return c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= 0x80
}

// commentTexts returns the texts of the comments among elems, in order.
func commentTexts(elems []elem) []string {
	var texts []string
	for i := range elems {
		if elems[i].comment() {
			texts = append(texts, elems[i].text)
		}
	}
	return texts
}

// sameStrings reports whether a and b are equal, and if not, the first
// index where they differ.
func sameStrings(a, b []string) (int, bool) {
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

// recovered turns a panic of a formatter into an internal error.
func recovered(name string, err *error) {
	if r := recover(); r != nil {
		*err = internalError(name, "panic: %v", r)
	}
}
