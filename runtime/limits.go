package runtime

import (
	"runtime/metrics"
	"strconv"
	"sync/atomic"
	"time"
)

// Limits bound a run against a runaway program: an operator's limits,
// given on the command line (Main's --max-* flags) or in Config.Limits,
// on top of the program's own budgets (RunOptions.Budget and the budgets
// a language compiles into the program, such as nano-vm's max_steps):
// whichever is lower stops the run first. Zero fields are no limit; the
// zero Limits (a Config that sets none) limits nothing. DefaultLimits
// are what Main uses.
//
// A limit that is reached ends the run with status budget_exceeded and
// the error kind "limit.steps", "limit.tokens", "limit.cost",
// "limit.wall", "limit.memory" or "limit.trace" (a program's own budget
// has kind "budget.…"), at the step that was refused, or at the loop
// whose iteration found it. (Nested calls are bounded too, always:
// MaxCallDepth, kind "limit.depth".)
type Limits struct {
	// Steps, Tokens and Cost are checked before each step, as the
	// budgets of the same names are.
	Steps  int
	Tokens int
	Cost   float64
	// Wall is real time since the run started, whatever the run's clock
	// (a virtual clock does not advance in a loop). It is checked before
	// each step and at every loop iteration (Tick), so a loop without
	// effects is stopped too.
	Wall time.Duration
	// Memory bounds the live heap of the process (bytes, measured after
	// each garbage collection), checked before every 16th step and at
	// loop iterations. A process runs one run at a time under Main; with
	// concurrent runs the heap is theirs together. Main also bounds the
	// largest value to a quarter of it (SetValueLimit).
	Memory int64
	// Trace bounds the bytes the run writes to its trace (RunOptions.Trace):
	// the event that would go beyond is not written and the run stops;
	// run_completed is written all the same, with output null.
	Trace int64
}

// DefaultLimits returns the limits Main applies unless its flags say
// otherwise: 100,000 steps, 1,000,000 tokens, 1 USD, 60 s of real time,
// 1 GiB of live heap (and values of at most 256 MiB), 256 MiB of trace.
// A runaway program — a loop whose condition never turns, with or
// without effects — stops by itself within a minute; a run that calls
// a real model for longer raises Wall (--max-wall).
func DefaultLimits() Limits {
	return Limits{
		Steps:  100_000,
		Tokens: 1_000_000,
		Cost:   1,
		Wall:   60 * time.Second,
		Memory: 1 << 30,
		Trace:  256 << 20,
	}
}

func (l Limits) any() bool {
	return l.Steps > 0 || l.Tokens > 0 || l.Cost > 0 || l.Wall > 0 || l.Memory > 0 || l.Trace > 0
}

// valueLimit is the largest string, encoding or list a builtin may build
// (bytes; a list counts valueSlotBytes per element); 0 is no limit.
var valueLimit atomic.Int64

// valueSlotBytes is what a list element costs (the size of a Value).
const valueSlotBytes = 40

// SetValueLimit bounds every value that builtins build, in the whole
// process: a string (str.concat, str.format, json.encode, json.canonical,
// value.string) longer than n bytes, or a list (list.append) of more than
// n/40 elements, stops the run that builds it with status
// budget_exceeded, kind "limit.memory". n ≤ 0 removes the bound (the
// default). Main sets it to a quarter of --max-memory: a doubling string
// is stopped before its copy could reach the memory limit. Builtins have
// no run at hand, so the bound is the process's, not a host's.
func SetValueLimit(n int64) {
	if n < 0 {
		n = 0
	}
	valueLimit.Store(n)
}

// ValueLimit returns the bound SetValueLimit set (0: none).
func ValueLimit() int64 { return valueLimit.Load() }

// limitStop is the stop of a limit that a builtin reaches: Execute
// recovers it as it recovers every stop. The step is the latest one the
// run began (see Execute).
func limitStop(kind, msg string) *stopSignal {
	return &stopSignal{status: StatusBudgetExceeded, err: &RunError{Kind: kind, Message: msg}}
}

// Error makes an unrecovered stop (a builtin called outside a run) say
// what it is.
func (s *stopSignal) Error() string { return "runtime: run stopped: " + s.err.Error() }

// valueTooLarge stops the run: a builtin was about to build the value
// desc describes, in the words of the operation the program wrote ("a
// string of 33554432 bytes (joining strings)").
func valueTooLarge(desc string) {
	panic(limitStop("limit.memory", desc+" exceeds the largest value allowed, "+
		strconv.FormatInt(valueLimit.Load(), 10)+" bytes (a quarter of --max-memory)"))
}

// checkValueLen stops the run when a string of n bytes, which doing
// ("joining strings") would build, is over the value limit.
func checkValueLen(n int, doing string) {
	if lim := valueLimit.Load(); lim > 0 && int64(n) > lim {
		valueTooLarge("a string of " + strconv.Itoa(n) + " bytes (" + doing + ")")
	}
}

// encodeLimited returns v's JSON (or canonical) encoding for a builtin,
// stopping the run when it would be over the value limit: the encoding
// stops as soon as it is, so a list that holds itself many times over
// (its encoding exponential in its size) costs no more than the limit.
// what is what the encoding is ("a JSON text") and doing the operation
// that needs it ("encoding a value as JSON").
func encodeLimited(what, doing string, v Value, canon bool) []byte {
	lim := valueLimit.Load()
	if lim <= 0 {
		return appendValue(nil, v, canon)
	}
	e := jsonEncoder{canon: canon, max: int(lim)}
	b := e.value(nil, v)
	if e.full(b) {
		valueTooLarge(what + " of more than " + strconv.FormatInt(lim, 10) + " bytes (" + doing + ")")
	}
	return b
}

