package runtime

import (
	"bytes"
	"context"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// A refund flow touching every effect: an llm call, a condition, a tool
// that may answer PENDING (then the run waits for its resumption), an
// event, persistent state.
var (
	sClassify = NewSite("classify", "refund.json", 3, 5)
	sRoute    = NewSite("route", "refund.json", 4, 5)
	sPay      = NewSite("pay", "refund.json", 5, 5)
	sPayWait  = NewSite("pay", "refund.json", 5, 20)
	sNotify   = NewSite("notify", "refund.json", 6, 5)
	sSave     = NewSite("save", "refund.json", 7, 5)
	sLoad     = NewSite("load", "refund.json", 2, 5)
)

func refundFlow(r *Run) Value {
	prev := r.StateGet(sLoad.At(), String("refunds"))
	d := r.LLM(sClassify.At(), StrFormat(String("Valid refund? $reason"), r.Input()), Object(Field{"model", String("m")}))
	if ErrorIs(d) {
		r.Stop(sClassify.At(), String("failed"), d)
	}
	r.SetOutput("decision", d)
	yes := ValueEq(d, String("yes"))
	r.Trace(sRoute.At(), String("completed"), Bool(yes))
	if !yes {
		return String("rejected")
	}
	reply := r.Tool(sPay.At(), String("pay"), Object(Field{"order", ObjGet(r.Input(), String("order"))}))
	if ValueEq(reply, String("PENDING")) {
		ev := r.Wait(sPayWait.At(), Object(Field{"kind", String("resume")}, Field{"step", String("pay")}))
		reply = ObjGet(ev, String("payload"))
	}
	r.SetOutput("payment", reply)
	r.Emit(sNotify.At(), String("refunded"), Object(Field{"order", ObjGet(r.Input(), String("order"))}))
	n := NumAdd(prev, Int(1))
	if ErrorIs(n) {
		n = Int(1)
	}
	r.StatePut(sSave.At(), String("refunds"), n)
	return reply
}

var refundInput = Object(Field{"reason", String("broken on arrival")}, Field{"order", String("A-17")})

// countingTools registers a "pay" tool that counts its calls and answers
// PENDING or a receipt.
func countingTools(h *Host, pending bool) *atomic.Int32 {
	var calls atomic.Int32
	h.RegisterTool("pay", func(ctx context.Context, args Value) (Value, error) {
		calls.Add(1)
		if pending {
			return String("PENDING"), nil
		}
		return Object(Field{"receipt", String("R-1")}, Field{"order", ObjGet(args, String("order"))}), nil
	})
	return &calls
}

const refundLLM = `{"Valid refund?": {"$reply": "yes", "$usage": {"prompt_tokens": 10, "completion_tokens": 1, "cost": 0.001}}}`

func resultJSON(r *Result) string { return string(r.AppendJSON(nil)) }

func TestResultJSON(t *testing.T) {
	h := newHost(t, refundLLM, "", Config{})
	countingTools(h, false)
	res := h.Execute(RunOptions{Input: refundInput}, refundFlow)
	want := `{"status":"success","steps":["load","classify","route","pay","notify","save"],` +
		`"output":{"receipt":"R-1","order":"A-17"},"outputs":{"classify":"yes","route":true,"pay":{"receipt":"R-1","order":"A-17"},"decision":"yes","payment":{"receipt":"R-1","order":"A-17"}},` +
		`"events":[{"name":"refunded","payload":{"order":"A-17"}}],"exports":{},"error":null,` +
		`"usage":{"prompt_tokens":10,"completion_tokens":1,"total_tokens":11,"cost":0.001}}`
	if got := resultJSON(res); got != want {
		t.Errorf("result\n%s\nwant\n%s", got, want)
	}
	back, err := ParseResult([]byte(resultJSON(res)))
	if err != nil {
		t.Fatal(err)
	}
	if got := resultJSON(back); got != want {
		t.Errorf("round trip\n%s", got)
	}
	// The state persisted: a second run sees one refund.
	res = h.Execute(RunOptions{Input: refundInput}, func(r *Run) Value { return r.StateGet(sLoad.At(), String("refunds")) })
	if res.Output.Num() != 1 {
		t.Errorf("state after the run: %v", res.Output)
	}
}

func TestStopStatuses(t *testing.T) {
	h := newHost(t, `{"__default__": {"$error": {"kind": "timeout", "message": "no reply in 30s"}}}`, "", Config{})
	res := h.Execute(RunOptions{Input: refundInput}, refundFlow)
	want := `{"status":"failed","steps":["load","classify"],"output":null,"outputs":{},"events":[],"exports":{},` +
		`"error":{"kind":"timeout","message":"no reply in 30s","step":"classify @ refund.json:3:5"},` +
		`"usage":{"prompt_tokens":0,"completion_tokens":0,"total_tokens":0,"cost":0}}`
	if got := resultJSON(res); got != want {
		t.Errorf("result\n%s\nwant\n%s", got, want)
	}
	for _, st := range []string{"budget_exceeded", "stalled", "suspended", "nonsense"} {
		res := h.Execute(RunOptions{}, func(r *Run) Value {
			r.Mark(siteA.At(), "condition", True)
			r.Stop(siteA.At(), String(st), Unit())
			return String("unreachable")
		})
		wantSt := Status(st)
		if st == "nonsense" {
			wantSt = StatusFailed
		}
		if res.Status != wantSt || res.Error.Step != "a @ t.json:1:1" || res.Output.Str() == "unreachable" {
			t.Errorf("stop %s: %s %+v, output %v", st, res.Status, res.Error, res.Output)
		}
	}
}

// TestSuspendResume: the tool answers PENDING, the run waits for its
// resumption and is suspended; resumed with a payload from its journal it
// does not call the tool again and finishes.
func TestSuspendResume(t *testing.T) {
	path := filepath.Join(t.TempDir(), "run.journal")
	h := newHost(t, refundLLM, "", Config{})
	calls := countingTools(h, true)
	j, err := CreateJournal(path, "refund")
	if err != nil {
		t.Fatal(err)
	}
	res := h.Execute(RunOptions{Input: refundInput, Program: "refund", Journal: j}, refundFlow)
	j.Close()
	if res.Status != StatusSuspended || res.Error.Step != "pay @ refund.json:5:20" || res.Error.Kind != "suspended" {
		t.Fatalf("first run: %s", resultJSON(res))
	}
	// The resume wait continues the pending step: pay is listed once, and
	// its reply "PENDING" is neither the run's output nor one of its
	// outputs (the run has not ended).
	if got := res.Steps; !cmp.Equal(got, []string{"load", "classify", "route", "pay"}) {
		t.Errorf("steps %v", got)
	}
	if !res.Output.IsUnit() || strings.Contains(res.Outputs.String(), "PENDING") {
		t.Errorf("suspended run: output %v, outputs %v", res.Output, res.Outputs)
	}

	// Resume in another "process": a new host, the journal from disk.
	h2 := newHost(t, refundLLM, "", Config{})
	calls2 := countingTools(h2, true)
	j2, err := OpenJournal(path)
	if err != nil {
		t.Fatal(err)
	}
	payload := &Resumption{Payload: Object(Field{"receipt", String("R-9")}), Source: "WEBHOOK"}
	res2 := h2.Execute(RunOptions{Input: refundInput, Program: "refund", Journal: j2, Mode: JournalResume, Resume: payload}, refundFlow)
	j2.Close()
	if res2.Status != StatusSuccess || res2.Output.String() != `{"receipt":"R-9"}` {
		t.Fatalf("resumed run: %s", resultJSON(res2))
	}
	if got := res2.Steps; !cmp.Equal(got, []string{"load", "classify", "route", "pay", "notify", "save"}) {
		t.Errorf("resumed run's steps %v", got)
	}
	if calls.Load() != 1 || calls2.Load() != 0 {
		t.Errorf("pay called %d times, then %d times on resume: a completed effect was repeated", calls.Load(), calls2.Load())
	}
	if len(res2.Events) != 1 {
		t.Errorf("events %v", res2.Events)
	}

	// The journal now replays the whole run, resumption included, with no
	// provider at all.
	j3, err := OpenJournal(path)
	if err != nil {
		t.Fatal(err)
	}
	res3 := NewHost(Config{}).Execute(RunOptions{Input: refundInput, Program: "refund", Journal: j3, Mode: JournalReplay}, refundFlow)
	if got, want := resultJSON(res3), resultJSON(res2); got != want {
		t.Errorf("replay\n%s\nwant\n%s", got, want)
	}
	// Resuming a run that is not suspended any more is an error.
	res4 := h2.Execute(RunOptions{Input: refundInput, Journal: j3, Mode: JournalResume, Resume: payload}, refundFlow)
	if res4.Status != StatusFailed || res4.Error.Kind != "journal" {
		t.Errorf("resuming a finished run: %s", resultJSON(res4))
	}
	j3.Close()

	data, _ := os.ReadFile(path)
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	wantLines := []string{
		`{"format":"genesis-journal","version":1,"program":"refund","run":"` + j.RunID() + `"}`,
		`{"step":"load @ refund.json:2:5","effect":"state.get","request":{"key":"refunds"},"reply":null,"duration_ms":0}`,
		`{"step":"classify @ refund.json:3:5","effect":"llm","request":{"prompt":"Valid refund? broken on arrival","options":{"model":"m"}},"reply":"yes","attempts":1,"usage":{"prompt_tokens":10,"completion_tokens":1,"cost":0.001},"duration_ms":0}`,
		`{"step":"pay @ refund.json:5:5","effect":"tool","request":{"name":"pay","args":{"order":"A-17"}},"reply":"PENDING","attempts":1,"duration_ms":0}`,
		`{"step":"pay @ refund.json:5:20","effect":"wait","request":{"request":{"kind":"resume","step":"pay"}},"pending":true}`,
		`{"end":"suspended","step":"pay @ refund.json:5:20"}`,
		`{"step":"pay @ refund.json:5:20","resume":{"payload":{"receipt":"R-9"},"source":"WEBHOOK"}}`,
		`{"step":"notify @ refund.json:6:5","effect":"emit","request":{"name":"refunded","payload":{"order":"A-17"}},"reply":null,"duration_ms":0}`,
		`{"step":"save @ refund.json:7:5","effect":"state.put","request":{"key":"refunds","value":1},"reply":null,"duration_ms":0}`,
		`{"end":"success"}`,
	}
	if diff := cmp.Diff(wantLines, lines); diff != "" {
		t.Errorf("journal (-want +got):\n%s", diff)
	}
}

// TestResumeAfterCrash cuts a journal after each of its effects (a crash)
// and resumes: completed effects are served, the rest run, and the result
// is the uninterrupted run's.
func TestResumeAfterCrash(t *testing.T) {
	dir := t.TempDir()
	h := newHost(t, refundLLM, "", Config{})
	countingTools(h, false)
	full := filepath.Join(dir, "full.journal")
	j, _ := CreateJournal(full, "refund")
	want := h.Execute(RunOptions{Input: refundInput, Journal: j}, refundFlow)
	j.Close()
	data, _ := os.ReadFile(full)
	lines := strings.SplitAfter(string(data), "\n")
	lines = lines[:len(lines)-2] // drop the end line and the empty tail
	for keep := 1; keep <= len(lines); keep++ {
		path := filepath.Join(dir, "crash.journal")
		os.WriteFile(path, []byte(strings.Join(lines[:keep], "")), 0o644)
		h := newHost(t, refundLLM, "", Config{})
		calls := countingTools(h, false)
		var emitted []string
		h.cfg.OnEvent = func(name string, _ Value) { emitted = append(emitted, name) }
		j, err := OpenJournal(path)
		if err != nil {
			t.Fatal(err)
		}
		got := h.Execute(RunOptions{Input: refundInput, Journal: j, Mode: JournalResume}, refundFlow)
		j.Close()
		if resultJSON(got) != resultJSON(want) {
			t.Errorf("resumed after %d lines:\n%s\nwant\n%s", keep, resultJSON(got), resultJSON(want))
		}
		payDone := keep > 3 // header, load, classify, pay
		if (calls.Load() == 0) != payDone {
			t.Errorf("resumed after %d lines: pay called %d times", keep, calls.Load())
		}
		notifyDone := keep > 4
		if (len(emitted) == 0) != notifyDone {
			t.Errorf("resumed after %d lines: events delivered again: %v", keep, emitted)
		}
	}
}

func TestJournalTruncatedLastLine(t *testing.T) {
	path := filepath.Join(t.TempDir(), "run.journal")
	h := newHost(t, refundLLM, "", Config{})
	countingTools(h, false)
	j, _ := CreateJournal(path, "")
	h.Execute(RunOptions{Input: refundInput, Journal: j}, refundFlow)
	j.Close()
	data, _ := os.ReadFile(path)
	lines := strings.SplitAfter(string(data), "\n")
	// A crash while the pay line was being written: half of it on disk.
	cut := strings.Join(lines[:3], "") + lines[3][:len(lines[3])/2]
	os.WriteFile(path, []byte(cut), 0o644)
	h2 := newHost(t, refundLLM, "", Config{})
	calls := countingTools(h2, false)
	j2, err := OpenJournal(path)
	if err != nil {
		t.Fatalf("a torn last line must be tolerated: %v", err)
	}
	res := h2.Execute(RunOptions{Input: refundInput, Journal: j2, Mode: JournalResume}, refundFlow)
	j2.Close()
	if res.Status != StatusSuccess || calls.Load() != 1 {
		t.Errorf("resume: %s, pay called %d times", res.Status, calls.Load())
	}
	// The torn bytes were cut before appending: every line parses.
	data, _ = os.ReadFile(path)
	if _, err := ReadJournal(data); err != nil || bytes.Contains(data, []byte(lines[3][:len(lines[3])/2]+"{")) {
		t.Errorf("journal after resume: %v\n%s", err, data)
	}
	// A bad line in the middle is corruption, not a crash.
	bad := strings.Join(lines[:2], "") + "garbage\n" + strings.Join(lines[2:], "")
	os.WriteFile(path, []byte(bad), 0o644)
	if _, err := OpenJournal(path); err == nil || !strings.Contains(err.Error(), "line 3") {
		t.Errorf("a corrupt middle line: %v", err)
	}
}

func TestReplayDivergence(t *testing.T) {
	h := newHost(t, `{"__default__": "yes"}`, "", Config{})
	countingTools(h, false)
	j := NewJournal("refund")
	h.Execute(RunOptions{Input: refundInput, Journal: j}, refundFlow)

	// The program asks something else at the same step.
	other := Object(Field{"reason", String("changed my mind")}, Field{"order", String("A-17")})
	res := NewHost(Config{}).Execute(RunOptions{Input: other, Journal: j, Mode: JournalReplay}, refundFlow)
	if res.Status != StatusFailed || res.Error.Kind != "divergence" || res.Error.Step != "classify @ refund.json:3:5" {
		t.Fatalf("replay with another input: %s", resultJSON(res))
	}
	for _, s := range []string{"classify @ refund.json:3:5", `"Valid refund? broken on arrival"`, `"Valid refund? changed my mind"`} {
		if !strings.Contains(res.Error.Message, s) {
			t.Errorf("the divergence message does not name %s: %s", s, res.Error.Message)
		}
	}
	// A step the journal does not have.
	res = NewHost(Config{}).Execute(RunOptions{Input: refundInput, Journal: j, Mode: JournalReplay}, func(r *Run) Value {
		return r.Tool(siteA.At(), String("x"), ObjNew())
	})
	if res.Error == nil || res.Error.Kind != "divergence" || !strings.Contains(res.Error.Message, "does not have") {
		t.Errorf("replay of an unknown step: %s", resultJSON(res))
	}
	// A program that stops early leaves effects unasked.
	res = NewHost(Config{}).Execute(RunOptions{Input: refundInput, Journal: j, Mode: JournalReplay}, func(r *Run) Value {
		return r.StateGet(sLoad.At(), String("refunds"))
	})
	if res.Error == nil || res.Error.Kind != "divergence" || !strings.Contains(res.Error.Message, "4 more effects") {
		t.Errorf("replay that asks less: %s", resultJSON(res))
	}
	// A journal can only record one run.
	res = h.Execute(RunOptions{Input: refundInput, Journal: j}, refundFlow)
	if res.Error == nil || res.Error.Kind != "journal" {
		t.Errorf("recording into a used journal: %s", resultJSON(res))
	}
	// A journal of another program.
	res = h.Execute(RunOptions{Program: "other", Journal: j, Mode: JournalResume}, refundFlow)
	if res.Error == nil || res.Error.Kind != "journal" || !strings.Contains(res.Error.Message, `"refund"`) {
		t.Errorf("a journal of another program: %s", resultJSON(res))
	}
}

// fanOut runs n branches, at most limit at once, each calling an llm and a
// tool that sleeps a random real time, so branches finish in random order.
func fanOut(n, limit int) func(r *Run) Value {
	site := NewSite("fan", "p.vvm", 1, 1)
	ask := NewSite("ask", "p.vvm", 2, 3)
	look := NewSite("lookup", "p.vvm", 3, 3)
	return func(r *Run) Value {
		var branches []func(*Run) Value
		for i := 0; i < n; i++ {
			branches = append(branches, func(b *Run) Value {
				a := b.LLM(ask.At(), StrFormat(String("item $i"), Object(Field{"i", Int(int64(i))})), ObjNew())
				b.SetOutput("last", Int(int64(i)))
				return List(a, b.Tool(look.At(), String("lookup"), Object(Field{"i", Int(int64(i))})))
			})
		}
		return List(r.Parallel(site.At(), limit, branches...)...)
	}
}

func newFanHost(t testing.TB) *Host {
	h := newHost(t, `{"item 1": {"$sequence": ["one", "uno"]}, "item": {"$sequence": ["first", "second", "third"]}}`, "", Config{})
	var mu sync.Mutex
	rng := rand.New(rand.NewSource(time.Now().UnixNano()))
	h.RegisterTool("lookup", func(ctx context.Context, args Value) (Value, error) {
		mu.Lock()
		d := time.Duration(rng.Intn(3000)) * time.Microsecond
		mu.Unlock()
		time.Sleep(d)
		return ObjGet(args, String("i")), nil
	})
	return h
}

// TestTraceDeterministicWithParallel: branches finish in random order,
// yet every run writes the same trace bytes and the same result.
func TestTraceDeterministicWithParallel(t *testing.T) {
	h := newFanHost(t)
	var first, firstRes string
	for i := 0; i < 8; i++ {
		var buf bytes.Buffer
		res := h.Execute(RunOptions{Trace: &buf, Program: "fan"}, fanOut(6, 3))
		if res.Status != StatusSuccess {
			t.Fatal(resultJSON(res))
		}
		if i == 0 {
			first, firstRes = buf.String(), resultJSON(res)
			continue
		}
		if diff := cmp.Diff(first, buf.String()); diff != "" {
			t.Fatalf("run %d wrote another trace (-first +this):\n%s", i, diff)
		}
		if got := resultJSON(res); got != firstRes {
			t.Fatalf("run %d: result %s\nfirst %s", i, got, firstRes)
		}
	}
	// Sub-steps come after their block, branch by branch; $sequence
	// counts do not depend on timing: every branch starts from the
	// block's counts.
	want := `{"status":"success","steps":["fan","ask","lookup","ask","lookup","ask","lookup","ask","lookup","ask","lookup","ask","lookup"],` +
		`"output":[["first",0],["one",1],["first",2],["first",3],["first",4],["first",5]],"outputs":{"ask":"first","lookup":5,"fan":[["first",0],["one",1],["first",2],["first",3],["first",4],["first",5]],"last":5},"events":[],"exports":{},"error":null,` +
		`"usage":{"prompt_tokens":12,"completion_tokens":11,"total_tokens":23,"cost":0}}`
	if firstRes != want {
		t.Errorf("result\n%s\nwant\n%s", firstRes, want)
	}
	lines := strings.Split(strings.TrimSpace(first), "\n")
	if len(lines) != 2+6*4+2 {
		t.Fatalf("%d trace lines", len(lines))
	}
	for i, w := range []string{`"run_started"`, `"step_started","t":0,"step":"fan @ p.vvm:1:1"`, `"step":"fan @ p.vvm:1:1/0 > ask @ p.vvm:2:3"`} {
		if !strings.Contains(lines[i], w) {
			t.Errorf("trace line %d: %s, want %s", i, lines[i], w)
		}
	}
	if !strings.Contains(lines[len(lines)-3], `"step":"fan @ p.vvm:1:1/5 > lookup @ p.vvm:3:3"`) ||
		!strings.Contains(lines[len(lines)-2], `"event":"step_completed"`) || !strings.Contains(lines[len(lines)-2], `"kind":"parallel"`) {
		t.Errorf("the block does not end the trace:\n%s\n%s", lines[len(lines)-3], lines[len(lines)-2])
	}
}

func TestParallelStops(t *testing.T) {
	h := newHost(t, `{"__default__": "x"}`, "", Config{})
	var ran atomic.Int32
	block := NewSite("block", "p", 1, 1)
	res := h.Execute(RunOptions{}, func(r *Run) Value {
		r.Parallel(block.At(), 0,
			func(b *Run) Value { ran.Add(1); return Unit() },
			func(b *Run) Value { ran.Add(1); b.Fail(siteB.At(), Error("rejected", "branch 1")); return Unit() },
			func(b *Run) Value { ran.Add(1); b.Fail(siteC.At(), Error("rejected", "branch 2")); return Unit() },
		)
		return String("after")
	})
	if res.Status != StatusFailed || res.Error.Message != "branch 1" || ran.Load() != 3 {
		t.Errorf("%s (%d branches ran), want the lowest branch's failure after all ran", resultJSON(res), ran.Load())
	}
	// A branch panics: the panic reaches the caller of Execute.
	defer func() {
		if p := recover(); p == nil || !strings.Contains(p.(error).Error(), "boom") {
			t.Errorf("recovered %v", p)
		}
	}()
	h.Execute(RunOptions{}, func(r *Run) Value {
		r.Parallel(block.At(), 2, func(b *Run) Value { panic("boom") }, func(b *Run) Value { return Unit() })
		return Unit()
	})
}

func TestTraceGolden(t *testing.T) {
	h := newHost(t, refundLLM, "", Config{})
	countingTools(h, false)
	var buf bytes.Buffer
	h.Execute(RunOptions{Input: refundInput, Trace: &buf, Program: "refund"}, func(r *Run) Value {
		r.Wait(siteA.At(), Number(1.5))
		r.Advisory(siteA.At(), "timeout", Object(Field{"fallback", String("")}))
		r.Trace(siteB.At(), String("skipped"), String("guard is false"))
		return refundFlow(r)
	})
	want := `{"event":"run_started","t":0,"program":"refund","clock":"virtual"}
{"event":"step_started","t":0,"step":"a @ t.json:1:1","name":"a","kind":"wait"}
{"event":"step_completed","t":1500,"step":"a @ t.json:1:1","name":"a","kind":"wait","status":"success","duration_ms":1500,"output":null,"state":"591a949bdc262f0c6a3d73aaf1b3dc2eb57f0cde97424ad0518b9a9ed2408417"}
{"event":"advisory_timeout","t":1500,"step":"a @ t.json:1:1","name":"a","data":{"fallback":""}}
{"event":"step_skipped","t":1500,"step":"b @ t.json:2:1","name":"b","kind":"step","status":"skipped","reason":"guard is false"}
{"event":"step_started","t":1500,"step":"load @ refund.json:2:5","name":"load","kind":"state.get"}
{"event":"step_completed","t":1500,"step":"load @ refund.json:2:5","name":"load","kind":"state.get","status":"success","duration_ms":0,"output":null,"state":"4e7e9e4ebe2fe000ec02e3379887ac422ca35eece60e7f8b6a9ec3762295ee02"}
{"event":"step_started","t":1500,"step":"classify @ refund.json:3:5","name":"classify","kind":"llm"}
{"event":"step_completed","t":1500,"step":"classify @ refund.json:3:5","name":"classify","kind":"llm","status":"success","duration_ms":0,"attempts":1,"tokens":{"prompt":10,"completion":1},"cost":0.001,"provider":"mock","model":"m","output":"yes","state":"83a393f1d0e437e204a2790df345a4cb52a5031df98516642a208055eec46e49"}
{"event":"step_started","t":1500,"step":"route @ refund.json:4:5","name":"route","kind":"step"}
{"event":"step_completed","t":1500,"step":"route @ refund.json:4:5","name":"route","kind":"step","status":"success","duration_ms":0,"output":true,"state":"7a198e422a2b5385dde1a5f7c60cf1e16f1b0f09a9658d0d96d89447796192db"}
{"event":"step_started","t":1500,"step":"pay @ refund.json:5:5","name":"pay","kind":"tool"}
{"event":"step_completed","t":1500,"step":"pay @ refund.json:5:5","name":"pay","kind":"tool","status":"success","duration_ms":0,"attempts":1,"tool":"pay","output":{"receipt":"R-1","order":"A-17"},"state":"dc164af8223a2be0e7e4a7393cd33ace36a8e0c8710a583016ce80c7f3e51a56"}
{"event":"step_started","t":1500,"step":"notify @ refund.json:6:5","name":"notify","kind":"emit"}
{"event":"event_emitted","t":1500,"step":"notify @ refund.json:6:5","name":"notify","event_name":"refunded","payload":{"order":"A-17"}}
{"event":"step_completed","t":1500,"step":"notify @ refund.json:6:5","name":"notify","kind":"emit","status":"success","duration_ms":0,"output":null,"state":"30f5076b758f4fc60c4f196e5110be1c4c6af357daef432cef80cef4086f8cf2"}
{"event":"step_started","t":1500,"step":"save @ refund.json:7:5","name":"save","kind":"state.put"}
{"event":"step_completed","t":1500,"step":"save @ refund.json:7:5","name":"save","kind":"state.put","status":"success","duration_ms":0,"output":null,"state":"1bf4962946b0461a08d860c91d11e5d35cd872281cb71ca48121c1a1617082d2"}
{"event":"run_completed","t":1500,"status":"success","steps":7,"tokens":{"prompt":10,"completion":1},"cost":0.001,"output":{"receipt":"R-1","order":"A-17"},"error":null}
`
	if diff := cmp.Diff(want, buf.String()); diff != "" {
		t.Errorf("trace (-want +got):\n%s", diff)
	}
}

// TestSnapshotHashes pins the state hashes of a run. They were computed
// independently of this package (Python: sha256 of json.dumps(state,
// sort_keys=True, separators=(",", ":"), ensure_ascii=False)), so they
// hold in every process and with every version that keeps the encoding.
func TestSnapshotHashes(t *testing.T) {
	h := newHost(t, refundLLM, "", Config{})
	countingTools(h, false)
	res := h.Execute(RunOptions{Input: refundInput, Snapshots: true}, func(r *Run) Value {
		r.Wait(siteA.At(), Number(1.5))
		return refundFlow(r)
	})
	if len(res.Snapshots) != 7 {
		t.Fatalf("%d snapshots, want one per step", len(res.Snapshots))
	}
	// {"outputs":{},"state":{},"steps":{"a":null}}
	if got := res.Snapshots[0]; got != "591a949bdc262f0c6a3d73aaf1b3dc2eb57f0cde97424ad0518b9a9ed2408417" {
		t.Errorf("first snapshot %s", got)
	}
	// {"outputs":{"decision":"yes","payment":P},"state":{"refunds":1},
	//  "steps":{"a":null,"load":null,"classify":"yes","route":true,"pay":P,"notify":null,"save":null}}
	if got := res.Snapshots[6]; got != "1bf4962946b0461a08d860c91d11e5d35cd872281cb71ca48121c1a1617082d2" {
		t.Errorf("last snapshot %s", got)
	}
	if !strings.HasSuffix(resultJSON(res), `,"snapshots":["591a949bdc262f0c6a3d73aaf1b3dc2eb57f0cde97424ad0518b9a9ed2408417",`+
		`"4e7e9e4ebe2fe000ec02e3379887ac422ca35eece60e7f8b6a9ec3762295ee02","83a393f1d0e437e204a2790df345a4cb52a5031df98516642a208055eec46e49",`+
		`"7a198e422a2b5385dde1a5f7c60cf1e16f1b0f09a9658d0d96d89447796192db","dc164af8223a2be0e7e4a7393cd33ace36a8e0c8710a583016ce80c7f3e51a56",`+
		`"30f5076b758f4fc60c4f196e5110be1c4c6af357daef432cef80cef4086f8cf2","1bf4962946b0461a08d860c91d11e5d35cd872281cb71ca48121c1a1617082d2"]}`) {
		t.Errorf("snapshots in the result: %s", resultJSON(res))
	}
}

// TestStepIdentities: one step run in each branch of a parallel block,
// at each iteration of a loop, and twice with the same counters gets an
// identity of its own each time, which journals key on.
func TestStepIdentities(t *testing.T) {
	fan := NewSite("fan", "m.vvm", 10, 1)
	ask := NewSite("ask", "lib.vvm", 3, 5)
	helper := func(r *Run, q string, iters ...int64) Value {
		return r.LLM(ask.At(iters...), String(q), ObjNew())
	}
	prog := func(r *Run) Value {
		out := r.Parallel(fan.At(), 2,
			func(c *Run) Value { return helper(c, "branch 0") },
			func(c *Run) Value { return helper(c, "branch 1") })
		for i := int64(0); i < 2; i++ {
			out = append(out, helper(r, "loop", i))
		}
		out = append(out, helper(r, "top"), helper(r, "top again"))
		return List(out...)
	}
	var trace bytes.Buffer
	h := newHost(t, `{"__default__": {"$sequence": ["1", "2", "3", "4", "5", "6"]}}`, "", Config{})
	j := NewJournal("")
	res := h.Execute(RunOptions{Trace: &trace, Journal: j}, prog)
	var ids []string
	for _, line := range strings.Split(trace.String(), "\n") {
		if strings.Contains(line, `"step_completed"`) {
			v := mustJSON(t, line)
			ids = append(ids, ObjGet(v, String("step")).Str())
		}
	}
	want := []string{
		"fan @ m.vvm:10:1/0 > ask @ lib.vvm:3:5",
		"fan @ m.vvm:10:1/1 > ask @ lib.vvm:3:5",
		"fan @ m.vvm:10:1",
		"ask @ lib.vvm:3:5 # 0",
		"ask @ lib.vvm:3:5 # 1",
		"ask @ lib.vvm:3:5",
		"ask @ lib.vvm:3:5~1",
	}
	if diff := cmp.Diff(want, ids); diff != "" {
		t.Errorf("identities (-want +got):\n%s", diff)
	}
	// The journal replays the run: every identity found its record, and
	// the mock's $sequence position is restored for later real calls.
	res2 := NewHost(Config{}).Execute(RunOptions{Journal: j, Mode: JournalReplay}, prog)
	if resultJSON(res2) != resultJSON(res) || res.Output.String() != `["1","1","3","4","5","6"]` {
		t.Errorf("replay %s\noriginal %s", resultJSON(res2), resultJSON(res))
	}
}

// TestResumeKeepsSequencePosition: effects served from the journal still
// advance a mock's $sequence, so the first real call after a resume gets
// the reply it would have got in the uninterrupted run.
func TestResumeKeepsSequencePosition(t *testing.T) {
	h := newHost(t, `{"__default__": {"$sequence": ["1", "2", "3", "4"]}}`, `{"t": {"$sequence": ["x", "y"]}}`, Config{})
	prog := func(r *Run) Value {
		var out []Value
		for i := int64(0); i < 4; i++ {
			out = append(out, r.LLM(siteA.At(i), String("q"), ObjNew()), r.Tool(siteB.At(i), String("t"), ObjNew()))
		}
		return List(out...)
	}
	j := NewJournal("")
	full := h.Execute(RunOptions{Journal: j}, prog)
	lines := strings.SplitAfter(string(j.Bytes()), "\n")
	cut, err := ReadJournal([]byte(strings.Join(lines[:4], ""))) // header and 3 effects
	if err != nil {
		t.Fatal(err)
	}
	res := h.Execute(RunOptions{Journal: cut, Mode: JournalResume}, prog)
	if got, want := res.Output.String(), `["1","x","2","y","3","y","4","y"]`; got != want || full.Output.String() != want {
		t.Errorf("resumed %s, uninterrupted %s, want %s", got, full.Output, want)
	}
}

func TestFileStorePersists(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.json")
	for run := 1; run <= 2; run++ {
		store, err := OpenFileStore(path)
		if err != nil {
			t.Fatal(err)
		}
		h := newHost(t, refundLLM, "", Config{State: store})
		countingTools(h, false)
		if res := h.Execute(RunOptions{Input: refundInput}, refundFlow); res.Status != StatusSuccess {
			t.Fatal(resultJSON(res))
		}
		data, _ := os.ReadFile(path)
		if want := `{"refunds":` + string(rune('0'+run)) + "}\n"; string(data) != want {
			t.Errorf("state file after run %d: %q, want %q", run, data, want)
		}
	}
	os.WriteFile(path, []byte("[1]"), 0o644)
	if _, err := OpenFileStore(path); err == nil {
		t.Error("a state file that is not an object was accepted")
	}
}

// TestParallelAfter: a diamond of branches, each waiting for those it
// depends on and receiving their results; the outcome (results, steps,
// virtual clock) is the same at every concurrency limit, and a branch
// that waits for a stopped one does not run.
func TestParallelAfter(t *testing.T) {
	block := NewSite("dag", "p", 1, 1)
	pause := NewSite("pause", "p", 2, 1)
	// Branch i waits i+1 virtual seconds, then returns its name and the
	// results it received.
	diamond := func(limit int, stopAt int) func(*Run) Value {
		return func(r *Run) Value {
			waits := [][]int{nil, {0}, {0}, {1, 2}}
			var branches []func(*Run, []Value) Value
			for i := range waits {
				branches = append(branches, func(b *Run, deps []Value) Value {
					if i == stopAt {
						b.Fail(siteB.At(), Error("rejected", "branch stopped"))
					}
					b.Wait(pause.At(), Number(float64(i+1)))
					return List(Int(int64(i)), List(deps...))
				})
			}
			out := List(r.ParallelAfter(block.At(), limit, waits, branches...)...)
			return List(out, Number(r.Elapsed().Seconds()))
		}
	}
	h := newHost(t, "", "", Config{})
	want := `[[[0,[]],[1,[[0,[]]]],[2,[[0,[]]]],[3,[[1,[[0,[]]]],[2,[[0,[]]]]]]],8]`
	for _, limit := range []int{1, 2, 0} {
		res := h.Execute(RunOptions{}, diamond(limit, -1))
		if res.Status != StatusSuccess {
			t.Fatalf("limit %d: %s", limit, resultJSON(res))
		}
		// Branch 3 starts when 2 ends (at 1+3 s) and waits 4 s: the clock
		// is the latest branch's, 8 s.
		if got := string(AppendJSON(nil, res.Output)); got != want {
			t.Errorf("limit %d: output %s, want %s", limit, got, want)
		}
		if len(res.Steps) != 5 || res.Steps[0] != "dag" {
			t.Errorf("limit %d: steps %v", limit, res.Steps)
		}
	}
	// Branch 1 stops: branch 3, which waits for it, does not run; 2 does.
	res := h.Execute(RunOptions{}, diamond(0, 1))
	if res.Status != StatusFailed || res.Error.Message != "branch stopped" {
		t.Fatalf("%s", resultJSON(res))
	}
	if got := strings.Join(res.Steps, ","); got != "dag,pause,pause" {
		t.Errorf("steps %s, want dag,pause,pause (branches 0 and 2; 3 skipped)", got)
	}
	// Waiting for a later branch is a programming error, caught first.
	defer func() {
		if p := recover(); p == nil || !strings.Contains(p.(string), "does not come before it") {
			t.Errorf("recovered %v", p)
		}
	}()
	h.Execute(RunOptions{}, func(r *Run) Value {
		f := func(*Run, []Value) Value { return Unit() }
		return List(r.ParallelAfter(block.At(), 0, [][]int{{1}, nil}, f, f)...)
	})
}

// TestStopNamesWhereTheErrorWasMade checks that a run stopped on an
// error an operation made (ErrorAt, which generated code wraps around an
// operator or an index) names the operation's position, and its message
// the operation's words; an error without a position leaves the stop
// where it was.
func TestStopNamesWhereTheErrorWasMade(t *testing.T) {
	failed := NewSite("failed", "t.spell", 1, 1)
	for _, c := range []struct {
		name      string
		err       Value
		step, msg string
	}{
		{"division", ErrorAt(NumDiv(Int(1), Int(0)), "t.spell", 5, 11), "failed @ t.spell:5:11", "division by zero"},
		{"index", ErrorAt(ListGet(List(Int(1), Int(2), Int(3)), 5), "t.spell", 4, 12), "failed @ t.spell:4:12", "index 5 out of range for a list of 3 items"},
		{"the first position stays", ErrorAt(ErrorAt(NumMod(Int(1), Int(0)), "t.spell", 2, 3), "t.spell", 9, 9), "failed @ t.spell:2:3", "modulo by zero (the right operand of % is 0)"},
		{"no position", Error("x", "no"), "failed @ t.spell:1:1", "no"},
		{"not an error", ErrorAt(Int(1), "t.spell", 7, 7), "failed @ t.spell:1:1", "1"},
	} {
		t.Run(c.name, func(t *testing.T) {
			res := NewHost(Config{}).Execute(RunOptions{}, func(r *Run) Value {
				r.Stop(failed.At(), String("failed"), c.err)
				return Unit()
			})
			if res.Error == nil || res.Error.Step != c.step || res.Error.Message != c.msg {
				t.Errorf("%s", resultJSON(res))
			}
		})
	}
	if !ValueEq(ErrorAt(Error("k", "m"), "f", 1, 2), Error("k", "m")) {
		t.Error("an error's position changes what it equals")
	}
}
