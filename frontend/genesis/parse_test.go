package genesis

import (
	"fmt"
	"testing"
)

// TestInvalidUTF8 checks that a byte that is not UTF-8 is reported where
// it is (ANTLR would silently read it as U+FFFD).
func TestInvalidUTF8(t *testing.T) {
	src := []byte("fn main() -> void {\n  let s: *u8 = \"a\xffb\";\n}\n")
	_, diags := Parse("in.gen", src)
	if len(diags) == 0 {
		t.Fatal("no diagnostic")
	}
	if got, want := diags[0].Error(), "in.gen:2:18: error[0x0800]: invalid UTF-8 byte 0xff"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

// TestCheckAfterSyntaxErrors checks that Check survives the holes error
// recovery leaves, without reporting anything about them as internal.
func TestCheckAfterSyntaxErrors(t *testing.T) {
	for _, src := range []string{
		"fn main() -> void { let x: u64 = ; x = ; f(,); }",
		"fn main( -> { match { } asm ( { } ",
		"struct { } enum { } type = ; fn () -> {",
		"fn main() -> void { a.; p->; [1; ]; S { x: }; }",
	} {
		f, diags := Parse("in.gen", []byte(src))
		if !diags.HasErrors() {
			t.Errorf("%q parsed without errors", src)
		}
		_, diags = Check([]*File{f})
		for _, d := range diags {
			if d.Code == CodeInternal {
				t.Errorf("%q: %s", src, d)
			}
		}
	}
}

// TestAnnotations checks what Check promises lowering beyond the golden
// output: objects, fields, variants and layouts.
func TestAnnotations(t *testing.T) {
	src := `
struct P { a: u8, b: u64, c: u16 }
enum E { X, Y(u8, u32) }
fn main() -> void {
  let mut p: P = P { a: 0y01, b: 2, c: 3 };
  let q: *mut P = &p;
  let e: E = Y(0y01, 2);
}
`
	f, diags := Parse("in.gen", []byte(src))
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	prog, diags := Check([]*File{f})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	st := prog.Structs[0]
	if Sizeof(st) != 24 || Alignof(st) != 8 {
		t.Errorf("P: size %d align %d, want 24 8", Sizeof(st), Alignof(st))
	}
	var offs []uint64
	for _, fl := range st.Fields {
		offs = append(offs, fl.Offset)
	}
	if got := fmt.Sprint(offs); got != "[0 8 16]" {
		t.Errorf("P field offsets %s, want [0 8 16]", got)
	}
	en := prog.Enums[0]
	tag, payload := en.VariantLayout()
	if tag != 1 || payload != 4 || Sizeof(en) != 12 {
		t.Errorf("E: tag %d payload at %d size %d, want 1 4 12", tag, payload, Sizeof(en))
	}
	main := prog.Main
	if main == nil || len(main.Locals) != 3 {
		t.Fatalf("main: %v", main)
	}
	if !main.Locals[0].Addr || main.Locals[1].Addr {
		t.Errorf("p must be address-taken, q not")
	}
}

// TestParseFilesErrorCap checks that the error cap is the program's, not
// a file's: 12 errors in each of two files make 20 errors and a
// CodeTooMany, and a third file is not parsed.
func TestParseFilesErrorCap(t *testing.T) {
	src := "fn main() -> void {\n"
	for i := 0; i < 12; i++ {
		src += fmt.Sprintf("  let x%d u64 = %d;\n", i, i)
	}
	src += "}\n"
	files, diags := ParseFiles([]Source{{Name: "a.gen", Data: []byte(src)}, {Name: "b.gen", Data: []byte(src)}, {Name: "c.gen", Data: []byte(src)}})
	if len(files) != 3 || files[2] == nil || len(files[2].Decls) != 0 {
		t.Fatalf("files: %v", files)
	}
	if len(diags) != MaxErrors+1 {
		t.Fatalf("%d diagnostics, want %d:\n%v", len(diags), MaxErrors+1, diags)
	}
	if last := diags[MaxErrors]; last.Code != CodeTooMany || last.Pos.File != "b.gen" || last.Pos.Line != 10 {
		t.Errorf("last diagnostic %s, want a %s at b.gen:10", last, CodeTooMany)
	}
}
