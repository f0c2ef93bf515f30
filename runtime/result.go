package runtime

import (
	"errors"
	"fmt"
	"strconv"
)

// Status is how a run ended.
type Status string

// The statuses of a run.
const (
	StatusSuccess        Status = "success"         // the program returned
	StatusFailed         Status = "failed"          // Run.Fail, a failed state write, a journal divergence, a cancelled context
	StatusSuspended      Status = "suspended"       // a tool answered PENDING, or a wait needs a resume
	StatusBudgetExceeded Status = "budget_exceeded" // a budget refused the next step
	StatusStalled        Status = "stalled"         // too many steps in a row left the state unchanged
	StatusCancelled      Status = "cancelled"       // the run's context was cancelled (genesisc run: SIGINT, SIGTERM)
)

// Event is one emitted event.
type Event struct {
	Name    string
	Payload Value
}

// RunError says why a run did not succeed: a kind ("suspended", "stalled",
// "budget.steps", "divergence", or the kind of the error value given to
// Run.Fail, …), a message, and the identity of the step.
type RunError struct {
	Kind    string
	Message string
	Step    string
}

func (e *RunError) Error() string {
	if e.Step == "" {
		return e.Kind + ": " + e.Message
	}
	return e.Step + ": " + e.Kind + ": " + e.Message
}

// Result is what a run produced (what `genesisc run --result FILE`
// writes). Its JSON encoding is
//
//	{"status": "success"|"failed"|"suspended"|"budget_exceeded"|"stalled"|"cancelled",
//	 "steps": [names of the executed steps, in order; a parallel block's
//	           sub-steps after the block, branch by branch],
//	 "output": the program's result (for a run that stopped: the output of
//	           the last step that completed),
//	 "outputs": {key: value} (Run.SetOutput),
//	 "events": [{"name": …, "payload": …}] (emit),
//	 "exports": {key: value} (Run.Export),
//	 "error": null | {"kind": …, "message": …, "step": …},
//	 "usage": {"prompt_tokens": n, "completion_tokens": n, "total_tokens": n,
//	           "cost": USD} (the run's LLM usage, Usage)}
//
// with "snapshots": [sha256 hex, …] added when RunOptions.Snapshots asked
// for them.
type Result struct {
	Status    Status
	Steps     []string
	Output    Value
	Outputs   Value // an object
	Events    []Event
	Exports   Value // an object
	Error     *RunError
	Snapshots []string // the state hash after each step of the run, when asked for

	// Usage is the run's total LLM usage: every attempt of every LLM
	// call, a resumed run's journaled calls included.
	Usage Usage
}

// AppendJSON appends the result's JSON encoding (one line, no newline).
func (r *Result) AppendJSON(b []byte) []byte {
	b = append(b, `{"status":`...)
	b = appendString(b, string(r.Status))
	b = append(b, `,"steps":[`...)
	for i, s := range r.Steps {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendString(b, s)
	}
	b = append(b, `],"output":`...)
	b = AppendJSON(b, r.Output)
	b = append(b, `,"outputs":`...)
	b = AppendJSON(b, orEmptyObject(r.Outputs))
	b = append(b, `,"events":[`...)
	for i, e := range r.Events {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"name":`...)
		b = appendString(b, e.Name)
		b = append(b, `,"payload":`...)
		b = AppendJSON(b, e.Payload)
		b = append(b, '}')
	}
	b = append(b, `],"exports":`...)
	b = AppendJSON(b, orEmptyObject(r.Exports))
	b = append(b, `,"error":`...)
	b = appendRunError(b, r.Error)
	b = appendResultUsage(append(b, `,"usage":`...), r.Usage)
	if r.Snapshots != nil {
		b = append(b, `,"snapshots":[`...)
		for i, s := range r.Snapshots {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendString(b, s)
		}
		b = append(b, ']')
	}
	return append(b, '}')
}

// appendResultUsage appends a usage object of the result.
func appendResultUsage(b []byte, u Usage) []byte {
	b = append(b, `{"prompt_tokens":`...)
	b = strconv.AppendInt(b, int64(u.PromptTokens), 10)
	b = append(b, `,"completion_tokens":`...)
	b = strconv.AppendInt(b, int64(u.CompletionTokens), 10)
	b = append(b, `,"total_tokens":`...)
	b = strconv.AppendInt(b, int64(u.Tokens()), 10)
	b = append(b, `,"cost":`...)
	b = appendNumber(b, u.Cost)
	return append(b, '}')
}

func appendRunError(b []byte, e *RunError) []byte {
	if e == nil {
		return append(b, "null"...)
	}
	b = append(b, `{"kind":`...)
	b = appendString(b, e.Kind)
	b = append(b, `,"message":`...)
	b = appendString(b, e.Message)
	b = append(b, `,"step":`...)
	if e.Step == "" {
		b = append(b, "null"...)
	} else {
		b = appendString(b, e.Step)
	}
	return append(b, '}')
}

func orEmptyObject(v Value) Value {
	if v.k != KindObject {
		return emptyObject
	}
	return v
}

// MarshalJSON implements json.Marshaler.
func (r *Result) MarshalJSON() ([]byte, error) { return r.AppendJSON(nil), nil }

// UnmarshalJSON implements json.Unmarshaler.
func (r *Result) UnmarshalJSON(data []byte) error {
	res, err := ParseResult(data)
	if err != nil {
		return err
	}
	*r = *res
	return nil
}

// ParseResult decodes a result's JSON encoding.
func ParseResult(data []byte) (*Result, error) {
	v, err := ParseJSONExt(data)
	if err != nil {
		return nil, err
	}
	if v.k != KindObject {
		return nil, errors.New("result: not a JSON object")
	}
	r := &Result{Outputs: emptyObject, Exports: emptyObject}
	st, ok := ObjGet(v, String("status")).AsString()
	switch Status(st) {
	case StatusSuccess, StatusFailed, StatusSuspended, StatusBudgetExceeded, StatusStalled, StatusCancelled:
		r.Status = Status(st)
	default:
		if !ok {
			return nil, errors.New("result: status is missing")
		}
		return nil, fmt.Errorf("result: unknown status %q", st)
	}
	for _, s := range ObjGet(v, String("steps")).Elems() {
		r.Steps = append(r.Steps, s.Str())
	}
	r.Output = ObjGet(v, String("output"))
	if o := ObjGet(v, String("outputs")); o.k == KindObject {
		r.Outputs = o
	}
	if o := ObjGet(v, String("exports")); o.k == KindObject {
		r.Exports = o
	}
	for _, e := range ObjGet(v, String("events")).Elems() {
		r.Events = append(r.Events, Event{Name: ObjGet(e, String("name")).Str(), Payload: ObjGet(e, String("payload"))})
	}
	if e := ObjGet(v, String("error")); e.k == KindObject {
		r.Error = &RunError{
			Kind:    ObjGet(e, String("kind")).Str(),
			Message: ObjGet(e, String("message")).Str(),
			Step:    ObjGet(e, String("step")).Str(),
		}
	}
	if u := ObjGet(v, String("usage")); u.k == KindObject {
		r.Usage = Usage{
			PromptTokens:     int(ObjGet(u, String("prompt_tokens")).Num()),
			CompletionTokens: int(ObjGet(u, String("completion_tokens")).Num()),
			Cost:             ObjGet(u, String("cost")).Num(),
		}
	}
	if s := ObjGet(v, String("snapshots")); s.k == KindList {
		r.Snapshots = []string{}
		for _, x := range s.Elems() {
			r.Snapshots = append(r.Snapshots, x.Str())
		}
	}
	return r, nil
}
