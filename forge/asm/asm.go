// Package asm is the in-memory assembler of the Forge Machine: a Builder
// takes instructions, labels, data and the names they refer to, lays the
// program out, resolves every name (forward references included) and
// returns a canonical bytecode.Program with its symbols and relocations.
// Disassemble is its inverse, the Forge assembly text of a program.
//
// Compilers emit into a Builder directly (backend/forgegen); frontend/fasm is
// the text syntax on top of it: it parses each line into Builder calls.
// The operand layout of every instruction format (Slots) is defined here
// once, for the builder, the text syntax and the disassembler.
//
// A Builder reports what it finds wrong as diagnostics at the positions its
// caller gave (diag.Pos{} when the caller has none, as a compiler does),
// with the stable codes of docs/fasm.md. It never panics on bad input.
package asm

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/bits"
	"strconv"

	"github.com/genesis-toolchain/genesis/diag"
	"github.com/genesis-toolchain/genesis/forge/bytecode"
)

// Diagnostic codes of the builder: those of Forge assembly (docs/fasm.md),
// for what only the layout can tell.
const (
	CodeRange     = "A004" // a value, register or size out of range
	CodeUndefined = "A005" // a name that is nowhere defined
	CodeDuplicate = "A006" // a name, entry or relocation given twice
	CodeOperand   = "A003" // wrong kind of operand
	CodeAddress   = "A008" // an address that cannot be what it must be
	CodeInternal  = "A099" // a misuse of the Builder by its caller
)

// MaxAlign is the largest alignment Align accepts.
const MaxAlign = 1 << 16

// MaxName is the longest symbol name FRGP can hold (a u16 length).
const MaxName = 1<<16 - 1

// A Builder accumulates one program. Its zero value is not ready: use New.
// The methods that take names may be called before the names are defined:
// Program resolves them once the layout is known. A Builder is not safe
// for concurrent use; compile parts concurrently into separate Builders
// and join them with Append.
type Builder struct {
	file    string
	maxData uint64
	pos     diag.Pos // of what follows, for messages: see At
	diags   diag.List

	code    []byte
	starts  []uint64   // bit i of word w: an instruction starts at code offset 8(64w+i)
	refs    []codeRef  // names and numeric targets in the code
	places  []diag.Pos // positions of refs and defs; places[0] is none
	tooBig  bool       // the code outgrew bytecode.MaxCode (reported once)
	data    []dataItem
	defs    []*def // every label, symbol and imported name, in order
	byName  map[string]*def
	imports []*bytecode.Import
	entry   *ref
	meta    []byte
	nonCode bool // holds data, symbols, imports, an entry or metadata: not a fragment

	dataSize uint64 // set by layoutData
	dataOK   bool   // layoutData placed every item within maxData
}

// New returns an empty Builder for the program read from (or compiled
// for) file, which names the program in messages that have no position.
func New(file string) *Builder {
	return &Builder{file: file, maxData: math.MaxUint32, byName: map[string]*def{}, places: []diag.Pos{{}}}
}

// NewFragment returns an empty Builder for a fragment of code: one that
// holds only instructions and code labels, to be joined to a program
// with Append. Its names are checked (defined twice, undefined) only in
// the program it joins, so a fragment keeps no index of them.
func NewFragment() *Builder {
	return &Builder{maxData: math.MaxUint32, places: []diag.Pos{{}}}
}

// SetMaxData lowers the largest data section the Builder accepts (4 GiB
// by default, what the format allows): for a fuzzer, which should not
// allocate that much.
func (b *Builder) SetMaxData(n uint64) { b.maxData = n }

// At sets the position that diagnostics about what the Builder is given
// next refer to, when the call itself takes none (Inst, Bytes, Zero).
func (b *Builder) At(pos diag.Pos) { b.pos = pos }

// Errorf reports an error at pos: for callers that check what they are
// given before building it, so that Program reports every error at once.
func (b *Builder) Errorf(pos diag.Pos, code, format string, args ...any) {
	b.diags.Errorf(pos, code, format, args...)
}

// Add adds diagnostics found by the caller (a parser's) to those Program
// returns.
func (b *Builder) Add(ds ...diag.Diagnostic) { b.diags = append(b.diags, ds...) }

// HasErrors reports whether an error was reported so far (errors of the
// layout show only once Program runs).
func (b *Builder) HasErrors() bool { return b.diags.HasErrors() }

