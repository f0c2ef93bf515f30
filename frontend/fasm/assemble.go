package fasm

import (
	"encoding/binary"
	"encoding/hex"
	"math/bits"
	"strings"
	"unicode/utf8"

	"github.com/genesis-toolchain/genesis/diag"
	"github.com/genesis-toolchain/genesis/forge/asm"
	"github.com/genesis-toolchain/genesis/forge/bytecode"
)

// The text syntax reads the lines in order and turns each into calls of
// an asm.Builder, which lays the program out and resolves the names. What
// only the text can get wrong (a malformed operand, a directive in the
// wrong section) is reported here; what only the layout can tell (an
// undefined name, a target that is no instruction) the Builder reports.

// An assembler holds the state of one Assemble call.
type assembler struct {
	file string
	b    *asm.Builder // where the lines go, and what is wrong with them

	inData   bool      // the current section is .data
	entryPos *diag.Pos // where .entry was given
}

// errorf reports an error at pos.
func (a *assembler) errorf(pos diag.Pos, code, format string, args ...any) {
	a.b.Errorf(pos, code, format, args...)
}

// read reads the lines into the Builder.
func (a *assembler) read(lines []line) {
	for _, ln := range lines {
		for _, l := range ln.labels {
			a.label(l)
		}
		if s := ln.stmt; s != nil {
			if strings.HasPrefix(s.name.text, ".") {
				a.directive(s)
			} else {
				a.instruction(s)
			}
		}
	}
}

func (a *assembler) label(op operand) {
	name, ok := a.name(op)
	if !ok {
		return
	}
	if a.inData {
		a.b.DataLabel(name, op.pos)
	} else {
		a.b.Label(name, op.pos)
	}
}

// name returns the symbol name an identOperand or stringOperand spells.
func (a *assembler) name(op operand) (string, bool) {
	var name string
	switch op.kind {
	case identOperand:
		name = op.tok.text
	case stringOperand:
		b, ok := a.decode(op)
		if !ok {
			return "", false
		}
		name = string(b)
		switch {
		case name == "":
			a.errorf(op.pos, codeDirective, "a name cannot be empty")
			return "", false
		case !utf8.ValidString(name):
			a.errorf(op.pos, codeDirective, "name %s is not valid UTF-8", abbreviate(op.tok.text))
			return "", false
		}
	default:
		a.errorf(op.pos, codeOperand, "expected a name, not the %s", op.describe())
		return "", false
	}
	if len(name) > asm.MaxName {
		a.errorf(op.pos, codeDirective, "name %s is longer than %d bytes", abbreviate(op.tok.text), asm.MaxName)
		return "", false
	}
	return name, true
}

// decode returns the bytes a stringOperand holds.
func (a *assembler) decode(op operand) ([]byte, bool) {
	b, badAt, msg := decodeString(op.tok.text)
	if msg != "" {
		pos := op.tok.pos
		pos.Col += badAt
		a.errorf(pos, codeDirective, "%s", msg)
		return nil, false
	}
	return b, true
}

// number returns the value of an intOperand if it lies in [-minNeg, max];
// what names the operand for the message.
func (a *assembler) number(op operand, what string, minNeg, max uint64) (number, bool) {
	switch op.kind {
	case identOperand, stringOperand:
		a.errorf(op.pos, codeOperand, "%s must be a number, not the %s (labels go only in jump targets, LI and .u64)", what, op.describe())
		return number{}, false
	case regOperand:
		a.errorf(op.pos, codeOperand, "%s must be a number, not the %s", what, op.describe())
		return number{}, false
	}
	mag, err := parseUint(op.tok.text)
	n := number{neg: op.neg, mag: mag}
	switch {
	case err == errMalformed:
		a.errorf(op.tok.pos, codeSyntax, "malformed number %s (numbers are decimal, or hexadecimal after 0x)", abbreviate(op.tok.text))
		return n, false
	case err == errTooLarge || !n.within(minNeg, max):
		a.errorf(op.pos, codeRange, "%s %s is out of range (%s)", what, strings.TrimPrefix(op.describe(), "number "), rangeText(minNeg, max))
		return n, false
	}
	return n, true
}

