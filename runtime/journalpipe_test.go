package runtime

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// streamParent is the parent side of Main's journal stream: it keeps
// the lines the child sends and acknowledges each, refusing the line
// numbered refuse (1-based; 0: none).
type streamParent struct {
	w, r   *os.File // the child's ends
	lines  []string
	done   chan struct{}
	refuse int
}

func newStreamParent(t *testing.T, refuse int) *streamParent {
	t.Helper()
	lr, lw, err := os.Pipe() // lines: child → parent
	if err != nil {
		t.Fatal(err)
	}
	ar, aw, err := os.Pipe() // acknowledgements: parent → child
	if err != nil {
		t.Fatal(err)
	}
	p := &streamParent{w: lw, r: ar, done: make(chan struct{}), refuse: refuse}
	go func() {
		defer close(p.done)
		defer aw.Close()
		defer lr.Close()
		br := bufio.NewReader(lr)
		for {
			line, err := br.ReadString('\n')
			if err != nil {
				return
			}
			if len(p.lines)+1 == p.refuse {
				aw.WriteString("error the engine is gone\n")
				continue
			}
			p.lines = append(p.lines, line)
			aw.WriteString("ok\n")
		}
	}()
	t.Cleanup(func() { lw.Close(); ar.Close() })
	return p
}

// flag is the --journal-fd value of the child's ends.
func (p *streamParent) flag() string {
	return strconv.Itoa(int(p.w.Fd())) + "," + strconv.Itoa(int(p.r.Fd()))
}

// wait closes the child's ends (as the child's exit does) and waits for
// the parent to have read every line.
func (p *streamParent) wait() []string {
	p.w.Close()
	<-p.done
	return p.lines
}

// TestMainJournalStream runs Main with --journal-fd: every journal line
// goes to the parent, acknowledged, the same lines a sink journal gets;
// a run resumed from a prefix (--journal FILE --resume) sends only the
// new lines and gives the same result; a refused line fails the run
// with kind journal; and the flags that do not go with the stream are
// usage errors.
func TestMainJournalStream(t *testing.T) {
	dir := t.TempDir()
	llm := filepath.Join(dir, "llm.json")
	os.WriteFile(llm, []byte(refundLLM), 0o644)
	prog := func(h *Host, o RunOptions) *Result {
		countingTools(h, false)
		o.Input = refundInput
		return h.Execute(o, refundFlow)
	}
	main := func(args ...string) (int, string, string) {
		var stdout, stderr bytes.Buffer
		code := mainIO(append([]string{"--llm", "mock:" + llm}, args...), "refund", nil, prog, &stdout, &stderr)
		return code, stdout.String(), stderr.String()
	}

	// The reference: the lines a sink journal gets.
	h := newHost(t, refundLLM, "", Config{})
	countingTools(h, false)
	ref := &lineSink{}
	j, err := NewSinkJournal("refund", "run-1", ref)
	if err != nil {
		t.Fatal(err)
	}
	want := h.Execute(RunOptions{Program: "refund", Input: refundInput, Journal: j, RunID: "run-1"}, refundFlow)

	p := newStreamParent(t, 0)
	code, out, errOut := main("--journal-fd", p.flag(), "--run-id", "run-1")
	lines := p.wait()
	if code != 0 || strings.TrimSpace(out) != resultJSON(want) {
		t.Fatalf("--journal-fd: exit %d, %s%s\nwant 0 and %s", code, out, errOut, resultJSON(want))
	}
	if strings.Join(lines, "") != strings.Join(ref.lines, "") {
		t.Fatalf("streamed lines:\n%s\nwant a sink journal's:\n%s", strings.Join(lines, ""), strings.Join(ref.lines, ""))
	}

	// Resumed after 4 lines: the rest of the lines, the same result.
	file := filepath.Join(dir, "earlier")
	os.WriteFile(file, []byte(strings.Join(lines[:4], "")), 0o644)
	p = newStreamParent(t, 0)
	code, out, errOut = main("--journal", file, "--resume", "--journal-fd", p.flag())
	more := p.wait()
	if code != 0 || strings.TrimSpace(out) != resultJSON(want) {
		t.Errorf("--journal-fd --resume: exit %d, %s%s", code, out, errOut)
	}
	if len(more) == 0 || strings.Contains(strings.Join(more, ""), `"format"`) || !strings.Contains(more[len(more)-1], `"end":"success"`) {
		t.Errorf("resumed: the new lines\n%s\nwant the rest, without a header, to the end line", strings.Join(more, ""))
	}
	if got, _ := os.ReadFile(file); string(got) != strings.Join(lines[:4], "") {
		t.Errorf("--journal FILE was written to with --journal-fd:\n%s", got)
	}

	// A refused line fails the run: kind journal, the parent's reason.
	p = newStreamParent(t, 3)
	code, out, _ = main("--journal-fd", p.flag())
	p.wait()
	if code != 1 || !strings.Contains(out, `"kind":"journal"`) || !strings.Contains(out, "the engine is gone") {
		t.Errorf("a refused line: exit %d, %s; want 1 and a journal failure", code, out)
	}

	for _, args := range [][]string{
		{"--journal-fd", "1,2"},
		{"--journal-fd", "7"},
		{"--journal-fd", "900,901"},
		{"--journal-fd", "5,6", "--replay", "--journal", file},
		{"--journal-fd", "5,6", "--journal", file},
		{"--journal-fd", "5,6", "--repeat", "2"},
		{"--run-id", "x", "--journal", file, "--resume"},
	} {
		if code, _, errOut := main(args...); code != 2 || errOut == "" {
			t.Errorf("%v: exit %d, %q; want a usage error", args, code, errOut)
		}
	}
}
