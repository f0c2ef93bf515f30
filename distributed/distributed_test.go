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
	deadline := time.Now().Add(60 * time.Second) // a hang guard only
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
			t.Fatalf("run %s is %s, want %v", id, r.State, states)
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
	cl, err := Open(context.Background(), db, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
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
	cl, err := Open(context.Background(), db, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
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
