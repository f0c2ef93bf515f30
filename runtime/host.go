package runtime

import (
	"context"
	"io"
	"math"
	"sync/atomic"
	"time"
)

// Config configures a Host: what every run of the process shares.
type Config struct {
	LLM   LLMProvider    // nil: every llm and judge call fails (kind "config")
	Tools []ToolProvider // asked in order, after the Go tools registered with RegisterTool
	State Store          // persistent state; nil: a MemoryStore of the host

	// Budget limits every run (a run's own RunOptions.Budget may be
	// tighter).
	Budget Budget
	// Limits bound every run against runaway programs (limits.go): real
	// time, memory and trace size besides steps, tokens and cost. The
	// zero value limits nothing; Main uses DefaultLimits.
	Limits Limits
	// Retry is the default policy of llm, judge and tool calls; nil means
	// DefaultRetryPolicy().
	Retry *RetryPolicy
	// MaxConcurrency bounds the branches of a parallel block that run at
	// once when the block gives no limit (0: all of them).
	MaxConcurrency int

	// RealTime makes runs use the real clock: waits and backoffs sleep,
	// the trace has real times. By default runs use a virtual clock that
	// starts at 0 and advances only by waits and backoffs, so a trace is
	// the same bytes every time.
	RealTime bool

	// OnEvent, if set, receives every emitted event (not those a resumed
	// run serves from its journal: they were delivered before).
	OnEvent func(name string, payload Value)

	// Sleep waits for real (backoffs of real providers, waits in real
	// time); nil: a timer. Now is the real clock; nil: time.Now. Tests
	// replace them.
	Sleep func(ctx context.Context, d time.Duration) error
	Now   func() time.Time
}

// RetryPolicy is how the run retries failed llm, judge and tool calls (a
// program-level policy: transient failures of a service, such as HTTP 429
// or 503, are retried inside its provider). A call's options override it:
// "retries" (a number of retries), "timeout" (seconds per attempt),
// "retry_on" (a list of error kinds).
type RetryPolicy struct {
	Retries    int           // retries after the first attempt
	Backoff    time.Duration // the wait before the first retry; it doubles for each next one
	MaxBackoff time.Duration // the longest wait (0: no limit; a longer Retry-After is still honoured)
	Timeout    time.Duration // per attempt (0: none)
	On         []string      // the retryable error kinds
}

// DefaultRetryPolicy returns the policy a host uses unless told
// otherwise: no retries (a language's own retry rules decide, through the
// options), a backoff of 1 s doubling up to 30 s when a call asks for
// retries (nano-vm's min(2^(n-1), 30) s), a 120 s timeout per attempt,
// retrying "timeout", "rate_limit", "unavailable" and "conflict".
func DefaultRetryPolicy() RetryPolicy {
	return RetryPolicy{
		Retries:    0,
		Backoff:    time.Second,
		MaxBackoff: 30 * time.Second,
		Timeout:    120 * time.Second,
		On:         []string{"timeout", "rate_limit", "unavailable", "conflict"},
	}
}

func (p *RetryPolicy) retryable(kind string) bool {
	for _, k := range p.On {
		if k == kind {
			return true
		}
	}
	return false
}

// delay is the wait before retry number n (1 for the first retry).
func (p *RetryPolicy) delay(n int, retryAfter time.Duration) time.Duration {
	d := p.Backoff
	for i := 1; i < n && d < time.Hour*24*365; i++ {
		d *= 2
		if p.MaxBackoff > 0 && d >= p.MaxBackoff {
			break
		}
	}
	if p.MaxBackoff > 0 && d > p.MaxBackoff {
		d = p.MaxBackoff
	}
	if retryAfter > d {
		d = retryAfter
	}
	return d
}

// Budget limits a run; zero fields are no limit. Budgets are checked
// before each step (the step that crosses a limit completes, the next
// one is refused with status budget_exceeded), except Stalled, checked
// after each step.
type Budget struct {
	Steps   int           // steps executed
	Tokens  int           // prompt + completion tokens
	Cost    float64       // USD
	Stalled int           // steps in a row that leave the state unchanged (status stalled)
	Wall    time.Duration // time since the run started, on the run's clock
}

// Merge returns the tighter of two budgets, field by field.
func (b Budget) Merge(o Budget) Budget {
	minInt := func(x, y int) int {
		if x == 0 || (y != 0 && y < x) {
			return y
		}
		return x
	}
	b.Steps = minInt(b.Steps, o.Steps)
	b.Tokens = minInt(b.Tokens, o.Tokens)
	b.Stalled = minInt(b.Stalled, o.Stalled)
	if b.Cost == 0 || (o.Cost != 0 && o.Cost < b.Cost) {
		b.Cost = o.Cost
	}
	if b.Wall == 0 || (o.Wall != 0 && o.Wall < b.Wall) {
		b.Wall = o.Wall
	}
	return b
}

func (b Budget) limited() bool {
	return b.Steps > 0 || b.Tokens > 0 || b.Cost > 0 || b.Wall > 0
}

// Host holds what the runs of a process share: providers, tools,
// persistent state, budgets and clock. Configure it once; it is safe for
// concurrent runs.
type Host struct {
	cfg   Config
	retry RetryPolicy
	store Store
	tools atomic.Pointer[map[string]ToolFunc]
	sleep func(ctx context.Context, d time.Duration) error
	now   func() time.Time
}

