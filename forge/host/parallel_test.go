package host_test

import (
	"bytes"
	"context"
	"fmt"
	"math/rand"
	"regexp"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/genesis-toolchain/genesis/compiler"
	"github.com/genesis-toolchain/genesis/forge/host"
	"github.com/genesis-toolchain/genesis/ir/opt"
	"github.com/genesis-toolchain/genesis/runtime"
	"github.com/google/go-cmp/cmp"
)

// The parallel blocks of agent programs on the Forge Machine run their
// branches at once, each on a copy of the machine (docs/forge.md,
// "Parallel blocks"). These tests run programs whose branches call a
// model that answers after a random delay, many times, concurrently and
// one branch at a time, and check that nothing the run shows depends on
// the order the branches ran in: result, trace, journal, ticks, trace
// hash and the hashes of the frames.

// fanProg is a nano-vm program with a parallel block of five model calls
// and a tool call, then a step that reads them all.
const fanProg = `{"name": "fan", "steps": [
  {"id": "fan", "type": "parallel", "parallel_steps": [
    {"id": "a", "type": "llm", "prompt": "a about $topic", "output_key": "a"},
    {"id": "b", "type": "llm", "prompt": "b about $topic", "output_key": "b"},
    {"id": "c", "type": "llm", "prompt": "c about $topic", "output_key": "c"},
    {"id": "d", "type": "llm", "prompt": "d about $topic", "output_key": "d"},
    {"id": "e", "type": "llm", "prompt": "e about $topic", "output_key": "e"},
    {"id": "g", "type": "tool", "tool": "lookup", "args": {"q": "$topic"}, "output_key": "g"}]},
  {"id": "sum", "type": "llm", "prompt": "sum of $a | $b | $c | $d | $e | $g", "output_key": "out"}
]}`

// pmapProg is a VVM program whose pmap (parallel.each) calls a model on
// each of four items, building each prompt with the value builtins, and
// whose branches each run a block of their own (nested blocks).
const pmapProg = `agent writer(model="m", prompt="Write.")

items = ["one", "two", "three", "four"]

def echo(y):
  return @writer ` + "`Echo {y}.`" + `(y)

def shout(x):
  parts = pmap([x, x + "!"], echo)
  return @writer ` + "`Shout {x} and {parts} again.`" + `(x)

loud = pmap(items, shout)
export loud
`

// spellProg is a Grimoire spell whose parallel branches compute and
// emit, so that each branch's store builds objects of its own.
const spellProg = `spell Par

  version: "1.0.0"
  description: "branches that build values"
  assets: []

  on manual:
    parallel join=all on_fail=continue:
      alpha:
        a = 1
        emit got(v=a)
      beta:
        b = 2
        emit got(v=b)
      gamma:
        c = 3
        emit got(v=c)
    sum = a + b + c
    emit done(sum=sum)
`

// slowLLM answers every prompt with a text made from it, after a random
// delay, and records how many calls it served at once.
type slowLLM struct {
	mu        sync.Mutex
	rnd       *rand.Rand
	maxDelay  time.Duration
	fixed     time.Duration // a delay added to every call
	now, peak atomic.Int64
	calls     atomic.Int64
}

func (p *slowLLM) delay() time.Duration {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.maxDelay <= 0 {
		return p.fixed
	}
	return p.fixed + time.Duration(p.rnd.Int63n(int64(p.maxDelay)))
}

func (p *slowLLM) Complete(ctx context.Context, _ *runtime.Call, req *runtime.LLMRequest) (runtime.LLMResponse, error) {
	p.calls.Add(1)
	n := p.now.Add(1)
	defer p.now.Add(-1)
	for {
		old := p.peak.Load()
		if n <= old || p.peak.CompareAndSwap(old, n) {
			break
		}
	}
	time.Sleep(p.delay())
	text := "re: " + strings.ToUpper(req.Prompt)
	return runtime.LLMResponse{Value: runtime.String(text), Usage: runtime.Usage{PromptTokens: len(req.Prompt), CompletionTokens: len(text)}}, nil
}

