package distributed

import (
	"bytes"
	"context"
	"io"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/genesis-toolchain/genesis/compiler"
	"github.com/genesis-toolchain/genesis/ir/opt"
	"github.com/genesis-toolchain/genesis/runtime"
)

// The unit tests run workers in this process on an SQLite database (the
// engine's single-machine store); the multi-worker test with processes
// killed is cmd/genesisc's, on Postgres.

// payProg suspends at pay, whose tool answers PENDING, and uses the
// resumption's payload in its next step.
const payProg = `{"steps": [
  {"id": "quote", "type": "tool", "tool": "quote", "args": {"order": "$order"}, "output_key": "price"},
  {"id": "pay", "type": "tool", "tool": "pay", "args": {"price": "$price"}, "output_key": "receipt"},
  {"id": "notify", "type": "tool", "tool": "notify", "args": {"receipt": "$receipt"}}
]}
`

const otherProg = `{"steps": [{"id": "only", "type": "tool", "tool": "quote", "args": {"order": "$order"}}]}`

func compileProg(t *testing.T, name, src string) *Program {
	t.Helper()
	out, diags := compiler.Build([]compiler.Source{{Name: name, Data: []byte(src)}}, compiler.Options{Target: "forge", OptLevel: opt.MaxLevel})
	if diags.HasErrors() {
		t.Fatalf("%s: %v", name, diags)
	}
	p, err := LoadProgram(out.Program)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// counters counts each tool's calls.
type counters struct{ quote, pay, notify atomic.Int64 }

func testHost(c *counters) *runtime.Host {
	h := runtime.NewHost(runtime.Config{})
	h.RegisterTool("quote", func(ctx context.Context, args runtime.Value) (runtime.Value, error) {
		c.quote.Add(1)
		o, _ := args.Get("order")
		return runtime.Object(runtime.Field{Key: "order", Value: o}, runtime.Field{Key: "price", Value: runtime.Number(12)}), nil
	})
	h.RegisterTool("pay", func(ctx context.Context, args runtime.Value) (runtime.Value, error) {
		c.pay.Add(1)
		if runtime.IdempotencyKeyFrom(ctx) == "" {
			return runtime.Value{}, &runtime.CallError{Kind: "tool", Message: "no idempotency key"}
		}
		return runtime.String("PENDING"), nil
	})
	h.RegisterTool("notify", func(ctx context.Context, args runtime.Value) (runtime.Value, error) {
		c.notify.Add(1)
		return args, nil
	})
	return h
}

func startWorker(t *testing.T, db string, h *runtime.Host, progs ...*Program) *Worker {
	t.Helper()
	var log bytes.Buffer
	w, err := StartWorker(context.Background(), WorkerConfig{DB: db, Programs: progs, Host: h, Poll: 20 * time.Millisecond, Log: &log})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		w.Stop(5 * time.Second)
		if t.Failed() {
			t.Logf("worker log:\n%s", log.String())
		}
	})
	return w
}

