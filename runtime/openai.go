package runtime

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"
)

// OpenAIConfig configures the OpenAI-compatible provider.
type OpenAIConfig struct {
	// BaseURL is the server, e.g. "https://api.openai.com" or
	// "http://localhost:8000"; requests go to BaseURL/v1/chat/completions
	// (BaseURL/chat/completions when it already ends in /v1).
	BaseURL string
	APIKey  string // sent as "Authorization: Bearer KEY" when not empty
	Model   string // the default model; options.model overrides it
	// Models, when not nil, maps the program's model names to the
	// server's (ModelTable.Resolve) and prices them; Model is then only
	// the default when the table has none.
	Models *ModelTable
	// PromptPrice and CompletionPrice are USD per million tokens, for the
	// cost of a call when the server does not report usage.cost and
	// Models gives the model no price.
	PromptPrice, CompletionPrice float64
	Client                       *http.Client // nil: a client without its own timeout
	// MaxRetries is how many times a transient failure (HTTP 408, 409,
	// 429, 5xx, a broken connection) is retried: 0 means 3, a negative
	// number none. The wait is the server's Retry-After (seconds or an
	// HTTP date, or retry-after-ms), else 0.5 s doubling up to 20 s; a
	// Retry-After longer than MaxRetryAfter (0: 60 s) is not waited for:
	// the call fails with kind rate_limit or unavailable at once.
	MaxRetries    int
	MaxRetryAfter time.Duration
	// Now is the clock for Retry-After dates and Sleep the wait between
	// attempts (nil: time.Now and a timer); tests replace them.
	Now   func() time.Time
	Sleep func(ctx context.Context, d time.Duration) error
}

// DefaultOpenAIRetries is the number of retries of a transient failure.
const DefaultOpenAIRetries = 3

// OpenAI is an LLM provider speaking the OpenAI chat completions API
// (POST /v1/chat/completions), which vLLM, llama.cpp and Ollama speak
// too. It retries transient failures itself, in real time (see
// MaxRetries), and reports the others as a *CallError: 408 is "timeout",
// 409 "conflict", 429 "rate_limit", 5xx and transport errors
// "unavailable", 401/403 "auth", other 4xx "bad_request", an unreadable
// 200 body "bad_response", a refusal "refused", the call's timeout
// "timeout" (not retried here: the program's retry policy decides).
type OpenAI struct {
	cfg OpenAIConfig
	url string
}

