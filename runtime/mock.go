package runtime

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
)

// Mock files script the effects of a run for tests and demos.
//
// A mock LLM file is a JSON object whose keys are matched as substrings of
// the rendered prompt (the question of a judgement), in file order, the
// first match winning; the key "__default__" matches anything. A mock
// tools file maps tool names to replies ("__default__" answers any tool
// not listed). A reply is:
//
//   - any JSON value: the completion (a string as it is) or the tool's
//     reply; the tool reply "PENDING" suspends the run;
//   - {"$error": {"kind": "timeout", "message": "…"}}: a failed call of
//     that kind (retried when the kind is retryable);
//   - {"$sequence": [reply, …]}: successive calls get successive replies,
//     the last one repeating; counted per run (calls made outside a run,
//     as genesisc plan makes them, share one count per parsed file);
//   - {"$reply": value, "$usage": {"prompt_tokens": n,
//     "completion_tokens": n, "cost": usd}}: a reply with the usage the
//     call reports. Without $usage a mock LLM reports ceil(bytes/4) tokens
//     of prompt and of completion text, and no cost;
//   - {"$tool_calls": [{"name": tool, "args": {…}}, …], "$reply": value}
//     (an LLM reply, $usage allowed): the model calls these tools, in
//     order, before it answers value; the call must offer them
//     (LLMRequest.Tools: an agent's skills and permissions), and each is
//     served as the run serves the model's tool calls (agenttools.go).

type mockReply struct {
	value     Value
	toolCalls []ToolCall // $tool_calls: made before the reply
	err       *CallError
	usage     *Usage
	seq       []mockReply
}

type mockEntry struct {
	key    string
	any    bool   // __default__
	seqKey string // the Call.Seq key of a $sequence
	reply  mockReply
	// outside counts the $sequence replies of calls without a run.
	outside *atomic.Int64
}

func parseMockFile(data []byte, what string) ([]mockEntry, error) {
	root, err := ParseJSONExt(data)
	if err != nil {
		return nil, fmt.Errorf("mock %s file: %w", what, err)
	}
	if root.k != KindObject {
		return nil, fmt.Errorf("mock %s file: expected a JSON object, got a %s", what, root.k)
	}
	entries := make([]mockEntry, 0, root.Len())
	for i := 0; i < root.Len(); i++ {
		k, v := root.Field(i)
		rep, err := parseMockReply(v, true)
		if err != nil {
			return nil, fmt.Errorf("mock %s file: key %q: %v", what, k, err)
		}
		entries = append(entries, mockEntry{key: k, any: k == "__default__", seqKey: what + ":" + strconv.Itoa(i), reply: rep, outside: new(atomic.Int64)})
	}
	return entries, nil
}

func parseMockReply(v Value, top bool) (mockReply, error) {
	switch v.k {
	case KindError:
		return mockReply{err: &CallError{Kind: v.s, Message: v.h.msg}}, nil
	case KindObject:
		if v.Len() == 1 {
			switch k, x := v.Field(0); k {
			case "$error":
				return mockReply{}, fmt.Errorf(`$error needs an object {"kind": string, "message": string}`)
			case "$tool_calls":
				return mockReply{}, fmt.Errorf(`$tool_calls needs a $reply beside it: what the model answers after the calls`)
			case "$sequence":
				if !top {
					return mockReply{}, fmt.Errorf("$sequence inside $sequence")
				}
				if x.k != KindList || x.Len() == 0 {
					return mockReply{}, fmt.Errorf("$sequence needs a non-empty list of replies")
				}
				seq := make([]mockReply, x.Len())
				for i, e := range x.Elems() {
					r, err := parseMockReply(e, false)
					if err != nil {
						return mockReply{}, fmt.Errorf("$sequence[%d]: %v", i, err)
					}
					seq[i] = r
				}
				return mockReply{seq: seq}, nil
			}
		}
		if rv, ok := v.Get("$reply"); ok {
			rep := mockReply{value: rv}
			for _, k := range v.Keys() {
				if k != "$reply" && k != "$usage" && k != "$tool_calls" {
					return mockReply{}, fmt.Errorf("unexpected key %q beside $reply", k)
				}
			}
			if tc, ok := v.Get("$tool_calls"); ok {
				calls, err := parseMockToolCalls(tc)
				if err != nil {
					return mockReply{}, err
				}
				rep.toolCalls = calls
			}
			if u, ok := v.Get("$usage"); ok {
				usage, err := parseUsage(u)
				if err != nil {
					return mockReply{}, err
				}
				rep.usage = &usage
			}
			return rep, nil
		}
	}
	return mockReply{value: v}, nil
}

func parseUsage(u Value) (Usage, error) {
	if u.k != KindObject {
		return Usage{}, fmt.Errorf("$usage needs an object")
	}
	var usage Usage
	for i := 0; i < u.Len(); i++ {
		k, x := u.Field(i)
		n, ok := x.AsNumber()
		if !ok || n < 0 || n != n {
			return Usage{}, fmt.Errorf("$usage.%s needs a number ≥ 0", k)
		}
		switch k {
		case "prompt_tokens":
			usage.PromptTokens = int(n)
		case "completion_tokens":
			usage.CompletionTokens = int(n)
		case "cost":
			usage.Cost = n
		default:
			return Usage{}, fmt.Errorf("unexpected key %q in $usage", k)
		}
	}
	return usage, nil
}

