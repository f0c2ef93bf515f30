package runtime

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/genesis-toolchain/genesis/internal/otlptest"
)

// otelKeep keeps the attributes the OTel tests compare: the GenAI ones,
// the step's identity and status, the error kind, and the events'.
func otelKeep(k string) bool {
	switch {
	case strings.HasPrefix(k, "gen_ai."), k == "error.type",
		k == "genesis.step.id", k == "genesis.step.status", k == "genesis.step.attempts",
		k == "genesis.retry.attempt", k == "genesis.budget.kind", k == "genesis.wait", k == "genesis.run.status":
		return true
	}
	return false
}

// renderOTel renders a span tree built from trace events: names, times,
// status, the attributes otelKeep keeps and the events.
func renderOTel(s *otelSpan, depth int, b *strings.Builder) {
	pad := strings.Repeat("  ", depth)
	fmt.Fprintf(b, "%s%s [%s %g..%g", pad, s.name, s.kind, s.start, s.end)
	if s.status == codes.Error {
		fmt.Fprintf(b, " error %q", s.statusMsg)
	}
	b.WriteString("]\n")
	for _, a := range s.attrs {
		if otelKeep(string(a.Key)) {
			fmt.Fprintf(b, "%s    %s=%s\n", pad, a.Key, a.Value.Emit())
		}
	}
	for _, e := range s.events {
		fmt.Fprintf(b, "%s  event %s @%g\n", pad, e.name, e.t)
		for _, a := range e.attrs {
			fmt.Fprintf(b, "%s      %s=%s\n", pad, a.Key, a.Value.Emit())
		}
	}
	for _, c := range s.children {
		renderOTel(c, depth+1, b)
	}
}

