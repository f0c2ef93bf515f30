// Package host runs Forge machines against the outside world.
//
// The machine (package vm) never blocks and never touches the host: it
// stops when it halts, faults, yields (TICK) or waits on an empty channel.
// Run is the loop around it: it sends channel 0 to a standard output and
// channel 1 to a standard error as the program sends them, asks an Input
// for messages whenever the machine blocks, records every delivery (a
// journal, see package journal), and reports how the run ended with the
// hashes that identify its input and output. Replay runs a program again
// from its journal and fails loudly at the first divergence.
//
// Standard input reaches a program on channel 2 through Stdin, in fixed
// 64 KiB chunks read only when the program blocks asking for more (a RECV,
// or a POLL, with no message queued), then an empty message at end of
// input: the same bytes always give the same messages, whatever the
// timing of the pipe, so a run depends only on the bytes it was given.
package host

import (
	"bufio"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/genesis-toolchain/genesis/forge/journal"
	"github.com/genesis-toolchain/genesis/forge/vm"
)

// Default limits of a run, used by the forge command.
const (
	DefaultTicks  = 10_000_000_000 // tick budget
	DefaultMemory = 16 << 20       // memory quota: 16 MiB
	DefaultStack  = 64 << 10       // stack: 64 KiB at the top of memory
	// DefaultOutput is the output quota: 1 GiB, all channels together.
	// The tick budget alone would allow 8 bytes a tick, 80 GB for the
	// default budget; the quota bounds what one run can make its host
	// write, hash and store whatever budget it was given.
	DefaultOutput = 1 << 30
)

// Limits are the resources a run may use. They are part of what a journal
// and a proof record, since the same program and input can end
// differently under other limits.
type Limits struct {
	Ticks  uint64 // tick budget
	Memory uint64 // memory quota in bytes
	Stack  uint64 // stack size in bytes
	// Output is the output quota in bytes, all channels together (see
	// vm.Config.Output); zero means none but the tick budget's bound.
	Output uint64
	// Grant is the set of channels (bit i for channel i) the program may
	// use. Zero means vm.DefaultGrant (0, 1 and 2).
	Grant uint16
}

// DefaultLimits returns the limits the forge command uses by default.
func DefaultLimits() Limits {
	return Limits{Ticks: DefaultTicks, Memory: DefaultMemory, Stack: DefaultStack, Output: DefaultOutput, Grant: vm.DefaultGrant}
}

// Header returns the header of a journal of a run of the program with
// hash prog under these limits.
func (l Limits) Header(prog [32]byte) journal.Header {
	return journal.Header{Program: prog, Ticks: l.Ticks, Memory: l.Memory, Stack: l.Stack, Output: l.Output, Grant: l.EffectiveGrant()}
}

// HeaderLimits returns the limits a journal header records.
func HeaderLimits(h journal.Header) Limits {
	return Limits{Ticks: h.Ticks, Memory: h.Memory, Stack: h.Stack, Output: h.Output, Grant: h.Grant}
}

// EffectiveGrant returns l.Grant, or vm.DefaultGrant if it is zero.
func (l Limits) EffectiveGrant() uint16 {
	if l.Grant == 0 {
		return vm.DefaultGrant
	}
	return l.Grant
}

// Config returns the machine configuration for these limits.
func (l Limits) Config(trace bool) vm.Config {
	return vm.Config{Ticks: l.Ticks, Memory: l.Memory, Stack: l.Stack, Output: l.Output, Grant: l.EffectiveGrant(), Trace: trace}
}

// Message is one channel message.
type Message struct {
	Ch   uint8
	Data []byte
}

// Input services a machine's input channels.
type Input interface {
	// Blocked is called when the machine is blocked on channel ch (a
	// RECV or a POLL found no message queued), having used ticks. It
	// returns the messages to deliver now, in order; none means nobody
	// will deliver anything and the run stops BLOCKED. An error aborts the run. The machine copies the messages,
	// so an Input may reuse their buffers.
	Blocked(ch uint8, ticks uint64) ([]Message, error)
}

// Recorder is told of every delivery as it happens (journal.Writer is
// one). An error aborts the run: a run whose journal is incomplete could
// not be replayed.
type Recorder interface {
	Deliver(ticks uint64, ch uint8, data []byte) error
}

// Options configure Run.
type Options struct {
	Limits Limits
	// Trace computes the machine's trace hash (journals and proofs).
	Trace bool
	// Input services blocking receives; nil services none.
	Input Input
	// Stdout and Stderr receive channels 0 and 1; nil discards. Messages
	// on other channels are only hashed.
	Stdout, Stderr io.Writer
	// Recorder, if not nil, records every delivery.
	Recorder Recorder
}

