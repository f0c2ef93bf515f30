package fasm

import (
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"math/bits"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/genesis-toolchain/genesis/forge/bytecode"
	"github.com/genesis-toolchain/genesis/frontend/diag"
)

// The assembler works in two passes. The first reads the lines in order:
// it places every instruction (its size follows from its mnemonic), notes
// where each label is, and collects the data directives. The data section
// is mapped right after the code, so only once the code size is known does
// the second pass lay out the data, give every label its address, and
// resolve the names that operands use.

// An assembler holds the state of one Assemble call.
type assembler struct {
	file    string
	maxData uint64 // the largest data section accepted
	diags   diag.List

	inData bool // the current section is .data

	insts    []*inst
	codeSize uint64 // bytes of code placed so far

	data     []*dataItem
	dataSize uint64 // set by layoutData
	dataOK   bool   // layoutData placed every item within maxData

	defs    []*def // every label, .symbol name and imported name, in order
	byName  map[string]*def
	imports map[[32]byte]*bytecode.Import
	entry   *operand // the operand of .entry
	meta    []byte
}

func newAssembler(file string, maxData uint64) *assembler {
	return &assembler{
		file:    file,
		maxData: maxData,
		byName:  map[string]*def{},
		imports: map[[32]byte]*bytecode.Import{},
	}
}

type defKind uint8

const (
	labelDef  defKind = iota // name: (.text or .data)
	symbolDef                // .symbol name, address
	importDef                // .import hash name
)

// A def is one definition of a name.
type def struct {
	kind   defKind
	name   string
	pos    diag.Pos
	inData bool    // labelDef: defined in .data
	at     uint64  // labelDef: the code offset, or the index of the data item it precedes
	value  operand // symbolDef: the address operand
	addr   uint64  // labelDef, symbolDef: the address, once known
	known  bool    // addr is known: resolved, and not an error
}

// A ref is a use of a name.
type ref struct {
	name string
	pos  diag.Pos
}

// An inst is one instruction, encoded except for a name operand.
type inst struct {
	off    uint64 // code offset
	in     bytecode.Inst
	ref    *ref      // the name in the target or imm64 operand
	target *diag.Pos // a jump or call target to check: must be an instruction start
}

type dataKind uint8

const (
	dataBytes dataKind = iota // bytes: .ascii, .byte, numbers of .u64
	dataZero                  // n zero bytes: .zero
	dataAlign                 // zeros up to an address multiple of n: .align
	dataAddr                  // the 8-byte address of ref: names of .u64
	dataReloc                 // a relocation of the 8 bytes here to ref: .reloc
)

// A dataItem is a piece of the data section.
type dataItem struct {
	kind  dataKind
	pos   diag.Pos
	bytes []byte
	n     uint64
	ref   ref
	off   uint64 // set by layoutData
}

// errorf reports an error at pos.
func (a *assembler) errorf(pos diag.Pos, code, format string, args ...any) {
	a.diags.Errorf(pos, code, format, args...)
}

// assemble runs both passes and returns the program, or nil if there were
// errors.
func (a *assembler) assemble(lines []line) *bytecode.Program {
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

	a.layoutData()
	a.resolveSymbols()
	code, starts, codeRelocs := a.encodeCode()
	data, dataRelocs := a.encodeData()
	entry := a.resolveEntry(starts)
	if a.diags.HasErrors() {
		return nil
	}
	p := &bytecode.Program{
		Entry:    entry,
		Code:     code,
		Data:     data,
		Relocs:   append(codeRelocs, dataRelocs...),
		Metadata: a.meta,
	}
	for _, d := range a.defs {
		if d.kind != importDef {
			p.Symbols = append(p.Symbols, bytecode.Symbol{Name: d.name, Addr: d.addr})
		}
	}
	for _, im := range a.imports {
		p.Imports = append(p.Imports, *im)
	}
	p.Canonicalize()
	return p
}

