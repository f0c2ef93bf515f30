package runtime

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

var sAgent = NewSite("researcher", "agent.vvm", 3, 9)

// agentOptions are the options of an agent with a skill and
// permissions, as the VVM lowering makes them.
func agentOptions(perms ...Field) Value {
	return Object(
		Field{"model", String("m")},
		Field{"skills", List(String("web-search"))},
		Field{"permissions", Object(perms...)},
	)
}

// toolLog is a Go tool provider that records its calls.
type toolLog struct {
	mu    sync.Mutex
	calls []string
}

func (l *toolLog) CallTool(_ context.Context, c *Call, name string, args Value) (Value, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.calls = append(l.calls, name+" "+string(AppendJSON(nil, args)))
	if name == "web-search" || name == "read" || name == "network" {
		return String(name + " result"), nil
	}
	return Value{}, ErrUnknownTool
}

func TestAgentToolsDefinitions(t *testing.T) {
	defs, dropped := agentTools(agentOptions(
		Field{"read", List(String("docs/**"))},
		Field{"write", List()},
		Field{"execute", List(String("bin/*"))},
		Field{"bash", String("deny")},
		Field{"network", String("prompt")},
	))
	var names []string
	for _, d := range defs {
		names = append(names, d.Name)
	}
	if got := strings.Join(names, ","); got != "web-search,read,execute" {
		t.Errorf("tools %s, want web-search,read,execute (an empty list and deny offer nothing)", got)
	}
	if len(dropped) != 1 || !strings.HasPrefix(dropped[0], `network: "prompt"`) {
		t.Errorf("dropped %q, want network's prompt", dropped)
	}
	if defs, dropped := agentTools(Object(Field{"model", String("m")})); defs != nil || dropped != nil {
		t.Errorf("an agent without skills or permissions offers %v, %v", defs, dropped)
	}
}

func TestGlobMatch(t *testing.T) {
	for _, c := range []struct {
		pattern, path string
		want          bool
	}{
		{"docs/**", "docs/a.md", true},
		{"docs/**", "docs/a/b/c.md", true},
		{"docs/**", "docs", true},
		{"docs/**", "src/a.go", false},
		{".vvm/runs/**", ".vvm/runs/r1/bindings/b1.md", true},
		{"**/*.md", "a/b/c.md", true},
		{"**/*.md", "c.md", true},
		{"**/*.md", "c.go", false},
		{"bin/*", "bin/tool", true},
		{"bin/*", "bin/sub/tool", false},
		{"a/**/z", "a/z", true},
		{"a/**/z", "a/b/c/z", true},
		{"a/**/z", "a/b/c/y", false},
	} {
		if got := globMatch(c.pattern, c.path); got != c.want {
			t.Errorf("globMatch(%q, %q) = %v, want %v", c.pattern, c.path, got, c.want)
		}
	}
	d := ToolDef{Name: "read", globs: []string{"docs/**"}}
	for path, want := range map[string]bool{"docs/x": true, "docs/../secret": false, "/etc/passwd": false, "./docs/y": true} {
		if ok, why := d.allows(Object(Field{"path", String(path)})); ok != want {
			t.Errorf("read of %q allowed = %v (%s), want %v", path, ok, why, want)
		}
	}
	if ok, _ := d.allows(Object()); ok {
		t.Error("read without a path is allowed")
	}
}

// TestMockToolCalls runs an agent call whose scripted reply calls tools:
// allowed calls reach the tool provider, a path outside the permission
// and a tool not offered are rejected without reaching it, and the trace
// records every call.
func TestMockToolCalls(t *testing.T) {
	llm, err := ParseMockLLM([]byte(`{"Find": {"$tool_calls": [
		{"name": "web-search", "args": {"q": "rain"}},
		{"name": "read", "args": {"path": "docs/../secret.txt"}},
		{"name": "read", "args": {"path": "docs/notes.md"}},
		{"name": "bash", "args": {"command": "rm -rf /"}}
	], "$reply": "done"}}`))
	if err != nil {
		t.Fatal(err)
	}
	tools := &toolLog{}
	h := NewHost(Config{LLM: llm, Tools: []ToolProvider{tools}})
	var trace bytes.Buffer
	res := h.Execute(RunOptions{Trace: &trace}, func(r *Run) Value {
		return r.LLM(sAgent.At(), String("Find facts."), agentOptions(Field{"read", List(String("docs/**"))}, Field{"bash", String("deny")}))
	})
	if res.Status != StatusSuccess || res.Output.Str() != "done" {
		t.Fatalf("result %s", resultJSON(res))
	}
	if got, want := strings.Join(tools.calls, "\n"), "web-search {\"q\":\"rain\"}\nread {\"path\":\"docs/notes.md\"}"; got != want {
		t.Errorf("the tool provider got\n%s\nwant\n%s", got, want)
	}
	tr := trace.String()
	for _, want := range []string{
		`"event":"advisory_tool_call"`,
		`"tool":"web-search","args":{"q":"rain"},"reply":"web-search result"`,
		`"error":{"kind":"rejected","message":"read of \"docs/../secret.txt\" is not allowed: the permitted paths are docs/**"}`,
		`"error":{"kind":"rejected","message":"the tool \"bash\" is not offered to this agent"}`,
	} {
		if !strings.Contains(tr, want) {
			t.Errorf("the trace lacks %s:\n%s", want, tr)
		}
	}
}

