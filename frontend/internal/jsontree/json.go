package jsontree

import (
	"fmt"
	"math"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/genesis-toolchain/genesis/diag"
)

// maxDepth bounds the nesting of arrays and objects, in JSON and YAML, so
// that no input can exhaust the stack.
const maxDepth = 256

// parseJSON decodes a JSON document (RFC 8259) into nodes, keeping the
// key order and the position of every value. It stops at the first syntax
// error and then returns nil.
func parseJSON(file string, src []byte, r *reporter) *Node {
	p := &jsonParser{file: file, src: src, line: 1, col: 1, r: r}
	if len(src) >= 3 && src[0] == 0xEF && src[1] == 0xBB && src[2] == 0xBF {
		p.off = 3 // a UTF-8 byte order mark
	}
	if !utf8.Valid(src) {
		p.invalidUTF8()
		return nil
	}
	defer func() {
		if e := recover(); e != nil {
			if _, ok := e.(jsonError); !ok {
				panic(e)
			}
		}
	}()
	p.space()
	n := p.value("$")
	p.space()
	if p.off < len(src) {
		p.fail("$", "unexpected %s after the end of the document", p.describe())
	}
	return n
}

type jsonParser struct {
	file      string
	src       []byte
	off       int
	line, col int // of off
	r         *reporter
	depth     int
}

// jsonError is what fail panics with, to unwind to parseJSON.
type jsonError struct{}

func (p *jsonParser) pos() diag.Pos { return diag.Pos{File: p.file, Line: p.line, Col: p.col} }

func (p *jsonParser) fail(path, format string, args ...any) {
	p.failAt(p.pos(), path, format, args...)
}

func (p *jsonParser) failAt(pos diag.Pos, path, format string, args ...any) {
	p.r.errorAt(pos, path, p.r.codes.Syntax, format, args...)
	panic(jsonError{})
}

// advance moves past one byte, keeping line and column (columns count
// code points).
func (p *jsonParser) advance() {
	b := p.src[p.off]
	p.off++
	if b == '\n' {
		p.line, p.col = p.line+1, 1
	} else if b&0xC0 != 0x80 {
		p.col++
	}
}

func (p *jsonParser) space() {
	for p.off < len(p.src) {
		switch p.src[p.off] {
		case ' ', '\t', '\r', '\n':
			p.advance()
		default:
			return
		}
	}
}

// describe names what is at the current offset, for a message.
func (p *jsonParser) describe() string {
	if p.off >= len(p.src) {
		return "end of file"
	}
	r, _ := utf8.DecodeRune(p.src[p.off:])
	return fmt.Sprintf("character %q", r)
}

func (p *jsonParser) invalidUTF8() {
	for p.off < len(p.src) {
		r, n := utf8.DecodeRune(p.src[p.off:])
		if r == utf8.RuneError && n == 1 {
			p.r.errorAt(p.pos(), "$", p.r.codes.Syntax, "invalid UTF-8 byte 0x%02x", p.src[p.off])
			return
		}
		for range n {
			p.advance()
		}
	}
}

func (p *jsonParser) value(path string) *Node {
	if p.off >= len(p.src) {
		p.fail(path, "unexpected end of file, expected a value")
	}
	pos := p.pos()
	switch c := p.src[p.off]; {
	case c == '{':
		return p.object(path)
	case c == '[':
		return p.array(path)
	case c == '"':
		n := &Node{Kind: String, Pos: pos, Path: path}
		n.Text, n.runePos = p.str(path)
		n.plain = n.runePos == nil
		return n
	case c == '-' || (c >= '0' && c <= '9'):
		return p.number(path)
	case c == 't':
		p.literal(path, "true")
		return &Node{Kind: Bool, Pos: pos, Path: path, Bool: true}
	case c == 'f':
		p.literal(path, "false")
		return &Node{Kind: Bool, Pos: pos, Path: path}
	case c == 'n':
		p.literal(path, "null")
		return &Node{Kind: Null, Pos: pos, Path: path}
	}
	p.fail(path, "unexpected %s, expected a value", p.describe())
	return nil
}

func (p *jsonParser) literal(path, word string) {
	if len(p.src)-p.off < len(word) || string(p.src[p.off:p.off+len(word)]) != word {
		p.fail(path, "unexpected %s, expected a value", p.describe())
	}
	for range len(word) {
		p.advance()
	}
}

