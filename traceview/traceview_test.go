package traceview

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"runtime"
	"strings"
	"testing"

	"github.com/genesis-toolchain/genesis/internal/golden"
)

// sample returns the trace and journal of the sample run,
// testdata/review.txtar (written by genesisc run from its review.vvm).
func sample(t testing.TB) (trace, journal []byte) {
	t.Helper()
	c, err := golden.Load("testdata/review.txtar")
	if err != nil {
		t.Fatal(err)
	}
	tr, ok1 := c.File("trace")
	j, ok2 := c.File("journal")
	if !ok1 || !ok2 {
		t.Fatal("testdata/review.txtar has no trace or no journal")
	}
	return []byte(tr), []byte(j)
}

// readSample reads the sample run.
func readSample(t *testing.T) *View {
	t.Helper()
	tr, j := sample(t)
	v, err := Read(bytes.NewReader(tr), Options{TraceName: "review.trace", Journal: bytes.NewReader(j), JournalName: "review.journal"})
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// hostileReply is a model's reply that tries to leave the page's text.
const hostileReply = `</script><img src=x onerror="window.pwned=1"><script>window.pwned=1</script>`

var hostileTrace = func() string {
	q := func(s string) string { b, _ := json.Marshal(s); return string(b) }
	name := q(`<b onclick="window.pwned=1">ask</b>`)
	return `{"event":"run_started","t":0,"program":` + q(`</title><script>window.pwned=1</script>`) + `,"clock":"virtual"}
{"event":"step_started","t":0,"step":"ask @ p.vvm:1:1","name":` + name + `,"kind":"llm"}
{"event":"step_completed","t":0,"step":"ask @ p.vvm:1:1","name":` + name + `,"kind":"llm","status":"success","duration_ms":0,"attempts":1,"tokens":{"prompt":1,"completion":1},"cost":0,"output":` + q(hostileReply) + `}
{"event":"note","t":0,"step":"statement @ p.vvm:2:1","name":"statement","data":{"kind":"statement","text":` + q(`<img src=x onerror="window.pwned=1">`) + `}}
{"event":"run_completed","t":0,"status":"failed","steps":1,"tokens":{"prompt":1,"completion":1},"cost":0,"output":null,"error":{"kind":"x","message":` + q(`"><img src=x onerror="window.pwned=1">`) + `,"step":null}}
`
}()

// The page of each testdata/*.txtar's trace (and journal, and options):
// its body without the script, or the error.
func TestGolden(t *testing.T) {
	golden.Run(t, "testdata/*.txtar", func(t *testing.T, c *golden.Case) {
		tr, _ := c.File("trace")
		var opts Options
		if o, ok := c.File("options"); ok {
			if err := json.Unmarshal([]byte(o), &opts); err != nil {
				t.Fatal(err)
			}
		}
		opts.TraceName = "trace"
		if j, ok := c.File("journal"); ok {
			opts.Journal, opts.JournalName = strings.NewReader(j), "journal"
		}
		var page bytes.Buffer
		if err := Write(&page, strings.NewReader(tr), opts); err != nil {
			c.Check("out/errors", err.Error())
			return
		}
		c.Check("out/html", body(t, page.String()))
	})
}

// body is the page between <body> and the script.
func body(t *testing.T, page string) string {
	t.Helper()
	i, j := strings.Index(page, "<body>\n"), strings.Index(page, "<script>")
	if i < 0 || j < i {
		t.Fatalf("the page has no body or no script:\n%s", page)
	}
	return page[i+len("<body>\n") : j]
}

// The sample run's page: the same bytes every time, from the whole
// trace and journal.
func TestSampleDeterministic(t *testing.T) {
	var first []byte
	for i := 0; i < 3; i++ {
		var page bytes.Buffer
		if err := Render(&page, readSample(t)); err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			first = page.Bytes()
		} else if !bytes.Equal(first, page.Bytes()) {
			t.Fatal("two renderings of the same trace differ")
		}
	}
	v := readSample(t)
	if v.Requests != 4 || len(v.Lanes) != 4 || !v.Completed || v.Status != "budget_exceeded" || v.ErrKind != "limit.cost" {
		t.Errorf("sample: %d requests, %d lanes, completed %v, status %q, error %q", v.Requests, len(v.Lanes), v.Completed, v.Status, v.ErrKind)
	}
}

