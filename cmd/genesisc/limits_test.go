package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/genesis-toolchain/genesis/runtime"
)

// runawayVVM loops for ever in each mode of its input: with an agent and
// a judge that never approves, without any effect, doubling a string,
// recursing without end, growing the heap by many small lists, growing
// one list.
const runawayVVM = `# Runaway loops, one per input mode: each runs until a limit stops it.
agent writer(model="m", prompt="You write.")
input mode: "which runaway: agent, pure, string, recursion, heap or list"

def down(n):
  return down(n + 1)

if mode == "agent":
  done = false
  while not done:
    draft = @writer ` + "`Write a draft.`" + `()
    done = ?` + "`the draft is good`" + `(draft)
elif mode == "pure":
  n = 0
  while n >= 0:
    n = n + 1
elif mode == "string":
  s = "ab"
  while true:
    s = s + s
elif mode == "recursion":
  depth = down(0)
elif mode == "heap":
  rows = []
  while true:
    row = []
    i = 0
    while i < 1000:
      row = row + [i]
      i = i + 1
    rows = rows + [row]
else:
  xs = []
  while true:
    xs = xs + ["item"]
`

// runawayNanoVM polls for ever: the tool never says done (poll's
// next_step takes the branch target back to the check). Its own budget
// is 30 steps.
const runawayNanoVM = `{"name": "poller", "max_steps": 30, "steps": [
  {"id": "poll", "type": "tool", "tool": "poll_status", "output_key": "status", "next_step": "done"},
  {"id": "done", "type": "condition", "condition": "$status.state == 'done'", "then": "report", "otherwise": "poll"},
  {"id": "report", "type": "llm", "prompt": "Report"}
]}`

// runawaySpell loops up to a billion times: without effects when run
// by hand, quoting a price every time hourly.
const runawaySpell = `spell Spin
  venues:
    dex: @uniswap
  on manual:
    n = 0
    loop until n < 0 max 1000000000:
      n = n + 1
    emit never(n=n)
  on hourly:
    repeat 1000000000:
      q = dex.quote(1)
    emit never(q=q)
`