func buildAgent(t testing.TB, name, src string) *host.Agent {
	t.Helper()
	out, diags := compiler.Build([]compiler.Source{{Name: name, Data: []byte(src)}}, compiler.Options{Target: "forge", OptLevel: opt.MaxLevel})
	if diags.HasErrors() {
		t.Fatalf("build %s: %v", name, diags)
	}
	a, err := host.LoadAgent(out.Program)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// outcome is everything a run shows.
type outcome struct {
	Result, Trace, Journal string
	Ticks, Effects         uint64
	HostCalls              uint64
	TraceHash              string
	Input, Output          string
}

// durations are the real durations a journal records of each call.
var durations = regexp.MustCompile(`"duration_ms":[0-9.e+-]+`)

// runIDs is the run id of a journal's header.
var runIDs = regexp.MustCompile(`"run":"[0-9a-f]*"`)

// runAgent runs a once with the model llm and returns what it shows,
// the journal's lines sorted (branches record their calls as they end).
func runAgent(t testing.TB, a *host.Agent, llm runtime.LLMProvider, cfg runtime.Config, input runtime.Value, opts host.AgentOptions) outcome {
	t.Helper()
	cfg.LLM = llm
	h := runtime.NewHost(cfg)
	h.RegisterTool("lookup", func(_ context.Context, args runtime.Value) (runtime.Value, error) {
		if p, ok := llm.(*slowLLM); ok {
			time.Sleep(p.delay())
		}
		return runtime.Object(runtime.Field{Key: "found", Value: args}), nil
	})
	j := runtime.NewJournal(a.Meta.Program)
	var trace bytes.Buffer
	res, stats := a.Run(h, runtime.RunOptions{Input: input, RunID: "run-1", Journal: j, Trace: &trace}, opts)
	lines := strings.SplitAfter(string(j.Bytes()), "\n")
	for i := range lines {
		lines[i] = durations.ReplaceAllString(lines[i], `"duration_ms":0`)
	}
	lines[0] = runIDs.ReplaceAllString(lines[0], `"run":""`) // a new one each run
	sort.Strings(lines[1:])                                  // the header first
	o := outcome{
		Result: string(res.AppendJSON(nil)), Trace: trace.String(), Journal: strings.Join(lines, ""),
		Ticks: stats.Ticks, Effects: stats.Effects, HostCalls: stats.HostCalls,
		Input: fmt.Sprintf("%x", stats.Input), Output: fmt.Sprintf("%x", stats.Output),
	}
	if stats.TraceHash != nil {
		o.TraceHash = fmt.Sprintf("%x", *stats.TraceHash)
	}
	return o
}

// TestParallelBranchesConcurrent runs each program 20 times with its
// branches at once, the model's delays random, and checks every run
// shows what the run with one branch at a time shows, and that the
// branches did run at once.
func TestParallelBranchesConcurrent(t *testing.T) {
	topic := runtime.Object(runtime.Field{Key: "topic", Value: runtime.String("owls")})
	for _, tc := range []struct {
		name, file, src string
		input           runtime.Value
		concurrent      bool // its branches call the model at once
	}{
		{"nanovm", "fan.json", fanProg, topic, true},
		{"vvm", "pmap.vvm", pmapProg, runtime.Unit(), true},
		{"grimoire", "par.spell", spellProg, runtime.Unit(), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := buildAgent(t, tc.file, tc.src)
			lim := a.AgentLimits()
			want := runAgent(t, a, &slowLLM{}, runtime.Config{}, tc.input, host.AgentOptions{Limits: lim, Trace: true, Sequential: true})
			if !strings.Contains(want.Result, `"status":"success"`) {
				t.Fatalf("the sequential run: %s", want.Result)
			}
			peak := int64(0)
			for i := range 20 {
				llm := &slowLLM{rnd: rand.New(rand.NewSource(int64(i))), maxDelay: 3 * time.Millisecond}
				got := runAgent(t, a, llm, runtime.Config{}, tc.input, host.AgentOptions{Limits: lim, Trace: true})
				if d := cmp.Diff(want, got); d != "" {
					t.Fatalf("run %d differs from the sequential run (-want +got):\n%s", i, d)
				}
				peak = max(peak, llm.peak.Load())
			}
			if tc.concurrent && peak < 2 {
				t.Errorf("the model never served two calls at once: the branches did not run concurrently")
			}
		})
	}
}

