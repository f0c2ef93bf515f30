package ir_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/genesis-toolchain/genesis/ir"
)

// TestVerifyStepsAcrossFunctions checks the one rule that spans
// functions, unique step identities, in a module large enough to be
// verified concurrently: the duplicate is reported at the later effect,
// between the errors before and after it in its function, exactly as in
// a small module verified on one goroutine.
func TestVerifyStepsAcrossFunctions(t *testing.T) {
	for _, n := range []int{2, 80} {
		var src strings.Builder
		for i := range n {
			fmt.Fprintf(&src, "func @f%d(%%p: dyn) @t.gen:%d:1 {\n", i, 10*i+1)
			switch i {
			case 0:
				src.WriteString("  %a = tool \"t\" %p, %p @4:3\n")
			case n - 1:
				src.WriteString("  %x = llm \"\" %p, %p @7:3\n")
				src.WriteString("  %a = tool \"t\" %p, %p @4:3\n")
				src.WriteString("  %y = llm \"\" %p, %p @8:3\n")
			}
			src.WriteString("}\n")
		}
		m, diags := ir.Parse("t.ir", []byte(src.String()))
		if diags.HasErrors() {
			t.Fatalf("%d functions: %v", n, diags)
		}
		var got []string
		for _, d := range ir.Verify(m) {
			got = append(got, d.Msg[strings.LastIndex(d.Msg, "`: ")+3:])
		}
		want := []string{
			"an effect needs a step name",
			`step "t" at t.gen:4:3 is not unique: another effect has the same name and position`,
			"an effect needs a step name",
		}
		if strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Errorf("%d functions: got\n  %s\nwant\n  %s", n, strings.Join(got, "\n  "), strings.Join(want, "\n  "))
		}
	}
}
