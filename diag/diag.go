// Package diag is the one diagnostic type of every compiler phase: lexing,
// parsing, resolution, type checking, lowering and assembly all report
// problems as Diagnostics, rendered as
//
//	file:line:col: error[CODE]: message
//	    the source line
//	    ^
package diag

import (
	"bytes"
	"fmt"
	"sort"
	"strings"
	"unicode/utf8"
)

// Severity orders diagnostics by how bad they are.
type Severity uint8

const (
	Error Severity = iota
	Warning
	Note
)

func (s Severity) String() string {
	switch s {
	case Warning:
		return "warning"
	case Note:
		return "note"
	}
	return "error"
}

// Pos is a position in a source file. Line and Col count from 1; Col
// counts Unicode code points. A zero Line means "the whole file".
type Pos struct {
	File      string
	Line, Col int
}

func (p Pos) String() string {
	if p.Line == 0 {
		return p.File
	}
	return fmt.Sprintf("%s:%d:%d", p.File, p.Line, p.Col)
}

// Diagnostic is one problem found in a source file.
type Diagnostic struct {
	Pos      Pos
	Severity Severity
	Code     string // e.g. "0x0800", "E040", "A001"
	Msg      string
}

// Error is the diagnostic's first line, "file:line:col: error[CODE]:
// message", with the file name and message escaped as Render escapes
// source lines, so that printing it never sends the terminal a control
// character.
func (d Diagnostic) Error() string {
	return Escape(fmt.Sprintf("%s: %s[%s]: %s", d.Pos, d.Severity, d.Code, d.Msg))
}

// List collects diagnostics. It implements error when it holds any error.
type List []Diagnostic

// Add appends a diagnostic.
func (l *List) Add(pos Pos, sev Severity, code, format string, args ...any) {
	*l = append(*l, Diagnostic{Pos: pos, Severity: sev, Code: code, Msg: fmt.Sprintf(format, args...)})
}

// Errorf appends an error.
func (l *List) Errorf(pos Pos, code, format string, args ...any) {
	l.Add(pos, Error, code, format, args...)
}

// HasErrors reports whether any diagnostic is an error.
func (l List) HasErrors() bool {
	for _, d := range l {
		if d.Severity == Error {
			return true
		}
	}
	return false
}

// Sort orders the diagnostics by file, line and column, keeping the order of
// diagnostics at the same position.
func (l List) Sort() {
	sort.SliceStable(l, func(i, j int) bool {
		a, b := l[i].Pos, l[j].Pos
		if a.File != b.File {
			return a.File < b.File
		}
		if a.Line != b.Line {
			return a.Line < b.Line
		}
		return a.Col < b.Col
	})
}

func (l List) Error() string {
	var b strings.Builder
	for i, d := range l {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(d.Error())
	}
	return b.String()
}

// Sources maps file names to their contents, for rendering source lines.
type Sources map[string][]byte

// Render is how every command reports diagnostics: it applies the one
// reporting policy (Report: identical diagnostics merged, one syntax error
// per line, repeated warnings merged, the caps) and writes each diagnostic
// shown followed by its source line and a caret under the column, when
// the source is known, then a last line saying how many the caps left
// out, if any.
//
// What reaches the terminal is bounded and inert, whatever the source
// holds: a line longer than MaxShownWidth columns shows only a window
// around the caret, with "..." where it was cut, and control characters,
// bidirectional-text controls and bytes that are not UTF-8 show as
// escapes (\x1b, \u202e, \xff) in the line and in the message, with the
// caret still under the column the diagnostic names. Rendering takes
// time linear in the sources and the output, and the output of each
// diagnostic is bounded, however long its line.
func (l List) Render(src Sources) string {
	shown, om := l.Report(src)
	out := shown.render(src)
	if line := om.Line(); line != "" {
		out += Escape(line) + "\n"
	}
	return out
}

// render writes every diagnostic of l, as Render does, without the
// reporting policy.
func (l List) render(src Sources) string {
	shown := l.shownLines(src)
	var b strings.Builder
	for i, d := range l {
		b.WriteString(d.Error())
		b.WriteByte('\n')
		if s := shown[i]; s.ok {
			b.WriteString("    ")
			b.WriteString(s.text)
			b.WriteString("\n    ")
			b.WriteString(s.pad)
			b.WriteString("^\n")
		}
	}
	return b.String()
}

// MaxShownWidth is the most columns of a source line a rendered
// diagnostic shows: a longer line shows a window of it around the caret.
const MaxShownWidth = 160

// shownLine is what a rendered diagnostic shows of its line: the
// (escaped, windowed) text, and the blanks that put the caret under
// its column. ok is false when the line is not known.
type shownLine struct {
	text, pad string
	ok        bool
}

// shownLines finds the line of every diagnostic. The diagnostics are
// visited in source order, so that one forward pass over each file finds
// all their lines, however many there are.
func (l List) shownLines(src Sources) []shownLine {
	shown := make([]shownLine, len(l))
	order := make([]int, 0, len(l))
	for i, d := range l {
		if src[d.Pos.File] != nil && d.Pos.Line >= 1 {
			order = append(order, i)
		}
	}
	sort.SliceStable(order, func(i, j int) bool {
		a, b := l[order[i]].Pos, l[order[j]].Pos
		if a.File != b.File {
			return a.File < b.File
		}
		if a.Line != b.Line {
			return a.Line < b.Line
		}
		return a.Col < b.Col
	})
	var (
		file      string
		line, off int // the line that starts at byte off of file
		walk      *walker
	)
	for _, i := range order {
		d := l[i]
		data := src[d.Pos.File]
		if d.Pos.File != file {
			file, line, off = d.Pos.File, 1, 0
		}
		for line < d.Pos.Line && off <= len(data) {
			nl := bytes.IndexByte(data[off:], '\n')
			if nl < 0 {
				off = len(data) + 1 // past the last line
				break
			}
			off += nl + 1
			line++
		}
		if line != d.Pos.Line || off > len(data) {
			continue // the file has fewer lines
		}
		text := data[off:]
		if nl := bytes.IndexByte(text, '\n'); nl >= 0 {
			text = text[:nl]
		}
		text = bytes.TrimSuffix(text, []byte{'\r'})
		if walk == nil || walk.file != file || walk.lineNo != line {
			walk = &walker{file: file, lineNo: line, line: text, col: 1}
		}
		shown[i] = walk.window(d.Pos.Col)
	}
	return shown
}