// TestParallelLimits: the block's limit and the host's MaxConcurrency
// bound the branches that run at once, and a limit of 1 runs them one
// at a time, with the same outcome.
func TestParallelLimits(t *testing.T) {
	a := buildAgent(t, "fan.json", fanProg)
	topic := runtime.Object(runtime.Field{Key: "topic", Value: runtime.String("owls")})
	opts := host.AgentOptions{Limits: a.AgentLimits(), Trace: true}
	want := runAgent(t, a, &slowLLM{}, runtime.Config{}, topic, opts)
	for _, limit := range []int{1, 2, 3} {
		llm := &slowLLM{rnd: rand.New(rand.NewSource(7)), maxDelay: 2 * time.Millisecond}
		got := runAgent(t, a, llm, runtime.Config{MaxConcurrency: limit}, topic, opts)
		if d := cmp.Diff(want, got); d != "" {
			t.Errorf("MaxConcurrency %d: (-want +got):\n%s", limit, d)
		}
		if p := llm.peak.Load(); p > int64(limit) {
			t.Errorf("MaxConcurrency %d: %d calls at once", limit, p)
		}
	}
}

// TestParallelBudgets runs the programs under tick budgets, output
// quotas and value memories that run out before, inside and after their
// blocks: every run, its branches at once with random delays, ends as
// the run with one branch at a time does, at the same point, with the
// same ticks; the whole budget is enough, one tick less is not.
func TestParallelBudgets(t *testing.T) {
	topic := runtime.Object(runtime.Field{Key: "topic", Value: runtime.String("owls")})
	for _, tc := range []struct {
		name, file, src string
		input           runtime.Value
	}{
		{"nanovm", "fan.json", fanProg, topic},
		{"vvm", "pmap.vvm", pmapProg, runtime.Unit()},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := buildAgent(t, tc.file, tc.src)
			full := runAgent(t, a, &slowLLM{}, runtime.Config{}, tc.input, host.AgentOptions{Limits: a.AgentLimits(), Trace: true})
			check := func(what string, opts host.AgentOptions, wantKind string, cfg ...runtime.Config) {
				t.Helper()
				c := runtime.Config{}
				if len(cfg) > 0 {
					c = cfg[0]
				}
				seq := opts
				seq.Sequential = true
				want := runAgent(t, a, &slowLLM{}, c, tc.input, seq)
				if wantKind != "" && !strings.Contains(want.Result, `"kind":"`+wantKind+`"`) {
					t.Errorf("%s: the run does not stop for %s: %s", what, wantKind, want.Result)
				}
				for i := range 3 {
					llm := &slowLLM{rnd: rand.New(rand.NewSource(int64(i))), maxDelay: time.Millisecond}
					got := runAgent(t, a, llm, c, tc.input, opts)
					if d := cmp.Diff(want, got); d != "" {
						t.Fatalf("%s, run %d (-one at a time +at once):\n%s", what, i, d)
					}
				}
			}
			lim := a.AgentLimits()
			lim.Ticks = full.Ticks
			check("the run's ticks", host.AgentOptions{Limits: lim, Trace: true}, "")
			for _, n := range []uint64{full.Ticks - 1, full.Ticks * 3 / 4, full.Ticks / 2, full.Ticks / 3, full.Ticks / 5} {
				lim.Ticks = n
				check(fmt.Sprintf("%d ticks", n), host.AgentOptions{Limits: lim, Trace: true}, "limit.ticks")
			}
			lim = a.AgentLimits()
			for _, n := range []uint64{200, 400, 600, 900} {
				lim.Output = n
				check(fmt.Sprintf("an output quota of %d", n), host.AgentOptions{Limits: lim, Trace: true}, "")
			}
			for _, n := range []uint64{2000, 4000, 6000, 9000, 14000, 20000, 40000} {
				check(fmt.Sprintf("%d bytes of values", n), host.AgentOptions{Limits: a.AgentLimits(), Trace: true, Values: n}, "")
			}
			// The runtime's budgets stop branches too: the lowest-numbered
			// stop stops the run, whichever branch ran out first.
			for _, n := range []int{30, 60, 100} {
				check(fmt.Sprintf("a budget of %d tokens", n), host.AgentOptions{Limits: a.AgentLimits(), Trace: true}, "",
					runtime.Config{Budget: runtime.Budget{Tokens: n}})
			}
		})
	}
}