// Result is how a run ended.
type Result struct {
	State     vm.State // HALTED, FAULTED or BLOCKED
	Fault     vm.Fault // NoFault unless FAULTED
	UserCode  uint32   // the code of a USER_FAULT
	PC        uint64   // byte address of the next (or faulting, or blocked) instruction
	Ticks     uint64   // ticks used
	BlockedOn uint8    // the channel of a BLOCKED run
	Input     [32]byte // MessageHash of every delivered message
	Output    [32]byte // MessageHash of every sent message
	// TraceHash is the machine's trace hash when Options.Trace was set and
	// the run halted or faulted; nil otherwise.
	TraceHash *[32]byte
	// PollWaits counts the times the machine waited at a POLL of an
	// input channel that had no message queued (vm.Machine.BlockedPolling).
	// Journals and proofs of version 2 were recorded when such a POLL
	// gave 0 without waiting: a run with PollWaits > 0 cannot reproduce
	// one (see Replay and proof.Check).
	PollWaits uint64
}

// Run creates a machine for img with opts.Limits and runs it to the end:
// until it halts or faults, or blocks on a channel opts.Input does not
// service. A TICK yield simply continues. Output is written as the program
// sends it (channel 0 through a buffer that is flushed before the program
// waits for input, before anything is written to stderr, and at the end).
//
// The error is not nil only if the host failed (reading input, recording
// a delivery, writing output); the program's own fate, fault or not, is in
// the Result.
func Run(img *vm.Image, opts Options) (*Result, error) {
	out := newOutput(opts.Stdout, opts.Stderr)
	in := NewMessageHash()
	m := vm.New(img, opts.Limits.Config(opts.Trace), out)
	var pollWaits uint64
	for {
		st := m.Run()
		if st == vm.Ready { // TICK yielded: keep going
			continue
		}
		if m.BlockedPolling() {
			pollWaits++
		}
		if err := out.flush(); err != nil {
			return nil, err
		}
		if st != vm.Blocked || opts.Input == nil {
			break
		}
		ch, ticks := m.BlockedOn(), m.Ticks()
		if pw, ok := opts.Input.(pollWaiter); ok && m.BlockedPolling() {
			if err := pw.pollWait(ch, ticks); err != nil {
				return nil, err
			}
		}
		msgs, err := opts.Input.Blocked(ch, ticks)
		if err != nil {
			return nil, err
		}
		if len(msgs) == 0 {
			break
		}
		for _, msg := range msgs {
			if opts.Recorder != nil {
				if err := opts.Recorder.Deliver(ticks, msg.Ch, msg.Data); err != nil {
					return nil, err
				}
			}
			in.Add(msg.Ch, msg.Data)
			m.Deliver(msg.Ch, msg.Data)
		}
	}
	r := &Result{
		State:     m.State(),
		Fault:     m.Fault(),
		UserCode:  m.UserCode(),
		PC:        m.PC(),
		Ticks:     m.Ticks(),
		Input:     in.Sum(),
		Output:    out.hash.Sum(),
		PollWaits: pollWaits,
	}
	if r.State == vm.Blocked {
		r.BlockedOn = m.BlockedOn()
	}
	if h, ok := m.TraceHash(); ok {
		r.TraceHash = &h
	}
	return r, nil
}

// output is the machine's vm.Sender: it hashes every message and writes
// channels 0 and 1.
type output struct {
	stdout *bufio.Writer
	stderr io.Writer
	hash   *MessageHash
	err    error // the first write error; later writes are dropped
}

func newOutput(stdout, stderr io.Writer) *output {
	if stdout == nil {
		stdout = io.Discard
	}
	if stderr == nil {
		stderr = io.Discard
	}
	return &output{stdout: bufio.NewWriterSize(stdout, 8<<10), stderr: stderr, hash: NewMessageHash()}
}

func (o *output) Send(ch uint8, msg []byte) {
	o.hash.Add(ch, msg)
	if o.err != nil {
		return
	}
	switch ch {
	case vm.ChanStdout:
		if _, err := o.stdout.Write(msg); err != nil {
			o.err = fmt.Errorf("writing standard output: %w", err)
		}
	case vm.ChanStderr:
		// Flush first, so the two streams interleave as the program sent
		// them when they go to the same terminal.
		if err := o.stdout.Flush(); err != nil {
			o.err = fmt.Errorf("writing standard output: %w", err)
		} else if _, err := o.stderr.Write(msg); err != nil {
			o.err = fmt.Errorf("writing standard error: %w", err)
		}
	}
}