// register returns the number of a regOperand.
// validOperand returns the value of op in slot sl when op is a valid
// register or number for it; otherwise operand reports what is wrong.
func validOperand(sl asm.Slot, op operand) (uint64, bool) {
	var minNeg, max uint64
	switch sl.Kind {
	case asm.SlotReg:
		if op.kind != regOperand {
			return 0, false
		}
		n, err := parseUint(op.tok.text[1:])
		return n, err == nil && n <= maxU8
	case asm.SlotChan:
		max = maxU8
	case asm.SlotU32:
		max = maxU32
	case asm.SlotOffset:
		minNeg, max = minInt32, maxU32
	case asm.SlotImm64:
		minNeg, max = minInt64, maxU64
	default:
		return 0, false // targets are resolved later
	}
	if op.kind != intOperand {
		return 0, false
	}
	mag, err := parseUint(op.tok.text)
	n := number{neg: op.neg, mag: mag}
	if err != nil || !n.within(minNeg, max) {
		return 0, false
	}
	switch sl.Kind {
	case asm.SlotOffset:
		return uint64(uint32(n.bits())), true
	case asm.SlotImm64:
		return n.bits(), true
	}
	return n.mag, true
}

func (a *assembler) register(op operand, what string) (uint8, bool) {
	if op.kind != regOperand {
		a.errorf(op.pos, codeOperand, "%s must be a register, not the %s", what, op.describe())
		return 0, false
	}
	n, err := parseUint(op.tok.text[1:])
	if err != nil || n > maxU8 {
		a.errorf(op.pos, codeRange, "there is no register %s (registers are r0..r255)", op.tok.text)
		return 0, false
	}
	return uint8(n), true
}

// instruction checks an instruction's operands and gives it to the
// Builder: a name in a target or LI word is resolved by the Builder once
// every label is known.
func (a *assembler) instruction(s *statement) {
	info := bytecode.LookupName(strings.ToUpper(s.name.text))
	if info == nil {
		a.errorf(s.name.pos, codeMnemonic, "unknown instruction %s", s.name.text)
		return
	}
	if a.inData {
		a.errorf(s.name.pos, codeDirective, "%s in .data: instructions belong in .text", info.Name)
		return
	}
	in := bytecode.Inst{Op: info.Op}
	a.b.At(s.name.pos)
	want := asm.Slots(info.Format)
	if len(s.ops) != len(want) {
		if len(want) == 0 {
			a.errorf(s.ops[0].pos, codeOperand, "%s takes no operands", info.Name)
		} else {
			a.errorf(s.name.pos, codeOperand, "%s takes %d operand%s (%s), not %d",
				info.Name, len(want), plural(len(want)), asm.SlotNames(info.Format), len(s.ops))
		}
		a.b.Inst(in) // it takes its place: later labels keep their addresses
		return
	}
	// The operands that are right are set and the names resolved even
	// when another operand is wrong, so that every error is reported.
	var refName string
	var refPos, targetPos *diag.Pos
	for i, sl := range want {
		v, good, name := a.operand(sl, s.ops[i], info.Name)
		switch {
		case name != "":
			refName, refPos = name, &s.ops[i].pos
		case good:
			sl.Set(&in, v)
			if sl.Kind == asm.SlotTarget {
				targetPos = &s.ops[i].pos
			}
		}
	}
	switch {
	case refPos != nil:
		a.b.InstRef(in, refName, *refPos)
	case targetPos != nil:
		a.b.Target(in, *targetPos)
	default:
		a.b.Inst(in)
	}
}

