package runtime

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"
)

// chain runs n llm steps, each with a distinct counter.
func chain(n int) func(r *Run) Value {
	return func(r *Run) Value {
		for i := 0; i < n; i++ {
			r.LLM(siteA.At(int64(i)), String("go"), ObjNew())
		}
		return String("done")
	}
}

const usageLLM = `{"go": {"$reply": "ok", "$usage": {"prompt_tokens": 30, "completion_tokens": 10, "cost": 0.02}}}`

func TestBudgets(t *testing.T) {
	for _, c := range []struct {
		name      string
		budget    Budget
		wantSteps int
		kind      string
	}{
		// The step that crosses a limit completes; the next is refused.
		{"steps", Budget{Steps: 3}, 3, "budget.steps"},
		{"tokens", Budget{Tokens: 100}, 3, "budget.tokens"}, // 40, 80, 120 ≥ 100
		{"tokens exact", Budget{Tokens: 80}, 2, "budget.tokens"},
		{"cost", Budget{Cost: 0.05}, 3, "budget.cost"}, // 0.02, 0.04, 0.06
		{"none", Budget{}, 10, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			h := newHost(t, usageLLM, "", Config{})
			res := h.Execute(RunOptions{Budget: c.budget}, chain(10))
			if len(res.Steps) != c.wantSteps {
				t.Errorf("%d steps ran, want %d", len(res.Steps), c.wantSteps)
			}
			if c.kind == "" {
				if res.Status != StatusSuccess {
					t.Errorf("status %s", res.Status)
				}
				return
			}
			if res.Status != StatusBudgetExceeded || res.Error.Kind != c.kind {
				t.Fatalf("%s", resultJSON(res))
			}
			if want := "a @ t.json:1:1 # " + string(rune('0'+c.wantSteps)); res.Error.Step != want {
				t.Errorf("refused step %q, want %q", res.Error.Step, want)
			}
			if res.Output.Str() != "ok" {
				t.Errorf("output %v, want the last completed step's", res.Output)
			}
		})
	}
}

func TestBudgetHostAndProgramMerge(t *testing.T) {
	h := newHost(t, usageLLM, "", Config{Budget: Budget{Steps: 5, Tokens: 1000}})
	if res := h.Execute(RunOptions{Budget: Budget{Steps: 2}}, chain(10)); len(res.Steps) != 2 {
		t.Errorf("program budget 2 under host budget 5: %d steps", len(res.Steps))
	}
	if res := h.Execute(RunOptions{Budget: Budget{Steps: 8}}, chain(10)); len(res.Steps) != 5 {
		t.Errorf("program budget 8 under host budget 5: %d steps", len(res.Steps))
	}
	if got := (Budget{Steps: 3, Cost: 1}).Merge(Budget{Tokens: 7, Cost: 0.5, Wall: time.Second}); got != (Budget{Steps: 3, Tokens: 7, Cost: 0.5, Wall: time.Second}) {
		t.Errorf("Merge %+v", got)
	}
}

func TestBudgetWallTime(t *testing.T) {
	// On the virtual clock only waits (and backoffs) take time.
	h := newHost(t, usageLLM, "", Config{})
	res := h.Execute(RunOptions{Budget: Budget{Wall: 3 * time.Second}}, func(r *Run) Value {
		r.Wait(siteA.At(1), String("2s"))
		r.LLM(siteB.At(), String("go"), ObjNew()) // at 2 s: allowed
		r.Wait(siteA.At(2), Object(Field{"kind", String("sleep")}, Field{"seconds", Number(1.5)}))
		r.LLM(siteC.At(), String("go"), ObjNew()) // at 3.5 s: refused
		return Unit()
	})
	if res.Status != StatusBudgetExceeded || res.Error.Kind != "budget.wall_time" || res.Error.Step != "c @ t.json:3:1" {
		t.Errorf("%s", resultJSON(res))
	}
	// On the real clock, real time counts.
	now := time.Unix(1000, 0)
	h = newHost(t, usageLLM, "", Config{RealTime: true, Now: func() time.Time { return now }, Sleep: func(ctx context.Context, d time.Duration) error {
		now = now.Add(d)
		return nil
	}})
	res = h.Execute(RunOptions{Budget: Budget{Wall: time.Minute}}, func(r *Run) Value {
		r.Wait(siteA.At(), Number(61))
		r.LLM(siteB.At(), String("go"), ObjNew())
		return Unit()
	})
	if res.Error == nil || res.Error.Kind != "budget.wall_time" {
		t.Errorf("real clock: %s", resultJSON(res))
	}
}

func TestBudgetStalled(t *testing.T) {
	// A polling loop: the same step gets the same answer again and again.
	h := newHost(t, `{"status?": {"$sequence": ["working", "working", "working", "working", "working", "working"]}}`, "", Config{})
	res := h.Execute(RunOptions{Budget: Budget{Stalled: 3}}, func(r *Run) Value {
		for i := 0; i < 20; i++ {
			r.LLM(siteA.At(int64(i)), String("status?"), ObjNew())
		}
		return Unit()
	})
	// Step 1 changes the state (a new output); steps 2, 3 and 4 do not.
	if res.Status != StatusStalled || res.Error.Kind != "stalled" || len(res.Steps) != 4 {
		t.Errorf("%s", resultJSON(res))
	}
	// The stalling step ran and is in the result (nano-vm drops it).
	if res.Error.Step != "a @ t.json:1:1 # 3" {
		t.Errorf("stalled at %q", res.Error.Step)
	}
	// Progress resets the count: outputs that change never stall.
	res = h.Execute(RunOptions{Budget: Budget{Stalled: 2}}, func(r *Run) Value {
		for i := 0; i < 10; i++ {
			r.LLM(siteA.At(int64(i)), String("status?"), ObjNew())
			r.SetOutput("i", Int(int64(i)))
		}
		return Unit()
	})
	if res.Status != StatusSuccess {
		t.Errorf("changing outputs: %s", resultJSON(res))
	}
}

