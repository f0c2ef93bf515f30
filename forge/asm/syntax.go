package asm

import (
	"strings"

	"github.com/genesis-toolchain/genesis/forge/bytecode"
)

// A Field is the part of an encoded instruction an operand goes into.
type Field uint8

const (
	FieldA   Field = iota
	FieldB         // the b byte
	FieldC         // the c byte
	FieldImm       // the imm32, or LI's 64-bit word
)

// A SlotKind is what an instruction operand may be.
type SlotKind uint8

const (
	SlotReg    SlotKind = iota // a register
	SlotChan                   // a channel number, 0..255
	SlotU32                    // an unsigned 32-bit number
	SlotOffset                 // a 32-bit displacement, signed or not
	SlotTarget                 // a code address: a name or a number
	SlotImm64                  // a 64-bit value: a name or a number
)

// A Slot is one operand of an instruction format.
type Slot struct {
	Name  string // what the operand is called in messages and docs
	Kind  SlotKind
	Field Field
}

// slots gives the operands of each instruction format in assembly order:
// the operand-to-field mapping that bytecode.Format documents. It is the
// only operand table; mnemonics and formats come from the opcode table.
var slots = [...][]Slot{
	bytecode.FmtNone:     nil,
	bytecode.FmtRRR:      {{"rd", SlotReg, FieldA}, {"rs1", SlotReg, FieldB}, {"rs2", SlotReg, FieldC}},
	bytecode.FmtRR:       {{"rd", SlotReg, FieldA}, {"rs1", SlotReg, FieldB}},
	bytecode.FmtR:        {{"r", SlotReg, FieldA}},
	bytecode.FmtMem:      {{"r", SlotReg, FieldA}, {"base", SlotReg, FieldB}, {"offset", SlotOffset, FieldImm}},
	bytecode.FmtTarget:   {{"target", SlotTarget, FieldImm}},
	bytecode.FmtRTarget:  {{"rs", SlotReg, FieldA}, {"target", SlotTarget, FieldImm}},
	bytecode.FmtRRTarget: {{"rs1", SlotReg, FieldA}, {"rs2", SlotReg, FieldB}, {"target", SlotTarget, FieldImm}},
	bytecode.FmtLI:       {{"rd", SlotReg, FieldA}, {"imm64", SlotImm64, FieldImm}},
	bytecode.FmtImm:      {{"code", SlotU32, FieldImm}},
	bytecode.FmtChanRLen: {{"channel", SlotChan, FieldC}, {"r", SlotReg, FieldA}, {"len", SlotU32, FieldImm}},
	bytecode.FmtChanR:    {{"channel", SlotChan, FieldC}, {"rd", SlotReg, FieldA}},
}

// Slots returns the operands of instruction format f in assembly order
// (nil for a format that takes none, or one that does not exist). The
// slice is shared: callers must not change it.
func Slots(f bytecode.Format) []Slot {
	if int(f) >= len(slots) {
		return nil
	}
	return slots[f]
}

// SlotNames lists the operands of format f, for messages: "rd, rs1, rs2".
func SlotNames(f bytecode.Format) string {
	var names []string
	for _, s := range Slots(f) {
		names = append(names, s.Name)
	}
	return strings.Join(names, ", ")
}

// Set stores v in the field of in that the slot names: for a register or
// channel, the low byte.
func (s Slot) Set(in *bytecode.Inst, v uint64) {
	switch s.Field {
	case FieldA:
		in.A = uint8(v)
	case FieldB:
		in.B = uint8(v)
	case FieldC:
		in.C = uint8(v)
	case FieldImm:
		in.Imm = v
	}
}

// Get returns the field of in that the slot names.
func (s Slot) Get(in bytecode.Inst) uint64 {
	switch s.Field {
	case FieldA:
		return uint64(in.A)
	case FieldB:
		return uint64(in.B)
	case FieldC:
		return uint64(in.C)
	}
	return in.Imm
}

// IsIdent reports whether s is written in Forge assembly without quotes:
// it lexes as one identifier, not as a register or a hash.
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
	return !IsRegister(s) && !IsHash(s)
}

func isLetter(c byte) bool { return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' }

// IsHex reports whether c is a hexadecimal digit.
func IsHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

// IsRegister reports whether s lexes as a register: r or R, then digits.
func IsRegister(s string) bool {
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

// IsHash reports whether s lexes as a hash: 64 hexadecimal digits.
func IsHash(s string) bool {
	if len(s) != 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !IsHex(s[i]) {
			return false
		}
	}
	return true
}

// Quote returns b as a string literal of Forge assembly that decodes to b.
// The result is printable ASCII, whatever b holds.
func Quote(b []byte) string {
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

// QuoteName returns a symbol name as Forge assembly writes it: as is if it
// is an identifier, else quoted.
func QuoteName(name string) string {
	if IsIdent(name) {
		return name
	}
	return Quote([]byte(name))
}
