package asm

import (
	"bytes"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/genesis-toolchain/genesis/forge/bytecode"
)

// Disassemble returns p as Forge assembly. If p is a valid FRGP program
// (one that bytecode.Decode returns), assembling the text gives a program
// with the identical encoding. The text is deterministic, and readable:
// symbols become labels where they can, jump targets name the label at
// their address, data prints as .ascii where it is text, and every line of
// code or data ends with its address in a comment. It invents no label,
// since every label is a symbol of the program. For a program that does
// not verify, the text is a best effort that may not assemble.
func Disassemble(p *bytecode.Program) string {
	d := newDisassembler(p)
	d.header()
	d.code()
	d.data()
	return d.b.String()
}

type disassembler struct {
	p *bytecode.Program
	b strings.Builder

	starts     map[uint64]bool     // instruction starts
	codeLabels map[uint64][]string // symbols printed as labels, by address
	dataLabels map[uint64][]string // the same, by data offset
	others     []bytecode.Symbol   // symbols printed with .symbol
	codeRelocs map[uint64]bytecode.Reloc
	dataRelocs map[uint64]bytecode.Reloc
	u64At      map[uint64]bool // data relocations printed as .u64 name
	dataCuts   []uint64        // offsets where a data label or relocation is
}

func newDisassembler(p *bytecode.Program) *disassembler {
	d := &disassembler{
		p:          p,
		starts:     map[uint64]bool{},
		codeLabels: map[uint64][]string{},
		dataLabels: map[uint64][]string{},
		codeRelocs: map[uint64]bytecode.Reloc{},
		dataRelocs: map[uint64]bytecode.Reloc{},
		u64At:      map[uint64]bool{},
	}
	for off := 0; off < len(p.Code); {
		in, err := bytecode.DecodeAt(p.Code, off)
		if err != nil {
			break // code prints the rest as invalid
		}
		d.starts[uint64(off)] = true
		off += in.Size()
	}

	var dataOffs []uint64
	for _, r := range p.Relocs {
		switch {
		case r.Section == bytecode.SectionCode:
			d.codeRelocs[uint64(r.Offset)] = r
		case r.Section == bytecode.SectionData && r.Kind == bytecode.RelocAbs64:
			d.dataRelocs[uint64(r.Offset)] = r
			dataOffs = append(dataOffs, uint64(r.Offset))
		}
	}
	// A data relocation prints as .u64 name, which writes its 8 bytes,
	// unless the next relocation starts within them: then it prints as
	// .reloc name, which writes nothing, and its bytes print as data.
	sort.Slice(dataOffs, func(i, j int) bool { return dataOffs[i] < dataOffs[j] })
	for i, off := range dataOffs {
		if off+8 <= uint64(len(p.Data)) && (i+1 == len(dataOffs) || dataOffs[i+1] >= off+8) {
			d.u64At[off] = true
		}
	}
	inU64 := func(off uint64) bool { // strictly inside the 8 bytes of a .u64
		for o := off - min(off, 7); o < off; o++ {
			if d.u64At[o] {
				return true
			}
		}
		return false
	}

	codeSize, dataSize := uint64(len(p.Code)), uint64(len(p.Data))
	cuts := dataOffs
	for _, s := range p.Symbols {
		switch {
		case d.starts[s.Addr]:
			d.codeLabels[s.Addr] = append(d.codeLabels[s.Addr], s.Name)
		case s.Addr >= codeSize && s.Addr-codeSize <= dataSize && !inU64(s.Addr-codeSize):
			off := s.Addr - codeSize
			d.dataLabels[off] = append(d.dataLabels[off], s.Name)
			cuts = append(cuts, off)
		default:
			d.others = append(d.others, s)
		}
	}
	for _, names := range d.codeLabels {
		sort.Strings(names)
	}
	for _, names := range d.dataLabels {
		sort.Strings(names)
	}
	sort.Slice(d.others, func(i, j int) bool { return d.others[i].Name < d.others[j].Name })
	sort.Slice(cuts, func(i, j int) bool { return cuts[i] < cuts[j] })
	d.dataCuts = cuts
	return d
}

// line writes one line of code or data: text, then the address.
func (d *disassembler) line(text string, addr uint64) {
	const column = 40
	d.b.WriteString("    ")
	d.b.WriteString(text)
	d.b.WriteString(strings.Repeat(" ", max(1, column-4-len(text))))
	fmt.Fprintf(&d.b, "; 0x%04x\n", addr)
}

func (d *disassembler) labels(names []string) {
	for _, n := range names {
		d.b.WriteString(QuoteName(n))
		d.b.WriteString(":\n")
	}
}

// header writes the directives that describe the whole program.
func (d *disassembler) header() {
	p := d.p
	imports := append([]bytecode.Import(nil), p.Imports...)
	sort.Slice(imports, func(i, j int) bool { return string(imports[i].From[:]) < string(imports[j].From[:]) })
	for _, im := range imports {
		names := append([]string(nil), im.Symbols...)
		sort.Strings(names)
		for len(names) > 0 { // several lines for one hash add up
			n := min(len(names), 8)
			quoted := make([]string, n)
			for i, s := range names[:n] {
				quoted[i] = QuoteName(s)
			}
			fmt.Fprintf(&d.b, ".import %x %s\n", im.From, strings.Join(quoted, ", "))
			names = names[n:]
		}
	}
	for meta := p.Metadata; len(meta) > 0; {
		n := min(len(meta), 48)
		fmt.Fprintf(&d.b, ".meta %s\n", Quote(meta[:n]))
		meta = meta[n:]
	}
	if p.Entry != 0 {
		fmt.Fprintf(&d.b, ".entry %s\n", d.address(p.Entry))
	}
	for _, s := range d.others {
		fmt.Fprintf(&d.b, ".symbol %s, 0x%x\n", QuoteName(s.Name), s.Addr)
	}
	if d.b.Len() > 0 {
		d.b.WriteByte('\n')
	}
}

