package planner

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/genesis-toolchain/genesis/compiler"
	"github.com/genesis-toolchain/genesis/runtime"
)

// recorder is an LLM provider that records the requests it passes on.
type recorder struct {
	runtime.LLMProvider
	mu   sync.Mutex
	reqs []runtime.LLMRequest
}

func (r *recorder) Complete(ctx context.Context, c *runtime.Call, req *runtime.LLMRequest) (runtime.LLMResponse, error) {
	r.mu.Lock()
	r.reqs = append(r.reqs, *req)
	r.mu.Unlock()
	return r.LLMProvider.Complete(ctx, c, req)
}

func mockLLM(t *testing.T, file string) *recorder {
	t.Helper()
	m, err := runtime.ParseMockLLM([]byte(file))
	if err != nil {
		t.Fatal(err)
	}
	return &recorder{LLMProvider: m}
}

// The programs of the tests: a refund flow, and the mistakes a model
// makes in it.
const (
	goodProgram = `{"name": "refund", "steps": [
	  {"id": "classify", "type": "llm", "prompt": "Is this refund valid? $reason", "output_key": "decision", "allowed_outputs": ["yes", "no"]},
	  {"id": "route", "type": "condition", "condition": "$decision == 'yes'", "then": "approve", "otherwise": "reject"},
	  {"id": "approve", "type": "tool", "tool": "issue_refund", "args": {"order_id": "$order_id"}},
	  {"id": "reject", "type": "tool", "tool": "send_rejection", "args": {"order_id": "$order_id"}}]}`
	// An llm step without a prompt: N002.
	noPrompt = `{"name": "refund", "steps": [{"id": "classify", "type": "llm", "output_key": "decision"}]}`
	// nano-vm's Planner's own lesson: '<value>' in '$x', always false (N010).
	quotedRef = `{"name": "refund", "steps": [
	  {"id": "classify", "type": "llm", "prompt": "Is this refund valid? $reason", "output_key": "decision", "allowed_outputs": ["yes", "no"]},
	  {"id": "route", "type": "condition", "condition": "'yes' in '$decision'", "then": "approve", "otherwise": "reject"},
	  {"id": "approve", "type": "tool", "tool": "issue_refund", "args": {"order_id": "$order_id"}},
	  {"id": "reject", "type": "tool", "tool": "send_rejection", "args": {"order_id": "$order_id"}}]}`
)

// An answer that does not compile is sent back with its diagnostics; the
// second answer compiles and is the result.
func TestPlanFeedsErrorsBack(t *testing.T) {
	llm := mockLLM(t, `{"__default__": {"$sequence": [`+noPrompt+`, `+goodProgram+`]}}`)
	var seen []int
	res, err := Plan(t.Context(), "Refund an order when the reason is valid", Options{LLM: llm, Retries: 3, File: "refund.json",
		OnAttempt: func(a Attempt) { seen = append(seen, a.N) }})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Attempts) != 2 || res.Chosen != 1 || !cmp.Equal(seen, []int{1, 2}) {
		t.Fatalf("%d attempts, chosen %d, reported %v; want 2, 1, [1 2]", len(res.Attempts), res.Chosen, seen)
	}
	if a := res.Attempts[0]; a.Errors != 1 || a.Compiled() || !a.Retry {
		t.Errorf("attempt 1: %d errors, retry %v:\n%s", a.Errors, a.Retry, a.Render("refund.json"))
	}
	if a := res.Attempts[1]; a.Errors != 0 || a.Warnings != 0 || a.Retry {
		t.Errorf("attempt 2: %d errors, %d warnings:\n%s", a.Errors, a.Warnings, a.Render("refund.json"))
	}
	if len(llm.reqs) != 2 {
		t.Fatalf("%d requests, want 2", len(llm.reqs))
	}
	first, second := llm.reqs[0].Prompt, llm.reqs[1].Prompt
	if !strings.Contains(first, "Refund an order when the reason is valid") || strings.Contains(first, "error[") {
		t.Errorf("the first request does not hold the intent alone:\n%s", first)
	}
	// The second request holds the intent, the answer and the rendered
	// diagnostic: position, code, message, the source line and a caret.
	for _, want := range []string{
		"Refund an order when the reason is valid",
		`"type": "llm"`,
		`refund.json:4:5: error[N002]: $.steps[0]: an llm step needs a "prompt"`,
		"\n        {\n        ^\n",
	} {
		if !strings.Contains(second, want) {
			t.Errorf("the second request does not contain %q:\n%s", want, second)
		}
	}
	// The result is the second answer, indented, and compiles.
	var got, want any
	json.Unmarshal(res.Program, &got)
	json.Unmarshal([]byte(goodProgram), &want)
	if !cmp.Equal(got, want) {
		t.Errorf("program %s", res.Program)
	}
	if !strings.HasPrefix(string(res.Program), "{\n  \"name\": \"refund\",\n  \"steps\": [\n") {
		t.Errorf("the program is not indented:\n%s", res.Program)
	}
	if ds := compiler.Check([]compiler.Source{{Name: "refund.json", Data: res.Program}}); len(ds) != 0 {
		t.Errorf("the result has diagnostics: %v", ds)
	}
	if res.Usage.Tokens() != res.Attempts[0].Usage.Tokens()+res.Attempts[1].Usage.Tokens() || res.Usage.Tokens() == 0 {
		t.Errorf("usage %+v is not the attempts' sum", res.Usage)
	}
}

