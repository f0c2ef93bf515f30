package host

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"

	bc "github.com/genesis-toolchain/genesis/forge/bytecode"
	"github.com/genesis-toolchain/genesis/forge/journal"
	"github.com/genesis-toolchain/genesis/forge/vm"
)

// framed is the MessageHash of msgs, computed independently.
func framed(msgs ...Message) [32]byte {
	var b []byte
	for _, m := range msgs {
		b = append(b, m.Ch)
		b = binary.LittleEndian.AppendUint64(b, uint64(len(m.Data)))
		b = append(b, m.Data...)
	}
	return sha256.Sum256(b)
}

func TestMessageHash(t *testing.T) {
	h := NewMessageHash()
	if h.Sum() != sha256.Sum256(nil) {
		t.Error("the hash of no messages is not sha256 of nothing")
	}
	h.Add(0, []byte("ab"))
	h.Add(1, nil)
	if got, want := h.Sum(), framed(Message{0, []byte("ab")}, Message{1, nil}); got != want {
		t.Errorf("MessageHash = %x, want %x", got, want)
	}
	one, two := NewMessageHash(), NewMessageHash()
	one.Add(0, []byte("ab"))
	two.Add(0, []byte("a"))
	two.Add(0, []byte("b"))
	if one.Sum() == two.Sum() {
		t.Error("message boundaries do not change the hash")
	}
}

func TestRunOutput(t *testing.T) {
	b := newBuilder()
	b.data = []byte("hi\n")
	b.op(bc.LI, 1, 0, 0, 64) // the data: code is 4 LIs/SENDs... see below
	b.op(bc.SEND, 1, 0, 0, 3)
	b.op(bc.SEND, 1, 0, 1, 2)
	b.op(bc.SEND, 1, 0, 0, 1)
	b.op(bc.HALT, 0, 0, 0, 0)
	b.op(bc.NOP, 0, 0, 0, 0)
	b.op(bc.NOP, 0, 0, 0, 0)
	// 16 + 4*8 + 2*8 = 64 bytes of code: the data is at 64.
	img := b.image(t)
	var stdout, stderr bytes.Buffer
	r, err := Run(img, Options{Limits: DefaultLimits(), Stdout: &stdout, Stderr: &stderr})
	if err != nil {
		t.Fatal(err)
	}
	if stdout.String() != "hi\nh" || stderr.String() != "hi" {
		t.Errorf("stdout %q, stderr %q; want %q, %q", stdout.String(), stderr.String(), "hi\nh", "hi")
	}
	want := framed(Message{0, []byte("hi\n")}, Message{1, []byte("hi")}, Message{0, []byte("h")})
	if r.Output != want {
		t.Errorf("output hash %x, want %x", r.Output, want)
	}
	if r.State != vm.Halted || r.Ticks != 1+3+3+3+1 || r.PC != 40 || r.TraceHash != nil {
		t.Errorf("result %+v", r)
	}
	if r.Input != framed() {
		t.Errorf("input hash %x, want that of no messages", r.Input)
	}
}

// TestRunInterleaving checks that stdout is flushed before anything goes to
// stderr, so a terminal shows the two in the order they were sent.
func TestRunInterleaving(t *testing.T) {
	b := newBuilder()
	b.data = []byte("ab")
	b.op(bc.LI, 1, 0, 0, 48)
	b.op(bc.SEND, 1, 0, 0, 1) // a to stdout
	b.op(bc.SEND, 1, 0, 1, 2) // ab to stderr
	b.op(bc.SEND, 1, 0, 0, 2) // ab to stdout
	b.op(bc.HALT, 0, 0, 0, 0)
	var both bytes.Buffer
	if _, err := Run(b.image(t), Options{Limits: DefaultLimits(), Stdout: &both, Stderr: &both}); err != nil {
		t.Fatal(err)
	}
	if both.String() != "aabab" {
		t.Errorf("got %q, want %q", both.String(), "aabab")
	}
}

