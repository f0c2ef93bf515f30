// Package diag is the one diagnostic type of every compiler phase: lexing,
// parsing, resolution, type checking, lowering and assembly all report
// problems as Diagnostics, rendered as
//
//	file:line:col: error[CODE]: message
//	    the source line
//	    ^
package diag

import (
	"fmt"
	"sort"
	"strings"
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

func (d Diagnostic) Error() string {
	return fmt.Sprintf("%s: %s[%s]: %s", d.Pos, d.Severity, d.Code, d.Msg)
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

// Render writes each diagnostic followed by its source line and a caret
// under the column, when the source is known.
func (l List) Render(src Sources) string {
	var b strings.Builder
	for _, d := range l {
		b.WriteString(d.Error())
		b.WriteByte('\n')
		if line, ok := sourceLine(src[d.Pos.File], d.Pos.Line); ok {
			b.WriteString("    ")
			b.WriteString(line)
			b.WriteString("\n    ")
			b.WriteString(caretPad(line, d.Pos.Col))
			b.WriteString("^\n")
		}
	}
	return b.String()
}

func sourceLine(src []byte, line int) (string, bool) {
	if src == nil || line < 1 {
		return "", false
	}
	lines := strings.Split(string(src), "\n")
	if line > len(lines) {
		return "", false
	}
	return strings.TrimRight(lines[line-1], "\r"), true
}

// caretPad returns the blanks that put a caret under column col, keeping
// the line's tabs so the caret lines up in any terminal.
func caretPad(line string, col int) string {
	var b strings.Builder
	n := 1
	for _, r := range line {
		if n >= col {
			break
		}
		if r == '\t' {
			b.WriteByte('\t')
		} else {
			b.WriteByte(' ')
		}
		n++
	}
	for ; n < col; n++ {
		b.WriteByte(' ')
	}
	return b.String()
}
