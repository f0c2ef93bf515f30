package bytecode_test

import (
	"strings"
	"testing"

	bc "github.com/genesis-toolchain/genesis/forge/bytecode"
)

// The instruction set of 05-FORGE.md §2.2 with the opcode numbers, operand
// layouts and tick costs DESIGN.md §3 adopts. A change here changes the
// canonical encoding of every program, so it must be deliberate.
var spec = []struct {
	name   string
	op     bc.Opcode
	format bc.Format
	cost   uint64
}{
	{"ADD", 0x01, bc.FmtRRR, 1}, {"SUB", 0x02, bc.FmtRRR, 1}, {"MUL", 0x03, bc.FmtRRR, 2},
	{"DIV", 0x04, bc.FmtRRR, 2}, {"MOD", 0x05, bc.FmtRRR, 2}, {"NEG", 0x06, bc.FmtRR, 1},
	{"DIVS", 0x07, bc.FmtRRR, 2}, {"MODS", 0x08, bc.FmtRRR, 2},
	{"AND", 0x10, bc.FmtRRR, 1}, {"OR", 0x11, bc.FmtRRR, 1}, {"XOR", 0x12, bc.FmtRRR, 1},
	{"NOT", 0x13, bc.FmtRR, 1}, {"SHL", 0x14, bc.FmtRRR, 1}, {"SHR", 0x15, bc.FmtRRR, 1},
	{"SAR", 0x16, bc.FmtRRR, 1},
	{"LOAD", 0x20, bc.FmtMem, 1}, {"STORE", 0x21, bc.FmtMem, 1}, {"LOADW", 0x22, bc.FmtMem, 1},
	{"STOREW", 0x23, bc.FmtMem, 1}, {"PUSH", 0x24, bc.FmtR, 1}, {"POP", 0x25, bc.FmtR, 1},
	// Not in the seed: issue 17 (narrow loads and stores).
	{"LOAD16S", 0x26, bc.FmtMem, 1}, {"LOAD32S", 0x27, bc.FmtMem, 1},
	{"STORE16", 0x28, bc.FmtMem, 1}, {"STORE32", 0x29, bc.FmtMem, 1},
	{"LOADWX", 0x2A, bc.FmtRRR, 1}, {"STOREWX", 0x2B, bc.FmtRRR, 1},
	{"LOAD32SX", 0x2C, bc.FmtRRR, 1}, {"STORE32X", 0x2D, bc.FmtRRR, 1},
	{"LOADX", 0x2E, bc.FmtRRR, 1},
	{"JMP", 0x30, bc.FmtTarget, 1}, {"JZ", 0x31, bc.FmtRTarget, 1}, {"JNZ", 0x32, bc.FmtRTarget, 1},
	{"JLT", 0x33, bc.FmtRRTarget, 1}, {"CALL", 0x34, bc.FmtTarget, 2}, {"RET", 0x35, bc.FmtNone, 2},
	{"JLTS", 0x36, bc.FmtRRTarget, 1},
	{"JEQ", 0x37, bc.FmtRRTarget, 1}, {"JNE", 0x38, bc.FmtRRTarget, 1}, // not in the seed: issue 17
	{"LI", 0x40, bc.FmtLI, 1},
	{"HALT", 0x50, bc.FmtNone, 1}, {"FAULT", 0x51, bc.FmtImm, 1}, {"NOP", 0x52, bc.FmtNone, 1},
	{"SEND", 0x60, bc.FmtChanRLen, 3}, {"RECV", 0x61, bc.FmtChanRLen, 3}, {"POLL", 0x62, bc.FmtChanR, 1},
	{"TICK", 0x70, bc.FmtNone, 1}, {"BUDGET", 0x71, bc.FmtR, 1},
	{"HCALL", 0x72, bc.FmtImm, 2}, // not in the seed: issue 16
}

