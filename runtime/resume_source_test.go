package runtime

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestResumeSource: --resume --payload without --source resumes from a
// WEBHOOK (nano-vm's WebhookEvent default); --source names another
// origin; a source nano-vm does not know is a usage error. The program
// returns the source its resume wait receives.
func TestResumeSource(t *testing.T) {
	dir := t.TempDir()
	tools := filepath.Join(dir, "tools.json")
	os.WriteFile(tools, []byte(`{"pay": "PENDING"}`), 0o644)
	prog := func(h *Host, opts RunOptions) *Result {
		return h.Execute(opts, func(r *Run) Value {
			if reply := r.Tool(sPay.At(), String("pay"), Object()); ValueEq(reply, String("PENDING")) {
				ev := r.Wait(sPayWait.At(), Object(Field{"kind", String("resume")}, Field{"step", String("pay")}))
				return ObjGet(ev, String("source"))
			}
			return String("not pending")
		})
	}
	for i, c := range []struct {
		source []string
		code   int
		want   string // in stdout, or stderr for a usage error
	}{
		{nil, 0, `"output":"WEBHOOK"`},
		{[]string{"--source", "OPERATOR"}, 0, `"output":"OPERATOR"`},
		{[]string{"--source", "TIMER"}, 0, `"output":"TIMER"`},
		{[]string{"--source", "cron"}, 2, `--source: want WEBHOOK, OPERATOR or TIMER, not "cron"`},
	} {
		journal := filepath.Join(dir, "run"+string(rune('0'+i))+".journal")
		base := []string{"--tools", "mock:" + tools, "--journal", journal}
		var stdout, stderr bytes.Buffer
		if code := mainIO(base, "p", nil, prog, &stdout, &stderr); code != 3 || !strings.Contains(stdout.String(), `"steps":["pay"],"output":null`) {
			t.Fatalf("first run: exit %d, want 3 (suspended, pay listed once, no output)\n%s%s", code, stdout.String(), stderr.String())
		}
		stdout.Reset()
		stderr.Reset()
		args := append(append(base, "--resume", "--payload", `{"paid": true}`), c.source...)
		code := mainIO(args, "p", nil, prog, &stdout, &stderr)
		got := stdout.String()
		if c.code == 2 {
			got = stderr.String()
		}
		if code != c.code || !strings.Contains(got, c.want) {
			t.Errorf("resumed with %q: exit %d, want %d with %q in\n%s%s", c.source, code, c.code, c.want, stdout.String(), stderr.String())
		}
	}
}

// TestTraceOutput: trace "output" puts each field of its payload in the
// result's outputs (nano-vm's output_key) and is not a step.
func TestTraceOutput(t *testing.T) {
	h := NewHost(Config{})
	res := h.Execute(RunOptions{}, func(r *Run) Value {
		r.Trace(sRoute.At(), String("completed"), String("pay"))
		r.Trace(sRoute.At(), String("output"), Object(Field{"choice", String("pay")}, Field{"none", Unit()}))
		return String("done")
	})
	if got, want := string(AppendJSON(nil, res.Outputs)), `{"route":"pay","choice":"pay","none":null}`; got != want {
		t.Errorf("outputs %s, want %s", got, want)
	}
	if len(res.Steps) != 1 {
		t.Errorf("steps %v: the output is no step", res.Steps)
	}
}