// The page's own script is the one its policy allows, and the policy
// allows no load.
func TestPolicy(t *testing.T) {
	var page bytes.Buffer
	if err := Render(&page, readSample(t)); err != nil {
		t.Fatal(err)
	}
	p := page.String()
	for _, want := range []string{
		`content="default-src &#39;none&#39;; style-src &#39;unsafe-inline&#39;; script-src &#39;` + strings.ReplaceAll(scriptHash, "+", "&#43;") + `&#39;`,
		"<script>" + pageJS + "</script>",
	} {
		if !strings.Contains(p, want) {
			t.Errorf("the page lacks %.120q", want)
		}
	}
	for _, bad := range []string{"http://", "https://", "src=", "@import", "url("} {
		if strings.Contains(p, bad) {
			t.Errorf("the page holds %q: it could fetch", bad)
		}
	}
}

// Escaping, without a browser: nothing of the hostile trace is markup.
func TestEscaping(t *testing.T) {
	var page bytes.Buffer
	if err := Write(&page, strings.NewReader(hostileTrace), Options{}); err != nil {
		t.Fatal(err)
	}
	p := page.String()
	if n := strings.Count(p, "<script"); n != 1 {
		t.Errorf("the page has %d <script (want 1, its own)", n)
	}
	for _, bad := range []string{"<img", "<b ", "</script><"} {
		if strings.Contains(p, bad) {
			t.Errorf("the page holds %q from the trace", bad)
		}
	}
	if !strings.Contains(p, "&lt;/script&gt;&lt;img src=x onerror=&#34;window.pwned=1&#34;&gt;") {
		t.Error("the reply is not in the page as escaped text")
	}
}

// Bad input is an error naming the line, never a panic: every prefix of
// the sample trace with a byte changed.
func TestBadInput(t *testing.T) {
	for _, tc := range []struct{ trace, want string }{
		{"", "run.trace: empty: the trace has no events"},
		{"\n\n", "run.trace: empty: the trace has no events"},
		{"{\"event\":\"run_started\",\"t\":0}\n{\"event\":", "run.trace:2: not a trace event: bad JSON: it ends too soon"},
		{"{\"event\":\"run_started\",\"t\":0}\nnot json\n", "run.trace:2: not a trace event: bad JSON at byte 2: invalid character 'o' in literal null (expecting 'u')"},
		{"[1,2]\n", `run.trace:1: not a trace event: field "" is a JSON array, not what the trace format has there`},
		{"{\"t\":0}\n", `run.trace:1: not a trace event: it has no "event"`},
		{"{\"event\":\"run_started\"}\n", `run.trace:1: not a trace event: it has no "t"`},
		{"{\"event\":\"step_started\",\"t\":0,\"step\":\"a\"}\n", `run.trace:1: the trace does not start with run_started (it starts with "step_started")`},
		{"{\"event\":\"run_started\",\"t\":0}\n{\"event\":\"step_started\",\"t\":0,\"step\":5}\n", `run.trace:2: not a trace event: field "step" is a JSON number, not what the trace format has there`},
		{"{\"event\":\"run_started\",\"t\":0}\n{\"event\":\"step_started\",\"t\":0}\n", `run.trace:2: step_started has no "step"`},
		{"{\"event\":\"run_started\",\"t\":0}\n{\"event\":\"run_started\",\"t\":0}\n", `run.trace:2: a second run_started`},
		{"{\"event\":\"run_started\",\"t\":0}\n{\"event\":\"run_completed\",\"t\":0,\"status\":\"success\",\"error\":null}\n{\"event\":\"note\",\"t\":0}\n", `run.trace:3: an event after run_completed (only another run's run_started may follow)`},
		{"{\"event\":\"run_started\",\"t\":0}\n{\"event\":\"run_completed\",\"t\":0,\"status\":\"success\",\"error\":null}\n{\"event\":\"run_started\",\"t\":0}\n{\"event\":\"run_started\",\"t\":0}\n", `run.trace:4: a run_started before the run_completed of the run before`},
		{"{\"event\":\"run_started\",\"t\":0}\n{\"event\":\"run_completed\",\"t\":0,\"status\":\"success\",\"error\":null}\n{\"event\":\"run_started\",\"t\":0}\nnull x\n", `run.trace:4: not a trace event: more after the JSON value, at byte 6`},
		{"{\"event\":\"run_started\",\"t\":0} {}\n", `run.trace:1: not a trace event: more after the JSON value, at byte 31`},
	} {
		_, err := Read(strings.NewReader(tc.trace), Options{TraceName: "run.trace"})
		var ie *InputError
		if err == nil || !errors.As(err, &ie) || err.Error() != tc.want {
			t.Errorf("%q: error %v; want %s", tc.trace, err, tc.want)
		}
	}
	sample, _ := sample(t)
	for i := 0; i < len(sample); i += 7 {
		for _, b := range []byte{'"', '{', 'x', '\n', 0xff} {
			mut := append(append([]byte{}, sample[:i]...), b)
			mut = append(mut, sample[i+1:]...)
			if v, err := Read(bytes.NewReader(mut), Options{}); err == nil {
				if err := Render(io.Discard, v); err != nil {
					t.Fatalf("byte %d changed to %q: %v", i, b, err)
				}
			}
		}
	}
}

