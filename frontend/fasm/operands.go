package fasm

import (
	"errors"
	"strconv"
	"unicode/utf8"

	"github.com/genesis-toolchain/genesis/forge/asm"
)

// A number is the value of an intOperand, kept as a sign and a magnitude
// so that every value from -2^63 to 2^64-1 is exact.
type number struct {
	neg bool
	mag uint64
}

// Ranges of numbers, as (largest magnitude of a negative value, largest
// value).
const (
	maxU8    = 1<<8 - 1
	maxU32   = 1<<32 - 1
	maxU64   = 1<<64 - 1
	minInt8  = 1 << 7  // magnitude of -2^7
	minInt32 = 1 << 31 // magnitude of -2^31
	minInt64 = 1 << 63 // magnitude of -2^63
)

// within reports whether n lies in [-minNeg, max].
func (n number) within(minNeg, max uint64) bool {
	if n.neg {
		return n.mag <= minNeg
	}
	return n.mag <= max
}

// bits is n in 64-bit two's complement.
func (n number) bits() uint64 {
	if n.neg {
		return -n.mag
	}
	return n.mag
}

// rangeText writes [-minNeg, max] for a message.
func rangeText(minNeg, max uint64) string {
	lo := "0"
	if minNeg > 0 {
		lo = "-" + strconv.FormatUint(minNeg, 10)
	}
	return lo + ".." + strconv.FormatUint(max, 10)
}

// errMalformed and errTooLarge are the ways parseUint fails.
var (
	errMalformed = errors.New("malformed")
	errTooLarge  = errors.New("too large")
)

// parseUint reads the text of an INT token: decimal digits, or 0x and hex
// digits. Unlike strconv's base 0, a leading 0 does not mean octal.
func parseUint(text string) (uint64, error) {
	digits, base := text, 10
	if len(text) > 1 && text[0] == '0' && (text[1] == 'x' || text[1] == 'X') {
		digits, base = text[2:], 16
	}
	v, err := strconv.ParseUint(digits, base, 64)
	if err != nil {
		if errors.Is(err, strconv.ErrRange) {
			return 0, errTooLarge
		}
		return 0, errMalformed
	}
	return v, nil
}

// decodeString decodes the text of a STRING token, quotes included. On a
// bad escape it returns the index, in code points from the opening quote,
// of its backslash, and a message.
func decodeString(text string) (b []byte, badAt int, msg string) {
	s := text[1 : len(text)-1]
	b = make([]byte, 0, len(s))
	col := 1 // code points from the opening quote
	for i := 0; i < len(s); {
		c := s[i]
		if c != '\\' {
			_, n := utf8.DecodeRuneInString(s[i:])
			b = append(b, s[i:i+n]...)
			i += n
			col++
			continue
		}
		// The lexer guarantees a character after every backslash.
		e, n := utf8.DecodeRuneInString(s[i+1:])
		switch e {
		case 'n':
			b = append(b, '\n')
		case 't':
			b = append(b, '\t')
		case 'r':
			b = append(b, '\r')
		case '0':
			b = append(b, 0)
		case '\\', '"':
			b = append(b, byte(e))
		case 'x':
			if i+4 > len(s) || !isHex(s[i+2]) || !isHex(s[i+3]) {
				return nil, col, `\x needs two hex digits`
			}
			v, _ := strconv.ParseUint(s[i+2:i+4], 16, 8)
			b = append(b, byte(v))
			i += 4
			col += 4
			continue
		default:
			return nil, col, "unknown escape \\" + string(e) + ` (use \n \t \r \0 \\ \" or \xNN)`
		}
		i += 1 + n
		col += 2
	}
	return b, 0, ""
}

// maxName is the longest symbol name FRGP can hold (a u16 length).
const maxName = 1<<16 - 1

// IsIdent reports whether s lexes as one IDENT token of the grammar, and
// so can be written without quotes: asm.IsIdent.
func IsIdent(s string) bool { return asm.IsIdent(s) }

func isRegister(s string) bool { return asm.IsRegister(s) }

func isHash(s string) bool { return asm.IsHash(s) }

func isHex(c byte) bool { return asm.IsHex(c) }

func isLetter(c byte) bool { return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' }