// TestParallelReplayAndResume records a run whose branches run at once,
// then replays it from its journal (what forge replay and forge
// check-proof do): the same result, ticks, trace hash and frame hashes,
// no model called. A journal that holds only some branches' calls (a run
// stopped inside its block) is resumed: only the missing calls are made,
// and the run ends as the whole run did.
func TestParallelReplayAndResume(t *testing.T) {
	a := buildAgent(t, "fan.json", fanProg)
	topic := runtime.Object(runtime.Field{Key: "topic", Value: runtime.String("owls")})
	opts := host.AgentOptions{Limits: a.AgentLimits(), Trace: true}
	run := func(llm *slowLLM, j *runtime.Journal, mode runtime.JournalMode) (*runtime.Result, *host.AgentStats, string) {
		h := runtime.NewHost(runtime.Config{LLM: llm})
		h.RegisterTool("lookup", func(_ context.Context, args runtime.Value) (runtime.Value, error) {
			llm.calls.Add(1)
			return runtime.Object(runtime.Field{Key: "found", Value: args}), nil
		})
		var trace bytes.Buffer
		res, stats := a.Run(h, runtime.RunOptions{Input: topic, Journal: j, Mode: mode, Trace: &trace}, opts)
		return res, stats, trace.String()
	}
	j := runtime.NewJournal(a.Meta.Program)
	llm := &slowLLM{rnd: rand.New(rand.NewSource(1)), maxDelay: 2 * time.Millisecond}
	res, stats, _ := run(llm, j, runtime.JournalRecord)
	if res.Status != runtime.StatusSuccess || llm.calls.Load() != 7 {
		t.Fatalf("recorded run: %s with %d calls", res.AppendJSON(nil), llm.calls.Load())
	}
	want := string(res.AppendJSON(nil))
	same := func(what string, res *runtime.Result, st *host.AgentStats) {
		t.Helper()
		if got := string(res.AppendJSON(nil)); got != want {
			t.Errorf("%s: %s\nwant %s", what, got, want)
		}
		if st.Ticks != stats.Ticks || *st.TraceHash != *stats.TraceHash || st.Input != stats.Input || st.Output != stats.Output {
			t.Errorf("%s: %d ticks, hashes %x %x %x; the recorded run: %d, %x %x %x", what,
				st.Ticks, *st.TraceHash, st.Input, st.Output, stats.Ticks, *stats.TraceHash, stats.Input, stats.Output)
		}
	}
	text := j.Bytes()
	for range 5 {
		rj, err := runtime.ReadJournal(text)
		if err != nil {
			t.Fatal(err)
		}
		none := &slowLLM{rnd: rand.New(rand.NewSource(2)), maxDelay: time.Millisecond}
		res, st, _ := run(none, rj, runtime.JournalReplay)
		same("replay", res, st)
		if none.calls.Load() != 0 {
			t.Errorf("the replay called the model %d times", none.calls.Load())
		}
	}
	// Keep the header and the calls of branches a, c and e.
	var part []string
	for i, line := range strings.SplitAfter(string(text), "\n") {
		if i == 0 || strings.Contains(line, ` # 1/0 > `) || strings.Contains(line, ` # 1/2 > `) || strings.Contains(line, ` # 1/4 > `) {
			part = append(part, line)
		}
	}
	if len(part) != 4 {
		t.Fatalf("the journal has not the lines of branches a, c and e:\n%s", text)
	}
	for i := range 5 {
		rj, err := runtime.ReadJournal([]byte(strings.Join(part, "")))
		if err != nil {
			t.Fatal(err)
		}
		rest := &slowLLM{rnd: rand.New(rand.NewSource(int64(i))), maxDelay: 2 * time.Millisecond}
		res, st, _ := run(rest, rj, runtime.JournalResume)
		same("resumed", res, st)
		if rest.calls.Load() != 4 {
			t.Errorf("the resumed run made %d calls, want the 4 its journal lacks", rest.calls.Load())
		}
	}
}

