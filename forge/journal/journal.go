// Package journal reads and writes Forge run journals.
//
// A journal records everything that entered a sandbox during one run, in
// order, so that the run can be replayed bit for bit: the machine is
// deterministic, and a channel message is its only input. The file is JSON
// Lines (one JSON object per line, each line ending in '\n'):
//
//	{"format":"forge-journal","version":3,"program":"<sha256>","ticks":N,"memory":N,"stack":N,"output":N,"grant":[0,1,2]}
//	{"ticks":N,"ch":2,"data":"<base64>"}
//	...
//	{"state":"HALTED","fault":null,"fault_code":0,"user_code":0,"pc":N,"ticks_used":N,"input_sha256":"…","output_sha256":"…","trace_hash":"…"}
//
// The first line is the header: the program (sha256 of its canonical FRGP
// file) and the limits it ran with (tick budget, memory quota, stack size,
// output quota, 0 for none, granted channels). Each following line is one delivery: the machine's
// tick count when the message was delivered, the channel and the bytes
// (standard base64, padded). The last line, written when the run ends,
// is its result; a journal without one records a run that was interrupted.
//
// A Writer appends and fsyncs every line as it happens, so a journal on
// disk is always a prefix of the run. Read is strict: unknown fields,
// truncated lines, decreasing tick counts or anything after the result are
// errors, because a journal that does not say exactly one thing cannot be
// trusted to replay.
package journal

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
)

// Format and Version identify a journal's header line. Version 2 added
// the output quota and is the first of the metering in which SEND and
// RECV pay for the bytes they move; a version 1 journal's tick counts
// are those of the older metering, so it cannot replay. Version 3 is the
// first in which a POLL of an input channel with no message queued waits
// for the host's next message, as a RECV does (docs/forge.md,
// "Channels"); in version 2 it gave 0 at once. Read accepts version 2:
// a run that never polled an empty channel is the same under both, and
// a replay of one that did fails, saying why (host.Replay).
const (
	Format  = "forge-journal"
	Version = 3
	// OldestVersion is the oldest version Read accepts.
	OldestVersion = 2
)

// numChannels bounds channel numbers (vm.NumChannels; the journal format
// does not depend on the machine package).
const numChannels = 16

// Header is the first line of a journal: the program and the limits of
// the run.
type Header struct {
	Program [32]byte // sha256 of the program's canonical FRGP file
	Ticks   uint64   // tick budget
	Memory  uint64   // memory quota in bytes
	Stack   uint64   // stack size in bytes
	Output  uint64   // output quota in bytes; 0 for none
	Grant   uint16   // granted channels, bit i for channel i; never zero
}

// Delivery is one message delivered to the machine.
type Delivery struct {
	Ticks uint64 // the machine's tick count when the message was delivered
	Ch    uint8
	Data  []byte
}

// End is the last line of a complete journal: how the run ended. State and
// Fault are the names the machine gives them (vm.State.String,
// vm.Fault.String); Fault is empty unless State is FAULTED. Input and
// Output are the framed hashes of the delivered and sent messages (see
// package host); TraceHash is the machine's trace hash, present only for a
// run that halted or faulted.
type End struct {
	State     string
	Fault     string
	FaultCode uint8
	UserCode  uint32
	PC        uint64
	TicksUsed uint64
	Input     [32]byte
	Output    [32]byte
	TraceHash *[32]byte
}

// Journal is a journal file read into memory.
type Journal struct {
	// Version is the format version of the file (OldestVersion to
	// Version); a Writer always writes Version.
	Version    int
	Header     Header
	Deliveries []Delivery
	End        *End // nil if the run did not finish
}

// The wire forms: field order here is the order on disk.
type headerLine struct {
	Format  string  `json:"format"`
	Version int     `json:"version"`
	Program string  `json:"program"`
	Ticks   uint64  `json:"ticks"`
	Memory  uint64  `json:"memory"`
	Stack   uint64  `json:"stack"`
	Output  *uint64 `json:"output"` // required: a reader must not take a missing quota for none
	Grant   []int   `json:"grant"`
}

type deliveryLine struct {
	Ticks *uint64 `json:"ticks"`
	Ch    *uint8  `json:"ch"`
	Data  *string `json:"data"`
}

type endLine struct {
	State     string  `json:"state"`
	Fault     *string `json:"fault"`
	FaultCode uint8   `json:"fault_code"`
	UserCode  uint32  `json:"user_code"`
	PC        uint64  `json:"pc"`
	TicksUsed uint64  `json:"ticks_used"`
	Input     string  `json:"input_sha256"`
	Output    string  `json:"output_sha256"`
	TraceHash *string `json:"trace_hash"`
}

// Writer appends a journal to a file as a run happens. Every line is
// flushed to stable storage (fsync) before the method that wrote it
// returns, so a crash loses at most the line being written.
type Writer struct {
	w   io.Writer
	err error // the first error; once set, every method returns it
}

