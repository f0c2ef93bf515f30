package runtime

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
)

// OpenTelemetry export (docs/runtime.md "OpenTelemetry"). The exporter
// is a consumer of the JSON Lines trace, as the Narrator is: OTelRun is
// the io.Writer a run's trace goes to, and when the run's run_completed
// arrives it turns the run's events into spans (otelSpans) and hands
// them to the SDK with the trace's own times and ids derived from the
// run id and the step identities (otelIDs). A replay writes the same
// events, so it exports the same spans.

// DefaultOTelTimeout is how long the command waits at its end, at most,
// for the spans to be sent (--otel-timeout).
const DefaultOTelTimeout = 5 * time.Second

// OTelConfig configures the OTLP/HTTP export of traces. The zero value
// with an Endpoint sends http/protobuf there; everything else the
// exporter reads from the standard environment (OTEL_EXPORTER_OTLP_*
// headers, timeout, compression, certificates; OTEL_SERVICE_NAME and
// OTEL_RESOURCE_ATTRIBUTES for the resource).
type OTelConfig struct {
	// Endpoint is the traces URL (http:// or https://); "" leaves it to
	// OTEL_EXPORTER_OTLP_TRACES_ENDPOINT or OTEL_EXPORTER_OTLP_ENDPOINT.
	Endpoint string
	// JSON sends http/json instead of http/protobuf.
	JSON bool
	// Timeout bounds Shutdown (DefaultOTelTimeout when ≤ 0) and each
	// export.
	Timeout time.Duration
	// Warn receives the one warning of a failed export (os.Stderr when
	// nil).
	Warn io.Writer
}

// OTelConfigFromEnv returns the export configuration that the --otel
// flag's value flagURL (may be "") and the standard environment ask
// for, and whether any export is asked for at all: --otel, or
// OTEL_EXPORTER_OTLP_TRACES_ENDPOINT or OTEL_EXPORTER_OTLP_ENDPOINT set,
// unless OTEL_SDK_DISABLED=true or OTEL_TRACES_EXPORTER=none. The
// protocol (OTEL_EXPORTER_OTLP_TRACES_PROTOCOL, else
// OTEL_EXPORTER_OTLP_PROTOCOL) must be http/protobuf (the default) or
// http/json: grpc and anything else are errors. flagURL is a base URL as
// OTEL_EXPORTER_OTLP_ENDPOINT is: /v1/traces is appended unless its path
// already ends so.
func OTelConfigFromEnv(flagURL string) (OTelConfig, bool, error) {
	var c OTelConfig
	env := func(k string) string { return strings.TrimSpace(os.Getenv(k)) }
	asked := flagURL != "" || env("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") != "" || env("OTEL_EXPORTER_OTLP_ENDPOINT") != ""
	if !asked {
		return c, false, nil
	}
	if flagURL == "" && (strings.EqualFold(env("OTEL_SDK_DISABLED"), "true") || env("OTEL_TRACES_EXPORTER") == "none") {
		return c, false, nil
	}
	proto, from := env("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL"), "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL"
	if proto == "" {
		proto, from = env("OTEL_EXPORTER_OTLP_PROTOCOL"), "OTEL_EXPORTER_OTLP_PROTOCOL"
	}
	switch proto {
	case "", "http/protobuf":
	case "http/json":
		c.JSON = true
	case "grpc":
		return c, true, fmt.Errorf("%s=grpc: traces are exported over OTLP/HTTP only; use http/protobuf (the default) or http/json, and the collector's HTTP port (4318)", from)
	default:
		return c, true, fmt.Errorf("%s=%q: want http/protobuf or http/json", from, proto)
	}
	if flagURL != "" {
		u, err := otelURL(flagURL)
		if err != nil {
			return c, true, fmt.Errorf("--otel: %v", err)
		}
		c.Endpoint = u
	}
	for _, k := range []string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_EXPORTER_OTLP_ENDPOINT"} {
		if v := env(k); v != "" && flagURL == "" {
			if _, err := otelURL(v); err != nil {
				return c, true, fmt.Errorf("%s: %v", k, err)
			}
		}
	}
	return c, true, nil
}

