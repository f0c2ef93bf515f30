package fasm

import (
	"errors"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/genesis-toolchain/genesis/forge/bytecode"
)

// A field is the part of an encoded instruction an operand goes into.
type field uint8

const (
	fieldA field = iota
	fieldB
	fieldC
	fieldImm // the imm32, or LI's 64-bit word
)

// A slotKind is what an instruction operand may be.
type slotKind uint8

const (
	slotReg    slotKind = iota // a register
	slotChan                   // a channel number, 0..255
	slotU32                    // an unsigned 32-bit number
	slotOffset                 // a 32-bit displacement, signed or not
	slotTarget                 // a code address: a name or a number
	slotImm64                  // a 64-bit value: a name or a number
)

// A slot is one operand of an instruction format.
type slot struct {
	name  string // what the operand is called in messages and docs
	kind  slotKind
	field field
}

// slots gives the operands of each instruction format in assembly order:
// the operand-to-field mapping that bytecode.Format documents. It is the
// only operand table; mnemonics and formats come from the opcode table.
var slots = [...][]slot{
	bytecode.FmtNone:     nil,
	bytecode.FmtRRR:      {{"rd", slotReg, fieldA}, {"rs1", slotReg, fieldB}, {"rs2", slotReg, fieldC}},
	bytecode.FmtRR:       {{"rd", slotReg, fieldA}, {"rs1", slotReg, fieldB}},
	bytecode.FmtR:        {{"r", slotReg, fieldA}},
	bytecode.FmtMem:      {{"r", slotReg, fieldA}, {"base", slotReg, fieldB}, {"offset", slotOffset, fieldImm}},
	bytecode.FmtTarget:   {{"target", slotTarget, fieldImm}},
	bytecode.FmtRTarget:  {{"rs", slotReg, fieldA}, {"target", slotTarget, fieldImm}},
	bytecode.FmtRRTarget: {{"rs1", slotReg, fieldA}, {"rs2", slotReg, fieldB}, {"target", slotTarget, fieldImm}},
	bytecode.FmtLI:       {{"rd", slotReg, fieldA}, {"imm64", slotImm64, fieldImm}},
	bytecode.FmtImm:      {{"code", slotU32, fieldImm}},
	bytecode.FmtChanRLen: {{"channel", slotChan, fieldC}, {"r", slotReg, fieldA}, {"len", slotU32, fieldImm}},
	bytecode.FmtChanR:    {{"channel", slotChan, fieldC}, {"rd", slotReg, fieldA}},
}

// slotNames lists the operands of format f, for messages: "rd, rs1, rs2".
func slotNames(f bytecode.Format) string {
	var names []string
	for _, s := range slots[f] {
		names = append(names, s.name)
	}
	return strings.Join(names, ", ")
}

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

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

// maxName is the longest symbol name FRGP can hold (a u16 length).
const maxName = 1<<16 - 1

// IsIdent reports whether s lexes as one IDENT token of the grammar, and
// so can be written without quotes.
func IsIdent(s string) bool {
	if s == "" || !(isLetter(s[0]) || s[0] == '_') {
		return false
	}
	for i := 1; i < len(s); i++ {
		c := s[i]
		if !(isLetter(c) || '0' <= c && c <= '9' || c == '_' || c == '.') {
			return false
		}
	}
	// REG and HASH come before IDENT in the lexer.
	return !isRegister(s) && !isHash(s)
}

func isLetter(c byte) bool { return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' }

// isRegister reports whether s lexes as a REG token.
func isRegister(s string) bool {
	if len(s) < 2 || s[0] != 'r' && s[0] != 'R' {
		return false
	}
	for i := 1; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// isHash reports whether s lexes as a HASH token.
func isHash(s string) bool {
	if len(s) != 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !isHex(s[i]) {
			return false
		}
	}
	return true
}

// quote writes b as a STRING token that decodes to b. The result is
// printable ASCII, whatever b holds.
func quote(b []byte) string {
	var sb strings.Builder
	sb.WriteByte('"')
	for _, c := range b {
		switch c {
		case '\n':
			sb.WriteString(`\n`)
		case '\t':
			sb.WriteString(`\t`)
		case '\r':
			sb.WriteString(`\r`)
		case 0:
			sb.WriteString(`\0`)
		case '\\', '"':
			sb.WriteByte('\\')
			sb.WriteByte(c)
		default:
			if c < 0x20 || c > 0x7e {
				const hex = "0123456789abcdef"
				sb.WriteString(`\x`)
				sb.WriteByte(hex[c>>4])
				sb.WriteByte(hex[c&15])
			} else {
				sb.WriteByte(c)
			}
		}
	}
	sb.WriteByte('"')
	return sb.String()
}

// quoteName writes a symbol name: as is if it is an identifier, else
// quoted.
func quoteName(name string) string {
	if IsIdent(name) {
		return name
	}
	return quote([]byte(name))
}