// syncer is what *os.File offers to make a write durable.
type syncer interface{ Sync() error }

// Create creates (or truncates) the journal file at path and writes its
// header.
func Create(path string, h Header) (*Writer, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return nil, err
	}
	w, err := NewWriter(f, h)
	if err != nil {
		f.Close()
		return nil, err
	}
	return w, nil
}

// NewWriter writes the header to w and returns a Writer appending to it.
// If w has a Sync method (as *os.File does), every line is synced.
func NewWriter(w io.Writer, h Header) (*Writer, error) {
	if h.Grant == 0 {
		return nil, errors.New("journal: header grants no channel")
	}
	jw := &Writer{w: w}
	jw.line(headerLine{
		Format:  Format,
		Version: Version,
		Program: hex.EncodeToString(h.Program[:]),
		Ticks:   h.Ticks,
		Memory:  h.Memory,
		Stack:   h.Stack,
		Output:  &h.Output,
		Grant:   grantList(h.Grant),
	})
	return jw, jw.err
}

// Deliver records a delivery. Its data is copied into the line at once, so
// the caller may reuse the buffer.
func (w *Writer) Deliver(ticks uint64, ch uint8, data []byte) error {
	s := base64.StdEncoding.EncodeToString(data)
	w.line(deliveryLine{Ticks: &ticks, Ch: &ch, Data: &s})
	return w.err
}

// Finish records how the run ended and closes the underlying file if it is
// an io.Closer. Nothing may be written after it.
func (w *Writer) Finish(e End) error {
	l := endLine{
		State:     e.State,
		FaultCode: e.FaultCode,
		UserCode:  e.UserCode,
		PC:        e.PC,
		TicksUsed: e.TicksUsed,
		Input:     hex.EncodeToString(e.Input[:]),
		Output:    hex.EncodeToString(e.Output[:]),
	}
	if e.Fault != "" {
		l.Fault = &e.Fault
	}
	if e.TraceHash != nil {
		s := hex.EncodeToString(e.TraceHash[:])
		l.TraceHash = &s
	}
	w.line(l)
	if err := w.Close(); w.err == nil {
		w.err = err
	}
	err := w.err
	if err == nil {
		w.err = errFinished
	}
	return err
}

var errFinished = errors.New("journal: already finished")

// Close closes the underlying file, if it is an io.Closer, without
// writing a result line: the journal then records an interrupted run.
func (w *Writer) Close() error {
	if c, ok := w.w.(io.Closer); ok {
		w.w = io.Discard
		return c.Close()
	}
	return nil
}

func (w *Writer) line(v any) {
	if w.err != nil {
		return
	}
	b, err := json.Marshal(v)
	if err != nil {
		w.err = err
		return
	}
	if _, err := w.w.Write(append(b, '\n')); err != nil {
		w.err = fmt.Errorf("journal: %w", err)
		return
	}
	if s, ok := w.w.(syncer); ok {
		if err := s.Sync(); err != nil {
			w.err = fmt.Errorf("journal: %w", err)
		}
	}
}

// Error is a problem in a journal file, at a line (counting from 1).
type Error struct {
	Line int
	Msg  string
}

func (e *Error) Error() string { return fmt.Sprintf("line %d: %s", e.Line, e.Msg) }

// ReadFile reads and checks the journal at path.
func ReadFile(path string) (*Journal, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return Read(f)
}

// Read reads and checks a journal. Errors in the contents are *Error
// values naming the line.
func Read(r io.Reader) (*Journal, error) {
	br := bufio.NewReader(r)
	j := &Journal{}
	for n := 1; ; n++ {
		line, err := br.ReadBytes('\n')
		if err == io.EOF {
			if len(line) > 0 {
				return nil, &Error{n, "truncated: the line does not end with a newline"}
			}
			if n == 1 {
				return nil, &Error{1, "empty journal: no header"}
			}
			return j, nil
		}
		if err != nil {
			return nil, err
		}
		line = line[:len(line)-1]
		bad := func(format string, args ...any) error { return &Error{n, fmt.Sprintf(format, args...)} }
		switch {
		case n == 1:
			if err := j.readHeader(line); err != nil {
				return nil, bad("%v", err)
			}
		case j.End != nil:
			return nil, bad("follows the result line, which must be last")
		case isEnd(line):
			e, err := readEnd(line)
			if err != nil {
				return nil, bad("%v", err)
			}
			j.End = e
		default:
			d, err := readDelivery(line)
			if err != nil {
				return nil, bad("%v", err)
			}
			if k := len(j.Deliveries); k > 0 && d.Ticks < j.Deliveries[k-1].Ticks {
				return nil, bad("delivery at %d ticks comes after one at %d ticks", d.Ticks, j.Deliveries[k-1].Ticks)
			}
			j.Deliveries = append(j.Deliveries, d)
		}
	}
}

