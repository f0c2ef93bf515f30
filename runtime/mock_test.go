package runtime

import (
	"strconv"
	"strings"
	"testing"
)

func newHost(t testing.TB, llmFile, toolsFile string, cfg Config) *Host {
	t.Helper()
	if llmFile != "" {
		llm, err := ParseMockLLM([]byte(llmFile))
		if err != nil {
			t.Fatal(err)
		}
		cfg.LLM = llm
	}
	if toolsFile != "" {
		tools, err := ParseMockTools([]byte(toolsFile))
		if err != nil {
			t.Fatal(err)
		}
		cfg.Tools = append(cfg.Tools, tools)
	}
	return NewHost(cfg)
}

var (
	siteA = NewSite("a", "t.json", 1, 1)
	siteB = NewSite("b", "t.json", 2, 1)
	siteC = NewSite("c", "t.json", 3, 1)
)

func TestMockLLMMatching(t *testing.T) {
	// Keys are substrings of the prompt, tried in file order (not sorted):
	// "refund" comes before "ref" and before __default__.
	h := newHost(t, `{"refund": "R", "ref": "short", "__default__": "D", "zzz": "never"}`, "", Config{})
	for prompt, want := range map[string]string{
		"please refund me":       "R",
		"a ref here":             "short",
		"refund or ref, refund?": "R",
		"nothing matches":        "D",
		"zzz":                    "D", // __default__ comes first in file order
	} {
		res := h.Execute(RunOptions{}, func(r *Run) Value { return r.LLM(siteA.At(), String(prompt), ObjNew()) })
		if res.Output.Str() != want {
			t.Errorf("prompt %q: %v, want %q", prompt, res.Output, want)
		}
	}
	// Without __default__, an unmatched prompt is a failed call.
	h = newHost(t, `{"x": "X"}`, "", Config{})
	out := h.Execute(RunOptions{}, func(r *Run) Value { return r.LLM(siteA.At(), String("y"), ObjNew()) }).Output
	if out.ErrKind() != "mock" {
		t.Errorf("unmatched prompt: %v, want an error of kind mock", out)
	}
}

func TestMockRepliesAreJSONValues(t *testing.T) {
	h := newHost(t, `{"obj": {"a": [1, 2]}, "num": 42, "judge yes": "Yes.", "judge no": false}`, "", Config{})
	res := h.Execute(RunOptions{}, func(r *Run) Value {
		return List(
			r.LLM(siteA.At(), String("obj"), ObjNew()),
			r.LLM(siteA.At(), String("num"), ObjNew()),
			r.Judge(siteB.At(), String("judge yes?"), ObjNew()),
			r.Judge(siteB.At(), String("judge no?"), ObjNew()),
			r.Judge(siteB.At(), String("obj"), ObjNew()),
		)
	})
	want := `[{"a":[1,2]},42,true,false,{"$error":{"kind":"judge","message":"the judgement must be true or false, got object"}}]`
	if got := res.Output.String(); got != want {
		t.Errorf("replies %s\nwant %s", got, want)
	}
}

func TestMockErrorAndSequence(t *testing.T) {
	llm := `{"flaky": {"$sequence": [{"$error": {"kind": "timeout", "message": "slow"}}, "second", "last"]},
	         "broken": {"$error": {"kind": "rate_limit", "message": "429"}}}`
	h := newHost(t, llm, "", Config{})
	prog := func(r *Run) Value {
		var out []Value
		for i := 0; i < 5; i++ {
			out = append(out, r.LLM(siteA.At(int64(i)), String("flaky"), ObjNew()))
		}
		out = append(out, r.LLM(siteB.At(), String("broken"), ObjNew()))
		return List(out...)
	}
	want := `[{"$error":{"kind":"timeout","message":"slow"}},"second","last","last","last",{"$error":{"kind":"rate_limit","message":"429"}}]`
	for run := 0; run < 2; run++ { // sequences restart with every run
		res := h.Execute(RunOptions{}, prog)
		if got := res.Output.String(); got != want {
			t.Errorf("run %d: %s\nwant %s", run, got, want)
		}
	}
	// With retries asked for, the timeout is retried and the second reply
	// comes back from the same call.
	res := h.Execute(RunOptions{}, func(r *Run) Value {
		return r.LLM(siteA.At(), String("flaky"), Object(Field{"retries", Int(2)}))
	})
	if res.Output.Str() != "second" {
		t.Errorf("with retries: %v, want second", res.Output)
	}
	// A kind that is not retryable is not retried.
	res = h.Execute(RunOptions{}, func(r *Run) Value {
		return r.LLM(siteA.At(), String("flaky"), Object(Field{"retries", Int(2)}, Field{"retry_on", List(String("x"))}))
	})
	if res.Output.ErrKind() != "timeout" {
		t.Errorf("retry_on without timeout: %v, want the timeout error", res.Output)
	}
}

