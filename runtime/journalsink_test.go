package runtime

import (
	"errors"
	"strings"
	"testing"
)

// lineSink keeps the lines a journal writes, as an engine's steps would.
type lineSink struct {
	lines []string
	fail  bool
}

func (s *lineSink) AppendLine(line []byte) error {
	if s.fail {
		return errors.New("the engine is gone")
	}
	s.lines = append(s.lines, string(line))
	return nil
}

// TestSinkJournal checks a journal on a sink against a file journal: the
// same lines; and a run resumed from the lines a crash left (every
// prefix) gives the uninterrupted result, calling pay only when its
// line is missing, and appends only the new lines to the sink.
func TestSinkJournal(t *testing.T) {
	h := newHost(t, refundLLM, "", Config{})
	countingTools(h, false)
	sink := &lineSink{}
	j, err := NewSinkJournal("refund", "run-1", sink)
	if err != nil {
		t.Fatal(err)
	}
	want := h.Execute(RunOptions{Input: refundInput, Journal: j}, refundFlow)
	if want.Status != StatusSuccess || j.Ended() != StatusSuccess || j.Awaiting() != "" {
		t.Fatalf("run: %s, journal ended %q", resultJSON(want), j.Ended())
	}
	mem := NewJournal("refund")
	h.Execute(RunOptions{Input: refundInput, Journal: mem}, refundFlow)
	memLines := strings.SplitAfter(string(mem.Bytes()), "\n")
	if len(memLines)-1 != len(sink.lines) || sink.lines[0] != `{"format":"genesis-journal","version":1,"program":"refund","run":"run-1"}`+"\n" {
		t.Fatalf("sink lines:\n%s\nwant as many as an in-memory journal's:\n%s", strings.Join(sink.lines, ""), mem.Bytes())
	}
	for keep := 1; keep < len(sink.lines); keep++ {
		h := newHost(t, refundLLM, "", Config{})
		calls := countingTools(h, false)
		more := &lineSink{}
		j, err := ResumeSinkJournal([]byte(strings.Join(sink.lines[:keep], "")), more)
		if err != nil {
			t.Fatal(err)
		}
		if j.RunID() != "run-1" {
			t.Fatalf("resumed journal's run id %q", j.RunID())
		}
		got := h.Execute(RunOptions{Input: refundInput, Journal: j, Mode: JournalResume}, refundFlow)
		if resultJSON(got) != resultJSON(want) {
			t.Errorf("resumed after %d lines:\n%s\nwant\n%s", keep, resultJSON(got), resultJSON(want))
		}
		if payDone := keep > 3; (calls.Load() == 0) != payDone {
			t.Errorf("resumed after %d lines: pay called %d times", keep, calls.Load())
		}
		if n := len(more.lines); n != len(sink.lines)-keep {
			t.Errorf("resumed after %d lines: %d new lines, want %d", keep, n, len(sink.lines)-keep)
		}
		if j.Usage() != want.Usage {
			t.Errorf("resumed after %d lines: the journal's usage %+v, want the run's %+v", keep, j.Usage(), want.Usage)
		}
	}

	// A sink that fails fails the run, kind journal.
	bad := &lineSink{}
	j, _ = NewSinkJournal("refund", "", bad)
	bad.fail = true
	res := h.Execute(RunOptions{Input: refundInput, Journal: j}, refundFlow)
	if res.Status != StatusFailed || res.Error == nil || res.Error.Kind != "journal" {
		t.Errorf("a failing sink: %s", resultJSON(res))
	}
	if _, err := ResumeSinkJournal([]byte("not a journal\n"), bad); err == nil {
		t.Error("ResumeSinkJournal read a non-journal")
	}
	if _, err := NewSinkJournal("p", "", nil); err == nil {
		t.Error("NewSinkJournal without a sink")
	}
}
