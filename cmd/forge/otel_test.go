package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/genesis-toolchain/genesis/internal/otlptest"
)

// TestAgentExecExportsOpenTelemetry runs an agent program with forge exec
// --otel against an OTLP/HTTP receiver, then replays its journal: both
// export the run's span tree, with the same ids.
func TestAgentExecExportsOpenTelemetry(t *testing.T) {
	rcv := otlptest.Start(t)
	dir := t.TempDir()
	prog := buildAgent(t, dir, "refund.json", refundProgram)
	llm, tools := filepath.Join(dir, "llm.json"), filepath.Join(dir, "tools.json")
	writeTestFile(t, llm, `{"__default__": "yes"}`)
	writeTestFile(t, tools, `{"issue_refund": {"$sequence": [{"$error": {"kind": "timeout", "message": "slow"}}, {"refunded": true}]}, "send_rejection": "sent"}`)
	journal := filepath.Join(dir, "run.journal")
	args := []string{"exec", "--llm", "mock:" + llm, "--tools", "mock:" + tools, "--input", "user_input=I bought it yesterday", "--journal", journal, "--otel", rcv.URL() + "/v1/traces", prog}
	keep := func(k string) bool {
		return strings.HasPrefix(k, "gen_ai.") || k == "error.type" || k == "genesis.step.status" || k == "genesis.run.status"
	}
	const want = `invoke_workflow refund.json [INTERNAL 0..0 ERROR "slow"]
    error.type=timeout
    gen_ai.operation.name=invoke_workflow
    gen_ai.usage.input_tokens=21
    gen_ai.usage.output_tokens=1
    gen_ai.workflow.name=refund.json
    genesis.run.status=failed
  llm analyze [INTERNAL 0..0 UNSET]
      gen_ai.usage.input_tokens=21
      gen_ai.usage.output_tokens=1
      genesis.step.status=success
    chat [CLIENT 0..0 UNSET]
        gen_ai.operation.name=chat
        gen_ai.provider.name=mock
        gen_ai.usage.input_tokens=21
        gen_ai.usage.output_tokens=1
  step guardrail [INTERNAL 0..0 UNSET]
      genesis.step.status=success
  tool process_refund [INTERNAL 0..0 ERROR "slow"]
      error.type=timeout
      genesis.step.status=failed
    execute_tool issue_refund [INTERNAL 0..0 ERROR "slow"]
        error.type=timeout
        gen_ai.operation.name=execute_tool
        gen_ai.tool.name=issue_refund
`
	var ids [][]string
	for _, replay := range []bool{false, true} {
		rcv.Reset()
		a := args
		if replay {
			a = append([]string{"exec", "--replay"}, args[1:]...)
		}
		code, stdout, stderr := forgeCmd(a...)
		if code != 1 || stderr != "" {
			t.Fatalf("replay %v: exit %d\n%s%s", replay, code, stdout, stderr)
		}
		spans := rcv.Spans()
		if diff := cmp.Diff(want, otlptest.Tree(spans, keep)); diff != "" {
			t.Errorf("replay %v: spans (-want +got):\n%s", replay, diff)
		}
		var list []string
		for _, s := range spans {
			list = append(list, s.TraceID+" "+s.SpanID+" "+s.ParentID+" "+s.Name)
		}
		ids = append(ids, list)
	}
	if diff := cmp.Diff(ids[0], ids[1]); diff != "" {
		t.Errorf("the replay's span ids differ (-run +replay):\n%s", diff)
	}
}
