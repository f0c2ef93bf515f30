package runtime

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
)

// Run is one execution of a program. Generated code receives it in the
// function given to Execute and calls one method per effect. Effects
// return error values for failed calls (after retries); when the run must
// stop (a budget, a suspension, Fail, a journal divergence) the method
// panics with an unexported value that Execute recovers into the Result,
// so straight-line generated code needs no error checks. Code between
// effects must not recover panics it does not know.
//
// A Run is not safe for concurrent use; parallel branches get their own
// (Parallel).
type Run struct {
	h     *Host
	ctx   context.Context
	input Value

	real    bool // the real clock
	limited bool // a budget or a limit is checked before each step
	track   bool // state tracking: stall detection and snapshots (the root run only)
	tracing bool
	branch  bool
	started bool

	vnow    time.Duration // virtual time since the start
	ticks   int           // loop iterations until Tick checks again
	steps   int
	usage   Usage
	stalled int

	// result
	names    []string
	namesBuf [4]string
	lastOut  Value
	outputs  Value
	doneOuts Value // step name → its latest output (resultOutputs)
	// pend is what the result held before a tool answered "PENDING": a
	// resume wait of the same step that follows takes that reply back
	// (the pending step has no output), see retractPending.
	pend    pendingTool
	exports Value
	events  []Event

	lastSite *Site  // the site of the latest step begun
	lastStep string // and its identity
	lastStmt *Site  // the site of the latest "statement" note
	path     string // call path prefix: "site > " per Enter, "block/i > " per branch
	occSites []siteCount
	occBuf   [4]siteCount
	occIters []iterCount // steps with counters, while few (identity)
	iterBuf  [6]iterCount
	j        *Journal

	// providers
	call   Call
	llmReq LLMRequest
	seq    []seqCount

	// idempotency keys: the run's identity, made when a key is first needed
	ident                        *runIdentity
	progName, progHash, runIDOpt string

	*runExtra // what only some runs need; nil until then
}

// runExtra holds the parts of a Run that budgets, traces, journals,
// snapshots, calls and branches need.
type runExtra struct {
	program string
	budget  Budget
	t0      time.Time // real start

	// limits (limits.go)
	limits     Limits
	hasLimits  bool
	realStart  time.Time // when the run started, in real time (Limits.Wall)
	traceBytes int64     // trace bytes written (a branch: by the run when its block started)
	traceOver  bool      // the trace limit stopped the run
	evStart    int       // where the event being built starts in tbuf

	// state tracking
	stepOuts  Value // step name → its latest successful output
	stateW    Value // state keys written by the run → value
	changed   bool
	wantSnaps bool
	snapshots []string

	// identity
	pathStack []int
	occPtr    map[*Site]int
	occStr    map[string]int
	idbuf     []byte

	// trace
	tw       io.Writer // the root's writer
	tbuf     []byte    // the event being built (root), or every event of a branch
	traceErr error

	// journal
	mode        JournalMode
	shared      *sharedState
	journalOpen bool // start accepted the journal: finish closes the execution

	// branches
	base         *branchBase
	writes       []Field // SetOutput calls, replayed into the parent
	exportWrites []Field
	stateWrites  []Field
}

// identity0 returns the run's identity (run id and program hash), shared
// with its branches, making it on first use: the run id is the journal's,
// else RunOptions.RunID, else drawn when the first key needs it.
func (r *Run) identity0() *runIdentity {
	if r.ident == nil {
		ri := &runIdentity{id: r.runIDOpt, programHash: r.progHash}
		if r.j != nil && r.j.runID != "" {
			ri.id = r.j.runID
		}
		if ri.programHash == "" {
			ri.programHash = programHashOf(r.progName)
		}
		r.ident = ri
	}
	return r.ident
}

// RunID returns the run's id (see RunOptions.RunID).
func (r *Run) RunID() string { return r.identity0().runID() }

func (r *Run) ext() *runExtra {
	if r.runExtra == nil {
		r.runExtra = &runExtra{}
	}
	return r.runExtra
}

type seqCount struct {
	key string
	n   int
}

// sharedState is shared by a run and its branches.
type sharedState struct {
	resume     *Value
	resumeStep string
	resumed    atomic.Bool
}

type siteCount struct {
	s *Site
	n int
}

// iterCount counts the executions of a step with one or two counters.
type iterCount struct {
	s     *Site
	iters [2]int64
	k     int // how many counters
	n     int
}

// maxIterCounts bounds the linear list of iterCounts; longer runs count
// in occStr.
const maxIterCounts = 32

// stopSignal is the panic value that stops a run.
type stopSignal struct {
	status Status
	err    *RunError
}

func (r *Run) stop(status Status, kind, msg, step string) {
	panic(&stopSignal{status: status, err: &RunError{Kind: kind, Message: msg, Step: step}})
}

// Execute runs program and returns the result: status success with the
// program's return value as output when it returns, or the status the run
// stopped with. A panic that is not a stop propagates (after the trace
// and journal are closed with status failed).
func (r *Run) Execute(program func(*Run) Value) (res *Result) {
	if r.started {
		panic("runtime: Run.Execute called twice")
	}
	r.started = true
	defer func() {
		if p := recover(); p != nil {
			s, ok := p.(*stopSignal)
			if !ok {
				r.finish(r.lastOut, &stopSignal{status: StatusFailed, err: &RunError{Kind: "panic", Message: panicString(p)}})
				panic(p)
			}
			res = r.finish(r.lastOut, s)
		}
	}()
	r.start()
	out := program(r)
	return r.finish(out, nil)
}

func panicString(p any) string {
	switch x := p.(type) {
	case error:
		return x.Error()
	case string:
		return x
	}
	return "panic"
}

func (r *Run) start() {
	if r.tracing {
		b := append(r.tbuf[:0], `{"event":"run_started","t":0,"program":`...)
		b = appendString(b, r.program)
		if r.real {
			b = append(b, `,"clock":"real","time":`...)
			b = appendString(b, r.t0.UTC().Format(time.RFC3339Nano))
		} else {
			b = append(b, `,"clock":"virtual"`...)
		}
		if sb, ok := r.h.store.(StoreBackend); ok {
			name, loc := sb.Backend()
			b = append(b, `,"state":{"backend":`...)
			b = appendString(b, name)
			b = append(b, `,"path":`...)
			b = appendString(b, loc)
			b = append(b, '}')
		}
		if r.j != nil {
			b = append(b, `,"journal":`...)
			b = appendString(b, r.mode.String())
		}
		r.tbuf = append(b, "}\n"...)
		r.flushEvent()
	}
	if r.j == nil {
		if r.runExtra != nil && r.shared != nil && r.shared.resume != nil {
			r.stop(StatusFailed, "journal", "resuming a run needs its journal", "")
		}
		return
	}
	if r.program != "" && r.j.program != "" && r.program != r.j.program {
		r.stop(StatusFailed, "journal", "the journal is of program "+strconv.Quote(r.j.program)+", not "+strconv.Quote(r.program), "")
	}
	switch r.mode {
	case JournalRecord:
		if n := r.j.Effects(); n > 0 {
			r.stop(StatusFailed, "journal", "the journal already holds "+strconv.Itoa(n)+" effects: resume or replay it, or start a new one", "")
		}
		if r.shared.resume != nil {
			r.stop(StatusFailed, "journal", "a resume payload needs journal mode resume", "")
		}
	case JournalResume, JournalReplay:
		r.shared.resumeStep = r.j.suspendedStep()
		if r.shared.resume != nil && r.shared.resumeStep == "" {
			r.stop(StatusFailed, "journal", "the journal's run is not suspended: there is no step to resume with the payload", "")
		}
		r.j.resetUsed()
	}
	r.journalOpen = true
}

