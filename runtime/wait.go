package runtime

import "time"

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
	e := r.effect(st, "wait", func() Value { return Object(Field{"request", request}) })
	if e.rec != nil {
		return e.endWait(request, e.rec.reply)
	}
	d, isDuration := waitDuration(request)
	if !isDuration {
		if r.j == nil {
			e.request = Object(Field{"request", request}) // what suspend reads
		}
		e.suspend("waiting for " + request.String())
	}
	r.sleep(e.id, st, d, request)
	e.journal(Value{}, nil, 0)
	return e.endWait(request, Value{})
}

// sleep waits d, what request asks, for the step id at st, on the run's
// clock: in real time (sleepReal), or by advancing the virtual clock,
// noting in the trace that it did not wait when request asks so
// ("trace_virtual": true).
func (r *Run) sleep(id string, st Step, d time.Duration, request Value) {
	if r.real {
		r.sleepReal(id, d)
		return
	}
	r.vnow += d
	if request.k == KindObject && ObjGet(request, String("trace_virtual")).Truthy() {
		r.noteAt(id, st, Object(Field{"kind", String("virtual_clock")}, Field{"text", String("did not wait " + d.String() +
			": the clock is virtual (--real-clock waits for real)")}))
	}
}

// sleepReal waits d in real time for the step id, no longer than the
// run's real-time limit (Limits.Wall, --max-wall) allows: a wait that
// would outlast it sleeps until the limit and stops the run there
// (limit.wall), and a cancelled context cancels it.
func (r *Run) sleepReal(id string, d time.Duration) {
	cut := false
	if r.featureState != nil && r.limits.Wall > 0 {
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

// endWait ends a wait step with its reply, and returns it: a step like
// any other, but a backoff or a resumption is only traced.
func (e *effect) endWait(request, reply Value) Value {
	r := e.r
	resume := isResume(request)
	if resume {
		r.retractPending(e.st)
	}
	if !isBackoff(request) && !resume {
		return e.complete(reply, nil, 0)
	}
	if r.tracing {
		wait := "backoff"
		if resume {
			wait = "resume"
		}
		r.traceWaitPassed(e.id, e.st, e.start, wait)
	}
	return reply
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
	if r.pending.set && r.pending.name == st.site().Name {
		r.lastOut, r.doneOuts = r.pending.lastOut, r.pending.doneOuts
	}
	r.pending = pendingTool{}
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

// waitDuration returns how long a wait request asks to wait, and whether
// it is a duration (not a suspension).
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
