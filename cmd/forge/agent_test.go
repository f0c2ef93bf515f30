package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/genesis-toolchain/genesis/compiler"
	"github.com/genesis-toolchain/genesis/forge/host"
	"github.com/genesis-toolchain/genesis/ir/opt"
	"github.com/genesis-toolchain/genesis/runtime"
)

// buildAgent compiles the agent program src (named name) for the Forge
// Machine into dir and returns the .frgp's path.
func buildAgent(t *testing.T, dir, name, src string) string {
	t.Helper()
	out, diags := compiler.Build([]compiler.Source{{Name: name, Data: []byte(src)}}, compiler.Options{Target: "forge", OptLevel: opt.MaxLevel})
	if diags.HasErrors() {
		t.Fatalf("build %s: %v", name, diags)
	}
	path := filepath.Join(dir, strings.TrimSuffix(name, filepath.Ext(name))+".frgp")
	if err := os.WriteFile(path, out.Program.Encode(), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// forgeCmd runs the forge command with args and returns its exit status,
// standard output and standard error.
func forgeCmd(args ...string) (int, string, string) {
	var stdout, stderr bytes.Buffer
	code := run(append([]string{"forge"}, args...), strings.NewReader(""), &stdout, &stderr)
	return code, stdout.String(), stderr.String()
}

func writeTestFile(t *testing.T, path, text string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

const refundProgram = `{
  "name": "customer_refund",
  "steps": [
    {"id": "analyze", "type": "llm",
     "prompt": "Is this a valid refund request? Reply 'yes' or 'no'.\nRequest: $user_input",
     "output_key": "decision", "allowed_outputs": ["yes", "no"]},
    {"id": "guardrail", "type": "condition", "condition": "$decision == \"yes\"",
     "then": "process_refund", "otherwise": "reject"},
    {"id": "process_refund", "type": "tool", "tool": "issue_refund", "is_terminal": true},
    {"id": "reject", "type": "tool", "tool": "send_rejection", "is_terminal": true}
  ]
}`

// TestAgentExecProofReplay runs an agent program with forge exec, with a
// journal and a proof, checks the proof (valid with the run's input,
// invalid with another), replays the run from its journal, and runs it
// under limits that stop it.
func TestAgentExecProofReplay(t *testing.T) {
	dir := t.TempDir()
	prog := buildAgent(t, dir, "refund.json", refundProgram)
	llm, tools := filepath.Join(dir, "llm.json"), filepath.Join(dir, "tools.json")
	writeTestFile(t, llm, `{"__default__": "yes"}`)
	writeTestFile(t, tools, `{"issue_refund": {"refunded": true}, "send_rejection": "sent"}`)
	key, journal, proofFile := filepath.Join(dir, "key"), filepath.Join(dir, "run.journal"), filepath.Join(dir, "run.proof")
	if code, _, stderr := forgeCmd("keygen", "-o", key); code != 0 {
		t.Fatalf("keygen: exit %d: %s", code, stderr)
	}
	providers := []string{"--llm", "mock:" + llm, "--tools", "mock:" + tools}
	input := []string{"--input", "user_input=I bought it yesterday"}
	args := append(append(append([]string{"exec"}, providers...), input...), "--journal", journal, "--proof", proofFile, "--key", key, prog)
	code, stdout, stderr := forgeCmd(args...)
	const want = `{"status":"success","steps":["analyze","guardrail","process_refund"],"output":{"refunded":true}`
	if code != 0 || !strings.HasPrefix(stdout, want) {
		t.Fatalf("exec: exit %d\n%s%s", code, stdout, stderr)
	}

	code, stdout, stderr = forgeCmd(append(append([]string{"check-proof", "--proof", proofFile, "--journal", journal}, input...), prog)...)
	if code != 0 || !strings.Contains(stdout, "valid proof: the run ended success") {
		t.Errorf("check-proof: exit %d\n%s%s", code, stdout, stderr)
	}
	code, _, stderr = forgeCmd("check-proof", "--proof", proofFile, "--journal", journal, "--input", "user_input=something else", prog)
	if code != 1 || !strings.Contains(stderr, "the input differs") {
		t.Errorf("check-proof with another input: exit %d, want 1 and the input named\n%s", code, stderr)
	}

	// A replay calls no provider: none is given.
	code, stdout, stderr = forgeCmd(append(append([]string{"replay", "--journal", journal}, input...), prog)...)
	if code != 0 || !strings.HasPrefix(stdout, want) {
		t.Errorf("replay: exit %d\n%s%s", code, stdout, stderr)
	}

	// The machine's limits end the run with a result that says which.
	for _, tc := range []struct {
		flags []string
		kind  string
	}{
		{[]string{"--ticks", "50"}, `"kind":"limit.ticks"`},
		{[]string{"--memory", "1K"}, `"kind":"limit.memory"`},
	} {
		args := append(append(append(append([]string{"exec"}, providers...), input...), tc.flags...), prog)
		code, stdout, stderr := forgeCmd(args...)
		if code != 1 || !strings.Contains(stdout, `"status":"budget_exceeded"`) || !strings.Contains(stdout, tc.kind) {
			t.Errorf("exec %v: exit %d, want 1 and budget_exceeded with %s\n%s%s", tc.flags, code, tc.kind, stdout, stderr)
		}
	}
	if code, _, stderr := forgeCmd(append(append([]string{"exec", "--grant", "6"}, providers...), prog)...); code != 2 || !strings.Contains(stderr, "agent ABI") {
		t.Errorf("exec --grant of an agent program: exit %d, want 2\n%s", code, stderr)
	}
}

// TestAgentSuspendResume: a nano-vm tool that answers PENDING suspends
// the run on the Forge Machine (exit 3), and --resume with the webhook's
// payload finishes it from the journal, as on the go target.
func TestAgentSuspendResume(t *testing.T) {
	dir := t.TempDir()
	prog := buildAgent(t, dir, "payment.json", `{
  "name": "payment",
  "steps": [
    {"id": "pay", "type": "tool", "tool": "initiate_payment", "args": {"order": "$order_id"}, "next_step": "check"},
    {"id": "check", "type": "condition", "condition": "$__webhook__.status == 'paid'", "then": "ship", "otherwise": "refund"},
    {"id": "ship", "type": "tool", "tool": "ship", "is_terminal": true},
    {"id": "refund", "type": "tool", "tool": "refund", "is_terminal": true}
  ]
}`)
	tools, journal := filepath.Join(dir, "tools.json"), filepath.Join(dir, "run.journal")
	writeTestFile(t, tools, `{"initiate_payment": "PENDING", "ship": "shipped", "refund": "refunded"}`)
	common := []string{"exec", "--tools", "mock:" + tools, "--journal", journal, "--input", "order_id=o-1"}
	key, proofFile := filepath.Join(dir, "key"), filepath.Join(dir, "suspended.proof")
	if code, _, stderr := forgeCmd("keygen", "-o", key); code != 0 {
		t.Fatalf("keygen: exit %d: %s", code, stderr)
	}
	if code, stdout, stderr := forgeCmd(append(common, "--proof", proofFile, "--key", key, prog)...); code != 3 || !strings.Contains(stdout, `"status":"suspended"`) {
		t.Fatalf("first run: exit %d, want 3 (suspended)\n%s%s", code, stdout, stderr)
	}
	// A run that ended suspended, its machine waiting, is proven too.
	if code, stdout, stderr := forgeCmd("check-proof", "--proof", proofFile, "--journal", journal, "--input", "order_id=o-1", prog); code != 0 || !strings.Contains(stdout, "the run ended suspended") {
		t.Errorf("check-proof of the suspended run: exit %d\n%s%s", code, stdout, stderr)
	}
	code, stdout, stderr := forgeCmd(append(common, "--resume", "--payload", `{"status": "paid"}`, prog)...)
	if code != 0 || !strings.Contains(stdout, `"status":"success"`) || !strings.Contains(stdout, `"shipped"`) {
		t.Errorf("resumed run: exit %d\n%s%s", code, stdout, stderr)
	}
}

// loadRefund compiles examples/refund.json for the Forge Machine and
// returns it loaded, with a host of the example's mock effects.
func loadRefund(t testing.TB) (*host.Agent, *runtime.Host) {
	src, err := os.ReadFile("../../examples/refund.json")
	if err != nil {
		t.Fatal(err)
	}
	out, diags := compiler.Build([]compiler.Source{{Name: "refund.json", Data: src}}, compiler.Options{Target: "forge", OptLevel: opt.MaxLevel})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	a, err := host.LoadAgent(out.Program)
	if err != nil {
		t.Fatal(err)
	}
	llm, err := runtime.ParseLLM("mock:../../examples/refund.llm.json")
	if err != nil {
		t.Fatal(err)
	}
	tools, err := runtime.ParseTools("mock:../../examples/refund.tools.json")
	if err != nil {
		t.Fatal(err)
	}
	return a, runtime.NewHost(runtime.Config{LLM: llm, Tools: []runtime.ToolProvider{tools}})
}

// TestAgentRunsAgain: the runs after the first reuse the first's machine
// and value store (forge exec --repeat), and end as the first did, with
// the same ticks, whatever the input of the run before.
func TestAgentRunsAgain(t *testing.T) {
	a, h := loadRefund(t)
	opts := host.AgentOptions{Limits: a.AgentLimits()}
	type outcome struct {
		result string
		ticks  uint64
	}
	runOnce := func(in string) outcome {
		input := runtime.Object(runtime.Field{Key: "user_input", Value: runtime.String(in)})
		res, stats := a.Run(h, runtime.RunOptions{Input: input}, opts)
		return outcome{string(res.AppendJSON(nil)), stats.Ticks}
	}
	first, other := runOnce("I want a refund"), runOnce("I broke it")
	for i := range 3 {
		if again := runOnce("I want a refund"); again != first {
			t.Fatalf("run %d: %+v, the first run: %+v", i+2, again, first)
		}
		if again := runOnce("I broke it"); again != other {
			t.Fatalf("run %d: %+v, the first run: %+v", i+2, again, other)
		}
	}
}

// BenchmarkAgentRefund runs the refund program of examples/ on the Forge
// Machine with mock effects, one run per iteration, in one process (what
// forge exec --repeat does): issue 16 asks for at least 70,000 runs per
// CPU second.
func BenchmarkAgentRefund(b *testing.B) {
	a, h := loadRefund(b)
	input := runtime.Object(runtime.Field{Key: "user_input", Value: runtime.String("I want a refund")})
	opts := host.AgentOptions{Limits: a.AgentLimits()}
	for b.Loop() {
		res, _ := a.Run(h, runtime.RunOptions{Input: input}, opts)
		if res.Status != runtime.StatusSuccess {
			b.Fatalf("status %s: %v", res.Status, res.Error)
		}
	}
}
