package ir_test

import (
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/genesis-toolchain/genesis/ir"
)

// Hostile input for the IR parser (docs/ir.md "Limits"): nesting beyond
// the limit is one diagnostic, and long functions cost work linear in
// their length. No test measures time.

// nestedIfs is a function whose body nests n ifs.
func nestedIfs(n int) string {
	return "func @f(%c: bool) @f.gen:1:1 {\n" + strings.Repeat("if %c @1:1 {\n", n) + strings.Repeat("}\n", n) + "}\n"
}

// nestedFuncType is a function with a local of a function type n deep.
func nestedFuncType(n int) string {
	return "func @f() @f.gen:1:1 {\n  var $x: " + strings.Repeat("fn(", n) + strings.Repeat(")", n) + " @1:1\n}\n"
}

// longFunc is a function of n additions in a row.
func longFunc(n int) string {
	var b strings.Builder
	b.WriteString("func @f(%a: i64) -> i64 @f.gen:1:1 {\n  %v0 = add %a, %a @1:1\n")
	for i := 1; i < n; i++ {
		fmt.Fprintf(&b, "  %%v%d = add %%v%d, %%a @1:1\n", i, i-1)
	}
	fmt.Fprintf(&b, "  return %%v%d @1:1\n}\n", n-1)
	return b.String()
}

func TestNestingLimit(t *testing.T) {
	for _, c := range []struct {
		name string
		gen  func(int) string
		want string
	}{
		{"regions", nestedIfs, "regions nested deeper than 1000"},
		{"function types", nestedFuncType, "types nested deeper than 1000"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, diags := ir.Parse("deep.ir", []byte(c.gen(100_000)))
			if len(diags) != 1 || diags[0].Code != ir.ParseCode || !strings.Contains(diags[0].Msg, c.want) || diags[0].Pos.Line < 1 {
				t.Fatalf("got %v, want one %s error %q", diags, ir.ParseCode, c.want)
			}
			m, diags := ir.Parse("ok.ir", []byte(c.gen(500)))
			if diags.HasErrors() {
				t.Fatal(diags)
			}
			if diags := ir.Verify(m); diags.HasErrors() {
				t.Fatal(diags)
			}
			if _, diags := ir.Parse("printed.ir", []byte(ir.Print(m))); diags.HasErrors() {
				t.Fatal(diags)
			}
		})
	}
}

// TestLinearWork checks that parsing, verifying and printing a function
// 4 times as long allocates about 4 times as much.
func TestLinearWork(t *testing.T) {
	count := func(src string) uint64 {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		m, diags := ir.Parse("long.ir", []byte(src))
		if diags.HasErrors() {
			t.Fatal(diags)
		}
		if diags := ir.Verify(m); diags.HasErrors() {
			t.Fatal(diags)
		}
		ir.Print(m)
		runtime.ReadMemStats(&after)
		return after.Mallocs - before.Mallocs
	}
	small, large := count(longFunc(25_000)), count(longFunc(100_000))
	if ratio := float64(large) / float64(small); ratio > 4.5 {
		t.Errorf("%d allocations for 25,000 instructions, %d for 100,000: %.1f times, want at most 4.5", small, large, ratio)
	}
}