// otelURL checks an endpoint URL (absolute, http or https, with a host)
// and returns the traces URL of a base URL: /v1/traces appended unless
// the path ends with it.
func otelURL(s string) (string, error) {
	u, err := url.Parse(s)
	switch {
	case err != nil:
		return "", fmt.Errorf("not a URL: %v", err)
	case u.Scheme != "http" && u.Scheme != "https":
		return "", fmt.Errorf("%q: the URL must start with http:// or https:// (e.g. http://localhost:4318)", s)
	case u.Hostname() == "":
		return "", fmt.Errorf("%q: the URL has no host (e.g. http://localhost:4318)", s)
	}
	if strings.HasSuffix(strings.TrimRight(s, "/"), "/v1/traces") {
		return s, nil
	}
	return strings.TrimRight(s, "/") + "/v1/traces", nil
}

// OTel exports the traces of a command's runs to an OTLP/HTTP endpoint.
// Export failures never fail a run: the first one is reported once on
// Warn, and the spans of later runs are dropped. Close flushes and
// shuts the exporter down within the timeout.
type OTel struct {
	tp      *sdktrace.TracerProvider
	tracer  trace.Tracer
	timeout time.Duration
	exp     *otelExporter
	closed  sync.Once
}

// NewOTel starts an exporter with configuration c, whose spans name the
// service OTEL_SERVICE_NAME (default "genesis").
func NewOTel(c OTelConfig) (*OTel, error) {
	if c.Timeout <= 0 {
		c.Timeout = DefaultOTelTimeout
	}
	if c.Warn == nil {
		c.Warn = os.Stderr
	}
	opts := []otlptracehttp.Option{
		otlptracehttp.WithTimeout(c.Timeout),
		// Retries stop where the command stops waiting.
		otlptracehttp.WithRetry(otlptracehttp.RetryConfig{Enabled: true, InitialInterval: 200 * time.Millisecond, MaxInterval: time.Second, MaxElapsedTime: c.Timeout}),
	}
	if c.Endpoint != "" {
		opts = append(opts, otlptracehttp.WithEndpointURL(c.Endpoint))
	}
	if c.JSON {
		opts = append(opts, otlptracehttp.WithEncoding(otlptracehttp.EncodingJSON))
	}
	inner, err := otlptracehttp.New(context.Background(), opts...)
	if err != nil {
		return nil, fmt.Errorf("opentelemetry: %v", err)
	}
	return newOTel(inner, c)
}

// newOTel is NewOTel with the exporter inner (a test's).
func newOTel(inner sdktrace.SpanExporter, c OTelConfig) (*OTel, error) {
	if c.Timeout <= 0 {
		c.Timeout = DefaultOTelTimeout
	}
	if c.Warn == nil {
		c.Warn = os.Stderr
	}
	res, err := resource.New(context.Background(),
		resource.WithAttributes(attribute.String("service.name", "genesis")),
		resource.WithFromEnv(), // OTEL_SERVICE_NAME, OTEL_RESOURCE_ATTRIBUTES
		resource.WithTelemetrySDK())
	if err != nil {
		return nil, fmt.Errorf("opentelemetry: the resource: %v", err)
	}
	exp := &otelExporter{inner: inner, warn: c.Warn}
	tp := sdktrace.NewTracerProvider(
		sdktrace.WithResource(res),
		sdktrace.WithIDGenerator(otelIDGen{}),
		sdktrace.WithSampler(sdktrace.AlwaysSample()),
		// Blocking: a run's spans arrive at once, and a full queue must
		// not drop them (a failed export makes the exporter drop
		// everything after it, so blocking stays bounded).
		sdktrace.WithBatcher(exp, sdktrace.WithBlocking(), sdktrace.WithExportTimeout(c.Timeout)),
	)
	return &OTel{tp: tp, tracer: tp.Tracer("github.com/genesis-toolchain/genesis/runtime"), timeout: c.Timeout, exp: exp}, nil
}