func (p *jsonParser) enter(path string) {
	p.depth++
	if p.depth > maxDepth {
		p.fail(path, "arrays and objects nest deeper than %d levels", maxDepth)
	}
}

func (p *jsonParser) object(path string) *Node {
	p.enter(path)
	n := &Node{Kind: Object, Pos: p.pos(), Path: path}
	p.advance() // {
	p.space()
	if p.off < len(p.src) && p.src[p.off] == '}' {
		p.advance()
		p.depth--
		return n
	}
	index := map[string]int{}
	for {
		if p.off >= len(p.src) || p.src[p.off] != '"' {
			p.fail(path, "unexpected %s, expected a string key", p.describe())
		}
		keyPos := p.pos()
		key, _ := p.str(path)
		p.space()
		if p.off >= len(p.src) || p.src[p.off] != ':' {
			p.fail(ChildPath(path, key), "unexpected %s, expected ':' after the key %q", p.describe(), key)
		}
		p.advance()
		p.space()
		v := p.value(ChildPath(path, key))
		if i, dup := index[key]; dup {
			p.r.warnAt(keyPos, v.Path, p.r.codes.DupKey, "duplicate key %q: this value replaces the one at line %d", key, n.Fields[i].KeyPos.Line)
			n.Fields[i].Value = v
		} else {
			index[key] = len(n.Fields)
			n.Fields = append(n.Fields, Field{Key: key, KeyPos: keyPos, Value: v})
		}
		p.space()
		if p.off < len(p.src) && p.src[p.off] == ',' {
			comma := p.pos()
			p.advance()
			p.space()
			if p.off < len(p.src) && p.src[p.off] == '}' {
				p.failAt(comma, path, "a comma before '}': JSON allows no trailing comma")
			}
			continue
		}
		if p.off < len(p.src) && p.src[p.off] == '}' {
			p.advance()
			p.depth--
			return n
		}
		p.fail(path, "unexpected %s, expected ',' or '}'", p.describe())
	}
}

func (p *jsonParser) array(path string) *Node {
	p.enter(path)
	n := &Node{Kind: Array, Pos: p.pos(), Path: path}
	p.advance() // [
	p.space()
	if p.off < len(p.src) && p.src[p.off] == ']' {
		p.advance()
		p.depth--
		return n
	}
	for {
		n.Items = append(n.Items, p.value(indexPath(path, len(n.Items))))
		p.space()
		if p.off < len(p.src) && p.src[p.off] == ',' {
			comma := p.pos()
			p.advance()
			p.space()
			if p.off < len(p.src) && p.src[p.off] == ']' {
				p.failAt(comma, path, "a comma before ']': JSON allows no trailing comma")
			}
			continue
		}
		if p.off < len(p.src) && p.src[p.off] == ']' {
			p.advance()
			p.depth--
			return n
		}
		p.fail(path, "unexpected %s, expected ',' or ']'", p.describe())
	}
}

// keepColumns, set by a test, makes every string keep its table of
// columns, so that the positions of plain strings can be compared with
// it.
var keepColumns = false

