package genesis

import (
	"fmt"
	"strings"
	"testing"

	"github.com/genesis-toolchain/genesis/diag"
	"github.com/genesis-toolchain/genesis/internal/inputlimits"
)

// checkOnePass is what CheckHolding must report: ParseFiles, Check and
// CheckLowering on the whole program.
func checkOnePass(srcs []Source) diag.List {
	files, diags := ParseFiles(srcs)
	if diags.HasErrors() {
		return diags
	}
	prog, ds := Check(files)
	diags = append(diags, ds...)
	if diags.HasErrors() {
		return diags
	}
	return append(diags, CheckLowering(prog)...)
}

// TestCheckFilesIsOnePass checks that the check in two passes reports
// what the one-pass check does — errors of the declarations, of the
// bodies, past the error cap, of the lowering, of main — on programs
// large enough to be cut into many chunks, and that it takes the two
// passes (rather than falling back to the one-pass check) on every
// program that lexes and parses.
func TestCheckFilesIsOnePass(t *testing.T) {
	base := string(inputlimits.GenesisProgram(100 << 10))
	small := string(inputlimits.GenesisProgram(4 << 10))
	mid := string(inputlimits.GenesisProgram(24 << 10))
	// A function with a body error, placed after the i-th function.
	bodyErr := func(i int) string {
		return fmt.Sprintf("fn bad%d(x: i64) -> i64 {\n  let y: bool = x;\n  x\n}\n", i)
	}
	insert := func(src string, every int, f func(i int) string) string {
		var b strings.Builder
		for i, part := range strings.SplitAfter(src, "}\n\n") {
			b.WriteString(part)
			if i%every == every-1 {
				b.WriteString(f(i))
			}
		}
		return b.String()
	}
	cases := []struct {
		name     string
		srcs     []Source
		twoPass  bool // the two passes must accept it
		wantErrs bool
	}{
		{"valid", []Source{{Name: "a.gen", Data: []byte(base)}}, true, false},
		{"two files", []Source{{Name: "a.gen", Data: []byte(base)}, {Name: "b.gen", Data: []byte("fn g(p: *fn(i64) -> i64) -> *fn(i64) -> i64 { p }\ntype F = *fn() -> i64;\n")}}, true, false},
		{"a body error", []Source{{Name: "a.gen", Data: []byte(insert(base, 150, bodyErr))}}, true, true},
		{"past the error cap", []Source{{Name: "a.gen", Data: []byte(insert(base, 10, bodyErr))}}, true, true},
		{"a duplicate function", []Source{{Name: "a.gen", Data: []byte(base + "fn f7(n: i64) -> i64 { let b: bool = 1; n }\n")}}, true, true},
		{"a signature error", []Source{{Name: "a.gen", Data: []byte(base + "fn h(x: Nope) -> i64 { 1 }\n")}}, true, true},
		{"no main", []Source{{Name: "a.gen", Data: []byte(strings.Replace(base, "fn main()", "fn notmain()", 1))}}, true, true},
		{"a lowering error", []Source{{Name: "a.gen", Data: []byte(insert(base, 100, func(i int) string {
			return fmt.Sprintf("fn big%d() -> void {\n  let mut a: [u8; 4294967296] = [0y00; 4294967296];\n  let b: [u8; 4294967296] = a;\n}\n", i)
		}))}}, true, true},
		{"unicode and CRLF in bodies", []Source{{Name: "a.gen", Data: []byte(strings.ReplaceAll(insert(base, 40, func(i int) string {
			return fmt.Sprintf("fn s%d() -> i64 {\n  let s: *u8 = \"héllo ✓ 𝄞\"; // ünïcode\n  /* ✓ */ let t: bool = 0;\n  1\n}\n", i)
		}), "\n", "\r\n"))}}, true, true},
		// Falling back to the one-pass check: small programs suffice.
		{"a syntax error", []Source{{Name: "a.gen", Data: []byte(small + "fn broken( -> i64 { 1 }\n")}}, false, true},
		// The error cap stops the bodies' check before the chunk with the
		// syntax error, which is all the one-pass check reports.
		{"the error cap, then a syntax error", []Source{{Name: "a.gen", Data: []byte(insert(mid, 1, bodyErr) + mid + "fn broken( -> i64 { 1 }\n")}}, false, true},
		{"a lexical error", []Source{{Name: "a.gen", Data: []byte(small + "fn q() -> i64 { 1 $ 2 }\n")}}, false, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			want := checkOnePass(c.srcs)
			peaks := 0
			got, ok := checkTwoPasses(c.srcs, func() { peaks++ })
			if ok != c.twoPass {
				t.Errorf("the two passes took it: %v, want %v", ok, c.twoPass)
			}
			if !ok {
				got = CheckHolding(c.srcs, nil)
			}
			if g, w := got.Render(sourcesOf(c.srcs)), want.Render(sourcesOf(c.srcs)); g != w {
				t.Errorf("CheckHolding reports\n%s\nthe one-pass check\n%s", g, w)
			}
			if want.HasErrors() != c.wantErrs {
				t.Errorf("errors: %v, want %v:\n%s", want.HasErrors(), c.wantErrs, want.Error())
			}
			// The error cap stops a check before its peak.
			if ok && (peaks > 1 || peaks == 0 && !want.HasErrors()) {
				t.Errorf("atPeak called %d times, want once", peaks)
			}
		})
	}
}

func sourcesOf(srcs []Source) diag.Sources {
	m := diag.Sources{}
	for _, s := range srcs {
		m[s.Name] = s.Data
	}
	return m
}