// strict decodes one JSON object, rejecting unknown fields and anything
// after it.
func strict(line []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if _, err := dec.Token(); err != io.EOF {
		return errors.New("more than one JSON value on the line")
	}
	return nil
}

func (j *Journal) readHeader(line []byte) error {
	var h headerLine
	if err := strict(line, &h); err != nil {
		return fmt.Errorf("bad header: %v", err)
	}
	if h.Format != Format {
		return fmt.Errorf("not a journal: format is %q, want %q", h.Format, Format)
	}
	if h.Version == 1 {
		return errors.New("journal version 1 was recorded before SEND and RECV paid for the bytes they move (docs/forge.md, \"Metering\"): its tick counts do not replay; record the run again")
	}
	if h.Version < OldestVersion || h.Version > Version {
		return fmt.Errorf("unsupported journal version %d, want %d to %d", h.Version, OldestVersion, Version)
	}
	j.Version = h.Version
	if err := decodeHash(h.Program, &j.Header.Program); err != nil {
		return fmt.Errorf("bad program hash: %v", err)
	}
	if h.Output == nil {
		return errors.New(`bad header: "output" (the output quota, 0 for none) is required`)
	}
	j.Header.Ticks, j.Header.Memory, j.Header.Stack, j.Header.Output = h.Ticks, h.Memory, h.Stack, *h.Output
	for i, ch := range h.Grant {
		if ch < 0 || ch >= numChannels {
			return fmt.Errorf("granted channel %d does not exist", ch)
		}
		if i > 0 && h.Grant[i-1] >= ch {
			return fmt.Errorf("grant list is not sorted and unique")
		}
		j.Header.Grant |= 1 << ch
	}
	if j.Header.Grant == 0 {
		return errors.New("header grants no channel")
	}
	return nil
}

// isEnd tells the result line from a delivery: only the result has a
// "state" field.
func isEnd(line []byte) bool {
	var probe map[string]json.RawMessage
	if json.Unmarshal(line, &probe) != nil {
		return false // let readDelivery report the syntax error
	}
	_, ok := probe["state"]
	return ok
}

func readDelivery(line []byte) (Delivery, error) {
	var l deliveryLine
	if err := strict(line, &l); err != nil {
		return Delivery{}, fmt.Errorf("bad delivery: %v", err)
	}
	if l.Ticks == nil || l.Ch == nil || l.Data == nil {
		return Delivery{}, errors.New(`bad delivery: "ticks", "ch" and "data" are all required`)
	}
	if *l.Ch >= numChannels {
		return Delivery{}, fmt.Errorf("delivery on channel %d, which does not exist", *l.Ch)
	}
	data, err := base64.StdEncoding.Strict().DecodeString(*l.Data)
	if err != nil {
		return Delivery{}, fmt.Errorf("bad delivery data: %v", err)
	}
	return Delivery{Ticks: *l.Ticks, Ch: *l.Ch, Data: data}, nil
}

func readEnd(line []byte) (*End, error) {
	var l endLine
	if err := strict(line, &l); err != nil {
		return nil, fmt.Errorf("bad result: %v", err)
	}
	e := &End{State: l.State, FaultCode: l.FaultCode, UserCode: l.UserCode, PC: l.PC, TicksUsed: l.TicksUsed}
	if l.Fault != nil {
		if *l.Fault == "" {
			return nil, errors.New(`bad result: "fault" is empty (use null)`)
		}
		e.Fault = *l.Fault
	}
	if err := decodeHash(l.Input, &e.Input); err != nil {
		return nil, fmt.Errorf("bad input_sha256: %v", err)
	}
	if err := decodeHash(l.Output, &e.Output); err != nil {
		return nil, fmt.Errorf("bad output_sha256: %v", err)
	}
	if l.TraceHash != nil {
		e.TraceHash = new([32]byte)
		if err := decodeHash(*l.TraceHash, e.TraceHash); err != nil {
			return nil, fmt.Errorf("bad trace_hash: %v", err)
		}
	}
	return e, nil
}

// decodeHash parses 64 lower-case hex digits.
func decodeHash(s string, h *[32]byte) error {
	if len(s) != 64 {
		return fmt.Errorf("%q is not 64 hex digits", s)
	}
	if _, err := hex.Decode(h[:], []byte(s)); err != nil || hex.EncodeToString(h[:]) != s {
		return fmt.Errorf("%q is not 64 lower-case hex digits", s)
	}
	return nil
}

// grantList lists the channels of a grant mask in increasing order.
func grantList(g uint16) []int {
	list := []int{}
	for ch := 0; ch < numChannels; ch++ {
		if g&(1<<ch) != 0 {
			list = append(list, ch)
		}
	}
	return list
}
