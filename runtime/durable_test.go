package runtime

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// TestJournalLock: a journal open for a run cannot be opened again, by
// CreateJournal, OverwriteJournal or OpenJournal, until it is closed.
func TestJournalLock(t *testing.T) {
	path := filepath.Join(t.TempDir(), "run.journal")
	j, err := CreateJournal(path, "p")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := OpenJournal(path); !errors.Is(err, ErrJournalInUse) {
		t.Errorf("OpenJournal of a journal in use: %v, want ErrJournalInUse", err)
	}
	if _, err := OverwriteJournal(path, "p"); !errors.Is(err, ErrJournalInUse) {
		t.Errorf("OverwriteJournal of a journal in use: %v, want ErrJournalInUse", err)
	}
	before, _ := os.ReadFile(path)
	if len(before) == 0 {
		t.Fatal("no header written")
	}
	j.Close()
	j2, err := OpenJournal(path)
	if err != nil {
		t.Fatalf("after Close: %v", err)
	}
	j2.Close()
}

// TestCreateJournalRefusesARun: a file that holds a run is neither
// truncated nor appended to by CreateJournal; an empty file is fine;
// OverwriteJournal starts over with a new run id.
func TestCreateJournalRefusesARun(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "run.journal")
	h := newHost(t, refundLLM, "", Config{})
	countingTools(h, false)
	j, err := CreateJournal(path, "refund")
	if err != nil {
		t.Fatal(err)
	}
	first := j.RunID()
	h.Execute(RunOptions{Input: refundInput, Program: "refund", Journal: j}, refundFlow)
	j.Close()
	before, _ := os.ReadFile(path)

	_, err = CreateJournal(path, "refund")
	if !errors.Is(err, ErrJournalExists) || !strings.Contains(err.Error(), `a run of "refund" with 5 effects, which ended success`) {
		t.Errorf("CreateJournal on a finished run: %v", err)
	}
	if after, _ := os.ReadFile(path); string(after) != string(before) {
		t.Error("the refused CreateJournal changed the file")
	}
	os.WriteFile(filepath.Join(dir, "other"), []byte("not a journal\n"), 0o644)
	if _, err := CreateJournal(filepath.Join(dir, "other"), "refund"); !errors.Is(err, ErrJournalExists) || !strings.Contains(err.Error(), "not a journal") {
		t.Errorf("CreateJournal on another file: %v", err)
	}
	os.WriteFile(filepath.Join(dir, "empty"), nil, 0o644)
	if j, err := CreateJournal(filepath.Join(dir, "empty"), "refund"); err != nil {
		t.Errorf("CreateJournal on an empty file: %v", err)
	} else {
		j.Close()
	}

	j, err = OverwriteJournal(path, "refund")
	if err != nil {
		t.Fatal(err)
	}
	if j.RunID() == first || j.Effects() != 0 {
		t.Errorf("OverwriteJournal: run id %s (was %s), %d effects", j.RunID(), first, j.Effects())
	}
	j.Close()
	data, _ := os.ReadFile(path)
	if !strings.HasPrefix(string(data), `{"format":"genesis-journal","version":1,"program":"refund","run":"`+j.RunID()+`"}`) || strings.Count(string(data), "\n") != 1 {
		t.Errorf("the overwritten journal:\n%s", data)
	}
}

