package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/genesis-toolchain/genesis/backend/golang"
	"github.com/genesis-toolchain/genesis/compiler"
	"github.com/genesis-toolchain/genesis/internal/filetest"
	"github.com/genesis-toolchain/genesis/internal/golden"
)

// The agent run cases (tests/agent/*.txtar, the VVM programs'
// tests/vvm/run/*.txtar and the Grimoire spells' tests/grimoire/run/*.txtar)
// compile a program through the Go backend and run it with genesisc run
// and mock effects. A case opens with its header (docs/testing.md):
//
//	test run         run it: out/result is the run's result JSON
//	test trace       out/trace, the run's trace (deterministic: the clock
//	                 is virtual)
//	test journal     out/journal, the run's journal: every effect's
//	                 request and reply (the run id replaced by RUN-ID)
//	test narration   optional, with --narrate: out/narration, what it printed
//	target go forge  the hosts it runs on: go, genesisc run's Go build, and
//	                 forge, the Forge Machine (genesisc run --target forge),
//	                 whose exit status, result, trace, journal and
//	                 standard error must be go's, byte for byte
//	args FLAG...     optional: genesisc run's extra flags
//	exit N           the exit status the run must end with
//
// and has these sections:
//
//	prog.json | prog.yaml | prog.vvm | prog.spell | prog.ir   the program
//	other files             modules the program imports (lib/x.vvm)
//	llm.json, tools.json    the mock LLM and tools (docs/runtime.md)
//	out/result, out/trace, out/journal, out/narration   as declared
//
// Each distinct program is built with the Go toolchain once, into a cache
// shared by the tests.

// useRunCache points genesisc run's cache at the directory TestMain made
// for the tests of this process.
func useRunCache(t testing.TB) {
	t.Helper()
	if runCache == "" {
		t.Fatal("no run cache")
	}
	t.Setenv("GENESIS_CACHE", runCache)
}

var runCache string