// Close sends the spans still queued and shuts the exporter down, within
// the configured timeout. A failure is warned about (once), not returned:
// the export never changes a command's outcome. Later calls do nothing.
func (o *OTel) Close() {
	o.closed.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), o.timeout)
		defer cancel()
		if err := o.tp.Shutdown(ctx); err != nil {
			o.exp.fail(err)
		}
	})
}

// Run returns the trace writer of one run whose id is runID (the
// journal's run id, or RunOptions.RunID): the trace's ids derive from
// it. Write the run's JSON Lines trace to it (io.MultiWriter beside a
// file): its spans are exported when run_completed arrives. Its Write
// never fails.
func (o *OTel) Run(runID string) *OTelRun {
	return &OTelRun{o: o, runID: runID}
}

// otelExporter wraps the OTLP exporter: its first failure is warned
// about once, and then it drops every span, so that a dead endpoint costs
// the command one timeout, not one per batch.
type otelExporter struct {
	inner  sdktrace.SpanExporter
	warn   io.Writer
	failed atomic.Bool
	once   sync.Once
}

func (e *otelExporter) fail(err error) {
	e.failed.Store(true)
	e.once.Do(func() {
		fmt.Fprintf(e.warn, "warning: opentelemetry: exporting spans failed, the rest are dropped: %v\n", err)
	})
}

func (e *otelExporter) ExportSpans(ctx context.Context, spans []sdktrace.ReadOnlySpan) error {
	if e.failed.Load() {
		return nil
	}
	if err := e.inner.ExportSpans(ctx, spans); err != nil {
		e.fail(err)
	}
	return nil
}

func (e *otelExporter) Shutdown(ctx context.Context) error {
	if err := e.inner.Shutdown(ctx); err != nil && !e.failed.Load() {
		e.fail(err)
	}
	return nil
}

// OTelRun is the trace writer of one run (OTel.Run).
type OTelRun struct {
	o     *OTel
	runID string
	line  []byte
	b     otelBuilder
	done  bool
	// wall is the real time when run_started arrived: the start of a
	// virtual-clock run, whose trace has no time of its own.
	wall time.Time
}

// Write reads whole trace lines; a line that is not an event is ignored.
// It never fails, so that the run never stops for its export.
func (w *OTelRun) Write(p []byte) (int, error) {
	n := len(p)
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			w.line = append(w.line, p...)
			break
		}
		if len(w.line) > 0 {
			w.line = append(w.line, p[:i]...)
			w.event(w.line)
			w.line = w.line[:0]
		} else {
			w.event(p[:i])
		}
		p = p[i+1:]
	}
	return n, nil
}

func (w *OTelRun) event(line []byte) {
	if w.done {
		return
	}
	ev := w.parse(line)
	if ev == nil {
		return
	}
	if ev.Event == "run_started" {
		w.wall = time.Now()
	}
	w.b.add(ev)
	if ev.Event == "run_completed" {
		w.done = true
		base := w.wall
		if t, err := time.Parse(time.RFC3339Nano, w.b.startTime); err == nil {
			base = t
		}
		w.b.root.emit(context.Background(), w.o.tracer, otelIDsOf(w.runID), base)
	}
}

// parse reads a trace line: nil when it is not an event.
func (w *OTelRun) parse(line []byte) *otelEvent {
	var ev otelEvent
	if json.Unmarshal(line, &ev) != nil || ev.Event == "" {
		return nil
	}
	return &ev
}

