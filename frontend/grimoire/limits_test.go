package grimoire

import (
	"fmt"
	"strings"
	"testing"

	"github.com/genesis-toolchain/genesis/frontend"

	"github.com/genesis-toolchain/genesis/internal/inputlimits"
	"github.com/genesis-toolchain/genesis/ir"
)

// Hostile input: deep nesting, long flat chains and large spells
// (docs/grimoire.md "Limits"). No test here measures time: a quadratic
// phase shows as allocation counts out of proportion, and go test's own
// timeout is the hang guard.

func rep(s string, n int) string { return strings.Repeat(s, n) }

// assigning is a spell whose manual trigger sets x to expr and emits it.
func assigning(expr string) string {
	return "spell S\n\n  on manual:\n    l = [0]\n    x = " + expr + "\n    emit done(v=x)\n"
}

// nestedIfs nests n ifs, one indented block each.
func nestedIfs(n int) string {
	var b strings.Builder
	b.WriteString("spell S\n\n  on manual:\n")
	for i := range n {
		b.WriteString(rep("  ", i+2) + "if true:\n")
	}
	b.WriteString(rep("  ", n+2) + "emit done(v=1)\n")
	return b.String()
}

// nestingCases are the recursive constructs of the grammar, each made n
// levels deep by gen.
var nestingCases = []struct {
	name string
	gen  func(n int) string
}{
	{"parens", func(n int) string { return assigning(rep("(", n) + "1" + rep(")", n)) }},
	{"lists", func(n int) string { return assigning(rep("[", n) + "1" + rep("]", n)) }},
	{"objects", func(n int) string { return assigning(rep("{a: ", n) + "1" + rep("}", n)) }},
	{"minus", func(n int) string { return assigning(rep("- ", n) + "1") }},
	{"plus", func(n int) string { return assigning(rep("+ ", n) + "1") }},
	{"not", func(n int) string { return assigning(rep("not ", n) + "true") }},
	{"calls", func(n int) string { return assigning(rep("max(", n) + "1" + rep(", 2)", n)) }},
	{"indexes", func(n int) string { return assigning(rep("l[", n) + "0" + rep("]", n)) }},
	{"conditionals", func(n int) string { return assigning(rep("true ? 1 : ", n) + "2") }},
	{"indented ifs", nestedIfs},
	{"braced ifs", func(n int) string {
		return "spell S {\n  on manual: {\n" + rep("if true {\n", n) + "emit done(v=1)\n" + rep("}\n", n) + "  }\n}\n"
	}},
}

// TestNestingLimit checks that every recursive construct nested far
// beyond MaxNesting gets one diagnostic, at a token of the nest, instead
// of a stack overflow; and that nested 200 levels it compiles.
func TestNestingLimit(t *testing.T) {
	for _, c := range nestingCases {
		t.Run(c.name, func(t *testing.T) {
			n := 100_000
			if c.name == "indented ifs" {
				n = 2 * MaxNesting // the source grows with the square of n
			}
			_, diags := ParseFile("deep.spell", []byte(c.gen(n)))
			if len(diags) != 1 {
				t.Fatalf("%d diagnostics, want 1: %v", len(diags), diags)
			}
			d := diags[0]
			want := fmt.Sprintf("nesting deeper than %d levels", MaxNesting)
			if d.Code != CodeSyntax || !strings.Contains(d.Msg, want) || d.Pos.Line < 1 || d.Pos.Col < 1 {
				t.Fatalf("got %s, want a %s error %q with a position", d, CodeSyntax, want)
			}
			compiles(t, c.gen(200))
		})
	}
}

// compiles loads, lowers and verifies the spell src, failing on any
// error.
func compiles(t *testing.T, src string) {
	t.Helper()
	m, diags := Compile(frontend.File("in.spell", []byte(src)))
	if diags.HasErrors() {
		t.Fatalf("Compile: %v", diags)
	}
	if diags := ir.Verify(m); diags.HasErrors() {
		t.Fatalf("Verify: %v", diags)
	}
}

