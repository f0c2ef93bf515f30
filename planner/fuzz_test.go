package planner

import (
	"testing"

	"github.com/genesis-toolchain/genesis/compiler"
	"github.com/genesis-toolchain/genesis/diag"
	"github.com/genesis-toolchain/genesis/runtime"
)

// FuzzAnswer: whatever a model replies, reading and checking the answer
// does not panic, and an answer judged to compile compiles.
func FuzzAnswer(f *testing.F) {
	for _, seed := range []string{
		goodProgram, noPrompt, quotedRef,
		"```json\n" + goodProgram + "\n```",
		"Sure! " + goodProgram + " Hope it helps",
		"```\n{\"steps\": [}\n```",
		`{"groups": []}`,
		`{"steps": [{"id": "a", "type": "llm", "prompt": "$a $b.c $__webhook__"}]}`,
		"{", "}", "``````", "",
	} {
		f.Add(seed)
	}
	opts := &Options{Tools: []string{"issue_refund"}, Context: []string{"reason"}}
	f.Fuzz(func(t *testing.T, reply string) {
		a := check("f.json", answerText(runtime.String(reply)), opts)
		if a.Errors+a.Warnings != len(a.Diags) && !hasNotes(a) {
			t.Fatalf("counts %d+%d for %d diagnostics", a.Errors, a.Warnings, len(a.Diags))
		}
		if a.Compiled() {
			if ds := compiler.Check([]compiler.Source{{Name: "f.json", Data: []byte(a.Program)}}); ds.HasErrors() {
				t.Fatalf("judged to compile, but:\n%s", ds.Error())
			}
		}
	})
}

func hasNotes(a Attempt) bool {
	for _, d := range a.Diags {
		if d.Severity == diag.Note {
			return true
		}
	}
	return false
}
