package fasm

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"

	"github.com/genesis-toolchain/genesis/diag"
	"github.com/genesis-toolchain/genesis/forge/bytecode"
)

// TestRoundtripRandom checks the disassembler's guarantee on random valid
// programs built from the opcode table: every instruction and field,
// symbols where no label can go, names that must be quoted, imports,
// relocations of every kind (overlapping ones too), and metadata.
func TestRoundtripRandom(t *testing.T) {
	for seed := range uint64(500) {
		p := randomProgram(rand.New(rand.NewPCG(seed, 1)))
		if err := p.Verify(); err != nil {
			t.Fatalf("seed %d: the generator built an invalid program: %v", seed, err)
		}
		t.Run(fmt.Sprint(seed), func(t *testing.T) { checkRoundtrip(t, p) })
	}
}

// randomProgram returns a valid, canonical program.
func randomProgram(r *rand.Rand) *bytecode.Program {
	p := &bytecode.Program{Data: randomData(r)}
	if r.IntN(3) == 0 {
		p.Metadata = randomBytes(r, r.IntN(100))
	}
	names := randomNames(r, 12)

	var imported []string
	for range r.IntN(3) {
		im := bytecode.Import{}
		for i := range im.From {
			im.From[i] = byte(r.Uint32())
		}
		for range 1 + r.IntN(3) {
			if len(names) > 0 {
				im.Symbols = append(im.Symbols, names[0])
				imported = append(imported, names[0])
				names = names[1:]
			}
		}
		if len(im.Symbols) > 0 {
			p.Imports = append(p.Imports, im)
		}
	}

	infos := bytecode.Instructions()
	var insts []bytecode.Inst
	var offs []uint64
	size := uint64(0)
	for range 1 + r.IntN(30) {
		info := infos[r.IntN(len(infos))]
		insts = append(insts, bytecode.Inst{Op: info.Op})
		offs = append(offs, size)
		size += uint64(info.Size())
	}
	dataEnd := size + uint64(len(p.Data))

	// Symbols: at instruction starts, in the middle of an LI, anywhere in
	// the data, and at its end.
	addrOf := map[string]uint64{}
	var defined []string
	for range r.IntN(8) {
		if len(names) == 0 {
			break
		}
		var addr uint64
		switch i := r.IntN(len(offs)); r.IntN(4) {
		case 0:
			addr = offs[i]
		case 1:
			addr = offs[i]
			if insts[i].Op == bytecode.LI {
				addr += 8
			}
		case 2:
			addr = size + uint64(r.IntN(len(p.Data)+1))
		case 3:
			addr = dataEnd
		}
		name := names[0]
		names = names[1:]
		p.Symbols = append(p.Symbols, bytecode.Symbol{Name: name, Addr: addr})
		addrOf[name] = addr
		defined = append(defined, name)
	}

	for i := range insts {
		in := &insts[i]
		info := bytecode.Lookup(in.Op)
		a, b, c, imm := info.Format.Uses()
		if a {
			in.A = uint8(r.Uint32())
		}
		if b {
			in.B = uint8(r.Uint32())
		}
		if c {
			in.C = uint8(r.Uint32())
		}
		if imm {
			in.Imm = uint64(r.Uint32())
		}
		reloc := bytecode.Reloc{Section: bytecode.SectionCode, Offset: uint32(offs[i])}
		switch {
		case bytecode.IsTransfer(in.Op):
			in.Imm = offs[r.IntN(len(offs))]
			if len(imported) > 0 && r.IntN(4) == 0 {
				reloc.Kind, reloc.Symbol = bytecode.RelocTarget, imported[r.IntN(len(imported))]
				in.Imm = 0
			}
		case in.Op == bytecode.LI:
			in.Imm = randomWord(r)
			if len(defined) > 0 && r.IntN(3) == 0 {
				reloc.Kind, reloc.Symbol = bytecode.RelocAbs64, defined[r.IntN(len(defined))]
				in.Imm = addrOf[reloc.Symbol]
			} else if len(imported) > 0 && r.IntN(4) == 0 {
				reloc.Kind, reloc.Symbol = bytecode.RelocAbs64, imported[r.IntN(len(imported))]
				in.Imm = 0
			}
		}
		if reloc.Kind != 0 {
			p.Relocs = append(p.Relocs, reloc)
		}
		p.Code = in.Append(p.Code)
	}

	// Data relocations at random offsets, so that some overlap. A later
	// one may overwrite the bytes of an earlier one: only those that still
	// hold their symbol's address are kept.
	type dataReloc struct {
		off  uint32
		name string
		addr uint64
	}
	var relocs []dataReloc
	at := map[uint32]bool{}
	if len(p.Data) >= 8 && len(defined)+len(imported) > 0 {
		for range r.IntN(6) {
			off := uint32(r.IntN(len(p.Data) - 7))
			if at[off] {
				continue
			}
			at[off] = true
			rl := dataReloc{off: off}
			if i := r.IntN(len(defined) + len(imported)); i < len(defined) {
				rl.name, rl.addr = defined[i], addrOf[defined[i]]
			} else {
				rl.name = imported[i-len(defined)]
			}
			binary.LittleEndian.PutUint64(p.Data[off:], rl.addr)
			relocs = append(relocs, rl)
		}
	}
	for _, rl := range relocs {
		if binary.LittleEndian.Uint64(p.Data[rl.off:]) == rl.addr {
			p.Relocs = append(p.Relocs, bytecode.Reloc{Section: bytecode.SectionData, Kind: bytecode.RelocAbs64, Offset: rl.off, Symbol: rl.name})
		}
	}

	p.Entry = offs[r.IntN(len(offs))]
	p.Canonicalize()
	return p
}

