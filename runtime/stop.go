package runtime

import "context"

// stopSignal is the panic value that stops a run.
type stopSignal struct {
	status Status
	err    *RunError
}

// stop stops the run: it panics with a stopSignal, which Execute (or, in
// a parallel branch, runBranch) recovers into the result.
func (r *Run) stop(status Status, kind, msg, step string) {
	panic(&stopSignal{status: status, err: &RunError{Kind: kind, Message: msg, Step: step}})
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

// StopHost stops the run with status, for a reason of the host rather
// than of the program: the Forge Machine ran out of ticks or memory, or
// faulted. The result's error has kind and msg and names the latest step
// begun. It does not return.
func (r *Run) StopHost(status Status, kind, msg string) {
	r.stop(status, kind, msg, r.lastStep)
}

// Suspend stops the run with status suspended at step st (its latest
// execution). Running it again with its journal (JournalResume) serves
// what it did; it gets no payload: a suspension that waits for an event
// is a Wait.
func (r *Run) Suspend(st Step, reason string) {
	r.stop(StatusSuspended, "suspended", reason, r.stopID(st))
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
