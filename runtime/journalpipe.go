package runtime

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
)

// The journal stream is how a compiled program run as a child process
// (Main's --journal-fd) gives its journal lines to a parent that keeps
// them durable elsewhere (genesisc worker makes each a step of the run's
// workflow in its database). It is line by line, each acknowledged:
//
//   - the child writes a journal line, with its newline, to its write
//     descriptor, then waits for one line on its read descriptor;
//   - the parent answers "ok" once the line is durable, or "error
//     MESSAGE" when it could not (or would not) make it so;
//   - "ok" lets the run go on, as the fsync of a journal file does; an
//     error, or the end of the read stream, fails the run with kind
//     "journal", as a failed journal write does.
//
// Nothing else travels on the two descriptors.

// JournalAckOK is the parent's acknowledgement of a durable line;
// JournalAckError starts a refusal (followed by a space and the reason).
const (
	JournalAckOK    = "ok"
	JournalAckError = "error"
)

// StreamSink is the JournalSink of the journal stream's child side: it
// writes each line to w and waits for the parent's acknowledgement on r.
type StreamSink struct {
	w io.Writer
	r *bufio.Reader
}

// NewStreamSink returns the sink that writes lines to w and reads the
// acknowledgements from r.
func NewStreamSink(w io.Writer, r io.Reader) *StreamSink {
	return &StreamSink{w: w, r: bufio.NewReader(r)}
}

// AppendLine writes line and returns once the parent acknowledged it
// (nil) or refused it (the parent's reason).
func (s *StreamSink) AppendLine(line []byte) error {
	if _, err := s.w.Write(line); err != nil {
		return fmt.Errorf("the journal stream: %v", err)
	}
	ack, err := s.r.ReadString('\n')
	if err != nil {
		if errors.Is(err, io.EOF) {
			return errors.New("the journal stream: the parent closed it without acknowledging the line")
		}
		return fmt.Errorf("the journal stream: %v", err)
	}
	ack = strings.TrimSuffix(ack, "\n")
	switch {
	case ack == JournalAckOK:
		return nil
	case ack == JournalAckError:
		return errors.New("the journal stream: the parent refused the line")
	case strings.HasPrefix(ack, JournalAckError+" "):
		return errors.New(strings.TrimPrefix(ack, JournalAckError+" "))
	}
	return fmt.Errorf("the journal stream: unexpected acknowledgement %q", ack)
}

// parseJournalFD reads --journal-fd's value W,R: the descriptors the
// child writes lines to and reads acknowledgements from.
func parseJournalFD(s string) (w, r *os.File, err error) {
	a, b, ok := strings.Cut(s, ",")
	if !ok {
		return nil, nil, errors.New("want W,R: the descriptor the journal lines go to and the one their acknowledgements come from")
	}
	wfd, err1 := strconv.ParseUint(a, 10, 31)
	rfd, err2 := strconv.ParseUint(b, 10, 31)
	if err1 != nil || err2 != nil || wfd < 3 || rfd < 3 || wfd == rfd {
		return nil, nil, errors.New("want W,R: two different file descriptors, 3 or more")
	}
	closeOnExec(uintptr(wfd))
	closeOnExec(uintptr(rfd))
	w = os.NewFile(uintptr(wfd), "journal-out")
	r = os.NewFile(uintptr(rfd), "journal-ack")
	if w == nil || r == nil {
		return nil, nil, errors.New("invalid file descriptor")
	}
	// A descriptor the process was not given fails here rather than at
	// the run's first line.
	if _, err := w.Stat(); err != nil {
		return nil, nil, fmt.Errorf("descriptor %d: %v", wfd, err)
	}
	if _, err := r.Stat(); err != nil {
		return nil, nil, fmt.Errorf("descriptor %d: %v", rfd, err)
	}
	return w, r, nil
}
