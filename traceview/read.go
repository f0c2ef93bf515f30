// Package traceview turns a run's JSON Lines trace (docs/runtime.md,
// "Trace") into one self-contained HTML page: the run's header, its
// steps on a timeline with a lane per parallel branch, a detail panel
// with each step's prompt and reply, and the run's narration
// (runtime.Narrator) beside it. The page fetches nothing: its style and
// script are inline and its Content-Security-Policy forbids every load.
//
// The trace is read one line at a time, and what the page keeps is
// bounded by Options (docs/trace-viewer.md, "Limits"), so a trace of any
// size renders within a fixed amount of memory.
package traceview

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/genesis-toolchain/genesis/runtime"
)

// The default limits (Options).
const (
	DefaultMaxLine         = 64 << 20
	DefaultMaxSteps        = 2000
	DefaultMaxPayload      = 16 << 10
	DefaultMaxPayloadTotal = 8 << 20
	DefaultMaxNarration    = 5000
	// payloadFloor is what a payload keeps once MaxPayloadTotal is spent.
	payloadFloor = 256
)

// Options are the inputs besides the trace and the page's limits. A
// zero limit takes its default.
type Options struct {
	// TraceName names the trace in errors and in the page ("RUN.trace").
	TraceName string
	// Journal, when not nil, is the run's effect journal (genesisc run
	// --journal): the trace records replies, the journal the requests
	// (prompts, tool arguments), joined to the steps by identity.
	Journal io.Reader
	// JournalName names the journal in errors and in the page.
	JournalName string
	// MaxLine is the longest trace or journal line read, in bytes.
	MaxLine int
	// MaxSteps is how many steps the timeline shows; later ones are
	// counted, not shown.
	MaxSteps int
	// MaxPayload is how many bytes of one prompt, reply or error the
	// page shows.
	MaxPayload int
	// MaxPayloadTotal is how many bytes of payloads the page holds in
	// all; past it each payload shows its first 256 bytes.
	MaxPayloadTotal int
	// MaxNarration is how many lines of narration the page shows.
	MaxNarration int
}

func (o *Options) defaults() {
	if o.TraceName == "" {
		o.TraceName = "trace"
	}
	if o.JournalName == "" {
		o.JournalName = "journal"
	}
	if o.MaxLine <= 0 {
		o.MaxLine = DefaultMaxLine
	}
	if o.MaxSteps <= 0 {
		o.MaxSteps = DefaultMaxSteps
	}
	if o.MaxPayload <= 0 {
		o.MaxPayload = DefaultMaxPayload
	}
	if o.MaxPayloadTotal <= 0 {
		o.MaxPayloadTotal = DefaultMaxPayloadTotal
	}
	if o.MaxNarration <= 0 {
		o.MaxNarration = DefaultMaxNarration
	}
}

// InputError is a trace or journal that cannot be read: File:Line: Msg
// (Line 0 when the error is of the whole file).
type InputError struct {
	File string
	Line int
	Msg  string
}

func (e *InputError) Error() string {
	if e.Line == 0 {
		return e.File + ": " + e.Msg
	}
	return e.File + ":" + strconv.Itoa(e.Line) + ": " + e.Msg
}

// event is one trace event, as docs/runtime.md lists its fields. Fields
// whose type varies with the event (state: an object in run_started, a
// hash in a step's) are kept raw.
type event struct {
	Event      string          `json:"event"`
	T          *float64        `json:"t"`
	Step       string          `json:"step"`
	Name       string          `json:"name"`
	Kind       string          `json:"kind"`
	Status     string          `json:"status"`
	DurationMS *float64        `json:"duration_ms"`
	Attempts   int             `json:"attempts"`
	Tokens     *Tokens         `json:"tokens"`
	Cost       *float64        `json:"cost"`
	Output     json.RawMessage `json:"output"`
	Error      json.RawMessage `json:"error"`
	State      json.RawMessage `json:"state"`
	Reason     string          `json:"reason"`
	Data       json.RawMessage `json:"data"`
	Payload    json.RawMessage `json:"payload"`
	Value      json.RawMessage `json:"value"`
	EventName  string          `json:"event_name"`
	Program    string          `json:"program"`
	Clock      string          `json:"clock"`
	Time       string          `json:"time"`
	Journal    string          `json:"journal"`
	Steps      *int64          `json:"steps"`
}

