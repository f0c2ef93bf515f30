package runtime

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"sync"
	"time"
)

// A journal records every effect of a run, request and reply, so that a
// crashed or suspended run can resume without repeating a completed
// effect, and a run can be replayed. The file is JSON Lines:
//
//	{"format":"genesis-journal","version":1,"program":"…","run":"RUNID"}
//	{"step":ID,"effect":"llm","request":{…},"reply":V,"attempts":1,"usage":{"prompt_tokens":N,"completion_tokens":N,"cost":X},"duration_ms":D}
//	{"step":ID,"effect":"tool","request":{…},"pending":true}
//	{"step":ID,"attempt":N}
//	{"step":ID,"resume":V}
//	{"end":"suspended","step":ID}
//
// The header names the program (RunOptions.Program) and the run's id,
// from which the idempotency keys of its effects derive (a resumed run
// keeps it, so its keys are the original's). An attempt line records
// that attempt N (N ≥ 2: a retry) of a call started, so that a run
// resumed after a crash in that attempt makes it again with the same
// attempt number, hence the same key. An effect line is
// appended and fsynced before the effect's step counts as done; "usage"
// is there for llm and judge; "duration_ms" is the time the step took on
// the run's clock (a resumed run with the virtual clock advances it by as
// much when it serves the effect, so its times are the original's). A pending line records a tool that answered
// PENDING or a wait for a resume; a resume line, the payload the run was
// resumed with for that step. An end line closes each execution of the
// run (a resumed run appends its own). Values use the JSON encoding of
// AppendJSON, errors as {"$error": …}. Effects are keyed by step identity:
// a later line for the same step replaces an earlier one.
//
// Reading tolerates a last line cut short by a crash (it is dropped, and
// the file truncated before anything is appended); any other bad line is
// an error.

// JournalFormat and JournalVersion identify a journal's header.
const (
	JournalFormat  = "genesis-journal"
	JournalVersion = 1
)

// JournalMode is how a run uses its journal.
type JournalMode int

const (
	// JournalRecord: a new run; the journal must hold no effects yet.
	JournalRecord JournalMode = iota
	// JournalResume: effects found in the journal (same step, same
	// request) are served from it, the first one not found runs for real,
	// and new effects are appended.
	JournalResume
	// JournalReplay: every effect is served from the journal; a request
	// that differs from the journal's, or a step it does not have, fails
	// the run (kind "divergence"). Nothing is written.
	JournalReplay
)

func (m JournalMode) String() string {
	switch m {
	case JournalResume:
		return "resume"
	case JournalReplay:
		return "replay"
	}
	return "record"
}

// Journal is a run's effect log, in a file or in memory. It is safe for
// the concurrent branches of one run.
type Journal struct {
	mu        sync.Mutex
	f         *os.File    // nil: in memory (or a sink)
	sink      JournalSink // not nil: every line goes there (journalsink.go)
	program   string
	runID     string         // the run's id ("" in a journal written before run ids)
	inflight  map[string]int // step → the attempt ≥ 2 last started (attempt lines)
	recs      map[string]*jrec
	order     []string // step identities in first-seen order
	suspended string   // the step of the last end line with status suspended
	ended     string   // the status of the last end line ("" when none)
	lines     [][]byte // every line of an in-memory journal (Bytes)
	buf       []byte
}

type jrec struct {
	effect   string
	request  Value
	reply    Value
	usage    Usage
	attempts int
	pending  bool
	resumed  bool
	resume   Value
	duration time.Duration
	used     bool
}

// NewJournal returns an empty journal in memory, for a new run with a
// new run id.
func NewJournal(program string) *Journal {
	j := &Journal{program: program, runID: NewRunID(), recs: make(map[string]*jrec)}
	j.lines = append(j.lines, j.headerLine())
	return j
}

func (j *Journal) headerLine() []byte {
	b := []byte(`{"format":"` + JournalFormat + `","version":` + strconv.Itoa(JournalVersion) + `,"program":`)
	b = appendString(b, j.program)
	if j.runID != "" {
		b = append(b, `,"run":`...)
		b = appendString(b, j.runID)
	}
	return append(b, "}\n"...)
}

// ErrJournalInUse is the error (wrapped) of opening a journal file that
// another process, or another Journal of this one, holds open.
var ErrJournalInUse = errors.New("the journal is in use by another run")

// ErrJournalExists is the error (wrapped) of CreateJournal on a file that
// already holds a run.
var ErrJournalExists = errors.New("the journal already holds a run")

