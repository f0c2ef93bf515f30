package host

import (
	"encoding/hex"
	"fmt"
	"io"
	"strings"

	"github.com/genesis-toolchain/genesis/forge/journal"
	"github.com/genesis-toolchain/genesis/forge/vm"
)

// Divergence is the error of a replay that did not reproduce its journal.
type Divergence struct {
	Msg string
}

func (d *Divergence) Error() string { return "replay diverged: " + d.Msg }

// JournalInput is an Input that serves a journal's deliveries, strictly:
// when the machine blocks, the next recorded delivery must be on the
// channel it is blocked on and at the tick count it has reached, or the
// replay has diverged (Blocked returns a *Divergence). Deliveries recorded
// at the same tick count are delivered together, as they were. When the
// journal has no delivery left, it delivers nothing, so the run stops
// BLOCKED; Finish tells whether that, and everything else, matches.
type JournalInput struct {
	ds      []journal.Delivery
	next    int
	version int // the journal's format version
	// starved is set when the machine blocked with no delivery left.
	starved      bool
	starvedCh    uint8
	starvedTicks uint64
}

// NewJournalInput returns an Input serving j's deliveries.
func NewJournalInput(j *journal.Journal) *JournalInput {
	return &JournalInput{ds: j.Deliveries, version: j.Version}
}

// pollWaiter is an Input that must be told before Blocked when the
// machine waits at a POLL rather than a RECV.
type pollWaiter interface {
	pollWait(ch uint8, ticks uint64) error
}

// pollWait refuses a POLL that waits when the journal is older than
// version 3: such a POLL gave 0 at once when it was recorded, so the run
// cannot replay from it, and saying so is better than reporting the tick
// counts that then differ. (A journal with no version, built in memory,
// is taken as current.)
func (in *JournalInput) pollWait(ch uint8, ticks uint64) error {
	if in.version == 0 || in.version >= 3 {
		return nil
	}
	return &Divergence{fmt.Sprintf("the program waits at a POLL of channel %d, which has no message queued, at %s: "+
		"journal version %d was recorded when such a POLL gave 0 without waiting (docs/forge.md, \"Channels\"), "+
		"so this run cannot replay from it; record the run again", ch, tickCount(ticks), in.version)}
}

// line is the journal line of delivery i (the header is line 1).
func line(i int) int { return i + 2 }

// Blocked implements Input.
func (in *JournalInput) Blocked(ch uint8, ticks uint64) ([]Message, error) {
	if in.next == len(in.ds) {
		in.starved, in.starvedCh, in.starvedTicks = true, ch, ticks
		return nil, nil
	}
	d := in.ds[in.next]
	if d.Ch != ch || d.Ticks != ticks {
		return nil, &Divergence{fmt.Sprintf("the program blocked on channel %d at %s, but the journal's next delivery (line %d) is on channel %d at %s",
			ch, tickCount(ticks), line(in.next), d.Ch, tickCount(d.Ticks))}
	}
	var msgs []Message
	for in.next < len(in.ds) && in.ds[in.next].Ticks == ticks {
		msgs = append(msgs, Message{Ch: in.ds[in.next].Ch, Data: in.ds[in.next].Data})
		in.next++
	}
	return msgs, nil
}

// Finish checks, once the run has ended with r, that the run consumed the
// whole journal. It returns a *Divergence if not.
func (in *JournalInput) Finish(r *Result) error {
	if in.next < len(in.ds) {
		d := in.ds[in.next]
		n := len(in.ds) - in.next
		what := "1 delivery"
		if n > 1 {
			what = fmt.Sprintf("%d deliveries", n)
		}
		return &Divergence{fmt.Sprintf("the run ended (%s) with %s of the journal unused, the first on channel %d at %s (line %d)",
			r.Summary(), what, d.Ch, tickCount(d.Ticks), line(in.next))}
	}
	return nil
}