// Tokens is a step's or the run's token usage.
type Tokens struct {
	Prompt     int64 `json:"prompt"`
	Completion int64 `json:"completion"`
}

// runError is the error of step_failed and run_completed.
type runError struct {
	Kind    string  `json:"kind"`
	Message string  `json:"message"`
	Step    *string `json:"step"`
}

// Payload is a value shown in the page: a string as itself, anything
// else as indented JSON, cut to the page's limits.
type Payload struct {
	Text    string
	JSON    bool // Text is JSON, not a string's contents
	Omitted int  // bytes not shown
	Limit   int  // the limit that cut it, when Omitted > 0
	// AtLeast: the line was shrunk before it was read (shrink), so more
	// than Omitted bytes were left out.
	AtLeast bool
}

// Annotation is something that happened during a step and is not one:
// an advisory, an emitted event, an export, a resumption.
type Annotation struct {
	Label string
	Value Payload
}

// Step is one step of the timeline (or, with Stop, the run's stop).
type Step struct {
	Index    int // its place in the page: element ids s-INDEX, d-INDEX
	ID       string
	Name     string
	Kind     string
	Lane     int // index into View.Lanes
	LaneName string
	Row      int // 0-based row of the timeline
	Rows     int // rows it spans (a parallel block spans its branches)
	Status   string
	T        float64 // start, ms on the run's clock
	Duration *float64
	Attempts int
	Tokens   *Tokens
	Cost     *float64
	Output   *Payload
	ErrKind  string
	ErrMsg   *Payload
	Reason   string
	State    string
	// Request is the journal's request of the step's effect: for llm and
	// judge the prompt, with Options; for a tool its arguments.
	Request *Payload
	Options *Payload
	Tool    string // the tool a tool step called (the journal's request)
	Notes   []Annotation
	// Stop marks the entry that shows why the run stopped.
	Stop bool
}

// Lane is a column of the timeline: the run's own steps, or one branch
// of a parallel block.
type Lane struct {
	Key    string // the call path up to the branch segment ("" for the run)
	Label  string
	Depth  int // nesting of branches
	cursor int // the next free row
}

// NarrationLine is a line of runtime.Narrator's narration.
type NarrationLine struct {
	Text string
	Step int // index of the step it is about, or -1
	Fail bool
}

// View is everything the page shows.
type View struct {
	TraceName   string
	JournalName string // "" without a journal
	Program     string
	Clock       string
	Time        string
	Journal     string // the run's journal mode, from run_started
	// Completed is false for a trace without run_completed (the run
	// crashed, or is still going).
	Completed bool
	Status    string
	StepCount int64
	Tokens    Tokens
	Cost      float64
	EndT      float64
	Output    *Payload
	ErrKind   string
	ErrMsg    string
	ErrStep   string

	Events int // trace events read (of the first run)
	// LaterRuns counts the runs after the first in the trace (genesisc
	// run --repeat); the page shows the first.
	LaterRuns int
	inLater   bool // reading a later run, until its run_completed
	Lanes     []*Lane
	Steps     []*Step
	Rows      int
	Narration []NarrationLine
	// What the limits left out.
	StepsOmitted     int
	NarrationOmitted int
	PayloadsCut      int
	Requests         int // steps the journal gave a request to

	limits    Options
	budget    int  // payload bytes left (MaxPayloadTotal)
	shrunk    bool // the line being read was shrunk
	byID      map[string]int
	laneByKey map[string]int
	blockRow  map[string]int // open parallel blocks: identity → step index
}

