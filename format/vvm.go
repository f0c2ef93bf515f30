package format

import (
	"fmt"
	"strings"

	"github.com/antlr4-go/antlr/v4"

	"github.com/genesis-toolchain/genesis/frontend/vvm"
	"github.com/genesis-toolchain/genesis/frontend/vvm/parser"
)

// vvmIndent is one level of indentation of VVM: two spaces, as the VVM
// corpus is written.
const vvmIndent = "  "

// VVM formats a VVM source file (.vvm) as docs/fmt.md says: the blocks
// the source's indentation makes, two spaces a level; inside brackets,
// line breaks kept where they follow an opening bracket, a comma, `=`,
// `:`, `=>` or a binary operator, the lines indented by bracket;
// comments where they were, own-line ones at the level of the block
// they are in. It is a Formatter.
func VVM(name string, src []byte) (out []byte, err error) {
	defer recoverFormatter(name, &err)
	if _, diags := vvm.ParseFile(name, src); diags.HasErrors() {
		return nil, syntaxErrorOf(diags)
	}
	f, err := newVVMFile(src)
	if err != nil {
		return nil, internalErrorf(name, "%v", err)
	}
	out = f.print()
	if err := checkVVM(name, f, out); err != nil {
		return nil, err
	}
	return out, nil
}

// vvmFile is a VVM file being formatted: its elems, and the layout of
// its logical lines.
type vvmFile struct {
	elems []srcElem
	start []bool // elem i starts a logical line
	level []int  // the block level of a logical line's first token
	// cols are, for elem i starting a logical line, the source columns
	// of the blocks open at it (cols[i][k]: the column of level k).
	cols [][]int
	// tight marks the braces of an inline agent configuration, `@{…}`,
	// written without blanks inside, as argument lists are.
	tight []bool
	// nextStart[i] is the first elem after elem i that starts a logical
	// line, or -1.
	nextStart []int
}

// newVVMFile lexes src with the frontend's lexer and finds the logical
// lines and their levels as the frontend's token source does (lex.go of
// package vvm): a line break outside brackets ends a logical line, and
// the column of a logical line's first token opens or closes blocks.
func newVVMFile(src []byte) (*vvmFile, error) {
	text := strings.TrimPrefix(string(src), "\uFEFF")
	lexer := parser.NewVVMLexer(antlr.NewInputStream(text))
	lexer.RemoveErrorListeners()
	f := &vvmFile{}
	nl := 0
	for _, t := range lexer.GetAllTokens() {
		switch t.GetTokenType() {
		case parser.VVMLexerWS:
		case parser.VVMLexerNEWLINE:
			nl++
		case parser.VVMLexerCOMMENT:
			f.elems = append(f.elems, srcElem{text: strings.TrimRight(t.GetText(), " \t\r\f"), typ: elemLineComment, tok: -1, nl: nl, col: t.GetColumn()})
			nl = 0
		case parser.VVMLexerBAD_CHAR, parser.VVMLexerUNTERMINATED_STRING:
			return nil, fmt.Errorf("unexpected %q", t.GetText())
		default:
			f.elems = append(f.elems, srcElem{text: t.GetText(), typ: t.GetTokenType(), tok: len(f.elems), nl: nl, col: t.GetColumn()})
			nl = 0
		}
	}
	f.start = make([]bool, len(f.elems))
	f.level = make([]int, len(f.elems))
	f.cols = make([][]int, len(f.elems))
	f.tight = make([]bool, len(f.elems))
	indents := []int{0}
	var open []int // elem indexes of the open brackets
	first := true
	for i, e := range f.elems {
		if e.comment() {
			continue
		}
		if len(open) == 0 && (first || e.nl > 0) {
			first = false
			top := indents[len(indents)-1]
			switch {
			case e.col > top:
				indents = append(indents, e.col)
			case e.col < top:
				for len(indents) > 1 && indents[len(indents)-1] > e.col {
					indents = indents[:len(indents)-1]
				}
				if indents[len(indents)-1] != e.col {
					return nil, fmt.Errorf("line %d: inconsistent indentation", i)
				}
			}
			f.start[i] = true
			f.level[i] = len(indents) - 1
			f.cols[i] = append([]int(nil), indents...)
		}
		switch e.typ {
		case parser.VVMLexerLPAREN, parser.VVMLexerLBRACK, parser.VVMLexerLBRACE:
			open = append(open, i)
			f.tight[i] = e.typ == parser.VVMLexerLBRACE && i > 0 && f.elems[i-1].typ == parser.VVMLexerAT
		case parser.VVMLexerRPAREN, parser.VVMLexerRBRACK, parser.VVMLexerRBRACE:
			if n := len(open); n > 0 {
				f.tight[i] = f.tight[open[n-1]]
				open = open[:n-1]
			}
		}
	}
	f.nextStart = make([]int, len(f.elems))
	next := -1
	for i := len(f.elems) - 1; i >= 0; i-- {
		f.nextStart[i] = next
		if f.start[i] {
			next = i
		}
	}
	return f, nil
}