// TestMain makes the run cache shared by the tests of this process (each
// distinct program is built once) and removes it at the end.
//
// With GENESISC_TEST_MAIN=1 the test binary is genesisc itself (tests
// that signal a genesisc process run it so).
func TestMain(m *testing.M) {
	if os.Getenv("GENESISC_TEST_MAIN") == "1" {
		os.Exit(run(os.Args, os.Stdout, os.Stderr))
	}
	if os.Getenv("GENESISC_TEST_MCP") == "1" {
		os.Exit(mcpServerMain())
	}
	dir, err := os.MkdirTemp("", "genesis-run-cache-")
	if err != nil {
		panic(err)
	}
	runCache = dir
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

var runIDField = regexp.MustCompile(`"run":"[0-9a-f]{32}"`)

// agentRun is what one run of a case left: its exit status, result,
// standard error, trace and journal.
type agentRun struct {
	code                           int
	result, stderr, trace, journal string
}

// agentSuite runs the agent run cases.
var agentSuite = filetest.Suite{
	Checks: map[string]filetest.Check{
		"run":       checkAgentRun,
		"trace":     checkAgentOutput,
		"journal":   checkAgentOutput,
		"narration": checkAgentOutput,
	},
	Targets: []string{"go", "forge"},
	Outputs: map[string][]string{
		"run":       {"out/result"},
		"trace":     {"out/trace"},
		"journal":   {"out/journal"},
		"narration": {"out/narration"},
	},
}

func TestAgentRuns(t *testing.T) {
	if testing.Short() {
		t.Skip("builds Go programs")
	}
	useRunCache(t)
	t.Run("agent", func(t *testing.T) { filetest.Run(t, "../../tests/agent/*.txtar", agentSuite) })
	t.Run("vvm", func(t *testing.T) { filetest.Run(t, "../../tests/vvm/run/*.txtar", agentSuite) })
	t.Run("grimoire", func(t *testing.T) { filetest.Run(t, "../../tests/grimoire/run/*.txtar", agentSuite) })
}

// checkAgentRun runs the case's program with genesisc run on each host
// its header names, with a trace and a journal, and checks the exit
// status and the result of go, and that forge gives what go gives.
func checkAgentRun(t *testing.T, c *filetest.Case, d filetest.Directive) {
	if len(d.Args) != 0 || !c.HasExit || !c.On("go") {
		t.Fatalf("test %s: a run takes no arguments and needs an exit line and \"target go\"", d)
	}
	dir := t.TempDir()
	prog := ""
	for _, f := range c.Archive.Files {
		if strings.HasPrefix(f.Name, "out/") {
			continue
		}
		if strings.HasPrefix(f.Name, "prog.") {
			prog = filepath.Join(dir, f.Name)
		}
		path := filepath.Join(dir, filepath.FromSlash(f.Name))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, f.Data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, mock := range []string{"llm.json", "tools.json"} {
		if _, ok := c.File(mock); !ok {
			if err := os.WriteFile(filepath.Join(dir, mock), []byte("{}"), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	if prog == "" {
		t.Fatal("a run case needs a prog.* section")
	}
	r := runAgentCase(t, c, dir, prog, "go")
	c.State = r
	c.Check("out/result", r.result)
	if c.On("forge") {
		// The same program on the Forge Machine: the same exit status,
		// result, trace, journal and narration, byte for byte.
		f := runAgentCase(t, c, dir, prog, "forge")
		for _, d := range []struct{ what, goes, forge string }{
			{"exit status", strconv.Itoa(r.code), strconv.Itoa(f.code)},
			{"result", r.result, f.result},
			{"trace", r.trace, f.trace},
			{"journal", r.journal, f.journal},
			{"standard error", withoutBuildLines(r.stderr), f.stderr},
		} {
			if diff := cmp.Diff(d.goes, d.forge); diff != "" {
				t.Errorf("on forge, the %s differs from go's (-go +forge):\n%s", d.what, diff)
			}
		}
	}
}

// runAgentCase runs the case's program prog, written in dir, with
// genesisc run --target target, a trace and a journal.
func runAgentCase(t *testing.T, c *filetest.Case, dir, prog, target string) *agentRun {
	t.Helper()
	result := filepath.Join(dir, target+"-result.json")
	trace := filepath.Join(dir, target+"-trace.jsonl")
	journal := filepath.Join(dir, target+"-journal.jsonl")
	args := []string{"genesisc", "run", "--target", target, "--llm", "mock:" + filepath.Join(dir, "llm.json"),
		"--tools", "mock:" + filepath.Join(dir, "tools.json"), "--result", result,
		"--trace", trace, "--journal", journal}
	args = append(append(args, c.Args...), prog)
	var stdout, stderr bytes.Buffer
	r := &agentRun{code: run(args, &stdout, &stderr), stderr: stderr.String()}
	if r.code != c.Exit {
		t.Errorf("%s: exit %d, want %d\n%s", target, r.code, c.Exit, r.stderr)
	}
	data, err := os.ReadFile(result)
	if err != nil {
		t.Fatalf("%s: no result: %v\n%s", target, err, r.stderr)
	}
	r.result = string(data)
	data, err = os.ReadFile(trace)
	if err != nil {
		t.Fatalf("%s: no trace: %v\n%s", target, err, r.stderr)
	}
	r.trace = string(data)
	data, err = os.ReadFile(journal)
	if err != nil {
		t.Fatalf("%s: no journal: %v\n%s", target, err, r.stderr)
	}
	// The run id is random: every journal has its own.
	r.journal = canonicalJournal(runIDField.ReplaceAllString(string(data), `"run":"RUN-ID"`))
	return r
}

// canonicalJournal orders a journal's entries so that a run gives the
// same text every time. The branches of a parallel block journal their
// effects as they complete, in an order the scheduler picks (the trace
// is in branch order already); a run resumes from a journal by step
// identity, not by position, so the order of one block's entries is
// not part of what the journal says. Each maximal run of entries of one
// block (steps "BLOCK/N > ...", "BLOCK # I/N > ...") is sorted, stably,
// by the branch path of each entry (the step up to its last " > "):
// entries of one branch keep their order.
func canonicalJournal(s string) string {
	lines := strings.SplitAfter(s, "\n")
	steps := make([]string, len(lines))
	for i, l := range lines {
		var e struct {
			Step string `json:"step"`
		}
		if json.Unmarshal([]byte(l), &e) == nil {
			steps[i] = e.Step
		}
	}
	block := func(step string) string {
		head, _, ok := strings.Cut(step, " > ")
		if !ok {
			return ""
		}
		if k := strings.LastIndex(head, "/"); k >= 0 {
			return head[:k]
		}
		return ""
	}
	branch := func(step string) string {
		return step[:strings.LastIndex(step, " > ")]
	}
	for i := 0; i < len(lines); {
		b := block(steps[i])
		j := i + 1
		if b != "" {
			for j < len(lines) && block(steps[j]) == b {
				j++
			}
			idx := make([]int, j-i)
			for k := range idx {
				idx[k] = i + k
			}
			sort.SliceStable(idx, func(x, y int) bool { return branch(steps[idx[x]]) < branch(steps[idx[y]]) })
			sorted := make([]string, len(idx))
			for k, n := range idx {
				sorted[k] = lines[n]
			}
			copy(lines[i:j], sorted)
		}
		i = j
	}
	return strings.Join(lines, "")
}

// checkAgentOutput pins one more output of the run "test run" made.
func checkAgentOutput(t *testing.T, c *filetest.Case, d filetest.Directive) {
	r, ok := c.State.(*agentRun)
	if !ok {
		t.Fatalf("test %s: needs a \"test run\" line before it", d)
	}
	if len(d.Args) != 0 {
		t.Fatalf("test %s: takes no arguments", d)
	}
	switch d.Name {
	case "trace":
		c.Check("out/trace", r.trace)
	case "journal":
		c.Check("out/journal", r.journal)
	case "narration":
		c.Check("out/narration", withoutBuildLines(r.stderr))
	}
}

// withoutBuildLines drops the lines genesisc run prints while it builds a
// program (the first run of a program in the test cache builds it).
func withoutBuildLines(s string) string {
	lines := strings.SplitAfter(s, "\n")
	out := lines[:0]
	for _, l := range lines {
		if !strings.HasPrefix(l, "genesisc: building ") && !strings.HasPrefix(l, "genesisc: built ") {
			out = append(out, l)
		}
	}
	return strings.Join(out, "")
}

// TestRunCached: a program is built once; later runs of it take the
// binary from the cache and never call the Go toolchain. GENESIS_GO then
// names a program that does not exist, so a build would fail, as it does
// for a program the cache has not seen. How long a cached run takes is
// measured, not tested: BenchmarkRunCached.
func TestRunCached(t *testing.T) {
	if testing.Short() {
		t.Skip("builds Go programs")
	}
	useRunCache(t)
	dir := t.TempDir()
	prog := filepath.Join(dir, "p.json")
	os.WriteFile(prog, []byte(`{"steps": [{"id": "say", "type": "llm", "prompt": "hi"}]}`), 0o644)
	os.WriteFile(filepath.Join(dir, "llm.json"), []byte(`{"__default__": "hello"}`), 0o644)
	args := []string{"genesisc", "run", "--llm", "mock:" + filepath.Join(dir, "llm.json"), prog}
	var out, errs bytes.Buffer
	if code := run(args, &out, &errs); code != 0 {
		t.Fatalf("exit %d: %s", code, errs.String())
	}
	t.Setenv("GENESIS_GO", filepath.Join(dir, "no-go-toolchain"))
	for range 2 {
		out.Reset()
		errs.Reset()
		if code := run(args, &out, &errs); code != 0 {
			t.Fatalf("a cached run: exit %d: %s", code, errs.String())
		}
		if !strings.Contains(out.String(), `"output":"hello"`) {
			t.Errorf("result %s", out.String())
		}
	}
	// A program the cache has not seen needs the toolchain.
	other := filepath.Join(dir, "q.json")
	os.WriteFile(other, []byte(`{"steps": [{"id": "greet", "type": "llm", "prompt": "hello"}]}`), 0o644)
	errs.Reset()
	if code := run(append(args[:len(args)-1:len(args)-1], other), &out, &errs); code == 0 || !strings.Contains(errs.String(), "no-go-toolchain") {
		t.Errorf("a new program built without a Go toolchain: exit %d, %s", code, errs.String())
	}
}

// BenchmarkRunCached times genesisc run of a program already in the
// cache: starting it, loading the binary and running one mock LLM step.
func BenchmarkRunCached(b *testing.B) {
	useRunCache(b)
	dir := b.TempDir()
	prog := filepath.Join(dir, "p.json")
	os.WriteFile(prog, []byte(`{"steps": [{"id": "say", "type": "llm", "prompt": "hi"}]}`), 0o644)
	os.WriteFile(filepath.Join(dir, "llm.json"), []byte(`{"__default__": "hello"}`), 0o644)
	args := []string{"genesisc", "run", "--llm", "mock:" + filepath.Join(dir, "llm.json"), prog}
	var out, errs bytes.Buffer
	if code := run(args, &out, &errs); code != 0 { // builds it into the cache
		b.Fatalf("exit %d: %s", code, errs.String())
	}
	for b.Loop() {
		out.Reset()
		if code := run(args, &out, &errs); code != 0 {
			b.Fatalf("exit %d: %s", code, errs.String())
		}
	}
}

// TestSuspendResume runs a program whose tool answers PENDING: the run
// suspends (exit 3) with its journal, and resuming it with the webhook's
// payload finishes it without calling the tool again.
func TestSuspendResume(t *testing.T) {
	if testing.Short() {
		t.Skip("builds Go programs")
	}
	useRunCache(t)
	c, err := golden.Load("../../tests/agent/pending_suspends.txtar")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for _, f := range c.Archive.Files {
		os.WriteFile(filepath.Join(dir, f.Name), f.Data, 0o644)
	}
	journal := filepath.Join(dir, "run.journal")
	common := []string{"genesisc", "run", "--llm", "mock:" + filepath.Join(dir, "llm.json"),
		"--tools", "mock:" + filepath.Join(dir, "tools.json"), "--journal", journal}
	var out, errs bytes.Buffer
	if code := run(append(append([]string{}, common...), "--input", "order_id=o-1", filepath.Join(dir, "prog.json")), &out, &errs); code != 3 {
		t.Fatalf("first run: exit %d, want 3 (suspended)\n%s%s", code, out.String(), errs.String())
	}
	out.Reset()
	args := append(append([]string{}, common...), "--resume", "--payload", `{"status": "paid"}`, "--source", "WEBHOOK",
		"--input", "order_id=o-1", filepath.Join(dir, "prog.json"))
	if code := run(args, &out, &errs); code != 0 {
		t.Fatalf("resumed run: exit %d\n%s%s", code, out.String(), errs.String())
	}
	if !strings.Contains(out.String(), `"status":"success"`) || !strings.Contains(out.String(), `"shipped"`) {
		t.Errorf("resumed result: %s", out.String())
	}
}

// TestCrashResume kills a run with SIGKILL while a subprocess tool is in
// its second call, resumes it from the journal and checks that no
// completed tool call ran twice: the log of the tool shows the first call
// once, the interrupted one twice (it never completed), the last once.
func TestCrashResume(t *testing.T) {
	if testing.Short() {
		t.Skip("builds Go programs")
	}
	useRunCache(t)
	dir := t.TempDir()
	prog := filepath.Join(dir, "p.json")
	os.WriteFile(prog, []byte(`{"steps": [
  {"id": "one", "type": "tool", "tool": "first"},
  {"id": "two", "type": "tool", "tool": "second"},
  {"id": "three", "type": "tool", "tool": "third"}
]}`), 0o644)
	logFile := filepath.Join(dir, "calls.log")
	block := filepath.Join(dir, "block")
	os.WriteFile(block, nil, 0o644)
	// The tool logs each call; the second call hangs while the block file
	// exists, so the test can kill the run in the middle of it.
	tool := filepath.Join(dir, "tool.sh")
	os.WriteFile(tool, []byte(`#!/bin/sh
req=$(cat)
name=$(printf '%s' "$req" | sed 's/.*"tool":"\([a-z]*\)".*/\1/')
echo "$name" >> `+logFile+`
if [ "$name" = second ]; then
  while [ -e `+block+` ]; do sleep 0.05; done
fi
echo '{"done": "'"$name"'"}'
`), 0o755)

	var errs bytes.Buffer
	out, err := compileForRun(t, prog)
	if err != nil {
		t.Fatal(err)
	}
	bin, err := cachedBinary(out, &errs)
	if err != nil {
		t.Fatal(err)
	}
	journal := filepath.Join(dir, "run.journal")
	cmd := exec.Command(bin, "--tools", "exec:"+tool, "--journal", journal)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		data, _ := os.ReadFile(logFile)
		if strings.Contains(string(data), "second") {
			break
		}
		if time.Now().After(deadline) {
			syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			t.Fatalf("the second call never started; log %q", data)
		}
		time.Sleep(20 * time.Millisecond)
	}
	syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) // the run and its tool
	cmd.Wait()
	os.Remove(block)

	resumed := exec.Command(bin, "--tools", "exec:"+tool, "--journal", journal, "--resume")
	res, err := resumed.CombinedOutput()
	if err != nil {
		t.Fatalf("resume: %v\n%s", err, res)
	}
	if !strings.Contains(string(res), `"status":"success"`) || !strings.Contains(string(res), `"done":"third"`) {
		t.Errorf("resumed result: %s", res)
	}
	data, _ := os.ReadFile(logFile)
	if got, want := strings.Fields(string(data)), []string{"first", "second", "second", "third"}; strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("tool calls %v, want %v: a completed call ran again, or one is missing", got, want)
	}
}

// compileForRun compiles a program as genesisc run does.
func compileForRun(t *testing.T, file string) ([]golang.File, error) {
	srcs, diags := compiler.ReadSources([]string{file})
	if diags.HasErrors() {
		return nil, diags
	}
	out, diags := compiler.Build(srcs, compiler.Options{Target: "go", GoMain: true, OptLevel: 2})
	if diags.HasErrors() {
		return nil, diags
	}
	return out.Files, nil
}

// TestPlanGroupsConcurrent: independent groups of a plan run at the same
// time. Each of two groups fetches a contract source with a subprocess
// tool that announces itself and then waits for the other group's call:
// run one after the other, the first call would give up and fail its
// group. The group that depends on both runs after them.
func TestPlanGroupsConcurrent(t *testing.T) {
	if testing.Short() {
		t.Skip("builds Go programs")
	}
	useRunCache(t)
	dir := t.TempDir()
	prog := filepath.Join(dir, "plan.json")
	os.WriteFile(prog, []byte(`{"groups": [
  {"id": "left", "operations": ["read left"], "contracts": [["1", "0x1111111111111111111111111111111111111111", "L"]]},
  {"id": "right", "operations": ["read right"], "contracts": [["1", "0x2222222222222222222222222222222222222222", "R"]]},
  {"id": "join", "dependencies": ["left", "right"], "operations": ["join both"]}
]}`), 0o644)
	tool := filepath.Join(dir, "tool.sh")
	os.WriteFile(tool, []byte(`#!/bin/sh
read line
case "$line" in *0x1111*) me=left; other=right;; *) me=right; other=left;; esac
touch `+dir+`/$me
i=0
while [ ! -e `+dir+`/$other ]; do
  i=$((i+1))
  if [ $i -gt 200 ]; then echo '{"$error": {"kind": "tool", "message": "'$me' ran alone"}}'; exit 0; fi
  sleep 0.05
done
echo '{"abi": "'$me'"}'
`), 0o755)
	llm := filepath.Join(dir, "llm.json")
	os.WriteFile(llm, []byte(`{"__default__": "ok"}`), 0o644)
	result := filepath.Join(dir, "result.json")
	var stdout, stderr bytes.Buffer
	code := run([]string{"genesisc", "run", "--llm", "mock:" + llm, "--tools", "exec:" + tool, "--result", result, prog}, &stdout, &stderr)
	data, _ := os.ReadFile(result)
	if code != 0 || !strings.Contains(string(data), `"statuses":{"left":"Done","right":"Done","join":"Done"}`) {
		t.Fatalf("exit %d: %s\n%s", code, data, stderr.String())
	}
}

// TestCanonicalJournal: the entries of one parallel block come out in
// branch order whatever order they completed in; other entries, and the
// order within a branch, stay.
func TestCanonicalJournal(t *testing.T) {
	entry := func(step string) string { return `{"step":"` + step + `","effect":"tool"}` + "\n" }
	head := `{"format":"genesis-journal","version":1,"program":"p","run":"RUN-ID"}` + "\n"
	a := []string{entry("one @ p:1:1"), entry("pm @ p:2:1/0 > t @ p:3:1"), entry("pm @ p:2:1/0 > u @ p:4:1")}
	b := []string{entry("pm @ p:2:1/1 > t @ p:3:1")}
	c := []string{entry("pm @ p:2:1/2 > t @ p:3:1"), entry("last @ p:5:1"), `{"end":"success"}` + "\n"}
	want := head + strings.Join(a, "") + strings.Join(b, "") + strings.Join(c, "")
	shuffled := head + a[0] + c[0] + a[1] + b[0] + a[2] + c[1] + c[2]
	if got := canonicalJournal(shuffled); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	if got := canonicalJournal(want); got != want {
		t.Errorf("a journal in branch order changed:\n%s", got)
	}
}
