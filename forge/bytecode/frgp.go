package bytecode

// The FRGP container, version 1. All integers are little-endian; strings
// and byte blobs are length-prefixed. A file is exactly:
//
//	offset size  field
//	0      4     magic "FRGP"
//	4      2     version u16 = 1
//	6      2     flags u16 = 0 (reserved)
//	8      8     entry u64: byte address of the first instruction to run
//	16     4     code length in bytes u32 (a multiple of 8)
//	20     ...   code: the instruction stream (8-byte words, LI takes two)
//	       4     data length u32
//	       ...   data: the read-only data section
//	       4     symbol count u32, then per symbol, sorted by name, unique:
//	                 name (u16 length + bytes), address u64
//	       4     import count u32, then per import, sorted by hash, unique:
//	                 from [32]byte (sha256 of the dependency's FRGP file),
//	                 name count u32, names (u16 length + bytes), sorted, unique
//	       4     relocation count u32, then per relocation, sorted by
//	             (section, offset), unique:
//	                 section u8 (0 code, 1 data), kind u8, offset u32,
//	                 symbol name (u16 length + bytes)
//	       4     metadata length u32, then the metadata bytes
//
// Nothing may follow the metadata. Names are 1..65535 bytes of UTF-8.
//
// Memory layout at run time: code is mapped at address 0, data at the
// address equal to the code length (always a multiple of 8), and the heap
// starts at the next multiple of 8 after the data.
//
// Relocations make a program relinkable (forge link):
//
//	section 0 (code), kind RelocAbs64: the imm64 word of the LI at offset
//	    holds the address of the symbol.
//	section 0 (code), kind RelocTarget: the imm32 of the jump or call at
//	    offset targets the symbol (only for imported symbols: jump targets
//	    inside one program are always code addresses and are rebased by
//	    opcode).
//	section 1 (data), kind RelocAbs64: the 8 bytes at offset of the data
//	    section hold the address of the symbol.
//
// A relocated symbol is either in the program's symbol table, and the
// stored value equals its address, or imported, and the stored value is 0.
//
// The file is canonical: one program has exactly one encoding, so its
// sha256 (Hash) identifies it.

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"sort"
	"unicode/utf8"
)

// Magic and Version identify an FRGP file.
const (
	Magic   = "FRGP"
	Version = 1
)

// HeaderSize is the size of the fixed part before the code.
const HeaderSize = 20

// Section numbers of relocations.
const (
	SectionCode = 0
	SectionData = 1
)

// Relocation kinds.
const (
	RelocAbs64  = 1 // a 64-bit address: an LI word or a data .u64
	RelocTarget = 2 // the imm32 target of JMP, JZ, JNZ, JLT, JLTS, JEQ, JNE or CALL
)

// Symbol names an address in the program.
type Symbol struct {
	Name string
	Addr uint64
}

// Import lists the symbols a program takes from a dependency.
type Import struct {
	From    [32]byte // sha256 of the dependency's FRGP file
	Symbols []string
}

// Reloc marks a place that holds the address of a symbol.
type Reloc struct {
	Section uint8
	Kind    uint8
	Offset  uint32
	Symbol  string
}

// Program is an FRGP program in memory.
type Program struct {
	Entry    uint64
	Code     []byte
	Data     []byte
	Symbols  []Symbol
	Imports  []Import
	Relocs   []Reloc
	Metadata []byte
}

// DataBase is the address at which the data section is mapped.
func (p *Program) DataBase() uint64 { return uint64(len(p.Code)) }

// HeapStart is the first address after code and data, 8-aligned.
func (p *Program) HeapStart() uint64 {
	return (uint64(len(p.Code)) + uint64(len(p.Data)) + 7) &^ 7
}

// Canonicalize sorts the symbol, import and relocation tables into their
// canonical order. Duplicates are left for Verify to report.
func (p *Program) Canonicalize() {
	sort.SliceStable(p.Symbols, func(i, j int) bool { return p.Symbols[i].Name < p.Symbols[j].Name })
	for i := range p.Imports {
		sort.Strings(p.Imports[i].Symbols)
	}
	sort.SliceStable(p.Imports, func(i, j int) bool {
		return bytes.Compare(p.Imports[i].From[:], p.Imports[j].From[:]) < 0
	})
	sort.SliceStable(p.Relocs, func(i, j int) bool {
		a, b := p.Relocs[i], p.Relocs[j]
		if a.Section != b.Section {
			return a.Section < b.Section
		}
		return a.Offset < b.Offset
	})
}

