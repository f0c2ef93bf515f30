package bytecode_test

import (
	"bytes"
	"encoding/binary"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	bc "github.com/genesis-toolchain/genesis/forge/bytecode"
)

func code(insts ...bc.Inst) []byte {
	var b []byte
	for _, in := range insts {
		b = in.Append(b)
	}
	return b
}

// sample is a program that uses every part of the container: entry not at
// 0, data, symbols, an import with its jump relocation, code and data
// address relocations, metadata.
func sample() *bc.Program {
	var dep [32]byte
	dep[0], dep[31] = 0xAB, 0xCD
	return &bc.Program{
		Entry: 8,
		Code: code(
			bc.Inst{Op: bc.NOP},                      // 0
			bc.Inst{Op: bc.LI, A: 1, Imm: 48},        // 8: LI r1, msg
			bc.Inst{Op: bc.CALL, Imm: 0},             // 24: CALL ext (imported)
			bc.Inst{Op: bc.SEND, A: 1, C: 0, Imm: 5}, // 32
			bc.Inst{Op: bc.HALT},                     // 40
		),
		Data: []byte("hello\x00\x00\x00\x30\x00\x00\x00\x00\x00\x00\x00"),
		Symbols: []bc.Symbol{
			{Name: "main", Addr: 8},
			{Name: "msg", Addr: 48},
		},
		Imports: []bc.Import{{From: dep, Symbols: []string{"ext", "ext2"}}},
		Relocs: []bc.Reloc{
			{Section: bc.SectionCode, Kind: bc.RelocAbs64, Offset: 8, Symbol: "msg"},
			{Section: bc.SectionCode, Kind: bc.RelocTarget, Offset: 24, Symbol: "ext"},
			{Section: bc.SectionData, Kind: bc.RelocAbs64, Offset: 8, Symbol: "msg"},
		},
		Metadata: []byte(`{"compiler":"test"}`),
	}
}

func TestEncodeDecodeRoundTrip(t *testing.T) {
	p := sample()
	if err := p.Verify(); err != nil {
		t.Fatalf("sample does not verify: %v", err)
	}
	file := p.Encode()
	q, err := bc.Decode(file)
	if err != nil {
		t.Fatalf("Decode: %v", err)
	}
	if d := cmp.Diff(p, q); d != "" {
		t.Errorf("Decode(Encode(p)) differs (-want +got):\n%s", d)
	}
	if !bytes.Equal(q.Encode(), file) {
		t.Error("re-encoding a decoded file changed its bytes")
	}
	if p.Hash() != q.Hash() {
		t.Error("the hash of a round-tripped program changed")
	}
	if p.DataBase() != 48 || p.HeapStart() != 64 {
		t.Errorf("DataBase %d HeapStart %d, want 48 and 64", p.DataBase(), p.HeapStart())
	}
	// The fixed header, byte for byte.
	want := []byte{'F', 'R', 'G', 'P', 1, 0, 0, 0, 8, 0, 0, 0, 0, 0, 0, 0, 48, 0, 0, 0}
	if !bytes.Equal(file[:bc.HeaderSize], want) {
		t.Errorf("header % x, want % x", file[:bc.HeaderSize], want)
	}
}

func TestHeapStartAligned(t *testing.T) {
	for _, c := range []struct {
		code, data int
		heap       uint64
	}{{8, 0, 8}, {8, 1, 16}, {8, 8, 16}, {16, 9, 32}, {24, 7, 32}} {
		p := &bc.Program{Code: make([]byte, c.code), Data: make([]byte, c.data)}
		if got := p.HeapStart(); got != c.heap {
			t.Errorf("code %d data %d: HeapStart %d, want %d", c.code, c.data, got, c.heap)
		}
	}
}

func TestCanonicalize(t *testing.T) {
	p := sample()
	want := p.Encode()
	p.Symbols[0], p.Symbols[1] = p.Symbols[1], p.Symbols[0]
	p.Relocs[0], p.Relocs[2] = p.Relocs[2], p.Relocs[0]
	p.Imports[0].Symbols = []string{"ext2", "ext"}
	var other [32]byte
	p.Imports = append([]bc.Import{{From: [32]byte{0xFF}, Symbols: []string{"z"}}}, p.Imports...)
	p.Imports = append(p.Imports, bc.Import{From: other, Symbols: []string{"a"}})
	p.Canonicalize()
	if p.Imports[0].From != other || p.Imports[2].From != [32]byte{0xFF} {
		t.Errorf("imports not sorted by hash: %x", p.Imports)
	}
	p.Imports = p.Imports[1:2]
	if got := p.Encode(); !bytes.Equal(got, want) {
		t.Error("Canonicalize did not restore the canonical order")
	}
}

