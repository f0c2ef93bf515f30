package runtime

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	goruntime "runtime"
	"strings"
	"sync"
	"testing"
	"time"
)

var siteLoop = NewSite("loop", "t.vvm", 3, 1)

// spin is a loop without effects, as generated code runs it: a Tick per
// iteration and nothing else. It ends only by a stop.
func spin(r *Run) Value {
	n := Int(0)
	for {
		r.Tick(siteLoop.At())
		n = NumAdd(n, Int(1))
	}
}

// withValueLimit sets the process's value limit for one test.
func withValueLimit(t *testing.T, n int64) {
	old := ValueLimit()
	SetValueLimit(n)
	t.Cleanup(func() { SetValueLimit(old) })
}

func TestLimitsSteps(t *testing.T) {
	for _, c := range []struct {
		name      string
		budget    Budget
		limits    Limits
		wantSteps int
		kind      string
	}{
		{"steps", Budget{}, Limits{Steps: 4}, 4, "limit.steps"},
		{"tokens", Budget{}, Limits{Tokens: 100}, 3, "limit.tokens"},
		{"cost", Budget{}, Limits{Cost: 0.05}, 3, "limit.cost"},
		// The lower of the program's budget and the operator's limit
		// stops the run, each with its own kind.
		{"budget lower", Budget{Steps: 3}, Limits{Steps: 5}, 3, "budget.steps"},
		{"limit lower", Budget{Steps: 5}, Limits{Steps: 3}, 3, "limit.steps"},
		{"equal: the budget's", Budget{Steps: 3}, Limits{Steps: 3}, 3, "budget.steps"},
		{"within", Budget{}, DefaultLimits(), 10, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			h := newHost(t, usageLLM, "", Config{Limits: c.limits})
			res := h.Execute(RunOptions{Budget: c.budget}, chain(10))
			if len(res.Steps) != c.wantSteps {
				t.Errorf("%d steps ran, want %d", len(res.Steps), c.wantSteps)
			}
			if c.kind == "" {
				if res.Status != StatusSuccess {
					t.Errorf("%s", resultJSON(res))
				}
				return
			}
			if res.Status != StatusBudgetExceeded || res.Error.Kind != c.kind {
				t.Fatalf("%s", resultJSON(res))
			}
			if want := "a @ t.json:1:1 # " + string(rune('0'+c.wantSteps)); res.Error.Step != want {
				t.Errorf("refused step %q, want %q", res.Error.Step, want)
			}
		})
	}
}

// fakeClock is a real clock for tests: every reading is a second later.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(time.Second)
	return c.t
}

func TestLimitsWallStopsALoopWithoutEffects(t *testing.T) {
	clock := &fakeClock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	h := NewHost(Config{Limits: Limits{Wall: 30 * time.Second}, Now: clock.now})
	res := h.Execute(RunOptions{}, spin)
	if res.Status != StatusBudgetExceeded || res.Error.Kind != "limit.wall" {
		t.Fatalf("%s", resultJSON(res))
	}
	if res.Error.Step != "loop @ t.vvm:3:1" {
		t.Errorf("step %q, want the loop's site", res.Error.Step)
	}
	if !strings.Contains(res.Error.Message, "--max-wall") {
		t.Errorf("message %q does not name the flag", res.Error.Message)
	}
}

// TestLimitsWallIsRealTime: the virtual clock does not move in a loop of
// effects that take no virtual time, the wall limit does.
func TestLimitsWallIsRealTime(t *testing.T) {
	clock := &fakeClock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	h := newHost(t, usageLLM, "", Config{Limits: Limits{Wall: 10 * time.Second}, Now: clock.now})
	res := h.Execute(RunOptions{}, chain(100))
	if res.Status != StatusBudgetExceeded || res.Error.Kind != "limit.wall" {
		t.Fatalf("%s", resultJSON(res))
	}
	if n := len(res.Steps); n == 0 || n >= 100 {
		t.Errorf("%d steps ran", n)
	}
}

func TestTooDeep(t *testing.T) {
	var down func(r *Run, depth int) Value
	down = func(r *Run, depth int) Value {
		if depth > MaxCallDepth {
			r.TooDeep(siteB.At())
		}
		return down(r, depth+1)
	}
	res := NewHost(Config{}).Execute(RunOptions{}, func(r *Run) Value { return down(r, 1) })
	if res.Status != StatusBudgetExceeded || res.Error.Kind != "limit.depth" || res.Error.Step != "b @ t.json:2:1" {
		t.Fatalf("%s", resultJSON(res))
	}
}

// TestTickCancelledContext: a loop without effects notices a cancelled
// context at its iterations and ends the run cancelled, as a step would.
func TestTickCancelledContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	res := NewHost(Config{}).Execute(RunOptions{Context: ctx}, spin)
	if res.Status != StatusCancelled || res.Error.Kind != "cancelled" || res.Error.Step != "loop @ t.vvm:3:1" {
		t.Fatalf("%s", resultJSON(res))
	}
}