// A walker finds the columns of one line, for the diagnostics of that
// line in column order: each walk goes on from where the previous one
// stopped, so that diagnostics far along a long line cost the line once,
// not once each. It remembers where the last MaxShownWidth columns it
// passed start, which is all a window can show before a caret.
type walker struct {
	file   string
	lineNo int
	line   []byte
	col    int                // the column walked to, from 1
	off    int                // where it starts in line
	starts [MaxShownWidth]int // starts[c%MaxShownWidth]: where column c starts, for the last columns passed
}

// glyph is one code point of a line (or one byte that is not UTF-8) as
// shown.
type glyph struct {
	end  int    // just past it in the line
	text string // what shows, escaped
}

func (w *walker) glyph(off int) glyph {
	r, n := utf8.DecodeRune(w.line[off:])
	return glyph{off + n, showRune(r, w.line[off:off+n])}
}

// window returns what is shown of the line for a caret at column col
// (counting code points from 1, an invalid byte counting as one): the
// whole line when it fits in MaxShownWidth columns, else a window around
// the caret. A column past the end of the line puts the caret just after
// it. col may not be before the column of the walker's last window.
func (w *walker) window(col int) shownLine {
	// A line that fits is shown whole; else what precedes the caret gets
	// at most half the window.
	limit := MaxShownWidth
	for off, width := 0, 0; off < len(w.line); {
		g := w.glyph(off)
		if width += len(g.text); width > MaxShownWidth {
			limit = MaxShownWidth / 2
			break
		}
		off = g.end
	}
	for w.col < col && w.off < len(w.line) {
		w.starts[w.col%MaxShownWidth] = w.off
		_, n := utf8.DecodeRune(w.line[w.off:])
		w.off += n
		w.col++
	}
	// The columns before the caret that fit in limit, at most
	// MaxShownWidth of them (each is at least one wide).
	first := w.col - MaxShownWidth
	if first < 1 {
		first = 1
	}
	var before []glyph
	width := 0
	for c := first; c < w.col; c++ {
		g := w.glyph(w.starts[c%MaxShownWidth])
		before = append(before, g)
		width += len(g.text)
	}
	for width > limit && len(before) > 1 {
		width -= len(before[0].text)
		before = before[1:]
		first++
	}
	var b, pad strings.Builder
	if first > 1 {
		b.WriteString("...")
		pad.WriteString("   ")
	}
	for _, g := range before {
		b.WriteString(g.text)
		if g.text == "\t" {
			pad.WriteByte('\t')
		} else {
			pad.WriteString(strings.Repeat(" ", len(g.text)))
		}
	}
	// The rest of the window shows what follows the caret.
	for budget, off := MaxShownWidth-width, w.off; off < len(w.line); {
		g := w.glyph(off)
		if budget -= len(g.text); budget < 0 {
			b.WriteString("...")
			break
		}
		b.WriteString(g.text)
		off = g.end
	}
	return shownLine{text: b.String(), pad: pad.String(), ok: true}
}

// showRune is how a code point of a source line or a message shows:
// itself, or an escape when a terminal would act on it rather than print
// it (control characters but the tab, bidirectional-text controls, line
// and paragraph separators), or when raw is not UTF-8 (one byte, shown
// as \xNN).
func showRune(r rune, raw []byte) string {
	switch {
	case r == utf8.RuneError && len(raw) == 1:
		return fmt.Sprintf("\\x%02x", raw[0])
	case r == '\t':
		return "\t"
	case r < 0x20 || r == 0x7f:
		return fmt.Sprintf("\\x%02x", r)
	case unsafeRune(r):
		return fmt.Sprintf("\\u%04x", r)
	}
	return string(raw)
}

// unsafeRune reports whether a terminal may act on r instead of showing
// it: C1 controls, and the format characters that reorder or break text
// (the "trojan source" characters).
func unsafeRune(r rune) bool {
	switch {
	case r >= 0x80 && r <= 0x9f:
		return true
	case r == 0x200e || r == 0x200f: // left-to-right and right-to-left marks
		return true
	case r >= 0x202a && r <= 0x202e: // embeddings and overrides
		return true
	case r >= 0x2066 && r <= 0x2069: // isolates
		return true
	case r == 0x2028 || r == 0x2029: // line and paragraph separators
		return true
	}
	return false
}

// Escape returns s with what showRune escapes escaped; line breaks and
// tabs stay (a message may have several lines).
func Escape(s string) string {
	clean := true
	for i, r := range s {
		if r == utf8.RuneError || r != '\n' && r != '\t' && (r < 0x20 || r == 0x7f || unsafeRune(r)) {
			_, n := utf8.DecodeRuneInString(s[i:])
			if r != utf8.RuneError || n == 1 {
				clean = false
				break
			}
		}
	}
	if clean {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == '\n' {
			b.WriteByte('\n')
		} else {
			b.WriteString(showRune(r, []byte(s[i:i+n])))
		}
		i += n
	}
	return b.String()
}
