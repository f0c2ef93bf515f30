package runtime

import "time"

// The effect machinery. Every effect method (effects.go, llm.go,
// wait.go) is one short function over it:
//
//	e := r.effect(st, kind, request) // begin the step, look it up in the journal
//	if e.rec != nil {                 // the journal serves the reply
//		return e.complete(e.rec.reply, nil, 0)
//	}
//	reply, attempts := r.retry(e.id, pol, attempt) // ask the world
//	return e.record(reply, nil, attempts)          // journal it, end the step
//
// r.effect begins the step (context, budgets and limits, step_started;
// run.go's begin) and, with a journal, serves or suspends it
// (fromJournal); retry makes the attempts a retry policy allows;
// e.record journals the reply and ends the step (run.go's complete:
// counts, outputs, state tracking, step_completed or step_failed).

// An effect is one execution of an effect method in flight.
type effect struct {
	r     *Run
	st    Step
	kind  string        // the IR effect: "llm", "tool", "wait", …
	id    string        // the step's identity
	start time.Duration // when it began, on the run's clock
	// request is what the journal keys the effect on (unit when the run
	// has no journal).
	request Value
	// rec is the journal's record when it serves the reply (the effect
	// must not run again), else nil.
	rec *jrec
}

// effect begins the effect kind at step st: it checks the context, the
// budgets and the limits, traces step_started and, when the run has a
// journal, builds the journal's request with request and looks the step
// up (fromJournal: it may stop the run on a divergence, or suspend it
// again in a replay).
func (r *Run) effect(st Step, kind string, request func() Value) (e effect) {
	e.r, e.st, e.kind = r, st, kind
	e.id = r.begin(st, kind)
	e.start = r.elapsed()
	if r.j != nil {
		e.request = request()
		e.rec = r.fromJournal(&e)
	}
	return e
}

// complete ends the effect's step with reply (which may be an error
// value), the usage it cost and the attempts it took, and returns reply.
func (e *effect) complete(reply Value, u *Usage, attempts int) Value {
	e.r.complete(e.id, e.st, e.kind, e.start, reply, u, attempts)
	return reply
}

// record journals the effect's reply (unless the run replays) and ends
// its step: complete.
func (e *effect) record(reply Value, u *Usage, attempts int) Value {
	if e.r.j != nil {
		e.journal(reply, u, attempts)
	}
	e.r.complete(e.id, e.st, e.kind, e.start, reply, u, attempts)
	return reply
}

// journal writes the effect's reply to the journal, when the run records
// one (not in a replay).
func (e *effect) journal(reply Value, u *Usage, attempts int) {
	r := e.r
	if r.j != nil && r.mode != JournalReplay {
		r.journal(r.j.appendEffect(e.id, e.kind, e.request, reply, u, attempts, r.elapsed()-e.start), e.id)
	}
}

// suspend records that the effect's step suspends the run (a wait for a
// resume; a step the journal has pending, in a replay) and stops the run
// with status suspended and message msg. A resume wait continues the
// tool step whose reply was "PENDING": it is not a step of its own.
func (e *effect) suspend(msg string) {
	r := e.r
	if r.j != nil && r.mode != JournalReplay {
		r.journal(r.j.appendPending(e.id, e.kind, e.request), e.id)
	}
	if e.kind == "wait" && isResume(ObjGet(e.request, String("request"))) {
		// That step is already counted and listed.
		r.retractPending(e.st)
	} else {
		r.steps++
		r.stepNames = append(r.stepNames, e.st.site().Name)
	}
	if r.tracing {
		r.traceStepPending(e.id, e.st, e.kind, e.start)
	}
	r.stop(StatusSuspended, "suspended", msg, e.id)
}

// fromJournal returns the journal's record of effect e when it serves
// the reply (nil when the effect must run). It fails the run on
// divergence, serves the resume payload of the suspended step, and
// suspends again in a replay of a step that was pending.
func (r *Run) fromJournal(e *effect) *jrec {
	if r.mode == JournalRecord {
		return nil
	}
	id, request := e.id, e.request
	rec := r.j.lookup(id)
	if rec == nil {
		if r.mode == JournalReplay {
			r.stop(StatusFailed, "divergence", "replay: step "+id+" asks for "+e.kind+" "+string(AppendJSON(nil, request))+", which the journal does not have", id)
		}
		return nil
	}
	if rec.effect != e.kind || string(Canonical(rec.request)) != string(Canonical(request)) {
		r.stop(StatusFailed, "divergence", r.mode.String()+" diverged at step "+id+": the journal has "+rec.effect+" "+
			string(AppendJSON(nil, rec.request))+", the program asks for "+e.kind+" "+string(AppendJSON(nil, request)), id)
	}
	if rec.pending {
		if rec.resumed {
			return &jrec{effect: e.kind, request: request, reply: rec.resume}
		}
		sh := r.shared
		if sh.resume != nil && id == sh.resumeStep && sh.resumed.CompareAndSwap(false, true) {
			if r.mode != JournalReplay {
				r.journal(r.j.appendResume(id, *sh.resume), id)
			}
			return &jrec{effect: e.kind, request: request, reply: *sh.resume}
		}
		if r.mode == JournalReplay {
			// The replay ends as the run it replays did: suspended,
			// waiting for what the step asked (Wait's message).
			msg := "step " + id + " is pending"
			if w, ok := request.Get("request"); ok && e.kind == "wait" {
				msg = "waiting for " + w.String()
			}
			e.suspend(msg)
		}
		return nil // ask again
	}
	if !r.real {
		r.vnow += rec.duration // the served effect takes the virtual time it took
	}
	return rec
}

// journal stops the run when a journal write failed.
func (r *Run) journal(err error, id string) {
	if err != nil {
		r.stop(StatusFailed, "journal", "writing the journal: "+err.Error(), id)
	}
}

// retry makes the attempts of a call of step id that policy pol allows:
// attempt makes one (r.call says which: step, attempt, timeout) and
// returns its reply, or the failure. A failure the policy retries, with
// retries left, waits the policy's backoff and tries again; the last
// failure is the reply, as an error value. retry returns the reply and
// the number of the attempt that gave it. The run stops (cancelled) when
// its context is done after an attempt, whatever the attempt answered.
func (r *Run) retry(id string, pol *RetryPolicy, attempt func() (Value, *CallError)) (Value, int) {
	for n := r.firstAttempt(id); ; n++ {
		r.noteAttempt(id, n)
		r.call = Call{Step: id, Attempt: n, Timeout: pol.Timeout, run: r}
		v, ce := attempt()
		if r.ctx.Err() != nil {
			r.cancelled(id) // the call was cut short
		}
		if ce == nil {
			return v, n
		}
		if n > pol.Retries || !pol.retryable(ce.Kind) {
			return Error(ce.Kind, ce.Message), n
		}
		r.backoff(pol.delay(n, ce.RetryAfter))
	}
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
