package runtime

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"strconv"
	"sync/atomic"
	"time"
)

// The runtime's parts (docs/runtime.md "The runtime's parts"):
//
//	run.go       a run's state, its start and end, the step lifecycle
//	             (begin, complete), the result, state tracking
//	stepid.go    step identity: Site, Step, and the counting that makes
//	             an identity unique in a run
//	effect.go    the effect machinery: begin, journal lookup and replay,
//	             retries, journal record, complete
//	effects.go   the effects tool, emit, state.get, state.put, export
//	llm.go       the effects llm and judge
//	wait.go      the effect wait, and resumption
//	stop.go      stopping a run: the effect stop, Fail, Suspend, cancel
//	trace.go     the trace's events, and the effect trace
//	parallel.go  parallel blocks
//	limits.go    limits checked before steps and in loops
//	journal.go   the journal's file and records

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
	// sequential: parallel branches run one at a time (RunOptions.Sequential)
	sequential bool

	vnow    time.Duration // virtual time since the start
	ticks   int           // loop iterations until Tick checks again
	steps   int
	usage   Usage
	stalled int

	// result
	stepNames    []string // the result's steps
	stepNamesBuf [4]string
	lastOut      Value
	outputs      Value
	doneOuts     Value // step name → its latest output (resultOutputs)
	// pending is what the result held before a tool answered "PENDING":
	// a resume wait of the same step that follows takes that reply back
	// (the pending step has no output), see retractPending.
	pending pendingTool
	exports Value
	events  []Event

	// step identity (stepid.go)
	lastSite     *Site  // the site of the latest step begun
	lastStep     string // and its identity
	lastStmt     *Site  // the site of the latest "statement" note
	path         string // call path prefix: "block/i > " per parallel branch
	siteCounts   []siteCount
	siteCountBuf [4]siteCount
	iterCounts   []iterCount // steps with counters, while few
	iterCountBuf [6]iterCount
	j            *Journal

	// providers
	call      Call       // the call in flight (effect.go's retry)
	llmReq    LLMRequest // the llm request in flight (llm.go)
	seqCounts []seqCount // the mock providers' $sequence positions (Call.Seq)

	// idempotency keys: the run's identity, made when a key is first needed
	keyIdent                     *runIdentity
	progName, progHash, runIDOpt string

	*featureState // what only some runs need; nil until then
}

// featureState holds the parts of a Run that only runs using a feature
// need — budgets and limits, state tracking, many step identities,
// traces, journals, parallel branches — so that a plain run does not
// allocate them. It is nil until a run needs it (features).
type featureState struct {
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
	stepOuts     Value // step name → its latest successful output
	stateWritten Value // state keys written by the run → value
	changed      bool
	wantSnaps    bool
	snapshots    []string

	// step identity (stepid.go)
	siteCountMap map[*Site]int  // executions by site, once siteCounts is full
	idCounts     map[string]int // executions by identity
	idbuf        []byte

	// trace (trace.go)
	tw       io.Writer // the root's writer
	tbuf     []byte    // the event being built (root), or every event of a branch
	traceErr error
	// stepAttrs are fields, encoded, that the event ending the step in
	// flight adds: the tool a tool step calls, the provider and model of
	// an llm step (traceTool, traceLLM). A string, so that a branch that
	// copies featureState shares no buffer with its parent.
	stepAttrs string

	// journal
	mode        JournalMode
	shared      *sharedState
	journalOpen bool // start accepted the journal: finish closes the execution

	// branches (parallel.go)
	base         *branchBase
	writes       []Field // SetOutput calls, replayed into the parent
	exportWrites []Field
	stateWrites  []Field
}

// features returns the run's featureState, making it on first use.
func (r *Run) features() *featureState {
	if r.featureState == nil {
		r.featureState = &featureState{}
	}
	return r.featureState
}

// sharedState is shared by a run and its branches.
type sharedState struct {
	resume     *Value
	resumeStep string
	resumed    atomic.Bool
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

// start starts the run: run_started, and the journal's checks.
func (r *Run) start() {
	if r.tracing {
		r.traceRunStarted()
	}
	if r.j == nil {
		if r.featureState != nil && r.shared != nil && r.shared.resume != nil {
			r.stop(StatusFailed, "journal", "resuming a run needs its journal", "")
		}
		return
	}
	r.openJournal()
}

// openJournal checks that the run can use its journal in its mode and
// prepares it: a new run needs an empty journal, a resumption a suspended
// run's.
func (r *Run) openJournal() {
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
	res := &Result{Status: StatusSuccess, Steps: r.stepNames, Output: out, Outputs: r.resultOutputs(), Events: r.events, Exports: r.exports, Usage: r.usage}
	if s != nil {
		res.Status, res.Error = s.status, s.err
		if s.status == StatusSuspended {
			// A suspended run has not ended: it has no output yet
			// (nano-vm's suspended trace has final_output None).
			res.Output = Value{}
		}
	}
	if r.featureState != nil && r.wantSnaps {
		res.Snapshots = r.snapshots
		if res.Snapshots == nil {
			res.Snapshots = []string{}
		}
	}
	if r.tracing {
		r.traceRunCompleted(res)
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
		r.traceStepStarted(id, st, kind)
	}
	return id
}

// checkBudget stops the run before step id when a budget is spent, or a
// limit reached (checkLimits).
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

// complete ends a step that ran (its output may be an error value): it
// counts the step, adds its usage, notes its output, tracks the state and
// traces step_completed or step_failed. It stops the run when the stall
// budget is spent.
func (r *Run) complete(id string, st Step, kind string, start time.Duration, out Value, u *Usage, attempts int) {
	r.pending = pendingTool{}
	if kind == "tool" && out.k == KindString && out.s == "PENDING" {
		r.pending = pendingTool{name: st.site().Name, set: true, lastOut: r.lastOut, doneOuts: r.doneOuts}
	}
	r.steps++
	r.stepNames = append(r.stepNames, st.site().Name)
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
		r.traceStepEnded(id, st, kind, start, out, u, attempts, hash)
	}
	if r.track && r.budget.Stalled > 0 && r.stalled >= r.budget.Stalled {
		r.stop(StatusStalled, "stalled", strconv.Itoa(r.stalled)+" steps in a row left the state unchanged", id)
	}
}

// Mark records a step that is not an effect (a condition, an assignment)
// with its output: it counts against the budgets, appears in the result's
// steps and in the trace.
func (r *Run) Mark(st Step, kind string, output Value) {
	id := r.begin(st, kind)
	r.complete(id, st, kind, r.elapsed(), output, nil, 0)
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
	x := r.features()
	return Object(Field{"outputs", r.outputs}, Field{"state", orEmptyObject(x.stateWritten)}, Field{"steps", orEmptyObject(x.stepOuts)})
}

// StateHash returns the hex sha256 of the canonical encoding of State().
func (r *Run) StateHash() string {
	x := r.features()
	// Under the value limit, so that state holding a value whose
	// encoding is huge stops the run instead of hashing for ever.
	e := jsonEncoder{canon: true, max: -1}
	if lim := valueLimit.Load(); lim > 0 {
		e.max = int(lim)
	}
	b := append(x.idbuf[:0], `{"outputs":`...)
	b = e.value(b, r.outputs)
	b = append(b, `,"state":`...)
	b = e.value(b, orEmptyObject(x.stateWritten))
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
		// NewRun allocates featureState for real-time runs.
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