// Reserve makes room for code more bytes of code and names more names,
// so that joining many fragments (Append) does not grow and copy the code
// and the index of names again and again: for a large program, those
// copies would add to its peak memory.
func (b *Builder) Reserve(code, names int) {
	if code > 0 && cap(b.code)-len(b.code) < code {
		b.code = append(make([]byte, 0, len(b.code)+code), b.code...)
	}
	if names > 0 && b.byName != nil && len(b.byName) == 0 {
		b.byName = make(map[string]*def, names)
	}
	if names > 0 && cap(b.defs)-len(b.defs) < names {
		b.defs = append(make([]*def, 0, len(b.defs)+names), b.defs...)
	}
}

// Names is the number of names defined so far: labels, symbols and
// imports.
func (b *Builder) Names() int { return len(b.defs) }

// CodeSize is the bytes of code so far: the code offset, and address, of
// the next instruction.
func (b *Builder) CodeSize() uint64 { return uint64(len(b.code)) }

type defKind uint8

const (
	codeLabel defKind = iota // a label in the code
	dataLabel                // a label in the data
	symbolDef                // a symbol at an address, or at a label
	importDef                // a name another program defines
)

// A place is the index of a position in Builder.places: a compiler has
// none for most of its many labels and references (place 0), so they
// take 4 bytes rather than a whole diag.Pos each.
type place int32

// place records pos and returns its place.
func (b *Builder) place(pos diag.Pos) place {
	if pos == (diag.Pos{}) {
		return 0
	}
	b.places = append(b.places, pos)
	return place(len(b.places) - 1)
}

// A def is one definition of a name.
type def struct {
	kind  defKind
	name  string
	place place  // where it is defined
	at    uint64 // codeLabel: the code offset; dataLabel: the index of the data item it precedes; symbolDef: the address
	label *ref   // symbolDef: the label it is at, if it is given by one
	vpos  place  // symbolDef: where its address or label is written
	addr  uint64 // the address, once known
	known bool   // addr is known: resolved, and not an error
}

type refKind uint8

const (
	refTarget refKind = iota // a name in the imm32 target of a jump or CALL
	refImm64                 // a name in the 64-bit word of an LI
	refNumber                // a numeric jump target, to check
)

// A codeRef is a use of a name in an instruction, or a number that must
// be an instruction start. A program has one for most jumps and calls:
// it is kept small.
type codeRef struct {
	kind  refKind
	off   uint32 // the instruction's code offset (code is below 4 GiB)
	place place
	name  string
}

// A ref is a use of a name (or a number) outside the code: the label of
// a symbol, the entry.
type ref struct {
	off  uint64
	name string
	pos  diag.Pos
}

type dataKind uint8

const (
	dataBytes dataKind = iota // bytes
	dataZero                  // n zero bytes
	dataAlign                 // zeros up to an address multiple of n
	dataAddr                  // the 8-byte address of ref
	dataReloc                 // a relocation of the 8 bytes here to ref
)

// A dataItem is a piece of the data section.
type dataItem struct {
	kind  dataKind
	pos   diag.Pos
	bytes []byte
	n     uint64
	ref   string
	off   uint64 // set by layoutData
}

// define records a new name, or reports it defined already (in a
// fragment, once it is appended).
func (b *Builder) define(d *def) bool {
	if b.byName == nil {
		b.defs = append(b.defs, d)
		return true
	}
	if prev := b.byName[d.name]; prev != nil {
		verb := "defined"
		if prev.kind == importDef {
			verb = "imported"
		}
		where := ""
		if line := b.places[prev.place].Line; line > 0 {
			where = fmt.Sprintf(" at line %d", line)
		}
		b.diags.Errorf(b.places[d.place], CodeDuplicate, "%s is already %s%s", strconv.Quote(d.name), verb, where)
		return false
	}
	b.byName[d.name] = d
	b.defs = append(b.defs, d)
	return true
}

// checkName reports a name the format cannot hold.
func (b *Builder) checkName(name string, pos diag.Pos) bool {
	switch {
	case name == "":
		b.diags.Errorf(pos, CodeInternal, "a name cannot be empty")
		return false
	case len(name) > MaxName:
		b.diags.Errorf(pos, CodeRange, "name %s is longer than %d bytes", strconv.Quote(name[:24]+"…"), MaxName)
		return false
	}
	return true
}