// plainLLM is a provider that cannot send tools.
type plainLLM struct{}

func (plainLLM) Complete(context.Context, *Call, *LLMRequest) (LLMResponse, error) {
	return LLMResponse{Value: String("ok")}, nil
}

func TestToolsDroppedWarns(t *testing.T) {
	h := NewHost(Config{LLM: plainLLM{}})
	var trace bytes.Buffer
	var narration bytes.Buffer
	res := h.Execute(RunOptions{Trace: io.MultiWriter(&trace, NewNarrator(&narration))}, func(r *Run) Value {
		return r.LLM(sAgent.At(), String("Find facts."), agentOptions(Field{"network", String("allow")}))
	})
	if res.Status != StatusSuccess {
		t.Fatalf("result %s", resultJSON(res))
	}
	if want := `"event":"advisory_tools_dropped","t":0,"step":"researcher @ agent.vvm:3:9","name":"researcher","data":{"tools":["web-search","network"],"reason":"the LLM provider cannot send tools to the model"}`; !strings.Contains(trace.String(), want) {
		t.Errorf("the trace lacks %s:\n%s", want, trace.String())
	}
	if want := "⚠️ researcher: tools dropped (the LLM provider cannot send tools to the model): web-search; network\n"; !strings.Contains(narration.String(), want) {
		t.Errorf("the narration lacks %q:\n%s", want, narration.String())
	}
}

func TestMockToolCallsNeedTools(t *testing.T) {
	llm, err := ParseMockLLM([]byte(`{"x": {"$tool_calls": [{"name": "t"}], "$reply": "r"}}`))
	if err != nil {
		t.Fatal(err)
	}
	h := NewHost(Config{LLM: llm})
	res := h.Execute(RunOptions{}, func(r *Run) Value { return r.LLM(sAgent.At(), String("x"), Object()) })
	if k := res.Output.ErrKind(); k != "mock" {
		t.Errorf("a scripted tool call with no tools offered: %s, want an error of kind mock", resultJSON(res))
	}
	for _, bad := range []string{
		`{"x": {"$tool_calls": [{"name": "t"}]}}`,
		`{"x": {"$tool_calls": {"name": "t"}, "$reply": "r"}}`,
		`{"x": {"$tool_calls": [{"args": {}}], "$reply": "r"}}`,
		`{"x": {"$tool_calls": [{"name": "t", "arg": {}}], "$reply": "r"}}`,
	} {
		if _, err := ParseMockLLM([]byte(bad)); err == nil {
			t.Errorf("%s: no error", bad)
		}
	}
}

