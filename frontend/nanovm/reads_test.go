package nanovm

import (
	"fmt"
	"strings"
	"testing"

	"github.com/genesis-toolchain/genesis/frontend"
)

// readDiags returns the N014 and N015 diagnostics of a program, one
// "line:col: code: message" each.
func readDiags(t *testing.T, src string) []string {
	t.Helper()
	_, diags := Check(frontend.File("p.json", []byte(src)))
	if diags.HasErrors() {
		t.Fatalf("errors:\n%s", diags.Error())
	}
	var out []string
	for _, d := range diags {
		if d.Code == CodeReadBeforeSet || d.Code == CodeNeverOutput {
			out = append(out, fmt.Sprintf("%d:%d: %s: %s", d.Pos.Line, d.Pos.Col, d.Code, d.Msg))
		}
	}
	return out
}

func TestReadBeforeSet(t *testing.T) {
	for _, tc := range []struct {
		name, src string
		want      []string
	}{
		{"set later in the array", `{"steps": [
{"id": "a", "type": "llm", "prompt": "Summarize $summary"},
{"id": "b", "type": "llm", "prompt": "x", "output_key": "summary"}]}`,
			[]string{`2:49: N014: $.steps[0].prompt: $summary is set by step "b", which cannot have run before this (no path leads from it to step "a"): it reads only an input field summary, if the run has one (else its text in a prompt or argument, None in a condition)`}},
		{"set before", `{"steps": [
{"id": "b", "type": "llm", "prompt": "x", "output_key": "summary"},
{"id": "a", "type": "llm", "prompt": "Use $summary and $b"}]}`, nil},
		// The other branch: approve and reject are both branch targets,
		// and each ends the run, so reject never follows approve.
		{"the other branch", `{"steps": [
{"id": "route", "type": "condition", "condition": "$ok", "then": "approve", "otherwise": "reject"},
{"id": "approve", "type": "tool", "tool": "refund", "output_key": "receipt"},
{"id": "reject", "type": "tool", "tool": "notify", "args": {"about": "$receipt"}}]}`,
			[]string{`4:71: N014: $.steps[2].args.about: $receipt is set by step "approve", which cannot have run before this (no path leads from it to step "reject"): it reads only an input field receipt, if the run has one (else its text in a prompt or argument, None in a condition)`}},
		// A loop: the step reads what its previous round set.
		{"a loop", `{"steps": [
{"id": "draft", "type": "llm", "prompt": "Improve: $text"},
{"id": "check", "type": "condition", "condition": "$draft == 'done'", "then": "end", "otherwise": "draft2"},
{"id": "draft2", "type": "llm", "prompt": "Again: $draft", "output_key": "text", "next_step": "draft"},
{"id": "end", "type": "tool", "tool": "noop", "is_terminal": true}]}`, nil},
		{"its own output", `{"steps": [
{"id": "a", "type": "llm", "prompt": "Go on from $a"}]}`,
			[]string{`2:50: N014: $.steps[0].prompt: $a is set by step "a", which cannot have run before this (it is this step's own output, which it does not have yet): it reads only an input field a, if the run has one (else its text in a prompt or argument, None in a condition)`}},
		{"a sibling sub-step", `{"steps": [
{"id": "p", "type": "parallel", "parallel_steps": [
  {"id": "s1", "type": "llm", "prompt": "x"},
  {"id": "s2", "type": "llm", "prompt": "after $s1"}]},
{"id": "after", "type": "llm", "prompt": "$s1 and $p"}]}`,
			[]string{`4:48: N014: $.steps[0].parallel_steps[1].prompt: $s1 is set by step "s1", which cannot have run before this (sub-steps of a parallel step run at the same time): it reads only an input field s1, if the run has one (else its text in a prompt or argument, None in a condition)`}},
		{"in a condition", `{"steps": [
{"id": "route", "type": "condition", "condition": "$decision == 'yes'", "then": "decide", "otherwise": "decide"},
{"id": "decide", "type": "llm", "prompt": "x", "output_key": "decision", "allowed_outputs": ["yes", "no"]}]}`,
			[]string{`2:52: N014: $.steps[0].condition: $decision is set by step "decide", which cannot have run before this (no path leads from it to step "route"): it reads only an input field decision, if the run has one (else its text in a prompt or argument, None in a condition)`}},
		// Unreachable readers are N005's; input fields are not checked.
		{"unreachable, input", `{"steps": [
{"id": "a", "type": "tool", "tool": "t", "args": {"q": "$query"}, "is_terminal": true},
{"id": "b", "type": "llm", "prompt": "$c"},
{"id": "c", "type": "llm", "prompt": "x"}]}`, nil},
	} {
		got := readDiags(t, tc.src)
		if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
			t.Errorf("%s:\n got %q\nwant %q", tc.name, got, tc.want)
		}
	}
}

func TestComparedWithNeverOutput(t *testing.T) {
	prog := func(cond string) string {
		return `{"steps": [
{"id": "classify", "type": "llm", "prompt": "x", "output_key": "decision", "allowed_outputs": ["yes", "no"]},
{"id": "route", "type": "condition", "condition": "` + cond + `", "then": "a", "otherwise": "b"},
{"id": "a", "type": "tool", "tool": "t"},
{"id": "b", "type": "tool", "tool": "u"}]}`
	}
	for _, tc := range []struct{ cond, want string }{
		{`$decision == 'Yes'`, `3:65: N015: $.steps[1].condition: $decision is one of 'yes', 'no' (allowed_outputs), never 'Yes': this comparison is always false (did you mean 'yes'?)`},
		{`'approve' != $decision`, `3:52: N015: $.steps[1].condition: $decision is one of 'yes', 'no' (allowed_outputs), never 'approve': this comparison is always true`},
		{`'maybe' in $classify`, `3:52: N015: $.steps[1].condition: $classify is one of 'yes', 'no' (allowed_outputs), none of which contains 'maybe': this comparison is always false`},
		{`$decision contains 'YES'`, `3:71: N015: $.steps[1].condition: $decision is one of 'yes', 'no' (allowed_outputs), none of which contains 'YES': this comparison is always false (did you mean 'yes'?)`},
		{`$decision == 'yes'`, ``},
		{`'ye' in $decision`, ``},
		{`$decision.reason == 'x'`, ``},
		{`$other == 'x'`, ``},
	} {
		got := strings.Join(readDiags(t, prog(tc.cond)), "\n")
		if got != tc.want {
			t.Errorf("%s:\n got %q\nwant %q", tc.cond, got, tc.want)
		}
	}
	// A name some step without allowed_outputs also sets is not checked.
	src := `{"steps": [
{"id": "classify", "type": "llm", "prompt": "x", "output_key": "decision", "allowed_outputs": ["yes", "no"]},
{"id": "override", "type": "tool", "tool": "t", "output_key": "decision"},
{"id": "route", "type": "condition", "condition": "$decision == 'maybe'", "then": "a", "otherwise": "b"},
{"id": "a", "type": "tool", "tool": "t"},
{"id": "b", "type": "tool", "tool": "u"}]}`
	if got := readDiags(t, src); len(got) != 0 {
		t.Errorf("a name a tool sets too: %q", got)
	}
}