// otelEvent is the part of a trace event that spans are made of.
type otelEvent struct {
	Event     string          `json:"event"`
	T         float64         `json:"t"`
	Program   string          `json:"program"`
	Clock     string          `json:"clock"`
	Time      string          `json:"time"`
	Step      string          `json:"step"`
	Name      string          `json:"name"`
	Kind      string          `json:"kind"`
	Status    string          `json:"status"`
	Attempts  int             `json:"attempts"`
	Tokens    *otelTokens     `json:"tokens"`
	Cost      *float64        `json:"cost"`
	Provider  string          `json:"provider"`
	Model     string          `json:"model"`
	Tool      string          `json:"tool"`
	Wait      string          `json:"wait"`
	Error     *otelError      `json:"error"`
	Reason    string          `json:"reason"`
	EventName string          `json:"event_name"`
	Steps     int             `json:"steps"`
	Data      json.RawMessage `json:"data"`
}

type otelTokens struct {
	Prompt     int64 `json:"prompt"`
	Completion int64 `json:"completion"`
}

type otelError struct {
	Kind    string  `json:"kind"`
	Message string  `json:"message"`
	Step    *string `json:"step"`
}

// otelSpan is a span being made of trace events: times in milliseconds
// since the run started, attributes and events in the order the events
// gave them.
type otelSpan struct {
	key        string // what its span id derives from
	name       string
	kind       trace.SpanKind
	start, end float64
	attrs      []attribute.KeyValue
	events     []otelSpanEvent
	status     codes.Code
	statusMsg  string
	children   []*otelSpan

	step     string      // the step's identity ("" for the run)
	toolSeen float64     // the end of the latest agent tool call
	calls    []*otelSpan // agent tool calls, made children of the chat span
}

type otelSpanEvent struct {
	name  string
	t     float64
	attrs []attribute.KeyValue
}

// otelBuilder turns a run's trace events, in order, into its span tree.
type otelBuilder struct {
	root      *otelSpan
	startTime string
	open      []*otelSpan          // steps started and not ended, innermost last
	last      map[string]*otelSpan // step identity → its latest span
	keys      map[string]int       // span id keys used, for occurrences
	failed    *otelSpan            // the latest step that failed
}

// span returns a new span whose id derives from role and step (and how
// many spans had both before).
func (b *otelBuilder) span(role, step string) *otelSpan {
	if b.keys == nil {
		b.keys = map[string]int{}
	}
	k := role + "\n" + step
	n := b.keys[k]
	b.keys[k] = n + 1
	if n > 0 {
		k += "\n" + strconv.Itoa(n)
	}
	return &otelSpan{key: k, step: step}
}

// parent returns the span a new step's span belongs to: the innermost
// open step (a parallel block), else the run.
func (b *otelBuilder) parent() *otelSpan {
	if len(b.open) > 0 {
		return b.open[len(b.open)-1]
	}
	return b.root
}

// stepOf returns the latest span of step id (nil when none).
func (b *otelBuilder) stepOf(id string) *otelSpan { return b.last[id] }