// finish closes the trace and the journal and builds the result.
func (r *Run) finish(out Value, s *stopSignal) *Result {
	if s == nil && r.tracing && r.traceErr != nil {
		s = &stopSignal{status: StatusFailed, err: &RunError{Kind: "trace", Message: "writing the trace: " + r.traceErr.Error()}}
	}
	if s == nil && r.j != nil && r.mode == JournalReplay {
		if first, n := r.j.unused(); n > 0 {
			s = &stopSignal{status: StatusFailed, err: &RunError{Kind: "divergence",
				Message: "replay: the run ended but the journal holds " + strconv.Itoa(n) + " more effects, the first at step " + first, Step: first}}
		}
	}
	res := &Result{Status: StatusSuccess, Steps: r.names, Output: out, Outputs: r.resultOutputs(), Events: r.events, Exports: r.exports, Usage: r.usage}
	if s != nil {
		res.Status, res.Error = s.status, s.err
		if s.status == StatusSuspended {
			// A suspended run has not ended: it has no output yet
			// (nano-vm's suspended trace has final_output None).
			res.Output = Value{}
		}
	}
	if r.runExtra != nil && r.wantSnaps {
		res.Snapshots = r.snapshots
		if res.Snapshots == nil {
			res.Snapshots = []string{}
		}
	}
	if r.tracing {
		b := r.eventHead("run_completed")
		b = append(b, `,"status":`...)
		b = appendString(b, string(res.Status))
		b = append(b, `,"steps":`...)
		b = strconv.AppendInt(b, int64(r.steps), 10)
		b = append(b, `,"tokens":`...)
		b = appendTokens(b, r.usage)
		b = append(b, `,"cost":`...)
		b = appendNumber(b, r.usage.Cost)
		b = append(b, `,"output":`...)
		b = r.appendFinalOut(b, res.Output)
		b = append(b, `,"error":`...)
		b = appendRunError(b, res.Error)
		r.tbuf = append(b, "}\n"...)
		r.writeEvent() // the trace ends with the status, even past its limit
	}
	if r.j != nil && r.mode != JournalReplay && r.journalOpen {
		step := ""
		if res.Error != nil {
			step = res.Error.Step
		}
		r.j.appendEnd(res.Status, step) // a failure here cannot change the outcome any more
	}
	return res
}

// noteDone records the output of a completed step for the result's
// outputs; effects without a reply (emit, state.put) have none.
func (r *Run) noteDone(name string, out Value) {
	if out.k == KindUnit {
		return
	}
	if r.doneOuts.k != KindObject {
		r.doneOuts = emptyObject
	}
	r.doneOuts = objSet(r.doneOuts, name, out)
}

// resultOutputs is the result's "outputs": the latest output (not unit)
// of every step that completed, by step name, then what the program set
// with SetOutput (which wins on a shared key).
func (r *Run) resultOutputs() Value {
	o := r.doneOuts
	if o.k != KindObject {
		o = emptyObject
	}
	if r.outputs.k == KindObject {
		for i := 0; i < int(r.outputs.u); i++ {
			o = objSet(o, r.outputs.h.keys[i], r.outputs.h.items[i])
		}
	}
	return o
}

// Input returns the run's input (RunOptions.Input).
func (r *Run) Input() Value { return r.input }

// Steps returns the number of steps executed so far.
func (r *Run) Steps() int { return r.steps }

// Usage returns the LLM usage so far.
func (r *Run) Usage() Usage { return r.usage }

// Elapsed returns the time since the run started, on the run's clock.
func (r *Run) Elapsed() time.Duration { return r.elapsed() }

func (r *Run) elapsed() time.Duration {
	if r.real {
		// NewRun allocates runExtra for real-time runs.
		return r.h.now().Sub(r.t0)
	}
	return r.vnow
}

// SetOutput sets the output key of the result's "outputs" (nano-vm's
// output_key).
func (r *Run) SetOutput(key string, v Value) {
	if r.track {
		if old, ok := r.outputs.Get(key); !ok || !ValueEq(old, v) {
			r.changed = true
		}
	}
	r.outputs = objSet(r.outputs, key, v)
	if r.branch {
		r.writes = append(r.writes, Field{key, v})
	}
}

// Output returns the output key (unit when not set).
func (r *Run) Output(key string) Value {
	v, _ := r.outputs.Get(key)
	return v
}

// Outputs returns every output, an object.
func (r *Run) Outputs() Value { return r.outputs }

// Export sets key in the result's "exports".
func (r *Run) Export(key string, v Value) {
	r.exports = objSet(r.exports, key, v)
	if r.branch {
		r.exportWrites = append(r.exportWrites, Field{key, v})
	}
}

// ExportAt is the effect export: it sets the result's export name (a
// string value) to v, as Export does, and traces an "exported" event at
// step st. It is no step (nothing counts it) and asks nothing of the
// world, so journals do not record it.
func (r *Run) ExportAt(st Step, name, v Value) {
	key := name.String()
	r.Export(key, v)
	if r.tracing {
		b := r.eventHead("exported")
		b = append(b, `,"step":`...)
		b = appendString(b, r.identity(st))
		b = append(b, `,"name":`...)
		b = appendString(b, key)
		b = append(b, `,"value":`...)
		b = r.appendOut(b, v)
		r.tbuf = append(b, "}\n"...)
		r.flushEvent()
	}
}

// Enter tells the run that the program calls a function at the call site
// st, so that the steps inside get identities of their own per call site
// (and per iteration of the loops around it); Leave ends the call.
func (r *Run) Enter(st Step) {
	r.ext()
	r.pathStack = append(r.pathStack, len(r.path))
	b := append(r.idbuf[:0], r.path...)
	b = st.appendID(b)
	b = append(b, " > "...)
	r.idbuf = b
	r.path = string(b)
}

// Leave ends the innermost Enter.
func (r *Run) Leave() {
	if r.runExtra == nil {
		return
	}
	n := len(r.pathStack)
	if n == 0 {
		return
	}
	r.path = r.path[:r.pathStack[n-1]]
	r.pathStack = r.pathStack[:n-1]
}