func waitState(t *testing.T, cl *Client, id string, states ...string) *Run {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second) // a hang guard only
	for {
		r, err := cl.Status(id)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range states {
			if r.State == s {
				return r
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("run %s is %s (engine status %s, executor %s, %d steps), want %v", id, r.State, r.Status, r.Executor, r.Steps, states)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestSuspendAndResume runs a program that suspends on a worker,
// resumes it through the engine's durable send, and checks the result
// and trace are those of the same suspension and resumption of a local
// journal, and that no tool ran twice.
func TestSuspendAndResume(t *testing.T) {
	dir := t.TempDir()
	db := "sqlite:" + filepath.Join(dir, "engine.db")
	p := compileProg(t, "pay.json", payProg)
	var c counters
	startWorker(t, db, testHost(&c), p)
	cl := openClient(t, db)
	input := runtime.Object(runtime.Field{Key: "order", Value: runtime.String("A-17")})
	id, err := cl.Submit(p.Name, p.Hash, input)
	if err != nil {
		t.Fatal(err)
	}
	r := waitState(t, cl, id, "suspended", "success", "failed")
	if r.State != "suspended" || !strings.HasPrefix(r.Awaiting, "pay @ pay.json") {
		t.Fatalf("the run is %s at %q, want suspended at pay", r.State, r.Awaiting)
	}
	payload := runtime.Object(runtime.Field{Key: "receipt", Value: runtime.String("R-9")})
	if err := cl.Resume(id, payload, "OPERATOR"); err != nil {
		t.Fatal(err)
	}
	r = waitState(t, cl, id, "success", "failed")

	// The same run on a local journal: suspended, then resumed.
	var lc counters
	h := testHost(&lc)
	j := runtime.NewJournal(p.Name)
	first, err := p.Execute(h, runtime.RunOptions{Program: p.Name, ProgramHash: p.Hash, Input: input, Journal: j, Mode: runtime.JournalRecord})
	if err != nil || first.Status != runtime.StatusSuspended {
		t.Fatalf("local run: %v %v", first, err)
	}
	var trace bytes.Buffer
	want, err := p.Execute(h, runtime.RunOptions{Program: p.Name, ProgramHash: p.Hash, Input: input, Journal: j, Mode: runtime.JournalResume,
		Resume: &runtime.Resumption{Payload: payload, Source: "OPERATOR"}, Trace: &trace})
	if err != nil {
		t.Fatal(err)
	}
	if r.ResultJSON != string(want.AppendJSON(nil)) {
		t.Errorf("result\n%s\nwant (a local journal's)\n%s", r.ResultJSON, want.AppendJSON(nil))
	}
	if r.Trace != trace.String() {
		t.Errorf("trace\n%s\nwant (a local journal's)\n%s", r.Trace, trace.String())
	}
	if r.State != "success" {
		t.Errorf("the run ended %s", r.State)
	}
	for name, n := range map[string]int64{"quote": c.quote.Load(), "pay": c.pay.Load(), "notify": c.notify.Load()} {
		if n != 1 {
			t.Errorf("tool %s ran %d times, want once", name, n)
		}
	}
	if err := cl.Resume(id, payload, ""); err == nil || !strings.Contains(err.Error(), "has ended") {
		t.Errorf("resuming an ended run: %v, want an error saying it has ended", err)
	}
}

// TestWorkerServesItsProgramsOnly checks versioning: a run waits in its
// program's queue until a worker serving that program hash takes it.
func TestWorkerServesItsProgramsOnly(t *testing.T) {
	dir := t.TempDir()
	db := "sqlite:" + filepath.Join(dir, "engine.db")
	a := compileProg(t, "other.json", otherProg)
	b := compileProg(t, "other.json", strings.Replace(otherProg, `"only"`, `"first"`, 1))
	if a.Hash == b.Hash {
		t.Fatal("two programs with one hash")
	}
	var c counters
	startWorker(t, db, testHost(&c), a)
	cl := openClient(t, db)
	if n, err := LiveWorkers(context.Background(), db, a.Hash); err != nil || n != 1 {
		t.Errorf("LiveWorkers(a) = %d, %v; want 1", n, err)
	}
	if n, err := LiveWorkers(context.Background(), db, b.Hash); err != nil || n != 0 {
		t.Errorf("LiveWorkers(b) = %d, %v; want 0", n, err)
	}
	if n, err := LiveWorkers(context.Background(), "sqlite:"+filepath.Join(dir, "new.db"), b.Hash); err != nil || n != 0 {
		t.Errorf("LiveWorkers on a database no worker used = %d, %v; want 0", n, err)
	}
	in := runtime.Object(runtime.Field{Key: "order", Value: runtime.String("B-1")})
	idB, err := cl.Submit(b.Name, b.Hash, in)
	if err != nil {
		t.Fatal(err)
	}
	idA, err := cl.Submit(a.Name, a.Hash, in)
	if err != nil {
		t.Fatal(err)
	}
	waitState(t, cl, idA, "success")
	if r, _ := cl.Status(idB); r.State != "queued" {
		t.Fatalf("the run of the program no worker serves is %s, want queued", r.State)
	}
	startWorker(t, db, testHost(&c), b)
	r := waitState(t, cl, idB, "success", "failed")
	if r.State != "success" || !strings.Contains(r.ResultJSON, `"first"`) {
		t.Errorf("run of program b: %s %s", r.State, r.ResultJSON)
	}
	runs, err := cl.List()
	if err != nil || len(runs) != 2 {
		t.Fatalf("List: %d runs, %v", len(runs), err)
	}
	if _, err := cl.Status("nosuchrun"); err == nil {
		t.Error("the status of an unknown run is no error")
	}
}

func TestCheckURL(t *testing.T) {
	for url, ok := range map[string]bool{
		"postgres://u@h/db": true, "postgresql://u@h:5432/db": true, "sqlite:/tmp/x.db": true,
		"": false, "sqlite:": false, "mysql://u@h/db": false, "/tmp/x.db": false,
	} {
		if err := CheckURL(url); (err == nil) != ok {
			t.Errorf("CheckURL(%q) = %v", url, err)
		}
	}
	if got := redact("postgres://u:secret@h/db"); got != "postgres://u@h/db" {
		t.Errorf("redact: %s", got)
	}
}

// budgetProg has four LLM calls of 0.4 USD each around a tool step.
const budgetProg = `{"steps": [
  {"id": "a", "type": "llm", "prompt": "first"},
  {"id": "slow", "type": "tool", "tool": "slow"},
  {"id": "b", "type": "llm", "prompt": "second"},
  {"id": "c", "type": "llm", "prompt": "third"},
  {"id": "d", "type": "llm", "prompt": "fourth"}
]}
`

// TestRecoveredRunKeepsItsBudget stops a worker in the middle of a run
// (it leaves without finishing it, as a dead one) and checks that the
// worker that recovers it serves the completed LLM call from its steps
// and counts its cost: the run is refused its fourth call at 1 USD, as
// in one process, and the first call is not made again.
func TestRecoveredRunKeepsItsBudget(t *testing.T) {
	dir := t.TempDir()
	db := "sqlite:" + filepath.Join(dir, "engine.db")
	p := compileProg(t, "budget.json", budgetProg)
	llm, err := runtime.ParseMockLLM([]byte(`{"__default__": {"$reply": "ok", "$usage": {"prompt_tokens": 10, "completion_tokens": 5, "cost": 0.4}}}`))
	if err != nil {
		t.Fatal(err)
	}
	var calls atomic.Int64
	counting := &countingLLM{llm: llm, n: &calls}
	entered, release := make(chan struct{}, 1), make(chan struct{})
	released := false
	defer func() {
		if !released {
			close(release)
		}
	}()
	host := func(block bool) *runtime.Host {
		h := runtime.NewHost(runtime.Config{LLM: counting, Budget: runtime.Budget{Cost: 1}})
		h.RegisterTool("slow", func(ctx context.Context, args runtime.Value) (runtime.Value, error) {
			if block {
				select {
				case entered <- struct{}{}:
				default:
				}
				<-release
			}
			return runtime.String("done"), nil
		})
		return h
	}
	cfg := quickRecoveryConfig(db, p)
	cfg.Host = host(true)
	a, err := StartWorker(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	cl := openClient(t, db)
	id, err := cl.Submit(p.Name, p.Hash, runtime.Object())
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-entered:
	case <-time.After(60 * time.Second): // a hang guard only
		t.Fatal("the run did not reach its tool step")
	}
	t.Logf("worker a: %s", a.ExecutorID())
	a.Stop(0) // leaves the run in flight, its heartbeat stale
	cfg.Host = host(false)
	startWorker(t, db, cfg.Host, p)
	r := waitState(t, cl, id, "success", "failed", "budget_exceeded")

	want, err := p.Execute(host(false), runtime.RunOptions{Program: p.Name, ProgramHash: p.Hash, Input: runtime.Object()})
	if err != nil {
		t.Fatal(err)
	}
	if r.ResultJSON != string(want.AppendJSON(nil)) {
		t.Errorf("result\n%s\nwant (one process's)\n%s", r.ResultJSON, want.AppendJSON(nil))
	}
	if r.State != "budget_exceeded" || r.Usage.Cost < 1.1 {
		t.Errorf("the recovered run ended %s having cost %v, want budget_exceeded at 1.2", r.State, r.Usage.Cost)
	}
	// Three calls on the workers (a once, b, c), three in one process.
	if n := calls.Load(); n != 6 {
		t.Errorf("%d LLM calls in all, want 6: the recovered run made a completed call again", n)
	}

	// The stopped worker's execution, released, is no longer the run's:
	// it cannot record a step, and ends without touching the result.
	released = true
	close(release)
	deadline := time.Now().Add(60 * time.Second) // a hang guard only
	for a.Active() > 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if a.Active() > 0 {
		t.Fatal("the stopped worker's execution did not end")
	}
	if n := calls.Load(); n != 6 {
		t.Errorf("the stopped worker's execution made %d more LLM calls", n-6)
	}
	after, err := cl.Status(id)
	if err != nil {
		t.Fatal(err)
	}
	if after.ResultJSON != r.ResultJSON {
		t.Errorf("the stopped worker's execution changed the result:\n%s\nwas\n%s", after.ResultJSON, r.ResultJSON)
	}
}

// countingLLM counts the calls of an LLM provider.
type countingLLM struct {
	llm runtime.LLMProvider
	n   *atomic.Int64
}

func (c *countingLLM) Complete(ctx context.Context, call *runtime.Call, req *runtime.LLMRequest) (runtime.LLMResponse, error) {
	c.n.Add(1)
	return c.llm.Complete(ctx, call, req)
}

// openClient connects a client to db, closed when the test ends.
func openClient(t *testing.T, db string) *Client {
	t.Helper()
	cl, err := Open(context.Background(), db, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return cl
}

// quickRecoveryConfig is the configuration of a worker serving p whose
// runs the others recover 300 ms after it stops beating (its host is
// the test's to set; the test stops it).
func quickRecoveryConfig(db string, p *Program) WorkerConfig {
	return WorkerConfig{DB: db, Programs: []*Program{p}, Poll: 20 * time.Millisecond, Heartbeat: 50 * time.Millisecond, DeadAfter: 300 * time.Millisecond, Log: io.Discard}
}