// NewOpenAI returns the provider for cfg.
func NewOpenAI(cfg OpenAIConfig) *OpenAI {
	base := strings.TrimRight(cfg.BaseURL, "/")
	url := base + "/v1/chat/completions"
	if strings.HasSuffix(base, "/v1") {
		url = base + "/chat/completions"
	}
	if cfg.Client == nil {
		cfg.Client = &http.Client{}
	}
	if t := cfg.Models; t != nil && t.Default == "" && cfg.Model != "" {
		c := *t
		c.Default = cfg.Model
		cfg.Models = &c
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Sleep == nil {
		cfg.Sleep = sleepCtx
	}
	switch {
	case cfg.MaxRetries == 0:
		cfg.MaxRetries = DefaultOpenAIRetries
	case cfg.MaxRetries < 0:
		cfg.MaxRetries = 0
	}
	if cfg.MaxRetryAfter <= 0 {
		cfg.MaxRetryAfter = time.Minute
	}
	return &OpenAI{cfg: cfg, url: url}
}

// URL returns the endpoint the provider posts to.
func (o *OpenAI) URL() string { return o.url }

// ProviderName is "openai": the server speaks OpenAI's chat completions
// (ProviderNamer).
func (o *OpenAI) ProviderName() string { return "openai" }

// ModelName returns the server's model for req: the program's name
// mapped by the model table, or the default; "" when there is none
// (ProviderNamer).
func (o *OpenAI) ModelName(req *LLMRequest) string {
	m, _, err := o.model(req)
	if err != nil {
		return ""
	}
	return m
}

// StructuredOutput reports that the provider sends an llm call's
// output_schema to the model as response_format (coerce.go).
func (o *OpenAI) StructuredOutput() bool { return true }

// judgeSystem is the instruction added to a judgement.
const judgeSystem = "Answer with exactly one word: true or false."

// model returns the server's model for a request, and its prices (USD
// per million prompt and completion tokens).
func (o *OpenAI) model(req *LLMRequest) (string, [2]float64, error) {
	price := [2]float64{o.cfg.PromptPrice, o.cfg.CompletionPrice}
	if t := o.cfg.Models; t != nil {
		e, ok := t.Resolve(req.Model)
		if !ok {
			return "", price, &CallError{Kind: "config", Message: "no model: the program names none; set GENESIS_LLM_MODEL, a \"default\" in the models file, or --model"}
		}
		if e.HasPrice {
			price = [2]float64{e.PromptPrice, e.CompletionPrice}
		}
		return e.Model, price, nil
	}
	model := req.Model
	if model == "" {
		model = o.cfg.Model
	}
	if model == "" {
		return "", price, &CallError{Kind: "config", Message: "no model: set the model option or GENESIS_LLM_MODEL"}
	}
	return model, price, nil
}

// requestBody builds the chat completion request for the server's model.
func (o *OpenAI) requestBody(req *LLMRequest, model string) (Value, error) {
	var msgs []Value
	system := req.System
	if req.Judge {
		if system != "" {
			system += "\n\n"
		}
		system += judgeSystem
	}
	if system != "" {
		msgs = append(msgs, Object(Field{"role", String("system")}, Field{"content", String(system)}))
	}
	msgs = append(msgs, Object(Field{"role", String("user")}, Field{"content", String(req.Prompt)}))
	fields := []Field{{"model", String(model)}, {"messages", List(msgs...)}}
	for _, k := range []string{"temperature", "max_tokens", "top_p", "seed", "stop"} {
		if v, ok := req.Options.Get(k); ok && !v.IsUnit() {
			fields = append(fields, Field{k, v})
		}
	}
	if len(req.Tools) > 0 {
		fields = append(fields, Field{"tools", toolsJSON(req.Tools)})
	}
	if o := req.Options; req.Schema.k != KindObject && !req.Judge && ObjGet(o, String("output_schema")).Kind() == KindObject {
		// A schema to coerce to (coerce.go), not to enforce: not strict,
		// which would refuse keywords such as minLength.
		fields = append(fields, Field{"response_format", Object(
			Field{"type", String("json_schema")},
			Field{"json_schema", Object(Field{"name", String("output")}, Field{"schema", structuredSchema(ObjGet(o, String("output_schema")))})},
		)})
	}
	if req.Schema.k == KindObject {
		fields = append(fields, Field{"response_format", Object(
			Field{"type", String("json_schema")},
			Field{"json_schema", Object(
				Field{"name", String("output")},
				Field{"schema", req.Schema},
				Field{"strict", True},
			)},
		)})
	}
	return Object(fields...), nil
}

// Complete posts a chat completion request, retrying transient failures.
func (o *OpenAI) Complete(ctx context.Context, c *Call, req *LLMRequest) (LLMResponse, error) {
	model, price, err := o.model(req)
	if err != nil {
		return LLMResponse{}, err
	}
	body, err := o.requestBody(req, model)
	if err != nil {
		return LLMResponse{}, err
	}
	if len(req.Tools) > 0 && req.CallTool != nil {
		return o.completeTools(ctx, c, req, body, price)
	}
	resp, err := o.send(ctx, c, AppendJSON(nil, body), c.IdempotencyKey(), price)
	if err == nil && len(resp.toolCalls) > 0 && resp.Value.Str() == "" {
		return LLMResponse{Usage: resp.Usage}, &CallError{Kind: "bad_response", Message: "the model called tools, but the request offered none"}
	}
	return resp, err
}

// send posts one request body, retrying transient failures, and prices
// its usage at price (USD per million prompt and completion tokens).
func (o *OpenAI) send(ctx context.Context, c *Call, data []byte, key string, price [2]float64) (LLMResponse, error) {
	var timeout time.Duration
	if c != nil {
		timeout = c.Timeout
	}
	backoff := 500 * time.Millisecond
	for attempt := 0; ; attempt++ {
		resp, ce, transient := o.post(ctx, timeout, data, key, price)
		if ce == nil {
			return resp, nil
		}
		if !transient || attempt >= o.cfg.MaxRetries || ctx.Err() != nil {
			return LLMResponse{}, ce
		}
		wait := ce.RetryAfter
		if wait == 0 {
			wait = backoff
			if backoff < 20*time.Second {
				backoff *= 2
			}
		}
		if wait > o.cfg.MaxRetryAfter {
			return LLMResponse{}, ce
		}
		if err := o.cfg.Sleep(ctx, wait); err != nil {
			return LLMResponse{}, ce
		}
	}
}

// post makes one HTTP request and says whether a failure is transient.
//
// key, when not empty, is sent as the Idempotency-Key header: the same
// for the client's own retries of one attempt, and for the attempt a
// resumed run makes again.
func (o *OpenAI) post(ctx context.Context, timeout time.Duration, body []byte, key string, price [2]float64) (LLMResponse, *CallError, bool) {
	if timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, timeout)
		defer cancel()
	}
	hreq, err := http.NewRequestWithContext(ctx, http.MethodPost, o.url, bytes.NewReader(body))
	if err != nil {
		return LLMResponse{}, &CallError{Kind: "config", Message: err.Error()}, false
	}
	hreq.Header.Set("Content-Type", "application/json")
	hreq.Header.Set("Accept", "application/json")
	if key != "" {
		hreq.Header.Set("Idempotency-Key", key)
	}
	if o.cfg.APIKey != "" {
		hreq.Header.Set("Authorization", "Bearer "+o.cfg.APIKey)
	}
	resp, err := o.cfg.Client.Do(hreq)
	if err != nil {
		ce := transportError(ctx, err)
		return LLMResponse{}, ce, ce.Kind == "unavailable"
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		ce := transportError(ctx, err)
		return LLMResponse{}, ce, ce.Kind == "unavailable"
	}
	if resp.StatusCode != http.StatusOK {
		code := resp.StatusCode
		return LLMResponse{}, o.statusError(resp, data), code == 408 || code == 409 || code == 429 || code >= 500
	}
	r, ce := parseResponse(data, price)
	return r, ce, false
}

