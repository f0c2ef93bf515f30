package host

import (
	"bytes"
	"errors"
	"regexp"
	"strings"
	"testing"

	bc "github.com/genesis-toolchain/genesis/forge/bytecode"
	"github.com/genesis-toolchain/genesis/forge/journal"
	"github.com/genesis-toolchain/genesis/forge/vm"
)

// record runs img on input with a journal and returns the journal's text.
func record(t *testing.T, img *vm.Image, lim Limits, input string) (string, *Result) {
	t.Helper()
	var buf bytes.Buffer
	w, err := journal.NewWriter(&buf, journal.Header{Program: img.Hash(), Ticks: lim.Ticks, Memory: lim.Memory, Stack: lim.Stack, Grant: lim.EffectiveGrant()})
	if err != nil {
		t.Fatal(err)
	}
	r, err := Run(img, Options{Limits: lim, Trace: true, Input: NewStdin(strings.NewReader(input)), Stdout: new(bytes.Buffer), Recorder: w})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Finish(r.End()); err != nil {
		t.Fatal(err)
	}
	return buf.String(), r
}

func replay(t *testing.T, img *vm.Image, text string) (string, *Result, error) {
	t.Helper()
	j, err := journal.Read(strings.NewReader(text))
	if err != nil {
		t.Fatalf("reading the journal: %v\n%s", err, text)
	}
	var out bytes.Buffer
	r, err := Replay(img, j, &out, nil)
	return out.String(), r, err
}

func TestReplay(t *testing.T) {
	img := catProgram(t)
	input := strings.Repeat("journal ", 10000)
	text, rec := record(t, img, DefaultLimits(), input)
	out, r, err := replay(t, img, text)
	if err != nil {
		t.Fatal(err)
	}
	if out != input {
		t.Errorf("replay output differs")
	}
	if r.Ticks != rec.Ticks || *r.TraceHash != *rec.TraceHash || r.Output != rec.Output || r.Input != rec.Input {
		t.Errorf("replay %+v, recorded %+v", r, rec)
	}
	// cat polls before it reads: every delivery (two chunks and the end
	// of input) was made to a waiting POLL, and replays there.
	if rec.PollWaits != 3 || r.PollWaits != 3 {
		t.Errorf("POLL waited %d times, replayed %d; want 3", rec.PollWaits, r.PollWaits)
	}
}

// TestReplayVersion2Polling replays a journal marked version 2, from
// before POLL waited for input: the run of a program that polls an empty
// channel cannot reproduce it, and the replay says why, at the POLL.
func TestReplayVersion2Polling(t *testing.T) {
	img := catProgram(t)
	text, _ := record(t, img, DefaultLimits(), "hello\n")
	old := strings.Replace(text, `"version":3`, `"version":2`, 1)
	if old == text {
		t.Fatal("the journal is not version 3")
	}
	_, _, err := replay(t, img, old)
	var d *Divergence
	want := "the program waits at a POLL of channel 2, which has no message queued, at 2 ticks: journal version 2 was recorded when such a POLL gave 0 without waiting"
	if !errors.As(err, &d) || !strings.Contains(err.Error(), want) {
		t.Errorf("got %v, want a divergence mentioning %q", err, want)
	}
	// A version 2 journal of a run that only RECVs still replays.
	b := newBuilder()
	b.op(bc.LI, 1, 0, 0, heap)
	b.op(bc.RECV, 1, 0, 2, 4)
	b.op(bc.POLL, 2, 0, 2, 0) // "ab" is left: POLL does not wait
	b.op(bc.HALT, 0, 0, 0, 0)
	img = b.image(t)
	text, _ = record(t, img, DefaultLimits(), "abcdef")
	if _, r, err := replay(t, img, strings.Replace(text, `"version":3`, `"version":2`, 1)); err != nil || r.PollWaits != 0 {
		t.Errorf("version 2 journal without a waiting POLL: %v", err)
	}
}