// eightProg is a block of eight model calls.
const eightProg = `{"name": "eight", "steps": [
  {"id": "fan", "type": "parallel", "parallel_steps": [
    {"id": "a", "type": "llm", "prompt": "a"}, {"id": "b", "type": "llm", "prompt": "b"},
    {"id": "c", "type": "llm", "prompt": "c"}, {"id": "d", "type": "llm", "prompt": "d"},
    {"id": "e", "type": "llm", "prompt": "e"}, {"id": "f", "type": "llm", "prompt": "f"},
    {"id": "g", "type": "llm", "prompt": "g"}, {"id": "h", "type": "llm", "prompt": "h"}]}
]}`

// BenchmarkParallelBlock runs a block of eight model calls that each
// take 50 ms, its branches one at a time and at once (make bench does
// not run it; go test -bench ParallelBlock ./forge/host does).
func BenchmarkParallelBlock(b *testing.B) {
	a := buildAgent(b, "eight.json", eightProg)
	for _, seq := range []bool{true, false} {
		name := "concurrent"
		if seq {
			name = "sequential"
		}
		b.Run(name, func(b *testing.B) {
			h := runtime.NewHost(runtime.Config{LLM: &slowLLM{fixed: 50 * time.Millisecond}})
			for b.Loop() {
				res, _ := a.Run(h, runtime.RunOptions{}, host.AgentOptions{Limits: a.AgentLimits(), Sequential: seq})
				if res.Status != runtime.StatusSuccess {
					b.Fatal(string(res.AppendJSON(nil)))
				}
			}
		})
	}
}

// TestParallelOutOfTicksInBlock: a budget that the block's branches
// together pass, though each fits in what was left at the block's start,
// stops the run budget_exceeded (limit.ticks) after every branch ran to
// its end, with every tick of the budget used and a message that says
// the block's branches did it.
func TestParallelOutOfTicksInBlock(t *testing.T) {
	a := buildAgent(t, "fan.json", fanProg)
	topic := runtime.Object(runtime.Field{Key: "topic", Value: runtime.String("owls")})
	full := runAgent(t, a, &slowLLM{}, runtime.Config{}, topic, host.AgentOptions{Limits: a.AgentLimits()})
	found := 0
	for n := full.Ticks / 50; n < full.Ticks; n += full.Ticks / 50 {
		lim := a.AgentLimits()
		lim.Ticks = n
		o := runAgent(t, a, &slowLLM{}, runtime.Config{}, topic, host.AgentOptions{Limits: lim})
		if !strings.Contains(o.Result, "the branches of the parallel block") {
			continue
		}
		found++
		if !strings.Contains(o.Result, `"steps":["fan","a","b","c","d","e","g"]`) || !strings.Contains(o.Result, `"kind":"limit.ticks"`) || o.Ticks != n {
			t.Errorf("%d ticks: %d used, %s", n, o.Ticks, o.Result)
		}
	}
	if found == 0 {
		t.Errorf("no budget below %d ran out inside the block", full.Ticks)
	}
}