// TestOTelSpansFromEvents maps a handwritten trace to spans: the run's
// invoke_workflow root, a span per step, chat and execute_tool spans
// under llm and tool steps (the model's tool calls under its chat span),
// parallel branches under their block, retries and the budget stop as
// events, failures as error status with error.type.
func TestOTelSpansFromEvents(t *testing.T) {
	const trace = `{"event":"run_started","t":0,"program":"agent.json","clock":"virtual"}
{"event":"step_started","t":0,"step":"ask @ a.json:1:1","name":"ask","kind":"llm"}
{"event":"advisory_tool_call","t":5,"step":"ask @ a.json:1:1","name":"ask","data":{"tool":"search","args":{},"reply":"ok","id":"call_1"}}
{"event":"advisory_tool_call","t":7,"step":"ask @ a.json:1:1","name":"ask","data":{"tool":"fetch","args":{},"error":{"kind":"rejected","message":"no"}}}
{"event":"step_completed","t":10,"step":"ask @ a.json:1:1","name":"ask","kind":"llm","status":"success","duration_ms":10,"attempts":2,"tokens":{"prompt":12,"completion":3},"cost":0.5,"provider":"openai","model":"gpt-4o","output":"x"}
{"event":"advisory_coerced","t":10,"step":"ask @ a.json:1:1","name":"ask","data":{"from":"1","to":1}}
{"event":"step_started","t":10,"step":"fan @ a.json:2:1","name":"fan","kind":"parallel"}
{"event":"step_started","t":10,"step":"fan @ a.json:2:1/0 > pay @ a.json:3:1","name":"pay","kind":"tool"}
{"event":"step_failed","t":12,"step":"fan @ a.json:2:1/0 > pay @ a.json:3:1","name":"pay","kind":"tool","status":"failed","duration_ms":2,"attempts":1,"tool":"payments","error":{"kind":"unavailable","message":"down"}}
{"event":"step_skipped","t":12,"step":"fan @ a.json:2:1/1 > skip @ a.json:4:1","name":"skip","kind":"step","status":"skipped","reason":"guard false"}
{"event":"step_completed","t":12,"step":"fan @ a.json:2:1","name":"fan","kind":"parallel","status":"success","duration_ms":2,"output":[]}
{"event":"note","t":12,"step":"x","name":"x","data":{"kind":"statement","text":"x"}}
{"event":"step_started","t":12,"step":"send @ a.json:5:1","name":"send","kind":"emit"}
{"event":"event_emitted","t":12,"step":"send @ a.json:5:1","name":"send","event_name":"done","payload":null}
{"event":"step_completed","t":12,"step":"send @ a.json:5:1","name":"send","kind":"emit","status":"success","duration_ms":0,"output":null}
{"event":"step_started","t":12,"step":"pay @ a.json:7:1","name":"pay","kind":"wait"}
{"event":"step_completed","t":1012,"step":"pay @ a.json:7:1","name":"pay","kind":"wait","status":"success","duration_ms":1000,"wait":"backoff","output":null}
{"event":"run_completed","t":1012,"status":"budget_exceeded","steps":4,"tokens":{"prompt":12,"completion":3},"cost":0.5,"output":null,"error":{"kind":"limit.steps","message":"4 steps","step":"next @ a.json:6:1"}}
`
	var b otelBuilder
	w := &OTelRun{}
	for _, line := range strings.Split(strings.TrimSpace(trace), "\n") {
		ev := w.parse([]byte(line))
		if ev == nil {
			t.Fatalf("not an event: %s", line)
		}
		b.add(ev)
	}
	var got strings.Builder
	renderOTel(b.root, 0, &got)
	want := `invoke_workflow agent.json [internal 0..1012 error "4 steps"]
    gen_ai.operation.name=invoke_workflow
    gen_ai.workflow.name=agent.json
    genesis.run.status=budget_exceeded
    gen_ai.usage.input_tokens=12
    gen_ai.usage.output_tokens=3
    error.type=limit.steps
  event budget_exceeded @1012
      genesis.budget.kind=limit.steps
      genesis.budget.message=4 steps
      genesis.step.id=next @ a.json:6:1
  llm ask [internal 0..10]
      genesis.step.id=ask @ a.json:1:1
      genesis.step.status=success
      genesis.step.attempts=2
      gen_ai.usage.input_tokens=12
      gen_ai.usage.output_tokens=3
    event retry @10
        genesis.retry.attempt=2
    event advisory_coerced @10
    chat gpt-4o [client 0..10]
        gen_ai.operation.name=chat
        gen_ai.provider.name=openai
        gen_ai.request.model=gpt-4o
        gen_ai.usage.input_tokens=12
        gen_ai.usage.output_tokens=3
        genesis.step.attempts=2
      execute_tool search [internal 0..5]
          gen_ai.operation.name=execute_tool
          gen_ai.tool.name=search
          gen_ai.tool.call.id=call_1
      execute_tool fetch [internal 5..7 error "no"]
          gen_ai.operation.name=execute_tool
          gen_ai.tool.name=fetch
          error.type=rejected
  parallel fan [internal 10..12]
      genesis.step.id=fan @ a.json:2:1
      genesis.step.status=success
    tool pay [internal 10..12 error "down"]
        genesis.step.id=fan @ a.json:2:1/0 > pay @ a.json:3:1
        genesis.step.status=failed
        genesis.step.attempts=1
        error.type=unavailable
      execute_tool payments [internal 10..12 error "down"]
          gen_ai.operation.name=execute_tool
          gen_ai.tool.name=payments
          genesis.step.attempts=1
          error.type=unavailable
    step skip [internal 12..12]
        genesis.step.id=fan @ a.json:2:1/1 > skip @ a.json:4:1
        genesis.step.status=skipped
  emit send [internal 12..12]
      genesis.step.id=send @ a.json:5:1
      genesis.step.status=success
    event event_emitted @12
        genesis.event.name=done
  wait pay [internal 12..1012]
      genesis.step.id=pay @ a.json:7:1
      genesis.step.status=success
      genesis.wait=backoff
    event retry @12
        genesis.retry.delay_ms=1000
        genesis.retry.step=fan @ a.json:2:1/0 > pay @ a.json:3:1
`
	if diff := cmp.Diff(want, got.String()); diff != "" {
		t.Errorf("spans (-want +got):\n%s", diff)
	}
}