// address writes a code address: the first label at it, else a number.
func (d *disassembler) address(addr uint64) string {
	if names := d.codeLabels[addr]; len(names) > 0 {
		return QuoteName(names[0])
	}
	return fmt.Sprintf("0x%04x", addr)
}

func (d *disassembler) code() {
	d.b.WriteString(".text\n")
	code := d.p.Code
	for off := 0; off < len(code); {
		addr := uint64(off)
		if names := d.codeLabels[addr]; len(names) > 0 {
			if off > 0 {
				d.b.WriteByte('\n')
			}
			d.labels(names)
		}
		in, err := bytecode.DecodeAt(code, off)
		if err != nil {
			end := min(off+8, len(code))
			d.line(fmt.Sprintf("; not an instruction: % x", code[off:end]), addr)
			off = end
			continue
		}
		d.line(d.inst(addr, in), addr)
		off += in.Size()
	}
}

// inst writes one instruction, with its operands in slot order.
func (d *disassembler) inst(addr uint64, in bytecode.Inst) string {
	info := bytecode.Lookup(in.Op)
	var ops []string
	for _, sl := range Slots(info.Format) {
		var v uint64
		switch sl.Field {
		case FieldA:
			v = uint64(in.A)
		case FieldB:
			v = uint64(in.B)
		case FieldC:
			v = uint64(in.C)
		case FieldImm:
			v = in.Imm
		}
		var s string
		switch sl.Kind {
		case SlotReg:
			s = "r" + strconv.FormatUint(v, 10)
		case SlotChan, SlotU32:
			s = strconv.FormatUint(v, 10)
		case SlotOffset:
			s = strconv.FormatInt(in.Offset(), 10)
		case SlotTarget, SlotImm64:
			if r, ok := d.codeRelocs[addr]; ok {
				s = QuoteName(r.Symbol)
			} else if sl.Kind == SlotTarget {
				s = d.address(v)
			} else {
				s = immediate(v)
			}
		}
		ops = append(ops, s)
	}
	if len(ops) == 0 {
		return info.Name
	}
	// Mnemonics of seven letters or more (LOAD16S) still need a space.
	return fmt.Sprintf("%-6s %s", info.Name, strings.Join(ops, ", "))
}

// immediate writes an LI value: in decimal if it is small, signed or not,
// else in hexadecimal.
func immediate(v uint64) string {
	if s := int64(v); -1<<16 <= s && s < 1<<16 {
		return strconv.FormatInt(s, 10)
	}
	return fmt.Sprintf("0x%x", v)
}

func (d *disassembler) data() {
	data := d.p.Data
	if len(data) == 0 && len(d.dataLabels) == 0 {
		return
	}
	d.b.WriteString("\n.data\n")
	base := uint64(len(d.p.Code))
	size := uint64(len(data))
	for off := uint64(0); ; {
		d.labels(d.dataLabels[off])
		if r, ok := d.dataRelocs[off]; ok {
			if d.u64At[off] {
				d.line(".u64   "+QuoteName(r.Symbol), base+off)
				off += 8
				continue
			}
			d.line(".reloc "+QuoteName(r.Symbol), base+off)
		}
		if off >= size {
			return
		}
		// The bytes up to the next label or relocation.
		next := size
		if i := sort.Search(len(d.dataCuts), func(i int) bool { return d.dataCuts[i] > off }); i < len(d.dataCuts) {
			next = min(next, d.dataCuts[i])
		}
		d.bytes(data[off:next], base+off)
		off = next
	}
}

// bytes writes a run of data bytes: runs of zeros as .zero, text as
// .ascii (one line per line of text), and the rest as .byte. Every scan
// looks a bounded number of bytes ahead, so that the time is linear.
func (d *disassembler) bytes(b []byte, addr uint64) {
	const lineMax = 64                    // bytes of text on one .ascii line
	whole := textRun(b, len(b)) == len(b) // a labelled string, however short
	for len(b) > 0 {
		n := 0
		switch t := textRun(b, lineMax+1); {
		case zeroRun(b, 8) == 8:
			n = zeroRun(b, len(b))
			d.line(".zero  "+strconv.Itoa(n), addr)
		case t >= 4 || whole:
			n = min(t, lineMax)
			if i := bytes.IndexByte(b[:n], '\n'); i >= 0 {
				n = i + 1
			}
			if n == t && n < len(b) && zeroRun(b[n:], 8) == 1 {
				n++ // a C string's terminator
			}
			d.line(".ascii "+Quote(b[:n]), addr)
		default:
			for n < len(b) && n < 8 && (n == 0 || zeroRun(b[n:], 8) < 8 && textRun(b[n:], 4) < 4) {
				n++
			}
			hex := make([]string, n)
			for i, c := range b[:n] {
				hex[i] = fmt.Sprintf("0x%02x", c)
			}
			d.line(".byte  "+strings.Join(hex, ", "), addr)
		}
		b = b[n:]
		addr += uint64(n)
	}
}

// zeroRun counts the zero bytes b starts with, up to limit.
func zeroRun(b []byte, limit int) int {
	n := 0
	for n < len(b) && n < limit && b[n] == 0 {
		n++
	}
	return n
}

// textRun counts the bytes of text b starts with, up to limit: printable
// ASCII, tabs and line ends.
func textRun(b []byte, limit int) int {
	n := 0
	for n < len(b) && n < limit && (0x20 <= b[n] && b[n] <= 0x7e || b[n] == '\n' || b[n] == '\t' || b[n] == '\r') {
		n++
	}
	return n
}
