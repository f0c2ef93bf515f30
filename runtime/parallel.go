package runtime

import (
	"fmt"
	"runtime/debug"
	"strconv"
	"sync"
)

// Parallel runs the branches of the parallel block st, at most limit at
// once (limit ≤ 0: Config.MaxConcurrency, or all), and returns their
// results in branch order.
//
// The block is one step, counted when it starts; each branch runs on a
// Run of its own whose steps have identities under "BLOCK/i > ". The
// observable outcome does not depend on timing:
//
//   - the trace has the block's step_started, then every event of branch
//     0, of branch 1, …, then the block's step_completed (its output the
//     list of results); the result's steps list the block, then the steps
//     of each branch in branch order;
//   - a branch sees the outputs, budgets and counters as they were when
//     the block started, plus its own; when all branches are done their
//     steps, usage, outputs, exports, events and $sequence counts are
//     added to the run in branch order, and the virtual clock moves to
//     the latest branch's;
//   - every branch runs to its end even when another stops; then the
//     stop of the lowest-numbered branch stops the run.
//
// Branches share the host (tools, state store) and the journal, which are
// safe for concurrent use.
func (r *Run) Parallel(st Step, limit int, branches ...func(*Run) Value) []Value {
	graph := make([]func(*Run, []Value) Value, len(branches))
	for i, f := range branches {
		graph[i] = func(c *Run, _ []Value) Value { return f(c) }
	}
	return r.ParallelAfter(st, limit, nil, graph...)
}

// ParallelAfter is Parallel for branches that depend on each other:
// branch i starts when the branches waits[i] lists (all numbered below
// i, so branch order is an order in which they can run) have finished,
// and receives their results, in the order listed. A nil or short waits
// means no waiting. A branch that waits for one that stopped or panicked
// does not run (its result is unit); the run then stops, or panics, as
// for Parallel. On the virtual clock a waiting branch starts at the
// latest end among those it waits for. Everything else — one step,
// identities, the trace and result in branch order, what a branch sees
// of the run — is as for Parallel: the outcome does not depend on timing.
func (r *Run) ParallelAfter(st Step, limit int, waits [][]int, branches ...func(*Run, []Value) Value) []Value {
	n := len(branches)
	for i, ws := range waits {
		for _, d := range ws {
			if d < 0 || d >= i || i >= n {
				panic(fmt.Sprintf("runtime: parallel branch %d waits for branch %d, which does not come before it", i, d))
			}
		}
	}
	id := r.begin(st, "parallel")
	start := r.elapsed()
	// The block counts as a step when it starts, so its sub-steps come
	// after it in the result.
	r.steps++
	r.stepNames = append(r.stepNames, st.site().Name)
	if limit <= 0 {
		limit = r.h.cfg.MaxConcurrency
	}
	if limit <= 0 || limit > n {
		limit = n
	}
	children := make([]*Run, n)
	results := make([]Value, n)
	stops := make([]*stopSignal, n)
	panics := make([]any, n)
	skipped := make([]bool, n)
	for i := range branches {
		children[i] = r.newBranch(id, i)
	}
	// ready prepares branch i once those it waits for have finished: it
	// reports whether the branch runs, and the results it receives.
	ready := func(i int) (bool, []Value) {
		if i >= len(waits) || len(waits[i]) == 0 {
			return true, nil
		}
		deps := make([]Value, len(waits[i]))
		c := children[i]
		for k, d := range waits[i] {
			if skipped[d] || stops[d] != nil || panics[d] != nil {
				return false, nil
			}
			deps[k] = results[d]
			if !c.real && children[d].vnow > c.vnow {
				c.vnow = children[d].vnow
			}
		}
		return true, deps
	}
	run := func(i int) {
		ok, deps := ready(i)
		if !ok {
			skipped[i], results[i] = true, Unit()
			return
		}
		f := branches[i]
		results[i], stops[i], panics[i] = runBranch(children[i], func(c *Run) Value { return f(c, deps) })
	}
	if limit <= 1 || r.sequential {
		for i := range branches {
			run(i)
		}
	} else {
		// Every branch has a goroutine that waits for its dependencies and
		// then for a slot: taking the slot first could let branches that
		// wait hold every slot while those they wait for cannot start.
		var wg sync.WaitGroup
		sem := make(chan struct{}, limit)
		done := make([]chan struct{}, n)
		for i := range done {
			done[i] = make(chan struct{})
		}
		for i := range branches {
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer close(done[i])
				if i < len(waits) {
					for _, d := range waits[i] {
						<-done[d]
					}
				}
				sem <- struct{}{}
				run(i)
				<-sem
			}()
		}
		wg.Wait()
	}
	vmax := r.vnow
	for _, c := range children {
		r.merge(c)
		if c.vnow > vmax {
			vmax = c.vnow
		}
	}
	if !r.real {
		r.vnow = vmax
	}
	for _, p := range panics {
		if p != nil {
			panic(p)
		}
	}
	for _, s := range stops {
		if s != nil {
			panic(s)
		}
	}
	if r.tracing && r.limits.Trace > 0 && (r.traceOver || !r.traceFits()) {
		r.traceOver = true
		r.stop(StatusBudgetExceeded, "limit.trace", "the trace has reached its limit (--max-trace) of "+strconv.FormatInt(r.limits.Trace, 10)+" bytes", id)
	}
	out := List(results...)
	r.lastOut = out
	r.noteDone(st.site().Name, out)
	hash := ""
	if r.track {
		hash = r.afterStep(st.site().Name, out, false)
	}
	if r.tracing {
		r.traceStepEnded(id, st, "parallel", start, out, nil, 0, hash)
	}
	if r.track && r.budget.Stalled > 0 && r.stalled >= r.budget.Stalled {
		r.stop(StatusStalled, "stalled", strconv.Itoa(r.stalled)+" steps in a row left the state unchanged", id)
	}
	return results
}