// str reads a string literal and returns its value and the source
// position of each of its code points, or nil for a plain string (one
// without escapes, each code point a column: see Node.plain).
func (p *jsonParser) str(path string) (string, func(int) diag.Pos) {
	p.advance() // "
	var buf []byte
	var cols []int32 // the source column of each code point of buf
	line := p.line
	// plain: no escape yet and each code point one column, the one after
	// the last's: then cols is not kept, and the string is plain (Node).
	plain, first, k := !keepColumns, p.col, 0 // k: the code points of buf
	unplain := func() {
		plain = false
		cols = make([]int32, 0, k+1)
		for i := range k {
			cols = append(cols, int32(first+i))
		}
	}
	for {
		if p.off >= len(p.src) {
			p.fail(path, "unterminated string")
		}
		c := p.src[p.off]
		switch {
		case c == '"':
			end := p.col // an index past the end maps to the closing quote
			p.advance()
			if plain && end != first+k {
				unplain()
			}
			if plain {
				return string(buf), nil
			}
			file := p.file
			return string(buf), func(i int) diag.Pos {
				if i >= len(cols) {
					return diag.Pos{File: file, Line: line, Col: end}
				}
				return diag.Pos{File: file, Line: line, Col: int(cols[i])}
			}
		case c < 0x20:
			p.fail(path, "control character %q in a string (write it as an escape)", rune(c))
		case c == '\\':
			col := p.col
			if plain {
				unplain()
			}
			p.advance()
			if p.off >= len(p.src) {
				p.fail(path, "unterminated string")
			}
			e := p.src[p.off]
			var r rune
			switch e {
			case '"', '\\', '/':
				r = rune(e)
			case 'b':
				r = '\b'
			case 'f':
				r = '\f'
			case 'n':
				r = '\n'
			case 'r':
				r = '\r'
			case 't':
				r = '\t'
			case 'u':
				p.advance()
				r = p.hex4(path)
				if utf16.IsSurrogate(r) {
					// A surrogate pair is two escapes; a lone half is
					// kept as U+FFFD, as Go's encoding/json does.
					if p.off+1 < len(p.src) && p.src[p.off] == '\\' && p.src[p.off+1] == 'u' {
						save := *p
						p.advance()
						p.advance()
						r2 := p.hex4(path)
						if d := utf16.DecodeRune(r, r2); d != utf8.RuneError {
							r = d
						} else {
							*p = save
							r = utf8.RuneError
						}
					} else {
						r = utf8.RuneError
					}
				}
				buf = utf8.AppendRune(buf, r)
				cols = append(cols, int32(col))
				continue
			default:
				p.fail(path, "invalid escape \\%c in a string", rune(e))
			}
			p.advance()
			buf = utf8.AppendRune(buf, r)
			cols = append(cols, int32(col))
		default:
			r, n := utf8.DecodeRune(p.src[p.off:])
			if plain && p.col != first+k {
				unplain()
			}
			if !plain {
				cols = append(cols, int32(p.col))
			}
			k++
			buf = utf8.AppendRune(buf, r)
			for range n {
				p.advance()
			}
		}
	}
}

func (p *jsonParser) hex4(path string) rune {
	if len(p.src)-p.off < 4 {
		p.fail(path, "invalid \\u escape: expected four hex digits")
	}
	v, err := strconv.ParseUint(string(p.src[p.off:p.off+4]), 16, 16)
	if err != nil {
		p.fail(path, "invalid \\u escape: expected four hex digits")
	}
	for range 4 {
		p.advance()
	}
	return rune(v)
}

func (p *jsonParser) number(path string) *Node {
	pos := p.pos()
	start := p.off
	digits := func() int {
		n := 0
		for p.off < len(p.src) && p.src[p.off] >= '0' && p.src[p.off] <= '9' {
			p.advance()
			n++
		}
		return n
	}
	if p.src[p.off] == '-' {
		p.advance()
	}
	intStart := p.off
	if digits() == 0 {
		p.fail(path, "invalid number: expected a digit")
	}
	if p.src[intStart] == '0' && p.off-intStart > 1 {
		p.fail(path, "invalid number: leading zero")
	}
	integral := true
	if p.off < len(p.src) && p.src[p.off] == '.' {
		integral = false
		p.advance()
		if digits() == 0 {
			p.fail(path, "invalid number: expected a digit after '.'")
		}
	}
	if p.off < len(p.src) && (p.src[p.off] == 'e' || p.src[p.off] == 'E') {
		integral = false
		p.advance()
		if p.off < len(p.src) && (p.src[p.off] == '+' || p.src[p.off] == '-') {
			p.advance()
		}
		if digits() == 0 {
			p.fail(path, "invalid number: expected a digit in the exponent")
		}
	}
	text := string(p.src[start:p.off])
	n := &Node{Kind: Number, Pos: pos, Path: path, Text: text}
	f, err := strconv.ParseFloat(text, 64)
	if err != nil || math.IsInf(f, 0) {
		p.r.errorAt(pos, path, p.r.codes.Syntax, "number %s is out of range", abbreviate(text))
		f = 0
	}
	n.Num = f
	if integral {
		if i, err := strconv.ParseInt(text, 10, 64); err == nil {
			n.Int, n.IsInt = i, true
		}
	} else if f == math.Trunc(f) && math.Abs(f) < 1<<63 {
		n.Int, n.IsInt = int64(f), true
	}
	return n
}