func TestLimitsMemory(t *testing.T) {
	// Any heap is over one byte: the first check stops the run, at a
	// loop iteration and before a step. (The live heap is known from the
	// first collection on.)
	goruntime.GC()
	h := newHost(t, usageLLM, "", Config{Limits: Limits{Memory: 1}})
	res := h.Execute(RunOptions{}, spin)
	if res.Status != StatusBudgetExceeded || res.Error.Kind != "limit.memory" || !strings.Contains(res.Error.Message, "--max-memory") {
		t.Fatalf("%s", resultJSON(res))
	}
	res = h.Execute(RunOptions{}, chain(3))
	if res.Status != StatusBudgetExceeded || res.Error.Kind != "limit.memory" || len(res.Steps) != 0 {
		t.Fatalf("%s", resultJSON(res))
	}
	if h.Execute(RunOptions{}, chain(3)); liveHeap() <= 0 {
		t.Error("the live heap reads as nothing")
	}
}

func TestValueLimit(t *testing.T) {
	withValueLimit(t, 1<<16)
	for _, c := range []struct {
		name string
		prog func(r *Run) Value
		want string // in the message
	}{
		{"string doubling", func(r *Run) Value {
			s := String("ab")
			for {
				r.Tick(siteLoop.At())
				s = StrConcat(s, s)
			}
		}, "a string of 131072 bytes (joining strings)"},
		{"format doubling", func(r *Run) Value {
			s := String("ab")
			for {
				r.Tick(siteLoop.At())
				s = StrFormat(String("$s$s"), Object(Field{"s", s}))
			}
		}, "(filling in a template)"},
		{"list growing", func(r *Run) Value {
			l := ListNew()
			for {
				r.Tick(siteLoop.At())
				l = ListAppend(l, Int(1))
			}
		}, "a list of 1639 items"},
		{"a list holding itself", func(r *Run) Value {
			// Small in memory, 2^40 elements in JSON: the encoding stops
			// at the limit instead of running for ever.
			l := List(Int(1))
			for range 40 {
				l = List(l, l)
			}
			return JSONEncode(l)
		}, "a JSON text of more than 65536 bytes (encoding a value as JSON)"},
		{"its hash", func(r *Run) Value {
			l := List(Int(1))
			for range 40 {
				l = List(l, l)
			}
			return ValueHash(l)
		}, "(hashing a value)"},
		{"in the state hash", func(r *Run) Value {
			l := List(Int(1))
			for range 40 {
				l = List(l, l)
			}
			r.Mark(siteA.At(), "step", l)
			return l
		}, "the state hash"},
		{"its rendering", func(r *Run) Value {
			l := List(Int(1))
			for range 40 {
				l = List(l, l)
			}
			return StrConcat(String("x"), l)
		}, "(joining strings)"},
	} {
		t.Run(c.name, func(t *testing.T) {
			res := NewHost(Config{}).Execute(RunOptions{Snapshots: true}, c.prog)
			if res.Status != StatusBudgetExceeded || res.Error.Kind != "limit.memory" || !strings.Contains(res.Error.Message, c.want) {
				t.Fatalf("%s", resultJSON(res))
			}
		})
	}
	// Within the limit nothing changes.
	if got := StrConcat(String("ab"), String("cd")).Str(); got != "abcd" {
		t.Errorf("str.concat gives %q", got)
	}
	SetValueLimit(0)
	if got := len(JSONEncode(List(String(strings.Repeat("x", 1<<17)))).Str()); got != 1<<17+4 {
		t.Errorf("without a limit json.encode gives %d bytes", got)
	}
}

// traceLines checks that a trace is whole JSON lines and returns them.
func traceLines(t *testing.T, trace []byte) []Value {
	t.Helper()
	var out []Value
	for _, line := range bytes.Split(bytes.TrimSuffix(trace, []byte("\n")), []byte("\n")) {
		v, err := ParseJSON(line)
		if err != nil {
			t.Fatalf("trace line %q: %v", line, err)
		}
		out = append(out, v)
	}
	return out
}