// branchBase is what a branch started from.
type branchBase struct {
	steps int
	usage Usage
	seq   []seqCount
}

// branchPanic carries a panic out of a branch with the branch's stack.
type branchPanic struct {
	value any
	stack []byte
}

func (p *branchPanic) Error() string {
	return fmt.Sprintf("panic in a parallel branch: %v\n%s", p.value, p.stack)
}

func runBranch(c *Run, f func(*Run) Value) (out Value, stop *stopSignal, perr any) {
	defer func() {
		if p := recover(); p != nil {
			if s, ok := p.(*stopSignal); ok {
				stop = s
				return
			}
			if bp, ok := p.(*branchPanic); ok {
				perr = bp
				return
			}
			perr = &branchPanic{value: p, stack: debug.Stack()}
		}
	}()
	return f(c), nil, nil
}

// newBranch returns the Run of branch i of block id.
func (r *Run) newBranch(id string, i int) *Run {
	x := r.features()
	c := &Run{
		h: r.h, ctx: r.ctx, input: r.input,
		real: r.real, vnow: r.vnow, sequential: r.sequential,
		limited: r.limited, steps: r.steps, usage: r.usage,
		lastOut: r.lastOut, outputs: r.outputs, exports: r.exports,
		path:    r.path + id + "/" + strconv.Itoa(i) + " > ",
		tracing: r.tracing, branch: true, j: r.j,
		started: true,
		featureState: &featureState{
			program: x.program, budget: x.budget, t0: x.t0,
			mode: x.mode, shared: x.shared,
			limits: x.limits, hasLimits: x.hasLimits, realStart: x.realStart,
		},
	}
	// The branch's trace fits in what the run had left when the block
	// started.
	c.traceBytes = x.traceBytes
	if r.branch {
		c.traceBytes += int64(len(r.tbuf))
	}
	c.stepNames = c.stepNamesBuf[:0]
	c.keyIdent = r.keyIdentity() // one run id and program hash for every branch's keys
	c.seqCounts = append([]seqCount(nil), r.seqCounts...)
	c.base = &branchBase{steps: r.steps, usage: r.usage, seq: append([]seqCount(nil), r.seqCounts...)}
	return c
}

// merge adds what branch c did to r.
func (r *Run) merge(c *Run) {
	r.stepNames = append(r.stepNames, c.stepNames...)
	b := c.base
	r.steps += c.steps - b.steps
	r.usage.add(Usage{
		PromptTokens:     c.usage.PromptTokens - b.usage.PromptTokens,
		CompletionTokens: c.usage.CompletionTokens - b.usage.CompletionTokens,
		Cost:             c.usage.Cost - b.usage.Cost,
	})
	for _, f := range c.writes {
		r.SetOutput(f.Key, f.Value)
	}
	if c.doneOuts.k == KindObject {
		for i := 0; i < int(c.doneOuts.u); i++ {
			r.noteDone(c.doneOuts.h.keys[i], c.doneOuts.h.items[i])
		}
	}
	for _, f := range c.exportWrites {
		r.Export(f.Key, f.Value)
	}
	for _, f := range c.stateWrites {
		r.noteStateWrite(f.Key, f.Value)
	}
	r.events = append(r.events, c.events...)
	if r.tracing && len(c.tbuf) > 0 {
		switch {
		case r.branch:
			r.tbuf = append(r.tbuf, c.tbuf...)
		case r.limits.Trace > 0 && r.traceBytes+int64(len(c.tbuf)) > r.limits.Trace:
			// Each branch kept within the limit, not all of them
			// together: what does not fit is not written.
			r.traceOver = true
		case r.traceErr == nil:
			if _, err := r.tw.Write(c.tbuf); err != nil {
				r.traceErr = err
			}
			r.traceBytes += int64(len(c.tbuf))
		}
	}
	if c.tracing && c.traceErr != nil && r.traceErr == nil {
		r.traceErr = c.traceErr
	}
	for _, sc := range c.seqCounts {
		n := sc.n
		for _, b0 := range b.seq {
			if b0.key == sc.key {
				n -= b0.n
			}
		}
		found := false
		for i := range r.seqCounts {
			if r.seqCounts[i].key == sc.key {
				r.seqCounts[i].n += n
				found = true
			}
		}
		if !found {
			r.seqCounts = append(r.seqCounts, seqCount{sc.key, n})
		}
	}
}