// CreateJournal creates the journal file path for a new run of program,
// with a new run id, and locks it (see OpenJournal). A file that exists
// and is not empty is left as it is and refused (ErrJournalExists): it
// holds a run whose effects happened, which --resume continues and
// --replay replays; OverwriteJournal starts over in it.
func CreateJournal(path, program string) (*Journal, error) {
	return createJournal(path, program, false)
}

// OverwriteJournal is CreateJournal for a file that may hold a run: once
// the lock is taken, the file is truncated and the new run starts in it.
// The old run's record is lost (a run resumed from it would repeat every
// side effect).
func OverwriteJournal(path, program string) (*Journal, error) {
	return createJournal(path, program, true)
}

func createJournal(path, program string, overwrite bool) (*Journal, error) {
	// Not O_TRUNC: the file is truncated only once it is known to be ours.
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, err
	}
	if err := lockFile(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("journal %s: %w", path, err)
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if fi.Size() > 0 {
		if !overwrite {
			f.Close()
			return nil, fmt.Errorf("journal %s: %w (%s)", path, ErrJournalExists, describeJournalFile(path))
		}
		if err := f.Truncate(0); err != nil {
			f.Close()
			return nil, err
		}
	}
	j := &Journal{f: f, program: program, runID: NewRunID(), recs: make(map[string]*jrec)}
	if err := j.write(j.headerLine()); err != nil {
		f.Close()
		return nil, err
	}
	return j, nil
}

// describeJournalFile says what a file that CreateJournal refuses holds.
func describeJournalFile(path string) string {
	data, err := os.ReadFile(path)
	if err != nil {
		return err.Error()
	}
	j, _, err := parseJournal(data)
	if err != nil {
		return "it is not a journal this runtime reads: " + err.Error()
	}
	s := "a run of " + strconv.Quote(j.program) + " with " + strconv.Itoa(len(j.recs)) + " effects"
	if j.ended != "" {
		s += ", which ended " + j.ended
	} else {
		s += ", which did not end (a crash or a kill)"
	}
	return s
}

// OpenJournal opens an existing journal file to resume or replay its run.
// A last line cut short by a crash is dropped and truncated away.
//
// The file is locked while the Journal is open (flock(2) on Unix, an
// exclusive lock that the system releases when the process ends, however
// it ends): a second opening, by any process, fails with ErrJournalInUse
// instead of interleaving its writes.
func OpenJournal(path string) (*Journal, error) {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return nil, err
	}
	if err := lockFile(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("journal %s: %w", path, err)
	}
	data, err := io.ReadAll(f)
	if err != nil {
		f.Close()
		return nil, err
	}
	j, good, err := parseJournal(data)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("journal %s: %w", path, err)
	}
	if good < len(data) {
		if err := f.Truncate(int64(good)); err != nil {
			f.Close()
			return nil, err
		}
	}
	if _, err := f.Seek(int64(good), io.SeekStart); err != nil {
		f.Close()
		return nil, err
	}
	j.f = f
	j.lines = nil // a file journal keeps its lines on disk only
	return j, nil
}

// ReadJournal parses journal text (for in-memory use and tests). A last
// line cut short is dropped.
func ReadJournal(data []byte) (*Journal, error) {
	j, _, err := parseJournal(data)
	return j, err
}

// parseJournal reads the lines of a journal and returns the number of
// bytes that hold complete, valid lines.
func parseJournal(data []byte) (*Journal, int, error) {
	j := &Journal{recs: make(map[string]*jrec)}
	pos, lineNo := 0, 0
	for pos < len(data) {
		lineNo++
		nl := bytes.IndexByte(data[pos:], '\n')
		last := nl < 0 || pos+nl+1 == len(data)
		if nl < 0 { // cut short by a crash
			break
		}
		line := data[pos : pos+nl]
		v, err := ParseJSONExt(line)
		if err == nil && v.k != KindObject {
			err = errors.New("not a JSON object")
		}
		if err == nil {
			if lineNo == 1 {
				err = j.readHeader(v)
			} else {
				err = j.readLine(v)
			}
		}
		if err != nil {
			if last && lineNo > 1 { // a torn last write
				break
			}
			return nil, 0, fmt.Errorf("line %d: %v", lineNo, err)
		}
		j.lines = append(j.lines, append([]byte(nil), data[pos:pos+nl+1]...))
		pos += nl + 1
	}
	if lineNo == 0 || len(j.lines) == 0 {
		return nil, 0, errors.New("empty journal: no header line")
	}
	return j, pos, nil
}

func (j *Journal) readHeader(v Value) error {
	if f, _ := v.Get("format"); f.Str() != JournalFormat {
		return errors.New("not a genesis journal (format " + f.String() + ")")
	}
	if n, _ := v.Get("version"); n.Num() != JournalVersion {
		return errors.New("unsupported journal version " + n.String())
	}
	p, _ := v.Get("program")
	j.program = p.Str()
	if id, ok := v.Get("run"); ok {
		s, isStr := id.AsString()
		if !isStr || s == "" {
			return errors.New("the run id is not a non-empty string")
		}
		j.runID = s
	}
	return nil
}