func TestBudgetInBranches(t *testing.T) {
	// A branch sees the budget as it stood when the block started, plus
	// its own steps: each branch here runs 2 steps before the budget of
	// 4 (block + 2 + 1) refuses its third, whatever the timing.
	h := newHost(t, usageLLM, "", Config{})
	block := NewSite("block", "p", 1, 1)
	res := h.Execute(RunOptions{Budget: Budget{Steps: 4}}, func(r *Run) Value {
		r.Mark(siteC.At(), "condition", True)
		return List(r.Parallel(block.At(), 2,
			func(b *Run) Value { return chain(5)(b) },
			func(b *Run) Value { return chain(5)(b) },
		)...)
	})
	if res.Status != StatusBudgetExceeded || !strings.HasPrefix(res.Error.Step, "block @ p:1:1/0 > a @ t.json:1:1 # 2") {
		t.Errorf("%s", resultJSON(res))
	}
	if got := strings.Join(res.Steps, ","); got != "c,block,a,a,a,a" {
		t.Errorf("steps %s", got)
	}
}

func TestCancelledContext(t *testing.T) {
	h := newHost(t, usageLLM, "", Config{})
	ctx, cancel := context.WithCancel(context.Background())
	res := h.Execute(RunOptions{Context: ctx}, func(r *Run) Value {
		r.LLM(siteA.At(), String("go"), ObjNew())
		cancel()
		r.LLM(siteB.At(), String("go"), ObjNew())
		return Unit()
	})
	if res.Status != StatusCancelled || res.Error.Kind != "cancelled" || len(res.Steps) != 1 {
		t.Errorf("%s", resultJSON(res))
	}
}

func TestRetryBackoff(t *testing.T) {
	p := RetryPolicy{Backoff: time.Second, MaxBackoff: 30 * time.Second}
	var got []time.Duration
	for n := 1; n <= 7; n++ {
		got = append(got, p.delay(n, 0))
	}
	want := []time.Duration{1, 2, 4, 8, 16, 30, 30}
	for i := range want {
		if got[i] != want[i]*time.Second {
			t.Errorf("delays %v, want %v s (nano-vm's min(2^(n-1), 30))", got, want)
			break
		}
	}
	if d := p.delay(1, 45*time.Second); d != 45*time.Second {
		t.Errorf("a Retry-After of 45 s gave %v", d)
	}
	// Retries wait on the run's clock: virtual time advances by 1 + 2 s.
	h := newHost(t, `{"x": {"$sequence": [{"$error": {"kind": "unavailable", "message": "503"}}, {"$error": {"kind": "unavailable", "message": "503"}}, "ok"]}}`, "", Config{})
	res := h.Execute(RunOptions{}, func(r *Run) Value {
		v := r.LLM(siteA.At(), String("x"), Object(Field{"retries", Int(3)}))
		return List(v, Number(r.Elapsed().Seconds()))
	})
	if got := res.Output.String(); got != `["ok",3]` {
		t.Errorf("reply and elapsed seconds %s", got)
	}
}

// TestBackoffIsNotAStep: the wait between two attempts of a step takes
// time on the clock and is traced, but counts for no budget and is no
// step of the result; a sleep of the program is one.
func TestBackoffIsNotAStep(t *testing.T) {
	h := newHost(t, usageLLM, "", Config{})
	var trace bytes.Buffer
	res := h.Execute(RunOptions{Budget: Budget{Steps: 2, Stalled: 2}, Trace: &trace}, func(r *Run) Value {
		backoff := Object(Field{"kind", String("backoff")}, Field{"seconds", Number(2)})
		r.LLM(siteA.At(), String("go"), ObjNew())
		r.Wait(siteB.At(0), backoff)
		r.Wait(siteB.At(1), backoff)
		return r.LLM(siteA.At(1), String("go"), ObjNew())
	})
	if res.Status != StatusSuccess || strings.Join(res.Steps, ",") != "a,a" || res.Output.Str() != "ok" {
		t.Fatalf("%s", resultJSON(res))
	}
	if got := strings.Count(trace.String(), `"kind":"wait","status":"success"`); got != 2 {
		t.Errorf("%d traced backoffs, want 2:\n%s", got, trace.String())
	}
	if !strings.Contains(trace.String(), `"t":4000`) {
		t.Errorf("the backoffs took no time on the clock:\n%s", trace.String())
	}
	// A sleep is a step: with a budget of 2 the second llm call is refused.
	res = h.Execute(RunOptions{Budget: Budget{Steps: 2}}, func(r *Run) Value {
		r.LLM(siteA.At(), String("go"), ObjNew())
		r.Wait(siteB.At(0), Object(Field{"kind", String("sleep")}, Field{"seconds", Number(2)}))
		return r.LLM(siteA.At(1), String("go"), ObjNew())
	})
	if res.Status != StatusBudgetExceeded {
		t.Errorf("a sleep did not count: %s", resultJSON(res))
	}
}