func (b *otelBuilder) add(ev *otelEvent) {
	if b.root == nil {
		if ev.Event != "run_started" {
			return // not a run's trace
		}
		b.last = map[string]*otelSpan{}
		s := b.span("run", "")
		s.name = "invoke_workflow " + ev.Program
		s.kind = trace.SpanKindInternal
		s.attrs = append(s.attrs,
			attribute.String("gen_ai.operation.name", "invoke_workflow"),
			attribute.String("gen_ai.workflow.name", ev.Program),
			attribute.String("genesis.clock", ev.Clock))
		b.root, b.startTime = s, ev.Time
		return
	}
	switch ev.Event {
	case "step_started":
		s := b.span("step", ev.Step)
		s.name = ev.Kind + " " + ev.Name
		s.kind = trace.SpanKindInternal
		s.start, s.end = ev.T, ev.T
		s.attrs = append(s.attrs,
			attribute.String("genesis.step.id", ev.Step),
			attribute.String("genesis.step.name", ev.Name),
			attribute.String("genesis.step.kind", ev.Kind))
		p := b.parent()
		p.children = append(p.children, s)
		b.open = append(b.open, s)
		b.last[ev.Step] = s
	case "step_completed", "step_failed":
		s := b.end(ev.Step, ev.T)
		if s == nil {
			return
		}
		b.stepEnded(s, ev)
	case "step_skipped":
		s := b.span("skip", ev.Step)
		s.name = ev.Kind + " " + ev.Name
		s.kind = trace.SpanKindInternal
		s.start, s.end = ev.T, ev.T
		s.attrs = append(s.attrs,
			attribute.String("genesis.step.id", ev.Step),
			attribute.String("genesis.step.name", ev.Name),
			attribute.String("genesis.step.kind", ev.Kind),
			attribute.String("genesis.step.status", "skipped"),
			attribute.String("genesis.step.reason", ev.Reason))
		p := b.parent()
		p.children = append(p.children, s)
	case "event_emitted":
		if s := b.stepOf(ev.Step); s != nil {
			s.events = append(s.events, otelSpanEvent{"event_emitted", ev.T, []attribute.KeyValue{attribute.String("genesis.event.name", ev.EventName)}})
		}
	case "exported":
		b.root.events = append(b.root.events, otelSpanEvent{"exported", ev.T, []attribute.KeyValue{attribute.String("genesis.export.name", ev.Name), attribute.String("genesis.step.id", ev.Step)}})
	case "run_completed":
		b.runCompleted(ev)
	default:
		if k, ok := strings.CutPrefix(ev.Event, "advisory_"); ok {
			b.advisory(k, ev)
		}
	}
}

// end ends the open span of step id at t (and any step opened inside it
// that never ended) and returns it; nil when id is not open.
func (b *otelBuilder) end(id string, t float64) *otelSpan {
	for i := len(b.open) - 1; i >= 0; i-- {
		if b.open[i].step != id {
			continue
		}
		for _, s := range b.open[i+1:] {
			s.end = t
			s.status, s.statusMsg = codes.Error, "the step did not end"
		}
		s := b.open[i]
		b.open = b.open[:i]
		s.end = t
		return s
	}
	return nil
}