// identity returns the identity of a step about to run, counting it.
func (r *Run) identity(st Step) string {
	s := st.site()
	if len(st.Iters) == 0 && r.path == "" {
		n := r.countSite(s)
		if n == 0 {
			return s.ID()
		}
		return s.ID() + "~" + strconv.Itoa(n)
	}
	if k := len(st.Iters); k <= 2 && r.path == "" && r.runExtra == nil {
		// Most steps of a small run: count them in a short list, and
		// take the identity from the site's cache, allocating nothing.
		var key [2]int64
		copy(key[:], st.Iters)
		for i := range r.occIters {
			c := &r.occIters[i]
			if c.s == s && c.k == k && c.iters == key {
				n := c.n
				c.n++
				return s.idWith(st.Iters) + "~" + strconv.Itoa(n)
			}
		}
		if len(r.occIters) < maxIterCounts {
			if r.occIters == nil {
				r.occIters = r.iterBuf[:0]
			}
			r.occIters = append(r.occIters, iterCount{s: s, iters: key, k: k, n: 1})
			return s.idWith(st.Iters)
		}
	}
	x := r.ext()
	if len(r.occIters) > 0 {
		// Move the short list's counts to the map.
		if r.occStr == nil {
			r.occStr = make(map[string]int)
		}
		for _, c := range r.occIters {
			r.occStr[c.s.idWith(c.iters[:c.k])] = c.n
		}
		r.occIters = r.occIters[:0]
	}
	b := append(x.idbuf[:0], r.path...)
	b = st.appendID(b)
	x.idbuf = b
	if r.occStr == nil {
		r.occStr = make(map[string]int)
	}
	n := r.occStr[string(b)]
	id := string(b)
	r.occStr[id] = n + 1
	if n == 0 {
		return id
	}
	return id + "~" + strconv.Itoa(n)
}

// countSite counts an execution of a site without counters or path and
// returns the count before it.
func (r *Run) countSite(s *Site) int {
	if r.runExtra != nil && r.occPtr != nil {
		n := r.occPtr[s]
		r.occPtr[s] = n + 1
		return n
	}
	for i := range r.occSites {
		if r.occSites[i].s == s {
			n := r.occSites[i].n
			r.occSites[i].n++
			return n
		}
	}
	if len(r.occSites) < 16 {
		r.occSites = append(r.occSites, siteCount{s, 1})
		return 0
	}
	r.ext().occPtr = make(map[*Site]int, 32)
	for _, sc := range r.occSites {
		r.occPtr[sc.s] = sc.n
	}
	r.occSites = nil
	r.occPtr[s] = 1
	return 0
}

// lastID returns the identity of the latest execution of st (or of its
// next one, if it has not run), without counting.
func (r *Run) lastID(st Step) string {
	if st.Site == nil {
		return ""
	}
	s := st.site()
	n := 0
	var id string
	if len(st.Iters) == 0 && r.path == "" {
		id = s.ID()
		if r.runExtra != nil && r.occPtr != nil {
			n = r.occPtr[s]
		} else {
			for _, sc := range r.occSites {
				if sc.s == s {
					n = sc.n
				}
			}
		}
	} else {
		id = r.path + st.ID()
		if r.runExtra != nil {
			n = r.occStr[id]
		}
		if k := len(st.Iters); k <= 2 && r.path == "" {
			var key [2]int64
			copy(key[:], st.Iters)
			for _, c := range r.occIters {
				if c.s == s && c.k == k && c.iters == key {
					n = c.n
				}
			}
		}
	}
	if n <= 1 {
		return id
	}
	return id + "~" + strconv.Itoa(n-1)
}

// begin starts a step: checks the context and the budgets, and traces
// step_started. It returns the step's identity.
func (r *Run) begin(st Step, kind string) string {
	if r.ctx.Err() != nil {
		r.cancelled(r.lastID(st))
	}
	if r.tracing && r.traceErr != nil {
		r.stop(StatusFailed, "trace", "writing the trace: "+r.traceErr.Error(), "")
	}
	id := r.identity(st)
	r.lastSite, r.lastStep = st.Site, id
	if r.limited {
		r.checkBudget(id)
	}
	if r.tracing {
		b := r.eventStep("step_started", id, st, kind)
		r.tbuf = append(b, "}\n"...)
		r.flushEvent()
	}
	return id
}

func (r *Run) checkBudget(id string) {
	b := &r.budget
	switch {
	case b.Steps > 0 && r.steps >= b.Steps:
		r.stop(StatusBudgetExceeded, "budget.steps", "the budget of "+strconv.Itoa(b.Steps)+" steps is spent", id)
	case b.Tokens > 0 && r.usage.Tokens() >= b.Tokens:
		r.stop(StatusBudgetExceeded, "budget.tokens", strconv.Itoa(r.usage.Tokens())+" tokens used, the budget is "+strconv.Itoa(b.Tokens), id)
	case b.Cost > 0 && r.usage.Cost >= b.Cost:
		r.stop(StatusBudgetExceeded, "budget.cost", "cost "+strconv.FormatFloat(r.usage.Cost, 'g', -1, 64)+" USD, the budget is "+strconv.FormatFloat(b.Cost, 'g', -1, 64), id)
	case b.Wall > 0 && r.elapsed() >= b.Wall:
		r.stop(StatusBudgetExceeded, "budget.wall_time", "the run has taken "+r.elapsed().String()+", the budget is "+b.Wall.String(), id)
	}
	if r.hasLimits {
		r.checkLimits(id)
	}
}

// complete ends a step that ran (its output may be an error value).
func (r *Run) complete(id string, st Step, kind string, start time.Duration, out Value, u *Usage, attempts int) {
	r.pend = pendingTool{}
	if kind == "tool" && out.k == KindString && out.s == "PENDING" {
		r.pend = pendingTool{name: st.site().Name, set: true, lastOut: r.lastOut, doneOuts: r.doneOuts}
	}
	r.steps++
	r.names = append(r.names, st.site().Name)
	if u != nil {
		r.usage.add(*u)
	}
	failed := out.k == KindError
	if !failed {
		r.lastOut = out
	}
	hash := ""
	if !failed {
		r.noteDone(st.site().Name, out)
	}
	if r.track {
		hash = r.afterStep(st.site().Name, out, failed)
	}
	if r.tracing {
		ev := "step_completed"
		status := "success"
		if failed {
			ev, status = "step_failed", "failed"
		}
		b := r.stepEnd(ev, status, id, st, kind, start, u, attempts)
		if failed {
			b = append(b, `,"error":{"kind":`...)
			b = appendString(b, out.s)
			b = append(b, `,"message":`...)
			b = appendString(b, out.h.msg)
			b = append(b, '}')
		} else {
			b = append(b, `,"output":`...)
			b = r.appendOut(b, out)
		}
		if hash != "" {
			b = append(b, `,"state":"`...)
			b = append(b, hash...)
			b = append(b, '"')
		}
		r.tbuf = append(b, "}\n"...)
		r.flushEvent()
	}
	if r.track && r.budget.Stalled > 0 && r.stalled >= r.budget.Stalled {
		r.stop(StatusStalled, "stalled", strconv.Itoa(r.stalled)+" steps in a row left the state unchanged", id)
	}
}