// Encode returns the canonical FRGP encoding of p. It does not verify p;
// call Verify first for programs from untrusted sources.
func (p *Program) Encode() []byte {
	var w writer
	w.b = append(w.b, Magic...)
	w.u16(Version)
	w.u16(0)
	w.u64(p.Entry)
	w.blob32(p.Code)
	w.blob32(p.Data)
	w.u32(uint32(len(p.Symbols)))
	for _, s := range p.Symbols {
		w.name(s.Name)
		w.u64(s.Addr)
	}
	w.u32(uint32(len(p.Imports)))
	for _, im := range p.Imports {
		w.b = append(w.b, im.From[:]...)
		w.u32(uint32(len(im.Symbols)))
		for _, s := range im.Symbols {
			w.name(s)
		}
	}
	w.u32(uint32(len(p.Relocs)))
	for _, r := range p.Relocs {
		w.b = append(w.b, r.Section, r.Kind)
		w.u32(r.Offset)
		w.name(r.Symbol)
	}
	w.blob32(p.Metadata)
	return w.b
}

// Hash is the sha256 of the canonical encoding: the program's identity.
func (p *Program) Hash() [32]byte { return sha256.Sum256(p.Encode()) }

type writer struct{ b []byte }

func (w *writer) u16(v uint16) { w.b = binary.LittleEndian.AppendUint16(w.b, v) }
func (w *writer) u32(v uint32) { w.b = binary.LittleEndian.AppendUint32(w.b, v) }
func (w *writer) u64(v uint64) { w.b = binary.LittleEndian.AppendUint64(w.b, v) }
func (w *writer) blob32(b []byte) {
	w.u32(uint32(len(b)))
	w.b = append(w.b, b...)
}
func (w *writer) name(s string) {
	w.u16(uint16(len(s)))
	w.b = append(w.b, s...)
}

// FormatError reports a malformed FRGP file or an invalid program. Where is
// "file" (Offset is a file offset), "code" (Offset is within the code
// section), or the table at fault ("symbols", "imports", "relocations",
// "entry"), whose entry the message names.
type FormatError struct {
	Offset int64
	Where  string // "file" or "code" or "data"
	Msg    string
}

func (e *FormatError) Error() string {
	switch e.Where {
	case "file":
		return fmt.Sprintf("offset %d (0x%x): %s", e.Offset, e.Offset, e.Msg)
	case "code", "data":
		return fmt.Sprintf("%s offset %d (0x%x): %s", e.Where, e.Offset, e.Offset, e.Msg)
	}
	// Table-level problems (symbols, imports, relocations, entry) have no
	// single offset: the message names the entry.
	return fmt.Sprintf("%s: %s", e.Where, e.Msg)
}

type reader struct {
	b   []byte
	off int
	err *FormatError
}

func (r *reader) fail(off int, format string, args ...any) {
	if r.err == nil {
		r.err = &FormatError{Offset: int64(off), Where: "file", Msg: fmt.Sprintf(format, args...)}
	}
}

func (r *reader) need(n int, what string) bool {
	if r.err != nil {
		return false
	}
	if n < 0 || len(r.b)-r.off < n {
		r.fail(r.off, "truncated %s: need %d bytes, %d left", what, n, len(r.b)-r.off)
		return false
	}
	return true
}

func (r *reader) u16(what string) uint16 {
	if !r.need(2, what) {
		return 0
	}
	v := binary.LittleEndian.Uint16(r.b[r.off:])
	r.off += 2
	return v
}

func (r *reader) u32(what string) uint32 {
	if !r.need(4, what) {
		return 0
	}
	v := binary.LittleEndian.Uint32(r.b[r.off:])
	r.off += 4
	return v
}

func (r *reader) u64(what string) uint64 {
	if !r.need(8, what) {
		return 0
	}
	v := binary.LittleEndian.Uint64(r.b[r.off:])
	r.off += 8
	return v
}

func (r *reader) bytes(n int, what string) []byte {
	if !r.need(n, what) {
		return nil
	}
	v := r.b[r.off : r.off+n : r.off+n]
	r.off += n
	return bytes.Clone(v)
}

func (r *reader) blob32(what string) []byte {
	n := r.u32(what + " length")
	if r.err != nil {
		return nil
	}
	if int64(n) > int64(len(r.b)-r.off) {
		r.fail(r.off-4, "%s length %d exceeds the %d bytes left in the file", what, n, len(r.b)-r.off)
		return nil
	}
	return r.bytes(int(n), what)
}

func (r *reader) name(what string) string {
	start := r.off
	n := int(r.u16(what + " length"))
	if r.err != nil {
		return ""
	}
	if n == 0 {
		r.fail(start, "empty %s", what)
		return ""
	}
	b := r.bytes(n, what)
	if r.err == nil && !utf8.Valid(b) {
		r.fail(start+2, "%s is not valid UTF-8", what)
	}
	return string(b)
}