// When every answer fails, there is no program, after 1 + Retries
// attempts.
func TestPlanAllAttemptsFail(t *testing.T) {
	llm := mockLLM(t, `{"__default__": `+noPrompt+`}`)
	res, err := Plan(t.Context(), "refund", Options{LLM: llm, Retries: 2})
	if err != nil {
		t.Fatal(err)
	}
	if res.Program != nil || res.Best() != nil || len(res.Attempts) != 3 || len(llm.reqs) != 3 {
		t.Fatalf("program %q, %d attempts, %d requests; want none, 3, 3", res.Program, len(res.Attempts), len(llm.reqs))
	}
	// Each retry quotes the previous answer, not all of them.
	if n := strings.Count(llm.reqs[2].Prompt, "does not compile"); n != 1 {
		t.Errorf("the third request quotes %d answers, want 1", n)
	}
}

// Lint warnings are fed back like errors: nano-vm's Planner's quoted
// '$x' (N010), then a misspelt reference (PL02); when the last attempt
// still has a warning, its program is the result.
func TestPlanFeedsWarningsBack(t *testing.T) {
	misspelt := strings.Replace(goodProgram, "$decision ==", "$decison ==", 1)
	llm := mockLLM(t, `{"__default__": {"$sequence": [`+quotedRef+`, `+misspelt+`]}}`)
	res, err := Plan(t.Context(), "refund", Options{LLM: llm, Retries: 1, File: "r.json"})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Attempts) != 2 || res.Chosen != 1 {
		t.Fatalf("%d attempts, chosen %d; want 2, 1", len(res.Attempts), res.Chosen)
	}
	if a := res.Attempts[0]; a.Errors != 0 || a.Warnings != 1 || a.Diags[0].Code != "N010" || !a.Retry {
		t.Errorf("attempt 1:\n%s", a.Render("r.json"))
	}
	for _, want := range []string{"compiles, with warnings", "warning[N010]", "'yes' in '$decision'"} {
		if !strings.Contains(llm.reqs[1].Prompt, want) {
			t.Errorf("the second request does not contain %q:\n%s", want, llm.reqs[1].Prompt)
		}
	}
	a := res.Attempts[1]
	if a.Warnings != 1 || a.Diags[0].Code != CodeRef || !strings.Contains(a.Diags[0].Msg, "did you mean $decision?") {
		t.Errorf("attempt 2:\n%s", a.Render("r.json"))
	}
	if !strings.Contains(string(res.Program), "$decison") {
		t.Errorf("the result is not the last answer:\n%s", res.Program)
	}
}

// A later answer with errors does not replace an earlier one that
// compiled.
func TestPlanKeepsTheLastCompilingAnswer(t *testing.T) {
	llm := mockLLM(t, `{"__default__": {"$sequence": [`+quotedRef+`, `+noPrompt+`]}}`)
	res, err := Plan(t.Context(), "refund", Options{LLM: llm, Retries: 1})
	if err != nil {
		t.Fatal(err)
	}
	if res.Chosen != 0 || !strings.Contains(string(res.Program), "'yes' in '$decision'") {
		t.Errorf("chosen %d, program:\n%s", res.Chosen, res.Program)
	}
}