func TestReplayBlockedAndFaulted(t *testing.T) {
	b := newBuilder()
	b.op(bc.LI, 1, 0, 0, heap)
	b.op(bc.RECV, 1, 0, 2, 4)
	b.op(bc.RECV, 1, 0, 3, 4) // blocks: nobody services 3
	b.op(bc.HALT, 0, 0, 0, 0)
	lim := DefaultLimits()
	lim.Grant |= 1 << 3
	img := b.image(t)
	text, rec := record(t, img, lim, "abc")
	if rec.State != vm.Blocked {
		t.Fatalf("recorded %s", rec.Summary())
	}
	if _, _, err := replay(t, img, text); err != nil {
		t.Errorf("replaying a blocked run: %v", err)
	}

	b = newBuilder()
	b.op(bc.DIV, 1, 1, 2, 0)
	img = b.image(t)
	text, _ = record(t, img, DefaultLimits(), "")
	if _, r, err := replay(t, img, text); err != nil || r.Fault != vm.DivideByZero {
		t.Errorf("replaying a fault: %v, %v", r, err)
	}
}

func TestReplayDivergence(t *testing.T) {
	img := catProgram(t)
	text, _ := record(t, img, DefaultLimits(), "hello\n")
	lines := strings.SplitAfter(text, "\n")
	// lines: header, "hello\n" delivery, EOF delivery, result, "".
	for _, tc := range []struct {
		name string
		edit func() string
		want string
	}{
		{"data", func() string { return strings.Replace(text, "aGVsbG8K", "aGVsbG8h", 1) }, "output_sha256: recorded"},
		{"ticks", func() string { return strings.Replace(text, `{"ticks":2,`, `{"ticks":3,`, 1) }, "the program blocked on channel 2 at 2 ticks, but the journal's next delivery (line 2) is on channel 2 at 3 ticks"},
		{"channel", func() string { return strings.Replace(text, `"ch":2,"data":"aGVsbG8K"`, `"ch":3,"data":"aGVsbG8K"`, 1) }, "is on channel 3"},
		{"missing", func() string { return lines[0] + lines[1] + lines[3] }, "the program blocked on channel 2 at "},
		{"extra", func() string {
			return lines[0] + lines[1] + lines[2] + `{"ticks":99999,"ch":2,"data":""}` + "\n" + lines[3]
		}, "with 1 delivery of the journal unused, the first on channel 2 at 99999 ticks (line 4)"},
		{"result ticks", func() string { return strings.Replace(text, `"ticks_used":`, `"ticks_used":1`, 1) }, "ticks_used: recorded 1"},
		{"trace", func() string {
			return regexp.MustCompile(`"trace_hash":"[0-9a-f]+"`).ReplaceAllString(text, `"trace_hash":"`+strings.Repeat("0", 64)+`"`)
		}, "trace_hash: recorded 0000"},
		{"no trace", func() string {
			return regexp.MustCompile(`"trace_hash":"[0-9a-f]+"`).ReplaceAllString(text, `"trace_hash":null`)
		}, "trace_hash: recorded none"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			edited := tc.edit()
			if edited == text {
				t.Fatal("the edit changed nothing")
			}
			_, _, err := replay(t, img, edited)
			var d *Divergence
			if !errors.As(err, &d) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("got %v, want a divergence mentioning %q", err, tc.want)
			}
		})
	}
}

func TestReplayWrongProgram(t *testing.T) {
	text, _ := record(t, catProgram(t), DefaultLimits(), "")
	other := newBuilder().op(bc.HALT, 0, 0, 0, 0).image(t)
	if _, _, err := replay(t, other, text); err == nil || !strings.Contains(err.Error(), "recorded for program") {
		t.Errorf("got %v", err)
	}
	incomplete := strings.SplitAfter(text, "\n")[0]
	if _, _, err := replay(t, catProgram(t), incomplete); err == nil || !strings.Contains(err.Error(), "incomplete") {
		t.Errorf("got %v", err)
	}
}