// NewHost returns a host for cfg.
func NewHost(cfg Config) *Host {
	h := &Host{cfg: cfg, store: cfg.State, sleep: cfg.Sleep, now: cfg.Now}
	if cfg.Retry != nil {
		h.retry = *cfg.Retry
	} else {
		h.retry = DefaultRetryPolicy()
	}
	if h.store == nil {
		h.store = NewMemoryStore()
	}
	if h.sleep == nil {
		h.sleep = sleepCtx
	}
	if h.now == nil {
		h.now = time.Now
	}
	m := map[string]ToolFunc{}
	h.tools.Store(&m)
	return h
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// RegisterTool registers a tool written in Go; it is asked before the
// configured tool providers. Safe to call while runs are going on.
func (h *Host) RegisterTool(name string, fn ToolFunc) {
	for {
		old := h.tools.Load()
		m := make(map[string]ToolFunc, len(*old)+1)
		for k, v := range *old {
			m[k] = v
		}
		m[name] = fn
		if h.tools.CompareAndSwap(old, &m) {
			return
		}
	}
}

// Store returns the host's persistent state.
func (h *Host) Store() Store { return h.store }

// RunOptions configure one execution.
type RunOptions struct {
	Context context.Context // nil: context.Background(); cancelling it ends the run with status cancelled
	Program string          // the program's identity (journal header)
	// ProgramHash identifies the program's code (the Go backend's
	// ProgramHash constant); "" means the sha256 of Program. It goes into
	// every idempotency key.
	ProgramHash string
	// RunID is the run's id, from which its idempotency keys derive, for
	// a run without a journal, or whose journal has none; "" draws a new
	// random one. A journal's own run id always wins (a resumed run keeps
	// the original's keys).
	RunID  string
	Input  Value  // what Run.Input returns
	Budget Budget // the program's own budgets (merged with the host's: the tighter wins)

	Trace     io.Writer // JSON Lines trace; nil: none
	Snapshots bool      // put the state hash after each step in Result.Snapshots

	Journal *Journal
	Mode    JournalMode
	// Resume resumes a suspended run: the wait the journal says the run
	// was suspended at returns the resumption event. It needs Mode
	// JournalResume.
	Resume *Resumption
	// Sequential runs the branches of parallel blocks one at a time, in
	// branch order, whatever their limit: for a host that cannot run
	// them at once (the Forge Machine runs each branch on a copy of its
	// machine and needs it only when asked to run them one at a time).
	// The outcome is the same, as Parallel's never depends on timing;
	// only the real time differs.
	Sequential bool
}

// Resumption is what a suspended run is resumed with: a payload, and
// where it comes from (nano-vm's WebhookEvent: "WEBHOOK", "OPERATOR" or
// "TIMER"; "" means "WEBHOOK").
type Resumption struct {
	Payload Value
	Source  string
}

// Event returns the resumption as the suspended wait's reply:
// {"payload": …, "source": …}.
func (r Resumption) Event() Value {
	src := r.Source
	if src == "" {
		src = "WEBHOOK"
	}
	return Object(Field{"payload", r.Payload}, Field{"source", String(src)})
}

// Execute runs program once: NewRun(opts).Execute(program).
func (h *Host) Execute(opts RunOptions, program func(*Run) Value) *Result {
	return h.NewRun(opts).Execute(program)
}

// NewRun prepares one execution.
func (h *Host) NewRun(opts RunOptions) *Run {
	r := &Run{h: h, ctx: opts.Context, input: opts.Input, outputs: emptyObject, exports: emptyObject}
	if r.ctx == nil {
		r.ctx = context.Background()
	}
	r.stepNames = r.stepNamesBuf[:0]
	r.siteCounts = r.siteCountBuf[:0]
	r.progName, r.progHash, r.runIDOpt = opts.Program, opts.ProgramHash, opts.RunID
	r.sequential = opts.Sequential
	budget := h.cfg.Budget.Merge(opts.Budget)
	limits := h.cfg.Limits
	r.limited = budget.limited() || limits.any()
	r.real = h.cfg.RealTime
	r.tracing = opts.Trace != nil
	r.track = budget.Stalled > 0 || r.tracing || opts.Snapshots
	if !r.limited && !r.real && !r.track && opts.Journal == nil && opts.Resume == nil {
		return r // the fast path: nothing more to set up
	}
	x := r.features()
	x.budget = budget
	x.limits, x.hasLimits = limits, limits.any()
	if limits.Wall > 0 {
		x.realStart = h.now()
	}
	x.program = opts.Program
	if r.real {
		x.t0 = h.now()
	}
	x.tw = opts.Trace
	x.wantSnaps = opts.Snapshots
	if r.track {
		x.stepOuts, x.stateWritten = emptyObject, emptyObject
	}
	r.j = opts.Journal
	x.mode = opts.Mode
	x.shared = &sharedState{}
	if opts.Resume != nil {
		ev := opts.Resume.Event()
		x.shared.resume = &ev
	}
	return r
}

// msOf returns d in milliseconds.
func msOf(d time.Duration) float64 {
	return math.Round(float64(d)/1e3) / 1e3
}