func transportError(ctx context.Context, err error) *CallError {
	var ne net.Error
	if errors.Is(err, context.DeadlineExceeded) || ctx.Err() == context.DeadlineExceeded || errors.As(err, &ne) && ne.Timeout() {
		return &CallError{Kind: "timeout", Message: "the LLM call timed out: " + err.Error()}
	}
	if errors.Is(err, context.Canceled) {
		return &CallError{Kind: "cancelled", Message: err.Error()}
	}
	return &CallError{Kind: "unavailable", Message: err.Error()}
}

func (o *OpenAI) statusError(resp *http.Response, data []byte) *CallError {
	msg := resp.Status
	if v, err := ParseJSON(data); err == nil {
		if m, ok := PathGet(v, String("error.message")).AsString(); ok && m != "" {
			msg += ": " + m
		}
	} else if len(data) > 0 {
		msg += ": " + truncate(strings.TrimSpace(string(data)), 200)
	}
	ce := &CallError{Message: msg}
	switch code := resp.StatusCode; {
	case code == http.StatusRequestTimeout:
		ce.Kind = "timeout"
	case code == http.StatusConflict:
		ce.Kind = "conflict"
	case code == http.StatusTooManyRequests:
		ce.Kind = "rate_limit"
	case code >= 500:
		ce.Kind = "unavailable"
	case code == http.StatusUnauthorized || code == http.StatusForbidden:
		ce.Kind = "auth"
	default:
		ce.Kind = "bad_request"
	}
	ce.RetryAfter = retryAfter(resp.Header, o.cfg.Now())
	return ce
}

// retryAfter reads Retry-After (seconds, or an HTTP date) and the
// retry-after-ms header some servers send.
func retryAfter(h http.Header, now time.Time) time.Duration {
	if s := h.Get("Retry-After-Ms"); s != "" {
		if ms, err := strconv.ParseFloat(s, 64); err == nil && ms > 0 && ms < 1e12 {
			return time.Duration(ms * float64(time.Millisecond))
		}
	}
	s := strings.TrimSpace(h.Get("Retry-After"))
	if s == "" {
		return 0
	}
	if secs, err := strconv.ParseFloat(s, 64); err == nil {
		if secs <= 0 || math.IsNaN(secs) {
			return 0
		}
		if secs > 1e9 {
			secs = 1e9
		}
		return time.Duration(secs * float64(time.Second))
	}
	if t, err := http.ParseTime(s); err == nil {
		if d := t.Sub(now); d > 0 {
			return d
		}
	}
	return 0
}

