package genesis

import (
	"fmt"
	"strings"
	"testing"

	"github.com/genesis-toolchain/genesis/internal/inputlimits"
	"github.com/genesis-toolchain/genesis/ir"
)

// Hostile input: deep nesting, long flat chains and large files
// (docs/genesis.md "Limits"). No test here measures time: a quadratic
// phase shows as allocation counts out of proportion, and go test's own
// timeout is the hang guard.

// nestingCases are the recursive constructs of the grammar, each made n
// levels deep by gen, as a whole program whose main is well-typed.
var nestingCases = []struct {
	name string
	gen  func(n int) string
}{
	{"parens", func(n int) string { return body("i64", rep("(", n)+"1"+rep(")", n)) }},
	{"blocks", func(n int) string { return body("i64", rep("{ ", n)+"1"+rep(" }", n)) }},
	{"minus", func(n int) string { return body("i64", rep("- ", n)+"1") }},
	{"not", func(n int) string { return body("bool", rep("!", n)+"true") }},
	{"complement", func(n int) string { return body("i64", rep("~", n)+"1") }},
	{"deref and address", func(n int) string { return body("i64", "let x: i64 = 1; "+rep("* & ", n/2)+"x") }},
	{"calls", func(n int) string {
		return "fn g(x: i64) -> i64 { x }\n" + body("i64", rep("g(", n)+"1"+rep(")", n))
	}},
	{"indexes", func(n int) string {
		return body("i64", "let a: [i64; 1] = [0; 1]; "+rep("a[", n)+"0"+rep("]", n))
	}},
	{"match arms", func(n int) string {
		return body("i64", "let x: i64 = 1; "+rep("match x { 0 => ", n)+"1"+rep(", _ => 2 }", n))
	}},
	{"else if statements", func(n int) string {
		return body("i64", "let x: i64 = 3; "+rep("if x == 0 { return 1; } else ", n)+"{ return 2; } return 0;")
	}},
	{"else if expressions", func(n int) string {
		return body("i64", "let x: i64 = 3; "+rep("if x == 0 { 1 } else ", n)+"{ 2 }")
	}},
	{"nested ifs", func(n int) string { return body("i64", rep("if true { ", n)+"return 1;"+rep(" }", n)+" 0") }},
	{"whiles", func(n int) string { return body("i64", rep("while true { ", n)+"break;"+rep(" }", n)+" 0") }},
	{"struct literals", func(n int) string {
		return "struct S { v: i64 }\n" + body("i64", rep("S { v: ", n)+"1"+rep(" }.v", n))
	}},
	{"array literals", func(n int) string {
		return body("i64", "let v: "+rep("[", n)+"i64"+rep("; 1]", n)+" = "+rep("[", n)+"1"+rep("; 1]", n)+"; 0")
	}},
	{"pointer types", func(n int) string { return "type T = " + rep("*", n) + "i64;\n" + body("i64", "0") }},
	{"array types", func(n int) string {
		return "type T = " + rep("[", n) + "i64" + rep("; 1]", n) + ";\n" + body("i64", "0")
	}},
	{"function types", func(n int) string { return "type T = " + rep("*fn() -> ", n) + "i64;\n" + body("i64", "0") }},
}

func rep(s string, n int) string { return strings.Repeat(s, n) }

// body is a program whose function f returns t, with body as its body,
// and a main that calls it.
func body(t, body string) string {
	return "fn f() -> " + t + " {\n" + body + "\n}\nfn main() -> void { f(); }\n"
}

// TestNestingLimit checks that every recursive construct nested far
// beyond MaxNesting gets one diagnostic, at a token of the nest, instead
// of a stack overflow or minutes of parsing; and that nested a few
// hundred levels it parses, checks, lowers and verifies.
func TestNestingLimit(t *testing.T) {
	for _, c := range nestingCases {
		t.Run(c.name, func(t *testing.T) {
			src := c.gen(100_000)
			_, diags := Parse("deep.gen", []byte(src))
			if len(diags) != 1 {
				t.Fatalf("%d diagnostics, want 1: %v", len(diags), diags)
			}
			d := diags[0]
			want := fmt.Sprintf("nesting deeper than %d levels", MaxNesting)
			if d.Code != CodeSyntax || !strings.Contains(d.Msg, want) || d.Pos.Line < 1 || d.Pos.Col < 1 {
				t.Fatalf("got %s, want a %s error %q with a position", d, CodeSyntax, want)
			}

			// 200 levels: each of them counts at most 3 (the function
			// types: *, fn and ->).
			compiles(t, c.gen(200))
		})
	}
}