// pick returns the reply of entry e for this call.
func (e *mockEntry) pick(c *Call) *mockReply {
	if len(e.reply.seq) == 0 {
		return &e.reply
	}
	var i int
	if c == nil || c.run == nil {
		i = int(e.outside.Add(1) - 1)
	} else {
		i = c.Seq(e.seqKey)
	}
	if i >= len(e.reply.seq) {
		i = len(e.reply.seq) - 1
	}
	return &e.reply.seq[i]
}

// MockLLM is the scripted LLM provider of a mock file. Parse the file once
// per process; runs keep their own $sequence counters.
type MockLLM struct{ entries []mockEntry }

// ProviderName is "mock" (ProviderNamer).
func (m *MockLLM) ProviderName() string { return "mock" }

// ModelName is the model the program names, "" when none: a mock
// answers for any (ProviderNamer).
func (m *MockLLM) ModelName(req *LLMRequest) string { return req.Model }

// ParseMockLLM parses a mock LLM file.
func ParseMockLLM(data []byte) (*MockLLM, error) {
	entries, err := parseMockFile(data, "llm")
	if err != nil {
		return nil, err
	}
	return &MockLLM{entries: entries}, nil
}

// LoadMockLLM reads and parses a mock LLM file.
func LoadMockLLM(path string) (*MockLLM, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return ParseMockLLM(data)
}

func (m *MockLLM) match(prompt string) *mockEntry {
	for i := range m.entries {
		e := &m.entries[i]
		if e.any || strings.Contains(prompt, e.key) {
			return e
		}
	}
	return nil
}

// Complete answers with the reply of the first key the prompt contains.
func (m *MockLLM) Complete(ctx context.Context, c *Call, req *LLMRequest) (LLMResponse, error) {
	e := m.match(req.Prompt)
	if e == nil {
		return LLMResponse{}, &CallError{Kind: "mock", Message: "no key of the mock LLM file matches the prompt " + strconv.Quote(truncate(req.Prompt, 60))}
	}
	rep := e.pick(c)
	if rep.err != nil {
		return LLMResponse{}, rep.err
	}
	if len(rep.toolCalls) > 0 {
		if err := mockToolCalls(ctx, req, rep.toolCalls); err != nil {
			return LLMResponse{}, err
		}
	}
	resp := LLMResponse{Value: rep.value}
	if rep.usage != nil {
		resp.Usage = *rep.usage
	} else {
		n := len(rep.value.s)
		if rep.value.k != KindString {
			n = len(AppendJSON(nil, rep.value))
		}
		resp.Usage = Usage{PromptTokens: (len(req.Prompt) + 3) / 4, CompletionTokens: (n + 3) / 4}
	}
	return resp, nil
}

func (m *MockLLM) observeLLM(c *Call, req *LLMRequest) {
	if e := m.match(req.Prompt); e != nil {
		e.pick(c)
	}
}

func (m *MockLLM) observeTool(*Call, string) {}

// MockTools is the scripted tool provider of a mock tools file.
type MockTools struct {
	entries []mockEntry
	byName  map[string]int
	def     int    // index of __default__, or -1
	name    string // as --tools named it ("" when not from ParseTools)
}

// String returns the provider as --tools names it.
func (m *MockTools) String() string { return m.name }

// ParseMockTools parses a mock tools file.
func ParseMockTools(data []byte) (*MockTools, error) {
	entries, err := parseMockFile(data, "tools")
	if err != nil {
		return nil, err
	}
	m := &MockTools{entries: entries, byName: make(map[string]int, len(entries)), def: -1}
	for i, e := range entries {
		if e.any {
			m.def = i
			continue
		}
		m.byName[e.key] = i
	}
	return m, nil
}

// LoadMockTools reads and parses a mock tools file.
func LoadMockTools(path string) (*MockTools, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return ParseMockTools(data)
}

func (m *MockTools) entry(name string) *mockEntry {
	i, ok := m.byName[name]
	if !ok {
		if m.def < 0 {
			return nil
		}
		i = m.def
	}
	return &m.entries[i]
}

// CallTool answers with the tool's scripted reply.
func (m *MockTools) CallTool(_ context.Context, c *Call, name string, _ Value) (Value, error) {
	e := m.entry(name)
	if e == nil {
		return Value{}, ErrUnknownTool
	}
	rep := e.pick(c)
	if rep.err != nil {
		return Value{}, rep.err
	}
	return rep.value, nil
}

func (m *MockTools) observeLLM(*Call, *LLMRequest) {}

func (m *MockTools) observeTool(c *Call, name string) {
	if e := m.entry(name); e != nil {
		e.pick(c)
	}
}