// --tools-list: a call to another tool is an error fed back; with the
// input fields known, any unknown name is a warning.
func TestPlanToolsAndContext(t *testing.T) {
	fixed := strings.Replace(goodProgram, "send_rejection", "notify", 1)
	llm := mockLLM(t, `{"__default__": {"$sequence": [`+goodProgram+`, `+fixed+`]}}`)
	res, err := Plan(t.Context(), "refund", Options{LLM: llm, Retries: 3, File: "r.json",
		Tools: []string{"issue_refund", "notify"}, Context: []string{"reason"}})
	if err != nil {
		t.Fatal(err)
	}
	a := res.Attempts[0]
	got := a.Render("r.json")
	for _, want := range []string{
		`r.json:32:15: error[PL01]: $.steps[3].tool: step "reject" calls tool "send_rejection", which is not one of the tools the program may call (issue_refund, notify)`,
		`warning[PL02]: $.steps[2].args.order_id: $order_id names no input field, step or output_key, so it stays the text "$order_id" (the input fields are reason)`,
	} {
		if !strings.Contains(got, want) {
			t.Errorf("attempt 1 does not report %q:\n%s", want, got)
		}
	}
	if !strings.Contains(llm.reqs[0].Prompt, "only these tools: issue_refund, notify") || !strings.Contains(llm.reqs[0].Prompt, "input fields are: reason") {
		t.Errorf("the first request does not name the tools and the input:\n%s", llm.reqs[0].Prompt)
	}
	// The second answer still reads $order_id, which the input lacks: a
	// warning, every attempt, and the last answer is kept with it.
	if len(res.Attempts) != 4 || res.Chosen != 3 {
		t.Errorf("%d attempts, chosen %d; want 4, 3", len(res.Attempts), res.Chosen)
	}
	if a := res.Best(); a.Errors != 0 || a.Warnings != 2 {
		t.Errorf("best attempt:\n%s", a.Render("r.json"))
	}
	// No tools allowed at all.
	llm = mockLLM(t, `{"__default__": `+goodProgram+`}`)
	res, _ = Plan(t.Context(), "refund", Options{LLM: llm, Tools: []string{}})
	if res.Best() != nil || !strings.Contains(res.Attempts[0].Diags[0].Msg, "(none: --tools-list is empty)") {
		t.Errorf("with no tools allowed: %v", res.Attempts[0].Diags)
	}
	if !strings.Contains(llm.reqs[0].Prompt, "may call no tools") {
		t.Errorf("the request does not say no tools:\n%s", llm.reqs[0].Prompt)
	}
}

// Replies as models write them: a Markdown fence, prose around the JSON,
// no JSON at all, an execution plan.
func TestPlanReplyShapes(t *testing.T) {
	for _, tc := range []struct {
		name, reply string
		code        string // of the first diagnostic; "" compiles
	}{
		{"fence", "```json\n" + goodProgram + "\n```", ""},
		{"prose", "Here it is: " + goodProgram + " Enjoy.", ""},
		{"no JSON", "I cannot help with that.", "N001"},
		{"plan", `{"groups": [{"tasks": []}]}`, CodeNotProgram},
		{"runaway", `{"steps": [` + strings.Repeat(`{"id": "x", "type": "tool", "tool": "t"}, `, MaxAnswer/40) + `{}]}`, CodeTooLarge},
	} {
		reply, _ := json.Marshal(tc.reply)
		res, err := Plan(t.Context(), "refund", Options{LLM: mockLLM(t, `{"__default__": `+string(reply)+`}`)})
		if err != nil {
			t.Fatal(err)
		}
		a := res.Attempts[0]
		switch {
		case tc.code == "" && !a.Compiled():
			t.Errorf("%s: %s", tc.name, a.Render("plan.json"))
		case tc.code != "" && (len(a.Diags) == 0 || a.Diags[0].Code != tc.code):
			t.Errorf("%s: diagnostics %v, want %s first", tc.name, a.Diags, tc.code)
		}
	}
}

// A failed model call ends planning with the call's error; bad options
// are errors before any call.
func TestPlanErrors(t *testing.T) {
	llm := mockLLM(t, `{"__default__": {"$sequence": [`+noPrompt+`, {"$error": {"kind": "auth", "message": "bad key"}}]}}`)
	res, err := Plan(t.Context(), "refund", Options{LLM: llm, Retries: 3})
	var ce *runtime.CallError
	if err == nil || !strings.Contains(err.Error(), "attempt 2: the model call failed: auth: bad key") || !asCallError(err, &ce) {
		t.Errorf("error %v", err)
	}
	if len(res.Attempts) != 1 || res.Program != nil {
		t.Errorf("%d attempts, program %q", len(res.Attempts), res.Program)
	}
	for _, opts := range []Options{
		{},
		{LLM: llm, Retries: -1},
		{LLM: llm, Retries: MaxRetries + 1},
		{LLM: llm, File: "plan.yaml"},
	} {
		if _, err := Plan(t.Context(), "refund", opts); err == nil {
			t.Errorf("options %+v: no error", opts)
		}
	}
	if _, err := Plan(t.Context(), "  ", Options{LLM: llm}); err == nil {
		t.Error("empty intent: no error")
	}
}