// compiles parses, checks, lowers and verifies src, failing on any error.
func compiles(t *testing.T, src string) {
	t.Helper()
	f, diags := Parse("in.gen", []byte(src))
	if diags.HasErrors() {
		t.Fatalf("Parse: %v", diags)
	}
	prog, diags := Check([]*File{f})
	if diags.HasErrors() {
		t.Fatalf("Check: %v", diags)
	}
	m, diags := Lower(prog)
	if diags.HasErrors() {
		t.Fatalf("Lower: %v", diags)
	}
	if diags := ir.Verify(m); diags.HasErrors() {
		t.Fatalf("Verify: %v", diags)
	}
}

// TestNestingBoundary checks the limit to the level: the function body's
// brace is level 1, so MaxNesting-1 parentheses inside it are accepted and
// one more is reported at that parenthesis.
func TestNestingBoundary(t *testing.T) {
	prog := func(n int) string {
		return "fn main() -> void {\n  let x: i64 = " + rep("(", n) + "1" + rep(")", n) + ";\n}\n"
	}
	if _, diags := Parse("in.gen", []byte(prog(MaxNesting-1))); len(diags) != 0 {
		t.Fatalf("%d levels: %v", MaxNesting, diags)
	}
	_, diags := Parse("in.gen", []byte(prog(MaxNesting)))
	want := fmt.Sprintf("in.gen:2:%d: error[%s]: nesting deeper than %d levels", len("  let x: i64 = ")+MaxNesting, CodeSyntax, MaxNesting)
	if len(diags) != 1 || !strings.HasPrefix(diags[0].Error(), want) {
		t.Fatalf("got %v, want one %q", diags, want)
	}
}

// TestLinearWork checks that the work of every phase grows linearly with
// the input, by the allocation count of inputs n and 4n large: a long
// flat chain 1+1+…+1 (100,000 terms: Check walked the chain below each
// operator again, quadratic), and nests of the slowest constructs to
// predict, a few hundred levels deep.
func TestLinearWork(t *testing.T) {
	chain := func(n int) string { return body("i64", "let x: i64 = 0;\nx"+rep(" + 1", n-1)) }
	inputlimits.LinearWork(t, []inputlimits.Scaled{
		{Name: "flat chain", Gen: chain, N: 25_000},
		{Name: "calls", Gen: nestingCases[6].gen, N: 60},
		{Name: "indexes", Gen: nestingCases[7].gen, N: 60},
		{Name: "else if statements", Gen: nestingCases[9].gen, N: 60},
	}, compiles)
}

// TestLongChain compiles a 100,000-term 1+1+…+1, which no phase may
// refuse or take quadratic time on: it is flat in the source.
func TestLongChain(t *testing.T) {
	compiles(t, body("i64", rep("1 + ", 99_999)+"1"))
}

// Memory bounds of Parse and Check (docs/genesis.md "Limits"), in bytes
// per byte of input: everything they allocate, and what stays live (the
// annotated tree) after. Measured: 340 and 25 (5 MB of inputlimits.GenesisProgram).
const (
	maxAllocPerByte = 400
	maxLivePerByte  = 40
)

// TestLargeInput checks the memory of parsing and checking a 5 MB file
// against the documented bounds, and that it grows linearly: a quarter
// of the file allocates about a quarter as much.
func TestLargeInput(t *testing.T) {
	inputlimits.Large(t, inputlimits.GenesisProgram, 5<<20, func(src []byte) any {
		files, diags := ParseFiles([]Source{{Name: "big.gen", Data: src}})
		if diags.HasErrors() {
			t.Fatal(diags)
		}
		prog, diags := Check(files)
		if diags.HasErrors() {
			t.Fatal(diags)
		}
		return prog
	}, maxAllocPerByte, maxLivePerByte)
}

// TestChainLimit checks that an expression chaining more than MaxChain
// operators, binary or postfix, gets one diagnostic instead of exhausting
// the stack of a phase that recurses through it (a million terms did);
// and that operators in separate statements never add up, even where no
// ';' separates them.
func TestChainLimit(t *testing.T) {
	want := fmt.Sprintf("expression longer than %d operators", MaxChain)
	for name, src := range map[string]string{
		"sum":    body("i64", rep("1 + ", MaxChain+1)+"1"),
		"fields": "struct S { v: i64 }\n" + body("i64", "let s: S = S { v: 1 }; s"+rep(".v", MaxChain+1)),
		"calls":  "fn g() -> i64 { 1 }\n" + body("i64", "g"+rep("()", MaxChain+1)),
	} {
		_, diags := Parse("long.gen", []byte(src))
		if len(diags) != 1 || diags[0].Code != CodeSyntax || !strings.Contains(diags[0].Msg, want) {
			t.Errorf("%s: got %v, want one %s error %q", name, diags, CodeSyntax, want)
		}
	}
	ifs := body("i64", "let x: i64 = 1;\n"+rep("if x == 0 { x; }\n", MaxChain+10)+"x")
	if _, diags := Parse("ifs.gen", []byte(ifs)); diags.HasErrors() {
		t.Errorf("%d if statements: %v", MaxChain+10, diags)
	}
}
