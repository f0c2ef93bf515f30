package grimoire

import (
	"math/big"
	"strings"
)

// Literals: the values of number and string tokens, and the exact
// decimal form of numbers for messages and the printed tree.

// durationUnits are the seconds in one unit of each duration suffix.
var durationUnits = map[byte]int64{'s': 1, 'm': 60, 'h': 3600, 'd': 86400}

// numberValue is the exact value of a NUMBER, PERCENT_NUMBER or DURATION
// token's text (the lexer guarantees digits, an optional fraction and the
// suffix): a percentage divided by 100, a duration in seconds.
func numberValue(raw string, kind NumberKind) *big.Rat {
	digits := raw
	if kind != Plain {
		digits = raw[:len(raw)-1]
	}
	v, ok := new(big.Rat).SetString(digits)
	if !ok {
		return new(big.Rat)
	}
	switch kind {
	case Percent:
		v.Quo(v, big.NewRat(100, 1))
	case Duration:
		v.Mul(v, big.NewRat(durationUnits[raw[len(raw)-1]], 1))
	}
	return v
}

// escapes are the escape sequences of strings (the specification's).
var escapes = map[rune]rune{'n': '\n', 't': '\t', 'r': '\r', '\\': '\\', '"': '"', '\'': '\''}

// badEscape is an escape sequence a string may not hold: its text and
// where it is, in lines and columns from the string's opening quote.
type badEscape struct {
	text      string
	line, col int // line 0 is the quote's line; col counts from the quote's column there, else from 1
}

// decodeString decodes the text of a STRING token, quotes included. It
// keeps line breaks (a string may span lines), as "\n" also where the file
// has "\r\n", and reports the escape sequences it does not know; each
// decodes to the escaped character.
func decodeString(text string) (string, []badEscape) {
	rs := []rune(text)
	if len(rs) < 2 {
		return "", nil
	}
	body := rs[1 : len(rs)-1]
	var b strings.Builder
	var bad []badEscape
	line, col := 0, 1 // col of body[0], relative to the quote
	for i := 0; i < len(body); i++ {
		r := body[i]
		if r == '\\' && i+1 < len(body) {
			e := body[i+1]
			if v, ok := escapes[e]; ok {
				b.WriteRune(v)
			} else {
				bad = append(bad, badEscape{text: `\` + string(e), line: line, col: col})
				b.WriteRune(e)
			}
			i++
			col += 2
			if e == '\n' {
				line, col = line+1, 1
			}
			continue
		}
		if r == '\r' && i+1 < len(body) && body[i+1] == '\n' {
			continue // a line break is "\n", whatever the file's line endings
		}
		b.WriteRune(r)
		col++
		if r == '\n' {
			line, col = line+1, 1
		}
	}
	return b.String(), bad
}

// decimal writes r exactly, in decimal when its expansion is finite
// (every literal's is: decimals, percentages, durations, unit amounts),
// else as a fraction.
func decimal(r *big.Rat) string {
	if r.IsInt() {
		return r.Num().String()
	}
	// The expansion is finite when the denominator has no prime factor
	// other than 2 and 5; it then has as many digits as the larger
	// exponent of the two.
	d := new(big.Int).Set(r.Denom())
	digits := 0
	for _, p := range []int64{2, 5} {
		n := 0
		for q, m := new(big.Int), new(big.Int); ; n++ {
			q.QuoRem(d, big.NewInt(p), m)
			if m.Sign() != 0 {
				break
			}
			d.Set(q)
		}
		digits = max(digits, n)
	}
	if d.Cmp(big.NewInt(1)) != 0 {
		return r.RatString()
	}
	return r.FloatString(digits)
}