func TestStdinChunks(t *testing.T) {
	input := bytes.Repeat([]byte("0123456789"), 7000) // 70000 bytes: one full chunk and a partial one
	// A reader that returns one byte at a time must give the same messages.
	for _, r := range []io.Reader{bytes.NewReader(input), iotest.OneByteReader(bytes.NewReader(input))} {
		s := NewStdin(r)
		var sizes []int
		for i := 0; i < 4; i++ {
			msgs, err := s.Blocked(vm.ChanStdin, 0)
			if err != nil || len(msgs) != 1 || msgs[0].Ch != vm.ChanStdin {
				t.Fatalf("Blocked = %v, %v", msgs, err)
			}
			sizes = append(sizes, len(msgs[0].Data))
		}
		if want := []int{ChunkSize, 70000 - ChunkSize, 0, 0}; !equalInts(sizes, want) {
			t.Errorf("chunk sizes %v, want %v", sizes, want)
		}
		if msgs, err := s.Blocked(3, 0); msgs != nil || err != nil {
			t.Errorf("Stdin serviced channel 3: %v, %v", msgs, err)
		}
	}
	// Exactly one chunk: the end is an empty message of its own.
	s := NewStdin(bytes.NewReader(make([]byte, ChunkSize)))
	for i, want := range []int{ChunkSize, 0} {
		msgs, _ := s.Blocked(vm.ChanStdin, 0)
		if len(msgs[0].Data) != want {
			t.Errorf("chunk %d has %d bytes, want %d", i, len(msgs[0].Data), want)
		}
	}
	// A read error is the host's, not end of input.
	s = NewStdin(iotest.ErrReader(errors.New("boom")))
	if _, err := s.Blocked(vm.ChanStdin, 0); err == nil || !strings.Contains(err.Error(), "boom") {
		t.Errorf("read error not reported: %v", err)
	}
}

func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// recorder collects deliveries.
type recorder struct{ ds []journal.Delivery }

func (r *recorder) Deliver(ticks uint64, ch uint8, data []byte) error {
	r.ds = append(r.ds, journal.Delivery{Ticks: ticks, Ch: ch, Data: bytes.Clone(data)})
	return nil
}

func TestRunCat(t *testing.T) {
	input := bytes.Repeat([]byte("forge\n"), 12000) // 72000 bytes
	var stdout bytes.Buffer
	rec := &recorder{}
	r, err := Run(catProgram(t), Options{Limits: DefaultLimits(), Trace: true, Input: NewStdin(bytes.NewReader(input)), Stdout: &stdout, Recorder: rec})
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(stdout.Bytes(), input) {
		t.Errorf("cat copied %d bytes, want %d", stdout.Len(), len(input))
	}
	if r.State != vm.Halted || r.TraceHash == nil {
		t.Errorf("result %s, trace %v", r.Summary(), r.TraceHash)
	}
	if len(rec.ds) != 3 || len(rec.ds[0].Data) != ChunkSize || len(rec.ds[2].Data) != 0 {
		t.Fatalf("deliveries: %d", len(rec.ds))
	}
	if rec.ds[0].Ticks != 2 || rec.ds[1].Ticks <= rec.ds[0].Ticks {
		t.Errorf("delivery ticks %d, %d", rec.ds[0].Ticks, rec.ds[1].Ticks)
	}
	want := framed(Message{2, input[:ChunkSize]}, Message{2, input[ChunkSize:]}, Message{2, nil})
	if r.Input != want {
		t.Errorf("input hash %x, want %x", r.Input, want)
	}
}

// TestRunOldIdiom runs the reading idiom from before POLL waited:
// RECV 2, buf, 0 to wait for a message, then POLL. It still copies its
// input; at the end, the RECV of 0 bytes consumes the empty message, so
// the POLL after it waits for, and gets, a second one.
func TestRunOldIdiom(t *testing.T) {
	b := newBuilder()
	b.op(bc.LI, 1, 0, 0, heap)
	b.label("next")
	b.op(bc.RECV, 1, 0, 2, 0)         // wait for a message
	b.op(bc.POLL, 2, 0, 2, 0)         // r2 = its size
	b.jump(bc.JZ, 2, 0, "eof")        // empty: end of input
	b.op(bc.RECV, 1, 0, 2, ChunkSize) // copy it
	b.op(bc.SEND, 1, 0, 0, 3)         // its first 3 bytes
	b.jump(bc.JMP, 0, 0, "next")
	b.label("eof")
	b.op(bc.HALT, 0, 0, 0, 0)
	var stdout bytes.Buffer
	rec := &recorder{}
	r, err := Run(b.image(t), Options{Limits: DefaultLimits(), Input: NewStdin(strings.NewReader("abcdef")), Stdout: &stdout, Recorder: rec})
	if err != nil {
		t.Fatal(err)
	}
	if r.State != vm.Halted || stdout.String() != "abc" {
		t.Fatalf("%s, output %q", r.Summary(), stdout.String())
	}
	if len(rec.ds) != 3 || len(rec.ds[1].Data) != 0 || len(rec.ds[2].Data) != 0 || r.PollWaits != 1 {
		t.Errorf("deliveries %+v, %d poll waits; want the input, two empty messages, 1", rec.ds, r.PollWaits)
	}
}