// stepEnded completes step span s with its end event: status, attempts
// (retries as events), and the chat or execute_tool span of an llm or
// tool step.
func (b *otelBuilder) stepEnded(s *otelSpan, ev *otelEvent) {
	s.attrs = append(s.attrs, attribute.String("genesis.step.status", ev.Status))
	if ev.Attempts > 0 {
		s.attrs = append(s.attrs, attribute.Int("genesis.step.attempts", ev.Attempts))
	}
	for n := 2; n <= ev.Attempts; n++ {
		// The trace has the attempts a step took, not when each began:
		// the retries are events at the step's end.
		s.events = append(s.events, otelSpanEvent{"retry", ev.T, []attribute.KeyValue{attribute.Int("genesis.retry.attempt", n)}})
	}
	if ev.Error != nil {
		s.status, s.statusMsg = codes.Error, ev.Error.Message
		s.attrs = append(s.attrs, attribute.String("error.type", ev.Error.Kind))
		b.failed = s
	}
	if ev.Wait != "" {
		s.attrs = append(s.attrs, attribute.String("genesis.wait", ev.Wait))
	}
	if ev.Wait == "backoff" {
		// The program retries a failed step (nano-vm's on_error retry,
		// VVM's retry): the wait before the next attempt says which.
		attrs := []attribute.KeyValue{attribute.Float64("genesis.retry.delay_ms", s.end-s.start)}
		if b.failed != nil {
			attrs = append(attrs, attribute.String("genesis.retry.step", b.failed.step))
		}
		s.events = append(s.events, otelSpanEvent{"retry", s.start, attrs})
	}
	var op *otelSpan
	switch ev.Kind {
	case "llm", "judge":
		op = b.span("chat", ev.Step)
		op.name = "chat"
		if ev.Model != "" {
			op.name += " " + ev.Model
		}
		op.kind = trace.SpanKindClient
		op.attrs = append(op.attrs, attribute.String("gen_ai.operation.name", "chat"))
		if ev.Provider != "" {
			op.attrs = append(op.attrs, attribute.String("gen_ai.provider.name", ev.Provider))
		}
		if ev.Model != "" {
			op.attrs = append(op.attrs, attribute.String("gen_ai.request.model", ev.Model))
		}
		if ev.Tokens != nil {
			op.attrs = append(op.attrs,
				attribute.Int64("gen_ai.usage.input_tokens", ev.Tokens.Prompt),
				attribute.Int64("gen_ai.usage.output_tokens", ev.Tokens.Completion))
			s.attrs = append(s.attrs,
				attribute.Int64("gen_ai.usage.input_tokens", ev.Tokens.Prompt),
				attribute.Int64("gen_ai.usage.output_tokens", ev.Tokens.Completion))
		}
		if ev.Cost != nil {
			op.attrs = append(op.attrs, attribute.Float64("genesis.cost", *ev.Cost))
		}
		op.children = s.calls
	case "tool":
		op = b.span("tool", ev.Step)
		op.name = "execute_tool " + ev.Tool
		op.kind = trace.SpanKindInternal
		op.attrs = append(op.attrs,
			attribute.String("gen_ai.operation.name", "execute_tool"),
			attribute.String("gen_ai.tool.name", ev.Tool))
	default:
		return
	}
	op.step = ev.Step
	op.start, op.end = s.start, s.end
	if ev.Attempts > 0 {
		op.attrs = append(op.attrs, attribute.Int("genesis.step.attempts", ev.Attempts))
	}
	if ev.Error != nil {
		op.status, op.statusMsg = codes.Error, ev.Error.Message
		op.attrs = append(op.attrs, attribute.String("error.type", ev.Error.Kind))
	}
	s.children = append(s.children, op)
}

// advisory records an advisory about a step: an event on its span, and
// for a model's tool call (advisory_tool_call) an execute_tool span
// under the step's chat span.
func (b *otelBuilder) advisory(kind string, ev *otelEvent) {
	s := b.stepOf(ev.Step)
	if s == nil {
		s = b.root
	}
	if kind != "tool_call" {
		s.events = append(s.events, otelSpanEvent{"advisory_" + kind, ev.T, nil})
		return
	}
	var d struct {
		Tool  string     `json:"tool"`
		ID    string     `json:"id"`
		Error *otelError `json:"error"`
	}
	if json.Unmarshal(ev.Data, &d) != nil {
		return
	}
	c := b.span("tool_call", ev.Step)
	c.name = "execute_tool " + d.Tool
	c.kind = trace.SpanKindInternal
	c.start, c.end = max(s.start, s.toolSeen), ev.T
	s.toolSeen = ev.T
	c.attrs = append(c.attrs,
		attribute.String("gen_ai.operation.name", "execute_tool"),
		attribute.String("gen_ai.tool.name", d.Tool))
	if d.ID != "" {
		c.attrs = append(c.attrs, attribute.String("gen_ai.tool.call.id", d.ID))
	}
	if d.Error != nil {
		c.status, c.statusMsg = codes.Error, d.Error.Message
		c.attrs = append(c.attrs, attribute.String("error.type", d.Error.Kind))
	}
	s.calls = append(s.calls, c)
}

