package parser

// sameLine reports whether the next token starts on the line where the
// previous one ends. The grammar's asm bodies use it to end an
// instruction at a line break, which the lexer otherwise skips: `RET`
// followed by `HALT` on the next line is two instructions, not RET with
// an operand.
func (p *GenesisParser) sameLine() bool {
	ts := p.GetTokenStream()
	prev, next := ts.LT(-1), ts.LT(1)
	if prev == nil || next == nil {
		return false
	}
	return next.GetLine() == prev.GetLine()
}