// randomData mixes text, runs of zeros and arbitrary bytes.
func randomData(r *rand.Rand) []byte {
	var b []byte
	for range r.IntN(6) {
		switch r.IntN(4) {
		case 0:
			b = append(b, "Hello, world!\n\tA \"quoted\" line\\\r\n"[:r.IntN(34)]...)
		case 1:
			b = append(b, make([]byte, r.IntN(20))...)
		case 2:
			b = append(b, randomBytes(r, r.IntN(20))...)
		case 3:
			b = append(b, "text\x00"...)
		}
	}
	return b
}

func randomBytes(r *rand.Rand, n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}

// randomWord returns small, negative and large values alike.
func randomWord(r *rand.Rand) uint64 {
	switch r.IntN(4) {
	case 0:
		return uint64(r.IntN(100))
	case 1:
		return uint64(-r.Int64N(1 << 20))
	}
	return r.Uint64()
}

// randomNames returns n distinct names, many of which need quotes.
func randomNames(r *rand.Rand, n int) []string {
	forms := []func(i int) string{
		func(i int) string { return fmt.Sprintf("L%d", i) },
		func(i int) string { return fmt.Sprintf("main.f%d_x", i) },
		func(i int) string { return fmt.Sprintf("r%d", i) },                              // looks like a register
		func(i int) string { return fmt.Sprintf("%064x", i) },                            // looks like a hash
		func(i int) string { return fmt.Sprintf("%d", i) },                               // a number
		func(i int) string { return fmt.Sprintf("add%d", i) },                            // a mnemonic with a suffix
		func(i int) string { return fmt.Sprintf("with space %d", i) },                    // not one token
		func(i int) string { return fmt.Sprintf("q\"b\\%d\n\t\x01", i) },                 // escapes
		func(i int) string { return fmt.Sprintf("ünï%d€", i) },                           // UTF-8
		func(i int) string { return fmt.Sprintf(".text%d", i) },                          // a directive
		func(i int) string { return fmt.Sprintf("x%d:", i) },                             // a label
		func(i int) string { return strings.Repeat("long", 100) + fmt.Sprint(i) },        // long
		func(i int) string { return fmt.Sprintf("R%d", i) },                              // upper-case register
		func(i int) string { return fmt.Sprintf("%064X", i)[:63] + "g" + fmt.Sprint(i) }, // almost a hash
	}
	names := make([]string, n)
	for i := range names {
		names[i] = forms[r.IntN(len(forms))](i)
	}
	return names
}

// TestRoundtripNames checks that every kind of name survives as a label,
// a .symbol, an import and a relocation.
func TestRoundtripNames(t *testing.T) {
	for _, name := range []string{"a", "A.b_c", "r0", "R255", "r", "rx", "0x10", "5", "ADD", "halt", ".data",
		"a b", "\"", "\\", "\x00", "\x7f", "é", strings.Repeat("f", 64), strings.Repeat("F", 64), strings.Repeat("z", maxName)} {
		p := &bytecode.Program{
			Code:    bytecode.Inst{Op: bytecode.LI}.Append(nil),
			Symbols: []bytecode.Symbol{{Name: name, Addr: 0}, {Name: name + "!", Addr: 8}},
			Imports: []bytecode.Import{{Symbols: []string{name + "?"}}},
			Relocs:  []bytecode.Reloc{{Section: bytecode.SectionCode, Kind: bytecode.RelocAbs64, Offset: 0, Symbol: name}},
		}
		if len(name+"!") > maxName {
			p.Symbols[1].Name, p.Imports[0].Symbols[0] = "other", "imported"
		}
		p.Canonicalize()
		t.Run(abbreviate(name), func(t *testing.T) { checkRoundtrip(t, p) })
	}
}

