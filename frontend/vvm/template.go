package vvm

import (
	"strings"

	"github.com/antlr4-go/antlr/v4"

	"github.com/genesis-toolchain/genesis/diag"
)

// template parses a TEMPLATE token into its parts, left to right as
// spec.md §5.2 says: `{{` and `}}` are literal braces, \` a backtick
// (every other backslash stands for itself), `{}` the primary input,
// `{name}` a name placeholder, and `{name.member…}` one that reads
// members of the name (a decision of docs/vvm.md). Any other `{` or `}`
// is malformed (E052), as is a placeholder naming a reserved word. A
// malformed placeholder is kept as literal text, so that parsing goes on.
func (b *builder) template(n antlr.TerminalNode) *Template {
	if n == nil {
		return nil
	}
	text := n.GetText()
	t := &Template{Open: b.tpos(n), Raw: text[1:]}
	if templateClosed(text) {
		t.Raw = t.Raw[:len(t.Raw)-1]
	}
	p := templateParser{b: b, t: t, runes: []rune(t.Raw), pos: t.Open}
	p.pos.Col++ // past the backtick
	p.parse()
	return t
}

// templateParser walks the code points of a template's text, keeping
// the position of each.
type templateParser struct {
	b     *builder
	t     *Template
	runes []rune
	i     int
	pos   diag.Pos // of runes[i]

	text    strings.Builder // literal text not yet made a part
	textPos diag.Pos
}

func (p *templateParser) parse() {
	for p.i < len(p.runes) {
		r := p.runes[p.i]
		switch {
		case r == '\\' && p.peek(1) == '`':
			p.literal("`", 2)
		case r == '{' && p.peek(1) == '{':
			p.literal("{", 2)
		case r == '}' && p.peek(1) == '}':
			p.literal("}", 2)
		case r == '{':
			p.placeholder()
		case r == '}':
			p.b.errorf(p.pos, CodePlaceholder, "unescaped '}' in template: write }} for a literal brace")
			p.literal("}", 1)
		default:
			p.literal(string(r), 1)
		}
	}
	p.flush()
}

// peek returns the code point k after the current one, or 0.
func (p *templateParser) peek(k int) rune {
	if p.i+k < len(p.runes) {
		return p.runes[p.i+k]
	}
	return 0
}

// advance moves past n code points.
func (p *templateParser) advance(n int) {
	for ; n > 0 && p.i < len(p.runes); n-- {
		if p.runes[p.i] == '\n' {
			p.pos.Line, p.pos.Col = p.pos.Line+1, 1
		} else {
			p.pos.Col++
		}
		p.i++
	}
}

// literal adds s to the literal text, for the n code points it stands
// for.
func (p *templateParser) literal(s string, n int) {
	if p.text.Len() == 0 {
		p.textPos = p.pos
	}
	p.text.WriteString(s)
	p.advance(n)
}

// flush makes a TextPart of the literal text read so far.
func (p *templateParser) flush() {
	if p.text.Len() > 0 {
		p.t.Parts = append(p.t.Parts, &TemplatePart{Kind: TextPart, At: p.textPos, Text: p.text.String()})
		p.text.Reset()
	}
}

// placeholder reads the placeholder whose '{' is the current code point.
func (p *templateParser) placeholder() {
	open := p.pos
	end := p.i + 1
	for end < len(p.runes) && p.runes[end] != '}' && p.runes[end] != '{' && p.runes[end] != '\n' && p.runes[end] != '`' {
		end++
	}
	if end >= len(p.runes) || p.runes[end] != '}' {
		p.b.errorf(open, CodePlaceholder, "unescaped '{' in template: write {{ for a literal brace, or close the placeholder {name}")
		p.literal("{", 1)
		return
	}
	body := string(p.runes[p.i+1 : end])
	n := end - p.i + 1
	if body == "" {
		p.flush()
		p.t.Parts = append(p.t.Parts, &TemplatePart{Kind: InputPart, At: open})
		p.advance(n)
		return
	}
	words := strings.Split(body, ".")
	for _, w := range words {
		if !isIdent(w) {
			msg := "malformed placeholder {" + abbreviate(body) + "}: a placeholder is {} or {name}"
			if strings.TrimSpace(body) != body {
				msg += ", without blanks"
			}
			p.b.errorf(open, CodePlaceholder, "%s; write {{ and }} for literal braces", msg)
			p.literal("{"+body+"}", n)
			return
		}
	}
	if isKeyword(words[0]) {
		msg := "{" + words[0] + "} is not a placeholder: " + words[0] + " is a reserved word"
		if words[0] == "it" {
			msg += "; write {} for the input"
		}
		p.b.errorf(open, CodePlaceholder, "%s", msg)
		p.literal("{"+body+"}", n)
		return
	}
	p.flush()
	name := &Ident{NamePos: diag.Pos{File: open.File, Line: open.Line, Col: open.Col + 1}, Name: words[0]}
	p.t.Parts = append(p.t.Parts, &TemplatePart{Kind: NamePart, At: open, Name: name, Path: words[1:]})
	p.advance(n)
}

// isIdent reports whether s is an identifier: [a-zA-Z_][a-zA-Z0-9_]*.
func isIdent(s string) bool {
	if s == "" {
		return false
	}
	for i, c := range s {
		switch {
		case c == '_', 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z':
		case '0' <= c && c <= '9' && i > 0:
		default:
			return false
		}
	}
	return true
}
