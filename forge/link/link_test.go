package link

import (
	"bytes"
	"encoding/binary"
	"strings"
	"testing"

	bc "github.com/genesis-toolchain/genesis/forge/bytecode"
	"github.com/genesis-toolchain/genesis/forge/host"
	"github.com/genesis-toolchain/genesis/forge/vm"
)

// unit builds a relocatable program the way an assembler would: labels
// become symbols, references to them relocations.
type unitBuilder struct {
	p      bc.Program
	labels map[string]uint64 // code labels; data labels are added by dataLabel
	jumps  map[int]string    // jumps to a local code label
}

func newUnitBuilder() *unitBuilder {
	return &unitBuilder{labels: map[string]uint64{}, jumps: map[int]string{}}
}

func (u *unitBuilder) label(name string) { u.labels[name] = uint64(len(u.p.Code)) }

func (u *unitBuilder) op(in bc.Inst) { u.p.Code = in.Append(u.p.Code) }

// call calls a local label or, if imported, an imported symbol.
func (u *unitBuilder) call(name string, imported bool) {
	if imported {
		u.p.Relocs = append(u.p.Relocs, bc.Reloc{Section: bc.SectionCode, Kind: bc.RelocTarget, Offset: uint32(len(u.p.Code)), Symbol: name})
	} else {
		u.jumps[len(u.p.Code)] = name
	}
	u.op(bc.Inst{Op: bc.CALL})
}

// la loads the address of a symbol (LI with a relocation).
func (u *unitBuilder) la(rd uint8, name string) {
	u.p.Relocs = append(u.p.Relocs, bc.Reloc{Section: bc.SectionCode, Kind: bc.RelocAbs64, Offset: uint32(len(u.p.Code)), Symbol: name})
	u.op(bc.Inst{Op: bc.LI, A: rd})
}

type datum struct {
	label string
	bytes []byte
	ptr   string // if set, a .u64 holding this symbol's address
}