func (j *Journal) readLine(v Value) error {
	if end, ok := v.Get("end"); ok {
		j.ended = end.Str()
		if end.Str() == string(StatusSuspended) {
			s, _ := v.Get("step")
			j.suspended = s.Str()
		} else {
			j.suspended = ""
		}
		return nil
	}
	stepV, ok := v.Get("step")
	step, isStr := stepV.AsString()
	if !ok || !isStr {
		return errors.New("a line without a step")
	}
	if payload, ok := v.Get("resume"); ok {
		rec := j.recs[step]
		if rec == nil || !rec.pending {
			return errors.New("a resume line for step " + strconv.Quote(step) + ", which is not pending")
		}
		rec.resumed, rec.resume = true, payload
		return nil
	}
	if a, ok := v.Get("attempt"); ok {
		n, isNum := a.AsNumber()
		if !isNum || n < 2 || n > maxRetries+1 || n != float64(int(n)) {
			return errors.New("a bad attempt number for step " + strconv.Quote(step))
		}
		if j.inflight == nil {
			j.inflight = make(map[string]int)
		}
		j.inflight[step] = int(n)
		return nil
	}
	eff, _ := v.Get("effect")
	if eff.Str() == "" {
		return errors.New("a line without an effect")
	}
	rec := &jrec{effect: eff.Str()}
	rec.request, _ = v.Get("request")
	if p, _ := v.Get("pending"); p.Truthy() {
		rec.pending = true
	} else {
		rep, ok := v.Get("reply")
		if !ok {
			return errors.New("an effect line without a reply")
		}
		rec.reply = rep
		if a, ok := v.Get("attempts"); ok {
			rec.attempts = int(a.Num())
		}
		if d, ok := v.Get("duration_ms"); ok && d.Num() > 0 && d.Num() < 1e15 {
			rec.duration = time.Duration(d.Num() * float64(time.Millisecond))
		}
		if u, ok := v.Get("usage"); ok {
			usage, err := parseUsage(u)
			if err != nil {
				return err
			}
			rec.usage = usage
		}
	}
	j.put(step, rec)
	return nil
}

func (j *Journal) put(step string, rec *jrec) {
	if _, ok := j.recs[step]; !ok {
		j.order = append(j.order, step)
	}
	j.recs[step] = rec
}

// Program returns the program the journal's header names.
func (j *Journal) Program() string { return j.program }

// RunID returns the id of the journal's run ("" for a journal written
// before runs had ids).
func (j *Journal) RunID() string { return j.runID }

// Effects returns the number of effects the journal holds.
func (j *Journal) Effects() int {
	j.mu.Lock()
	defer j.mu.Unlock()
	return len(j.recs)
}

// Bytes returns the text of an in-memory journal (nil for a file
// journal: its text is the file).
func (j *Journal) Bytes() []byte {
	j.mu.Lock()
	defer j.mu.Unlock()
	return bytes.Join(j.lines, nil)
}

// Close closes the journal's file.
func (j *Journal) Close() error {
	if j.f == nil {
		return nil
	}
	err := j.f.Close()
	j.f = nil
	return err
}

// write appends one line (with its newline) and makes it durable.
func (j *Journal) write(line []byte) error {
	if j.sink != nil {
		return j.sink.AppendLine(line)
	}
	if j.f != nil {
		if _, err := j.f.Write(line); err != nil {
			return err
		}
		if err := j.f.Sync(); err != nil {
			return err
		}
	}
	if j.f == nil && j.lines != nil {
		j.lines = append(j.lines, append([]byte(nil), line...))
	}
	return nil
}

// lookup returns the record of a step (nil when there is none) and marks
// it used.
func (j *Journal) lookup(step string) *jrec {
	j.mu.Lock()
	defer j.mu.Unlock()
	rec := j.recs[step]
	if rec != nil {
		rec.used = true
	}
	return rec
}

// resetUsed forgets which records a previous run asked for.
func (j *Journal) resetUsed() {
	j.mu.Lock()
	defer j.mu.Unlock()
	for _, rec := range j.recs {
		rec.used = false
	}
}

// unused returns the first effect (in journal order) no lookup asked for.
func (j *Journal) unused() (string, int) {
	j.mu.Lock()
	defer j.mu.Unlock()
	first, n := "", 0
	for _, s := range j.order {
		if !j.recs[s].used {
			if n == 0 {
				first = s
			}
			n++
		}
	}
	return first, n
}

