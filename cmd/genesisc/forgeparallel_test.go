package main

import (
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/genesis-toolchain/genesis/runtime"
)

// slowModel is an OpenAI-compatible server that answers every prompt with
// a text made from it after delay, and records the most requests it had
// in flight at once.
type slowModel struct {
	delay     time.Duration
	now, peak atomic.Int64
	calls     atomic.Int64
}

func (s *slowModel) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.calls.Add(1)
	n := s.now.Add(1)
	defer s.now.Add(-1)
	for old := s.peak.Load(); n > old && !s.peak.CompareAndSwap(old, n); old = s.peak.Load() {
	}
	body, _ := io.ReadAll(r.Body)
	req, err := runtime.ParseJSON(body)
	if err != nil {
		http.Error(w, err.Error(), 400)
		return
	}
	msgs, _ := req.Get("messages")
	prompt := ""
	if l := msgs.Elems(); len(l) > 0 {
		c, _ := l[len(l)-1].Get("content")
		prompt = c.Str()
	}
	time.Sleep(s.delay)
	w.Header().Set("Content-Type", "application/json")
	io.WriteString(w, `{"id":"c","object":"chat.completion","created":1,"model":"m","choices":[{"index":0,"message":{"role":"assistant","content":`+
		string(runtime.AppendJSON(nil, runtime.String("re: "+strings.ToUpper(prompt))))+`},"finish_reason":"stop"}],"usage":{"prompt_tokens":3,"completion_tokens":4}}`)
}

// fanOut has a parallel block of eight model calls.
const fanOut = `{"name": "fan", "steps": [
  {"id": "fan", "type": "parallel", "parallel_steps": [
    {"id": "a", "type": "llm", "prompt": "a: $topic"},
    {"id": "b", "type": "llm", "prompt": "b: $topic"},
    {"id": "c", "type": "llm", "prompt": "c: $topic"},
    {"id": "d", "type": "llm", "prompt": "d: $topic"},
    {"id": "e", "type": "llm", "prompt": "e: $topic"},
    {"id": "f", "type": "llm", "prompt": "f: $topic"},
    {"id": "g", "type": "llm", "prompt": "g: $topic"},
    {"id": "h", "type": "llm", "prompt": "h: $topic"}]},
  {"id": "sum", "type": "llm", "prompt": "$a $b $c $d $e $f $g $h", "output_key": "out"}
]}`

// TestRunForgeParallelConcurrent: genesisc run --target forge runs the
// branches of a parallel block at once, as the go target does: the model
// server sees several of the block's calls in flight together, and the
// run's result and trace are those of the run with the calls made one at
// a time (a server that answers at once, and a block limit of 1).
func TestRunForgeParallelConcurrent(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "fan.json", fanOut)
	if err := os.Mkdir(filepath.Join(dir, "one"), 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, dir, "one/fan.json", strings.ReplaceAll(fanOut, `"type": "parallel",`, `"type": "parallel", "max_concurrency": 1,`))
	var mu sync.Mutex // one run at a time: genesisc changes directory
	runWith := func(delay time.Duration, prog, trace string) (*slowModel, string) {
		t.Helper()
		mu.Lock()
		defer mu.Unlock()
		model := &slowModel{delay: delay}
		srv := httptest.NewServer(model)
		defer srv.Close()
		code, out, errs := genesisc(t, dir, "run", "--target", "forge", "--llm", "openai:"+srv.URL, "--model", "m",
			"--input", "topic=owls", "--trace", trace, prog)
		if code != 0 {
			t.Fatalf("genesisc run --target forge %s: exit %d\n%s%s", prog, code, out, errs)
		}
		if model.calls.Load() != 9 {
			t.Fatalf("%s: %d model calls, want 9", prog, model.calls.Load())
		}
		return model, out
	}
	one, want := runWith(0, "one/fan.json", "one.trace")
	if one.peak.Load() != 1 {
		t.Fatalf("a block of limit 1 had %d calls in flight at once", one.peak.Load())
	}
	wantTrace := readFile(t, filepath.Join(dir, "one.trace"))
	model, got := runWith(20*time.Millisecond, "fan.json", "fan.trace")
	if model.peak.Load() < 2 {
		t.Errorf("the model server never had two of the block's calls in flight at once: the branches ran one after another")
	}
	if got != want {
		t.Errorf("the result of the concurrent run:\n%s\nthe result one call at a time:\n%s", got, want)
	}
	if gotTrace := readFile(t, filepath.Join(dir, "fan.trace")); gotTrace != wantTrace {
		t.Errorf("the traces differ:\n%s\n%s", gotTrace, wantTrace)
	}
}