// TestCRLF checks that carriage returns before newlines are ignored.
func TestCRLF(t *testing.T) {
	src := "main:\n  LI r1, msg ; load\n  JMP main\n.data\nmsg: .ascii \"a\\r\\n\"\n"
	want, diags := Assemble("lf.fasm", []byte(src))
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	got, diags := Assemble("crlf.fasm", []byte(strings.ReplaceAll(src, "\n", "\r\n")))
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	if !bytes.Equal(got.Encode(), want.Encode()) {
		t.Errorf("CRLF source assembles differently:\n%s\n%s", Disassemble(got), Disassemble(want))
	}
}

// TestDataLimit checks that the data section cannot outgrow the limit,
// however the source asks for it.
func TestDataLimit(t *testing.T) {
	for _, src := range []string{
		"HALT\n.data\n.zero 1025\n",
		"HALT\n.data\n.zero 1024\n.byte 1\n",
		"HALT\n.data\n.zero 1000\n.align 65536\n",
		"HALT\n.data\n.zero 18446744073709551615\n.zero 18446744073709551615\n",
	} {
		p, diags := assemble("big.fasm", []byte(src), 1024)
		if p != nil || len(diags) != 1 || diags[0].Code != codeRange {
			t.Errorf("%q: got %v, want one %s error", src, diags, codeRange)
		}
	}
	if _, diags := assemble("fits.fasm", []byte("HALT\n.data\n.zero 1024\n"), 1024); len(diags) > 0 {
		t.Errorf("a data section of exactly the limit: %v", diags)
	}
}

// FuzzAssemble checks that no source makes the assembler panic, that what
// it accepts verifies, and that its disassembly assembles to the same
// bytes. The seeds are the golden cases and a few odd inputs.
func FuzzAssemble(f *testing.F) {
	for _, src := range goldenSources(f) {
		f.Add(src)
	}
	for _, src := range []string{
		"", "\n", ":", "::", "\"", "\"\\", "\"\\x", "-", "--1", ",", "r", "r0:", "\x00", "\xff", "\r",
		"a: b: c:", "LI r1, -", ".import", ".import 00", ".entry 0\nHALT", ".data\n.reloc x",
		strings.Repeat("0", 64) + ":", "JMP " + strings.Repeat("9", 30),
		// Long lines: operands and labels by the thousand.
		".text\nADD " + strings.Repeat("r1, ", 5000) + "r1", strings.Repeat("a:", 5000) + " HALT",
	} {
		f.Add(src)
	}
	f.Fuzz(func(t *testing.T, src string) {
		p, diags := assemble("fuzz.fasm", []byte(src), 1<<16)
		_ = diags.Render(diag.Sources{"fuzz.fasm": []byte(src)}) // must not panic either
		if diags.HasErrors() {
			if p != nil {
				t.Fatal("a program along with errors")
			}
			if len(diags) > maxErrors+1 {
				t.Fatalf("%d diagnostics, the cap is %d", len(diags), maxErrors)
			}
			return
		}
		checkRoundtrip(t, p)
	})
}

// FuzzDisassemble checks the disassembler's guarantee on any file that
// bytecode.Decode accepts.
func FuzzDisassemble(f *testing.F) {
	for _, src := range goldenSources(f) {
		if p, diags := Assemble("in.fasm", []byte(src)); !diags.HasErrors() {
			f.Add(p.Encode())
		}
	}
	for seed := range uint64(20) {
		f.Add(randomProgram(rand.New(rand.NewPCG(seed, 2))).Encode())
	}
	f.Fuzz(func(t *testing.T, file []byte) {
		p, err := bytecode.Decode(file)
		if err != nil {
			return
		}
		checkRoundtrip(t, p)
	})
}

// TestAssembleConcurrently checks, under go test -race, that Assemble may
// run on several goroutines: ANTLR shares its prediction caches between
// parsers.
func TestAssembleConcurrently(t *testing.T) {
	srcs := goldenSources(t)
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for _, src := range srcs {
				Assemble("in.fasm", []byte(src))
			}
		})
	}
	wg.Wait()
}
