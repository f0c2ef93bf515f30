package runtime

import (
	"bytes"
	"encoding/json"
	"testing"
)

// FuzzParseJSON: any input parses or fails without a panic; what parses
// agrees with encoding/json on validity, and encoding it gives text that
// parses back to the same value and encodes identically (the encoding is
// a fixed point), canonically too.
func FuzzParseJSON(f *testing.F) {
	for _, s := range []string{
		`{"a":[1,2.5e10,-0,"x\u0041\ud83d\ude00"],"b":{"c":null,"d":true}}`,
		`[]`, `""`, `"\ud800"`, `1e308`, `{"k":1,"k":2}`, `[[[[[]]]]]`, `{"$error":{"kind":"k","message":"m"}}`,
		"\"\xff\"", `123456789012345678901234567890`, `-0.000001`, ` 7 `,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		v, err := ParseJSON(data)
		// encoding/json accepts invalid UTF-8 and numbers beyond float64
		// range differently; compare validity on valid UTF-8 only, and
		// only in the direction that must hold: what we accept is JSON.
		if err == nil && !json.Valid(data) {
			t.Fatalf("ParseJSON accepted invalid JSON %q", data)
		}
		if err != nil {
			return
		}
		enc := EncodeJSON(v)
		v2, err := ParseJSON(enc)
		if err != nil {
			t.Fatalf("the encoding %q of %q does not parse: %v", enc, data, err)
		}
		if enc2 := EncodeJSON(v2); !bytes.Equal(enc, enc2) {
			t.Fatalf("encoding is not a fixed point: %q then %q", enc, enc2)
		}
		if !bytes.Equal(Canonical(v), Canonical(v2)) {
			t.Fatalf("canonical encodings differ for %q", data)
		}
		if _, err := ParseJSONExt(data); err != nil {
			t.Fatalf("ParseJSONExt rejects what ParseJSON accepts: %v", err)
		}
	})
}

// FuzzMockFile: any mock file loads or fails without a panic, and a
// loaded file answers any prompt and tool name without a panic.
func FuzzMockFile(f *testing.F) {
	for _, s := range []string{
		`{"refund": "yes", "__default__": {"$sequence": ["a", {"$error": {"kind": "timeout", "message": "m"}}]}}`,
		`{"pay": "PENDING", "x": {"$reply": {"a": 1}, "$usage": {"prompt_tokens": 3, "cost": 0.1}}}`,
		`{"a": {"$error": "x"}}`, `[]`, `{"": ""}`,
		`{"r": {"$tool_calls": [{"name": "read", "args": {"path": "docs/a"}}, {"name": "web-search"}], "$reply": "ok"}}`,
	} {
		f.Add([]byte(s), "refund please")
	}
	f.Fuzz(func(t *testing.T, data []byte, prompt string) {
		llm, err1 := ParseMockLLM(data)
		tools, err2 := ParseMockTools(data)
		if (err1 == nil) != (err2 == nil) {
			t.Fatalf("the LLM and tools loaders disagree on %q: %v / %v", data, err1, err2)
		}
		if err1 != nil {
			return
		}
		h := NewHost(Config{LLM: llm, Tools: []ToolProvider{tools}})
		h.Execute(RunOptions{}, func(r *Run) Value {
			for i := 0; i < 3; i++ {
				r.LLM(siteA.At(int64(i)), String(prompt), ObjNew())
				r.Tool(siteB.At(int64(i)), String(prompt), ObjNew())
				r.Judge(siteC.At(int64(i)), String(prompt), ObjNew())
				// An agent with tools: scripted tool calls go through them.
				r.LLM(siteA.At(int64(i+3)), String(prompt), agentOptions(Field{"read", List(String("docs/**"))}))
			}
			return Unit()
		})
	})
}

// FuzzJournal: any journal text loads or fails without a panic, and a
// loaded journal replays a program without a panic.
func FuzzJournal(f *testing.F) {
	j := NewJournal("p")
	h := newHost(f, `{"__default__": "yes"}`, "", Config{})
	countingTools(h, true)
	h.Execute(RunOptions{Input: refundInput, Journal: j}, refundFlow)
	f.Add(j.Bytes())
	f.Add([]byte(`{"format":"genesis-journal","version":1,"program":""}` + "\n" + `{"step":"x","resume":1}` + "\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		j, err := ReadJournal(data)
		if err != nil {
			return
		}
		for _, mode := range []JournalMode{JournalResume, JournalReplay} {
			NewHost(Config{}).Execute(RunOptions{Input: refundInput, Journal: j, Mode: mode,
				Resume: &Resumption{Payload: String("ok")}}, refundFlow)
		}
	})
}