// TestOTelUnfinishedSteps: a run that stops inside a step (a journal
// divergence, a cancellation) ends the step's span with it, in error.
func TestOTelUnfinishedSteps(t *testing.T) {
	var b otelBuilder
	w := &OTelRun{}
	for _, line := range []string{
		`{"event":"run_started","t":0,"program":"p","clock":"virtual"}`,
		`{"event":"step_started","t":1,"step":"a","name":"a","kind":"tool"}`,
		`{"event":"run_completed","t":4,"status":"cancelled","steps":0,"tokens":{"prompt":0,"completion":0},"cost":0,"output":null,"error":{"kind":"cancelled","message":"cancelled","step":"a"}}`,
	} {
		b.add(w.parse([]byte(line)))
	}
	s := b.root.children[0]
	if s.end != 4 || s.status != codes.Error || b.root.status != codes.Error {
		t.Errorf("unfinished step: end %g status %v, run status %v", s.end, s.status, b.root.status)
	}
}

// otelProgram is an agent with an llm step, a tool step that fails once
// and is retried, and a loop of tool steps that --max-steps stops.
func otelProgram() func(*Host, RunOptions) *Result {
	ask := NewSite("ask", "agent.gen", 1, 1)
	lookup := NewSite("lookup", "agent.gen", 2, 1)
	poll := NewSite("poll", "agent.gen", 3, 1)
	return func(h *Host, opts RunOptions) *Result {
		return h.Execute(opts, func(r *Run) Value {
			order := r.LLM(ask.At(), String("Which order?"), Object(Field{"model", String("gpt-4o")}))
			r.ToolWith(lookup.At(), String("lookup"), Object(Field{"order", order}), Object(Field{"retries", Int(2)}))
			for i := int64(0); ; i++ {
				r.Tool(poll.At(i), String("poll"), emptyObject)
			}
		})
	}
}

func writeOTelMocks(t *testing.T) (llm, tools string) {
	dir := t.TempDir()
	llm, tools = filepath.Join(dir, "llm.json"), filepath.Join(dir, "tools.json")
	os.WriteFile(llm, []byte(`{"__default__": "A-17"}`), 0o644)
	os.WriteFile(tools, []byte(`{"lookup": {"$sequence": [{"$error": {"kind": "unavailable", "message": "try later"}}, {"status": "shipped"}]}, "poll": "waiting"}`), 0o644)
	return llm, tools
}

