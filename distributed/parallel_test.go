package distributed

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/genesis-toolchain/genesis/runtime"
)

// fanProg has a parallel block of four tool calls and a step after it
// that reads them all.
const fanProg = `{"steps": [
  {"id": "fan", "type": "parallel", "parallel_steps": [
    {"id": "p1", "type": "tool", "tool": "p1", "args": {"n": "$n"}},
    {"id": "p2", "type": "tool", "tool": "p2", "args": {"n": "$n"}},
    {"id": "p3", "type": "tool", "tool": "p3", "args": {"n": "$n"}},
    {"id": "p4", "type": "tool", "tool": "p4", "args": {"n": "$n"}}]},
  {"id": "after", "type": "tool", "tool": "after", "args": {"all": "$p1 $p2 $p3 $p4"}}
]}
`

// fanTools are the tools of fanProg: each answers with its name and
// arguments after a delay, and counts its calls and the most calls in
// flight at once. With hold set, p4 waits until release is closed
// (entered tells that it was called) after the others have answered.
type fanTools struct {
	mu        sync.Mutex
	calls     map[string]int
	now, peak atomic.Int64
	done      atomic.Int64 // calls of p1, p2 and p3 answered
}

func (f *fanTools) host(hold bool, delay time.Duration, entered chan<- struct{}, release <-chan struct{}) *runtime.Host {
	h := runtime.NewHost(runtime.Config{})
	for _, name := range []string{"p1", "p2", "p3", "p4", "after"} {
		h.RegisterTool(name, func(ctx context.Context, args runtime.Value) (runtime.Value, error) {
			f.mu.Lock()
			f.calls[name]++
			f.mu.Unlock()
			n := f.now.Add(1)
			defer f.now.Add(-1)
			for old := f.peak.Load(); n > old && !f.peak.CompareAndSwap(old, n); old = f.peak.Load() {
			}
			if name == "p4" && hold {
				entered <- struct{}{}
				<-release
			} else {
				time.Sleep(delay)
			}
			if name != "p4" && name != "after" {
				f.done.Add(1)
			}
			return runtime.Object(runtime.Field{Key: name, Value: args}), nil
		})
	}
	return h
}

// TestWorkerParallelBranches: a worker runs a block's branches at once
// (the tools see several calls in flight), each branch's calls steps of
// the run's workflow. The worker stops while one branch's call is in
// flight and the others' are recorded; the worker that recovers the run
// serves the recorded calls from its steps, makes the missing one, and
// ends the run with the result and the trace of the same run in one
// process.
func TestWorkerParallelBranches(t *testing.T) {
	dir := t.TempDir()
	db := "sqlite:" + filepath.Join(dir, "engine.db")
	p := compileProg(t, "fan.json", fanProg)
	tools := &fanTools{calls: map[string]int{}}
	entered, release := make(chan struct{}, 1), make(chan struct{})
	defer close(release)
	cfg := quickRecoveryConfig(db, p)
	cfg.Host = tools.host(true, 20*time.Millisecond, entered, release)
	a, err := StartWorker(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	cl := openClient(t, db)
	input := runtime.Object(runtime.Field{Key: "n", Value: runtime.Number(7)})
	id, err := cl.Submit(p.Name, p.Hash, input)
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-entered:
	case <-time.After(60 * time.Second): // a hang guard only
		t.Fatal("the run did not reach p4")
	}
	deadline := time.Now().Add(60 * time.Second) // a hang guard only
	for tools.done.Load() < 3 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	// The other branches' calls are steps by the time their results are
	// back in the run: wait until the engine lists them.
	for time.Now().Before(deadline) {
		r, err := cl.Status(id)
		if err != nil {
			t.Fatal(err)
		}
		if r.Steps >= 4 { // the journal's header and three calls
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if tools.peak.Load() < 2 {
		t.Errorf("the tools never had two calls in flight at once: the worker ran the branches one after another")
	}
	a.Stop(0) // leaves the run in flight, p4's call unanswered, its heartbeat stale
	startWorker(t, db, tools.host(false, 0, nil, nil), p)
	r := waitState(t, cl, id, "success", "failed")

	local := &fanTools{calls: map[string]int{}}
	var trace bytes.Buffer
	want, err := p.Execute(local.host(false, 0, nil, nil), runtime.RunOptions{Program: p.Name, ProgramHash: p.Hash, Input: input, Trace: &trace})
	if err != nil {
		t.Fatal(err)
	}
	if want.Status != runtime.StatusSuccess || r.ResultJSON != string(want.AppendJSON(nil)) {
		t.Errorf("result\n%s\nwant (one process's)\n%s", r.ResultJSON, want.AppendJSON(nil))
	}
	// The recovered execution resumed the run's journal, which its
	// run_started event says; every other event is the same.
	if got := strings.Replace(r.Trace, `,"journal":"resume"}`, "}", 1); got != trace.String() {
		t.Errorf("trace\n%s\nwant (one process's)\n%s", r.Trace, trace.String())
	}
	tools.mu.Lock()
	defer tools.mu.Unlock()
	// The calls recorded are not made again; p4's, in flight at the
	// stop, is made once more, by the worker that recovered the run
	// (the stopped one, which may still take it from the queue for a
	// moment, holds it without executing it).
	for _, name := range []string{"p1", "p2", "p3"} {
		if tools.calls[name] != 1 {
			t.Errorf("tool %s called %d times on the workers, want once: its recorded call was made again", name, tools.calls[name])
		}
	}
	if tools.calls["p4"] != 2 || tools.calls["after"] != 1 {
		t.Errorf("p4 called %d times, after %d, on the workers; want p4 twice (at the stop and on recovery), after once", tools.calls["p4"], tools.calls["after"])
	}
}
