package plan

import (
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/genesis-toolchain/genesis/diag"
	"github.com/genesis-toolchain/genesis/frontend"
	"github.com/genesis-toolchain/genesis/internal/inputlimits"
)

// TestNestingLimit feeds plans nested far past the documents' limit of
// 256 levels (docs/plan.md): each gets exactly one P001, rendered with a
// bounded window of its line and a caret, and no internal error.
func TestNestingLimit(t *testing.T) {
	const n = 100000
	rendered := regexp.MustCompile(`^p\.json:\d+:\d+: error\[P001\]: [^\n]+\n    [^\n]*\n    [ \t]*\^\n$`)
	for _, src := range []string{
		`{"groups": ` + strings.Repeat("[", n) + strings.Repeat("]", n) + `}`,
		`{"groups": [{"id": "g", "operations": [` + strings.Repeat(`{"a": `, n) + "1" + strings.Repeat("}", n) + `]}]}`,
	} {
		_, diags := Compile(frontend.File("p.json", []byte(src)))
		if len(diags) != 1 || diags[0].Code != CodeSyntax || !strings.Contains(diags[0].Msg, "deeper than 256 levels") {
			t.Fatalf("got %d diagnostics, want one P001 about the nesting:\n%.2000s", len(diags), diags.Error())
		}
		out := diags.Render(diag.Sources{"p.json": []byte(src)})
		if !rendered.MatchString(out) || len(out) > 2*diag.MaxShownWidth+300 {
			t.Errorf("rendered (%d bytes):\n%s", len(out), out)
		}
	}
}

// chain returns a plan of about size bytes: a chain of groups, each
// depending on the one before and reading its output, every tenth
// listing a contract that others list too.
func chain(size int) string {
	var b strings.Builder
	b.WriteString(`{"name": "chain", "description": "a long chain", "groups": [`)
	for i := 0; b.Len() < size; i++ {
		if i > 0 {
			b.WriteString(",\n")
		}
		deps, op := "[]", "read the first price"
		if i > 0 {
			deps = fmt.Sprintf(`["g%d"]`, i-1)
			op = fmt.Sprintf("read price %d after {$p%d}", i, i-1)
		}
		contracts := ""
		if i%10 == 0 {
			contracts = `, "contracts": [["1", "0x5f4eC3Df9cbd43714FE2740f5E3616155c5b8419", "Feed"]]`
		}
		fmt.Fprintf(&b, `{"id": "g%d", "description": "step %d", "dependencies": %s, "operations": [{"operation": %q, "output": "p%d"}]%s}`,
			i, i, deps, op, i, contracts)
	}
	b.WriteString("]}")
	return b.String()
}

// allocs returns what compiling src costs the heap.
func allocs(t *testing.T, src string) inputlimits.Usage {
	t.Helper()
	return inputlimits.Measure(func() any {
		m, diags := Compile(frontend.File("p.json", []byte(src)))
		if diags.HasErrors() || m == nil {
			t.Fatalf("does not compile: %.2000s", diags.Error())
		}
		return m
	})
}

// TestTimeIsLinear checks, by counting allocations rather than timing,
// that four times a chain of groups costs about four times the work
// (walking every group's ancestors made a 6.5 MB chain take minutes).
func TestTimeIsLinear(t *testing.T) {
	small, large := chain(100<<10), chain(400<<10)
	inputlimits.Grows(t, allocs(t, small), allocs(t, large), float64(len(large))/float64(len(small)), 1.25)
}

// maxAllocPerByte is the documented bound (docs/plan.md, Limits) on what
// Compile allocates in all per byte of a plan, which bounds its peak
// heap; the IR is most of it.
const maxAllocPerByte = 800

// TestMemoryIsBounded compiles a plan of 1 MB and checks the bound.
func TestMemoryIsBounded(t *testing.T) {
	if testing.Short() {
		t.Skip("allocates about 600 MB")
	}
	src := chain(1 << 20)
	inputlimits.PerByte(t, allocs(t, src), len(src), maxAllocPerByte, 0)
}
