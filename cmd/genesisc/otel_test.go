package main

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/genesis-toolchain/genesis/internal/otlptest"
)

// otelProgram has an llm step, a tool step that fails once and is
// retried (on_error retry), and a third step that --max-steps 3 stops.
const otelProgram = `{
  "name": "orders",
  "steps": [
    {"id": "analyze", "type": "llm", "prompt": "Which order? $user_input", "output_key": "order"},
    {"id": "lookup", "type": "tool", "tool": "lookup", "args": {"order": "$order"}, "on_error": "retry", "max_retries": 2},
    {"id": "notify", "type": "tool", "tool": "notify", "args": {}}
  ]
}`

// otelSpans is the span tree the program exports, on either target.
const otelSpans = `invoke_workflow orders.json [INTERNAL 0..1000 ERROR "the run has executed 3 steps, the limit (--max-steps) is 3"]
    error.type=limit.steps
    gen_ai.operation.name=invoke_workflow
    gen_ai.usage.input_tokens=5
    gen_ai.usage.output_tokens=1
    gen_ai.workflow.name=orders.json
    genesis.run.status=budget_exceeded
  event budget_exceeded @1000
      genesis.budget.kind=limit.steps
  llm analyze [INTERNAL 0..0 UNSET]
      gen_ai.usage.input_tokens=5
      gen_ai.usage.output_tokens=1
      genesis.step.status=success
    chat [CLIENT 0..0 UNSET]
        gen_ai.operation.name=chat
        gen_ai.provider.name=mock
        gen_ai.usage.input_tokens=5
        gen_ai.usage.output_tokens=1
  tool lookup [INTERNAL 0..0 ERROR "try later"]
      error.type=unavailable
      genesis.step.status=failed
    execute_tool lookup [INTERNAL 0..0 ERROR "try later"]
        error.type=unavailable
        gen_ai.operation.name=execute_tool
        gen_ai.tool.name=lookup
  wait lookup [INTERNAL 0..1000 UNSET]
      genesis.step.status=success
      genesis.wait=backoff
    event retry @0
  tool lookup [INTERNAL 1000..1000 UNSET]
      genesis.step.status=success
    execute_tool lookup [INTERNAL 1000..1000 UNSET]
        gen_ai.operation.name=execute_tool
        gen_ai.tool.name=lookup
`

func otelKeep(k string) bool {
	return strings.HasPrefix(k, "gen_ai.") || k == "error.type" || k == "genesis.step.status" ||
		k == "genesis.run.status" || k == "genesis.budget.kind" || k == "genesis.wait"
}

// TestRunExportsOpenTelemetry runs an agent program with genesisc run,
// through Go and on the Forge Machine, exporting its spans to an OTLP/HTTP
// receiver (--otel, and OTEL_EXPORTER_OTLP_ENDPOINT), and replays its
// journal: every run exports the same span tree, and the replay the same
// ids as the run it replays.
func TestRunExportsOpenTelemetry(t *testing.T) {
	if testing.Short() {
		t.Skip("builds Go programs")
	}
	useRunCache(t)
	rcv := otlptest.Start(t)
	dir := t.TempDir()
	writeFile(t, dir, "orders.json", otelProgram)
	writeFile(t, dir, "llm.json", `{"__default__": "A-17"}`)
	writeFile(t, dir, "tools.json", `{"lookup": {"$sequence": [{"$error": {"kind": "unavailable", "message": "try later"}}, {"status": "shipped"}]}, "notify": "sent"}`)
	common := []string{"run", "orders.json", "--llm", "mock:llm.json", "--tools", "mock:tools.json", "--input", "user_input=mine", "--max-steps", "3"}

	var trees []string
	var ids [][]string
	for _, tc := range []struct {
		name string
		args []string
		env  bool
	}{
		{"go", []string{"--otel", rcv.URL(), "--journal", "go.journal"}, false},
		{"go replay", []string{"--otel", rcv.URL(), "--journal", "go.journal", "--replay"}, false},
		{"forge", []string{"--target", "forge", "--journal", "forge.journal"}, true},
		{"forge replay", []string{"--target", "forge", "--journal", "forge.journal", "--replay"}, true},
	} {
		rcv.Reset()
		if tc.env {
			t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", rcv.URL())
		}
		code, stdout, stderr := genesisc(t, dir, append(common, tc.args...)...)
		if code != 1 || !strings.Contains(stdout, `"status":"budget_exceeded"`) || strings.Contains(stderr, "opentelemetry") {
			t.Fatalf("%s: exit %d\n%s%s", tc.name, code, stdout, stderr)
		}
		spans := rcv.Spans()
		got := otlptest.Tree(spans, otelKeep)
		if diff := cmp.Diff(otelSpans, got); diff != "" {
			t.Errorf("%s: spans (-want +got):\n%s", tc.name, diff)
		}
		trees = append(trees, got)
		var list []string
		for _, s := range spans {
			list = append(list, s.TraceID+" "+s.SpanID+" "+s.ParentID+" "+s.Name)
		}
		ids = append(ids, list)
	}
	if diff := cmp.Diff(ids[0], ids[1]); diff != "" {
		t.Errorf("go: the replay's span ids differ (-run +replay):\n%s", diff)
	}
	if diff := cmp.Diff(ids[2], ids[3]); diff != "" {
		t.Errorf("forge: the replay's span ids differ (-run +replay):\n%s", diff)
	}
	if ids[0][0] == ids[2][0] {
		t.Error("two runs (two journals) export the same ids")
	}
}
