package parser

// unitFollows reports whether the name after a number is the number's
// unit (`1.5 USDC`, `50 bps`): it must be on the number's line, and not
// be followed by '=', which makes it the name of the next option, as in
// `parallel count=2 join=any:`.
func (p *GrimoireParser) unitFollows() bool {
	ts := p.GetTokenStream()
	num, unit, after := ts.LT(-1), ts.LT(1), ts.LT(2)
	if num == nil || unit == nil || unit.GetLine() != num.GetLine() {
		return false
	}
	return after == nil || after.GetTokenType() != GrimoireParserASSIGN
}
