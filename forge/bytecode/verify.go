package bytecode

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"unicode/utf8"
)

// DecodeAt decodes the instruction at byte offset off of code. It checks
// that the opcode is known, that fields the instruction does not use are
// zero, and that an LI has its second word.
func DecodeAt(code []byte, off int) (Inst, error) {
	if off < 0 || off+8 > len(code) {
		return Inst{}, &FormatError{Offset: int64(off), Where: "code", Msg: "truncated instruction"}
	}
	w := code[off : off+8]
	in := Inst{Op: Opcode(w[0]), A: w[1], B: w[2], C: w[3], Imm: uint64(binary.LittleEndian.Uint32(w[4:]))}
	info := Lookup(in.Op)
	if info == nil {
		return in, &FormatError{Offset: int64(off), Where: "code", Msg: fmt.Sprintf("unknown opcode 0x%02x", w[0])}
	}
	ua, ub, uc, ui := info.Format.Uses()
	if info.Format == FmtLI {
		ui = false
	}
	for _, f := range []struct {
		used bool
		v    uint64
		name string
	}{{ua, uint64(in.A), "a"}, {ub, uint64(in.B), "b"}, {uc, uint64(in.C), "c"}, {ui, in.Imm, "imm"}} {
		if !f.used && f.v != 0 {
			return in, &FormatError{Offset: int64(off), Where: "code",
				Msg: fmt.Sprintf("non-canonical %s: unused field %s is %d, must be 0", info.Name, f.name, f.v)}
		}
	}
	if info.Format == FmtLI {
		if off+16 > len(code) {
			return in, &FormatError{Offset: int64(off), Where: "code", Msg: "LI is missing its 64-bit immediate word"}
		}
		in.Imm = binary.LittleEndian.Uint64(code[off+8:])
	}
	return in, nil
}

// Insts decodes the whole code section, verifying each instruction as
// DecodeAt does. The result maps each instruction's byte offset to it, in
// order.
func Insts(code []byte) ([]Inst, []int, error) {
	if len(code)%8 != 0 {
		return nil, nil, &FormatError{Offset: int64(len(code) &^ 7), Where: "code",
			Msg: fmt.Sprintf("code length %d is not a multiple of 8", len(code))}
	}
	var insts []Inst
	var offs []int
	for off := 0; off < len(code); {
		in, err := DecodeAt(code, off)
		if err != nil {
			return nil, nil, err
		}
		insts = append(insts, in)
		offs = append(offs, off)
		off += in.Size()
	}
	return insts, offs, nil
}

// MaxCode is the largest code section: jump targets are 32-bit.
const MaxCode = 1<<32 - 8

// IsTransfer reports whether op's imm is a code address (a jump or call
// target).
func IsTransfer(op Opcode) bool {
	switch op {
	case JMP, JZ, JNZ, JLT, JLTS, JEQ, JNE, CALL:
		return true
	}
	return false
}

// Verify checks everything a loader must know before running p: every
// instruction is canonical and known, every jump and call targets an
// instruction start, the entry is an instruction start, symbols lie within
// code and data, and every relocation is well-formed and consistent with
// the value it marks.
func (p *Program) Verify() error {
	if uint64(len(p.Code)) > MaxCode {
		return &FormatError{Where: "code", Msg: fmt.Sprintf("code is %d bytes, the limit is %d", len(p.Code), uint64(MaxCode))}
	}
	insts, offs, err := Insts(p.Code)
	if err != nil {
		return err
	}
	starts := make(map[uint64]Opcode, len(insts))
	for i, in := range insts {
		starts[uint64(offs[i])] = in.Op
	}
	if err := p.verifyTables(); err != nil {
		return err
	}
	imported := map[string]bool{}
	for _, im := range p.Imports {
		for _, s := range im.Symbols {
			if imported[s] {
				return &FormatError{Where: "imports", Msg: fmt.Sprintf("symbol %q is imported twice", s)}
			}
			imported[s] = true
		}
	}
	// Targets of imported symbols are placeholders (0) until link time.
	relocTarget := map[uint32]bool{}
	for _, r := range p.Relocs {
		if r.Section == SectionCode && r.Kind == RelocTarget && imported[r.Symbol] {
			relocTarget[r.Offset] = true
		}
	}
	for i, in := range insts {
		if !IsTransfer(in.Op) || relocTarget[uint32(offs[i])] {
			continue
		}
		if _, ok := starts[in.Imm]; !ok {
			return &FormatError{Offset: int64(offs[i]), Where: "code",
				Msg: fmt.Sprintf("%s target %d (0x%x) is not the start of an instruction", in.Op, in.Imm, in.Imm)}
		}
	}
	if len(insts) == 0 {
		return &FormatError{Where: "entry", Msg: "program has no code"}
	}
	if _, ok := starts[p.Entry]; !ok {
		return &FormatError{Where: "entry", Msg: fmt.Sprintf("entry %d (0x%x) is not the start of an instruction", p.Entry, p.Entry)}
	}
	limit := uint64(len(p.Code)) + uint64(len(p.Data))
	addrOf := make(map[string]uint64, len(p.Symbols))
	for _, s := range p.Symbols {
		if s.Addr > limit {
			return &FormatError{Where: "symbols", Msg: fmt.Sprintf("symbol %q at %d lies beyond code and data (%d bytes)", s.Name, s.Addr, limit)}
		}
		if imported[s.Name] {
			return &FormatError{Where: "symbols", Msg: fmt.Sprintf("symbol %q is both defined and imported", s.Name)}
		}
		if _, dup := addrOf[s.Name]; dup {
			return &FormatError{Where: "symbols", Msg: fmt.Sprintf("symbol %q is defined twice", s.Name)}
		}
		addrOf[s.Name] = s.Addr
	}
	for _, r := range p.Relocs {
		if err := p.verifyReloc(r, starts, addrOf, imported); err != nil {
			return err
		}
	}
	return nil
}