// TestMockSequenceOutsideRun: calls made without a run (genesisc plan
// asks the provider directly) step through a $sequence too, one count
// per parsed file, rather than getting its first reply every time.
func TestMockSequenceOutsideRun(t *testing.T) {
	m, err := ParseMockLLM([]byte(`{"__default__": {"$sequence": ["one", "two"]}}`))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for i := 1; i <= 3; i++ {
		resp, err := m.Complete(t.Context(), &Call{Step: "plan", Attempt: i}, &LLMRequest{Prompt: "p"})
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, resp.Value.Str())
	}
	if strings.Join(got, ",") != "one,two,two" {
		t.Errorf("replies %v, want one, two, two", got)
	}
}

func TestMockTools(t *testing.T) {
	tools := `{"pay": {"$sequence": ["PENDING", {"paid": true}]}, "fail": {"$error": {"kind": "tool", "message": "no"}},
	           "__default__": "default reply"}`
	h := newHost(t, "", tools, Config{})
	res := h.Execute(RunOptions{}, func(r *Run) Value {
		return List(
			r.Tool(siteA.At(1), String("pay"), ObjNew()),
			r.Tool(siteA.At(2), String("pay"), ObjNew()),
			r.Tool(siteB.At(), String("fail"), ObjNew()),
			r.Tool(siteC.At(), String("anything"), ObjNew()),
		)
	})
	want := `["PENDING",{"paid":true},{"$error":{"kind":"tool","message":"no"}},"default reply"]`
	if got := res.Output.String(); got != want || res.Status != StatusSuccess {
		t.Errorf("%s %s\nwant %s", res.Status, got, want)
	}
	// No provider knows the tool: an error value, the run goes on.
	h = newHost(t, "", `{"known": 1}`, Config{})
	res = h.Execute(RunOptions{}, func(r *Run) Value { return r.Tool(siteA.At(), String("unknown"), ObjNew()) })
	if res.Output.ErrKind() != "unknown_tool" {
		t.Errorf("unknown tool: %v", res.Output)
	}
}

func TestMockFileErrors(t *testing.T) {
	for _, c := range []struct{ file, want string }{
		{`[]`, "expected a JSON object"},
		{`{"a": `, "unexpected end"},
		{`{"a": {"$error": "boom"}}`, "$error needs an object"},
		{`{"a": {"$error": {"message": "no kind"}}}`, "$error needs an object"},
		{`{"a": {"$sequence": []}}`, "non-empty list"},
		{`{"a": {"$sequence": "x"}}`, "non-empty list"},
		{`{"a": {"$sequence": [{"$sequence": ["x"]}]}}`, "$sequence inside $sequence"},
		{`{"a": {"$reply": "x", "other": 1}}`, "unexpected key"},
		{`{"a": {"$reply": "x", "$usage": {"prompt_tokens": -1}}}`, "needs a number"},
		{`{"a": {"$reply": "x", "$usage": {"tokens": 1}}}`, "unexpected key"},
	} {
		_, err := ParseMockLLM([]byte(c.file))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error containing %q", c.file, err, c.want)
		}
	}
}

func TestMockUsage(t *testing.T) {
	h := newHost(t, `{"explicit": {"$reply": "ok", "$usage": {"prompt_tokens": 100, "completion_tokens": 7, "cost": 0.25}}, "__default__": "12345678"}`, "", Config{})
	res := h.Execute(RunOptions{}, func(r *Run) Value {
		a := r.LLM(siteA.At(), String("explicit"), Object(Field{"usage", True}))
		b := r.LLM(siteB.At(), String("123456789"), Object(Field{"usage", True})) // 9 bytes → 3 tokens, reply 8 bytes → 2
		return List(a, b)
	})
	want := `[{"text":"ok","usage":{"prompt_tokens":100,"completion_tokens":7,"total_tokens":107}},{"text":"12345678","usage":{"prompt_tokens":3,"completion_tokens":2,"total_tokens":5}}]`
	if got := res.Output.String(); got != want {
		t.Errorf("%s\nwant %s", got, want)
	}
	if res.Usage != (Usage{PromptTokens: 103, CompletionTokens: 9, Cost: 0.25}) {
		t.Errorf("run usage %+v", res.Usage)
	}
}

// TestBackoffOption: retries wait 1 s, 2 s, 4 s… on the run's clock, or
// 1 s each with "backoff": "fixed".
func TestBackoffOption(t *testing.T) {
	h := newHost(t, `{"flaky": {"$sequence": [{"$error": {"kind": "timeout", "message": "1"}}, {"$error": {"kind": "timeout", "message": "2"}}, {"$error": {"kind": "timeout", "message": "3"}}, "ok"]}}`, "", Config{})
	for _, c := range []struct {
		backoff string
		want    float64
	}{{"exponential", 7}, {"fixed", 3}} {
		res := h.Execute(RunOptions{}, func(r *Run) Value {
			v := r.LLM(siteA.At(), String("flaky"), Object(Field{"retries", Int(3)}, Field{"backoff", String(c.backoff)}))
			return List(v, Number(r.Elapsed().Seconds()))
		})
		if got, want := res.Output.String(), `["ok",`+strconv.FormatFloat(c.want, 'g', -1, 64)+`]`; got != want {
			t.Errorf("backoff %s: %s, want %s", c.backoff, got, want)
		}
	}
}
