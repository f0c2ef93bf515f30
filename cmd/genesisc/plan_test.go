package main

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// The programs the mock model answers with in the plan tests.
const (
	planGood = `{"name": "refund", "steps": [
	  {"id": "classify", "type": "llm", "prompt": "Is this refund valid? $reason", "output_key": "decision", "allowed_outputs": ["yes", "no"]},
	  {"id": "route", "type": "condition", "condition": "$decision == 'yes'", "then": "approve", "otherwise": "reject"},
	  {"id": "approve", "type": "tool", "tool": "issue_refund", "args": {"order_id": "$order_id"}},
	  {"id": "reject", "type": "tool", "tool": "send_rejection", "args": {"order_id": "$order_id"}}]}`
	planNoPrompt = `{"name": "refund", "steps": [{"id": "classify", "type": "llm", "output_key": "decision"}]}`
)

// The first answer does not compile; the mock answers the fixed program
// only to a prompt that holds the diagnostic, so the program written
// proves the second request carried it.
func TestPlannerFixesAnError(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "llm.json", `{"refund.json:4:5: error[N002]: $.steps[0]: an llm step needs a \"prompt\"": `+planGood+`,
	  "__default__": `+planNoPrompt+`}`)
	code, stdout, stderr := genesisc(t, dir, "plan", "--llm", "mock:llm.json", "-o", "refund.json", "Refund an order", "when the reason is valid")
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	if stdout != "" {
		t.Errorf("stdout %q", stdout)
	}
	for _, want := range []string{
		"genesisc plan: attempt 1: 1 error, 0 warnings; ",
		"genesisc plan: attempt 2: compiles; ",
		" tokens (",
		"genesisc plan: wrote refund.json: the answer of attempt 2 of 2, which compiles; ",
	} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr does not contain %q:\n%s", want, stderr)
		}
	}
	if strings.Contains(stderr, "error[") {
		t.Errorf("the first attempt's diagnostics are printed without --verbose:\n%s", stderr)
	}
	data, err := os.ReadFile(filepath.Join(dir, "refund.json"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), `"tool": "send_rejection"`) || !strings.HasSuffix(string(data), "}\n") {
		t.Errorf("refund.json:\n%s", data)
	}
	if code, _, errs := genesisc(t, dir, "check", "refund.json"); code != 0 || errs != "" {
		t.Errorf("check refund.json: exit %d\n%s", code, errs)
	}
	// --verbose shows every attempt's diagnostics.
	_, _, stderr = genesisc(t, dir, "plan", "--verbose", "--llm", "mock:llm.json", "-o", "refund.json", "Refund an order")
	if !strings.Contains(stderr, "attempt 1: 1 error, 0 warnings;") || !strings.Contains(stderr, `error[N002]: $.steps[0]: an llm step needs a "prompt"`) {
		t.Errorf("--verbose:\n%s", stderr)
	}
}

// No answer compiles: nothing is written, exit 1, the last answer's
// diagnostics say why; --retries bounds the attempts.
func TestPlannerAllAttemptsFail(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "llm.json", `{"__default__": `+planNoPrompt+`}`)
	code, _, stderr := genesisc(t, dir, "plan", "--llm", "mock:llm.json", "-o", "out.json", "refund")
	if code != 1 {
		t.Fatalf("exit %d, want 1\n%s", code, stderr)
	}
	for _, want := range []string{
		"attempt 1: 1 error", "attempt 4: 1 error",
		`out.json:4:5: error[N002]: $.steps[0]: an llm step needs a "prompt"`,
		"genesisc plan: no answer compiled in 4 attempts; ",
		"; nothing written\n",
	} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr does not contain %q:\n%s", want, stderr)
		}
	}
	if strings.Contains(stderr, "attempt 5") {
		t.Errorf("more than 1 + 3 attempts:\n%s", stderr)
	}
	if _, err := os.Stat(filepath.Join(dir, "out.json")); !os.IsNotExist(err) {
		t.Errorf("out.json written: %v", err)
	}
	code, _, stderr = genesisc(t, dir, "plan", "--retries", "0", "--llm", "mock:llm.json", "-o", "out.json", "refund")
	if code != 1 || strings.Contains(stderr, "attempt 2") || !strings.Contains(stderr, "no answer compiled in 1 attempt;") {
		t.Errorf("--retries 0: exit %d\n%s", code, stderr)
	}
	// A failed model call: exit 1, nothing written.
	writeFile(t, dir, "down.json", `{"__default__": {"$error": {"kind": "unavailable", "message": "503"}}}`)
	code, _, stderr = genesisc(t, dir, "plan", "--llm", "mock:down.json", "-o", "out.json", "refund")
	if code != 1 || !strings.Contains(stderr, "genesisc plan: attempt 1: the model call failed: unavailable: 503; nothing written") {
		t.Errorf("failed call: exit %d\n%s", code, stderr)
	}
	if _, err := os.Stat(filepath.Join(dir, "out.json")); !os.IsNotExist(err) {
		t.Errorf("out.json written: %v", err)
	}
}