// parseResponse reads a chat completion; price prices its tokens when
// the server reports no cost.
func parseResponse(data []byte, price [2]float64) (LLMResponse, *CallError) {
	v, err := ParseJSON(data)
	if err != nil {
		return LLMResponse{}, &CallError{Kind: "bad_response", Message: "the response is not JSON: " + err.Error()}
	}
	message := PathGet(v, String("choices.0.message"))
	calls, ce := parseToolCalls(message)
	if ce != nil {
		return LLMResponse{}, ce
	}
	content := ObjGet(message, String("content"))
	text, ok := content.AsString()
	if !ok && len(calls) == 0 {
		if r, ok := PathGet(v, String("choices.0.message.refusal")).AsString(); ok && r != "" {
			return LLMResponse{}, &CallError{Kind: "refused", Message: r}
		}
		return LLMResponse{}, &CallError{Kind: "bad_response", Message: "the response has no choices[0].message.content"}
	}
	var u Usage
	if usage, ok := v.Get("usage"); ok {
		u.PromptTokens = int(ObjGet(usage, String("prompt_tokens")).Num())
		u.CompletionTokens = int(ObjGet(usage, String("completion_tokens")).Num())
		if cost, ok := ObjGet(usage, String("cost")).AsNumber(); ok {
			u.Cost = cost
		} else {
			u.Cost = (float64(u.PromptTokens)*price[0] + float64(u.CompletionTokens)*price[1]) / 1e6
		}
	}
	return LLMResponse{Value: String(text), Usage: u, toolCalls: calls, message: message}, nil
}

// LLMOptions are what a command line adds to an LLM provider's spec.
type LLMOptions struct {
	ModelsFile string // --models FILE: the model alias file (else $GENESIS_MODELS)
	Model      string // --model NAME: every call uses this model
}

// ParseLLM is ParseLLMWith without options.
func ParseLLM(spec string) (LLMProvider, error) { return ParseLLMWith(spec, LLMOptions{}) }

// ParseLLMWith returns the LLM provider of a flag value:
//
//	mock:FILE      a mock LLM file (parsed now, once); it sees the
//	               program's model names, untranslated
//	openai:URL     an OpenAI-compatible server at URL (http:// or
//	               https://, with a host); the program's model names are
//	               mapped by the ModelTable of the environment, the models
//	               file and o.Model (LoadModelTable), the key comes from
//	               OPENAI_API_KEY.
//
// The models file and the environment are checked for either kind, so a
// broken one is reported whatever the provider. Every error is the
// command line's (a usage error).
func ParseLLMWith(spec string, o LLMOptions) (LLMProvider, error) {
	kind, arg, ok := strings.Cut(spec, ":")
	if !ok || arg == "" || kind != "mock" && kind != "openai" {
		if ok && kind != "mock" && kind != "openai" {
			return nil, errors.New("llm provider: unknown kind " + strconv.Quote(kind) + " in " + strconv.Quote(spec) + " (expected mock:FILE or openai:URL)")
		}
		return nil, errors.New("llm provider: expected mock:FILE or openai:URL, got " + strconv.Quote(spec))
	}
	table, err := LoadModelTable(o.ModelsFile, o.Model)
	if err != nil {
		return nil, err
	}
	if kind == "mock" {
		return LoadMockLLM(arg)
	}
	if err := checkServerURL(arg); err != nil {
		return nil, fmt.Errorf("llm provider: openai:%s: %v", arg, err)
	}
	cfg := OpenAIConfig{BaseURL: arg, APIKey: os.Getenv("OPENAI_API_KEY"), Model: table.Default, Models: table}
	if table.price != nil {
		cfg.PromptPrice, cfg.CompletionPrice = table.price[0], table.price[1]
	}
	return NewOpenAI(cfg), nil
}

// checkServerURL checks a server's base URL: absolute, http or https,
// with a host, and no query or fragment (the client appends a path).
func checkServerURL(s string) error {
	u, err := url.Parse(s)
	switch {
	case err != nil:
		return fmt.Errorf("not a URL: %v", err)
	case u.Scheme != "http" && u.Scheme != "https":
		return errors.New("the URL must start with http:// or https:// (e.g. openai:https://api.openai.com)")
	case u.Host == "" || u.Hostname() == "":
		return errors.New("the URL has no host (e.g. openai:http://localhost:8000)")
	case u.RawQuery != "" || u.Fragment != "" || u.User != nil:
		return errors.New("the URL must not have a query, a fragment or credentials (the key comes from OPENAI_API_KEY)")
	}
	if p := u.Port(); p != "" {
		if n, err := strconv.Atoi(p); err != nil || n < 1 || n > 65535 {
			return fmt.Errorf("port %q is not a port number", p)
		}
	}
	return nil
}