// The live heap, read from runtime/metrics.
var heapSample = []metrics.Sample{{Name: "/gc/heap/live:bytes"}}

// liveHeap returns the bytes of heap live at the end of the latest
// garbage collection.
func liveHeap() int64 {
	s := [1]metrics.Sample{heapSample[0]}
	metrics.Read(s[:])
	if s[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return int64(s[0].Value.Uint64())
}

// tickEvery is how many loop iterations (Tick) pass between two checks
// of the context and the limits: a check reads the clock and the heap
// (about 0.1 µs), an iteration of generated code takes some ns at least.
const tickEvery = 256

// Tick is called by generated code at every iteration of a loop (the IR's
// loop, which every language's while, for and step graph become); st is
// the loop's site. Every tickEvery iterations it checks what a loop
// without effects could otherwise escape: the run's context (a cancelled
// run stops, kind "cancelled"), the wall and the memory limits; a stop
// names the loop's site as its step. It is no step: it counts nothing
// and writes nothing.
func (r *Run) Tick(st Step) {
	r.ticks--
	if r.ticks > 0 {
		return
	}
	r.ticks = tickEvery
	if r.ctx.Err() != nil {
		r.cancelled(r.path + st.site().ID())
	}
	if r.featureState != nil && r.limits.any() {
		r.checkRealLimits(r.path+st.site().ID(), true)
	}
}

// checkLimits checks the limits before a step; id is the step's identity.
func (r *Run) checkLimits(id string) {
	l := &r.limits
	switch {
	case l.Steps > 0 && r.steps >= l.Steps:
		r.stop(StatusBudgetExceeded, "limit.steps", "the run has executed "+strconv.Itoa(r.steps)+" steps, the limit (--max-steps) is "+strconv.Itoa(l.Steps), id)
	case l.Tokens > 0 && r.usage.Tokens() >= l.Tokens:
		r.stop(StatusBudgetExceeded, "limit.tokens", strconv.Itoa(r.usage.Tokens())+" tokens used, the limit (--max-tokens) is "+strconv.Itoa(l.Tokens), id)
	case l.Cost > 0 && r.usage.Cost >= l.Cost:
		r.stop(StatusBudgetExceeded, "limit.cost", "cost "+strconv.FormatFloat(r.usage.Cost, 'g', -1, 64)+" USD, the limit (--max-cost) is "+strconv.FormatFloat(l.Cost, 'g', -1, 64)+" USD", id)
	}
	// Reading the heap costs some 0.2 µs: every 16th step is enough, as
	// loops are checked at their iterations.
	r.checkRealLimits(id, r.steps%16 == 0)
}

// checkRealLimits checks the limits that a loop without effects can
// reach: real time, and memory when mem is set.
func (r *Run) checkRealLimits(id string, mem bool) {
	l := &r.limits
	if l.Wall > 0 {
		if d := r.h.now().Sub(r.realStart); d >= l.Wall {
			r.stop(StatusBudgetExceeded, "limit.wall", "the run has taken "+d.Round(time.Millisecond).String()+
				" of real time, the limit (--max-wall) is "+l.Wall.String(), id)
		}
	}
	if mem && l.Memory > 0 {
		if n := liveHeap(); n >= l.Memory {
			r.stop(StatusBudgetExceeded, "limit.memory", "the live heap is "+strconv.FormatInt(n, 10)+
				" bytes, the limit (--max-memory) is "+strconv.FormatInt(l.Memory, 10)+" bytes", id)
		}
	}
}

// traceFits reports whether the trace, with the event in tbuf, stays
// within the trace limit: what the run wrote (for a branch, what the run
// had written when the block started) and what tbuf holds (a branch
// keeps all its events there until the block joins).
func (r *Run) traceFits() bool {
	return r.limits.Trace <= 0 || r.traceBytes+int64(len(r.tbuf)) <= r.limits.Trace
}

// traceFull stops the run: the trace limit is reached. The event being
// built (from evStart in tbuf) is dropped.
func (r *Run) traceFull() {
	r.tbuf = r.tbuf[:r.evStart]
	r.traceOver = true
	r.stop(StatusBudgetExceeded, "limit.trace", "the trace has reached its limit (--max-trace) of "+strconv.FormatInt(r.limits.Trace, 10)+" bytes", "")
}

// MaxCallDepth bounds how deep the calls of a program's functions nest
// (in a parallel branch, counted from the branch's start). Generated code
// counts them and calls TooDeep beyond: a recursion without end stops the
// run before Go's stack (1 GB) overflows, which would end the process.
const MaxCallDepth = 10_000

// TooDeep stops the run: the program's calls nest deeper than
// MaxCallDepth. st is the site of the function called (status
// budget_exceeded, kind "limit.depth").
func (r *Run) TooDeep(st Step) {
	r.stop(StatusBudgetExceeded, "limit.depth", "the calls nest more than "+strconv.Itoa(MaxCallDepth)+
		" deep (a recursion without end?)", r.path+st.site().ID())
}