// A journal that is not one, or of another program, is an error; a
// last line cut short by a crash is not.
func TestJournalErrors(t *testing.T) {
	trace, journal := sample(t)
	for _, tc := range []struct{ journal, want string }{
		{`{"step":"a"}` + "\n", `j:1: not a journal: its first line has no "format": "genesis-journal"`},
		{`{"format":"genesis-journal","version":1,"program":"other.vvm"}` + "\n", `j:1: the journal is of program "other.vvm", the trace of "review.vvm"`},
		{string(journal[:bytes.IndexByte(journal, '\n')+1]) + "oops\n{}\n", `j:2: not a journal line: bad JSON at byte 1: invalid character 'o' looking for beginning of value`},
		{string(journal[:len(journal)-10]), ""},
	} {
		_, err := Read(bytes.NewReader(trace), Options{Journal: strings.NewReader(tc.journal), JournalName: "j"})
		got := ""
		if err != nil {
			got = err.Error()
		}
		if got != tc.want {
			t.Errorf("journal %.60q: error %q; want %q", tc.journal, got, tc.want)
		}
	}
}

// A large trace renders within the limits: 75 MB of events (steps with
// 5 KB replies, then a 4 MB one) keeps the page's first 2000 steps and
// 8 MiB of payloads, and the heap stays far below the trace's size.
func TestLargeTrace(t *testing.T) {
	if testing.Short() {
		t.Skip("-short")
	}
	pr, pw := io.Pipe()
	reply := strings.Repeat("r", 5000)
	const steps = 14000
	go func() {
		w := &bytes.Buffer{}
		fmt.Fprintln(w, `{"event":"run_started","t":0,"program":"big","clock":"virtual"}`)
		for i := 0; i < steps; i++ {
			id := fmt.Sprintf("s @ big:1:1 # %d", i)
			fmt.Fprintf(w, `{"event":"step_started","t":%d,"step":%q,"name":"s","kind":"tool"}`+"\n", i, id)
			fmt.Fprintf(w, `{"event":"step_completed","t":%d,"step":%q,"name":"s","kind":"tool","status":"success","duration_ms":1,"output":"%s"}`+"\n", i, id, reply)
			if w.Len() > 1<<20 {
				pw.Write(w.Bytes())
				w.Reset()
			}
		}
		fmt.Fprintf(w, `{"event":"step_started","t":0,"step":"huge","name":"huge","kind":"tool"}`+"\n")
		fmt.Fprintf(w, `{"event":"step_completed","t":0,"step":"huge","name":"huge","kind":"tool","status":"success","output":"%s"}`+"\n", strings.Repeat("h", 4<<20))
		fmt.Fprintf(w, `{"event":"run_completed","t":%d,"status":"success","steps":%d,"tokens":{"prompt":0,"completion":0},"cost":0,"output":"%s","error":null}`+"\n", steps, steps+1, strings.Repeat("o", 100<<10))
		pw.Write(w.Bytes())
		pw.Close()
	}()
	var before runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	cw := &countWriter{}
	v, err := Read(pr, Options{TraceName: "big.trace"})
	if err != nil {
		t.Fatal(err)
	}
	if err := Render(cw, v); err != nil {
		t.Fatal(err)
	}
	var after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&after)
	if len(v.Steps) != DefaultMaxSteps || v.StepsOmitted != steps+1-DefaultMaxSteps || v.Events != 2*steps+4 {
		t.Errorf("%d steps shown, %d omitted, %d events; want %d, %d, %d", len(v.Steps), v.StepsOmitted, v.Events, DefaultMaxSteps, steps+1-DefaultMaxSteps, 2*steps+4)
	}
	if v.Output == nil || v.Output.Omitted == 0 || len(v.Output.Text) > payloadFloor {
		t.Errorf("the run's 100 KB output, past the payloads' total, is not cut to %d bytes", payloadFloor)
	}
	if cw.n > 16<<20 {
		t.Errorf("the page is %d bytes; the limits should hold it near 10 MB", cw.n)
	}
	if live := int64(after.HeapAlloc) - int64(before.HeapAlloc); live > 40<<20 {
		t.Errorf("the view of a 75 MB trace holds %d MB", live>>20)
	}
	runtime.KeepAlive(v)
}