// mutate returns the sample's encoding after f changed the program.
func encoded(f func(p *bc.Program)) []byte {
	p := sample()
	f(p)
	return p.Encode()
}

func TestDecodeErrors(t *testing.T) {
	good := sample().Encode()
	patch := func(off int, b ...byte) []byte {
		f := bytes.Clone(good)
		copy(f[off:], b)
		return f
	}
	codeOff := bc.HeaderSize
	for _, c := range []struct {
		name string
		file []byte
		want string
	}{
		{"empty", nil, "offset 0 (0x0): truncated header: need 20 bytes, 0 left"},
		{"magic", patch(0, 'F', 'R', 'G', 'X'), `bad magic "FRGX"`},
		{"version", patch(4, 2), "offset 4 (0x4): unsupported version 2, want 1"},
		{"flags", patch(6, 1), "offset 6 (0x6): reserved flags 0x0001 must be zero"},
		{"code length", patch(16, 0xFF, 0xFF, 0xFF, 0x7F), "code length 2147483647 exceeds"},
		{"truncated", good[:len(good)-1], "metadata length 19 exceeds the 18 bytes left in the file"},
		{"trailing", append(bytes.Clone(good), 0), "1 trailing bytes after the metadata"},
		{"unknown opcode", patch(codeOff, 0xEE), "offset 20 (0x14): code: unknown opcode 0xee"},
		{"non-canonical", patch(codeOff+1, 1), "offset 20 (0x14): code: non-canonical NOP: unused field a is 1, must be 0"},
		{"entry", patch(8, 16), "entry 16 (0x10) is not the start of an instruction"},
		{"code not words", encoded(func(p *bc.Program) { p.Code = append(p.Code, 0x52, 0, 0, 0) }),
			"code length 52 is not a multiple of 8"},
		{"no code", encoded(func(p *bc.Program) {
			p.Code, p.Entry, p.Relocs, p.Symbols = nil, 0, nil, nil
		}), "program has no code"},
		{"jump into LI word", encoded(func(p *bc.Program) {
			binary.LittleEndian.PutUint32(p.Code[24+4:], 16)
			p.Relocs = p.Relocs[:1]
		}), "CALL target 16 (0x10) is not the start of an instruction"},
		{"jump past the end", encoded(func(p *bc.Program) {
			binary.LittleEndian.PutUint32(p.Code[24+4:], 48)
			p.Relocs = p.Relocs[:1]
		}), "CALL target 48 (0x30) is not the start of an instruction"},
		{"symbols unsorted", encoded(func(p *bc.Program) {
			p.Symbols[0], p.Symbols[1] = p.Symbols[1], p.Symbols[0]
		}), `symbol "main" is out of order or duplicated`},
		{"symbol empty name", encoded(func(p *bc.Program) { p.Symbols[0].Name = "" }), "empty symbol name"},
		{"symbol not UTF-8", encoded(func(p *bc.Program) { p.Symbols[0].Name = "\xff" }),
			"symbol name is not valid UTF-8"},
		{"symbol beyond", encoded(func(p *bc.Program) { p.Symbols[0].Addr = 1000 }),
			`symbol "main" at 1000 lies beyond code and data (64 bytes)`},
		{"symbol imported", encoded(func(p *bc.Program) { p.Symbols[0].Name = "ext" }),
			`symbol "ext" is both defined and imported`},
		{"import unsorted", encoded(func(p *bc.Program) {
			p.Imports = append(p.Imports, bc.Import{From: [32]byte{1}, Symbols: []string{"z"}})
		}), "is out of order or duplicated (imports are sorted by hash)"},
		{"import empty", encoded(func(p *bc.Program) { p.Imports[0].Symbols = nil }), "names no symbols"},
		{"import names unsorted", encoded(func(p *bc.Program) {
			p.Imports[0].Symbols = []string{"ext2", "ext"}
		}), `imported symbol "ext" is out of order or duplicated`},
		{"imported twice", encoded(func(p *bc.Program) {
			p.Imports = append(p.Imports, bc.Import{From: [32]byte{0xFF}, Symbols: []string{"ext"}})
		}), `symbol "ext" is imported twice`},
		{"relocs unsorted", encoded(func(p *bc.Program) {
			p.Relocs[0], p.Relocs[1] = p.Relocs[1], p.Relocs[0]
		}), "relocation at 0:8 is out of order or duplicated"},
		{"reloc unknown symbol", encoded(func(p *bc.Program) { p.Relocs[0].Symbol = "nope" }),
			"symbol is neither defined nor imported"},
		{"reloc value", encoded(func(p *bc.Program) { p.Relocs[0].Symbol = "main" }),
			`relocation 0:8 ("main"): holds 48, want 8`},
		{"reloc not LI", encoded(func(p *bc.Program) { p.Relocs[0].Offset = 0 }),
			"does not mark an LI instruction"},
		{"reloc not jump", encoded(func(p *bc.Program) { p.Relocs[1].Offset = 32 }),
			"does not mark a jump or call"},
		{"reloc internal jump", encoded(func(p *bc.Program) {
			p.Relocs[1].Symbol = "main"
			binary.LittleEndian.PutUint32(p.Code[24+4:], 8)
		}), "jump relocations are only for imported symbols"},
		{"reloc outside data", encoded(func(p *bc.Program) { p.Relocs[2].Offset = 12 }),
			"lies outside the data section"},
		{"reloc kind", encoded(func(p *bc.Program) { p.Relocs[2].Kind = 7 }), "unknown section 1 or kind 7"},
		{"metadata length", patch(len(good)-len(sample().Metadata)-4, 0xFF, 0xFF, 0xFF, 0xFF),
			"metadata length 4294967295 exceeds"},
		{"symbol count", patch(bc.HeaderSize+48+4+16, 0xFF, 0xFF, 0xFF, 0xFF),
			"offset 88 (0x58): symbol count 4294967295 cannot fit"},
	} {
		t.Run(c.name, func(t *testing.T) {
			p, err := bc.Decode(c.file)
			if err == nil {
				t.Fatalf("Decode succeeded: %+v", p)
			}
			if p != nil {
				t.Error("Decode returned a program with its error")
			}
			if _, ok := err.(*bc.FormatError); !ok {
				t.Errorf("error is %T, want *bytecode.FormatError", err)
			}
			if !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %q does not contain %q", err, c.want)
			}
		})
	}
}