// nano-vm's Planner's '<value>' in '$x' is a warning (N010) fed back:
// the mock fixes it only when the prompt carries the warning. A warning
// the last attempt keeps is printed with the program written.
func TestPlannerFeedsAWarningBack(t *testing.T) {
	dir := t.TempDir()
	quoted := strings.Replace(planGood, `$decision == 'yes'`, `'yes' in '$decision'`, 1)
	writeFile(t, dir, "llm.json", `{"warning[N010]": `+planGood+`, "__default__": `+quoted+`}`)
	code, _, stderr := genesisc(t, dir, "plan", "--llm", "mock:llm.json", "-o", "refund.json", "refund")
	if code != 0 || !strings.Contains(stderr, "attempt 1: 0 errors, 1 warning;") || !strings.Contains(stderr, "attempt 2: compiles;") {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	data, _ := os.ReadFile(filepath.Join(dir, "refund.json"))
	if !strings.Contains(string(data), `"condition": "$decision == 'yes'"`) {
		t.Errorf("refund.json:\n%s", data)
	}
	// With no retry left, the program is written with its warning shown.
	code, _, stderr = genesisc(t, dir, "plan", "--retries", "0", "--llm", "mock:llm.json", "-o", "quoted.json", "refund")
	if code != 0 || !strings.Contains(stderr, "warning[N010]") || !strings.Contains(stderr, "wrote quoted.json: the answer of attempt 1 of 1, which compiles with 1 warning;") {
		t.Errorf("exit %d\n%s", code, stderr)
	}
	if _, err := os.Stat(filepath.Join(dir, "quoted.json")); err != nil {
		t.Error(err)
	}
}

// --tools-list: a tool outside the list is an error fed back.
func TestPlannerToolsList(t *testing.T) {
	dir := t.TempDir()
	fixed := strings.Replace(planGood, "send_rejection", "notify", 1)
	writeFile(t, dir, "llm.json", `{"error[PL01]": `+fixed+`, "__default__": `+planGood+`}`)
	code, _, stderr := genesisc(t, dir, "plan", "--verbose", "--tools-list", "issue_refund, notify", "--llm", "mock:llm.json", "-o", "r.json", "refund")
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	want := `r.json:32:15: error[PL01]: $.steps[3].tool: step "reject" calls tool "send_rejection", which is not one of the tools the program may call (issue_refund, notify)`
	if !strings.Contains(stderr, want) || !strings.Contains(stderr, "attempt 2: compiles;") {
		t.Errorf("stderr:\n%s", stderr)
	}
	data, _ := os.ReadFile(filepath.Join(dir, "r.json"))
	if strings.Contains(string(data), "send_rejection") {
		t.Errorf("r.json:\n%s", data)
	}
}

func TestPlannerUsage(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "llm.json", `{"__default__": `+planGood+`}`)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--llm", "mock:llm.json", "-o", "r.json"}, "no intent"},
		{[]string{"--llm", "mock:llm.json", "refund"}, "-o OUT.json is required"},
		{[]string{"--llm", "mock:llm.json", "-o", "r.yaml", "refund"}, "name the file .json"},
		{[]string{"-o", "r.json", "refund"}, "--llm is required"},
		{[]string{"--llm", "gpt:x", "-o", "r.json", "refund"}, "--llm: llm provider: unknown kind"},
		{[]string{"--llm", "mock:missing.json", "-o", "r.json", "refund"}, "missing.json"},
		{[]string{"--llm", "mock:llm.json", "--retries", "21", "-o", "r.json", "refund"}, "--retries must be between 0 and 20, not 21"},
		{[]string{"--llm", "mock:llm.json", "--tools-list", "a,,b", "-o", "r.json", "refund"}, `--tools-list: an empty name in "a,,b"`},
	} {
		code, _, stderr := genesisc(t, dir, append([]string{"plan"}, tc.args...)...)
		if code != 2 || !strings.Contains(stderr, tc.want) {
			t.Errorf("plan %v: exit %d, want 2 and %q\n%s", tc.args, code, tc.want, stderr)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "r.json")); !os.IsNotExist(err) {
		t.Errorf("r.json written: %v", err)
	}
}

// With openai:URL the request goes to the server with --model and the
// program's schema as structured output; the usage the server reports
// (and its cost) is what each attempt line says.
func TestPlannerOpenAI(t *testing.T) {
	var mu sync.Mutex
	var bodies []map[string]any
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body map[string]any
		if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
			t.Errorf("request body: %v", err)
		}
		mu.Lock()
		bodies = append(bodies, body)
		mu.Unlock()
		content, _ := json.Marshal(planGood)
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"choices": [{"message": {"role": "assistant", "content": `+string(content)+`}}], "usage": {"prompt_tokens": 1000, "completion_tokens": 150, "cost": 0.0021}}`)
	}))
	defer srv.Close()
	dir := t.TempDir()
	code, _, stderr := genesisc(t, dir, "plan", "--llm", "openai:"+srv.URL, "--model", "m-large", "-o", "r.json", "refund valid orders")
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	if want := "attempt 1: compiles; 1150 tokens (1000 prompt, 150 completion), 0.0021 USD"; !strings.Contains(stderr, want) {
		t.Errorf("stderr does not contain %q:\n%s", want, stderr)
	}
	if len(bodies) != 1 {
		t.Fatalf("%d requests", len(bodies))
	}
	rf, _ := bodies[0]["response_format"].(map[string]any)
	js, _ := rf["json_schema"].(map[string]any)
	schema, _ := js["schema"].(map[string]any)
	if bodies[0]["model"] != "m-large" || rf["type"] != "json_schema" || schema["$defs"] == nil {
		t.Errorf("model %v, response_format %v", bodies[0]["model"], rf)
	}
	if _, err := os.Stat(filepath.Join(dir, "r.json")); err != nil {
		t.Error(err)
	}
}