type countWriter struct{ n int }

func (c *countWriter) Write(p []byte) (int, error) { c.n += len(p); return len(p), nil }

// shrink cuts long JSON strings where the page would, never inside an
// escape or a character, and leaves everything else as it was.
func TestShrink(t *testing.T) {
	long := strings.Repeat(`a\"é\u00e9\n`, 40) // 11 bytes of JSON text per repeat
	line := `{"event":"x","output":"` + long + `","n":[1,2],"s":"short"}`
	got, cut := shrink([]byte(line), 10) // keeps 124 bytes of a string
	if !cut {
		t.Fatal("nothing was cut")
	}
	var v struct {
		Event  string
		Output string
		N      []int
		S      string
	}
	if err := json.Unmarshal(got, &v); err != nil {
		t.Fatalf("the shrunk line is no JSON: %v\n%s", err, got)
	}
	var full string
	json.Unmarshal([]byte(`"`+long+`"`), &full)
	if v.Event != "x" || v.S != "short" || len(v.N) != 2 || !strings.HasPrefix(full, v.Output) || len(v.Output) <= 10 || len(v.Output) >= len(full) {
		t.Errorf("shrunk to %q", got)
	}
	if same, cut := shrink([]byte(`{"a":"`+strings.Repeat("b", 100)+`"}`), 1000); cut || string(same) != `{"a":"`+strings.Repeat("b", 100)+`"}` {
		t.Error("a line with no long string was changed")
	}
	// Cut at every position of an escape: still JSON.
	for k := 1; k < 30; k++ {
		body := []byte(long)
		n := escapeCut(body, k)
		var s string
		if n > k || json.Unmarshal([]byte(`"`+string(body[:n])+`"`), &s) != nil {
			t.Errorf("escapeCut(%d) = %d: %q", k, n, body[:n])
		}
	}
}

// A trace whose one step replied 50 MB: the page shows 16 KiB of it,
// and reading it allocates a small multiple of the line, not of the
// reply's copies (the line is read once; decoding and narration see it
// shrunk).
func TestHugeLine(t *testing.T) {
	if testing.Short() {
		t.Skip("-short")
	}
	reply := strings.Repeat("y", 50<<20)
	trace := `{"event":"run_started","t":0,"program":"p","clock":"virtual"}
{"event":"step_started","t":0,"step":"a","name":"a","kind":"llm"}
{"event":"step_completed","t":0,"step":"a","name":"a","kind":"llm","status":"success","output":"` + reply + `"}
{"event":"run_completed","t":0,"status":"success","steps":1,"output":"done","error":null}
`
	reply = ""
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	v, err := Read(strings.NewReader(trace), Options{})
	if err != nil {
		t.Fatal(err)
	}
	runtime.ReadMemStats(&after)
	out := v.Steps[0].Output
	if out == nil || len(out.Text) != DefaultMaxPayload || !out.AtLeast || out.Omitted == 0 {
		t.Fatalf("the reply is not cut to %d bytes with an 'at least' note", DefaultMaxPayload)
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 200<<20 {
		t.Errorf("reading a 50 MB line allocated %d MB", alloc>>20)
	}
	if !strings.Contains(v.Narration[2].Text, "Result: yyyy") {
		t.Errorf("the narration of the huge reply: %q", v.Narration[2].Text)
	}
	// A bad byte after a long string: the error's offset is the line's.
	bad := strings.Replace(trace, `"}
{"event":"run_completed"`, `"x}
{"event":"run_completed"`, 1)
	if _, err := Read(strings.NewReader(bad), Options{}); err == nil || !strings.Contains(err.Error(), "trace:3: not a trace event: bad JSON at byte 52428898") {
		t.Errorf("error %v", err)
	}
}

// A line over MaxLine is an error naming it, whether it fits the read
// buffer or not.
func TestLineLimit(t *testing.T) {
	head := `{"event":"run_started","t":0}` + "\n"
	for _, tc := range []struct {
		n, max int
		want   string
	}{
		{200, 100, "trace:2: the line is longer than the limit of 100 bytes"},
		{300 << 10, 100 << 10, "trace:2: the line is longer than the limit of 100 KiB"},
	} {
		line := `{"event":"note","t":0,"data":"` + strings.Repeat("n", tc.n) + `"}` + "\n"
		_, err := Read(strings.NewReader(head+line), Options{MaxLine: tc.max})
		if err == nil || err.Error() != tc.want {
			t.Errorf("a %d-byte line, limit %d: %v; want %s", tc.n, tc.max, err, tc.want)
		}
	}
}
