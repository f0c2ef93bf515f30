package runtime

import (
	"strconv"
	"strings"
	"time"
)

// The trace: one JSON object per line (docs/runtime.md "Trace"). Each
// event is built in tbuf and written by flushEvent, which enforces the
// trace limit; a parallel branch keeps its events in tbuf until its
// block joins (parallel.go's merge). The trace* methods encode one event
// each; their callers check r.tracing first, so that an untraced run
// pays one branch per event.

// traceRunStarted writes run_started: the program, the clock, the state
// backend and the journal mode.
func (r *Run) traceRunStarted() {
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

// traceRunCompleted writes run_completed, the trace's last event, even
// past the trace limit: it ends with the run's status.
func (r *Run) traceRunCompleted(res *Result) {
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
	r.writeEvent()
}

// traceStepStarted writes step_started for step id.
func (r *Run) traceStepStarted(id string, st Step, kind string) {
	r.stepAttrs = "" // what a step stopped before its end left
	b := r.eventStep("step_started", id, st, kind)
	r.tbuf = append(b, "}\n"...)
	r.flushEvent()
}

// traceStepEnded writes the event that ends step id, begun at start:
// step_completed with output out, or step_failed with out's kind and
// message when out is an error value; with the usage u and the attempts
// the step took, when it has them, and the state hash, when not "".
func (r *Run) traceStepEnded(id string, st Step, kind string, start time.Duration, out Value, u *Usage, attempts int, hash string) {
	failed := out.k == KindError
	ev, status := "step_completed", "success"
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

// traceStepPending writes the step_completed, status pending, of a step
// that suspends the run.
func (r *Run) traceStepPending(id string, st Step, kind string, start time.Duration) {
	b := r.stepEnd("step_completed", "pending", id, st, kind, start, nil, 0)
	r.tbuf = append(b, "}\n"...)
	r.flushEvent()
}

// traceWaitPassed writes the step_completed (output null) of a wait that
// is no step of its own: a retry's backoff, a resumption, which "wait"
// names ("backoff", "resume").
func (r *Run) traceWaitPassed(id string, st Step, start time.Duration, wait string) {
	b := r.stepEnd("step_completed", "success", id, st, "wait", start, nil, 0)
	b = append(b, `,"wait":`...)
	b = appendString(b, wait)
	r.tbuf = append(b, `,"output":null}`+"\n"...)
	r.flushEvent()
}

// traceEmitted writes event_emitted: the event ename with payload,
// emitted by step id.
func (r *Run) traceEmitted(id string, st Step, ename string, payload Value) {
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

// traceExported writes exported: the export key set to v at step id.
func (r *Run) traceExported(id, key string, v Value) {
	b := r.eventHead("exported")
	b = append(b, `,"step":`...)
	b = appendString(b, id)
	b = append(b, `,"name":`...)
	b = appendString(b, key)
	b = append(b, `,"value":`...)
	b = r.appendOut(b, v)
	r.tbuf = append(b, "}\n"...)
	r.flushEvent()
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

// flushEvent writes the event in tbuf, stopping the run when it does not
// fit in the trace limit.
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

// eventStep starts an event about step id: its head, the step's
// identity, name and kind.
func (r *Run) eventStep(name, id string, st Step, kind string) []byte {
	b := r.eventHead(name)
	b = append(b, `,"step":`...)
	b = appendString(b, id)
	b = append(b, `,"name":`...)
	b = appendString(b, st.site().Name)
	b = append(b, `,"kind":`...)
	return appendString(b, kind)
}

// stepEnd starts the event ev that ends step id: eventStep, the status,
// the duration since start, and the attempts and usage when it has them.
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
	if r.stepAttrs != "" {
		b = append(b, r.stepAttrs...)
		r.stepAttrs = ""
	}
	return b
}

// traceTool notes, for the event that ends the tool step in flight, the
// tool it calls: "tool".
func (r *Run) traceTool(name string) {
	r.stepAttrs = string(appendString([]byte(`,"tool":`), name))
}

// traceLLM notes, for the event that ends the llm or judge step in
// flight, who answers req: "provider", the LLM provider's name (ProviderName),
// and "model", the model it asks for req; each when known.
func (r *Run) traceLLM(req *LLMRequest) {
	var b []byte
	if n, ok := r.h.cfg.LLM.(ProviderNamer); ok {
		if name, model := n.ProviderName(), n.ModelName(req); name != "" {
			b = appendString(append(b, `,"provider":`...), name)
			if model != "" {
				b = appendString(append(b, `,"model":`...), model)
			}
		}
	}
	if b == nil && req.Model != "" {
		b = appendString(append(b, `,"model":`...), req.Model)
	}
	r.stepAttrs = string(b)
}

func appendTokens(b []byte, u Usage) []byte {
	b = append(b, `{"prompt":`...)
	b = strconv.AppendInt(b, int64(u.PromptTokens), 10)
	b = append(b, `,"completion":`...)
	b = strconv.AppendInt(b, int64(u.CompletionTokens), 10)
	return append(b, '}')
}

// appendOut appends v's JSON to a trace event being built. Under a trace
// limit the encoding stops where it could no longer fit, and the run
// stops: a value whose encoding is huge (a list holding itself many
// times over) is never built in full.
func (r *Run) appendOut(b []byte, v Value) []byte {
	if r.limits.Trace <= 0 {
		return appendValue(b, v, false)
	}
	// b is tbuf with the event so far: the event fits while len(b)
	// stays within what the limit leaves.
	e := jsonEncoder{max: int(max(r.limits.Trace-r.traceBytes, 0))}
	b = e.value(b, v)
	if e.full(b) {
		r.tbuf = b
		r.traceFull()
	}
	return b
}

// appendFinalOut appends the output of run_completed: under a trace
// limit, null when it does not fit (or the limit stopped the run), so
// the trace still ends with the run's status.
func (r *Run) appendFinalOut(b []byte, v Value) []byte {
	if r.limits.Trace <= 0 {
		return appendValue(b, v, false)
	}
	if r.traceOver {
		return append(b, "null"...)
	}
	start := len(b)
	e := jsonEncoder{max: int(max(r.limits.Trace-r.traceBytes, 0))}
	b = e.value(b, v)
	if e.full(b) {
		return append(b[:start], "null"...)
	}
	return b
}