func TestTableMatchesSpec(t *testing.T) {
	all := bc.Instructions()
	if len(all) != len(spec) {
		t.Fatalf("Instructions() has %d entries, the spec %d", len(all), len(spec))
	}
	for i, s := range spec {
		in := all[i]
		if in.Name != s.name || in.Op != s.op || in.Format != s.format || in.Cost != s.cost {
			t.Errorf("entry %d = %s 0x%02x format %d cost %d, want %s 0x%02x format %d cost %d",
				i, in.Name, in.Op, in.Format, in.Cost, s.name, s.op, s.format, s.cost)
		}
		if l := bc.Lookup(s.op); l == nil || l.Name != s.name {
			t.Errorf("Lookup(0x%02x) = %v, want %s", s.op, l, s.name)
		}
		if l := bc.LookupName(s.name); l == nil || l.Op != s.op {
			t.Errorf("LookupName(%s) = %v, want 0x%02x", s.name, l, s.op)
		}
		if got := s.op.String(); got != s.name {
			t.Errorf("Opcode(0x%02x).String() = %q", s.op, got)
		}
		wantSize := 8
		if s.op == bc.LI {
			wantSize = 16
		}
		if in.Size() != wantSize || (bc.Inst{Op: s.op}).Size() != wantSize {
			t.Errorf("%s: size %d, want %d", s.name, in.Size(), wantSize)
		}
	}
	known := map[bc.Opcode]bool{}
	for _, s := range spec {
		known[s.op] = true
	}
	for op := 0; op < 256; op++ {
		if !known[bc.Opcode(op)] && bc.Lookup(bc.Opcode(op)) != nil {
			t.Errorf("Lookup(0x%02x) is an instruction the spec does not have", op)
		}
	}
	if bc.LookupName("add") != nil || bc.LookupName("MOV") != nil {
		t.Error("LookupName accepts a lower-case or unknown mnemonic")
	}
	if got := bc.Opcode(0xEE).String(); got != "op(0xee)" {
		t.Errorf("unknown opcode prints as %q", got)
	}
}

// Branch marks the instructions that end a straight-line run: the
// interpreter's metering depends on it.
func TestBranchInstructions(t *testing.T) {
	want := map[string]bool{"JMP": true, "JZ": true, "JNZ": true, "JLT": true, "JLTS": true, "JEQ": true, "JNE": true,
		"CALL": true, "RET": true, "HALT": true, "FAULT": true, "RECV": true, "TICK": true}
	for _, in := range bc.Instructions() {
		if in.Branch != want[in.Name] {
			t.Errorf("%s: Branch = %v, want %v", in.Name, in.Branch, want[in.Name])
		}
		if bc.IsTransfer(in.Op) != (in.Format == bc.FmtTarget || in.Format == bc.FmtRTarget || in.Format == bc.FmtRRTarget) {
			t.Errorf("%s: IsTransfer = %v disagrees with its format", in.Name, bc.IsTransfer(in.Op))
		}
	}
}

func TestFormatOperands(t *testing.T) {
	for _, c := range []struct {
		f          bc.Format
		n          int
		a, b, c, i bool
	}{
		{bc.FmtNone, 0, false, false, false, false},
		{bc.FmtRRR, 3, true, true, true, false},
		{bc.FmtRR, 2, true, true, false, false},
		{bc.FmtR, 1, true, false, false, false},
		{bc.FmtMem, 3, true, true, false, true},
		{bc.FmtTarget, 1, false, false, false, true},
		{bc.FmtRTarget, 2, true, false, false, true},
		{bc.FmtRRTarget, 3, true, true, false, true},
		{bc.FmtLI, 2, true, false, false, false},
		{bc.FmtImm, 1, false, false, false, true},
		{bc.FmtChanRLen, 3, true, false, true, true},
		{bc.FmtChanR, 2, true, false, true, false},
	} {
		a, b, cc, i := c.f.Uses()
		if c.f.Operands() != c.n || a != c.a || b != c.b || cc != c.c || i != c.i {
			t.Errorf("format %d: Operands %d Uses %v %v %v %v, want %d %v %v %v %v",
				c.f, c.f.Operands(), a, b, cc, i, c.n, c.a, c.b, c.c, c.i)
		}
	}
}

func TestAppendEncoding(t *testing.T) {
	for _, c := range []struct {
		in   bc.Inst
		want []byte
	}{
		{bc.Inst{Op: bc.ADD, A: 1, B: 2, C: 3}, []byte{0x01, 1, 2, 3, 0, 0, 0, 0}},
		{bc.Inst{Op: bc.LOADW, A: 4, B: 5, Imm: 0xFFFFFFF8}, []byte{0x22, 4, 5, 0, 0xF8, 0xFF, 0xFF, 0xFF}},
		{bc.Inst{Op: bc.JMP, Imm: 0x01020304}, []byte{0x30, 0, 0, 0, 4, 3, 2, 1}},
		{bc.Inst{Op: bc.SEND, A: 9, C: 0, Imm: 6}, []byte{0x60, 9, 0, 0, 6, 0, 0, 0}},
		{bc.Inst{Op: bc.LI, A: 7, Imm: 0x1122334455667788},
			[]byte{0x40, 7, 0, 0, 0, 0, 0, 0, 0x88, 0x77, 0x66, 0x55, 0x44, 0x33, 0x22, 0x11}},
	} {
		got := c.in.Append(nil)
		if string(got) != string(c.want) {
			t.Errorf("%v encodes as % x, want % x", c.in, got, c.want)
		}
		back, err := bc.DecodeAt(got, 0)
		if err != nil || back != c.in {
			t.Errorf("DecodeAt(% x) = %v, %v; want %v", got, back, err, c.in)
		}
	}
	if off := (bc.Inst{Op: bc.LOAD, Imm: 0xFFFFFFF0}).Offset(); off != -16 {
		t.Errorf("Offset of imm 0xFFFFFFF0 = %d, want -16", off)
	}
	if off := (bc.Inst{Op: bc.LOAD, Imm: 0x7FFFFFFF}).Offset(); off != 1<<31-1 {
		t.Errorf("Offset of imm 0x7FFFFFFF = %d", off)
	}
}