// TestOTelExportCLI runs a program through the command line (MainWith)
// with --otel pointing at an OTLP/HTTP receiver, and checks the spans it
// receives; then replays the run's journal and checks that the replay
// exports the same spans, ids included.
func TestOTelExportCLI(t *testing.T) {
	rcv := otlptest.Start(t)
	llm, tools := writeOTelMocks(t)
	journal := filepath.Join(t.TempDir(), "run.journal")
	t.Setenv("OTEL_SERVICE_NAME", "refunds")
	args := []string{"--llm", "mock:" + llm, "--tools", "mock:" + tools, "--max-steps", "5", "--journal", journal, "--otel", rcv.URL()}
	var stdout, stderr bytes.Buffer
	if code := MainWith(args, "agent.gen", nil, otelProgram(), &stdout, &stderr); code != 1 {
		t.Fatalf("exit %d, want 1 (budget_exceeded)\n%s%s", code, stdout.String(), stderr.String())
	}
	if !strings.Contains(stdout.String(), `"status":"budget_exceeded"`) || stderr.Len() != 0 {
		t.Fatalf("result:\n%s\nstderr:\n%s", stdout.String(), stderr.String())
	}
	first := rcv.Spans()
	got := otlptest.Tree(first, otelKeep)
	want := `invoke_workflow agent.gen [INTERNAL 0..1000 ERROR "the run has executed 5 steps, the limit (--max-steps) is 5"]
    error.type=limit.steps
    gen_ai.operation.name=invoke_workflow
    gen_ai.usage.input_tokens=3
    gen_ai.usage.output_tokens=1
    gen_ai.workflow.name=agent.gen
    genesis.run.status=budget_exceeded
  event budget_exceeded @1000
      genesis.budget.kind=limit.steps
      genesis.step.id=poll @ agent.gen:3:1 # 3
  llm ask [INTERNAL 0..0 UNSET]
      gen_ai.usage.input_tokens=3
      gen_ai.usage.output_tokens=1
      genesis.step.attempts=1
      genesis.step.id=ask @ agent.gen:1:1
      genesis.step.status=success
    chat gpt-4o [CLIENT 0..0 UNSET]
        gen_ai.operation.name=chat
        gen_ai.provider.name=mock
        gen_ai.request.model=gpt-4o
        gen_ai.usage.input_tokens=3
        gen_ai.usage.output_tokens=1
        genesis.step.attempts=1
  tool lookup [INTERNAL 0..1000 UNSET]
      genesis.step.attempts=2
      genesis.step.id=lookup @ agent.gen:2:1
      genesis.step.status=success
    event retry @1000
        genesis.retry.attempt=2
    execute_tool lookup [INTERNAL 0..1000 UNSET]
        gen_ai.operation.name=execute_tool
        gen_ai.tool.name=lookup
        genesis.step.attempts=2
  tool poll [INTERNAL 1000..1000 UNSET]
      genesis.step.attempts=1
      genesis.step.id=poll @ agent.gen:3:1 # 0
      genesis.step.status=success
    execute_tool poll [INTERNAL 1000..1000 UNSET]
        gen_ai.operation.name=execute_tool
        gen_ai.tool.name=poll
        genesis.step.attempts=1
  tool poll [INTERNAL 1000..1000 UNSET]
      genesis.step.attempts=1
      genesis.step.id=poll @ agent.gen:3:1 # 1
      genesis.step.status=success
    execute_tool poll [INTERNAL 1000..1000 UNSET]
        gen_ai.operation.name=execute_tool
        gen_ai.tool.name=poll
        genesis.step.attempts=1
  tool poll [INTERNAL 1000..1000 UNSET]
      genesis.step.attempts=1
      genesis.step.id=poll @ agent.gen:3:1 # 2
      genesis.step.status=success
    execute_tool poll [INTERNAL 1000..1000 UNSET]
        gen_ai.operation.name=execute_tool
        gen_ai.tool.name=poll
        genesis.step.attempts=1
`
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("spans (-want +got):\n%s", diff)
	}
	for _, s := range first {
		if s.TraceID != first[0].TraceID {
			t.Errorf("span %s is in trace %s, not %s", s.Name, s.TraceID, first[0].TraceID)
		}
		if s.Resource["service.name"] != "refunds" {
			t.Errorf("span %s: service.name %q, want OTEL_SERVICE_NAME's", s.Name, s.Resource["service.name"])
		}
	}

	rcv.Reset()
	stdout.Reset()
	if code := MainWith(append(args, "--replay"), "agent.gen", nil, otelProgram(), &stdout, &stderr); code != 1 {
		t.Fatalf("replay: exit %d\n%s%s", code, stdout.String(), stderr.String())
	}
	replayed := rcv.Spans()
	if diff := cmp.Diff(spanIdentities(first), spanIdentities(replayed)); diff != "" {
		t.Errorf("the replay exports other spans (-run +replay):\n%s", diff)
	}
	if diff := cmp.Diff(got, otlptest.Tree(replayed, otelKeep)); diff != "" {
		t.Errorf("the replay's span tree (-run +replay):\n%s", diff)
	}
}

// spanIdentities lists each span's ids, parent, name and attributes, in
// span id order: what a replay must export alike.
func spanIdentities(spans []otlptest.Span) []string {
	var out []string
	for _, s := range spans {
		out = append(out, fmt.Sprintf("%s %s<-%s %s %v", s.TraceID, s.SpanID, s.ParentID, s.Name, s.Attrs))
	}
	sort.Strings(out)
	return out
}