// count reads a table length and checks that the table can fit in what is
// left of the file, given each entry takes at least min bytes.
func (r *reader) count(what string, min int) int {
	start := r.off
	n := r.u32(what + " count")
	if r.err != nil {
		return 0
	}
	if int64(n)*int64(min) > int64(len(r.b)-r.off) {
		r.fail(start, "%s count %d cannot fit in the %d bytes left", what, n, len(r.b)-r.off)
		return 0
	}
	return int(n)
}

// Decode parses an FRGP file and verifies it (see Verify). Errors are
// *FormatError values naming the offset of the problem; Decode never
// panics, whatever the input.
func Decode(file []byte) (*Program, error) {
	r := &reader{b: file}
	if !r.need(HeaderSize, "header") {
		return nil, r.err
	}
	if string(file[:4]) != Magic {
		return nil, &FormatError{Where: "file", Msg: fmt.Sprintf("bad magic %q, want %q", file[:4], Magic)}
	}
	r.off = 4
	if v := r.u16("version"); v != Version {
		return nil, &FormatError{Offset: 4, Where: "file", Msg: fmt.Sprintf("unsupported version %d, want %d", v, Version)}
	}
	if f := r.u16("flags"); f != 0 {
		return nil, &FormatError{Offset: 6, Where: "file", Msg: fmt.Sprintf("reserved flags 0x%04x must be zero", f)}
	}
	p := &Program{}
	p.Entry = r.u64("entry")
	codeStart := r.off + 4
	p.Code = r.blob32("code")
	p.Data = r.blob32("data")
	ns := r.count("symbol", 11)
	for i := 0; i < ns && r.err == nil; i++ {
		off := r.off
		s := Symbol{Name: r.name("symbol name"), Addr: r.u64("symbol address")}
		if r.err == nil && i > 0 && p.Symbols[i-1].Name >= s.Name {
			r.fail(off, "symbol %q is out of order or duplicated (symbols are sorted by name)", s.Name)
		}
		p.Symbols = append(p.Symbols, s)
	}
	ni := r.count("import", 36)
	for i := 0; i < ni && r.err == nil; i++ {
		off := r.off
		var im Import
		copy(im.From[:], r.bytes(32, "import hash"))
		if r.err == nil && i > 0 && bytes.Compare(p.Imports[i-1].From[:], im.From[:]) >= 0 {
			r.fail(off, "import %x is out of order or duplicated (imports are sorted by hash)", im.From)
		}
		n := r.count("imported symbol", 3)
		for j := 0; j < n && r.err == nil; j++ {
			soff := r.off
			s := r.name("imported symbol")
			if r.err == nil && j > 0 && im.Symbols[j-1] >= s {
				r.fail(soff, "imported symbol %q is out of order or duplicated", s)
			}
			im.Symbols = append(im.Symbols, s)
		}
		if r.err == nil && n == 0 {
			r.fail(off, "import %x names no symbols", im.From)
		}
		p.Imports = append(p.Imports, im)
	}
	nr := r.count("relocation", 9)
	for i := 0; i < nr && r.err == nil; i++ {
		off := r.off
		var rl Reloc
		if r.need(2, "relocation") {
			rl.Section, rl.Kind = r.b[r.off], r.b[r.off+1]
			r.off += 2
		}
		rl.Offset = r.u32("relocation offset")
		rl.Symbol = r.name("relocation symbol")
		if r.err == nil && i > 0 {
			prev := p.Relocs[i-1]
			if prev.Section > rl.Section || (prev.Section == rl.Section && prev.Offset >= rl.Offset) {
				r.fail(off, "relocation at %d:%d is out of order or duplicated", rl.Section, rl.Offset)
			}
		}
		p.Relocs = append(p.Relocs, rl)
	}
	p.Metadata = r.blob32("metadata")
	if r.err != nil {
		return nil, r.err
	}
	if r.off != len(file) {
		return nil, &FormatError{Offset: int64(r.off), Where: "file", Msg: fmt.Sprintf("%d trailing bytes after the metadata", len(file)-r.off)}
	}
	if err := p.Verify(); err != nil {
		if fe, ok := err.(*FormatError); ok && fe.Where == "code" {
			// Name the offset in the file, which is what a user can inspect.
			return nil, &FormatError{Offset: int64(codeStart) + fe.Offset, Where: "file", Msg: "code: " + fe.Msg}
		}
		return nil, err
	}
	return p, nil
}