// appendEffect records a completed effect.
func (j *Journal) appendEffect(step, effect string, request, reply Value, usage *Usage, attempts int, dur time.Duration) error {
	j.mu.Lock()
	defer j.mu.Unlock()
	b := j.buf[:0]
	b = append(b, `{"step":`...)
	b = appendString(b, step)
	b = append(b, `,"effect":`...)
	b = appendString(b, effect)
	b = append(b, `,"request":`...)
	b = AppendJSON(b, request)
	b = append(b, `,"reply":`...)
	b = AppendJSON(b, reply)
	if attempts > 0 {
		b = append(b, `,"attempts":`...)
		b = strconv.AppendInt(b, int64(attempts), 10)
	}
	if usage != nil {
		b = appendUsage(append(b, `,"usage":`...), *usage)
	}
	b = append(b, `,"duration_ms":`...)
	b = appendNumber(b, msOf(dur))
	b = append(b, "}\n"...)
	j.buf = b
	rec := &jrec{effect: effect, request: request, reply: reply, attempts: attempts, duration: dur, used: true}
	if usage != nil {
		rec.usage = *usage
	}
	j.put(step, rec)
	return j.write(b)
}

func appendUsage(b []byte, u Usage) []byte {
	b = append(b, `{"prompt_tokens":`...)
	b = strconv.AppendInt(b, int64(u.PromptTokens), 10)
	b = append(b, `,"completion_tokens":`...)
	b = strconv.AppendInt(b, int64(u.CompletionTokens), 10)
	b = append(b, `,"cost":`...)
	b = appendNumber(b, u.Cost)
	return append(b, '}')
}

// appendAttempt records that attempt n (≥ 2) of step's call starts. It
// is not fsynced: it matters after a crash of the process, not of the
// machine, and the effect line that follows syncs it anyway.
func (j *Journal) appendAttempt(step string, n int) error {
	j.mu.Lock()
	defer j.mu.Unlock()
	b := append(j.buf[:0], `{"step":`...)
	b = appendString(b, step)
	b = append(b, `,"attempt":`...)
	b = strconv.AppendInt(b, int64(n), 10)
	b = append(b, "}\n"...)
	j.buf = b
	if j.sink != nil {
		return j.sink.AppendLine(b)
	}
	if j.f != nil {
		_, err := j.f.Write(b)
		return err
	}
	if j.lines != nil {
		j.lines = append(j.lines, append([]byte(nil), b...))
	}
	return nil
}

// inflightAttempt returns the attempt of step's call that a previous
// execution started last without completing (1 when none was recorded).
func (j *Journal) inflightAttempt(step string) int {
	j.mu.Lock()
	defer j.mu.Unlock()
	if n := j.inflight[step]; n > 1 {
		return n
	}
	return 1
}

// appendPending records an effect that suspended the run.
func (j *Journal) appendPending(step, effect string, request Value) error {
	j.mu.Lock()
	defer j.mu.Unlock()
	b := j.buf[:0]
	b = append(b, `{"step":`...)
	b = appendString(b, step)
	b = append(b, `,"effect":`...)
	b = appendString(b, effect)
	b = append(b, `,"request":`...)
	b = AppendJSON(b, request)
	b = append(b, `,"pending":true}`+"\n"...)
	j.buf = b
	j.put(step, &jrec{effect: effect, request: request, pending: true, used: true})
	return j.write(b)
}

// appendResume records the payload a pending step was resumed with.
func (j *Journal) appendResume(step string, payload Value) error {
	j.mu.Lock()
	defer j.mu.Unlock()
	b := j.buf[:0]
	b = append(b, `{"step":`...)
	b = appendString(b, step)
	b = append(b, `,"resume":`...)
	b = AppendJSON(b, payload)
	b = append(b, "}\n"...)
	j.buf = b
	if rec := j.recs[step]; rec != nil {
		rec.resumed, rec.resume = true, payload
	}
	return j.write(b)
}

// appendEnd closes one execution of the run.
func (j *Journal) appendEnd(status Status, step string) error {
	j.mu.Lock()
	defer j.mu.Unlock()
	b := append(j.buf[:0], `{"end":`...)
	b = appendString(b, string(status))
	if status == StatusSuspended {
		b = append(b, `,"step":`...)
		b = appendString(b, step)
		j.suspended = step
	} else {
		j.suspended = ""
	}
	b = append(b, "}\n"...)
	j.buf = b
	j.ended = string(status)
	return j.write(b)
}

// suspendedStep returns the step the journal's run was suspended at ("" if
// it was not).
func (j *Journal) suspendedStep() string {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.suspended
}
