package runtime

import (
	"bytes"
	"context"
	"os"
	"strings"
	"testing"
	"time"
)

// TestCoerceOutput checks the coercion of model replies to an output
// schema: every value it gives is one the schema accepts, and a reply it
// cannot make valid is refused (the spell then takes its fallback).
func TestCoerceOutput(t *testing.T) {
	for _, c := range []struct {
		schema, reply string // JSON
		want          string // JSON; "" when refused
	}{
		{`{"enum":["low","high"]}`, `"high"`, `"high"`},
		{`{"enum":["low","high"]}`, `" High. "`, `"high"`},
		{`{"enum":["low","high"]}`, `"` + "```json\\n\\\"HIGH\\\"\\n```" + `"`, `"high"`},
		{`{"enum":["low","high"]}`, `"medium"`, ``},
		{`{"enum":["low","high"]}`, `true`, ``},
		{`{"type":"boolean"}`, `"Yes"`, `true`},
		{`{"type":"boolean"}`, `"false"`, `false`},
		{`{"type":"boolean"}`, `0`, `false`},
		{`{"type":"boolean"}`, `"maybe"`, ``},
		{`{"type":"number","minimum":0,"maximum":1}`, `"7"`, `1`},
		{`{"type":"number","minimum":0,"maximum":1}`, `-3`, `0`},
		{`{"type":"number"}`, `" 2.5 "`, `2.5`},
		{`{"type":"number"}`, `"lots"`, ``},
		{`{"type":"number"}`, `{"value": 4}`, `4`},
		{`{"type":"string","maxLength":3}`, `"abcdef"`, `"abc"`},
		{`{"type":"string","maxLength":3}`, `"héllo"`, `"hél"`},
		{`{"type":"string","minLength":3}`, `"ab"`, ``},
		{`{"type":"string","pattern":"^[A-Z]{3}$"}`, `"ETH"`, `"ETH"`},
		{`{"type":"string","pattern":"^[A-Z]{3}$"}`, `"eth"`, ``},
		{`{"type":"string"}`, `"\"quoted\""`, `"quoted"`},
		{`{"type":"string"}`, `12`, `"12"`},
		{`{"type":"object","properties":{"a":{"type":"number"},"b":{"enum":["x","y"]}},"required":["a","b"],"additionalProperties":false}`,
			`"` + "```json\\n{\\\"a\\\": \\\"1\\\", \\\"b\\\": \\\"Y\\\", \\\"c\\\": 3}\\n```" + `"`, `{"a":1,"b":"y"}`},
		{`{"type":"object","properties":{"a":{"type":"number"}},"required":["a"]}`, `{"b":1}`, ``},
		{`{"type":"object","properties":{"a":{"type":"number"}},"required":["a"]}`, `"not json"`, ``},
		{`{"type":"array","items":{"type":"number","maximum":5}}`, `"[1, 9, \"3\"]"`, `[1,5,3]`},
		{`{"type":"array","items":{"type":"number"}}`, `[1, "x"]`, ``},
	} {
		schema := mustJSON(t, c.schema)
		got, msg := coerceOutput(mustJSON(t, c.reply), schema)
		if c.want == "" {
			if msg == "" {
				t.Errorf("%s on %s: got %s, want a refusal", c.reply, c.schema, got)
			}
			continue
		}
		if msg != "" || !ValueEq(got, mustJSON(t, c.want)) {
			t.Errorf("%s on %s: got %s (%s), want %s", c.reply, c.schema, got, msg, c.want)
			continue
		}
		if bad := validateSchema(got, schema, ""); bad != "" {
			t.Errorf("%s on %s: %s is not valid: %s", c.reply, c.schema, got, bad)
		}
	}
}

// recordingLLM answers every prompt with reply and keeps the requests.
type recordingLLM struct {
	reply Value
	reqs  []LLMRequest
}

func (p *recordingLLM) Complete(_ context.Context, _ *Call, req *LLMRequest) (LLMResponse, error) {
	p.reqs = append(p.reqs, *req)
	return LLMResponse{Value: p.reply}, nil
}