// Label defines name at the next instruction. It reports false, and an
// error at pos, when the name is already defined.
func (b *Builder) Label(name string, pos diag.Pos) bool {
	if !b.checkName(name, pos) {
		return false
	}
	return b.define(&def{kind: codeLabel, name: name, place: b.place(pos), at: uint64(len(b.code))})
}

// DataLabel defines name at the next byte of data.
func (b *Builder) DataLabel(name string, pos diag.Pos) bool {
	if !b.checkName(name, pos) {
		return false
	}
	b.nonCode = true
	return b.define(&def{kind: dataLabel, name: name, place: b.place(pos), at: uint64(len(b.data))})
}

// Inst appends an instruction whose operands are all given. A jump or
// call target given as a number is checked to be an instruction start
// (use Target for that); the unused fields must be zero.
func (b *Builder) Inst(in bytecode.Inst) {
	off := uint64(len(b.code))
	for uint64(len(b.starts)) <= off/512 {
		b.starts = append(b.starts, 0)
	}
	b.starts[off/512] |= 1 << (off / 8 % 64)
	b.code = in.Append(b.code)
	if !b.tooBig && uint64(len(b.code)) > bytecode.MaxCode {
		b.tooBig = true
		b.diags.Errorf(b.pos, CodeRange, "the code is larger than %d bytes", uint64(bytecode.MaxCode))
	}
}

// Target appends a jump or call whose target is the number in.Imm, which
// must be the address of an instruction start (checked by Program,
// reported at pos).
func (b *Builder) Target(in bytecode.Inst, pos diag.Pos) {
	b.refs = append(b.refs, codeRef{kind: refNumber, off: uint32(len(b.code)), place: b.place(pos)})
	b.Inst(in)
}

// InstRef appends an instruction whose target (a jump or CALL) or 64-bit
// word (LI) is the address of name, defined anywhere in the program or
// imported. An LI's word gets a relocation, so that the linker can move
// what it points at; a target of a name the program imports does too.
func (b *Builder) InstRef(in bytecode.Inst, name string, pos diag.Pos) {
	kind := refTarget
	if in.Op == bytecode.LI {
		kind = refImm64
	} else if f := bytecode.Lookup(in.Op); f == nil || !hasTarget(f.Format) {
		b.diags.Errorf(pos, CodeInternal, "%s takes no name", in.Op)
		return
	}
	in.Imm = 0
	b.refs = append(b.refs, codeRef{kind: kind, off: uint32(len(b.code)), place: b.place(pos), name: name})
	b.Inst(in)
}

func hasTarget(f bytecode.Format) bool {
	return f == bytecode.FmtTarget || f == bytecode.FmtRTarget || f == bytecode.FmtRRTarget
}

// Bytes appends p to the data.
func (b *Builder) Bytes(p []byte) {
	b.nonCode = true
	b.data = append(b.data, dataItem{kind: dataBytes, pos: b.pos, bytes: p})
}

// Zero appends n zero bytes to the data.
func (b *Builder) Zero(n uint64) {
	b.nonCode = true
	b.data = append(b.data, dataItem{kind: dataZero, pos: b.pos, n: n})
}

// Align appends zeros to the data up to an address that is a multiple of
// n, a power of two up to MaxAlign: the address, code size included, so
// that the alignment holds at run time.
func (b *Builder) Align(n uint64, pos diag.Pos) {
	if n == 0 || bits.OnesCount64(n) != 1 || n > MaxAlign {
		b.diags.Errorf(pos, CodeRange, "alignment %d is not a power of two up to %d", n, MaxAlign)
		return
	}
	b.nonCode = true
	b.data = append(b.data, dataItem{kind: dataAlign, pos: pos, n: n})
}

// Addr appends the 8-byte address of name to the data, with a relocation.
func (b *Builder) Addr(name string, pos diag.Pos) {
	b.nonCode = true
	b.data = append(b.data, dataItem{kind: dataAddr, pos: pos, ref: name})
}

// Reloc marks the 8 bytes of data that come next as the address of name:
// a relocation only, the bytes come from what follows, and must hold the
// address (checked by Program).
func (b *Builder) Reloc(name string, pos diag.Pos) {
	b.nonCode = true
	b.data = append(b.data, dataItem{kind: dataReloc, pos: pos, ref: name})
}