// print writes the formatted file.
func (f *vvmFile) print() []byte {
	p := newLinePrinter(vvmIndent)
	var stack []*openBracket
	lineBase := 0
	level := 0      // the level of the last logical line
	var cols []int  // the source columns of its blocks
	lastStart := -1 // elem index of the last logical line's first token
	prevTok := -1   // elem index of the last token
	for i := range f.elems {
		e := &f.elems[i]
		depth := len(stack)
		closer := e.tok >= 0 && isVVMCloser(e.typ)
		brk := false
		var lvl int
		switch {
		case i == 0:
			brk = true
		case f.start[i]:
			brk = true
			lvl = f.level[i]
		case e.comment() && e.nl > 0 && depth == 0:
			brk = true
			lvl = f.commentLevel(i, level, cols)
		case depth > 0 && (e.nl > 0 && (e.comment() || f.elems[i-1].comment() || f.keepsBreakAfter(i-1)) ||
			closer && stack[depth-1].broken):
			// Inside brackets: a comment on a line of its own, a line
			// after a comment, a kept break, a closing bracket whose
			// opening one ends a line.
			brk = true
			if closer {
				lvl = stack[depth-1].outer
			} else {
				lvl = stack[depth-1].inner
			}
		}
		if i == 0 {
			switch {
			case f.start[0]:
				lvl = f.level[0]
			case e.comment():
				lvl = f.commentLevel(0, 0, []int{0})
			}
		}
		if brk {
			if depth > 0 && stack[depth-1].seq == prevTok {
				stack[depth-1].broken = true // the line breaks right after the bracket
			}
			blank := e.nl > 1 && i > 0
			if blank && depth == 0 && !f.elems[i-1].comment() && lvl > level && lastStart >= 0 {
				// No blank line between a block's header and its body.
				blank = false
			}
			if blank && depth > 0 && isVVMOpener(f.elems[i-1].typ) {
				blank = false
			}
			if closer {
				blank = false
			}
			p.line(lvl, blank)
			lineBase = lvl
		} else {
			sep := " "
			switch {
			case e.comment():
				sep = "  "
			case f.noSpace(i-1, i, depth):
				sep = ""
			}
			p.write(sep, "")
		}
		if f.start[i] {
			level, cols, lastStart = f.level[i], f.cols[i], i
		}
		if closer && depth > 0 {
			b := stack[depth-1]
			stack = stack[:depth-1]
			if b.line < p.lines {
				lineBase = min(lineBase, b.outer)
			}
		}
		p.write("", e.text)
		if e.tok >= 0 && isVVMOpener(e.typ) {
			stack = append(stack, &openBracket{outer: lineBase, inner: lineBase + 1, line: p.lines, seq: i})
		}
		if e.tok >= 0 {
			prevTok = i
		}
	}
	return p.bytes()
}

// commentLevel is the level of the own-line comment elem i, outside
// brackets: the level of the block its column is in, among the levels
// between the last logical line's (level, with the source columns of
// its blocks cols) and the next one's. A comment between two statements
// of a block stays in the block; one after a block's last statement
// stays in it, or goes out to the level it was written at.
func (f *vvmFile) commentLevel(i, level int, cols []int) int {
	next, nextCol := 0, 0
	if j := f.nextStart[i]; j >= 0 {
		next, nextCol = f.level[j], f.elems[j].col
	}
	lo, hi := min(level, next), max(level, next)
	col := f.elems[i].col
	for k := hi; k > lo; k-- {
		c := nextCol
		if k < len(cols) {
			c = cols[k]
		}
		if c <= col {
			return k
		}
	}
	return lo
}

// keepsBreakAfter reports whether a line break of the source after elem
// i, inside brackets, is kept.
func (f *vvmFile) keepsBreakAfter(i int) bool {
	switch f.elems[i].typ {
	case parser.VVMLexerLPAREN, parser.VVMLexerLBRACK, parser.VVMLexerLBRACE, parser.VVMLexerCOMMA,
		parser.VVMLexerASSIGN, parser.VVMLexerCOLON, parser.VVMLexerARROW,
		parser.VVMLexerOR, parser.VVMLexerAND, parser.VVMLexerPLUS, parser.VVMLexerMINUS,
		parser.VVMLexerEQ, parser.VVMLexerNE, parser.VVMLexerLT, parser.VVMLexerLE, parser.VVMLexerGT, parser.VVMLexerGE:
		return true
	}
	return false
}