// TestOTelEnvironment: the standard variables turn the export on
// (http/json included), grpc and unknown protocols are usage errors, and
// an endpoint that does not answer costs one warning, not the run.
func TestOTelEnvironment(t *testing.T) {
	llm, tools := writeOTelMocks(t)
	args := []string{"--llm", "mock:" + llm, "--tools", "mock:" + tools, "--max-steps", "3"}
	var stdout, stderr bytes.Buffer

	if code := MainWith(append(args, "--otel", "localhost:4318"), "agent.gen", nil, otelProgram(), &stdout, &stderr); code != 2 || !strings.Contains(stderr.String(), "--otel") {
		t.Errorf("--otel without a scheme: exit %d, want 2 with a message\n%s", code, stderr.String())
	}

	rcv := otlptest.Start(t)
	t.Setenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", rcv.URL()+"/v1/traces")
	stderr.Reset()
	if code := MainWith(args, "agent.gen", nil, otelProgram(), &stdout, &stderr); code != 1 || stderr.Len() != 0 || len(rcv.Spans()) != 7 {
		t.Fatalf("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: exit %d, %d spans\n%s", code, len(rcv.Spans()), stderr.String())
	}
	t.Setenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "")
	rcv.Reset()
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", rcv.URL())
	t.Setenv("OTEL_EXPORTER_OTLP_PROTOCOL", "http/json")
	t.Setenv("OTEL_EXPORTER_OTLP_HEADERS", "x-api-key=secret,x-team=agents")
	if code := MainWith(args, "agent.gen", nil, otelProgram(), &stdout, &stderr); code != 1 || stderr.Len() != 0 {
		t.Fatalf("exit %d\n%s", code, stderr.String())
	}
	if n := len(rcv.Spans()); n != 7 { // run, ask+chat, lookup+tool, poll+tool
		t.Errorf("received %d spans over http/json, want 7:\n%s", n, otlptest.Tree(rcv.Spans(), nil))
	}
	if ct := rcv.ContentTypes(); len(ct) == 0 || ct[0] != "application/json" {
		t.Errorf("Content-Types %q, want application/json", ct)
	}
	if h := rcv.Headers(); len(h) == 0 || h[0].Get("X-Api-Key") != "secret" || h[0].Get("X-Team") != "agents" {
		t.Errorf("OTEL_EXPORTER_OTLP_HEADERS not sent: %v", h)
	}
	t.Setenv("OTEL_EXPORTER_OTLP_HEADERS", "")

	for _, proto := range []string{"grpc", "thrift"} {
		t.Setenv("OTEL_EXPORTER_OTLP_PROTOCOL", proto)
		stderr.Reset()
		if code := MainWith(args, "agent.gen", nil, otelProgram(), &stdout, &stderr); code != 2 || !strings.Contains(stderr.String(), "OTEL_EXPORTER_OTLP_PROTOCOL") {
			t.Errorf("protocol %s: exit %d, want 2 with a message\n%s", proto, code, stderr.String())
		}
	}
	t.Setenv("OTEL_EXPORTER_OTLP_PROTOCOL", "")

	// An endpoint that refuses connections: the run's outcome is its own,
	// and one warning says the spans were not sent.
	dead := otlptest.Start(t)
	url := dead.URL()
	dead.Close()
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", url)
	stdout.Reset()
	stderr.Reset()
	done := make(chan int, 1)
	go func() {
		done <- MainWith(append(args, "--repeat", "2", "--otel-timeout", "500ms"), "agent.gen", nil, otelProgram(), &stdout, &stderr)
	}()
	select {
	case code := <-done:
		if code != 1 || !strings.Contains(stdout.String(), `"status":"budget_exceeded"`) {
			t.Errorf("dead endpoint: exit %d\n%s", code, stdout.String())
		}
	case <-time.After(time.Minute): // a hang guard only
		t.Fatal("the command did not end with its endpoint dead")
	}
	if n := strings.Count(stderr.String(), "warning: opentelemetry"); n != 1 {
		t.Errorf("dead endpoint: %d warnings, want 1:\n%s", n, stderr.String())
	}

	// OTEL_SDK_DISABLED turns the environment's export off.
	t.Setenv("OTEL_SDK_DISABLED", "true")
	stderr.Reset()
	if code := MainWith(args, "agent.gen", nil, otelProgram(), &stdout, &stderr); code != 1 || stderr.Len() != 0 {
		t.Errorf("OTEL_SDK_DISABLED: exit %d\n%s", code, stderr.String())
	}
}