// Symbol defines name (written at pos) at addr (written at addrPos),
// which need be neither an instruction nor a label, only within the
// program (its code and data, or their end).
func (b *Builder) Symbol(name string, pos diag.Pos, addr uint64, addrPos diag.Pos) bool {
	b.nonCode = true
	if !b.checkName(name, pos) {
		return false
	}
	return b.define(&def{kind: symbolDef, name: name, place: b.place(pos), at: addr, vpos: b.place(addrPos)})
}

// SymbolAt defines name at the address of label, a label of the program.
func (b *Builder) SymbolAt(name string, pos diag.Pos, label string, labelPos diag.Pos) bool {
	b.nonCode = true
	if !b.checkName(name, pos) {
		return false
	}
	return b.define(&def{kind: symbolDef, name: name, place: b.place(pos), label: &ref{name: label, pos: labelPos}, vpos: b.place(labelPos)})
}

// Import declares name as defined by the program whose sha256 is from:
// the linker fills in its uses.
func (b *Builder) Import(from [32]byte, name string, pos diag.Pos) bool {
	b.nonCode = true
	if !b.checkName(name, pos) || !b.define(&def{kind: importDef, name: name, place: b.place(pos)}) {
		return false
	}
	for _, im := range b.imports {
		if im.From == from {
			im.Symbols = append(im.Symbols, name)
			return true
		}
	}
	b.imports = append(b.imports, &bytecode.Import{From: from, Symbols: []string{name}})
	return true
}

// Entry sets the entry point to addr, which must be an instruction start.
// Without Entry or EntryLabel the program starts at address 0.
func (b *Builder) Entry(addr uint64, pos diag.Pos) {
	b.nonCode = true
	b.entry = &ref{off: addr, pos: pos}
}

// EntryLabel sets the entry point to the address of label.
func (b *Builder) EntryLabel(label string, pos diag.Pos) {
	b.nonCode = true
	b.entry = &ref{name: label, pos: pos}
}

// HasEntry reports whether Entry or EntryLabel was called.
func (b *Builder) HasEntry() bool { return b.entry != nil }

// Meta appends p to the program's metadata.
func (b *Builder) Meta(p []byte) {
	b.nonCode = true
	b.meta = append(b.meta, p...)
}

// Append appends the code of f, a fragment (NewFragment: only
// instructions and code labels, such as one compiled function), after the
// code of b: its labels and references join b's, and a label defined in
// both is reported. f must not be used after.
func (b *Builder) Append(f *Builder) {
	if f.nonCode || f.byName != nil {
		b.diags.Errorf(f.pos, CodeInternal, "a fragment of code holds data, symbols, imports, an entry or metadata")
	}
	b.diags = append(b.diags, f.diags...)
	base := uint64(len(b.code))
	shift := place(len(b.places) - 1) // f's places 1.. follow b's
	b.places = append(b.places, f.places[1:]...)
	moved := func(p place) place {
		if p == 0 {
			return 0
		}
		return p + shift
	}
	for _, d := range f.defs {
		d.at += base
		d.place = moved(d.place)
		b.define(d)
	}
	for _, r := range f.refs {
		r.off += uint32(base)
		r.place = moved(r.place)
		b.refs = append(b.refs, r)
	}
	if base%512 == 0 && len(b.starts) == int(base/512) {
		b.starts = append(b.starts, f.starts...)
	} else {
		for i, w := range f.starts {
			for ; w != 0; w &= w - 1 {
				off := base + (uint64(i)*64+uint64(bits.TrailingZeros64(w)))*8
				for uint64(len(b.starts)) <= off/512 {
					b.starts = append(b.starts, 0)
				}
				b.starts[off/512] |= 1 << (off / 8 % 64)
			}
		}
	}
	b.code = append(b.code, f.code...)
	if !b.tooBig && uint64(len(b.code)) > bytecode.MaxCode {
		b.tooBig = true
		b.diags.Errorf(b.pos, CodeRange, "the code is larger than %d bytes", uint64(bytecode.MaxCode))
	}
	*f = Builder{}
}

// isStart reports whether an instruction starts at code offset off.
func (b *Builder) isStart(off uint64) bool {
	return off%8 == 0 && off < uint64(len(b.code)) && b.starts[off/512]&(1<<(off/8%64)) != 0
}