// Read reads a trace (and the journal, when opts has one) into a View.
// A line that is not a trace event is an *InputError naming its line.
func Read(trace io.Reader, opts Options) (*View, error) {
	opts.defaults()
	v := &View{TraceName: opts.TraceName, limits: opts, budget: opts.MaxPayloadTotal,
		byID: map[string]int{}, laneByKey: map[string]int{}, blockRow: map[string]int{}}
	v.lane("")
	var narr bytes.Buffer
	var nline []byte
	narrator := runtime.NewNarrator(&narr)
	err := eachLine(trace, opts.TraceName, opts.MaxLine, false, func(n int, line []byte) error {
		orig := line
		line, v.shrunk = shrink(line, opts.MaxPayload)
		var ev event
		if err := decode(line, &ev); err != nil {
			if v.shrunk {
				// The error's byte offset is the original line's.
				err = decode(orig, &event{})
			}
			return &InputError{opts.TraceName, n, "not a trace event: " + err.Error()}
		}
		if ev.Event == "" {
			return &InputError{opts.TraceName, n, `not a trace event: it has no "event"`}
		}
		if ev.T == nil {
			return &InputError{opts.TraceName, n, `not a trace event: it has no "t"`}
		}
		if v.Events == 0 && ev.Event != "run_started" {
			return &InputError{opts.TraceName, n, "the trace does not start with run_started (it starts with " + strconv.Quote(ev.Event) + ")"}
		}
		if v.Completed {
			// genesisc run --repeat N writes N runs, one after the
			// other: the page shows the first, and counts the others.
			switch {
			case !v.inLater && ev.Event != "run_started":
				return &InputError{opts.TraceName, n, "an event after run_completed (only another run's run_started may follow)"}
			case !v.inLater:
				v.LaterRuns++
				v.inLater = true
			case ev.Event == "run_started":
				return &InputError{opts.TraceName, n, "a run_started before the run_completed of the run before"}
			case ev.Event == "run_completed":
				v.inLater = false
			}
			return nil
		}
		v.Events++
		idx, err := v.event(&ev)
		if err != nil {
			return &InputError{opts.TraceName, n, err.Error()}
		}
		narr.Reset()
		// Narrator narrates complete lines; it has its own (lenient) parse.
		// (line is the reader's buffer: it is copied, not appended to.)
		nline = append(append(nline[:0], line...), '\n')
		narrator.Write(nline)
		if cap(nline) > 1<<20 {
			nline = nil
		}
		for _, l := range strings.Split(strings.TrimSuffix(narr.String(), "\n"), "\n") {
			if l == "" {
				continue
			}
			if len(v.Narration) >= opts.MaxNarration {
				v.NarrationOmitted++
				continue
			}
			v.Narration = append(v.Narration, NarrationLine{Text: l, Step: idx, Fail: strings.Contains(l, "❌")})
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if v.Events == 0 {
		return nil, &InputError{opts.TraceName, 0, "empty: the trace has no events"}
	}
	for _, s := range v.Steps {
		if s.Status == "" {
			s.Status = "unfinished"
		}
	}
	if opts.Journal != nil {
		v.JournalName = opts.JournalName
		if err := v.readJournal(opts.Journal); err != nil {
			return nil, err
		}
	}
	v.byID, v.laneByKey, v.blockRow = nil, nil, nil
	return v, nil
}

// decode parses one JSON object.
func decode(line []byte, into any) error {
	d := json.NewDecoder(bytes.NewReader(line))
	if err := d.Decode(into); err != nil {
		var se *json.SyntaxError
		if errors.As(err, &se) {
			return fmt.Errorf("bad JSON at byte %d: %v", se.Offset, se)
		}
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			return fmt.Errorf("field %q is a JSON %s, not what the trace format has there", te.Field, te.Value)
		}
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			return errors.New("bad JSON: it ends too soon")
		}
		return err
	}
	off := int(d.InputOffset())
	if rest := bytes.TrimLeft(line[off:], " \t\r"); len(rest) > 0 {
		return fmt.Errorf("more after the JSON value, at byte %d", len(line)-len(rest)+1)
	}
	return nil
}

// eachLine calls fn with each non-empty line of r (without its newline)
// and its 1-based number. A line longer than maxLine is an error. With
// tolerateCut, a last line with no newline that fn refuses is dropped
// (a journal cut short by a crash).
func eachLine(r io.Reader, name string, maxLine int, tolerateCut bool, fn func(n int, line []byte) error) error {
	br := bufio.NewReaderSize(r, 64<<10)
	var long []byte
	for n := 1; ; n++ {
		line, err := br.ReadSlice('\n')
		if err == bufio.ErrBufferFull {
			long = append(long[:0], line...)
			for err == bufio.ErrBufferFull {
				line, err = br.ReadSlice('\n')
				if len(long)+len(line) > maxLine {
					return &InputError{name, n, "the line is longer than the limit of " + size(maxLine)}
				}
				if len(long)+len(line) > cap(long) {
					// Doubling: append grows a large slice by a
					// quarter, which allocates 5 times a long line.
					grown := make([]byte, len(long), max(2*cap(long), len(long)+len(line)))
					copy(grown, long)
					long = grown
				}
				long = append(long, line...)
			}
			line = long
		}
		if err != nil && err != io.EOF {
			return &InputError{name, n, "reading: " + err.Error()}
		}
		if len(line) > maxLine {
			return &InputError{name, n, "the line is longer than the limit of " + size(maxLine)}
		}
		cut := err == io.EOF
		line = bytes.TrimSuffix(line, []byte{'\n'})
		line = bytes.TrimSuffix(line, []byte{'\r'})
		if len(bytes.TrimSpace(line)) > 0 {
			if ferr := fn(n, line); ferr != nil {
				if !(tolerateCut && cut) {
					return ferr
				}
			}
		}
		if err == io.EOF {
			return nil
		}
		if cap(long) > 1<<20 {
			long = nil // do not keep a huge line's buffer for the rest
		}
	}
}

// lane returns the index of the lane key, adding it.
func (v *View) lane(key string) int {
	if i, ok := v.laneByKey[key]; ok {
		return i
	}
	l := &Lane{Key: key, Label: "run"}
	if key != "" {
		segs := strings.Split(key, " > ")
		depth := 0
		for _, s := range segs {
			if isBranch(s) {
				depth++
			}
		}
		last := segs[len(segs)-1]
		slash := strings.LastIndexByte(last, '/')
		block, _, _ := strings.Cut(last[:slash], " @ ")
		l.Label = block + " · branch " + last[slash+1:]
		l.Depth = depth
		// A branch starts on the row after its block's.
		bid := key[:len(key)-(len(last)-slash)]
		if bi, ok := v.blockRow[bid]; ok {
			l.cursor = v.Steps[bi].Row + 1
		} else {
			l.cursor = v.Lanes[v.lane(parentLane(bid))].cursor
		}
	}
	v.laneByKey[key] = len(v.Lanes)
	v.Lanes = append(v.Lanes, l)
	return len(v.Lanes) - 1
}

// laneKey is the lane of step identity id: its call path up to its last
// parallel-branch segment ("BLOCK/i"), or "" for the run's own steps.
func laneKey(id string) string {
	segs := strings.Split(id, " > ")
	for i := len(segs) - 2; i >= 0; i-- {
		if isBranch(segs[i]) {
			return strings.Join(segs[:i+1], " > ")
		}
	}
	return ""
}

// parentLane is the lane of the step whose identity is id (laneKey).
func parentLane(id string) string { return laneKey(id) }

// isBranch reports whether a call-path segment is a parallel branch,
// "BLOCK-IDENTITY/i" (as runtime.Narrator reads it).
func isBranch(s string) bool {
	slash := strings.LastIndexByte(s, '/')
	if slash < 0 || slash == len(s)-1 {
		return false
	}
	for _, c := range s[slash+1:] {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// event takes one trace event into the view; it returns the index of the
// step the event is about (-1 when none is shown).
func (v *View) event(ev *event) (int, error) {
	switch ev.Event {
	case "run_started":
		if v.Events > 1 {
			return -1, errors.New("a second run_started")
		}
		v.Program, v.Clock, v.Time, v.Journal = ev.Program, ev.Clock, ev.Time, ev.Journal
		return -1, nil
	case "step_started":
		if ev.Step == "" {
			return -1, errors.New(`step_started has no "step"`)
		}
		s := v.newStep(ev)
		if s == nil {
			return -1, nil
		}
		if ev.Kind == "parallel" {
			v.blockRow[ev.Step] = s.Index
		}
		return s.Index, nil
	case "step_completed", "step_failed", "step_skipped":
		if ev.Step == "" {
			return -1, errors.New(ev.Event + ` has no "step"`)
		}
		i, open := v.byID[ev.Step]
		var s *Step
		switch {
		case open && v.Steps[i].Status == "":
			s = v.Steps[i]
		case len(v.Steps) >= v.limits.MaxSteps:
			// Past MaxSteps: its step_started counted it, unless it has
			// none (a skip).
			if ev.Event == "step_skipped" {
				v.StepsOmitted++
			}
			return -1, nil
		default:
			s = v.newStep(ev)
		}
		return s.Index, v.endStep(s, ev)
	case "run_completed":
		v.Completed = true
		v.Status = ev.Status
		if ev.Steps != nil {
			v.StepCount = *ev.Steps
		}
		if ev.Tokens != nil {
			v.Tokens = *ev.Tokens
		}
		if ev.Cost != nil {
			v.Cost = *ev.Cost
		}
		v.EndT = *ev.T
		if len(ev.Output) > 0 && string(ev.Output) != "null" {
			p := v.payload(ev.Output)
			v.Output = &p
		}
		if len(ev.Error) > 0 && string(ev.Error) != "null" {
			var e runError
			if err := json.Unmarshal(ev.Error, &e); err != nil {
				return -1, errors.New(`run_completed's "error" is not {"kind", "message", "step"}`)
			}
			v.ErrKind, v.ErrMsg = e.Kind, e.Message
			if e.Step != nil {
				v.ErrStep = *e.Step
			}
			if v.Status != "success" {
				return v.stopEntry(ev), nil
			}
		}
		return -1, nil
	}
	// Events about a step that are not steps: advisories, emitted
	// events, exports (notes are narration only).
	i, ok := v.byID[ev.Step]
	if !ok || ev.Event == "note" {
		return -1, nil
	}
	s := v.Steps[i]
	switch {
	case ev.Event == "event_emitted":
		s.Notes = append(s.Notes, Annotation{"emitted " + ev.EventName, v.payload(ev.Payload)})
	case ev.Event == "exported":
		s.Notes = append(s.Notes, Annotation{"exported " + ev.Name, v.payload(ev.Value)})
	case strings.HasPrefix(ev.Event, "advisory_"):
		s.Notes = append(s.Notes, Annotation{strings.ReplaceAll(strings.TrimPrefix(ev.Event, "advisory_"), "_", " "), v.payload(ev.Data)})
	default:
		s.Notes = append(s.Notes, Annotation{ev.Event, Payload{Text: "(an event this viewer does not know)"}})
	}
	return i, nil
}

// newStep adds the step that ev begins, on its lane's next row; nil past
// MaxSteps.
func (v *View) newStep(ev *event) *Step {
	if len(v.Steps) >= v.limits.MaxSteps {
		v.StepsOmitted++
		return nil
	}
	li := v.lane(laneKey(ev.Step))
	l := v.Lanes[li]
	s := &Step{Index: len(v.Steps), ID: ev.Step, Name: ev.Name, Kind: ev.Kind, Lane: li, LaneName: l.Label, Row: l.cursor, Rows: 1, T: *ev.T}
	l.cursor++
	v.Rows = max(v.Rows, l.cursor)
	v.Steps = append(v.Steps, s)
	v.byID[ev.Step] = s.Index
	return s
}

// endStep completes s with the event that ends it.
func (v *View) endStep(s *Step, ev *event) error {
	s.Status = ev.Status
	if s.Status == "" {
		s.Status = map[string]string{"step_completed": "success", "step_failed": "failed", "step_skipped": "skipped"}[ev.Event]
	}
	if s.Kind == "" {
		s.Kind = ev.Kind
	}
	s.Duration, s.Attempts, s.Tokens, s.Cost, s.Reason = ev.DurationMS, ev.Attempts, ev.Tokens, ev.Cost, ev.Reason
	if len(ev.State) > 0 {
		_ = json.Unmarshal(ev.State, &s.State) // a hash; anything else is not shown
	}
	switch ev.Event {
	case "step_completed":
		if len(ev.Output) > 0 {
			p := v.payload(ev.Output)
			s.Output = &p
		}
	case "step_failed":
		var e runError
		if len(ev.Error) > 0 {
			if err := json.Unmarshal(ev.Error, &e); err != nil {
				return errors.New(`step_failed's "error" is not {"kind", "message"}`)
			}
		}
		s.ErrKind = e.Kind
		p := v.text(e.Message)
		s.ErrMsg = &p
	}
	if s.Kind == "parallel" {
		// The block spans the rows its branches took; its lane goes on
		// after them.
		delete(v.blockRow, s.ID)
		end := s.Row + 1
		prefix := s.ID + "/"
		for _, l := range v.Lanes {
			if strings.HasPrefix(l.Key, prefix) {
				end = max(end, l.cursor)
			}
		}
		s.Rows = end - s.Row
		l := v.Lanes[s.Lane]
		l.cursor = max(l.cursor, end)
	}
	return nil
}

// stopEntry adds the entry that shows why the run stopped, on the lane
// of the step it stopped at (the run's own lane when none).
func (v *View) stopEntry(ev *event) int {
	if len(v.Steps) >= v.limits.MaxSteps+1 {
		return -1
	}
	li := v.lane(laneKey(v.ErrStep))
	l := v.Lanes[li]
	name := v.ErrStep
	if n, _, ok := strings.Cut(name, " @ "); ok {
		name = n
	}
	s := &Step{Index: len(v.Steps), ID: v.ErrStep, Name: name, Kind: v.ErrKind, Lane: li, LaneName: l.Label, Row: l.cursor, Rows: 1,
		T: *ev.T, Status: v.Status, ErrKind: v.ErrKind, Stop: true}
	p := v.text(v.ErrMsg)
	s.ErrMsg = &p
	l.cursor++
	v.Rows = max(v.Rows, l.cursor)
	v.Steps = append(v.Steps, s)
	return s.Index
}

// payload renders a JSON value for the page: a string as its text,
// anything else indented.
func (v *View) payload(raw json.RawMessage) Payload {
	if len(raw) > 0 && raw[0] == '"' {
		var s string
		if json.Unmarshal(raw, &s) == nil {
			return v.text(s)
		}
	}
	var b bytes.Buffer
	if err := json.Indent(&b, raw, "", "  "); err != nil {
		return v.cut(string(raw), false)
	}
	return v.cut(b.String(), true)
}

// text is a string payload.
func (v *View) text(s string) Payload { return v.cut(s, false) }

// cut applies the payload limits to s.
func (v *View) cut(s string, isJSON bool) Payload {
	limit := v.limits.MaxPayload
	if v.budget < limit {
		limit = min(limit, max(v.budget, payloadFloor))
	}
	p := Payload{Text: s, JSON: isJSON}
	if len(s) > limit {
		n := limit
		for n > 0 && !utf8.RuneStart(s[n]) {
			n--
		}
		p.Text, p.Omitted, p.Limit, p.AtLeast = s[:n], len(s)-n, limit, v.shrunk
		v.PayloadsCut++
	}
	v.budget = max(v.budget-len(p.Text), 0)
	return p
}

// journalLine is a line of the journal (runtime/journal.go).
type journalLine struct {
	Format  string          `json:"format"`
	Program string          `json:"program"`
	Step    string          `json:"step"`
	Effect  string          `json:"effect"`
	Request json.RawMessage `json:"request"`
	Resume  json.RawMessage `json:"resume"`
}

// readJournal gives the shown steps their requests from the journal.
func (v *View) readJournal(r io.Reader) error {
	name := v.JournalName
	header := false
	return eachLine(r, name, v.limits.MaxLine, true, func(n int, line []byte) error {
		orig := line
		line, v.shrunk = shrink(line, v.limits.MaxPayload)
		var jl journalLine
		if err := decode(line, &jl); err != nil {
			if v.shrunk {
				err = decode(orig, &journalLine{})
			}
			return &InputError{name, n, "not a journal line: " + err.Error()}
		}
		if !header {
			if jl.Format != runtime.JournalFormat {
				return &InputError{name, n, "not a journal: its first line has no \"format\": " + strconv.Quote(runtime.JournalFormat)}
			}
			if jl.Program != v.Program {
				return &InputError{name, n, "the journal is of program " + strconv.Quote(jl.Program) + ", the trace of " + strconv.Quote(v.Program)}
			}
			header = true
			return nil
		}
		i, ok := v.byID[jl.Step]
		if !ok || jl.Step == "" {
			return nil
		}
		s := v.Steps[i]
		if len(jl.Resume) > 0 {
			s.Notes = append(s.Notes, Annotation{"resumed with", v.payload(jl.Resume)})
			return nil
		}
		if len(jl.Request) == 0 {
			return nil
		}
		var req map[string]json.RawMessage
		if json.Unmarshal(jl.Request, &req) != nil {
			p := v.payload(jl.Request)
			s.Request = &p
			return nil
		}
		if s.Request == nil {
			v.Requests++
		}
		switch {
		case req["prompt"] != nil:
			p := v.payload(req["prompt"])
			s.Request = &p
			if o := req["options"]; len(o) > 0 && string(o) != "null" && string(o) != "{}" {
				p := v.payload(o)
				s.Options = &p
			}
		case req["args"] != nil:
			p := v.payload(req["args"])
			s.Request = &p
			_ = json.Unmarshal(req["name"], &s.Tool) // the tool's name, when a string
		default:
			p := v.payload(jl.Request)
			s.Request = &p
		}
		return nil
	})
}

// size renders a byte count.
func size(n int) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return strconv.Itoa(n>>20) + " MiB"
	case n >= 1<<10 && n%(1<<10) == 0:
		return strconv.Itoa(n>>10) + " KiB"
	}
	return strconv.Itoa(n) + " bytes"
}

// shrink returns line with every JSON string literal longer than the
// page could show cut short (and whether it cut any), so that a line
// holding a huge reply is decoded, narrated and shown at the cost of
// what the page keeps, not of the reply: a 50 MB reply is read once
// into the line buffer, not copied and decoded several times over. A
// string is kept to 6·maxPayload + 64 bytes of its JSON text, which
// decode to more than maxPayload bytes (an escape is at most 6 bytes
// for 1), so the payload is still cut where it would have been; past
// 8 such strings, a line's long strings keep 64 bytes. A line with no
// string that long is returned as is.
func shrink(line []byte, maxPayload int) ([]byte, bool) {
	keep := 6*maxPayload + 64
	if len(line) <= keep {
		return line, false
	}
	var out []byte
	cuts := 0
	start := 0 // line[start:i] is yet to be copied
	for i := 0; i < len(line); i++ {
		if line[i] != '"' {
			continue
		}
		j := i + 1
		for j < len(line) && line[j] != '"' {
			if line[j] == '\\' {
				j++
			}
			j++
		}
		if j >= len(line) {
			break // an unterminated string: the decoder reports it
		}
		if body := line[i+1 : j]; len(body) > keep {
			k := keep
			if cuts >= 8 {
				k = 64
			}
			if out == nil {
				out = make([]byte, 0, 4*keep)
			}
			out = append(out, line[start:i+1]...)
			out = append(out, body[:escapeCut(body, k)]...)
			out = append(out, '"')
			start = j + 1
			cuts++
		}
		i = j
	}
	if out == nil {
		return line, false
	}
	return append(out, line[start:]...), true
}

// escapeCut returns the largest n <= k at which body, the text of a JSON
// string, can be cut: not inside an escape nor a UTF-8 sequence.
func escapeCut(body []byte, k int) int {
	p := 0
	for p < k {
		step := 1
		if body[p] == '\\' {
			step = 2
			if p+1 < len(body) && body[p+1] == 'u' {
				step = 6
			}
		}
		if p+step > k {
			break
		}
		p += step
	}
	for p > 0 && p < len(body) && !utf8.RuneStart(body[p]) {
		p--
	}
	return p
}