// TestOTelInMemory exports through the SDK to an in-memory exporter: the
// spans carry the trace's times from the run's start, and ids derived
// from the run id.
func TestOTelInMemory(t *testing.T) {
	mem := tracetest.NewInMemoryExporter()
	o, err := newOTel(mem, OTelConfig{Warn: os.Stderr})
	if err != nil {
		t.Fatal(err)
	}
	w := o.Run("run-1")
	start := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	fmt.Fprintf(w, `{"event":"run_started","t":0,"program":"p","clock":"real","time":%q}`+"\n", start.Format(time.RFC3339Nano))
	// Written in pieces: lines may be split across writes.
	w.Write([]byte(`{"event":"step_started","t":1.5,"step":"a","name":"a","kind":"tool"}` + "\n" + `{"event":"step_completed","t":4,"step":"a",`))
	w.Write([]byte(`"name":"a","kind":"tool","status":"success","duration_ms":2.5,"attempts":1,"tool":"t","output":1}` + "\nnot json\n"))
	w.Write([]byte(`{"event":"run_completed","t":5,"status":"success","steps":1,"tokens":{"prompt":0,"completion":0},"cost":0,"output":1,"error":null}` + "\n"))
	// Flushed, not closed: closing the in-memory exporter forgets them.
	if err := o.tp.ForceFlush(context.Background()); err != nil {
		t.Fatal(err)
	}
	spans := mem.GetSpans()
	o.Close()
	if len(spans) != 3 {
		t.Fatalf("%d spans, want 3", len(spans))
	}
	ids := otelIDsOf("run-1")
	byName := map[string]tracetest.SpanStub{}
	for _, s := range spans {
		byName[s.Name] = s
		if s.SpanContext.TraceID() != ids.traceID() {
			t.Errorf("%s: trace id %s, want %s", s.Name, s.SpanContext.TraceID(), ids.traceID())
		}
	}
	root, step, tool := byName["invoke_workflow p"], byName["tool a"], byName["execute_tool t"]
	if !root.StartTime.Equal(start) || !root.EndTime.Equal(start.Add(5*time.Millisecond)) {
		t.Errorf("run span %v..%v, want the trace's times from %v", root.StartTime, root.EndTime, start)
	}
	if !step.StartTime.Equal(start.Add(1500*time.Microsecond)) || !step.EndTime.Equal(start.Add(4*time.Millisecond)) {
		t.Errorf("step span %v..%v", step.StartTime, step.EndTime)
	}
	if root.SpanContext.SpanID() != ids.spanID("run\n") || step.Parent.SpanID() != root.SpanContext.SpanID() || tool.Parent.SpanID() != step.SpanContext.SpanID() {
		t.Errorf("span ids and parents: run %s, step %s <- %s, tool %s <- %s", root.SpanContext.SpanID(), step.SpanContext.SpanID(), step.Parent.SpanID(), tool.SpanContext.SpanID(), tool.Parent.SpanID())
	}
	if other := otelIDsOf("run-2"); other.traceID() == ids.traceID() || other.spanID("step\na") == ids.spanID("step\na") {
		t.Error("two runs share ids")
	}
}

// BenchmarkOTelRun measures the exporter's cost per traced step: a run
// of 1000 tool steps whose trace goes to an OTelRun with an in-memory
// exporter, against the same run traced to io.Discard.
func BenchmarkOTelRun(b *testing.B) {
	poll := NewSite("poll", "agent.gen", 3, 1)
	h := NewHost(Config{Tools: []ToolProvider{mustMockTools(b, `{"poll": {"ok": true}}`)}})
	prog := func(r *Run) Value {
		for j := int64(0); j < 1000; j++ {
			r.Tool(poll.At(j), String("poll"), emptyObject)
		}
		return Value{}
	}
	b.Run("trace", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			if res := h.Execute(RunOptions{Program: "p", Trace: io.Discard}, prog); res.Status != StatusSuccess {
				b.Fatal(res.Error)
			}
		}
	})
	b.Run("otel", func(b *testing.B) {
		mem := tracetest.NewInMemoryExporter()
		o, err := newOTel(mem, OTelConfig{Warn: os.Stderr})
		if err != nil {
			b.Fatal(err)
		}
		defer o.Close()
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			if res := h.Execute(RunOptions{Program: "p", Trace: o.Run(fmt.Sprint(i))}, prog); res.Status != StatusSuccess {
				b.Fatal(res.Error)
			}
			o.tp.ForceFlush(context.Background())
			mem.Reset()
		}
	})
}

func mustMockTools(tb testing.TB, text string) *MockTools {
	tb.Helper()
	m, err := ParseMockTools([]byte(text))
	if err != nil {
		tb.Fatal(err)
	}
	return m
}