func TestVerifyCodeLimit(t *testing.T) {
	// A jump target is a 32-bit byte address, so code is limited to 4 GiB
	// less one instruction. Verify must say so before decoding anything.
	p := &bc.Program{Code: make([]byte, 0)}
	p.Code = p.Code[:0]
	if strconv.IntSize < 64 {
		t.Skip("a code section over 4 GiB cannot exist on a 32-bit host")
	}
	size := uint64(bc.MaxCode) + 8 // pages never touched: costs no memory
	big := &bc.Program{Code: make([]byte, size)}
	if err := big.Verify(); err == nil || !strings.Contains(err.Error(), "the limit is") {
		t.Errorf("Verify of %d bytes of code: %v", len(big.Code), err)
	}
	if err := p.Verify(); err == nil {
		t.Error("Verify accepted a program without code")
	}
}

// FuzzDecode: whatever the bytes, Decode never panics, and a file it
// accepts is canonical: encoding the program gives back exactly the file.
func FuzzDecode(f *testing.F) {
	f.Add(sample().Encode())
	f.Add((&bc.Program{Code: code(bc.Inst{Op: bc.HALT})}).Encode())
	f.Add([]byte("FRGP"))
	f.Fuzz(func(t *testing.T, file []byte) {
		p, err := bc.Decode(file)
		if err != nil {
			if p != nil {
				t.Fatal("Decode returned a program and an error")
			}
			if _, ok := err.(*bc.FormatError); !ok {
				t.Fatalf("error %v is %T, want *bytecode.FormatError", err, err)
			}
			return
		}
		if err := p.Verify(); err != nil {
			t.Fatalf("Decode accepted a program Verify rejects: %v", err)
		}
		if got := p.Encode(); !bytes.Equal(got, file) {
			t.Fatalf("Encode(Decode(file)) differs from file:\n got % x\nwant % x", got, file)
		}
	})
}
