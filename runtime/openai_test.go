package runtime

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// fakeOpenAI is an OpenAI-compatible server: it answers the requests with
// the scripted responses in turn and records what it was sent.
type fakeOpenAI struct {
	mu        sync.Mutex
	responses []func(w http.ResponseWriter)
	requests  []Value
	headers   []http.Header
	paths     []string
}

func (f *fakeOpenAI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	v, err := ParseJSON(body)
	if err != nil {
		http.Error(w, "bad request body: "+err.Error(), 400)
		return
	}
	f.mu.Lock()
	n := len(f.requests)
	f.requests = append(f.requests, v)
	f.headers = append(f.headers, r.Header.Clone())
	f.paths = append(f.paths, r.Method+" "+r.URL.Path)
	resp := f.responses[min(n, len(f.responses)-1)]
	f.mu.Unlock()
	resp(w)
}

func (f *fakeOpenAI) count() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.requests)
}

func ok(content string, usage string) func(w http.ResponseWriter) {
	return func(w http.ResponseWriter) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"id":"chatcmpl-1","object":"chat.completion","created":1,"model":"m",
			"choices":[{"index":0,"message":{"role":"assistant","content":`+string(AppendJSON(nil, String(content)))+`},"finish_reason":"stop"}]`+usage+`}`)
	}
}

func status(code int, header map[string]string, body string) func(w http.ResponseWriter) {
	return func(w http.ResponseWriter) {
		for k, v := range header {
			w.Header().Set(k, v)
		}
		w.WriteHeader(code)
		io.WriteString(w, body)
	}
}

// newOpenAIHost starts the fake server and returns a host using it, and
// the waits the provider asked for.
func newOpenAIHost(t *testing.T, f *fakeOpenAI, cfg OpenAIConfig) (*Host, *[]time.Duration) {
	t.Helper()
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	var sleeps []time.Duration
	var mu sync.Mutex
	cfg.BaseURL = srv.URL
	if cfg.Model == "" {
		cfg.Model = "test-model"
	}
	cfg.Sleep = func(ctx context.Context, d time.Duration) error {
		mu.Lock()
		sleeps = append(sleeps, d)
		mu.Unlock()
		return nil
	}
	cfg.Now = func() time.Time { return time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC) }
	return NewHost(Config{LLM: NewOpenAI(cfg)}), &sleeps
}

func runLLM(h *Host, prompt string, options Value) (Value, *Result) {
	var out Value
	res := h.Execute(RunOptions{}, func(r *Run) Value {
		out = r.LLM(siteA.At(), String(prompt), options)
		return out
	})
	return out, res
}

func TestOpenAISuccessWithUsage(t *testing.T) {
	f := &fakeOpenAI{responses: []func(http.ResponseWriter){ok("Paris", `,"usage":{"prompt_tokens":12,"completion_tokens":3,"total_tokens":15}`)}}
	h, sleeps := newOpenAIHost(t, f, OpenAIConfig{APIKey: "sk-test", PromptPrice: 1, CompletionPrice: 2})
	out, res := runLLM(h, "Capital of France?", Object(Field{"system", String("Be terse.")}, Field{"temperature", Number(0)}, Field{"usage", True}))
	if got := out.String(); got != `{"text":"Paris","usage":{"prompt_tokens":12,"completion_tokens":3,"total_tokens":15}}` {
		t.Errorf("reply %s", got)
	}
	if res.Usage != (Usage{PromptTokens: 12, CompletionTokens: 3, Cost: 18e-6}) {
		t.Errorf("usage %+v (cost = 12×1 + 3×2 USD per million tokens)", res.Usage)
	}
	if len(*sleeps) != 0 || f.count() != 1 {
		t.Fatalf("%d requests, waits %v", f.count(), *sleeps)
	}
	if f.paths[0] != "POST /v1/chat/completions" {
		t.Errorf("request %s", f.paths[0])
	}
	if got := f.headers[0].Get("Authorization"); got != "Bearer sk-test" {
		t.Errorf("Authorization %q", got)
	}
	want := `{"model":"test-model","messages":[{"role":"system","content":"Be terse."},{"role":"user","content":"Capital of France?"}],"temperature":0}`
	if got := f.requests[0].String(); got != want {
		t.Errorf("request body %s\nwant %s", got, want)
	}
}

func TestOpenAIUsageCostFromServer(t *testing.T) {
	f := &fakeOpenAI{responses: []func(http.ResponseWriter){ok("x", `,"usage":{"prompt_tokens":1,"completion_tokens":1,"cost":0.5}`)}}
	h, _ := newOpenAIHost(t, f, OpenAIConfig{PromptPrice: 100})
	_, res := runLLM(h, "p", ObjNew())
	if res.Usage.Cost != 0.5 {
		t.Errorf("cost %v, want the server's usage.cost 0.5", res.Usage.Cost)
	}
}

func TestOpenAIRetryAfter(t *testing.T) {
	for _, c := range []struct {
		name   string
		header map[string]string
		want   time.Duration
	}{
		{"seconds", map[string]string{"Retry-After": "2"}, 2 * time.Second},
		{"http date", map[string]string{"Retry-After": "Mon, 23 Nov 2026 12:00:07 GMT"}, 7 * time.Second},
		{"milliseconds", map[string]string{"Retry-After-Ms": "250"}, 250 * time.Millisecond},
		{"none", nil, 500 * time.Millisecond},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := &fakeOpenAI{responses: []func(http.ResponseWriter){
				status(429, c.header, `{"error":{"message":"Rate limit reached","type":"requests"}}`),
				ok("after the wait", ""),
			}}
			h, sleeps := newOpenAIHost(t, f, OpenAIConfig{})
			out, _ := runLLM(h, "p", ObjNew())
			if out.Str() != "after the wait" {
				t.Errorf("reply %v", out)
			}
			if len(*sleeps) != 1 || (*sleeps)[0] != c.want {
				t.Errorf("waits %v, want [%v]", *sleeps, c.want)
			}
		})
	}
	// A Retry-After longer than MaxRetryAfter fails at once.
	f := &fakeOpenAI{responses: []func(http.ResponseWriter){status(429, map[string]string{"Retry-After": "3600"}, `{"error":{"message":"quota"}}`)}}
	h, sleeps := newOpenAIHost(t, f, OpenAIConfig{})
	out, _ := runLLM(h, "p", ObjNew())
	if out.ErrKind() != "rate_limit" || !strings.Contains(out.ErrMessage(), "quota") || len(*sleeps) != 0 {
		t.Errorf("reply %v, waits %v", out, *sleeps)
	}
}

func TestOpenAIServerErrorsRetried(t *testing.T) {
	f := &fakeOpenAI{responses: []func(http.ResponseWriter){
		status(500, nil, "internal error"),
		status(503, nil, "<html>unavailable</html>"),
		ok("third time", ""),
	}}
	h, sleeps := newOpenAIHost(t, f, OpenAIConfig{})
	out, _ := runLLM(h, "p", ObjNew())
	if out.Str() != "third time" || f.count() != 3 {
		t.Errorf("reply %v after %d requests", out, f.count())
	}
	if want := []time.Duration{500 * time.Millisecond, time.Second}; len(*sleeps) != 2 || (*sleeps)[0] != want[0] || (*sleeps)[1] != want[1] {
		t.Errorf("waits %v, want %v (exponential)", *sleeps, want)
	}
	// Retries are bounded: 1 + MaxRetries requests.
	f = &fakeOpenAI{responses: []func(http.ResponseWriter){status(502, nil, "bad gateway")}}
	h, _ = newOpenAIHost(t, f, OpenAIConfig{MaxRetries: 2})
	out, _ = runLLM(h, "p", ObjNew())
	if out.ErrKind() != "unavailable" || f.count() != 3 {
		t.Errorf("reply %v after %d requests, want unavailable after 3", out, f.count())
	}
}

func TestOpenAIClientErrorsNotRetried(t *testing.T) {
	for _, c := range []struct {
		code int
		kind string
	}{{400, "bad_request"}, {401, "auth"}, {404, "bad_request"}} {
		f := &fakeOpenAI{responses: []func(http.ResponseWriter){status(c.code, nil, `{"error":{"message":"model not found"}}`)}}
		h, sleeps := newOpenAIHost(t, f, OpenAIConfig{})
		out, _ := runLLM(h, "p", Object(Field{"retries", Int(3)}))
		if out.ErrKind() != c.kind || !strings.Contains(out.ErrMessage(), "model not found") {
			t.Errorf("%d: reply %v, want kind %s with the server's message", c.code, out, c.kind)
		}
		if f.count() != 1 || len(*sleeps) != 0 {
			t.Errorf("%d: %d requests, waits %v: a client error must not be retried", c.code, f.count(), *sleeps)
		}
	}
}

func TestOpenAIMalformedBody(t *testing.T) {
	for _, body := range []string{`{"choices": [`, `{"choices": []}`, `not json at all`} {
		f := &fakeOpenAI{responses: []func(http.ResponseWriter){status(200, nil, body)}}
		h, _ := newOpenAIHost(t, f, OpenAIConfig{})
		out, _ := runLLM(h, "p", ObjNew())
		if out.ErrKind() != "bad_response" || f.count() != 1 {
			t.Errorf("body %q: reply %v after %d requests, want bad_response after 1", body, out, f.count())
		}
	}
}

func TestOpenAITimeout(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	f := &fakeOpenAI{responses: []func(http.ResponseWriter){func(w http.ResponseWriter) {
		select {
		case <-release:
		case <-time.After(5 * time.Second):
		}
		ok("too late", "")(w)
	}}}
	h, _ := newOpenAIHost(t, f, OpenAIConfig{})
	// The server answers only when released, at the end of the test, or
	// after 5 s (a hang guard), and then successfully: a timeout error is
	// the 0.1 s timeout firing. No wall-clock time is asserted.
	out, _ := runLLM(h, "p", Object(Field{"timeout", Number(0.1)}))
	if out.ErrKind() != "timeout" {
		t.Errorf("reply %v, want a timeout error", out)
	}
	if f.count() != 1 {
		t.Errorf("%d requests: a timed-out call is not retried by the provider", f.count())
	}
}

func TestOpenAISchemaAndJudge(t *testing.T) {
	schema := `{"type":"object","properties":{"city":{"type":"string"},"pop":{"type":"integer"}},"required":["city"]}`
	f := &fakeOpenAI{responses: []func(http.ResponseWriter){
		ok("```json\n{\"city\": \"Paris\", \"pop\": 2100000}\n```", ""),
		ok(`{"pop": 1}`, ""),
		ok("True.", ""),
	}}
	h, _ := newOpenAIHost(t, f, OpenAIConfig{})
	res := h.Execute(RunOptions{}, func(r *Run) Value {
		opts := Object(Field{"schema", mustJSON(t, schema)}, Field{"model", String("gpt-x")})
		return List(
			r.LLM(siteA.At(1), String("city?"), opts),
			r.LLM(siteA.At(2), String("city?"), opts),
			r.Judge(siteB.At(), String("Is Paris in France?"), ObjNew()),
		)
	})
	want := `[{"city":"Paris","pop":2100000},{"$error":{"kind":"schema","message":"the reply does not match the schema: $: missing required property \"city\""}},true]`
	if got := res.Output.String(); got != want {
		t.Errorf("replies %s\nwant %s", got, want)
	}
	wantReq := `{"model":"gpt-x","messages":[{"role":"user","content":"city?"}],"response_format":{"type":"json_schema","json_schema":{"name":"output","schema":` + schema + `,"strict":true}}}`
	if got := f.requests[0].String(); got != wantReq {
		t.Errorf("schema request %s\nwant %s", got, wantReq)
	}
	if got := PathGet(f.requests[2], String("messages.0.content")).Str(); got != judgeSystem {
		t.Errorf("judge system message %q", got)
	}
}