// operand checks one operand of an instruction and returns its value, or
// the name it holds (a target or an LI word); good is false on an error.
func (a *assembler) operand(sl asm.Slot, op operand, mnemonic string) (v uint64, good bool, name string) {
	// The common case, a valid register or number, needs no description.
	if v, ok := validOperand(sl, op); ok {
		return v, true, ""
	}
	what := sl.Name + " of " + mnemonic
	switch sl.Kind {
	case asm.SlotReg:
		r, ok := a.register(op, what)
		return uint64(r), ok, ""
	case asm.SlotChan:
		n, ok := a.number(op, what, 0, maxU8)
		return n.mag, ok, ""
	case asm.SlotU32:
		n, ok := a.number(op, what, 0, maxU32)
		return n.mag, ok, ""
	case asm.SlotOffset:
		n, ok := a.number(op, what, minInt32, maxU32)
		return uint64(uint32(n.bits())), ok, ""
	}
	// A target or an imm64: a name or a number.
	switch op.kind {
	case identOperand, stringOperand:
		if name, ok := a.name(op); ok {
			return 0, false, name
		}
		return 0, false, ""
	case regOperand:
		a.errorf(op.pos, codeOperand, "%s must be a label or a number, not the %s", what, op.describe())
		return 0, false, ""
	}
	if sl.Kind == asm.SlotImm64 {
		n, ok := a.number(op, what, minInt64, maxU64)
		return n.bits(), ok, ""
	}
	n, ok := a.number(op, what, 0, maxU32)
	return n.mag, ok, ""
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// directives maps each directive, in lower case, to its handler.
var directives = map[string]func(*assembler, *statement){
	".text":   (*assembler).text,
	".data":   (*assembler).dataSection,
	".ascii":  (*assembler).ascii,
	".byte":   (*assembler).byteDirective,
	".u64":    (*assembler).u64,
	".zero":   (*assembler).zero,
	".align":  (*assembler).align,
	".reloc":  (*assembler).reloc,
	".entry":  (*assembler).entryDirective,
	".import": (*assembler).importDirective,
	".symbol": (*assembler).symbol,
	".meta":   (*assembler).metaDirective,
}

func (a *assembler) directive(s *statement) {
	fn := directives[strings.ToLower(s.name.text)]
	if fn == nil {
		a.errorf(s.name.pos, codeDirective, "unknown directive %s", s.name.text)
		return
	}
	if s.hash != nil && strings.ToLower(s.name.text) != ".import" {
		a.errorf(s.hash.pos, codeOperand, "%s takes no hash (only .import does)", s.name.text)
		return
	}
	fn(a, s)
}

// operands checks that s has between min and max operands (max < 0: no
// limit); form describes them for the message.
func (a *assembler) operands(s *statement, min, max int, form string) bool {
	n := len(s.ops)
	if n >= min && (max < 0 || n <= max) {
		return true
	}
	pos := s.name.pos
	if n > 0 && max >= 0 && n > max {
		pos = s.ops[max].pos
	}
	if form == "" {
		a.errorf(pos, codeOperand, "%s takes no operands", s.name.text)
	} else {
		a.errorf(pos, codeOperand, "usage: %s %s", s.name.text, form)
	}
	return false
}

// inDataOnly reports whether a data directive is in .data.
func (a *assembler) inDataOnly(s *statement) bool {
	if !a.inData {
		a.errorf(s.name.pos, codeDirective, "%s in .text: data belongs in .data", s.name.text)
	}
	return a.inData
}

func (a *assembler) text(s *statement) {
	if a.operands(s, 0, 0, "") {
		a.inData = false
	}
}

func (a *assembler) dataSection(s *statement) {
	if a.operands(s, 0, 0, "") {
		a.inData = true
	}
}

func (a *assembler) ascii(s *statement) {
	if !a.operands(s, 1, -1, `"text", ...`) || !a.inDataOnly(s) {
		return
	}
	for _, op := range s.ops {
		if op.kind != stringOperand {
			a.errorf(op.pos, codeOperand, ".ascii takes strings, not the %s", op.describe())
			continue
		}
		if b, ok := a.decode(op); ok {
			a.b.At(op.pos)
			a.b.Bytes(b)
		}
	}
}

func (a *assembler) byteDirective(s *statement) {
	if !a.operands(s, 1, -1, "value, ...") || !a.inDataOnly(s) {
		return
	}
	var bytes []byte
	for _, op := range s.ops {
		if n, ok := a.number(op, "byte", minInt8, maxU8); ok {
			bytes = append(bytes, byte(n.bits()))
		}
	}
	a.b.At(s.ops[0].pos)
	a.b.Bytes(bytes)
}

func (a *assembler) u64(s *statement) {
	if !a.operands(s, 1, -1, "value|name, ...") || !a.inDataOnly(s) {
		return
	}
	for _, op := range s.ops {
		if op.kind == identOperand || op.kind == stringOperand {
			if name, ok := a.name(op); ok {
				a.b.Addr(name, op.pos)
			}
			continue
		}
		if n, ok := a.number(op, ".u64 value", minInt64, maxU64); ok {
			a.b.At(op.pos)
			a.b.Bytes(binary.LittleEndian.AppendUint64(nil, n.bits()))
		}
	}
}

func (a *assembler) zero(s *statement) {
	if !a.operands(s, 1, 1, "count") || !a.inDataOnly(s) {
		return
	}
	if n, ok := a.number(s.ops[0], ".zero count", 0, maxU64); ok {
		a.b.At(s.ops[0].pos)
		a.b.Zero(n.mag)
	}
}

// maxAlign is the largest alignment of .align.
const maxAlign = 1 << 16

func (a *assembler) align(s *statement) {
	if !a.operands(s, 1, 1, "alignment") {
		return
	}
	op := s.ops[0]
	n, ok := a.number(op, ".align alignment", 0, maxAlign)
	if !ok {
		return
	}
	if bits.OnesCount64(n.mag) != 1 {
		a.errorf(op.pos, codeRange, ".align alignment %s is not a power of two", op.tok.text)
		return
	}
	if !a.inData {
		// Every instruction is 8 bytes or 16, so code is always 8-aligned;
		// more would need padding with NOPs, which cost ticks when run.
		if n.mag > 8 {
			a.errorf(op.pos, codeRange, ".align in .text cannot exceed 8 (code is always 8-aligned)")
		}
		return
	}
	a.b.Align(n.mag, op.pos)
}

func (a *assembler) reloc(s *statement) {
	if !a.operands(s, 1, 1, "name") || !a.inDataOnly(s) {
		return
	}
	if name, ok := a.name(s.ops[0]); ok {
		a.b.Reloc(name, s.ops[0].pos)
	}
}

func (a *assembler) entryDirective(s *statement) {
	if !a.operands(s, 1, 1, "label|address") {
		return
	}
	op := s.ops[0]
	if a.entryPos != nil {
		a.errorf(op.pos, codeDuplicate, "the entry is already set at line %d", a.entryPos.Line)
		return
	}
	switch op.kind {
	case regOperand:
		a.errorf(op.pos, codeOperand, ".entry takes a label or an address, not the %s", op.describe())
		return
	case intOperand:
		a.entryPos = &op.pos
		if n, ok := a.number(op, "entry", 0, maxU64); ok {
			a.b.Entry(n.mag, op.pos)
		}
	default:
		a.entryPos = &op.pos
		if name, ok := a.name(op); ok {
			a.b.EntryLabel(name, op.pos)
		}
	}
}

func (a *assembler) importDirective(s *statement) {
	if s.hash == nil {
		a.errorf(s.name.pos, codeOperand, "usage: .import sha256 name, ... (the sha256 of the dependency, 64 hex digits)")
		return
	}
	if !a.operands(s, 1, -1, "sha256 name, ...") {
		return
	}
	var from [32]byte
	hex.Decode(from[:], []byte(s.hash.text)) // the lexer made it 64 hex digits
	for _, op := range s.ops {
		if name, ok := a.name(op); ok {
			a.b.Import(from, name, op.pos)
		}
	}
}

func (a *assembler) symbol(s *statement) {
	if !a.operands(s, 2, 2, "name, address|label") {
		return
	}
	name, ok := a.name(s.ops[0])
	if !ok {
		return
	}
	v := s.ops[1]
	switch v.kind {
	case regOperand:
		a.errorf(v.pos, codeOperand, ".symbol takes an address or a label, not the %s", v.describe())
	case intOperand:
		if n, ok := a.number(v, "address", 0, maxU64); ok {
			a.b.Symbol(name, s.ops[0].pos, n.mag, v.pos)
		}
	default:
		if label, ok := a.name(v); ok {
			a.b.SymbolAt(name, s.ops[0].pos, label, v.pos)
		}
	}
}

func (a *assembler) metaDirective(s *statement) {
	if !a.operands(s, 1, -1, `"bytes", ...`) {
		return
	}
	for _, op := range s.ops {
		if op.kind != stringOperand {
			a.errorf(op.pos, codeOperand, ".meta takes strings, not the %s", op.describe())
			continue
		}
		if b, ok := a.decode(op); ok {
			a.b.Meta(b)
		}
	}
}