// The OpenAI-compatible provider gets the program's schema as structured
// output (response_format json_schema, not strict), and the system
// prompt; the schema is not repeated in the prompt.
func TestPlanSendsTheSchema(t *testing.T) {
	var bodies []map[string]any
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		data, _ := io.ReadAll(r.Body)
		var body map[string]any
		if err := json.Unmarshal(data, &body); err != nil {
			t.Errorf("request body: %v", err)
		}
		bodies = append(bodies, body)
		content, _ := json.Marshal(goodProgram)
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"choices": [{"message": {"role": "assistant", "content": `+string(content)+`}}], "usage": {"prompt_tokens": 900, "completion_tokens": 120}}`)
	}))
	defer srv.Close()
	llm := runtime.NewOpenAI(runtime.OpenAIConfig{BaseURL: srv.URL, Model: "planner-model"})
	res, err := Plan(t.Context(), "refund", Options{LLM: llm})
	if err != nil {
		t.Fatal(err)
	}
	if res.Best() == nil || res.Usage.Tokens() != 1020 {
		t.Fatalf("no program, or usage %+v", res.Usage)
	}
	if len(bodies) != 1 {
		t.Fatalf("%d requests", len(bodies))
	}
	body := bodies[0]
	rf, _ := body["response_format"].(map[string]any)
	js, _ := rf["json_schema"].(map[string]any)
	var want any
	json.Unmarshal(schemaJSON, &want)
	if rf["type"] != "json_schema" || !cmp.Equal(js["schema"], want) {
		t.Errorf("response_format %v\nwant the program schema", rf)
	}
	if _, strict := js["strict"]; strict {
		t.Errorf("the schema is sent strict: %v", js)
	}
	msgs, _ := body["messages"].([]any)
	if len(msgs) != 2 || body["model"] != "planner-model" {
		t.Fatalf("messages %v, model %v", msgs, body["model"])
	}
	sys, _ := msgs[0].(map[string]any)
	user, _ := msgs[1].(map[string]any)
	if sys["role"] != "system" || !strings.Contains(sys["content"].(string), "nano-vm") {
		t.Errorf("system message %v", sys)
	}
	if u := user["content"].(string); strings.Contains(u, `"$defs"`) {
		t.Errorf("the schema is repeated in the prompt of a provider with structured output:\n%s", u)
	}
	// A provider without structured output (the mock) gets it in the
	// prompt.
	mock := mockLLM(t, `{"__default__": `+goodProgram+`}`)
	Plan(t.Context(), "refund", Options{LLM: mock})
	if !strings.Contains(mock.reqs[0].Prompt, `"$defs"`) {
		t.Errorf("the mock's prompt has no schema:\n%s", mock.reqs[0].Prompt)
	}
}

func asCallError(err error, ce **runtime.CallError) bool {
	for e := err; e != nil; {
		if c, ok := e.(*runtime.CallError); ok {
			*ce = c
			return true
		}
		u, ok := e.(interface{ Unwrap() error })
		if !ok {
			return false
		}
		e = u.Unwrap()
	}
	return false
}

// The example program the system prompt shows compiles without a
// diagnostic, and validates against the schema: the prompt teaches
// nothing the compiler would send back.
func TestSystemPromptExample(t *testing.T) {
	i := strings.Index(systemPrompt, `{"name": "refund"`)
	j := strings.Index(systemPrompt, "\n\nAnswer with")
	if i < 0 || j < i {
		t.Fatal("no example in the system prompt")
	}
	example := systemPrompt[i:j]
	if ds := compiler.Check([]compiler.Source{{Name: "example.json", Data: []byte(example)}}); len(ds) != 0 {
		t.Errorf("the example has diagnostics:\n%s", ds.Error())
	}
	var v any
	if err := json.Unmarshal([]byte(example), &v); err != nil {
		t.Fatal(err)
	}
	if err := resolvedSchema(t).Validate(v); err != nil {
		t.Errorf("the example does not validate: %v", err)
	}
	if ds := lint("example.json", []byte(example), &Options{Tools: []string{"issue_refund", "send_rejection"}, Context: []string{"request"}}); len(ds) != 0 {
		t.Errorf("the example has lint diagnostics: %v", ds)
	}
}