// define records a new name, or reports it defined already.
func (a *assembler) define(d *def) bool {
	if prev := a.byName[d.name]; prev != nil {
		verb := "defined"
		if prev.kind == importDef {
			verb = "imported"
		}
		a.errorf(d.pos, codeDuplicate, "%s is already %s at line %d", strconv.Quote(d.name), verb, prev.pos.Line)
		return false
	}
	a.byName[d.name] = d
	a.defs = append(a.defs, d)
	return true
}

func (a *assembler) label(op operand) {
	name, ok := a.name(op)
	if !ok {
		return
	}
	d := &def{kind: labelDef, name: name, pos: op.pos, inData: a.inData, at: a.codeSize}
	if a.inData {
		d.at = uint64(len(a.data))
	}
	a.define(d)
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
	if len(name) > maxName {
		a.errorf(op.pos, codeDirective, "name %s is longer than %d bytes", abbreviate(op.tok.text), maxName)
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
func validOperand(sl slot, op operand) (uint64, bool) {
	var minNeg, max uint64
	switch sl.kind {
	case slotReg:
		if op.kind != regOperand {
			return 0, false
		}
		n, err := parseUint(op.tok.text[1:])
		return n, err == nil && n <= maxU8
	case slotChan:
		max = maxU8
	case slotU32:
		max = maxU32
	case slotOffset:
		minNeg, max = minInt32, maxU32
	case slotImm64:
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
	switch sl.kind {
	case slotOffset:
		return uint64(uint32(n.bits())), true
	case slotImm64:
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

// instruction places an instruction and encodes its operands, but for
// names, which are resolved once every label is known.
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
	it := &inst{off: a.codeSize, in: bytecode.Inst{Op: info.Op}}
	a.insts = append(a.insts, it)
	a.codeSize += uint64(info.Size())
	if a.codeSize > bytecode.MaxCode && a.codeSize-uint64(info.Size()) <= bytecode.MaxCode {
		a.errorf(s.name.pos, codeRange, "the code is larger than %d bytes", uint64(bytecode.MaxCode))
	}

	want := slots[info.Format]
	if len(s.ops) != len(want) {
		if len(want) == 0 {
			a.errorf(s.ops[0].pos, codeOperand, "%s takes no operands", info.Name)
		} else {
			a.errorf(s.name.pos, codeOperand, "%s takes %d operand%s (%s), not %d",
				info.Name, len(want), plural(len(want)), slotNames(info.Format), len(s.ops))
		}
		return
	}
	for i, sl := range want {
		v, ok := a.operand(it, sl, s.ops[i], info.Name)
		if !ok {
			continue
		}
		switch sl.field {
		case fieldA:
			it.in.A = uint8(v)
		case fieldB:
			it.in.B = uint8(v)
		case fieldC:
			it.in.C = uint8(v)
		case fieldImm:
			it.in.Imm = v
		}
	}
}

// operand checks one operand of the instruction it and returns its value.
// A name has no value yet: operand records it in it.ref, to be resolved
// once every label is known, and returns false, as it does on an error.
func (a *assembler) operand(it *inst, sl slot, op operand, mnemonic string) (uint64, bool) {
	// The common case, a valid register or number, needs no description.
	if v, ok := validOperand(sl, op); ok {
		return v, true
	}
	what := sl.name + " of " + mnemonic
	switch sl.kind {
	case slotReg:
		r, ok := a.register(op, what)
		return uint64(r), ok
	case slotChan:
		n, ok := a.number(op, what, 0, maxU8)
		return n.mag, ok
	case slotU32:
		n, ok := a.number(op, what, 0, maxU32)
		return n.mag, ok
	case slotOffset:
		n, ok := a.number(op, what, minInt32, maxU32)
		return uint64(uint32(n.bits())), ok
	}
	// A target or an imm64: a name or a number.
	switch op.kind {
	case identOperand, stringOperand:
		if name, ok := a.name(op); ok {
			it.ref = &ref{name: name, pos: op.pos}
			if sl.kind == slotTarget {
				it.target = &op.pos
			}
		}
		return 0, false
	case regOperand:
		a.errorf(op.pos, codeOperand, "%s must be a label or a number, not the %s", what, op.describe())
		return 0, false
	}
	if sl.kind == slotImm64 {
		n, ok := a.number(op, what, minInt64, maxU64)
		return n.bits(), ok
	}
	n, ok := a.number(op, what, 0, maxU32)
	if ok {
		it.target = &op.pos
	}
	return n.mag, ok
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

func (a *assembler) addData(item *dataItem) { a.data = append(a.data, item) }

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
			a.addData(&dataItem{kind: dataBytes, pos: op.pos, bytes: b})
		}
	}
}

func (a *assembler) byteDirective(s *statement) {
	if !a.operands(s, 1, -1, "value, ...") || !a.inDataOnly(s) {
		return
	}
	item := &dataItem{kind: dataBytes, pos: s.ops[0].pos}
	for _, op := range s.ops {
		if n, ok := a.number(op, "byte", minInt8, maxU8); ok {
			item.bytes = append(item.bytes, byte(n.bits()))
		}
	}
	a.addData(item)
}

func (a *assembler) u64(s *statement) {
	if !a.operands(s, 1, -1, "value|name, ...") || !a.inDataOnly(s) {
		return
	}
	for _, op := range s.ops {
		if op.kind == identOperand || op.kind == stringOperand {
			if name, ok := a.name(op); ok {
				a.addData(&dataItem{kind: dataAddr, pos: op.pos, ref: ref{name: name, pos: op.pos}})
			}
			continue
		}
		if n, ok := a.number(op, ".u64 value", minInt64, maxU64); ok {
			a.addData(&dataItem{kind: dataBytes, pos: op.pos, bytes: binary.LittleEndian.AppendUint64(nil, n.bits())})
		}
	}
}

func (a *assembler) zero(s *statement) {
	if !a.operands(s, 1, 1, "count") || !a.inDataOnly(s) {
		return
	}
	if n, ok := a.number(s.ops[0], ".zero count", 0, maxU64); ok {
		a.addData(&dataItem{kind: dataZero, pos: s.ops[0].pos, n: n.mag})
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
	a.addData(&dataItem{kind: dataAlign, pos: op.pos, n: n.mag})
}

func (a *assembler) reloc(s *statement) {
	if !a.operands(s, 1, 1, "name") || !a.inDataOnly(s) {
		return
	}
	if name, ok := a.name(s.ops[0]); ok {
		a.addData(&dataItem{kind: dataReloc, pos: s.ops[0].pos, ref: ref{name: name, pos: s.ops[0].pos}})
	}
}

func (a *assembler) entryDirective(s *statement) {
	if !a.operands(s, 1, 1, "label|address") {
		return
	}
	op := s.ops[0]
	if a.entry != nil {
		a.errorf(op.pos, codeDuplicate, "the entry is already set at line %d", a.entry.pos.Line)
		return
	}
	if op.kind == regOperand {
		a.errorf(op.pos, codeOperand, ".entry takes a label or an address, not the %s", op.describe())
		return
	}
	a.entry = &op
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
	im := a.imports[from]
	if im == nil {
		im = &bytecode.Import{From: from}
		a.imports[from] = im
	}
	for _, op := range s.ops {
		name, ok := a.name(op)
		if ok && a.define(&def{kind: importDef, name: name, pos: op.pos}) {
			im.Symbols = append(im.Symbols, name)
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
	if v.kind == regOperand {
		a.errorf(v.pos, codeOperand, ".symbol takes an address or a label, not the %s", v.describe())
		return
	}
	a.define(&def{kind: symbolDef, name: name, pos: s.ops[0].pos, value: v})
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
			a.meta = append(a.meta, b...)
		}
	}
}

// layoutData gives each data item its offset. .align pads to a multiple of
// the address, code size included, so it holds at run time.
func (a *assembler) layoutData() {
	off := uint64(0)
	for _, item := range a.data {
		item.off = off
		var size uint64
		switch item.kind {
		case dataBytes:
			size = uint64(len(item.bytes))
		case dataZero:
			size = item.n
		case dataAlign:
			addr := a.codeSize + off
			size = (item.n - addr%item.n) % item.n
		case dataAddr:
			size = 8
		}
		if size > a.maxData-off {
			a.errorf(item.pos, codeRange, "the data section is larger than %d bytes", a.maxData)
			return
		}
		off += size
	}
	a.dataSize = off
	a.dataOK = true
}

// resolveSymbols gives every label and .symbol its address.
func (a *assembler) resolveSymbols() {
	for _, d := range a.defs {
		if d.kind != labelDef {
			continue
		}
		switch {
		case !d.inData:
			d.addr, d.known = d.at, true
		case a.dataOK:
			off := a.dataSize
			if d.at < uint64(len(a.data)) {
				off = a.data[d.at].off
			}
			d.addr, d.known = a.codeSize+off, true
		}
	}
	for _, d := range a.defs {
		if d.kind != symbolDef {
			continue
		}
		v := d.value
		switch v.kind {
		case intOperand:
			n, ok := a.number(v, "address", 0, maxU64)
			if !ok {
				continue
			}
			d.addr = n.mag
		default:
			name, ok := a.name(v)
			if !ok {
				continue
			}
			target := a.byName[name]
			switch {
			case target == nil:
				a.errorf(v.pos, codeUndefined, "undefined label %s", strconv.Quote(name))
				continue
			case target.kind != labelDef:
				a.errorf(v.pos, codeOperand, ".symbol takes an address or a label, and %s is not a label", strconv.Quote(name))
				continue
			case !target.known:
				continue
			}
			d.addr = target.addr
		}
		if !a.dataOK {
			continue
		}
		if end := a.codeSize + a.dataSize; d.addr > end {
			a.errorf(v.pos, codeAddress, "symbol %s at %d (0x%x) lies beyond the end of the data (%d)", strconv.Quote(d.name), d.addr, d.addr, end)
			continue
		}
		d.known = true
	}
}

// lookup returns the definition of the name r uses, reporting it if there
// is none.
func (a *assembler) lookup(r *ref) *def {
	d := a.byName[r.name]
	if d == nil {
		a.errorf(r.pos, codeUndefined, "undefined name %s", strconv.Quote(r.name))
	}
	return d
}

// encodeCode resolves the names instructions use and encodes them. starts
// marks each instruction start, by code offset / 8.
func (a *assembler) encodeCode() (code []byte, starts []bool, relocs []bytecode.Reloc) {
	starts = make([]bool, a.codeSize/8+1)
	for _, it := range a.insts {
		starts[it.off/8] = true
	}
	code = make([]byte, 0, a.codeSize)
	for _, it := range a.insts {
		if r := it.ref; r != nil {
			d := a.lookup(r)
			switch {
			case d == nil || d.kind != importDef && !d.known:
				it.target = nil // an error, reported already
			case d.kind == importDef:
				// The linker fills in the address; Verify wants 0 meanwhile.
				kind := uint8(bytecode.RelocAbs64)
				if it.target != nil {
					kind = bytecode.RelocTarget
				}
				relocs = append(relocs, bytecode.Reloc{Section: bytecode.SectionCode, Kind: kind, Offset: uint32(it.off), Symbol: r.name})
				it.target = nil
			default:
				it.in.Imm = d.addr
				if it.target == nil {
					relocs = append(relocs, bytecode.Reloc{Section: bytecode.SectionCode, Kind: bytecode.RelocAbs64, Offset: uint32(it.off), Symbol: r.name})
				}
			}
		}
		if it.target != nil {
			imm := it.in.Imm
			if imm%8 != 0 || imm >= a.codeSize || !starts[imm/8] {
				what := fmt.Sprintf("%d (0x%x)", imm, imm)
				if it.ref != nil {
					what = fmt.Sprintf("%s at %s", strconv.Quote(it.ref.name), what)
				}
				a.errorf(*it.target, codeAddress, "%s target %s is not the start of an instruction", it.in.Op, what)
			}
		}
		code = it.in.Append(code)
	}
	return code, starts, relocs
}

// encodeData builds the data section, resolving the names .u64 and .reloc
// use, and checks that each .reloc marks 8 bytes holding the address.
func (a *assembler) encodeData() (data []byte, relocs []bytecode.Reloc) {
	if !a.dataOK {
		return nil, nil
	}
	data = make([]byte, a.dataSize)
	at := map[uint64]*dataItem{} // the relocation at each offset
	var marks []*dataItem
	for _, item := range a.data {
		switch item.kind {
		case dataBytes:
			copy(data[item.off:], item.bytes)
			continue
		case dataZero, dataAlign:
			continue // make has zeroed them
		}
		if prev := at[item.off]; prev != nil {
			a.errorf(item.pos, codeDuplicate, "a relocation is already at data offset %d, from line %d", item.off, prev.pos.Line)
			continue
		}
		at[item.off] = item
		d := a.lookup(&item.ref)
		if d == nil || d.kind != importDef && !d.known {
			continue
		}
		relocs = append(relocs, bytecode.Reloc{Section: bytecode.SectionData, Kind: bytecode.RelocAbs64, Offset: uint32(item.off), Symbol: item.ref.name})
		if item.kind == dataAddr {
			binary.LittleEndian.PutUint64(data[item.off:], d.addr) // 0 if imported
		} else {
			marks = append(marks, item)
		}
	}
	// Check .reloc marks once every .u64 is in place: the bytes they mark
	// may come from any directive after them.
	for _, item := range marks {
		d := a.byName[item.ref.name]
		if item.off+8 > a.dataSize {
			a.errorf(item.pos, codeAddress, ".reloc needs 8 bytes of data after it, and there are %d", a.dataSize-item.off)
			continue
		}
		if have := binary.LittleEndian.Uint64(data[item.off:]); have != d.addr {
			a.errorf(item.pos, codeAddress, "the 8 bytes at data offset %d hold 0x%x, not the address of %s (0x%x)", item.off, have, strconv.Quote(item.ref.name), d.addr)
		}
	}
	return data, relocs
}

// resolveEntry returns the entry address, checking that it is an
// instruction start.
func (a *assembler) resolveEntry(starts []bool) uint64 {
	if len(a.insts) == 0 {
		if !a.diags.HasErrors() { // else they may have taken the instructions
			a.errorf(diag.Pos{File: a.file}, codeAddress, "the program has no instructions")
		}
		return 0
	}
	if a.entry == nil {
		return 0
	}
	op := *a.entry
	var addr uint64
	what := ""
	if op.kind == intOperand {
		n, ok := a.number(op, "entry", 0, maxU64)
		if !ok {
			return 0
		}
		addr = n.mag
	} else {
		name, ok := a.name(op)
		if !ok {
			return 0
		}
		d := a.lookup(&ref{name: name, pos: op.pos})
		switch {
		case d == nil:
			return 0
		case d.kind == importDef:
			a.errorf(op.pos, codeAddress, "the entry cannot be the imported %s", strconv.Quote(name))
			return 0
		case !d.known:
			return 0
		}
		addr = d.addr
		what = strconv.Quote(name) + " at "
	}
	if addr%8 != 0 || addr >= a.codeSize || !starts[addr/8] {
		a.errorf(op.pos, codeAddress, "the entry %s%d (0x%x) is not the start of an instruction", what, addr, addr)
	}
	return addr
}
