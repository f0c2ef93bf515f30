package runtime

import (
	"bytes"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestNarrator narrates a run with notes, an agent call, a judgement, a
// parallel block, an export and a failure: the narration follows the
// trace, markers and all, and branch steps are indented under their
// branch.
func TestNarrator(t *testing.T) {
	h := newHost(t, `{"Summarize": "a short summary", "Is it": true, "__default__": "branch answer"}`, "", Config{})
	stmt := NewSite("stmt", "p.vvm", 1, 1)
	sum := NewSite("writer", "p.vvm", 2, 1)
	ok := NewSite("ready", "p.vvm", 3, 1)
	fan := NewSite("pmap", "p.vvm", 4, 1)
	ask := NewSite("critic", "p.vvm", 5, 3)
	exp := NewSite("export", "p.vvm", 6, 1)
	var narration bytes.Buffer
	n := NewNarrator(&narration)
	res := h.Execute(RunOptions{Program: "p.vvm", Trace: n}, func(r *Run) Value {
		r.Trace(stmt.At(), String("note"), Object(Field{"kind", String("statement")}, Field{"text", String("summary = @writer `Summarize.`()")}))
		s := r.LLM(sum.At(), String("Summarize."), ObjNew())
		r.Judge(ok.At(), String("Is it ready?"), ObjNew())
		r.Trace(stmt.At(1), String("note"), Object(Field{"kind", String("loop")}, Field{"text", String("for x in xs: iteration 1")}))
		r.Parallel(fan.At(), 0,
			func(b *Run) Value { return b.LLM(ask.At(), String("one"), ObjNew()) },
			func(b *Run) Value { return b.LLM(ask.At(), String("two"), ObjNew()) })
		r.ExportAt(exp.At(), String("summary"), s)
		r.Fail(exp.At(1), Error("thrown", "no more"))
		return Unit()
	})
	if res.Status != StatusFailed {
		t.Fatal(resultJSON(res))
	}
	want := `📍 Run p.vvm
📍 summary = @writer ` + "`Summarize.`()" + `
⏳ Spawning subagent: writer
📦 Result: a short summary
✅ writer done
🎯 Judging: ready
🎯 ready: true
🔄 for x in xs: iteration 1
⚡ Parallel block: pmap
🔀 Branch 0
   ⏳ Spawning subagent: critic
   📦 Result: branch answer
   ✅ critic done
🔀 Branch 1
   ⏳ Spawning subagent: critic
   📦 Result: branch answer
   ✅ critic done
✅ Parallel block pmap complete
📦 Exported summary = a short summary
❌ Run failed: thrown: no more
`
	if diff := cmp.Diff(want, narration.String()); diff != "" {
		t.Errorf("narration (-want +got):\n%s", diff)
	}
}