// verifyTables checks what Decode checks while reading, so that a program
// built in memory that passes Verify always encodes to a file that loads:
// valid names, sorted unique tables, non-empty imports.
func (p *Program) verifyTables() error {
	bad := func(where, format string, args ...any) error {
		return &FormatError{Where: where, Msg: fmt.Sprintf(format, args...)}
	}
	for i, s := range p.Symbols {
		if err := checkName(s.Name); err != "" {
			return bad("symbols", "symbol %q: %s", s.Name, err)
		}
		if i > 0 && p.Symbols[i-1].Name >= s.Name {
			return bad("symbols", "symbol %q is out of order or duplicated (symbols are sorted by name)", s.Name)
		}
	}
	for i, im := range p.Imports {
		if i > 0 && bytes.Compare(p.Imports[i-1].From[:], im.From[:]) >= 0 {
			return bad("imports", "import %x is out of order or duplicated (imports are sorted by hash)", im.From)
		}
		if len(im.Symbols) == 0 {
			return bad("imports", "import %x names no symbols", im.From)
		}
		for j, s := range im.Symbols {
			if err := checkName(s); err != "" {
				return bad("imports", "imported symbol %q: %s", s, err)
			}
			if j > 0 && im.Symbols[j-1] >= s {
				return bad("imports", "imported symbol %q is out of order or duplicated", s)
			}
		}
	}
	for i, r := range p.Relocs {
		if err := checkName(r.Symbol); err != "" {
			return bad("relocations", "relocation %d:%d symbol %q: %s", r.Section, r.Offset, r.Symbol, err)
		}
		if i > 0 {
			prev := p.Relocs[i-1]
			if prev.Section > r.Section || (prev.Section == r.Section && prev.Offset >= r.Offset) {
				return bad("relocations", "relocation at %d:%d is out of order or duplicated", r.Section, r.Offset)
			}
		}
	}
	if uint64(len(p.Data)) > math.MaxUint32 || uint64(len(p.Metadata)) > math.MaxUint32 {
		return bad("file", "data or metadata exceeds 4 GiB")
	}
	return nil
}

// checkName returns why name cannot be a symbol name, or "".
func checkName(name string) string {
	switch {
	case name == "":
		return "empty name"
	case len(name) > math.MaxUint16:
		return "name longer than 65535 bytes"
	case !utf8.ValidString(name):
		return "name is not valid UTF-8"
	}
	return ""
}

func (p *Program) verifyReloc(r Reloc, starts map[uint64]Opcode, addrOf map[string]uint64, imported map[string]bool) error {
	bad := func(format string, args ...any) error {
		return &FormatError{Where: "relocations", Msg: fmt.Sprintf("relocation %d:%d (%q): ", r.Section, r.Offset, r.Symbol) + fmt.Sprintf(format, args...)}
	}
	want, internal := addrOf[r.Symbol]
	if !internal && !imported[r.Symbol] {
		return bad("symbol is neither defined nor imported")
	}
	if imported[r.Symbol] {
		want = 0
	}
	var have uint64
	switch {
	case r.Section == SectionCode && r.Kind == RelocAbs64:
		if starts[uint64(r.Offset)] != LI {
			return bad("does not mark an LI instruction")
		}
		have = binary.LittleEndian.Uint64(p.Code[r.Offset+8:])
	case r.Section == SectionCode && r.Kind == RelocTarget:
		op, ok := starts[uint64(r.Offset)]
		if !ok || !IsTransfer(op) {
			return bad("does not mark a jump or call")
		}
		if internal {
			return bad("jump relocations are only for imported symbols")
		}
		have = uint64(binary.LittleEndian.Uint32(p.Code[r.Offset+4:]))
	case r.Section == SectionData && r.Kind == RelocAbs64:
		if uint64(r.Offset)+8 > uint64(len(p.Data)) {
			return bad("lies outside the data section")
		}
		have = binary.LittleEndian.Uint64(p.Data[r.Offset:])
	default:
		return bad("unknown section %d or kind %d", r.Section, r.Kind)
	}
	if have != want {
		return bad("holds %d, want %d", have, want)
	}
	return nil
}
