package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// genesisc trace --html on the trace and journal of a real run: the
// page names the program, shows the prompt (from the journal) and the
// replies; --html - writes the same bytes to standard output.
func TestTraceHTML(t *testing.T) {
	useRunCache(t)
	dir := t.TempDir()
	examples, err := filepath.Abs("../../examples")
	if err != nil {
		t.Fatal(err)
	}
	trace, journal := filepath.Join(dir, "run.trace"), filepath.Join(dir, "run.journal")
	code, _, errs := genesisc(t, dir, "run", "--target", "forge",
		"--llm", "mock:"+filepath.Join(examples, "refund.llm.json"), "--tools", "mock:"+filepath.Join(examples, "refund.tools.json"),
		"--input", "user_input=I broke it", "--trace", trace, "--journal", journal, filepath.Join(examples, "refund.json"))
	if code != 0 {
		t.Fatalf("genesisc run: exit %d\n%s", code, errs)
	}
	code, out, errs := genesisc(t, dir, "trace", "--html", "run.html", "--journal", journal, trace)
	if code != 0 || out != "" || errs != "" {
		t.Fatalf("genesisc trace: exit %d, stdout %q, stderr %q", code, out, errs)
	}
	page, err := os.ReadFile(filepath.Join(dir, "run.html"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"<h1>refund.json</h1>", `<span class="badge" id="run-status">success</span>`,
		"I broke it", "<pre class=\"payload\">rejection sent</pre>", "run.journal (2 requests)"} {
		if !strings.Contains(string(page), want) {
			t.Errorf("the page lacks %q", want)
		}
	}
	// Flags after the file, and the page on standard output.
	code, out, errs = genesisc(t, dir, "trace", trace, "--journal", journal, "--html", "-")
	if code != 0 || out != string(page) {
		t.Errorf("genesisc trace --html -: exit %d, %d bytes unlike the file's %d\n%s", code, len(out), len(page), errs)
	}
}

// Wrong command lines and bad traces: a clear message, the exit status
// of each kind, and no page.
func TestTraceHTMLErrors(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "ok.trace", `{"event":"run_started","t":0,"program":"p","clock":"virtual"}`+"\n")
	writeFile(t, dir, "bad.trace", `{"event":"run_started","t":0,"program":"p","clock":"virtual"}`+"\n{\"event\": 5}\n")
	writeFile(t, dir, "other.journal", `{"format":"genesis-journal","version":1,"program":"q","run":"x"}`+"\n")
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"ok.trace"}, 2, "genesisc trace: --html OUT.html is required (the page is the only output so far)\n"},
		{[]string{"--html", "out.html"}, 2, "genesisc trace: want one trace file, have 0\n"},
		{[]string{"--html", "out.html", "ok.trace", "bad.trace"}, 2, "genesisc trace: want one trace file, have 2\n"},
		{[]string{"--html", "out.html", "--max-steps", "0", "ok.trace"}, 2, "genesisc trace: --max-steps must be positive\n"},
		{[]string{"--html", "out.html", "--max-payload", "lots", "ok.trace"}, 2, "genesisc trace: --max-payload: \"lots\" is not a size from 1B to 1GiB\n"},
		{[]string{"--html", "out.html", "missing.trace"}, 1, "genesisc trace: open missing.trace: no such file or directory\n"},
		{[]string{"--html", "out.html", "bad.trace"}, 1, "genesisc trace: bad.trace:2: not a trace event: field \"event\" is a JSON number, not what the trace format has there\n"},
		{[]string{"--html", "out.html", "--journal", "other.journal", "ok.trace"}, 1, "genesisc trace: other.journal:1: the journal is of program \"q\", the trace of \"p\"\n"},
		{[]string{"--html", "no/such/dir/out.html", "ok.trace"}, 1, "genesisc trace: open no/such/dir/"},
	} {
		code, out, errs := genesisc(t, dir, append([]string{"trace"}, tc.args...)...)
		if code != tc.code || out != "" || !strings.HasPrefix(errs, tc.want) {
			t.Errorf("genesisc trace %s: exit %d, stdout %q, stderr %q; want exit %d, %q", strings.Join(tc.args, " "), code, out, errs, tc.code, tc.want)
		}
		if _, err := os.Stat(filepath.Join(dir, "out.html")); err == nil {
			t.Fatalf("genesisc trace %s wrote a page", strings.Join(tc.args, " "))
		}
	}
	if left, _ := filepath.Glob(filepath.Join(dir, ".out.html.*")); len(left) > 0 {
		t.Errorf("temporary pages left behind: %v", left)
	}
}
