package runtime

import (
	"context"
	"strconv"
)

// The effects tool, emit, state.get, state.put and export, each over the
// effect machinery of effect.go. llm and judge are in llm.go, wait in
// wait.go, stop in stop.go, trace in trace.go.

// Tool is the effect tool: calls the tool name with args (an object); its
// reply, or an error value (kind "unknown_tool" when no provider has the
// tool). A tool that answers "PENDING" has accepted the request and will
// finish later: the call completes with that reply, and the program
// suspends by waiting for its resumption (Wait with a "resume" request),
// as docs/ir.md has it.
func (r *Run) Tool(st Step, name, args Value) Value { return r.ToolWith(st, name, args, Value{}) }

// ToolWith is Tool with call options (retries, timeout, retry_on).
func (r *Run) ToolWith(st Step, name, args, options Value) Value {
	e := r.effect(st, "tool", func() Value { return Object(Field{"name", name}, Field{"args", args}) })
	if e.rec != nil {
		r.observeTool(e.id, name.String())
		if r.tracing {
			r.traceTool(name.String())
		}
		return e.complete(e.rec.reply, nil, e.rec.attempts)
	}
	reply, attempts := r.callTool(e.id, name.String(), args, r.policy(options))
	if r.tracing {
		r.traceTool(name.String())
	}
	return e.record(reply, nil, attempts)
}

// observeTool shows the tool providers that watch replays (the mock's
// $sequence) the call of step id that the journal served.
func (r *Run) observeTool(id, name string) {
	r.call = Call{Step: id, Attempt: 1, run: r}
	for _, p := range r.h.cfg.Tools {
		if o, ok := p.(replayObserver); ok {
			o.observeTool(&r.call, name)
		}
	}
}

// callTool calls the tool name with the retries pol allows: the reply
// (an error value after the last failure) and the attempts made.
func (r *Run) callTool(id, name string, args Value, pol RetryPolicy) (Value, int) {
	fn := (*r.h.tools.Load())[name]
	return r.retry(id, &pol, func() (Value, *CallError) {
		v, err := r.toolAttempt(fn, name, args, pol)
		if err != nil {
			return v, asCallError(err, "tool")
		}
		return v, nil
	})
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
	return Value{}, &CallError{Kind: "unknown_tool", Message: "no tool " + strconv.Quote(name) + " is registered or provided (" + toolProviderNames(r.h.cfg.Tools) + ")"}
}

// Emit is the effect emit: the event name with payload. It goes to the
// result's events, the trace and Config.OnEvent (which a replayed or
// resumed run does not call again for an event the journal has).
func (r *Run) Emit(st Step, name, payload Value) {
	e := r.effect(st, "emit", func() Value { return Object(Field{"name", name}, Field{"payload", payload}) })
	ename := name.String()
	if e.rec == nil {
		if r.h.cfg.OnEvent != nil {
			r.h.cfg.OnEvent(ename, payload)
		}
		e.journal(Value{}, nil, 0)
	}
	r.events = append(r.events, Event{Name: ename, Payload: payload})
	if r.tracing {
		r.traceEmitted(e.id, st, ename, payload)
	}
	e.complete(Value{}, nil, 0)
}

// StateGet is the effect state.get: the persistent state's value at key,
// unit when absent (an error value of kind "state" when the store fails).
func (r *Run) StateGet(st Step, key Value) Value {
	e := r.effect(st, "state.get", func() Value { return Object(Field{"key", key}) })
	if e.rec != nil {
		return e.complete(e.rec.reply, nil, 0)
	}
	v, _, err := r.h.store.Get(keyString(key))
	if err != nil {
		v = Error("state", err.Error())
	}
	return e.record(v, nil, 0)
}

// StatePut is the effect state.put: sets the persistent state at key to
// v. A store that fails stops the run (status failed, kind "state").
func (r *Run) StatePut(st Step, key, v Value) {
	e := r.effect(st, "state.put", func() Value { return Object(Field{"key", key}, Field{"value", v}) })
	k := keyString(key)
	if e.rec == nil {
		if err := r.h.store.Put(k, v); err != nil {
			r.stop(StatusFailed, "state", "state.put "+strconv.Quote(k)+": "+err.Error(), e.id)
		}
		e.journal(Value{}, nil, 0)
	}
	r.noteStateWrite(k, v)
	e.complete(Value{}, nil, 0)
}

// noteStateWrite tracks that the run set the state at k to v: for the
// stall count and the state hash, and, in a branch, for the block.
func (r *Run) noteStateWrite(k string, v Value) {
	if r.track {
		if old, ok := r.stateWritten.Get(k); !ok || !ValueEq(old, v) {
			r.changed = true
			r.stateWritten = objSet(r.stateWritten, k, v)
		}
	}
	if r.branch {
		r.stateWrites = append(r.stateWrites, Field{k, v})
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
		r.traceExported(r.identity(st), key, v)
	}
}