// TestOutputSchemaEffect runs llm calls with an output_schema: a
// provider without structured output gets the schema in the prompt; the
// reply is coerced (the trace says so, advisory_coerced) or, when it
// cannot be, the call fails with kind "schema".
func TestOutputSchemaEffect(t *testing.T) {
	site := NewSite("advise", "s.spell", 3, 5)
	schema := mustJSON(t, `{"enum":["low","high"]}`)
	for _, c := range []struct {
		reply, want string
	}{
		{`"HIGH"`, `"high"`},
		{`"medium"`, `{"$error":{"kind":"schema"}}`},
	} {
		p := &recordingLLM{reply: mustJSON(t, c.reply)}
		h := NewHost(Config{LLM: p})
		var trace bytes.Buffer
		var got Value
		h.Execute(RunOptions{Trace: &trace}, func(r *Run) Value {
			got = r.LLM(site.At(), String("level?"), Object(Field{"output_schema", schema}))
			return Value{}
		})
		if len(p.reqs) != 1 || !strings.HasPrefix(p.reqs[0].Prompt, "level?\n\nAnswer with JSON only") || !strings.Contains(p.reqs[0].Prompt, `{"enum":["low","high"]}`) {
			t.Errorf("the prompt does not carry the schema: %+v", p.reqs)
		}
		if strings.HasPrefix(c.want, `{"$error"`) {
			if got.ErrKind() != "schema" {
				t.Errorf("reply %s: got %s, want a schema error", c.reply, got)
			}
			continue
		}
		if !ValueEq(got, mustJSON(t, c.want)) {
			t.Errorf("reply %s: got %s, want %s", c.reply, got, c.want)
		}
		if !strings.Contains(trace.String(), `"event":"advisory_coerced"`) {
			t.Errorf("no advisory_coerced in the trace:\n%s", trace.String())
		}
	}
}

// TestOpenAIOutputSchema checks that the OpenAI provider sends an
// output_schema as response_format (not strict; a non-object schema
// wrapped as the property "value") and leaves the prompt alone.
func TestOpenAIOutputSchema(t *testing.T) {
	o := NewOpenAI(OpenAIConfig{BaseURL: "http://localhost", Model: "m"})
	if !o.StructuredOutput() {
		t.Fatal("OpenAI takes no structured output")
	}
	body, err := o.requestBody(&LLMRequest{Prompt: "level?", Options: Object(Field{"output_schema", mustJSON(t, `{"enum":["low","high"]}`)})}, "m")
	if err != nil {
		t.Fatal(err)
	}
	got := string(AppendJSON(nil, body))
	want := `"response_format":{"type":"json_schema","json_schema":{"name":"output","schema":{"type":"object","properties":{"value":{"enum":["low","high"]}},"required":["value"],"additionalProperties":false}}}`
	if !strings.Contains(got, want) || !strings.Contains(got, `"content":"level?"`) {
		t.Errorf("request body\n%s\nwant %s and the prompt unchanged", got, want)
	}
}

// TestRealClockWait runs waits with --real-clock: a wait longer than
// --max-wall leaves stops the run at the limit (limit.wall) instead of
// sleeping it out; on the virtual clock the same wait is instant and
// noted in the trace when the request asks for it.
func TestRealClockWait(t *testing.T) {
	site := NewSite("wait", "s.spell", 2, 5)
	prog := func(h *Host, opts RunOptions) *Result {
		return h.Execute(opts, func(r *Run) Value {
			r.Wait(site.At(), Object(Field{"kind", String("sleep")}, Field{"seconds", Number(3600)}, Field{"trace_virtual", True}))
			return String("done")
		})
	}
	var stdout, stderr bytes.Buffer
	done := make(chan int, 1)
	go func() {
		done <- mainIO([]string{"--real-clock", "--max-wall", "100ms"}, "p", nil, prog, &stdout, &stderr)
	}()
	select {
	case code := <-done:
		if code != 1 || !strings.Contains(stdout.String(), `"kind":"limit.wall"`) {
			t.Errorf("--real-clock: exit %d\n%s%s", code, stdout.String(), stderr.String())
		}
	case <-time.After(time.Minute): // a hang guard only
		t.Fatal("a real wait of an hour was not cut at --max-wall")
	}

	dir := t.TempDir()
	trace := dir + "/trace.jsonl"
	stdout.Reset()
	if code := mainIO([]string{"--trace", trace}, "p", nil, prog, &stdout, &stderr); code != 0 {
		t.Fatalf("virtual clock: exit %d\n%s%s", code, stdout.String(), stderr.String())
	}
	raw, _ := os.ReadFile(trace)
	data := string(raw)
	if !strings.Contains(data, `"kind":"virtual_clock","text":"did not wait 1h0m0s: the clock is virtual (--real-clock waits for real)"`) {
		t.Errorf("the trace does not say the wait did not happen:\n%s", data)
	}
}