// afterStep updates the state tracking after a step of the root run and
// returns the state hash (when the trace or the result wants it).
func (r *Run) afterStep(name string, out Value, failed bool) string {
	changed := r.changed
	r.changed = false
	if !failed {
		if old, ok := r.stepOuts.Get(name); !ok || !ValueEq(old, out) {
			r.stepOuts = objSet(r.stepOuts, name, out)
			changed = true
		}
	}
	if changed {
		r.stalled = 0
	} else {
		r.stalled++
	}
	if !r.tracing && !r.wantSnaps {
		return ""
	}
	h := r.StateHash()
	if r.wantSnaps {
		r.snapshots = append(r.snapshots, h)
	}
	return h
}

// State returns the run's state, the value whose hash is a snapshot:
//
//	{"outputs": {key: value}, "state": {key: value the run wrote},
//	 "steps": {step name: its latest successful output}}
//
// It is tracked only when the run traces, keeps snapshots or has a
// Stalled budget (otherwise "state" and "steps" are empty).
func (r *Run) State() Value {
	x := r.ext()
	return Object(Field{"outputs", r.outputs}, Field{"state", orEmptyObject(x.stateW)}, Field{"steps", orEmptyObject(x.stepOuts)})
}

// StateHash returns the hex sha256 of the canonical encoding of State().
func (r *Run) StateHash() string {
	x := r.ext()
	// Under the value limit, so that state holding a value whose
	// encoding is huge stops the run instead of hashing for ever.
	e := jsonEncoder{canon: true, max: -1}
	if lim := valueLimit.Load(); lim > 0 {
		e.max = int(lim)
	}
	b := append(x.idbuf[:0], `{"outputs":`...)
	b = e.value(b, r.outputs)
	b = append(b, `,"state":`...)
	b = e.value(b, orEmptyObject(x.stateW))
	b = append(b, `,"steps":`...)
	b = e.value(b, orEmptyObject(x.stepOuts))
	b = append(b, '}')
	x.idbuf = b
	if e.full(b) {
		x.idbuf = b[:0]
		valueTooLarge("the state hash: a canonical encoding of more than " + strconv.Itoa(e.max) + " bytes")
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// Mark records a step that is not an effect (a condition, an assignment)
// with its output: it counts against the budgets, appears in the result's
// steps and in the trace.
func (r *Run) Mark(st Step, kind string, output Value) {
	id := r.begin(st, kind)
	r.complete(id, st, kind, r.elapsed(), output, nil, 0)
}

// Skip records in the trace that a step did not run (a guard, on_error
// skip), with the reason. It is not counted as a step.
func (r *Run) Skip(st Step, kind, reason string) {
	if !r.tracing {
		return
	}
	b := r.eventStep("step_skipped", r.lastID(st), st, kind)
	b = append(b, `,"status":"skipped","reason":`...)
	b = appendString(b, reason)
	r.tbuf = append(b, "}\n"...)
	r.flushEvent()
}

// Advisory records an advisory event "advisory_KIND" (a timeout fallback,
// a schema coercion, …) about step st in the trace.
func (r *Run) Advisory(st Step, kind string, data Value) {
	if !r.tracing {
		return
	}
	b := r.eventHead("advisory_" + kind)
	b = append(b, `,"step":`...)
	b = appendString(b, r.lastID(st))
	b = append(b, `,"name":`...)
	b = appendString(b, st.site().Name)
	b = append(b, `,"data":`...)
	b = r.appendOut(b, data)
	r.tbuf = append(b, "}\n"...)
	r.flushEvent()
}

// Fail stops the run with status failed. err is the error value (its kind
// and message become the result's error) or any value (kind "error", its
// rendering the message). st names the failing step (its latest
// execution); Step{} names none.
func (r *Run) Fail(st Step, err Value) {
	kind, msg := "error", err.String()
	if err.k == KindError {
		kind, msg = err.s, err.h.msg
	}
	r.stop(StatusFailed, kind, msg, r.stopID(st))
}

// Suspend stops the run with status suspended at step st (its latest
// execution). Running it again with its journal (JournalResume) serves
// what it did; it gets no payload: a suspension that waits for an event
// is a Wait.
func (r *Run) Suspend(st Step, reason string) {
	r.stop(StatusSuspended, "suspended", reason, r.stopID(st))
}

// Bounds of numbers read from options.
const (
	maxRetries = 1000
	maxSeconds = 1e8 // about three years
)

// policy returns the retry policy of a call with these options.
func (r *Run) policy(options Value) RetryPolicy {
	p := r.h.retry
	if options.k != KindObject || options.u == 0 {
		return p
	}
	if n, ok := ObjGet(options, String("retries")).AsNumber(); ok && n >= 0 {
		p.Retries = int(min(n, maxRetries))
	}
	if t, ok := ObjGet(options, String("timeout")).AsNumber(); ok && t > 0 {
		p.Timeout = time.Duration(min(t, maxSeconds) * float64(time.Second))
	} else if d, err := time.ParseDuration(ObjGet(options, String("timeout")).Str()); err == nil && d > 0 {
		p.Timeout = min(d, time.Duration(maxSeconds)*time.Second)
	}
	if on := ObjGet(options, String("retry_on")); on.k == KindList {
		p.On = nil
		for _, k := range on.Elems() {
			p.On = append(p.On, k.Str())
		}
	}
	if ObjGet(options, String("backoff")).Str() == "fixed" {
		p.MaxBackoff = p.Backoff // every wait the first one's length
	}
	return p
}

// backoff waits d before a retry, on the run's clock: the virtual clock
// just advances. (Transient failures of a service, such as HTTP 429, are
// retried inside its provider, in real time.)
func (r *Run) backoff(d time.Duration) {
	if !r.real {
		r.vnow += d
		return
	}
	r.sleepReal("", d)
}

// LLM is the effect llm: a completion of prompt with options (model,
// system, schema, output_schema (coerce.go), temperature, max_tokens, usage, retries, timeout,
// retry_on). It returns the completion (a string; with a schema, the
// parsed and validated JSON value), or an error value. With "usage": true
// the reply is {"text": completion, "usage": {"prompt_tokens",
// "completion_tokens", "total_tokens"}}.
func (r *Run) LLM(st Step, prompt, options Value) Value {
	return r.llm(st, "llm", prompt, options, false)
}

// Judge is the effect judge: a boolean judgement of question by a model;
// a bool, or an error value (kind "judge" when the reply is neither true
// nor false).
func (r *Run) Judge(st Step, question, options Value) Value {
	return r.llm(st, "judge", question, options, true)
}

func (r *Run) llm(st Step, kind string, prompt, options Value, judge bool) Value {
	id := r.begin(st, kind)
	start := r.elapsed()
	req := &r.llmReq
	*req = LLMRequest{Prompt: prompt.String(), Judge: judge, Options: options}
	var outSchema Value
	if options.k == KindObject && options.u > 0 {
		req.System = ObjGet(options, String("system")).Str()
		req.Model = ObjGet(options, String("model")).Str()
		req.Schema = ObjGet(options, String("schema"))
		if o := ObjGet(options, String("output_schema")); o.k == KindObject && !judge {
			outSchema = o
			if so, ok := r.h.cfg.LLM.(StructuredOutput); !ok || !so.StructuredOutput() {
				req.Prompt += schemaInstruction(o)
			}
		}
	}
	var request Value
	if r.j != nil {
		request = Object(Field{"prompt", prompt}, Field{"options", options})
		if rec := r.fromJournal(id, st, kind, request, start); rec != nil {
			if o, ok := r.h.cfg.LLM.(replayObserver); ok {
				r.call = Call{Step: id, Attempt: 1, run: r}
				o.observeLLM(&r.call, req)
			}
			u := rec.usage
			r.complete(id, st, kind, start, rec.reply, &u, rec.attempts)
			return rec.reply
		}
	}
	pol := r.policy(options)
	if !judge {
		r.offerTools(st, id, req, options, pol)
	}
	reply, usage, attempts := r.callLLM(id, req, pol)
	var coercedFrom Value
	if outSchema.k == KindObject && reply.k != KindError {
		raw := reply
		c, msg := coerceOutput(reply, outSchema)
		if msg != "" {
			reply = Error("schema", "the reply cannot be coerced to the output schema: "+msg)
		} else {
			if !ValueEq(c, raw) && !(raw.k == KindString && ValueEq(c, String(strings.TrimSpace(raw.s)))) {
				coercedFrom = raw
			}
			reply = c
		}
	}
	if reply.k != KindError && options.k == KindObject && ObjGet(options, String("usage")).Truthy() {
		reply = Object(Field{"text", reply}, Field{"usage", Object(
			Field{"prompt_tokens", Int(int64(usage.PromptTokens))},
			Field{"completion_tokens", Int(int64(usage.CompletionTokens))},
			Field{"total_tokens", Int(int64(usage.Tokens()))},
		)})
	}
	if r.j != nil && r.mode != JournalReplay {
		r.journal(r.j.appendEffect(id, kind, request, reply, &usage, attempts, r.elapsed()-start), id)
	}
	r.complete(id, st, kind, start, reply, &usage, attempts)
	if coercedFrom.k != KindUnit {
		r.Advisory(st, "coerced", Object(Field{"from", coercedFrom}, Field{"to", reply}))
	}
	return reply
}

func (r *Run) callLLM(id string, req *LLMRequest, pol RetryPolicy) (Value, Usage, int) {
	var total Usage
	p := r.h.cfg.LLM
	if p == nil {
		return Error("config", noLLMMessage), total, 0
	}
	for attempt := r.firstAttempt(id); ; attempt++ {
		r.noteAttempt(id, attempt)
		r.call = Call{Step: id, Attempt: attempt, Timeout: pol.Timeout, run: r}
		resp, err := p.Complete(r.ctx, &r.call, req)
		if r.ctx.Err() != nil {
			r.cancelled(id)
		}
		total.add(resp.Usage)
		var ce *CallError
		if err != nil {
			ce = asCallError(err, "unavailable")
		} else {
			v := finishLLM(resp.Value, req)
			if v.k != KindError {
				return v, total, attempt
			}
			ce = &CallError{Kind: v.s, Message: v.h.msg}
		}
		if attempt > pol.Retries || !pol.retryable(ce.Kind) || r.ctx.Err() != nil {
			return Error(ce.Kind, ce.Message), total, attempt
		}
		r.backoff(pol.delay(attempt, ce.RetryAfter))
	}
}

// finishLLM reads a judgement, or parses and validates a schema reply.
func finishLLM(v Value, req *LLMRequest) Value {
	if req.Judge {
		return readJudgement(v)
	}
	if req.Schema.k != KindObject && req.Schema.k != KindBool {
		return v
	}
	if v.k == KindString {
		text := strings.TrimSpace(v.s)
		// Models often wrap JSON in a Markdown fence.
		if strings.HasPrefix(text, "```") {
			text = strings.TrimPrefix(text, "```json")
			text = strings.TrimPrefix(text, "```")
			text = strings.TrimSuffix(strings.TrimSpace(text), "```")
		}
		parsed, err := ParseJSON([]byte(text))
		if err != nil {
			return Error("schema", "the reply is not JSON: "+err.Error())
		}
		v = parsed
	}
	if msg := validateSchema(v, req.Schema, ""); msg != "" {
		return Error("schema", "the reply does not match the schema: "+msg)
	}
	return v
}

// Tool is the effect tool: calls the tool name with args (an object); its
// reply, or an error value (kind "unknown_tool" when no provider has the
// tool). A tool that answers "PENDING" has accepted the request and will
// finish later: the call completes with that reply, and the program
// suspends by waiting for its resumption (Wait with a "resume" request),
// as docs/ir.md has it.
func (r *Run) Tool(st Step, name, args Value) Value { return r.ToolWith(st, name, args, Value{}) }

// ToolWith is Tool with call options (retries, timeout, retry_on).
func (r *Run) ToolWith(st Step, name, args, options Value) Value {
	id := r.begin(st, "tool")
	start := r.elapsed()
	var request Value
	if r.j != nil {
		request = Object(Field{"name", name}, Field{"args", args})
		if rec := r.fromJournal(id, st, "tool", request, start); rec != nil {
			r.observeTool(id, name.String())
			r.complete(id, st, "tool", start, rec.reply, nil, rec.attempts)
			return rec.reply
		}
	}
	reply, attempts := r.callTool(id, name.String(), args, r.policy(options))
	if r.j != nil && r.mode != JournalReplay {
		r.journal(r.j.appendEffect(id, "tool", request, reply, nil, attempts, r.elapsed()-start), id)
	}
	r.complete(id, st, "tool", start, reply, nil, attempts)
	return reply
}

func (r *Run) observeTool(id, name string) {
	r.call = Call{Step: id, Attempt: 1, run: r}
	for _, p := range r.h.cfg.Tools {
		if o, ok := p.(replayObserver); ok {
			o.observeTool(&r.call, name)
		}
	}
}

func (r *Run) callTool(id, name string, args Value, pol RetryPolicy) (Value, int) {
	fn := (*r.h.tools.Load())[name]
	for attempt := r.firstAttempt(id); ; attempt++ {
		r.noteAttempt(id, attempt)
		r.call = Call{Step: id, Attempt: attempt, Timeout: pol.Timeout, run: r}
		v, err := r.toolAttempt(fn, name, args, pol)
		if r.ctx.Err() != nil {
			r.cancelled(id) // whatever the call answered, it was cut short
		}
		if err == nil {
			return v, attempt
		}
		ce := asCallError(err, "tool")
		if attempt > pol.Retries || !pol.retryable(ce.Kind) || r.ctx.Err() != nil {
			return Error(ce.Kind, ce.Message), attempt
		}
		r.backoff(pol.delay(attempt, ce.RetryAfter))
	}
}

// toolAttempt makes one attempt: the registered Go function, or the first
// provider that knows the tool.
func (r *Run) toolAttempt(fn ToolFunc, name string, args Value, pol RetryPolicy) (v Value, err error) {
	if fn != nil {
		ctx := r.ctx
		if pol.Timeout > 0 {
			var cancel context.CancelFunc
			ctx, cancel = context.WithTimeout(ctx, pol.Timeout)
			defer cancel()
		}
		return fn(withCall(ctx, &r.call), args)
	}
	for _, p := range r.h.cfg.Tools {
		v, err = p.CallTool(r.ctx, &r.call, name, args)
		if err == ErrUnknownTool {
			continue
		}
		return v, err
	}
	return Value{}, &CallError{Kind: "unknown_tool", Message: "no tool " + strconv.Quote(name) + " is registered or provided"}
}

// suspendStep records a step that suspends the run (a pending tool, a
// wait for a resume) and stops the run. request is the journal's request
// ({"request": …} for a wait). A resume wait is not a step of its own.
func (r *Run) suspendStep(id string, st Step, kind string, request Value, start time.Duration, msg string) {
	if r.j != nil && r.mode != JournalReplay {
		r.journal(r.j.appendPending(id, kind, request), id)
	}
	if kind == "wait" && isResume(ObjGet(request, String("request"))) {
		// The wait continues the step whose tool answered "PENDING":
		// that step is already counted and listed.
		r.retractPending(st)
	} else {
		r.steps++
		r.names = append(r.names, st.site().Name)
	}
	if r.tracing {
		b := r.stepEnd("step_completed", "pending", id, st, kind, start, nil, 0)
		r.tbuf = append(b, "}\n"...)
		r.flushEvent()
	}
	r.stop(StatusSuspended, "suspended", msg, id)
}

// fromJournal returns the journal's record of step id when it serves the
// reply (nil when the effect must run). It fails the run on divergence,
// serves the resume payload of the suspended step, and suspends again in
// a replay of a step that was pending.
func (r *Run) fromJournal(id string, st Step, effect string, request Value, start time.Duration) *jrec {
	if r.mode == JournalRecord {
		return nil
	}
	rec := r.j.lookup(id)
	if rec == nil {
		if r.mode == JournalReplay {
			r.stop(StatusFailed, "divergence", "replay: step "+id+" asks for "+effect+" "+string(AppendJSON(nil, request))+", which the journal does not have", id)
		}
		return nil
	}
	if rec.effect != effect || string(Canonical(rec.request)) != string(Canonical(request)) {
		r.stop(StatusFailed, "divergence", r.mode.String()+" diverged at step "+id+": the journal has "+rec.effect+" "+
			string(AppendJSON(nil, rec.request))+", the program asks for "+effect+" "+string(AppendJSON(nil, request)), id)
	}
	if rec.pending {
		if rec.resumed {
			return &jrec{effect: effect, request: request, reply: rec.resume}
		}
		sh := r.shared
		if sh.resume != nil && id == sh.resumeStep && sh.resumed.CompareAndSwap(false, true) {
			if r.mode != JournalReplay {
				r.journal(r.j.appendResume(id, *sh.resume), id)
			}
			return &jrec{effect: effect, request: request, reply: *sh.resume}
		}
		if r.mode == JournalReplay {
			r.suspendStep(id, st, effect, request, start, "step "+id+" is pending")
		}
		return nil // ask again
	}
	if !r.real {
		r.vnow += rec.duration // the served effect takes the virtual time it took
	}
	return rec
}

// cancelled stops the run whose context is done: status cancelled. The
// step in flight, if any, is not journaled: a resumed run makes it again
// (with the same idempotency key).
func (r *Run) cancelled(step string) {
	why := "cancelled"
	if err := r.ctx.Err(); err != nil {
		why = err.Error()
	}
	if c := context.Cause(r.ctx); c != nil && c != r.ctx.Err() {
		why = c.Error()
	}
	r.stop(StatusCancelled, "cancelled", "the run was cancelled: "+why, step)
}

// firstAttempt returns the attempt a call of step id starts with: 1, or
// in a resumed run the attempt ≥ 2 that a previous execution started and
// did not finish (so that it gets the key it had).
func (r *Run) firstAttempt(id string) int {
	if r.j != nil && r.mode == JournalResume {
		return r.j.inflightAttempt(id)
	}
	return 1
}

// noteAttempt journals that attempt n ≥ 2 of step id's call starts.
func (r *Run) noteAttempt(id string, n int) {
	if n > 1 && r.j != nil && r.mode != JournalReplay {
		r.journal(r.j.appendAttempt(id, n), id)
	}
}

// journal stops the run when a journal write failed.
func (r *Run) journal(err error, id string) {
	if err != nil {
		r.stop(StatusFailed, "journal", "writing the journal: "+err.Error(), id)
	}
}

// Emit is the effect emit: the event name with payload. It goes to the
// result's events, the trace and Config.OnEvent.
func (r *Run) Emit(st Step, name, payload Value) {
	id := r.begin(st, "emit")
	start := r.elapsed()
	served := false
	var request Value
	if r.j != nil {
		request = Object(Field{"name", name}, Field{"payload", payload})
		served = r.fromJournal(id, st, "emit", request, start) != nil
	}
	ename := name.String()
	if !served {
		if r.h.cfg.OnEvent != nil {
			r.h.cfg.OnEvent(ename, payload)
		}
		if r.j != nil && r.mode != JournalReplay {
			r.journal(r.j.appendEffect(id, "emit", request, Value{}, nil, 0, r.elapsed()-start), id)
		}
	}
	r.events = append(r.events, Event{Name: ename, Payload: payload})
	if r.tracing {
		b := r.eventHead("event_emitted")
		b = append(b, `,"step":`...)
		b = appendString(b, id)
		b = append(b, `,"name":`...)
		b = appendString(b, st.site().Name)
		b = append(b, `,"event_name":`...)
		b = appendString(b, ename)
		b = append(b, `,"payload":`...)
		b = r.appendOut(b, payload)
		r.tbuf = append(b, "}\n"...)
		r.flushEvent()
	}
	r.complete(id, st, "emit", start, Value{}, nil, 0)
}

// StateGet is the effect state.get: the persistent state's value at key,
// unit when absent (an error value of kind "state" when the store fails).
func (r *Run) StateGet(st Step, key Value) Value {
	id := r.begin(st, "state.get")
	start := r.elapsed()
	var request Value
	if r.j != nil {
		request = Object(Field{"key", key})
		if rec := r.fromJournal(id, st, "state.get", request, start); rec != nil {
			r.complete(id, st, "state.get", start, rec.reply, nil, 0)
			return rec.reply
		}
	}
	v, _, err := r.h.store.Get(keyString(key))
	if err != nil {
		v = Error("state", err.Error())
	}
	if r.j != nil && r.mode != JournalReplay {
		r.journal(r.j.appendEffect(id, "state.get", request, v, nil, 0, r.elapsed()-start), id)
	}
	r.complete(id, st, "state.get", start, v, nil, 0)
	return v
}

// StatePut is the effect state.put: sets the persistent state at key to
// v. A store that fails stops the run (status failed, kind "state").
func (r *Run) StatePut(st Step, key, v Value) {
	id := r.begin(st, "state.put")
	start := r.elapsed()
	k := keyString(key)
	served := false
	var request Value
	if r.j != nil {
		request = Object(Field{"key", key}, Field{"value", v})
		served = r.fromJournal(id, st, "state.put", request, start) != nil
	}
	if !served {
		if err := r.h.store.Put(k, v); err != nil {
			r.stop(StatusFailed, "state", "state.put "+strconv.Quote(k)+": "+err.Error(), id)
		}
		if r.j != nil && r.mode != JournalReplay {
			r.journal(r.j.appendEffect(id, "state.put", request, Value{}, nil, 0, r.elapsed()-start), id)
		}
	}
	r.noteStateWrite(k, v)
	r.complete(id, st, "state.put", start, Value{}, nil, 0)
}

func (r *Run) noteStateWrite(k string, v Value) {
	if r.track {
		if old, ok := r.stateW.Get(k); !ok || !ValueEq(old, v) {
			r.changed = true
			r.stateW = objSet(r.stateW, k, v)
		}
	}
	if r.branch {
		r.stateWrites = append(r.stateWrites, Field{k, v})
	}
}

// Wait is the effect wait. A request that is a duration — a number of
// seconds, a Go duration string ("1.5s"), or {"kind": "sleep", "seconds":
// n} — waits that long on the run's clock and returns unit: in real time
// (Config.RealTime, --real-clock) no longer than the real-time limit
// allows, else it advances the virtual clock and, when the request is an
// object with "trace_virtual": true (Grimoire's wait and retry backoff),
// notes in the trace (kind "virtual_clock") that it did not wait.
// {"kind": "backoff", "seconds": n} waits too, but as the pause between
// two attempts of a step it is not a step itself: it is traced and
// journaled, and not counted (budgets, stall count, the result's steps,
// outputs). Any other
// request (nano-vm's {"kind": "resume", "step": id}) suspends the run
// (status suspended, the step in the journal's end line); the run resumed
// with RunOptions.Resume gets the resumption event {"payload": …,
// "source": …} as the reply.
func (r *Run) Wait(st Step, request Value) Value {
	id := r.begin(st, "wait")
	start := r.elapsed()
	var jreq Value
	if r.j != nil {
		jreq = Object(Field{"request", request})
		if rec := r.fromJournal(id, st, "wait", jreq, start); rec != nil {
			r.endWait(id, st, request, start, rec.reply)
			return rec.reply
		}
	}
	d, isDuration := waitDuration(request)
	if !isDuration {
		if r.j == nil {
			jreq = Object(Field{"request", request}) // what suspendStep reads
		}
		r.suspendStep(id, st, "wait", jreq, start, "waiting for "+request.String())
	}
	if r.real {
		r.sleepReal(id, d)
	} else {
		r.vnow += d
		if request.k == KindObject && ObjGet(request, String("trace_virtual")).Truthy() {
			r.noteAt(id, st, Object(Field{"kind", String("virtual_clock")}, Field{"text", String("did not wait " + d.String() +
				": the clock is virtual (--real-clock waits for real)")}))
		}
	}
	if r.j != nil && r.mode != JournalReplay {
		r.journal(r.j.appendEffect(id, "wait", jreq, Value{}, nil, 0, r.elapsed()-start), id)
	}
	r.endWait(id, st, request, start, Value{})
	return Value{}
}

// sleepReal waits d in real time for the step id, no longer than the
// run's real-time limit (Limits.Wall, --max-wall) allows: a wait that
// would outlast it sleeps until the limit and stops the run there
// (limit.wall), and a cancelled context cancels it.
func (r *Run) sleepReal(id string, d time.Duration) {
	cut := false
	if r.runExtra != nil && r.limits.Wall > 0 {
		left := r.limits.Wall - r.h.now().Sub(r.realStart)
		if d >= left {
			d, cut = max(left, 0), true
		}
	}
	if err := r.h.sleep(r.ctx, d); err != nil {
		r.cancelled(id)
	}
	if cut {
		r.checkRealLimits(id, false)
	}
}

// endWait ends a wait step with its reply: a step like any other, but a
// backoff is only traced.
func (r *Run) endWait(id string, st Step, request Value, start time.Duration, reply Value) {
	resume := isResume(request)
	if resume {
		r.retractPending(st)
	}
	if !isBackoff(request) && !resume {
		r.complete(id, st, "wait", start, reply, nil, 0)
		return
	}
	if r.tracing {
		b := r.stepEnd("step_completed", "success", id, st, "wait", start, nil, 0)
		r.tbuf = append(b, `,"output":null}`+"\n"...)
		r.flushEvent()
	}
}

// pendingTool remembers, for the tool step that answered "PENDING", the
// run's output and the result's outputs of before that reply.
type pendingTool struct {
	name              string
	set               bool
	lastOut, doneOuts Value
}

// retractPending takes back the reply "PENDING" of the tool step that a
// resume wait at st continues (the same step name, just completed): the
// pending step has no output (nano-vm records none), so neither the
// run's output nor the result's outputs keep it.
func (r *Run) retractPending(st Step) {
	if r.pend.set && r.pend.name == st.site().Name {
		r.lastOut, r.doneOuts = r.pend.lastOut, r.pend.doneOuts
	}
	r.pend = pendingTool{}
}

// isResume reports whether a wait request asks for a resumption
// (nano-vm's {"kind": "resume", "step": id}): the second half of the step
// whose tool answered "PENDING", not a step of its own.
func isResume(v Value) bool {
	kind, ok := v.Get("kind")
	return ok && v.k == KindObject && kind.Str() == "resume"
}

// isBackoff reports whether a wait request is a retry's backoff.
func isBackoff(v Value) bool {
	kind, ok := v.Get("kind")
	return ok && v.k == KindObject && kind.Str() == "backoff"
}

func waitDuration(v Value) (time.Duration, bool) {
	secs := -1.0
	switch v.k {
	case KindNumber:
		secs = v.Num()
	case KindString:
		if d, err := time.ParseDuration(v.s); err == nil && d >= 0 {
			return d, true
		}
	case KindObject:
		kind, hasKind := v.Get("kind")
		n, ok := ObjGet(v, String("seconds")).AsNumber()
		if ok && (!hasKind || kind.Str() == "sleep" || kind.Str() == "backoff") {
			secs = n
		}
	}
	if secs < 0 || secs != secs {
		return 0, false
	}
	return time.Duration(min(secs, maxSeconds) * float64(time.Second)), true
}

// Stop is the effect stop: it ends the run with status ("failed",
// "budget_exceeded", "stalled" or "suspended"; anything else counts as
// failed) and err (an error value, whose kind and message the result's
// error carries, or unit) at step st. It does not return. A run stopped
// "suspended" this way cannot be resumed with a payload: a resumable
// suspension is a Wait.
func (r *Run) Stop(st Step, status, err Value) {
	s := Status(status.Str())
	switch s {
	case StatusFailed, StatusBudgetExceeded, StatusStalled, StatusSuspended:
	default:
		s = StatusFailed
	}
	kind, msg := string(s), ""
	switch err.k {
	case KindError:
		kind, msg = err.s, err.h.msg
	case KindUnit:
	default:
		msg = err.String()
	}
	id := r.stopID(st)
	if err.k == KindError && err.h.at != nil && st.Site != nil && !r.endsStep(st) {
		// The error knows where the program made it (ErrorAt): the run
		// stopped there.
		at := err.h.at
		id = NewSite(st.Site.Name, at.file, at.line, at.col).ID()
	}
	r.stop(s, kind, msg, id)
}

// endsStep is whether a stop at st ends the latest step begun (stopID).
func (r *Run) endsStep(st Step) bool {
	return st.Site != nil && r.lastSite != nil && (r.lastSite == st.Site || r.lastSite.Name == st.Site.Name)
}

// stopID returns the identity a stop at st names: that of the step it
// ends. A stop is no step of its own — it is neither traced nor
// journaled — and a frontend gives it a position of its own (the IR wants
// (name, position) unique), so when the latest step begun has the stop's
// name, the stop ends that step and names it as the trace and the
// journal do. Otherwise, in a program that notes its statements (VVM), a
// stop is where an error nobody caught ends the run, at a position of
// the program's entry: it names the statement that was running, the
// latest one noted ("raise @ prog.vvm:4:1"), or the latest raise noted
// (note kind "raised": Grimoire's guards, halts and loop maxima). Else
// it names st's latest execution. (Stop names, before these, where an
// error it stops on was made, when the error knows: ErrorAt.)
func (r *Run) stopID(st Step) string {
	if r.endsStep(st) {
		return r.lastStep
	}
	if st.Site != nil && r.lastStmt != nil {
		return NewSite(st.Site.Name, r.lastStmt.File, r.lastStmt.Line, r.lastStmt.Col).ID()
	}
	return r.lastID(st)
}

// Trace is the effect trace: it records a step that performs no other
// effect (a condition, a skip). event "completed" counts the step (budgets,
// the result's steps, the stall count) with payload as its output;
// "failed" counts it too, failed with payload as its error; "skipped"
// records step_skipped with payload as the reason and counts nothing;
// "advisory_KIND" (Grimoire's advisory_started) records an advisory event
// (Advisory) with payload as its data.
// "note" writes a note event with payload as its data ({"kind", "text"}:
// what the program does, for narration) and counts nothing; "output"
// sets each field of payload (an object) in the result's outputs, as
// SetOutput does (nano-vm's output_key), and counts nothing. Journals do
// not record it: it asks nothing of the world.
func (r *Run) Trace(st Step, event, payload Value) {
	switch event.Str() {
	case "skipped":
		reason := payload.String()
		r.Skip(st, "step", reason)
	case "failed":
		if payload.k != KindError {
			payload = Error("error", payload.String())
		}
		r.Mark(st, "step", payload)
	case "note":
		r.note(st, payload)
	case "output":
		// A step's output under a key of the result's outputs (nano-vm's
		// output_key): no step, and no event (the step's has the value).
		if payload.k == KindObject {
			for i := 0; i < int(payload.u); i++ {
				r.SetOutput(payload.h.keys[i], payload.h.items[i])
			}
		}
	default:
		if k, ok := strings.CutPrefix(event.Str(), "advisory_"); ok && k != "" {
			r.Advisory(st, k, payload)
			return
		}
		r.Mark(st, "step", payload)
	}
}

// note writes a "note" event — what the program is doing, for a reader
// of the trace (VVM's narration: a statement starts, a loop iterates, a
// match decides) — when the run is traced. It is no step.
func (r *Run) note(st Step, data Value) {
	if st.Site != nil && data.k == KindObject {
		if k := ObjGet(data, String("kind")).Str(); k == "statement" || k == "raised" {
			r.lastStmt = st.Site
		}
	}
	if !r.tracing {
		return
	}
	r.noteAt(r.identity(st), st, data)
}

// noteAt writes a note event for the step whose identity is id.
func (r *Run) noteAt(id string, st Step, data Value) {
	if !r.tracing {
		return
	}
	b := r.eventHead("note")
	b = append(b, `,"step":`...)
	b = appendString(b, id)
	b = append(b, `,"name":`...)
	b = appendString(b, st.site().Name)
	b = append(b, `,"data":`...)
	b = r.appendOut(b, data)
	r.tbuf = append(b, "}\n"...)
	r.flushEvent()
}

// Trace events.

func (r *Run) flushEvent() {
	if r.limits.Trace > 0 && !r.traceFits() {
		r.traceFull()
	}
	r.writeEvent()
}

// writeEvent writes the event in tbuf, whatever the trace limit.
func (r *Run) writeEvent() {
	if r.branch {
		return // a branch keeps its events for the block
	}
	if r.traceErr == nil {
		if _, err := r.tw.Write(r.tbuf); err != nil {
			r.traceErr = err
		}
		r.traceBytes += int64(len(r.tbuf))
	}
	r.tbuf = r.tbuf[:0]
}

// eventHead starts an event: {"event":NAME,"t":MS
func (r *Run) eventHead(name string) []byte {
	b := r.tbuf
	if !r.branch {
		b = b[:0]
	}
	r.evStart = len(b)
	b = append(b, `{"event":`...)
	b = appendString(b, name)
	b = append(b, `,"t":`...)
	return appendNumber(b, msOf(r.elapsed()))
}

func (r *Run) eventStep(name, id string, st Step, kind string) []byte {
	b := r.eventHead(name)
	b = append(b, `,"step":`...)
	b = appendString(b, id)
	b = append(b, `,"name":`...)
	b = appendString(b, st.site().Name)
	b = append(b, `,"kind":`...)
	return appendString(b, kind)
}

func (r *Run) stepEnd(ev, status, id string, st Step, kind string, start time.Duration, u *Usage, attempts int) []byte {
	b := r.eventStep(ev, id, st, kind)
	b = append(b, `,"status":`...)
	b = appendString(b, status)
	b = append(b, `,"duration_ms":`...)
	b = appendNumber(b, msOf(r.elapsed()-start))
	if attempts > 0 {
		b = append(b, `,"attempts":`...)
		b = strconv.AppendInt(b, int64(attempts), 10)
	}
	if u != nil {
		b = append(b, `,"tokens":`...)
		b = appendTokens(b, *u)
		b = append(b, `,"cost":`...)
		b = appendNumber(b, u.Cost)
	}
	return b
}

func appendTokens(b []byte, u Usage) []byte {
	b = append(b, `{"prompt":`...)
	b = strconv.AppendInt(b, int64(u.PromptTokens), 10)
	b = append(b, `,"completion":`...)
	b = strconv.AppendInt(b, int64(u.CompletionTokens), 10)
	return append(b, '}')
}