// runCompleted ends the run's span: its status, usage, and a budget stop
// as an event; steps still open end with it, in error.
func (b *otelBuilder) runCompleted(ev *otelEvent) {
	r := b.root
	for _, s := range b.open {
		s.end = ev.T
		s.status, s.statusMsg = codes.Error, "the run ended before the step: "+ev.Status
	}
	b.open = nil
	r.end = ev.T
	r.attrs = append(r.attrs,
		attribute.String("genesis.run.status", ev.Status),
		attribute.Int("genesis.run.steps", ev.Steps))
	if ev.Tokens != nil {
		r.attrs = append(r.attrs,
			attribute.Int64("gen_ai.usage.input_tokens", ev.Tokens.Prompt),
			attribute.Int64("gen_ai.usage.output_tokens", ev.Tokens.Completion))
	}
	if ev.Cost != nil {
		r.attrs = append(r.attrs, attribute.Float64("genesis.cost", *ev.Cost))
	}
	if e := ev.Error; e != nil && ev.Status != string(StatusSuccess) {
		if ev.Status != string(StatusSuspended) {
			r.status, r.statusMsg = codes.Error, e.Message
			r.attrs = append(r.attrs, attribute.String("error.type", e.Kind))
		}
		if ev.Status == string(StatusBudgetExceeded) {
			attrs := []attribute.KeyValue{attribute.String("genesis.budget.kind", e.Kind), attribute.String("genesis.budget.message", e.Message)}
			if e.Step != nil {
				attrs = append(attrs, attribute.String("genesis.step.id", *e.Step))
			}
			r.events = append(r.events, otelSpanEvent{"budget_exceeded", ev.T, attrs})
		}
	}
}

// otelIDs are the ids of a run's trace: the trace id and the span ids
// are a hash of the run id and each span's key.
type otelIDs struct{ runID string }

func otelIDsOf(runID string) otelIDs { return otelIDs{runID} }

func (x otelIDs) traceID() trace.TraceID {
	sum := sha256.Sum256([]byte("genesis-otel-v1\ntrace\n" + x.runID))
	var id trace.TraceID
	copy(id[:], sum[:])
	if !id.IsValid() {
		id[15] = 1
	}
	return id
}

func (x otelIDs) spanID(key string) trace.SpanID {
	sum := sha256.Sum256([]byte("genesis-otel-v1\nspan\n" + x.runID + "\n" + key))
	var id trace.SpanID
	copy(id[:], sum[:])
	if !id.IsValid() {
		id[7] = 1
	}
	return id
}

// otelIDKey is the context key of the ids the next span gets
// (otelIDGen).
type otelIDKey struct{}

type otelNextIDs struct {
	trace trace.TraceID
	span  trace.SpanID
}

// otelIDGen gives a span the ids its context carries: the SDK asks the
// generator with the context the span is started with.
type otelIDGen struct{}

func (otelIDGen) NewIDs(ctx context.Context) (trace.TraceID, trace.SpanID) {
	ids, _ := ctx.Value(otelIDKey{}).(otelNextIDs)
	return ids.trace, ids.span
}

func (otelIDGen) NewSpanID(ctx context.Context, _ trace.TraceID) trace.SpanID {
	ids, _ := ctx.Value(otelIDKey{}).(otelNextIDs)
	return ids.span
}

// emit starts and ends s and its children with tracer, in order, at base
// plus their times.
func (s *otelSpan) emit(ctx context.Context, tracer trace.Tracer, ids otelIDs, base time.Time) {
	at := func(ms float64) time.Time { return base.Add(time.Duration(ms * float64(time.Millisecond))) }
	ctx = context.WithValue(ctx, otelIDKey{}, otelNextIDs{ids.traceID(), ids.spanID(s.key)})
	ctx, span := tracer.Start(ctx, s.name, trace.WithTimestamp(at(s.start)), trace.WithSpanKind(s.kind), trace.WithAttributes(s.attrs...))
	for _, e := range s.events {
		span.AddEvent(e.name, trace.WithTimestamp(at(e.t)), trace.WithAttributes(e.attrs...))
	}
	for _, c := range s.children {
		c.emit(ctx, tracer, ids, base)
	}
	if s.status == codes.Error {
		span.SetStatus(codes.Error, s.statusMsg)
	}
	span.End(trace.WithTimestamp(at(s.end)))
}
