package fasm

import (
	"bytes"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/genesis-toolchain/genesis/diag"
	"github.com/genesis-toolchain/genesis/forge/bytecode"
	"github.com/genesis-toolchain/genesis/internal/filetest"
)

// goldenFiles are the cases of tests/fasm. Each opens with its header
// (docs/testing.md) and holds in.fasm: "test assemble" pins the program
// as out/hex (an annotated dump) and out/disasm (its disassembly); "test
// errors", a case named err_*, pins the rendered diagnostics as
// out/errors.
var goldenFiles = filepath.Join("..", "..", "tests", "fasm", "*.txtar")

// goldenSources returns the in.fasm of every golden case, to seed the
// fuzz targets.
func goldenSources(tb testing.TB) []string {
	var srcs []string
	for _, path := range filetest.Files(tb, goldenFiles) {
		c, err := filetest.Load(path)
		if err != nil {
			tb.Fatal(err)
		}
		src, _ := c.File("in.fasm")
		srcs = append(srcs, src)
	}
	return srcs
}

// suite runs the golden cases: "test assemble" (out/hex, out/disasm) or
// "test errors" (out/errors).
var suite = filetest.Suite{
	Checks:  map[string]filetest.Check{"assemble": checkAssemble, "errors": checkAssemble},
	Outputs: map[string][]string{"assemble": {"out/hex", "out/disasm"}, "errors": {"out/errors"}},
}

// TestGolden assembles the golden cases and checks the diagnostics, or
// the program, its disassembly and the roundtrip through them.
func TestGolden(t *testing.T) {
	filetest.Run(t, goldenFiles, suite)
}

// checkAssemble assembles the case's in.fasm, which must assemble for
// "test assemble" and must not for "test errors".
func checkAssemble(t *testing.T, c *filetest.Case, d filetest.Directive) {
	src, ok := c.File("in.fasm")
	if !ok {
		t.Fatal("no in.fasm section")
	}
	isErr := d.Name == "errors"
	if isErr != strings.HasPrefix(c.Name, "err_") {
		t.Errorf("test %s: a case named err_* is \"test errors\", any other \"test assemble\"", d)
	}
	p, diags := Assemble("in.fasm", []byte(src))
	if diags.HasErrors() {
		if p != nil {
			t.Error("Assemble returned a program along with errors")
		}
		rendered := diags.Render(diag.Sources{"in.fasm": []byte(src)})
		if !isErr {
			t.Errorf("does not assemble:\n%s", rendered)
		}
		c.Check("out/errors", rendered)
		return
	}
	if isErr {
		t.Error("a \"test errors\" case assembles")
	}
	if len(diags) > 0 {
		t.Errorf("diagnostics without errors:\n%s", diags)
	}
	c.Check("out/hex", dump(p))
	c.Check("out/disasm", Disassemble(p))
	checkRoundtrip(t, p)
}

// checkRoundtrip checks that p survives encoding, decoding, disassembly
// and assembly byte for byte.
func checkRoundtrip(t *testing.T, p *bytecode.Program) {
	t.Helper()
	if err := p.Verify(); err != nil {
		t.Fatalf("program does not verify: %v", err)
	}
	file := p.Encode()
	q, err := bytecode.Decode(file)
	if err != nil {
		t.Fatalf("Decode(Encode(p)): %v", err)
	}
	text := Disassemble(q)
	r, diags := Assemble("disasm.fasm", []byte(text))
	if diags.HasErrors() {
		t.Fatalf("the disassembly does not assemble:\n%s\n%s", diags.Render(diag.Sources{"disasm.fasm": []byte(text)}), text)
	}
	if got := r.Encode(); !bytes.Equal(got, file) {
		t.Fatalf("the disassembly assembles to another program:\n%s\nwant:\n%s\ngot:\n%s", text, dump(p), dump(r))
	}
}

// dump writes every part of p, one instruction, 16 data bytes or table
// entry a line, then the sha256 of the file.
func dump(p *bytecode.Program) string {
	var b strings.Builder
	fmt.Fprintf(&b, "entry 0x%04x\n", p.Entry)
	for off := 0; off < len(p.Code); {
		in, err := bytecode.DecodeAt(p.Code, off)
		if err != nil {
			fmt.Fprintf(&b, "code 0x%04x: %v\n", off, err)
			break
		}
		n := in.Size()
		fmt.Fprintf(&b, "code 0x%04x  %-48s %s\n", off, fmt.Sprintf("% x", p.Code[off:off+n]), in.Op)
		off += n
	}
	for off := 0; off < len(p.Data); off += 16 {
		fmt.Fprintf(&b, "data 0x%04x  % x\n", off, p.Data[off:min(off+16, len(p.Data))])
	}
	for _, s := range p.Symbols {
		fmt.Fprintf(&b, "symbol %q 0x%04x\n", s.Name, s.Addr)
	}
	for _, im := range p.Imports {
		fmt.Fprintf(&b, "import %x %q\n", im.From, im.Symbols)
	}
	for _, r := range p.Relocs {
		section, kind := "code", "abs64"
		if r.Section == bytecode.SectionData {
			section = "data"
		}
		if r.Kind == bytecode.RelocTarget {
			kind = "target"
		}
		fmt.Fprintf(&b, "reloc %s 0x%04x %s %q\n", section, r.Offset, kind, r.Symbol)
	}
	if len(p.Metadata) > 0 {
		fmt.Fprintf(&b, "metadata %q\n", p.Metadata)
	}
	fmt.Fprintf(&b, "sha256 %x\n", p.Hash())
	return b.String()
}