func TestParseLLM(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", "sk-env")
	t.Setenv("GENESIS_LLM_MODEL", "env-model")
	t.Setenv("GENESIS_LLM_PRICE", "0.5, 1.5")
	p, err := ParseLLM("openai:http://localhost:8000/v1/")
	if err != nil {
		t.Fatal(err)
	}
	o := p.(*OpenAI)
	if o.URL() != "http://localhost:8000/v1/chat/completions" || o.cfg.APIKey != "sk-env" || o.cfg.Model != "env-model" ||
		o.cfg.PromptPrice != 0.5 || o.cfg.CompletionPrice != 1.5 {
		t.Errorf("provider %s %+v", o.URL(), o.cfg)
	}
	if p, _ := ParseLLM("openai:https://api.example.com"); p.(*OpenAI).URL() != "https://api.example.com/v1/chat/completions" {
		t.Errorf("URL %s", p.(*OpenAI).URL())
	}
	for _, bad := range []string{"mock", "mock:", "anthropic:x", "mock:/does/not/exist.json"} {
		if _, err := ParseLLM(bad); err == nil {
			t.Errorf("ParseLLM(%q) succeeded", bad)
		}
	}
	t.Setenv("GENESIS_LLM_PRICE", "cheap")
	if _, err := ParseLLM("openai:http://x"); err == nil {
		t.Error("a bad GENESIS_LLM_PRICE was accepted")
	}
	// Without a model anywhere, a call fails with kind config.
	t.Setenv("GENESIS_LLM_MODEL", "")
	t.Setenv("GENESIS_LLM_PRICE", "")
	p, _ = ParseLLM("openai:http://127.0.0.1:1")
	out, _ := runLLM(NewHost(Config{LLM: p}), "p", ObjNew())
	if out.ErrKind() != "config" {
		t.Errorf("no model: %v", out)
	}
}