// End returns the journal record of a result.
func (r *Result) End() journal.End {
	e := journal.End{
		State:     r.State.String(),
		FaultCode: uint8(r.Fault),
		UserCode:  r.UserCode,
		PC:        r.PC,
		TicksUsed: r.Ticks,
		Input:     r.Input,
		Output:    r.Output,
		TraceHash: r.TraceHash,
	}
	if r.State == vm.Faulted {
		e.Fault = r.Fault.String()
	}
	return e
}

// Replay runs img again from journal j, with the limits in its header,
// writing the program's output to stdout and stderr as Run does. The
// journal must be complete (have a result line) and have been recorded for
// img. Replay returns the replayed result and an error if it diverged in
// any way from the journal: the program blocked on another channel or at
// another tick count than the next recorded delivery, it did not consume
// every delivery, or its final state, fault, pc, ticks, input or output
// hash, or trace hash differ. Divergences are *Divergence errors.
func Replay(img *vm.Image, j *journal.Journal, stdout, stderr io.Writer) (*Result, error) {
	if h := img.Hash(); h != j.Header.Program {
		return nil, fmt.Errorf("the journal was recorded for program %x, not this one (%x)", j.Header.Program, h)
	}
	if j.End == nil {
		return nil, fmt.Errorf("the journal is incomplete: it has no result line (the recorded run was interrupted)")
	}
	lim := HeaderLimits(j.Header)
	in := NewJournalInput(j)
	r, err := Run(img, Options{Limits: lim, Trace: true, Input: in, Stdout: stdout, Stderr: stderr})
	if err != nil {
		return nil, err
	}
	if in.starved && r.State == vm.Blocked && j.End.State != r.State.String() {
		return r, &Divergence{fmt.Sprintf("the program blocked on channel %d at %s, but the journal has no delivery left (the recorded run ended %s after %s)",
			in.starvedCh, tickCount(in.starvedTicks), j.End.State, tickCount(j.End.TicksUsed))}
	}
	if err := in.Finish(r); err != nil {
		return r, err
	}
	if diffs := CompareEnd(*j.End, r.End()); len(diffs) > 0 {
		return r, &Divergence{"the result differs from the journal's: " + strings.Join(diffs, "; ")}
	}
	return r, nil
}

// CompareEnd lists the fields in which got differs from want, each as
// "FIELD: want W, got G". Absent trace hashes compare as "none".
func CompareEnd(want, got journal.End) []string {
	var diffs []string
	diff := func(field string, w, g any) {
		diffs = append(diffs, fmt.Sprintf("%s: recorded %v, replayed %v", field, w, g))
	}
	if want.State != got.State {
		diff("state", want.State, got.State)
	}
	if want.Fault != got.Fault {
		diff("fault", orNone(want.Fault), orNone(got.Fault))
	}
	if want.FaultCode != got.FaultCode {
		diff("fault_code", want.FaultCode, got.FaultCode)
	}
	if want.UserCode != got.UserCode {
		diff("user_code", want.UserCode, got.UserCode)
	}
	if want.PC != got.PC {
		diff("pc", want.PC, got.PC)
	}
	if want.TicksUsed != got.TicksUsed {
		diff("ticks_used", want.TicksUsed, got.TicksUsed)
	}
	if want.Input != got.Input {
		diff("input_sha256", hex.EncodeToString(want.Input[:]), hex.EncodeToString(got.Input[:]))
	}
	if want.Output != got.Output {
		diff("output_sha256", hex.EncodeToString(want.Output[:]), hex.EncodeToString(got.Output[:]))
	}
	if hashString(want.TraceHash) != hashString(got.TraceHash) {
		diff("trace_hash", hashString(want.TraceHash), hashString(got.TraceHash))
	}
	return diffs
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

func hashString(h *[32]byte) string {
	if h == nil {
		return "none"
	}
	return hex.EncodeToString(h[:])
}
