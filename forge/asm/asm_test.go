package asm_test

import (
	"bytes"
	"encoding/binary"
	"strings"
	"testing"

	"github.com/genesis-toolchain/genesis/diag"
	"github.com/genesis-toolchain/genesis/forge/asm"
	bc "github.com/genesis-toolchain/genesis/forge/bytecode"
	"github.com/genesis-toolchain/genesis/frontend/fasm"
)

var at = diag.Pos{}

// build returns b's program, failing the test on any diagnostic.
func build(t *testing.T, b *asm.Builder) *bc.Program {
	t.Helper()
	p, diags := b.Program()
	if len(diags) > 0 {
		t.Fatalf("unexpected diagnostics:\n%s", diags.Error())
	}
	if err := p.Verify(); err != nil {
		t.Fatalf("the program does not verify: %v", err)
	}
	return p
}

// wantErrors checks that b's program fails with exactly the messages
// want, in order (diagnostics are sorted by position).
func wantErrors(t *testing.T, b *asm.Builder, want ...string) {
	t.Helper()
	p, diags := b.Program()
	if p != nil {
		t.Errorf("a program along with errors")
	}
	var got []string
	for _, d := range diags {
		got = append(got, d.Code+": "+d.Msg)
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("diagnostics:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// insts decodes the code of p.
func insts(t *testing.T, p *bc.Program) []bc.Inst {
	t.Helper()
	ins, _, err := bc.Insts(p.Code)
	if err != nil {
		t.Fatal(err)
	}
	return ins
}

func TestForwardAndBackwardLabels(t *testing.T) {
	b := asm.New("t")
	b.InstRef(bc.Inst{Op: bc.JMP}, "end", at) // forward
	b.Label("loop", at)
	b.Inst(bc.Inst{Op: bc.LI, A: 1, Imm: 1 << 40}) // 16 bytes: later labels move
	b.InstRef(bc.Inst{Op: bc.JNZ, A: 1}, "loop", at)
	b.InstRef(bc.Inst{Op: bc.JLT, A: 1, B: 2}, "end", at)
	b.Label("end", at)
	b.InstRef(bc.Inst{Op: bc.CALL}, "f", at)
	b.Inst(bc.Inst{Op: bc.HALT})
	b.Label("f", at)
	b.Inst(bc.Inst{Op: bc.RET})
	p := build(t, b)
	got := insts(t, p)
	want := []bc.Inst{
		{Op: bc.JMP, Imm: 40},
		{Op: bc.LI, A: 1, Imm: 1 << 40},
		{Op: bc.JNZ, A: 1, Imm: 8},
		{Op: bc.JLT, A: 1, B: 2, Imm: 40},
		{Op: bc.CALL, Imm: 56},
		{Op: bc.HALT},
		{Op: bc.RET},
	}
	if len(got) != len(want) {
		t.Fatalf("got %d instructions, want %d", len(got), len(want))
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("instruction %d: %+v, want %+v", i, got[i], want[i])
		}
	}
	// Jump targets need no relocation; every label is a symbol.
	if len(p.Relocs) != 0 {
		t.Errorf("relocations %v, want none", p.Relocs)
	}
	syms := map[string]uint64{}
	for _, s := range p.Symbols {
		syms[s.Name] = s.Addr
	}
	if syms["loop"] != 8 || syms["end"] != 40 || syms["f"] != 56 || len(syms) != 3 {
		t.Errorf("symbols %v", p.Symbols)
	}
}

func TestDataAddressesAndRelocations(t *testing.T) {
	b := asm.New("t")
	b.InstRef(bc.Inst{Op: bc.LI, A: 0}, "msg", at) // a forward reference into the data
	b.Inst(bc.Inst{Op: bc.SEND, C: 0, A: 0, Imm: 5})
	b.Inst(bc.Inst{Op: bc.HALT})
	b.Bytes([]byte("hi"))
	b.Align(8, at)
	b.DataLabel("msg", at)
	b.Bytes([]byte("hello"))
	b.Zero(3)
	b.DataLabel("table", at)
	b.Addr("msg", at)
	p := build(t, b)
	code := uint64(len(p.Code)) // LI 16 + SEND 8 + HALT 8
	if code != 32 {
		t.Fatalf("code size %d", code)
	}
	msg := code + 8 // "hi" padded to an address multiple of 8
	if li := insts(t, p)[0]; li.Imm != msg {
		t.Errorf("LI loads 0x%x, want the address of msg 0x%x", li.Imm, msg)
	}
	wantData := append([]byte("hi\x00\x00\x00\x00\x00\x00hello\x00\x00\x00"), binary.LittleEndian.AppendUint64(nil, msg)...)
	if !bytes.Equal(p.Data, wantData) {
		t.Errorf("data %q, want %q", p.Data, wantData)
	}
	want := []bc.Reloc{
		{Section: bc.SectionCode, Kind: bc.RelocAbs64, Offset: 0, Symbol: "msg"},
		{Section: bc.SectionData, Kind: bc.RelocAbs64, Offset: 16, Symbol: "msg"},
	}
	if len(p.Relocs) != len(want) {
		t.Fatalf("relocations %v, want %v", p.Relocs, want)
	}
	for i := range want {
		if p.Relocs[i] != want[i] {
			t.Errorf("relocation %d: %+v, want %+v", i, p.Relocs[i], want[i])
		}
	}
}

func TestImportsSymbolsEntryMeta(t *testing.T) {
	var from [32]byte
	from[0] = 0xab
	b := asm.New("t")
	b.Inst(bc.Inst{Op: bc.HALT})
	b.Label("start", at)
	b.InstRef(bc.Inst{Op: bc.CALL}, "lib.f", at)
	b.InstRef(bc.Inst{Op: bc.LI, A: 3}, "lib.g", at)
	b.Inst(bc.Inst{Op: bc.HALT})
	b.Import(from, "lib.f", at)
	b.Import(from, "lib.g", at)
	b.Symbol("abs", at, 4, at)
	b.SymbolAt("alias", at, "start", at)
	b.EntryLabel("start", at)
	b.Meta([]byte("v1"))
	p := build(t, b)
	if p.Entry != 8 {
		t.Errorf("entry %d, want 8", p.Entry)
	}
	if len(p.Imports) != 1 || len(p.Imports[0].Symbols) != 2 || p.Imports[0].From != from {
		t.Errorf("imports %+v", p.Imports)
	}
	kinds := map[string]uint8{}
	for _, r := range p.Relocs {
		kinds[r.Symbol] = r.Kind
	}
	if kinds["lib.f"] != bc.RelocTarget || kinds["lib.g"] != bc.RelocAbs64 {
		t.Errorf("relocations %+v", p.Relocs)
	}
	syms := map[string]uint64{}
	for _, s := range p.Symbols {
		syms[s.Name] = s.Addr
	}
	if syms["abs"] != 4 || syms["alias"] != 8 {
		t.Errorf("symbols %+v", p.Symbols)
	}
	if string(p.Metadata) != "v1" {
		t.Errorf("metadata %q", p.Metadata)
	}
}

func TestErrors(t *testing.T) {
	t.Run("undefined", func(t *testing.T) {
		b := asm.New("t")
		b.InstRef(bc.Inst{Op: bc.JMP}, "nowhere", at)
		wantErrors(t, b, `A005: undefined name "nowhere"`)
	})
	t.Run("duplicate", func(t *testing.T) {
		b := asm.New("t")
		b.Label("x", at)
		b.Inst(bc.Inst{Op: bc.HALT})
		if b.Label("x", at) {
			t.Error("a second definition was accepted")
		}
		wantErrors(t, b, `A006: "x" is already defined`)
	})
	t.Run("target into data", func(t *testing.T) {
		b := asm.New("t")
		b.InstRef(bc.Inst{Op: bc.JMP}, "d", at)
		b.DataLabel("d", at)
		b.Bytes([]byte{1})
		wantErrors(t, b, `A008: JMP target "d" at 8 (0x8) is not the start of an instruction`)
	})
	t.Run("numeric target in an LI", func(t *testing.T) {
		b := asm.New("t")
		b.Inst(bc.Inst{Op: bc.LI, A: 1, Imm: 5})
		b.Target(bc.Inst{Op: bc.JMP, Imm: 8}, at) // the LI's word
		wantErrors(t, b, `A008: JMP target 8 (0x8) is not the start of an instruction`)
	})
	t.Run("empty", func(t *testing.T) {
		wantErrors(t, asm.New("t"), `A008: the program has no instructions`)
	})
	t.Run("entry", func(t *testing.T) {
		b := asm.New("t")
		b.Inst(bc.Inst{Op: bc.HALT})
		b.Entry(4, at)
		wantErrors(t, b, `A008: the entry 4 (0x4) is not the start of an instruction`)
	})
	t.Run("symbol beyond the end", func(t *testing.T) {
		b := asm.New("t")
		b.Inst(bc.Inst{Op: bc.HALT})
		b.Symbol("far", at, 9, at)
		wantErrors(t, b, `A008: symbol "far" at 9 (0x9) lies beyond the end of the data (8)`)
	})
	t.Run("reloc mismatch", func(t *testing.T) {
		b := asm.New("t")
		b.Inst(bc.Inst{Op: bc.HALT})
		b.DataLabel("d", at)
		b.Reloc("d", at)
		b.Bytes(make([]byte, 8))
		wantErrors(t, b, `A008: the 8 bytes at data offset 0 hold 0x0, not the address of "d" (0x8)`)
	})
	t.Run("data limit", func(t *testing.T) {
		b := asm.New("t")
		b.SetMaxData(4)
		b.Inst(bc.Inst{Op: bc.HALT})
		b.Zero(5)
		wantErrors(t, b, `A004: the data section is larger than 4 bytes`)
	})
	t.Run("name on an ALU instruction", func(t *testing.T) {
		b := asm.New("t")
		b.InstRef(bc.Inst{Op: bc.ADD}, "x", at)
		b.Inst(bc.Inst{Op: bc.HALT})
		wantErrors(t, b, `A099: ADD takes no name`)
	})
	t.Run("fragment with data", func(t *testing.T) {
		b, f := asm.New("t"), asm.NewFragment()
		f.Inst(bc.Inst{Op: bc.HALT})
		f.Bytes([]byte{1})
		b.Append(f)
		wantErrors(t, b, `A099: a fragment of code holds data, symbols, imports, an entry or metadata`)
	})
}

// TestAppend checks that fragments built apart (as functions compiled
// concurrently) join into the program one Builder would make.
func TestAppend(t *testing.T) {
	emit := func(b *asm.Builder, i int) {
		name := "f" + string(rune('a'+i))
		b.Label(name, at)
		for k := 0; k < 40+i; k++ { // crosses words of the start bitmap
			b.Inst(bc.Inst{Op: bc.LI, A: uint8(k), Imm: uint64(k)})
			b.InstRef(bc.Inst{Op: bc.JZ, A: uint8(k)}, name, at)
		}
		b.InstRef(bc.Inst{Op: bc.CALL}, "f"+string(rune('a'+(i+1)%3)), at)
		b.Inst(bc.Inst{Op: bc.RET})
	}
	whole := asm.New("t")
	whole.Inst(bc.Inst{Op: bc.HALT})
	for i := 0; i < 3; i++ {
		emit(whole, i)
	}
	joined := asm.New("t")
	joined.Inst(bc.Inst{Op: bc.HALT})
	for i := 0; i < 3; i++ {
		f := asm.NewFragment()
		emit(f, i)
		joined.Append(f)
	}
	if a, b := build(t, whole).Encode(), build(t, joined).Encode(); !bytes.Equal(a, b) {
		t.Error("the joined fragments differ from the program built whole")
	}
	// A label two fragments define is reported when they are joined.
	b, f, g := asm.New("t"), asm.NewFragment(), asm.NewFragment()
	f.Label("x", at)
	f.Inst(bc.Inst{Op: bc.HALT})
	g.Label("x", at)
	g.Inst(bc.Inst{Op: bc.HALT})
	b.Append(f)
	b.Append(g)
	wantErrors(t, b, `A006: "x" is already defined`)
	// A fragment made a program checks its names then.
	f = asm.NewFragment()
	f.InstRef(bc.Inst{Op: bc.JMP}, "y", at)
	f.Label("y", at)
	f.Label("y", at)
	f.Inst(bc.Inst{Op: bc.HALT})
	wantErrors(t, f, `A006: "y" is already defined`)
}

// TestEveryFormatRoundTrips builds one instruction of every opcode, with
// operands that fill every field of its format, and checks that the
// disassembly assembles (frontend/fasm) to the identical program, and
// that Source reads it into a Builder the same way.
func TestEveryFormatRoundTrips(t *testing.T) {
	b := asm.New("t")
	b.Label("top", at)
	for i, info := range bc.Instructions() {
		in := bc.Inst{Op: info.Op}
		for k, sl := range asm.Slots(info.Format) {
			v := uint64(i*7 + k + 1)
			switch sl.Kind {
			case asm.SlotOffset:
				v = uint64(uint32(int32(-8 * (k + 1))))
			case asm.SlotImm64:
				v = 0xfedcba9876543210
			case asm.SlotU32:
				v = 0xfffffff0 + uint64(k)
			}
			sl.Set(&in, v)
			mask := ^uint64(0)
			if sl.Field != asm.FieldImm {
				mask = 0xff // a register or channel byte
			}
			if sl.Get(in) != v&mask {
				t.Errorf("%s: slot %s does not read back", info.Name, sl.Name)
			}
		}
		if info.Format == bc.FmtTarget || info.Format == bc.FmtRTarget || info.Format == bc.FmtRRTarget {
			b.InstRef(in, "top", at)
			continue
		}
		b.Inst(in)
	}
	p := build(t, b)
	text := asm.Disassemble(p)
	q, diags := fasm.Assemble("dis.fasm", []byte(text))
	if diags.HasErrors() {
		t.Fatalf("the disassembly does not assemble:\n%s\n%s", diags.Error(), text)
	}
	if !bytes.Equal(p.Encode(), q.Encode()) {
		t.Fatalf("the disassembly assembles to another program:\n%s", text)
	}
	r := asm.New("src")
	r.Source("dis.fasm", []byte(text))
	rp := build(t, r)
	if !bytes.Equal(p.Encode(), rp.Encode()) {
		t.Fatal("Source reads the disassembly into another program")
	}
	for _, info := range bc.Instructions() {
		if !strings.Contains(text, "    "+info.Name) {
			t.Errorf("%s is missing from the disassembly", info.Name)
		}
	}
}

// TestSlotsMatchFormats checks the operand table against what the opcode
// table says of each format.
func TestSlotsMatchFormats(t *testing.T) {
	for _, info := range bc.Instructions() {
		f := info.Format
		if got, want := len(asm.Slots(f)), f.Operands(); got != want {
			t.Errorf("%s: %d operand slots, the format has %d operands", info.Name, got, want)
		}
		var used [4]bool
		for _, s := range asm.Slots(f) {
			if used[s.Field] {
				t.Errorf("%s: two operands go into field %d", info.Name, s.Field)
			}
			used[s.Field] = true
		}
		a, b, c, imm := f.Uses()
		if f == bc.FmtLI {
			imm = true // FieldImm is LI's 64-bit word, which Uses leaves out
		}
		if used != [4]bool{a, b, c, imm} {
			t.Errorf("%s: operands fill fields %v, the format uses %v", info.Name, used, [4]bool{a, b, c, imm})
		}
	}
}

func TestQuoteName(t *testing.T) {
	for name, want := range map[string]string{
		"main":   "main",
		"f.1_x":  "f.1_x",
		"r12":    `"r12"`,
		"1x":     `"1x"`,
		"a b":    `"a b"`,
		"\x00\n": `"\0\n"`,
	} {
		if got := asm.QuoteName(name); got != want {
			t.Errorf("QuoteName(%q) = %s, want %s", name, got, want)
		}
	}
}