// TestIdempotencyKeys: every attempt of every step of every run has its
// own key; a run resumed from its journal gives its steps the keys they
// had; Go tools get the key in their context.
func TestIdempotencyKeys(t *testing.T) {
	var mu sync.Mutex
	var keys []string
	record := func(ctx context.Context, args Value) (Value, error) {
		mu.Lock()
		defer mu.Unlock()
		c, ok := CallFromContext(ctx)
		if !ok || c.IdempotencyKey() != IdempotencyKeyFrom(ctx) {
			t.Error("the call is not in the tool's context")
		}
		keys = append(keys, IdempotencyKeyFrom(ctx))
		if len(keys)%3 == 1 {
			return Value{}, &CallError{Kind: "unavailable", Message: "again"}
		}
		return String("ok"), nil
	}
	program := func(r *Run) Value {
		r.ToolWith(siteA.At(), String("t"), ObjNew(), Object(Field{"retries", Int(1)}))
		r.Tool(siteB.At(), String("t"), ObjNew())
		return Unit()
	}
	runOnce := func(opts RunOptions) []string {
		keys = nil
		h := NewHost(Config{})
		h.RegisterTool("t", record)
		if res := h.Execute(opts, program); res.Status != StatusSuccess {
			t.Fatalf("%s", resultJSON(res))
		}
		return keys
	}
	a := runOnce(RunOptions{Program: "p"})
	b := runOnce(RunOptions{Program: "p"})
	seen := map[string]bool{}
	for _, k := range append(append([]string{}, a...), b...) {
		if len(k) != 64 || seen[k] {
			t.Errorf("key %q is empty, malformed or not unique: runs %v and %v", k, a, b)
		}
		seen[k] = true
	}
	fixed := runOnce(RunOptions{Program: "p", RunID: "r", ProgramHash: "h"})
	want := []string{
		IdempotencyKey("r", "h", "a @ t.json:1:1", 1),
		IdempotencyKey("r", "h", "a @ t.json:1:1", 2),
		IdempotencyKey("r", "h", "b @ t.json:2:1", 1),
	}
	if strings.Join(fixed, " ") != strings.Join(want, " ") {
		t.Errorf("keys %v, want %v", fixed, want)
	}
	if IdempotencyKey("r", "h", "a", 1) == IdempotencyKey("r", "h", "a", 2) ||
		IdempotencyKey("r1", "h", "a", 1) == IdempotencyKey("r", "1h", "a", 1) {
		t.Error("different inputs give the same key")
	}

	// The journal's run id wins, and survives a resume.
	j := NewJournal("p")
	withJournal := runOnce(RunOptions{Program: "p", ProgramHash: "h", RunID: "ignored", Journal: j})
	if withJournal[0] != IdempotencyKey(j.RunID(), "h", "a @ t.json:1:1", 1) {
		t.Errorf("the key does not derive from the journal's run id")
	}
	j2, err := ReadJournal(j.Bytes())
	if err != nil || j2.RunID() != j.RunID() {
		t.Fatalf("the run id does not survive reading: %v", err)
	}
}

// TestCancelledCallResumes: a run cancelled while a tool call is in
// flight ends with status cancelled and journals nothing of that call;
// resumed, it makes the call again with the same key. A crash in a
// retry makes the resumed run start at that attempt, with its key.
func TestCancelledCallResumes(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	var keys []string
	h := NewHost(Config{})
	h.RegisterTool("slow", func(c context.Context, args Value) (Value, error) {
		keys = append(keys, IdempotencyKeyFrom(c))
		if len(keys) == 1 {
			cancel() // the signal comes while the call is in flight
			<-c.Done()
			return Value{}, c.Err()
		}
		return String("done"), nil
	})
	path := filepath.Join(t.TempDir(), "run.journal")
	j, err := CreateJournal(path, "p")
	if err != nil {
		t.Fatal(err)
	}
	program := func(r *Run) Value {
		r.Tool(siteA.At(), String("slow"), ObjNew())
		return r.Tool(siteB.At(), String("slow"), ObjNew())
	}
	res := h.Execute(RunOptions{Context: ctx, Program: "p", Journal: j}, program)
	j.Close()
	if res.Status != StatusCancelled || res.Error.Kind != "cancelled" || res.Error.Step != "a @ t.json:1:1" {
		t.Fatalf("cancelled run: %s", resultJSON(res))
	}
	data, _ := os.ReadFile(path)
	if strings.Contains(string(data), `"effect"`) || !strings.HasSuffix(string(data), `{"end":"cancelled"}`+"\n") {
		t.Errorf("journal of the cancelled run:\n%s", data)
	}
	j, err = OpenJournal(path)
	if err != nil {
		t.Fatal(err)
	}
	res = h.Execute(RunOptions{Program: "p", Journal: j, Mode: JournalResume}, program)
	j.Close()
	if res.Status != StatusSuccess || len(keys) != 3 || keys[0] != keys[1] || keys[1] == keys[2] {
		t.Errorf("resumed: %s, keys %v (the first two must be equal)", resultJSON(res), keys)
	}

	// A crash in attempt 2: the journal has its attempt line, and the
	// resumed run makes attempt 2 again.
	jm := NewJournal("p")
	var attempts []int
	h2 := NewHost(Config{})
	h2.RegisterTool("flaky", func(c context.Context, args Value) (Value, error) {
		call, _ := CallFromContext(c)
		attempts = append(attempts, call.Attempt)
		return Value{}, &CallError{Kind: "unavailable", Message: "down"}
	})
	flaky := func(r *Run) Value {
		return r.ToolWith(siteA.At(), String("flaky"), ObjNew(), Object(Field{"retries", Int(2)}))
	}
	h2.Execute(RunOptions{Program: "p", Journal: jm}, flaky)
	lines := strings.SplitAfter(string(jm.Bytes()), "\n")
	var cut []string
	for _, l := range lines {
		if strings.Contains(l, `"effect"`) || strings.Contains(l, `"attempt":3`) {
			break // the crash: attempt 2 started and never ended
		}
		cut = append(cut, l)
	}
	if got := strings.Join(cut, ""); !strings.Contains(got, `{"step":"a @ t.json:1:1","attempt":2}`) {
		t.Fatalf("no attempt line:\n%s", jm.Bytes())
	}
	jr, err := ReadJournal([]byte(strings.Join(cut, "")))
	if err != nil {
		t.Fatal(err)
	}
	attempts = nil
	h2.Execute(RunOptions{Program: "p", Journal: jr, Mode: JournalResume}, flaky)
	if len(attempts) != 2 || attempts[0] != 2 || attempts[1] != 3 {
		t.Errorf("resumed attempts %v, want [2 3]: the attempt in flight, then the last retry", attempts)
	}
}