func (o *output) flush() error {
	if o.err == nil {
		if err := o.stdout.Flush(); err != nil {
			o.err = fmt.Errorf("writing standard output: %w", err)
		}
	}
	return o.err
}

// ChunkSize is the size of the chunks in which Stdin delivers its input.
const ChunkSize = 64 << 10

// Stdin is an Input that delivers a reader's bytes on channel 2. Each
// time the machine blocks on channel 2 (a RECV or a POLL finding no
// message queued) it reads the next chunk with io.ReadFull into a
// ChunkSize buffer and delivers what it got, so the messages depend only
// on the bytes, never on how they arrived. At end of input it delivers an
// empty message, and again at every later block on channel 2 (as read(2)
// keeps returning 0). Nothing is read before the program asks for it: a
// POLL waits for the chunk, so on a terminal it returns once 64 KiB have
// been typed or the input has ended. Stdin services no other channel.
type Stdin struct {
	r   io.Reader
	buf []byte
	eof bool
}

// NewStdin returns an Input reading r.
func NewStdin(r io.Reader) *Stdin { return &Stdin{r: r} }

// Blocked implements Input.
func (s *Stdin) Blocked(ch uint8, _ uint64) ([]Message, error) {
	if ch != vm.ChanStdin {
		return nil, nil
	}
	if s.eof {
		return []Message{{Ch: ch, Data: []byte{}}}, nil
	}
	if s.buf == nil {
		s.buf = make([]byte, ChunkSize)
	}
	n, err := io.ReadFull(s.r, s.buf)
	switch err {
	case nil:
	case io.EOF, io.ErrUnexpectedEOF:
		s.eof = true
	default:
		return nil, fmt.Errorf("reading standard input: %w", err)
	}
	return []Message{{Ch: ch, Data: s.buf[:n]}}, nil
}

// JSON returns the result file of a run, one line:
//
//	{"state": "FAULTED", "fault": "DIVIDE_BY_ZERO", "fault_code": 3, "user_code": 0, "pc": 40, "ticks_used": 17, "output_sha256": "…"}
//
// fault is null and fault_code 0 unless the run faulted; fault names are
// those of vm.Fault.String.
func (r *Result) JSON() []byte {
	fault := "null"
	if r.State == vm.Faulted {
		b, _ := json.Marshal(r.Fault.String())
		fault = string(b)
	}
	return fmt.Appendf(nil, `{"state": %q, "fault": %s, "fault_code": %d, "user_code": %d, "pc": %d, "ticks_used": %d, "output_sha256": %q}`+"\n",
		r.State.String(), fault, uint8(r.Fault), r.UserCode, r.PC, r.Ticks, hex.EncodeToString(r.Output[:]))
}

// Summary describes how the run ended in one line, for messages:
//
//	HALTED at pc 0x30 after 17 ticks
//	FAULTED: DIVIDE_BY_ZERO at pc 0x28 after 17 ticks
//	FAULTED: USER_FAULT (code 42) at pc 0x28 after 17 ticks
//	BLOCKED on channel 3 at pc 0x10 after 5 ticks
func (r *Result) Summary() string {
	var b strings.Builder
	b.WriteString(r.State.String())
	switch r.State {
	case vm.Faulted:
		fmt.Fprintf(&b, ": %s", r.Fault)
		if r.Fault == vm.UserFault {
			fmt.Fprintf(&b, " (code %d)", r.UserCode)
		}
	case vm.Blocked:
		fmt.Fprintf(&b, " on channel %d", r.BlockedOn)
	}
	fmt.Fprintf(&b, " at pc 0x%x after %s", r.PC, tickCount(r.Ticks))
	return b.String()
}

// tickCount spells a tick count: "1 tick", "17 ticks".
func tickCount(n uint64) string {
	if n == 1 {
		return "1 tick"
	}
	return fmt.Sprintf("%d ticks", n)
}

// ParseState returns the state named s (as vm.State.String spells it).
func ParseState(s string) (vm.State, bool) {
	for st := vm.Ready; st <= vm.Faulted; st++ {
		if st.String() == s {
			return st, true
		}
	}
	return 0, false
}

// ParseFault returns the fault named s (as vm.Fault.String spells it).
func ParseFault(s string) (vm.Fault, bool) {
	for _, f := range vm.Faults() {
		if f.String() == s {
			return f, true
		}
	}
	return 0, false
}