// nameLike reports whether elem i is a name: an identifier, or a
// keyword where a name is (after `.`, `@`, def, agent, constrain).
func (f *vvmFile) nameLike(i int) bool {
	if f.elems[i].typ == parser.VVMLexerIDENT {
		return true
	}
	if i == 0 || !isWordByte(f.elems[i].text[0]) || f.elems[i].typ == parser.VVMLexerNUMBER {
		return false
	}
	switch f.elems[i-1].typ {
	case parser.VVMLexerDOT, parser.VVMLexerAT, parser.VVMLexerDEF, parser.VVMLexerAGENT, parser.VVMLexerCONSTRAIN:
		return true
	}
	return false
}

// noSpace reports whether elems a and b, on one line with depth
// brackets open before b, are written without a blank between them.
func (f *vvmFile) noSpace(a, b, depth int) bool {
	ea, eb := f.elems[a], f.elems[b]
	if ea.comment() || eb.comment() {
		return false
	}
	no := false
	switch ea.typ {
	case parser.VVMLexerLPAREN, parser.VVMLexerLBRACK, parser.VVMLexerDOT, parser.VVMLexerAT, parser.VVMLexerQUESTION:
		no = true
	case parser.VVMLexerLBRACE:
		no = eb.typ == parser.VVMLexerRBRACE || f.tight[a]
	case parser.VVMLexerASSIGN:
		no = depth > 0 // a keyword argument: name=value
	}
	switch eb.typ {
	case parser.VVMLexerRPAREN, parser.VVMLexerRBRACK, parser.VVMLexerCOMMA, parser.VVMLexerCOLON, parser.VVMLexerDOT:
		no = true
	case parser.VVMLexerRBRACE:
		no = no || f.tight[b]
	case parser.VVMLexerASSIGN:
		no = no || depth > 0
	case parser.VVMLexerLPAREN:
		// A call, a def's or agent's parameters, `.with(`, `error(`,
		// `parallel(`, an agent call's arguments after its template.
		no = no || f.nameLike(a) || ea.typ == parser.VVMLexerTEMPLATE || ea.typ == parser.VVMLexerERROR ||
			ea.typ == parser.VVMLexerPARALLEL || ea.typ == parser.VVMLexerWITH
	case parser.VVMLexerLBRACK:
		// An index: after what ends a primary.
		switch ea.typ {
		case parser.VVMLexerRPAREN, parser.VVMLexerRBRACK, parser.VVMLexerRBRACE, parser.VVMLexerSTRING,
			parser.VVMLexerNUMBER, parser.VVMLexerTEMPLATE, parser.VVMLexerIT, parser.VVMLexerTRUE, parser.VVMLexerFALSE:
			no = true
		default:
			no = no || f.nameLike(a)
		}
	}
	return no && !gluesTokens(ea.text, eb.text)
}

func isVVMOpener(typ int) bool {
	return typ == parser.VVMLexerLPAREN || typ == parser.VVMLexerLBRACK || typ == parser.VVMLexerLBRACE
}

func isVVMCloser(typ int) bool {
	return typ == parser.VVMLexerRPAREN || typ == parser.VVMLexerRBRACK || typ == parser.VVMLexerRBRACE
}

// shape is the layout of a VVM file that its meaning depends on: every
// token, each logical line's first one preceded by its block level.
func (f *vvmFile) shape() []string {
	var s []string
	for i, e := range f.elems {
		if e.comment() {
			continue
		}
		if f.start[i] {
			s = append(s, fmt.Sprintf("<line %d>", f.level[i]))
		}
		s = append(s, e.text)
	}
	return s
}

// checkVVM checks the formatted text: the same tokens in the same
// logical lines and blocks, the same comments, and a clean parse.
func checkVVM(name string, f *vvmFile, out []byte) error {
	g, err := newVVMFile(out)
	if err != nil {
		return internalErrorf(name, "the output does not lex: %v", err)
	}
	if i, ok := firstDifference(f.shape(), g.shape()); !ok {
		return internalErrorf(name, "the output's tokens or blocks differ from the source's at token %d", i)
	}
	if i, ok := firstDifference(commentsOf(f.elems), commentsOf(g.elems)); !ok {
		return internalErrorf(name, "the output's comments differ from the source's at comment %d", i)
	}
	if _, diags := vvm.ParseFile(name, out); diags.HasErrors() {
		return internalErrorf(name, "the output does not parse: %v", diags.Error())
	}
	return nil
}
