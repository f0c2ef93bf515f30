package fasm

import "github.com/genesis-toolchain/genesis/diag"

// The fast path of the parser. Nearly every line of real assembly, and
// every line `genesisc --emit asm` writes, is a few labels and one
// instruction with registers, numbers and names: quickScan reads such a
// line by hand, about twenty times faster than the ANTLR parser, and
// produces exactly the line the parser would. The compiler no longer
// assembles text (it emits into forge/asm), but `forge asm` of the
// emitted text of a large program does: 4 MB take 0.09 s of CPU with
// this path and 1.6 s without it. Anything else (a syntax
// error, a hash, a character outside ASCII) it declines, and the ANTLR
// parser, which defines the language, reads the line. FuzzQuickScan checks
// that the two agree on every line quickScan accepts.

// A quickKind is the kind of a token of the fast path: the grammar's
// token types that it handles.
type quickKind uint8

const (
	qIdent quickKind = iota
	qReg
	qInt
	qString
	qDirective
	qComma
	qColon
	qMinus
)

type quickToken struct {
	kind quickKind
	text string
	col  int // 1-based; the line is ASCII, so bytes are code points
}

// quickScan parses one line (without its newline) as the grammar's line
// rule would; ok is false when it declines the line.
func (lp *lineParser) quickScan(text string) (ln line, ok bool) {
	toks, ok := quickTokens(text, lp.quickBuf[:0])
	lp.quickBuf = toks[:0]
	if !ok {
		return line{}, false
	}
	i := 0
	for i+1 < len(toks) && (toks[i].kind == qIdent || toks[i].kind == qString) && toks[i+1].kind == qColon {
		ln.labels = append(ln.labels, lp.quickOperand(toks[i]))
		i += 2
	}
	if i == len(toks) {
		return ln, true
	}
	if k := toks[i].kind; k != qIdent && k != qDirective {
		return line{}, false
	}
	s := &statement{name: lp.quickTokenAt(toks[i])}
	i++
	if i < len(toks) {
		s.ops = make([]operand, 0, (len(toks)-i+1)/2)
	}
	for i < len(toks) {
		if len(s.ops) > 0 {
			if toks[i].kind != qComma || i+1 == len(toks) {
				return line{}, false
			}
			i++
		}
		t := toks[i]
		switch t.kind {
		case qReg, qInt, qIdent, qString:
			s.ops = append(s.ops, lp.quickOperand(t))
			i++
		case qMinus:
			if i+1 == len(toks) || toks[i+1].kind != qInt {
				return line{}, false
			}
			op := lp.quickOperand(toks[i+1])
			op.neg, op.pos = true, lp.quickTokenAt(t).pos
			s.ops = append(s.ops, op)
			i += 2
		default:
			return line{}, false
		}
	}
	ln.stmt = s
	return ln, true
}

func (lp *lineParser) quickTokenAt(t quickToken) token {
	return token{text: t.text, pos: diag.Pos{File: lp.file, Line: lp.line, Col: t.col}}
}

// quickOperand converts a register, number, name or string token.
func (lp *lineParser) quickOperand(t quickToken) operand {
	op := operand{tok: lp.quickTokenAt(t)}
	op.pos = op.tok.pos
	switch t.kind {
	case qReg:
		op.kind = regOperand
	case qInt:
		op.kind = intOperand
	case qIdent:
		op.kind = identOperand
	default:
		op.kind = stringOperand
	}
	return op
}

// quickTokens splits a line into tokens by the lexer rules of FASM.g4,
// longest match first, appending them to toks; ok is false for anything
// the fast path leaves to ANTLR. A run of 64 or more word characters may
// hold a HASH, so it is declined too.
func quickTokens(text string, toks []quickToken) (_ []quickToken, ok bool) {
	for i := 0; i < len(text); {
		c := text[i]
		start := i
		switch {
		case c == ' ' || c == '\t' || c == '\r':
			i++
			continue
		case c == ';' || c == '/' && i+1 < len(text) && text[i+1] == '/':
			for j := i; j < len(text); j++ {
				if text[j] >= 0x80 {
					return toks, false // the comment's columns do not matter, but keep to ASCII
				}
			}
			return toks, true
		case c == ',':
			toks = append(toks, quickToken{qComma, ",", i + 1})
			i++
			continue
		case c == ':':
			toks = append(toks, quickToken{qColon, ":", i + 1})
			i++
			continue
		case c == '-':
			toks = append(toks, quickToken{qMinus, "-", i + 1})
			i++
			continue
		case c == '"':
			i++
			for i < len(text) && text[i] != '"' {
				if text[i] >= 0x80 {
					return toks, false
				}
				if text[i] == '\\' {
					if i++; i < len(text) && text[i] >= 0x80 {
						return toks, false
					}
				}
				i++
			}
			if i >= len(text) {
				return toks, false // unterminated
			}
			i++
			toks = append(toks, quickToken{qString, text[start:i], start + 1})
			continue
		case c == '.':
			if i+1 == len(text) || !isWordStart(text[i+1]) {
				return toks, false
			}
			i += 2
			for i < len(text) && isWordChar(text[i]) {
				i++
			}
			toks = append(toks, quickToken{qDirective, text[start:i], start + 1})
			continue
		case isWordChar(c):
		default:
			return toks, false
		}
		run := i
		for run < len(text) && (isWordChar(text[run]) || text[run] == '.') {
			run++
		}
		if run-i >= 64 {
			return toks, false
		}
		if isDigit(c) { // INT stops at a dot
			for i < len(text) && isWordChar(text[i]) {
				i++
			}
			toks = append(toks, quickToken{qInt, text[start:i], start + 1})
			continue
		}
		i = run // IDENT takes dots
		kind := qIdent
		if isRegister(text[start:i]) {
			kind = qReg // REG is listed before IDENT: same length, REG wins
		}
		toks = append(toks, quickToken{kind, text[start:i], start + 1})
	}
	return toks, true
}

// isWordStart and isWordChar are the first and following characters of
// IDENT without its dots, of DIRECTIVE after its dot, and of INT.
func isWordStart(c byte) bool { return isLetter(c) || c == '_' }
func isWordChar(c byte) bool  { return isLetter(c) || c == '_' || isDigit(c) }
func isDigit(c byte) bool     { return '0' <= c && c <= '9' }