// TestNestingBoundary checks the limit to the level: the trigger's block
// and the statement's are levels 1 and 2 (INDENT), so MaxNesting-2
// parentheses are accepted and one more is reported at that parenthesis.
func TestNestingBoundary(t *testing.T) {
	prog := func(n int) string {
		return "spell S\n\n  on manual:\n    x = " + rep("(", n) + "1" + rep(")", n) + "\n    emit done(v=x)\n"
	}
	if _, diags := ParseFile("in.spell", []byte(prog(MaxNesting-2))); len(diags) != 0 {
		t.Fatalf("%d levels: %v", MaxNesting, diags)
	}
	_, diags := ParseFile("in.spell", []byte(prog(MaxNesting-1)))
	want := fmt.Sprintf("in.spell:4:%d: error[%s]: nesting deeper than %d levels", len("    x = ")+MaxNesting-1, CodeSyntax, MaxNesting)
	if len(diags) != 1 || !strings.HasPrefix(diags[0].Error(), want) {
		t.Fatalf("got %v, want one %q", diags, want)
	}
}

// TestLinearWork checks that the work of every phase grows linearly with
// the input, by the allocation count of inputs n and 4n large: a long
// flat chain 1+1+…+1 (100,000 terms) and nests.
func TestLinearWork(t *testing.T) {
	chain := func(n int) string { return assigning(rep("1 + ", n-1) + "1") }
	inputlimits.LinearWork(t, []inputlimits.Scaled{
		{Name: "flat chain", Gen: chain, N: 10_000},
		{Name: "calls", Gen: nestingCases[6].gen, N: 60},
		{Name: "lists", Gen: nestingCases[1].gen, N: 60},
		{Name: "braced ifs", Gen: nestingCases[10].gen, N: 60},
	}, compiles)
}

// TestLongChain compiles a 100,000-term 1+1+…+1, which is flat in the
// source.
func TestLongChain(t *testing.T) {
	compiles(t, assigning(rep("1 + ", 99_999)+"1"))
}

// Memory bounds of Check (parse and check, docs/grimoire.md "Limits"), in
// bytes per byte of input: everything it allocates, and what stays live
// after. Measured: 310 and 22 (4 MB of inputlimits.SpellProgram).
const (
	maxAllocPerByte = 400
	maxLivePerByte  = 60
)

// TestLargeInput checks the memory of loading a 4 MB spell against the
// documented bounds, and that it grows linearly.
func TestLargeInput(t *testing.T) {
	inputlimits.Large(t, inputlimits.SpellProgram, 4<<20, func(src []byte) any {
		prog, diags := Check(frontend.File("big.spell", src))
		if diags.HasErrors() {
			t.Fatal(diags)
		}
		return prog
	}, maxAllocPerByte, maxLivePerByte)
}

// TestChainLimit checks that an expression chaining more than MaxChain
// operators, binary or postfix, gets one diagnostic instead of exhausting
// the stack of a phase that recurses through it; and that operators on
// separate lines never add up.
func TestChainLimit(t *testing.T) {
	want := fmt.Sprintf("expression longer than %d operators", MaxChain)
	for name, src := range map[string]string{
		"sum":     assigning(rep("1 + ", MaxChain+1) + "1"),
		"members": assigning("params" + rep(".a", MaxChain+1)),
	} {
		_, diags := ParseFile("long.spell", []byte(src))
		if len(diags) != 1 || diags[0].Code != CodeSyntax || !strings.Contains(diags[0].Msg, want) {
			t.Errorf("%s: got %v, want one %s error %q", name, diags, CodeSyntax, want)
		}
	}
	var b strings.Builder
	b.WriteString("spell S\n\n  on manual:\n    x = 0\n")
	for range MaxChain/4 + 10 {
		b.WriteString("    x = x + 1 + 2 + 3 + 4\n")
	}
	if _, diags := ParseFile("lines.spell", []byte(b.String())); diags.HasErrors() {
		t.Errorf("%d statements: %v", MaxChain/4+10, diags)
	}
}