// TestStopNamesTheStepItEnds: a stop at a site of its own names the
// step it ends, as the trace and the journal name it.
func TestStopNamesTheStepItEnds(t *testing.T) {
	h := newHost(t, `{"__default__": "maybe"}`, "", Config{})
	stopSite := NewSite("a", "t.json", 1, 9) // the frontend's own position for the stop
	res := h.Execute(RunOptions{}, func(r *Run) Value {
		r.LLM(siteA.At(7), String("q"), ObjNew())
		r.Stop(stopSite.At(7), String("failed"), Error("allowed_outputs", "no"))
		return Unit()
	})
	if res.Error == nil || res.Error.Step != "a @ t.json:1:1 # 7" {
		t.Errorf("error %+v, want the step a @ t.json:1:1 # 7", res.Error)
	}
	// A stop whose name no step just had names itself.
	res = h.Execute(RunOptions{}, func(r *Run) Value {
		r.LLM(siteA.At(), String("q"), ObjNew())
		r.Stop(siteB.At(), String("failed"), Error("x", "no"))
		return Unit()
	})
	if res.Error == nil || res.Error.Step != "b @ t.json:2:1" {
		t.Errorf("error %+v, want b @ t.json:2:1", res.Error)
	}
}

// TestBranchKeys: the calls of parallel branches derive their keys from
// the run's id and program hash, with the branch in the step identity.
func TestBranchKeys(t *testing.T) {
	var mu sync.Mutex
	keys := map[string]string{}
	h := NewHost(Config{})
	h.RegisterTool("t", func(ctx context.Context, args Value) (Value, error) {
		c, _ := CallFromContext(ctx)
		mu.Lock()
		keys[c.Step] = c.IdempotencyKey()
		mu.Unlock()
		return Unit(), nil
	})
	branch := func(r *Run) Value { return r.Tool(siteA.At(), String("t"), ObjNew()) }
	res := h.Execute(RunOptions{RunID: "r", ProgramHash: "h"}, func(r *Run) Value {
		r.Parallel(siteB.At(), 2, branch, branch)
		return Unit()
	})
	if res.Status != StatusSuccess || len(keys) != 2 {
		t.Fatalf("%s, keys %v", resultJSON(res), keys)
	}
	for step, key := range keys {
		if key != IdempotencyKey("r", "h", step, 1) {
			t.Errorf("branch step %s: key %s, want the run's derivation", step, key)
		}
	}
}