func TestLimitsTrace(t *testing.T) {
	const limit = 4096
	check := func(t *testing.T, trace []byte, res *Result) {
		t.Helper()
		if res.Status != StatusBudgetExceeded || res.Error.Kind != "limit.trace" || !strings.Contains(res.Error.Message, "--max-trace") {
			t.Fatalf("%s", resultJSON(res))
		}
		lines := traceLines(t, trace)
		last := lines[len(lines)-1]
		if ObjGet(last, String("event")).Str() != "run_completed" || ObjGet(last, String("status")).Str() != "budget_exceeded" {
			t.Errorf("the trace ends with %s", last)
		}
		// The events before run_completed fit in the limit; run_completed
		// is written all the same, its output null.
		if n := len(trace) - len(AppendJSON(nil, last)) - 1; n > limit {
			t.Errorf("%d bytes of events before run_completed, the limit is %d", n, limit)
		}
		if !ObjGet(last, String("output")).IsUnit() {
			t.Errorf("run_completed's output %s, want null", ObjGet(last, String("output")))
		}
	}
	t.Run("steps", func(t *testing.T) {
		h := newHost(t, usageLLM, "", Config{Limits: Limits{Trace: limit}})
		var trace bytes.Buffer
		res := h.Execute(RunOptions{Trace: &trace}, chain(1000))
		check(t, trace.Bytes(), res)
		if n := len(res.Steps); n == 0 || n >= 1000 {
			t.Errorf("%d steps ran", n)
		}
	})
	t.Run("notes in a loop", func(t *testing.T) {
		var trace bytes.Buffer
		res := NewHost(Config{Limits: Limits{Trace: limit}}).Execute(RunOptions{Trace: &trace}, func(r *Run) Value {
			for {
				r.Tick(siteLoop.At())
				r.Trace(siteLoop.At(), String("note"), Object(Field{"kind", String("loop")}, Field{"text", String("again")}))
			}
		})
		check(t, trace.Bytes(), res)
	})
	t.Run("a large output", func(t *testing.T) {
		var trace bytes.Buffer
		res := NewHost(Config{Limits: Limits{Trace: limit}}).Execute(RunOptions{Trace: &trace}, func(r *Run) Value {
			r.Mark(siteA.At(), "step", String(strings.Repeat("x", 2*limit)))
			return Unit()
		})
		check(t, trace.Bytes(), res)
	})
	t.Run("parallel branches", func(t *testing.T) {
		h := newHost(t, usageLLM, "", Config{Limits: Limits{Trace: limit}})
		var trace bytes.Buffer
		res := h.Execute(RunOptions{Trace: &trace}, func(r *Run) Value {
			branch := func(c *Run) Value { return chain(12)(c) }
			r.Parallel(siteB.At(), 2, branch, branch, branch)
			return Unit()
		})
		check(t, trace.Bytes(), res)
	})
	t.Run("within", func(t *testing.T) {
		h := newHost(t, usageLLM, "", Config{Limits: Limits{Trace: 1 << 20}})
		var limited, free bytes.Buffer
		res := h.Execute(RunOptions{Trace: &limited}, chain(10))
		h2 := newHost(t, usageLLM, "", Config{})
		h2.Execute(RunOptions{Trace: &free}, chain(10))
		if res.Status != StatusSuccess || limited.String() != free.String() {
			t.Errorf("a trace within its limit differs:\n%s\n%s", limited.String(), free.String())
		}
	})
}

func TestMainLimitFlags(t *testing.T) {
	defer SetValueLimit(ValueLimit())
	dir := t.TempDir()
	llm := filepath.Join(dir, "llm.json")
	os.WriteFile(llm, []byte(usageLLM), 0o644)
	prog := func(h *Host, opts RunOptions) *Result { return h.Execute(opts, chain(10)) }
	for _, c := range []struct {
		args []string
		code int
		want string // in stdout, or stderr for usage errors
	}{
		{[]string{"--max-steps", "4"}, 1, `"kind":"limit.steps","message":"the run has executed 4 steps, the limit (--max-steps) is 4"`},
		{[]string{"--max-tokens", "50"}, 1, `"kind":"limit.tokens"`},
		{[]string{"--max-cost", "0.03"}, 1, `"kind":"limit.cost"`},
		{[]string{"--max-memory", "1B"}, 1, `"kind":"limit.memory"`},
		{nil, 0, `"status":"success"`},
		{[]string{"--max-steps", "0", "--max-memory", "0"}, 0, `"status":"success"`},
		{[]string{"--max-steps", "-1"}, 2, "--max-steps must not be negative"},
		{[]string{"--max-cost", "NaN"}, 2, "--max-cost"},
		{[]string{"--max-wall", "soon"}, 2, "max-wall"},
		{[]string{"--max-memory", "lots"}, 2, "want a size"},
	} {
		var stdout, stderr bytes.Buffer
		args := append([]string{"--llm", "mock:" + llm}, c.args...)
		code := mainIO(args, "p", nil, prog, &stdout, &stderr)
		got := stdout.String()
		if c.code == 2 {
			got = stderr.String()
		}
		if code != c.code || !strings.Contains(got, c.want) {
			t.Errorf("%q: exit %d, want %d; want %q in\n%s%s", c.args, code, c.code, c.want, stdout.String(), stderr.String())
		}
	}
	// Main bounds values to a quarter of --max-memory.
	var stdout, stderr bytes.Buffer
	mainIO([]string{"--max-memory", "64KiB"}, "p", nil, prog, &stdout, &stderr)
	if ValueLimit() != 16<<10 {
		t.Errorf("value limit %d after --max-memory 64KiB", ValueLimit())
	}
}

func TestParseSize(t *testing.T) {
	for in, want := range map[string]int64{
		"0": 0, "1048576": 1 << 20, "64MiB": 64 << 20, "1GiB": 1 << 30, "1.5KiB": 1536,
		"2MB": 2e6, "10kB": 10e3, "300B": 300, " 4 MiB ": 4 << 20,
	} {
		if got, err := parseSize(in); err != nil || got != want {
			t.Errorf("parseSize(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "lots", "-1", "1XB", "NaN", "1e30GiB", "MiB"} {
		if _, err := parseSize(bad); err == nil {
			t.Errorf("parseSize(%q) accepted", bad)
		}
	}
}