// Program lays out the data after the code, resolves every name and
// returns the program, canonical and verified by construction, with every
// diagnostic reported (sorted by position). When the list holds an error
// the program is nil. Program is called once; the Builder is spent after.
// (A fragment may be made a program too: its names are checked then.)
func (b *Builder) Program() (*bytecode.Program, diag.List) {
	if b.byName == nil {
		defs := b.defs
		b.defs, b.byName = nil, map[string]*def{}
		for _, d := range defs {
			b.define(d)
		}
	}
	if len(b.code) == 0 && !b.diags.HasErrors() {
		b.diags.Errorf(diag.Pos{File: b.file}, CodeAddress, "the program has no instructions")
	}
	b.layoutData()
	b.resolveSymbols()
	relocs := b.resolveCode()
	data, dataRelocs := b.encodeData()
	entry := b.resolveEntry()
	diags := b.diags
	diags.Sort()
	if diags.HasErrors() {
		return nil, diags
	}
	p := &bytecode.Program{
		Entry:    entry,
		Code:     b.code,
		Data:     data,
		Relocs:   append(relocs, dataRelocs...),
		Metadata: b.meta,
	}
	p.Symbols = make([]bytecode.Symbol, 0, len(b.defs))
	for _, d := range b.defs {
		if d.kind != importDef {
			p.Symbols = append(p.Symbols, bytecode.Symbol{Name: d.name, Addr: d.addr})
		}
	}
	for _, im := range b.imports {
		p.Imports = append(p.Imports, *im)
	}
	p.Canonicalize()
	return p, diags
}

// layoutData gives each data item its offset.
func (b *Builder) layoutData() {
	off := uint64(0)
	codeSize := uint64(len(b.code))
	for i := range b.data {
		item := &b.data[i]
		item.off = off
		var size uint64
		switch item.kind {
		case dataBytes:
			size = uint64(len(item.bytes))
		case dataZero:
			size = item.n
		case dataAlign:
			addr := codeSize + off
			size = (item.n - addr%item.n) % item.n
		case dataAddr:
			size = 8
		}
		if size > b.maxData-off {
			b.diags.Errorf(item.pos, CodeRange, "the data section is larger than %d bytes", b.maxData)
			return
		}
		off += size
	}
	b.dataSize = off
	b.dataOK = true
}

// resolveSymbols gives every label and symbol its address.
func (b *Builder) resolveSymbols() {
	codeSize := uint64(len(b.code))
	for _, d := range b.defs {
		switch {
		case d.kind == codeLabel:
			d.addr, d.known = d.at, true
		case d.kind == dataLabel && b.dataOK:
			off := b.dataSize
			if d.at < uint64(len(b.data)) {
				off = b.data[d.at].off
			}
			d.addr, d.known = codeSize+off, true
		}
	}
	for _, d := range b.defs {
		if d.kind != symbolDef {
			continue
		}
		d.addr = d.at
		if l := d.label; l != nil {
			target := b.byName[l.name]
			switch {
			case target == nil:
				b.diags.Errorf(l.pos, CodeUndefined, "undefined label %s", strconv.Quote(l.name))
				continue
			case target.kind != codeLabel && target.kind != dataLabel:
				b.diags.Errorf(l.pos, CodeOperand, ".symbol takes an address or a label, and %s is not a label", strconv.Quote(l.name))
				continue
			case !target.known:
				continue
			}
			d.addr = target.addr
		}
		if !b.dataOK {
			continue
		}
		if end := codeSize + b.dataSize; d.addr > end {
			b.diags.Errorf(b.places[d.vpos], CodeAddress, "symbol %s at %d (0x%x) lies beyond the end of the data (%d)", strconv.Quote(d.name), d.addr, d.addr, end)
			continue
		}
		d.known = true
	}
}

// lookup returns the definition of name, reporting it at pos if there is
// none.
func (b *Builder) lookup(name string, pos diag.Pos) *def {
	d := b.byName[name]
	if d == nil {
		b.diags.Errorf(pos, CodeUndefined, "undefined name %s", strconv.Quote(name))
	}
	return d
}

