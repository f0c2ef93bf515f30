package nanovm

import (
	"github.com/genesis-toolchain/genesis/frontend"
	"github.com/genesis-toolchain/genesis/frontend/internal/jsontree"

	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/genesis-toolchain/genesis/diag"
	"github.com/genesis-toolchain/genesis/internal/inputlimits"
)

// renderedError matches one rendered error of file f: its first line, a
// window of its source line and the caret.
func renderedError(f string) *regexp.Regexp {
	return regexp.MustCompile(`^` + regexp.QuoteMeta(f) + `:\d+:\d+: error\[N00[17]\]: [^\n]+\n    [^\n]*\n    [ \t]*\^\n$`)
}

// conditionProgram is a program whose one condition step has cond.
func conditionProgram(cond string) string {
	data, _ := json.Marshal(map[string]any{"steps": []any{
		map[string]any{"id": "c", "type": "condition", "condition": cond, "then": "end", "otherwise": "end"},
		map[string]any{"id": "end", "type": "tool", "tool": "noop"},
	}})
	return string(data)
}

// TestNestingLimits feeds documents and conditions nested far past the
// limits (docs/nanovm.md): each must get exactly one error (N001 for a
// document, N007 for a condition), rendered with a bounded window of its
// line and a caret, and no internal error.
func TestNestingLimits(t *testing.T) {
	const n = 100000
	var block strings.Builder
	for i := 0; i < 2*jsontree.MaxDepth; i++ {
		fmt.Fprintf(&block, "%sa:\n", strings.Repeat(" ", i))
	}
	block.WriteString(strings.Repeat(" ", 2*jsontree.MaxDepth) + "b: 1\n")
	for _, c := range []struct{ name, file, src, msg string }{
		{"json arrays", "p.json", strings.Repeat("[", n) + strings.Repeat("]", n), "nest deeper than 256 levels"},
		{"json objects", "p.json", strings.Repeat(`{"a":`, n) + "1" + strings.Repeat("}", n), "nest deeper than 256 levels"},
		{"yaml flow", "p.yaml", strings.Repeat("[", n) + strings.Repeat("]", n) + "\n", "nest"},
		{"yaml block", "p.yaml", block.String(), "nest deeper than 256 levels"},
		{"condition parentheses", "p.json", conditionProgram(strings.Repeat("(", n) + "$a" + strings.Repeat(")", n)), "nests deeper than 256 levels"},
		{"condition not", "p.json", conditionProgram(strings.Repeat("not ", n) + "$a"), "nests deeper than 256 levels"},
		{"condition or", "p.json", conditionProgram("$a" + strings.Repeat(" or $a", 20*jsontree.MaxDepth)), "nests deeper than 256 levels"},
		{"condition and", "p.json", conditionProgram("$a == 1" + strings.Repeat(" and $a == 1", 20*jsontree.MaxDepth)), "nests deeper than 256 levels"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, diags := Compile(frontend.File(c.file, []byte(c.src)))
			if len(diags) != 1 {
				t.Fatalf("%d diagnostics, want 1:\n%s", len(diags), diags.Error())
			}
			d := diags[0]
			if d.Severity != diag.Error || d.Code != CodeSyntax && d.Code != CodeCondition || !strings.Contains(d.Msg, c.msg) {
				t.Fatalf("got %s, want an error %q", d, c.msg)
			}
			out := diags.Render(diag.Sources{c.file: []byte(c.src)})
			if !renderedError(c.file).MatchString(out) {
				t.Errorf("rendered:\n%s", out)
			}
			if len(out) > 2*diag.MaxShownWidth+300 {
				t.Errorf("the diagnostic renders as %d bytes", len(out))
			}
		})
	}
}

// TestConditionWithinTheLimit checks that a condition just under the
// limit parses.
func TestConditionWithinTheLimit(t *testing.T) {
	for _, src := range []string{
		"$a" + strings.Repeat(" or $a", maxCondDepth),
		strings.Repeat("not ", maxCondDepth) + "$a",
		strings.Repeat("(", maxCondDepth) + "$a" + strings.Repeat(")", maxCondDepth),
	} {
		if _, err := ParseCondition(src); err != nil {
			t.Errorf("%.40s…: %s", src, err.Msg)
		}
	}
}

// TestErrorsOnALongLine is the case of a 50 MB program on one line with
// 13 errors, which printed 650 MB: each error reprinted the line. Each
// now shows a window of it.
func TestErrorsOnALongLine(t *testing.T) {
	var steps []string
	bad, size := 0, 0
	for i := 0; size < 2<<20; i++ {
		step := fmt.Sprintf(`{"id": "s%d", "type": "tool", "tool": "t", "next_step": "s%d"}`, i, i+1)
		if i%2000 == 0 && bad < 13 {
			step = fmt.Sprintf(`{"id": "s%d", "type": "tool", "tool": "t", "next_step": "s%d", "max_retries": "many"}`, i, i+1)
			bad++
		}
		steps = append(steps, step)
		size += len(step) + 2
	}
	src := `{"steps": [` + strings.Join(steps, ", ") + `]}`
	_, diags := Compile(frontend.File("one.json", []byte(src)))
	errs := 0
	for _, d := range diags {
		if d.Severity == diag.Error {
			errs++
		}
	}
	if errs < 13 {
		t.Fatalf("%d errors, want at least 13:\n%s", errs, diags.Error())
	}
	out := diags.Render(diag.Sources{"one.json": []byte(src)})
	if max := len(diags) * (2*diag.MaxShownWidth + 300); len(out) > max {
		t.Errorf("%d diagnostics of a %d-byte line render as %d bytes, over %d", len(diags), len(src), len(out), max)
	}
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
// that four times a program costs about four times the work.
func TestTimeIsLinear(t *testing.T) {
	small, large := string(inputlimits.NanoVMProgram(100<<10)), string(inputlimits.NanoVMProgram(400<<10))
	inputlimits.Grows(t, allocs(t, small), allocs(t, large), float64(len(large))/float64(len(small)), 1.25)
}

// maxAllocPerByte is the documented bound (docs/nanovm.md, Limits) on
// what Compile allocates in all per byte of a program, which bounds its
// peak heap; the IR is most of it.
const maxAllocPerByte = 400

// TestMemoryIsBounded compiles a program of 1 MB and checks the bound.
func TestMemoryIsBounded(t *testing.T) {
	if testing.Short() {
		t.Skip("allocates about 300 MB")
	}
	src := string(inputlimits.NanoVMProgram(1 << 20))
	inputlimits.PerByte(t, allocs(t, src), len(src), maxAllocPerByte, 0)
}