// TestRunLimits runs runaway programs of each language through genesisc
// run with small limits: each stops by itself with status
// budget_exceeded and the kind of the limit (or, when the program's own
// budget is lower, the program's), and exit status 1.
func TestRunLimits(t *testing.T) {
	if testing.Short() {
		t.Skip("builds Go programs")
	}
	useRunCache(t)
	dir := t.TempDir()
	files := map[string]string{
		"runaway.vvm": runawayVVM,
		"poll.json":   runawayNanoVM,
		"spin.spell":  runawaySpell,
		"llm.json":    `{"the draft is good": "false", "__default__": "a draft"}`,
		"tools.json":  `{"poll_status": {"state": "pending"}, "__default__": "0x1"}`,
	}
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct {
		name string
		args []string
		kind string
		msg  string // in the error's message
		step string // the error's step, "" for none
	}{
		{"vvm agent loop: the default step limit", []string{"--input", "mode=agent", "runaway.vvm"},
			"limit.steps", "the run has executed 100000 steps, the limit (--max-steps) is 100000", "writer @ runaway.vvm:11:13~50000"},
		{"vvm agent loop: tokens", []string{"--input", "mode=agent", "--max-tokens", "500", "runaway.vvm"},
			"limit.tokens", "the limit (--max-tokens) is 500", ""},
		{"vvm loop without effects: wall", []string{"--input", "mode=pure", "--max-wall", "300ms", "runaway.vvm"},
			"limit.wall", "the limit (--max-wall) is 300ms", "loop @ runaway.vvm:15:3"},
		{"vvm doubling string", []string{"--input", "mode=string", "--max-memory", "16MiB", "runaway.vvm"},
			"limit.memory", "a string of 8388608 bytes (joining strings) exceeds the largest value allowed, 4194304 bytes", ""},
		{"vvm growing list", []string{"--input", "mode=list", "--max-memory", "16MiB", "runaway.vvm"},
			"limit.memory", "a list of 104858 items", ""},
		{"vvm recursion without end", []string{"--input", "mode=recursion", "runaway.vvm"},
			"limit.depth", "the calls nest more than 10000 deep", ""},
		{"vvm growing heap", []string{"--input", "mode=heap", "--max-memory", "16MiB", "runaway.vvm"},
			"limit.memory", "the limit (--max-memory) is 16777216 bytes", ""},
		{"nano-vm: the limit is lower", []string{"--max-steps", "10", "poll.json"},
			"limit.steps", "the run has executed 10 steps", "poll @ poll.json:2:3 # 11"},
		{"nano-vm: its own budget is lower", []string{"poll.json"},
			"budget.steps", "max_steps=30 exceeded after 30 step(s)", ""},
		{"grimoire loop without effects: wall", []string{"--max-wall", "300ms", "spin.spell"},
			"limit.wall", "the limit (--max-wall) is 300ms", "loop @ spin.spell:6:26"},
		{"grimoire loop of tool calls: steps", []string{"--trigger", "hourly", "--max-steps", "100", "spin.spell"},
			"limit.steps", "the run has executed 100 steps", "dex.quote @ spin.spell:11:7 # 100"},
	} {
		t.Run(c.name, func(t *testing.T) {
			result := filepath.Join(t.TempDir(), "result.json")
			args := append([]string{"genesisc", "run", "--llm", "mock:" + filepath.Join(dir, "llm.json"),
				"--tools", "mock:" + filepath.Join(dir, "tools.json"), "--result", result}, c.args...)
			args[len(args)-1] = filepath.Join(dir, args[len(args)-1])
			var stdout, stderr bytes.Buffer
			code := run(args, &stdout, &stderr)
			data, err := os.ReadFile(result)
			if err != nil {
				t.Fatalf("exit %d, no result: %v\n%s", code, err, stderr.String())
			}
			res, err := runtime.ParseResult(data)
			if err != nil {
				t.Fatal(err)
			}
			if code != 1 || res.Status != runtime.StatusBudgetExceeded || res.Error == nil || res.Error.Kind != c.kind || !strings.Contains(res.Error.Message, c.msg) {
				t.Fatalf("exit %d, result %s\nwant budget_exceeded, kind %s, message with %q", code, data, c.kind, c.msg)
			}
			if c.step != "" && res.Error.Step != c.step {
				t.Errorf("stopped at %q, want %q", res.Error.Step, c.step)
			}
		})
	}
}

// TestRunTraceLimit: a runaway loop's trace stops at --max-trace; the
// trace is whole lines and ends with run_completed naming the limit.
func TestRunTraceLimit(t *testing.T) {
	if testing.Short() {
		t.Skip("builds Go programs")
	}
	useRunCache(t)
	dir := t.TempDir()
	prog := filepath.Join(dir, "runaway.vvm")
	os.WriteFile(prog, []byte(runawayVVM), 0o644)
	llm := filepath.Join(dir, "llm.json")
	os.WriteFile(llm, []byte(`{"the draft is good": "false", "__default__": "a draft"}`), 0o644)
	trace := filepath.Join(dir, "trace.jsonl")
	var stdout, stderr bytes.Buffer
	code := run([]string{"genesisc", "run", "--llm", "mock:" + llm, "--input", "mode=agent", "--trace", trace, "--max-trace", "32KiB", prog}, &stdout, &stderr)
	if code != 1 || !strings.Contains(stdout.String(), `"kind":"limit.trace","message":"the trace has reached its limit (--max-trace) of 32768 bytes"`) {
		t.Fatalf("exit %d: %s\n%s", code, stdout.String(), stderr.String())
	}
	data, err := os.ReadFile(trace)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
	last := lines[len(lines)-1]
	if !strings.HasPrefix(last, `{"event":"run_completed"`) || !strings.Contains(last, `"status":"budget_exceeded"`) {
		t.Errorf("the trace ends with %s", last)
	}
	if n := len(data) - len(last) - 1; n > 32<<10 {
		t.Errorf("%d bytes of trace before run_completed, over the limit", n)
	}
	for i, l := range lines {
		if _, err := runtime.ParseJSON([]byte(l)); err != nil {
			t.Errorf("trace line %d is not JSON: %v", i+1, err)
		}
	}
}