func toolCallsReply(calls string) func(w http.ResponseWriter) {
	return func(w http.ResponseWriter) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"choices":[{"index":0,"message":{"role":"assistant","content":null,"tool_calls":`+calls+`},"finish_reason":"tool_calls"}],
			"usage":{"prompt_tokens":10,"completion_tokens":5}}`)
	}
}

// TestOpenAIToolCalls: the request carries the tool definitions; a reply
// calling tools is answered with their replies in tool messages, and the
// next reply with text is the completion, with the usage of both rounds.
func TestOpenAIToolCalls(t *testing.T) {
	f := &fakeOpenAI{responses: []func(http.ResponseWriter){
		toolCallsReply(`[{"id":"c1","type":"function","function":{"name":"web-search","arguments":"{\"q\":\"rain\"}"}},
			{"id":"c2","type":"function","function":{"name":"network","arguments":"{\"url\":\"https://example.com\"}"}}]`),
		ok("Rain is wet.", `,"usage":{"prompt_tokens":20,"completion_tokens":4}`),
	}}
	srv := httptest.NewServer(f)
	defer srv.Close()
	tools := &toolLog{}
	h := NewHost(Config{LLM: NewOpenAI(OpenAIConfig{BaseURL: srv.URL}), Tools: []ToolProvider{tools}})
	res := h.Execute(RunOptions{}, func(r *Run) Value {
		return r.LLM(sAgent.At(), String("Find facts."), agentOptions(Field{"network", String("allow")}))
	})
	if res.Status != StatusSuccess || res.Output.Str() != "Rain is wet." {
		t.Fatalf("result %s", resultJSON(res))
	}
	if res.Usage.PromptTokens != 30 || res.Usage.CompletionTokens != 9 {
		t.Errorf("usage %+v, want the sum of both rounds (30, 9)", res.Usage)
	}
	if f.count() != 2 {
		t.Fatalf("%d requests, want 2", f.count())
	}
	first := string(AppendJSON(nil, f.requests[0]))
	for _, want := range []string{
		`"tools":[{"type":"function","function":{"name":"web-search","description":"The skill \"web-search\".","parameters":{"type":"object"}}}`,
		`{"type":"function","function":{"name":"network","description":`,
	} {
		if !strings.Contains(first, want) {
			t.Errorf("the first request lacks %s:\n%s", want, first)
		}
	}
	msgs := ObjGet(f.requests[1], String("messages")).Elems()
	if len(msgs) != 4 {
		t.Fatalf("the second request has %d messages, want user, assistant, tool, tool: %s", len(msgs), AppendJSON(nil, f.requests[1]))
	}
	if got := string(AppendJSON(nil, msgs[2])); got != `{"role":"tool","tool_call_id":"c1","content":"web-search result"}` {
		t.Errorf("tool message %s", got)
	}
	if got := ObjGet(msgs[1], String("tool_calls")).Len(); got != 2 {
		t.Errorf("the assistant message carries %d tool calls, want 2", got)
	}
	if got := strings.Join(tools.calls, "\n"); got != "web-search {\"q\":\"rain\"}\nnetwork {\"url\":\"https://example.com\"}" {
		t.Errorf("tool calls %s", got)
	}
	if k0, k1 := f.headers[0].Get("Idempotency-Key"), f.headers[1].Get("Idempotency-Key"); k0 == "" || k1 != k0+"/round-1" {
		t.Errorf("idempotency keys %q, %q: each round needs its own", k0, k1)
	}
}

// TestOpenAIToolRounds: a model that keeps calling tools fails the call
// after MaxToolRounds requests.
func TestOpenAIToolRounds(t *testing.T) {
	f := &fakeOpenAI{responses: []func(http.ResponseWriter){
		toolCallsReply(`[{"id":"c1","type":"function","function":{"name":"web-search","arguments":"{}"}}]`),
	}}
	srv := httptest.NewServer(f)
	defer srv.Close()
	h := NewHost(Config{LLM: NewOpenAI(OpenAIConfig{BaseURL: srv.URL}), Tools: []ToolProvider{&toolLog{}}})
	res := h.Execute(RunOptions{}, func(r *Run) Value {
		return r.LLM(sAgent.At(), String("Find facts."), agentOptions())
	})
	if k := res.Output.ErrKind(); k != "tool_rounds" || f.count() != MaxToolRounds {
		t.Errorf("%s after %d requests, want kind tool_rounds after %d", resultJSON(res), f.count(), MaxToolRounds)
	}
	// Without tools offered, a reply that calls tools is a bad response.
	h = NewHost(Config{LLM: NewOpenAI(OpenAIConfig{BaseURL: srv.URL})})
	res = h.Execute(RunOptions{}, func(r *Run) Value { return r.LLM(sAgent.At(), String("x"), Object(Field{"model", String("m")})) })
	if k := res.Output.ErrKind(); k != "bad_response" {
		t.Errorf("tool calls nobody offered: %s, want kind bad_response", resultJSON(res))
	}
}

func TestToolCallBadArguments(t *testing.T) {
	calls, ce := parseToolCalls(Object(Field{"tool_calls", List(Object(
		Field{"id", String("c1")},
		Field{"function", Object(Field{"name", String("web-search")}, Field{"arguments", String("{not json")})},
	))}))
	if ce != nil || len(calls) != 1 {
		t.Fatalf("calls %v, %v", calls, ce)
	}
	// A provider that cannot send tools gets no CallTool.
	NewHost(Config{LLM: plainLLM{}}).Execute(RunOptions{}, func(r *Run) Value {
		req := &LLMRequest{}
		r.offerTools(sAgent.At(), "researcher", req, agentOptions(), DefaultRetryPolicy())
		if req.CallTool != nil || req.Tools != nil {
			t.Error("a provider that cannot send tools got them")
		}
		return Value{}
	})
	tools := &toolLog{}
	var got Value
	NewHost(Config{LLM: &MockLLM{}, Tools: []ToolProvider{tools}}).Execute(RunOptions{}, func(r *Run) Value {
		req := &LLMRequest{}
		r.offerTools(sAgent.At(), "researcher", req, agentOptions(), DefaultRetryPolicy())
		got = req.CallTool(context.Background(), calls[0])
		return Value{}
	})
	if got.ErrKind() != "bad_arguments" || len(tools.calls) != 0 {
		t.Errorf("a call with arguments that are not JSON: %s, the provider got %v", AppendJSON(nil, got), tools.calls)
	}
}