// TestRunPollUnserviced polls channel 3, granted but serviced by
// nobody: the POLL waits as a RECV would, and the run stops BLOCKED there.
func TestRunPollUnserviced(t *testing.T) {
	b := newBuilder()
	b.op(bc.POLL, 1, 0, 2, 0) // standard input: "x", 1
	b.op(bc.POLL, 2, 0, 3, 0) // nobody services channel 3
	b.op(bc.HALT, 0, 0, 0, 0)
	lim := DefaultLimits()
	lim.Grant |= 1 << 3
	r, err := Run(b.image(t), Options{Limits: lim, Input: NewStdin(strings.NewReader("x"))})
	if err != nil {
		t.Fatal(err)
	}
	if got := r.Summary(); got != "BLOCKED on channel 3 at pc 0x8 after 1 tick" || r.PollWaits != 2 {
		t.Errorf("got %s, %d poll waits", got, r.PollWaits)
	}
}

func TestRunBlockedAndYield(t *testing.T) {
	b := newBuilder()
	b.op(bc.TICK, 0, 0, 0, 0) // yields: Run goes on
	b.op(bc.LI, 1, 0, 0, heap)
	b.op(bc.RECV, 1, 0, 3, 8) // nobody services channel 3
	b.op(bc.HALT, 0, 0, 0, 0)
	img := b.image(t)
	lim := DefaultLimits()
	lim.Grant |= 1 << 3
	r, err := Run(img, Options{Limits: lim, Input: NewStdin(strings.NewReader("x"))})
	if err != nil {
		t.Fatal(err)
	}
	if r.State != vm.Blocked || r.BlockedOn != 3 || r.PC != 24 || r.Ticks != 2 {
		t.Errorf("got %s", r.Summary())
	}
	if got := r.Summary(); got != "BLOCKED on channel 3 at pc 0x18 after 2 ticks" {
		t.Errorf("Summary = %q", got)
	}
	// Without the grant, the same receive is a fault.
	r, _ = Run(img, Options{Limits: DefaultLimits()})
	if r.State != vm.Faulted || r.Fault != vm.PermissionDenied {
		t.Errorf("got %s", r.Summary())
	}
}

func TestResultJSON(t *testing.T) {
	r := &Result{State: vm.Faulted, Fault: vm.UserFault, UserCode: 42, PC: 40, Ticks: 17}
	want := `{"state": "FAULTED", "fault": "USER_FAULT", "fault_code": 255, "user_code": 42, "pc": 40, "ticks_used": 17, "output_sha256": "` + strings.Repeat("00", 32) + `"}` + "\n"
	if got := string(r.JSON()); got != want {
		t.Errorf("JSON:\n got %s\nwant %s", got, want)
	}
	if got := r.Summary(); got != "FAULTED: USER_FAULT (code 42) at pc 0x28 after 17 ticks" {
		t.Errorf("Summary = %q", got)
	}
	r = &Result{State: vm.Halted, PC: 8, Ticks: 2}
	if got := string(r.JSON()); !strings.HasPrefix(got, `{"state": "HALTED", "fault": null, "fault_code": 0,`) {
		t.Errorf("JSON = %s", got)
	}
}

func TestParseNames(t *testing.T) {
	for st := vm.Ready; st <= vm.Faulted; st++ {
		if got, ok := ParseState(st.String()); !ok || got != st {
			t.Errorf("ParseState(%s) = %v, %v", st, got, ok)
		}
	}
	for _, f := range vm.Faults() {
		if got, ok := ParseFault(f.String()); !ok || got != f {
			t.Errorf("ParseFault(%s) = %v, %v", f, got, ok)
		}
	}
	if _, ok := ParseFault("NONE"); ok {
		t.Error("NONE parsed as a fault")
	}
}

// failingWriter fails every write.
type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }

func TestRunWriteError(t *testing.T) {
	_, err := Run(catProgram(t), Options{Limits: DefaultLimits(), Input: NewStdin(strings.NewReader("abc")), Stdout: failingWriter{}})
	if err == nil || !strings.Contains(err.Error(), "disk full") {
		t.Errorf("write error not reported: %v", err)
	}
}