// resolveCode fills in the names instructions use, checks numeric
// targets, and returns the code relocations.
func (b *Builder) resolveCode() (relocs []bytecode.Reloc) {
	for _, r := range b.refs {
		op := bytecode.Opcode(b.code[r.off])
		pos := b.places[r.place]
		if r.kind == refNumber {
			b.checkTarget(op, uint64(binary.LittleEndian.Uint32(b.code[r.off+4:])), "", pos)
			continue
		}
		d := b.lookup(r.name, pos)
		switch {
		case d == nil || d.kind != importDef && !d.known:
			// an error, reported already
		case d.kind == importDef:
			// The linker fills in the address; Verify wants 0 meanwhile.
			kind := uint8(bytecode.RelocAbs64)
			if r.kind == refTarget {
				kind = bytecode.RelocTarget
			}
			relocs = append(relocs, bytecode.Reloc{Section: bytecode.SectionCode, Kind: kind, Offset: uint32(r.off), Symbol: r.name})
		case r.kind == refImm64:
			binary.LittleEndian.PutUint64(b.code[r.off+8:], d.addr)
			relocs = append(relocs, bytecode.Reloc{Section: bytecode.SectionCode, Kind: bytecode.RelocAbs64, Offset: uint32(r.off), Symbol: r.name})
		default:
			if d.addr > math.MaxUint32 || !b.isStart(d.addr) {
				b.checkTarget(op, d.addr, r.name, pos)
				continue
			}
			binary.LittleEndian.PutUint32(b.code[r.off+4:], uint32(d.addr))
		}
	}
	return relocs
}

// checkTarget reports a jump or call target that is not an instruction
// start.
func (b *Builder) checkTarget(op bytecode.Opcode, addr uint64, name string, pos diag.Pos) {
	if b.isStart(addr) {
		return
	}
	what := fmt.Sprintf("%d (0x%x)", addr, addr)
	if name != "" {
		what = fmt.Sprintf("%s at %s", strconv.Quote(name), what)
	}
	b.diags.Errorf(pos, CodeAddress, "%s target %s is not the start of an instruction", op, what)
}

// encodeData builds the data section, resolving the names of Addr and
// Reloc, and checks that each Reloc marks 8 bytes holding the address.
func (b *Builder) encodeData() (data []byte, relocs []bytecode.Reloc) {
	if !b.dataOK {
		return nil, nil
	}
	data = make([]byte, b.dataSize)
	at := map[uint64]*dataItem{} // the relocation at each offset
	var marks []*dataItem
	for i := range b.data {
		item := &b.data[i]
		switch item.kind {
		case dataBytes:
			copy(data[item.off:], item.bytes)
			continue
		case dataZero, dataAlign:
			continue // make has zeroed them
		}
		if prev := at[item.off]; prev != nil {
			b.diags.Errorf(item.pos, CodeDuplicate, "a relocation is already at data offset %d, from line %d", item.off, prev.pos.Line)
			continue
		}
		at[item.off] = item
		d := b.lookup(item.ref, item.pos)
		if d == nil || d.kind != importDef && !d.known {
			continue
		}
		relocs = append(relocs, bytecode.Reloc{Section: bytecode.SectionData, Kind: bytecode.RelocAbs64, Offset: uint32(item.off), Symbol: item.ref})
		if item.kind == dataAddr {
			binary.LittleEndian.PutUint64(data[item.off:], d.addr) // 0 if imported
		} else {
			marks = append(marks, item)
		}
	}
	// Check Reloc marks once every Addr is in place: the bytes they mark
	// may come from any item after them.
	for _, item := range marks {
		d := b.byName[item.ref]
		if item.off+8 > b.dataSize {
			b.diags.Errorf(item.pos, CodeAddress, ".reloc needs 8 bytes of data after it, and there are %d", b.dataSize-item.off)
			continue
		}
		if have := binary.LittleEndian.Uint64(data[item.off:]); have != d.addr {
			b.diags.Errorf(item.pos, CodeAddress, "the 8 bytes at data offset %d hold 0x%x, not the address of %s (0x%x)", item.off, have, strconv.Quote(item.ref), d.addr)
		}
	}
	return data, relocs
}

// resolveEntry returns the entry address, checking that it is an
// instruction start.
func (b *Builder) resolveEntry() uint64 {
	if len(b.code) == 0 || b.entry == nil {
		return 0
	}
	e := b.entry
	addr := e.off
	what := ""
	if e.name != "" {
		d := b.lookup(e.name, e.pos)
		switch {
		case d == nil:
			return 0
		case d.kind == importDef:
			b.diags.Errorf(e.pos, CodeAddress, "the entry cannot be the imported %s", strconv.Quote(e.name))
			return 0
		case !d.known:
			return 0
		}
		addr = d.addr
		what = strconv.Quote(e.name) + " at "
	}
	if !b.isStart(addr) {
		b.diags.Errorf(e.pos, CodeAddress, "the entry %s%d (0x%x) is not the start of an instruction", what, addr, addr)
	}
	return addr
}