// finish lays out data after the code, fills in addresses and returns the
// verified program.
func (u *unitBuilder) finish(t *testing.T, data []datum, imports map[[32]byte][]string) *bc.Program {
	t.Helper()
	base := uint64(len(u.p.Code))
	addrs := map[string]uint64{}
	for k, v := range u.labels {
		addrs[k] = v
	}
	off := uint64(0)
	for _, d := range data {
		if d.label != "" {
			addrs[d.label] = base + off
		}
		if d.ptr != "" {
			off += 8
		} else {
			off += uint64(len(d.bytes))
		}
	}
	for _, d := range data {
		if d.ptr != "" {
			u.p.Relocs = append(u.p.Relocs, bc.Reloc{Section: bc.SectionData, Kind: bc.RelocAbs64, Offset: uint32(len(u.p.Data)), Symbol: d.ptr})
			u.p.Data = binary.LittleEndian.AppendUint64(u.p.Data, addrs[d.ptr]) // 0 if imported
		} else {
			u.p.Data = append(u.p.Data, d.bytes...)
		}
	}
	for off, name := range u.jumps {
		binary.LittleEndian.PutUint32(u.p.Code[off+4:], uint32(addrs[name]))
	}
	for _, r := range u.p.Relocs {
		if r.Section == bc.SectionCode && r.Kind == bc.RelocAbs64 {
			binary.LittleEndian.PutUint64(u.p.Code[r.Offset+8:], addrs[r.Symbol])
		}
	}
	for name, a := range addrs {
		u.p.Symbols = append(u.p.Symbols, bc.Symbol{Name: name, Addr: a})
	}
	for from, syms := range imports {
		u.p.Imports = append(u.p.Imports, bc.Import{From: from, Symbols: syms})
	}
	u.p.Canonicalize()
	// Round-trip through the file format, as the linker's inputs do.
	p, err := bc.Decode(u.p.Encode())
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// library defines double (r0 *= 2) and say (prints "lib\n"), and a data
// symbol msg.
func library(t *testing.T) *bc.Program {
	u := newUnitBuilder()
	u.label("double")
	u.op(bc.Inst{Op: bc.ADD, A: 0, B: 0, C: 0})
	u.op(bc.Inst{Op: bc.RET})
	u.label("say")
	u.la(9, "msg")
	u.op(bc.Inst{Op: bc.SEND, A: 9, C: 0, Imm: 4})
	u.op(bc.Inst{Op: bc.RET})
	return u.finish(t, []datum{{label: "msg", bytes: []byte("lib\n")}}, nil)
}

// mainProgram calls the library's double and say, prints its own greeting
// through a pointer in its data, then prints double(21) as one byte ('*').
func mainProgram(t *testing.T, lib *bc.Program) *bc.Program {
	u := newUnitBuilder()
	u.label("main")
	u.op(bc.Inst{Op: bc.LI, A: 0, Imm: 21})
	u.call("double", true)
	u.call("say", true)
	u.la(1, "table")
	u.op(bc.Inst{Op: bc.LOADW, A: 2, B: 1})
	u.op(bc.Inst{Op: bc.SEND, A: 2, C: 0, Imm: 3})
	u.call("star", false)
	u.op(bc.Inst{Op: bc.HALT})
	u.label("star")
	u.op(bc.Inst{Op: bc.LI, A: 3, Imm: 0x1000})
	u.op(bc.Inst{Op: bc.STOREW, A: 0, B: 3})
	u.op(bc.Inst{Op: bc.SEND, A: 3, C: 0, Imm: 1})
	u.op(bc.Inst{Op: bc.RET})
	return u.finish(t, []datum{
		{label: "greeting", bytes: []byte("hi\n")},
		{label: "table", ptr: "greeting"},
	}, map[[32]byte][]string{lib.Hash(): {"double", "say"}})
}

func run(t *testing.T, p *bc.Program) string {
	t.Helper()
	img, err := vm.NewImage(p)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	r, err := host.Run(img, host.Options{Limits: host.Limits{Ticks: 1000, Memory: 1 << 16, Stack: 1024}, Stdout: &out})
	if err != nil {
		t.Fatal(err)
	}
	if r.State != vm.Halted {
		t.Fatalf("%s\noutput %q", r.Summary(), out.String())
	}
	return out.String()
}

func TestLink(t *testing.T) {
	lib := library(t)
	main := mainProgram(t, lib)
	if _, err := vm.NewImage(main); err == nil {
		t.Fatal("an unlinked program loaded")
	}
	linked, err := Link(Object{"main.frgp", main}, []Object{{"lib.frgp", lib}})
	if err != nil {
		t.Fatal(err)
	}
	if got := run(t, linked); got != "lib\nhi\n*" {
		t.Errorf("linked program printed %q, want %q", got, "lib\nhi\n*")
	}
	if len(linked.Imports) != 0 || linked.Entry != main.Entry {
		t.Errorf("imports %v, entry %d", linked.Imports, linked.Entry)
	}
	// Layout: code = main ++ lib, data = main (padded to 8) ++ lib; the
	// pointer in main's data moved with the data.
	if !bytes.HasPrefix(linked.Data, []byte("hi\n")) || binary.LittleEndian.Uint64(linked.Data[3:]) != uint64(len(linked.Code)) || !bytes.HasSuffix(linked.Data, lib.Data) ||
		len(linked.Code) != len(main.Code)+len(lib.Code) || len(linked.Data) != 16+len(lib.Data) {
		t.Errorf("layout: code %d, data %q", len(linked.Code), linked.Data)
	}
	want := map[string]uint64{
		"main":     0,
		"star":     main.Symbols[symIndex(main, "star")].Addr,
		"double":   uint64(len(main.Code)),
		"say":      uint64(len(main.Code)) + 16,
		"greeting": uint64(len(linked.Code)),
		"table":    uint64(len(linked.Code)) + 3,
		"msg":      uint64(len(linked.Code)) + 16,
	}
	for _, s := range linked.Symbols {
		if want[s.Name] != s.Addr {
			t.Errorf("symbol %s at %d, want %d", s.Name, s.Addr, want[s.Name])
		}
	}
	// The result is canonical and can be linked again (as a program with
	// no imports): nothing moves.
	again, err := Link(Object{"linked.frgp", linked}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(again.Encode(), linked.Encode()) {
		t.Error("relinking a linked program changed it")
	}
	if dec, err := bc.Decode(linked.Encode()); err != nil || !bytes.Equal(dec.Encode(), linked.Encode()) {
		t.Errorf("the linked program does not round-trip: %v", err)
	}
}

func symIndex(p *bc.Program, name string) int {
	for i, s := range p.Symbols {
		if s.Name == name {
			return i
		}
	}
	return -1
}

// TestTransitive links main -> mid -> base: mid's say2 calls base's
// helper, which prints through a pointer in base's data.
func TestTransitive(t *testing.T) {
	b := newUnitBuilder()
	b.label("helper")
	b.la(5, "ptr")
	b.op(bc.Inst{Op: bc.LOADW, A: 5, B: 5})
	b.op(bc.Inst{Op: bc.SEND, A: 5, C: 0, Imm: 5})
	b.op(bc.Inst{Op: bc.RET})
	base := b.finish(t, []datum{{label: "text", bytes: []byte("base\n")}, {label: "ptr", ptr: "text"}}, nil)

	m := newUnitBuilder()
	m.label("say2")
	m.call("helper", true)
	m.op(bc.Inst{Op: bc.RET})
	mid := m.finish(t, []datum{{label: "pad", bytes: []byte{1, 2, 3}}}, map[[32]byte][]string{base.Hash(): {"helper"}})

	u := newUnitBuilder()
	u.label("start")
	u.call("say2", true)
	u.call("helper", true)
	u.op(bc.Inst{Op: bc.HALT})
	main := u.finish(t, []datum{{label: "x", bytes: []byte{9}}}, map[[32]byte][]string{mid.Hash(): {"say2"}, base.Hash(): {"helper"}})

	for _, order := range [][]Object{{{"mid", mid}, {"base", base}}, {{"base", base}, {"mid", mid}}} {
		linked, err := Link(Object{"main", main}, order)
		if err != nil {
			t.Fatal(err)
		}
		if got := run(t, linked); got != "base\nbase\n" {
			t.Errorf("printed %q", got)
		}
	}
	// mid alone is not enough: base is missing.
	if _, err := Link(Object{"main", main}, []Object{{"mid", mid}}); err == nil || !strings.Contains(err.Error(), "which is none of the given files") {
		t.Errorf("missing transitive dependency: %v", err)
	}
}

func TestLinkErrors(t *testing.T) {
	lib := library(t)
	main := mainProgram(t, lib)
	other := newUnitBuilder()
	other.label("unused")
	other.op(bc.Inst{Op: bc.RET})
	extra := other.finish(t, nil, nil)

	clash := newUnitBuilder()
	clash.label("double")
	clash.op(bc.Inst{Op: bc.RET})
	clash.label("say")
	clash.op(bc.Inst{Op: bc.RET})
	clash.label("main")
	clash.op(bc.Inst{Op: bc.RET})
	clashing := clash.finish(t, nil, nil)
	mainClash := mainProgram(t, clashing)

	short := newUnitBuilder()
	short.label("double")
	short.op(bc.Inst{Op: bc.RET})
	shortLib := short.finish(t, nil, nil)
	mainShort := mainProgram(t, shortLib)

	for _, tc := range []struct {
		name string
		main *bc.Program
		deps []Object
		want string
	}{
		{"missing", main, nil, "main.frgp imports double, say from program " + hexOf(lib) + ", which is none of the given files"},
		{"extra", main, []Object{{"lib.frgp", lib}, {"extra.frgp", extra}}, "extra.frgp is not imported by main.frgp or any of its dependencies"},
		{"twice", main, []Object{{"lib.frgp", lib}, {"lib2.frgp", lib}}, "lib.frgp and lib2.frgp are the same program"},
		{"main again", main, []Object{{"lib.frgp", lib}, {"self.frgp", main}}, "self.frgp is the main program main.frgp again"},
		{"undefined", mainShort, []Object{{"short.frgp", shortLib}}, `short.frgp does not define "say", which main.frgp imports from it`},
		{"clash", mainClash, []Object{{"clash.frgp", clashing}}, `symbol "main" is defined both in main.frgp and in clash.frgp`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Link(Object{"main.frgp", tc.main}, tc.deps)
			if err == nil || err.Error() != tc.want {
				t.Errorf("got %v\nwant %s", err, tc.want)
			}
		})
	}
}

func hexOf(p *bc.Program) string {
	h := p.Hash()
	const digits = "0123456789abcdef"
	var b strings.Builder
	for _, c := range h {
		b.WriteByte(digits[c>>4])
		b.WriteByte(digits[c&15])
	}
	return b.String()
}
