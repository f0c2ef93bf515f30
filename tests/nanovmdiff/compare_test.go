package nanovmdiff_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestCompare checks the normalizations of the comparison, without the
// oracle: what they forgive and what they still report.
func TestCompare(t *testing.T) {
	subs := map[string][]string{"fetch": {"weather", "news"}}
	call := func(name string) any { return []any{name, map[string]any{}} }
	base := outcome{Status: "success", Steps: []string{"weather", "news", "fetch", "report"}, Output: "ok",
		ToolCalls: []any{call("get_weather"), call("get_news"), call("report")}}
	for _, c := range []struct {
		name   string
		ours   outcome
		subs   map[string][]string
		fields []string
	}{
		{"sub-steps after their step, retries, calls in another order", outcome{Status: "success",
			Steps: []string{"fetch", "weather", "news", "news", "report"}, Output: "ok",
			ToolCalls: []any{call("get_news"), call("get_weather"), call("report")}}, subs, nil},
		{"calls in another order without a parallel step", outcome{Status: "success",
			Steps: base.Steps, Output: "ok", ToolCalls: []any{call("get_news"), call("get_weather"), call("report")}}, nil, []string{"tool_calls"}},
		{"another status, another output, a call more", outcome{Status: "failed", Steps: base.Steps, Output: "no",
			ToolCalls: append(append([]any{}, base.ToolCalls...), call("extra"))}, subs, []string{"status", "tool_calls"}},
		{"another output", outcome{Status: "success", Steps: []string{"fetch", "weather", "news", "report"}, Output: "no",
			ToolCalls: base.ToolCalls}, subs, []string{"output"}},
		{"a step more", outcome{Status: "success", Steps: []string{"fetch", "weather", "news", "report", "audit"}, Output: "ok",
			ToolCalls: base.ToolCalls}, subs, []string{"steps"}},
	} {
		var got []string
		for _, d := range compare(c.ours, base, c.subs) {
			got = append(got, d.field)
		}
		if !cmp.Equal(got, c.fields) {
			t.Errorf("%s: differences %v, want %v", c.name, got, c.fields)
		}
	}
}

// TestTableRows reads the table of expected differences out of Markdown,
// and refuses a row of another shape.
func TestTableRows(t *testing.T) {
	text := "# x\n\n| a | b |\n| - | - |\n| 1 | 2 |\n\n| case | field | reason |\n| --- | --- | --- |\n| `cases/x` | steps | because |\n\nafter\n| case | field | reason |\n"
	rows, err := tableRows(text)
	want := [][]string{{"`cases/x`", "steps", "because"}}
	if err != nil || !cmp.Equal(rows, want) {
		t.Errorf("rows %q (%v), want %q", rows, err, want)
	}
	if _, err := tableRows("| case | field | reason |\n| --- | --- | --- |\n| `cases/y` | output | why \\| not |\n"); err == nil {
		t.Error("a row of four cells was accepted")
	}
}
