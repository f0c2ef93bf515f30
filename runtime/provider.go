package runtime

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
)

// Usage is what an LLM call consumed.
type Usage struct {
	PromptTokens     int
	CompletionTokens int
	Cost             float64 // USD
}

// Tokens returns the prompt and completion tokens together.
func (u Usage) Tokens() int { return u.PromptTokens + u.CompletionTokens }

func (u *Usage) add(v Usage) {
	u.PromptTokens += v.PromptTokens
	u.CompletionTokens += v.CompletionTokens
	u.Cost += v.Cost
}

// CallError is a failed effect call: its kind (the kind of the error
// value the program sees) and message, whether it may succeed when tried
// again, and how long the service asked to wait first (Retry-After).
//
// Kinds used by this package: "timeout", "rate_limit", "unavailable"
// (transport errors, HTTP 409 and 5xx) and "conflict" (HTTP 409) are
// retryable by default; "bad_request", "auth", "bad_response", "schema",
// "judge", "tool", "unknown_tool", "config", "cancelled" are not.
type CallError struct {
	Kind       string
	Message    string
	RetryAfter time.Duration
}

func (e *CallError) Error() string { return e.Kind + ": " + e.Message }

// Errorf returns a *CallError of the given kind.
func Errorf(kind, format string, args ...any) *CallError {
	return &CallError{Kind: kind, Message: fmt.Sprintf(format, args...)}
}

// noLLMMessage is the message of an llm or judge call on a host without
// an LLM provider (kind "config"): it names what to set.
const noLLMMessage = "no LLM provider is configured: run with --llm mock:FILE or --llm openai:URL (in Go: runtime.Config.LLM)"

// ErrUnknownTool is returned by a ToolProvider that does not know a tool,
// so that the next provider is asked.
var ErrUnknownTool = errors.New("unknown tool")

// asCallError turns any error into a *CallError: context deadlines are
// timeouts, cancellations "cancelled", anything else kind def.
func asCallError(err error, def string) *CallError {
	var ce *CallError
	if errors.As(err, &ce) {
		return ce
	}
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		return &CallError{Kind: "timeout", Message: err.Error()}
	case errors.Is(err, context.Canceled):
		return &CallError{Kind: "cancelled", Message: err.Error()}
	}
	return &CallError{Kind: def, Message: err.Error()}
}

// Call describes one attempt of an effect to a provider.
type Call struct {
	Step    string        // the step's identity
	Attempt int           // 1 for the first attempt
	Timeout time.Duration // the provider must give up after it (0: none)
	run     *Run
	key     string // IdempotencyKey, once computed
}

// seqCount is how many times a run asked Call.Seq for key.
type seqCount struct {
	key string
	n   int
}

// Seq returns how many times this run asked Seq for key before, and
// counts this call: mock providers use it for $sequence replies. Parallel
// branches count from the block's start and the block adds their counts
// when it joins, so the numbers do not depend on timing.
func (c *Call) Seq(key string) int {
	if c.run == nil {
		return 0
	}
	r := c.run
	for i := range r.seqCounts {
		if r.seqCounts[i].key == key {
			n := r.seqCounts[i].n
			r.seqCounts[i].n++
			return n
		}
	}
	r.seqCounts = append(r.seqCounts, seqCount{key, 1})
	return 0
}

// LLMRequest is one completion or judgement.
type LLMRequest struct {
	Prompt  string
	System  string // from options.system
	Model   string // from options.model; "" means the provider's default
	Schema  Value  // options.schema: a JSON schema object the reply must satisfy, or unit
	Judge   bool   // a boolean judgement: the reply is read as true or false
	Options Value  // every option, for providers that read more (temperature, max_tokens, …)

	// Tools are the tools the model may call (options skills and
	// permissions, agenttools.go), for providers that implement
	// ToolTaker; CallTool serves a call of one of them and returns the
	// reply the model gets (an error value when the call failed or was
	// rejected). Both are unset when the call offers no tools.
	Tools    []ToolDef
	CallTool func(ctx context.Context, call ToolCall) Value
}

// LLMResponse is a provider's answer: the completion text (a string), or
// a value when the provider returns structured data (mock files), and
// what it consumed.
type LLMResponse struct {
	Value Value
	Usage Usage

	toolCalls []ToolCall // OpenAI: the tools the reply calls instead of answering
	message   Value      // OpenAI: the assistant message that calls them
}

// LLMProvider completes prompts. Complete makes one attempt: the run
// retries. A failed attempt returns a *CallError (any other error counts
// as kind "unavailable"). Providers must be safe for concurrent use.
type LLMProvider interface {
	Complete(ctx context.Context, c *Call, req *LLMRequest) (LLMResponse, error)
}

// ProviderNamer is implemented by LLM providers that name themselves in
// the trace (the "provider" and "model" of llm steps, which OpenTelemetry
// export turns into gen_ai.provider.name and gen_ai.request.model):
// ProviderName is the provider's name ("openai", "mock"), ModelName the
// model a request goes to ("" when the provider cannot tell). Both must
// be pure functions of the provider's configuration and the request.
type ProviderNamer interface {
	ProviderName() string
	ModelName(req *LLMRequest) string
}

// ToolProvider calls tools by name. CallTool returns ErrUnknownTool for a
// tool it does not serve, a *CallError for a failed call; the reply
// String("PENDING") suspends the run. Providers must be safe for
// concurrent use.
type ToolProvider interface {
	CallTool(ctx context.Context, c *Call, name string, args Value) (Value, error)
}

// ToolFunc is a tool written in Go, registered with Host.RegisterTool. A
// returned error becomes an error value (a *CallError keeps its kind,
// anything else is kind "tool").
type ToolFunc func(ctx context.Context, args Value) (Value, error)

// replayObserver is implemented by providers that keep per-run state (the
// $sequence counters of mock files): when the journal serves a call, the
// run tells the provider, so that the next real call sees the state it
// would have seen in the original run.
type replayObserver interface {
	observeLLM(c *Call, req *LLMRequest)
	observeTool(c *Call, name string)
}

// readJudgement reads a judgement reply: a bool value, or a string that
// is true/yes or false/no (any case, surrounding space and a final . or !
// ignored).
func readJudgement(v Value) Value {
	if v.k == KindBool || v.k == KindError {
		return v
	}
	if v.k == KindString {
		s := strings.ToLower(strings.TrimSpace(v.s))
		s = strings.TrimRight(s, ".!")
		switch s {
		case "true", "yes":
			return True
		case "false", "no":
			return False
		}
		return Error("judge", "the judgement is neither true nor false: "+truncate(v.s, 80))
	}
	return Error("judge", "the judgement must be true or false, got "+v.k.String())
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