// Every field an instruction does not use must be zero: otherwise two
// encodings would mean the same program and hashes would not identify it.
func TestDecodeAtRejectsNonCanonical(t *testing.T) {
	for _, info := range bc.Instructions() {
		a, b, c, imm := info.Format.Uses()
		if info.Format == bc.FmtLI {
			imm = false // the header's imm must be zero; the value is in the next word
		}
		for field, used := range []bool{a, b, c} {
			w := make([]byte, 16)
			w[0] = byte(info.Op)
			w[1+field] = 1
			_, err := bc.DecodeAt(w, 0)
			if used && err != nil {
				t.Errorf("%s with field %c set: %v", info.Name, "abc"[field], err)
			}
			if !used && (err == nil || !strings.Contains(err.Error(), "non-canonical")) {
				t.Errorf("%s with unused field %c set: err = %v, want non-canonical", info.Name, "abc"[field], err)
			}
		}
		w := make([]byte, 16)
		w[0] = byte(info.Op)
		w[7] = 0x80
		if _, err := bc.DecodeAt(w, 0); (err == nil) != imm {
			t.Errorf("%s with imm set: err = %v, imm used = %v", info.Name, err, imm)
		}
	}
	for _, c := range []struct {
		code []byte
		off  int
		want string
	}{
		{[]byte{0x00, 0, 0, 0, 0, 0, 0, 0}, 0, "unknown opcode 0x00"},
		{[]byte{0xFF, 0, 0, 0, 0, 0, 0, 0}, 0, "unknown opcode 0xff"},
		{[]byte{0x50, 0, 0, 0}, 0, "truncated instruction"},
		{[]byte{0x50, 0, 0, 0, 0, 0, 0, 0}, 8, "truncated instruction"},
		{[]byte{0x50, 0, 0, 0, 0, 0, 0, 0}, -8, "truncated instruction"},
		{[]byte{0x40, 1, 0, 0, 0, 0, 0, 0}, 0, "LI is missing its 64-bit immediate word"},
	} {
		_, err := bc.DecodeAt(c.code, c.off)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("DecodeAt(% x, %d) = %v, want %q", c.code, c.off, err, c.want)
		}
	}
}

func TestInsts(t *testing.T) {
	var code []byte
	for _, in := range []bc.Inst{{Op: bc.LI, A: 1, Imm: 5}, {Op: bc.ADD, A: 1, B: 1, C: 1}, {Op: bc.HALT}} {
		code = in.Append(code)
	}
	insts, offs, err := bc.Insts(code)
	if err != nil || len(insts) != 3 || offs[0] != 0 || offs[1] != 16 || offs[2] != 24 {
		t.Fatalf("Insts = %v %v %v", insts, offs, err)
	}
	if _, _, err := bc.Insts(code[:12]); err == nil || !strings.Contains(err.Error(), "not a multiple of 8") {
		t.Errorf("Insts of 12 bytes: %v", err)
	}
	if _, _, err := bc.Insts(code[:8]); err == nil || !strings.Contains(err.Error(), "missing its 64-bit") {
		t.Errorf("Insts of a lone LI header: %v", err)
	}
}

// bc.SEND and bc.RECV pay for the bytes they move, one tick per whole
// BytesPerTick bytes on top of their 3; every other instruction costs the
// same whatever its operands.
func TestCostMoving(t *testing.T) {
	for _, c := range []struct {
		op   bc.Opcode
		n    uint64
		want uint64
	}{
		{bc.SEND, 0, 3}, {bc.SEND, 7, 3}, {bc.SEND, 8, 4}, {bc.SEND, 1<<32 - 1, 3 + (1<<32-1)/8},
		{bc.RECV, 0, 3}, {bc.RECV, 64, 11},
		{bc.POLL, 64, 1}, {bc.STOREW, 8, 1}, {bc.CALL, 100, 2},
	} {
		if got := bc.Lookup(c.op).CostMoving(c.n); got != c.want {
			t.Errorf("%s moving %d bytes costs %d, want %d", c.op, c.n, got, c.want)
		}
	}
	for _, in := range bc.Instructions() {
		if in.Moves() != (in.Op == bc.SEND || in.Op == bc.RECV) {
			t.Errorf("%s.Moves() = %v", in.Name, in.Moves())
		}
	}
}
