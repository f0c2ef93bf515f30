package distributed

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/dbos-inc/dbos-transact-golang/dbos"
	"github.com/dbos-inc/dbos-transact-golang/dbos/internals"

	"github.com/genesis-toolchain/genesis/forge/bytecode"
	"github.com/genesis-toolchain/genesis/forge/host"
	"github.com/genesis-toolchain/genesis/runtime"
)

// Program is an agent program a worker serves: its name and program
// hash, and the Executor that runs its executions — in the worker's
// process on the Forge Machine (LoadProgram), or each in a child process
// of a compiled Go program (NewProcessProgram).
type Program struct {
	Name, Hash string
	exec       Executor
}

// Executor executes a program's runs, one execution of a run per call:
// the same workflow drives every kind of program.
type Executor interface {
	// Execute runs e once on h (the worker's host: an executor of its
	// own, such as a child process, may ignore it) until the run ends
	// or suspends. Every journal line the execution writes goes to
	// e.Sink, in order, and is durable when AppendLine returns. An
	// error is the execution's own failure (not a run's): the workflow
	// ends with it.
	Execute(h *runtime.Host, e *Execution) (*Outcome, error)
}

// Execution is one execution of a run.
type Execution struct {
	// Program and ProgramHash identify the program (RunOptions).
	Program, ProgramHash string
	// RunID is the run's id (its idempotency keys derive from it).
	RunID string
	// Input is the run's input object.
	Input runtime.Value
	// Journal holds the journal lines earlier executions of the run
	// recorded, header first: empty for a new run, which starts a
	// journal (runtime.NewSinkJournal), else the execution continues
	// it in mode resume (runtime.ResumeSinkJournal).
	Journal []byte
	// Sink receives the execution's new journal lines.
	Sink runtime.JournalSink
	// Resume, when not nil, is the resumption of the suspended run.
	Resume *runtime.Resumption
}

// Outcome is what an execution ended with.
type Outcome struct {
	// Result is the run's result, and JSON its encoding, as genesisc
	// run writes it (without the newline).
	Result *runtime.Result
	JSON   []byte
	// Trace is the execution's JSON Lines trace.
	Trace []byte
}

// NewProgram returns the program called name, of hash hash, whose
// executions x runs.
func NewProgram(name, hash string, x Executor) (*Program, error) {
	if name == "" || hash == "" {
		return nil, errors.New("a program needs a name and a program hash")
	}
	if x == nil {
		return nil, errors.New("a program needs an executor")
	}
	return &Program{Name: name, Hash: hash, exec: x}, nil
}

// LoadProgram loads an agent program compiled for the Forge Machine,
// whose runs execute in the worker's process.
func LoadProgram(p *bytecode.Program) (*Program, error) {
	a, err := host.LoadAgent(p)
	if err != nil {
		return nil, err
	}
	if a.Meta.ProgramHash == "" {
		return nil, errors.New("the program has no program hash (an agent program compiled by an older genesisc?)")
	}
	f := &forgeExecutor{code: p, limits: a.AgentLimits(), agents: []*host.Agent{a}}
	return &Program{Name: a.Meta.Program, Hash: a.Meta.ProgramHash, exec: f}, nil
}

// forgeExecutor runs a program on the Forge Machine in the worker's
// process.
type forgeExecutor struct {
	code   *bytecode.Program
	limits host.Limits
	// agents are loaded agents not in use: an Agent runs one run at a
	// time (it keeps its machine for the next).
	mu     sync.Mutex
	agents []*host.Agent
}

func (f *forgeExecutor) agent() (*host.Agent, error) {
	f.mu.Lock()
	if n := len(f.agents); n > 0 {
		a := f.agents[n-1]
		f.agents = f.agents[:n-1]
		f.mu.Unlock()
		return a, nil
	}
	f.mu.Unlock()
	return host.LoadAgent(f.code)
}

func (f *forgeExecutor) release(a *host.Agent) {
	f.mu.Lock()
	f.agents = append(f.agents, a)
	f.mu.Unlock()
}

// run runs the program once on h, as genesisc run --target forge does
// (the machine's default limits).
func (f *forgeExecutor) run(h *runtime.Host, ropts runtime.RunOptions) (*runtime.Result, error) {
	a, err := f.agent()
	if err != nil {
		return nil, err
	}
	defer f.release(a)
	opts := host.AgentOptions{Limits: f.limits}
	if l := runtime.ValueLimit(); l > 0 {
		opts.Values = uint64(l) * 4 // as host.AgentCommand does
	}
	res, _ := a.Run(h, ropts, opts)
	return res, nil
}

func (f *forgeExecutor) Execute(h *runtime.Host, e *Execution) (*Outcome, error) {
	var j *runtime.Journal
	var err error
	mode := runtime.JournalResume
	if len(e.Journal) == 0 {
		j, err = runtime.NewSinkJournal(e.Program, e.RunID, e.Sink)
		mode = runtime.JournalRecord
	} else {
		j, err = runtime.ResumeSinkJournal(e.Journal, e.Sink)
	}
	if err != nil {
		return nil, fmt.Errorf("the run's journal: %w", err)
	}
	var trace bytes.Buffer
	res, err := f.run(h, runtime.RunOptions{
		// Not the workflow's context: stopping the worker must not end
		// the run as cancelled; another worker continues it.
		Context:     context.Background(),
		Program:     e.Program,
		ProgramHash: e.ProgramHash,
		RunID:       e.RunID,
		Input:       e.Input,
		Journal:     j,
		Mode:        mode,
		Resume:      e.Resume,
		Trace:       &trace,
	})
	if err != nil {
		return nil, err
	}
	return &Outcome{Result: res, JSON: res.AppendJSON(nil), Trace: trace.Bytes()}, nil
}

// Execute runs a program served in the worker's process (LoadProgram)
// once on h with ropts, as a worker's execution does, outside any
// workflow (tests and benchmarks compare a worker's runs with it). A
// program whose executions run elsewhere (NewProcessProgram) cannot.
func (p *Program) Execute(h *runtime.Host, ropts runtime.RunOptions) (*runtime.Result, error) {
	f, ok := p.exec.(*forgeExecutor)
	if !ok {
		return nil, fmt.Errorf("%s runs in processes of its own, not in this one", p.Name)
	}
	return f.run(h, ropts)
}

// WorkerConfig configures a worker.
type WorkerConfig struct {
	// DB is the engine's database: postgres://… or sqlite:PATH.
	DB string
	// Programs are the programs the worker serves (at least one).
	Programs []*Program
	// Host runs the programs: providers, limits, state.
	Host *runtime.Host
	// Concurrency is how many runs the worker executes at once (per
	// program queue); ≤ 0: DefaultConcurrency.
	Concurrency int
	// Poll is how often an idle worker looks for queued runs; ≤ 0:
	// DefaultPoll.
	Poll time.Duration
	// Heartbeat is how often the worker says it is alive, and
	// DeadAfter how long a worker may stay silent before the others
	// recover its runs; ≤ 0: the defaults.
	Heartbeat, DeadAfter time.Duration
	// Log receives the engine's warnings and errors (nil: none).
	Log io.Writer
}

// Defaults of WorkerConfig.
const (
	DefaultConcurrency = 4
	DefaultPoll        = 200 * time.Millisecond
	DefaultHeartbeat   = 500 * time.Millisecond
	DefaultDeadAfter   = 5 * time.Second
)

// Worker is a running worker process's engine.
type Worker struct {
	cfg      WorkerConfig
	ctx      dbos.Context
	programs map[string]*Program
	queues   []string
	exec     string
	hb       *heartbeat
	active   atomic.Int64
	stopHB   context.CancelFunc
	hbDone   chan struct{}
	// stopping is set by Stop: the worker executes no run it takes
	// from then on (workflow).
	stopping atomic.Bool
	// Runs counts the runs this worker finished (bench, tests).
	Runs atomic.Int64
}

// NewExecutorID returns a new executor id: the host name and a random
// suffix, unique among the workers of a database.
func NewExecutorID() string {
	var b [6]byte
	rand.Read(b[:])
	name, _ := os.Hostname()
	if name == "" {
		name = "worker"
	}
	return "genesis-" + name + "-" + hex.EncodeToString(b[:])
}

// StartWorker connects to the database, registers the run workflow and
// the programs' queues, and starts executing runs; it returns once the
// worker is taking runs.
func StartWorker(ctx context.Context, cfg WorkerConfig) (*Worker, error) {
	if err := CheckURL(cfg.DB); err != nil {
		return nil, err
	}
	if len(cfg.Programs) == 0 {
		return nil, errors.New("a worker needs at least one program")
	}
	if cfg.Host == nil {
		return nil, errors.New("a worker needs a host")
	}
	if cfg.Concurrency <= 0 {
		cfg.Concurrency = DefaultConcurrency
	}
	if cfg.Poll <= 0 {
		cfg.Poll = DefaultPoll
	}
	if cfg.Heartbeat <= 0 {
		cfg.Heartbeat = DefaultHeartbeat
	}
	if cfg.DeadAfter <= 0 {
		cfg.DeadAfter = DefaultDeadAfter
	}
	w := &Worker{cfg: cfg, programs: make(map[string]*Program), exec: NewExecutorID()}
	for _, p := range cfg.Programs {
		if _, dup := w.programs[p.Hash]; dup {
			continue
		}
		w.programs[p.Hash] = p
		w.queues = append(w.queues, QueueName(p.Hash))
	}
	sort.Strings(w.queues)
	// The engine's context is not ctx: cancelling the engine's own
	// context cancels its runs durably (status CANCELLED), while
	// stopping a worker must leave them to the others (Stop).
	dctx, err := withMigrationLock(ctx, cfg.DB, func() (dbos.Context, error) {
		return dbos.NewContext(context.WithoutCancel(ctx), newConfig(cfg.DB, w.exec, cfg.Log))
	})
	if err != nil {
		return nil, fmt.Errorf("connecting to %s: %w", redact(cfg.DB), err)
	}
	w.ctx = dctx
	dbos.RegisterWorkflow(dctx, w.workflow, dbos.WithWorkflowName(WorkflowName))
	for _, q := range w.queues {
		if _, err := dbos.RegisterQueue(dctx, q, dbos.WithWorkerConcurrency(cfg.Concurrency),
			dbos.WithQueueBasePollingInterval(cfg.Poll)); err != nil {
			dbos.Shutdown(dctx, 5*time.Second)
			return nil, fmt.Errorf("registering the queue %s: %w", q, err)
		}
	}
	dbos.ListenQueues(dctx, w.queues...)
	rt, err := internals.RuntimeOf(dctx)
	if err != nil {
		dbos.Shutdown(dctx, 5*time.Second)
		return nil, err
	}
	// Registered before the worker takes runs: a worker that dies at
	// once still has a row the others see go stale.
	w.hb, err = newHeartbeat(rt, w.exec, strings.Join(w.queues, " "))
	if err != nil {
		dbos.Shutdown(dctx, 5*time.Second)
		return nil, err
	}
	if err := w.hb.beat(ctx); err != nil {
		dbos.Shutdown(dctx, 5*time.Second)
		return nil, fmt.Errorf("registering the worker: %w", err)
	}
	if err := dbos.Launch(dctx); err != nil {
		dbos.Shutdown(dctx, 5*time.Second)
		return nil, fmt.Errorf("starting the engine: %w", err)
	}
	hbctx, cancel := context.WithCancel(context.Background())
	w.stopHB, w.hbDone = cancel, make(chan struct{})
	go w.heartbeats(hbctx, rt)
	return w, nil
}

// ExecutorID returns the worker's executor id.
func (w *Worker) ExecutorID() string { return w.exec }

// Active returns the number of runs the worker is executing.
func (w *Worker) Active() int { return int(w.active.Load()) }

// heartbeats beats every Heartbeat and recovers the runs of the workers
// silent for DeadAfter, until ctx is done.
func (w *Worker) heartbeats(ctx context.Context, rt internals.Runtime) {
	defer close(w.hbDone)
	t := time.NewTicker(w.cfg.Heartbeat)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if err := w.hb.beat(ctx); err != nil {
			if ctx.Err() == nil {
				w.logf("heartbeat: %v", err)
			}
			continue
		}
		dead, err := w.hb.stale(ctx, w.cfg.DeadAfter)
		if err != nil {
			if ctx.Err() == nil {
				w.logf("looking for dead workers: %v", err)
			}
			continue
		}
		for _, id := range dead {
			hs, err := rt.RecoverPendingWorkflows([]string{id})
			if err != nil {
				w.logf("recovering the runs of worker %s: %v", id, err)
				continue
			}
			if len(hs) > 0 {
				w.logf("worker %s stopped: %d of its runs queued again", id, len(hs))
			}
		}
	}
}

func (w *Worker) logf(format string, a ...any) {
	if w.cfg.Log != nil {
		fmt.Fprintf(w.cfg.Log, "genesisc worker %s: %s\n", w.exec, fmt.Sprintf(format, a...))
	}
}

// Stop stops taking runs, waits up to drain for the runs in progress to
// end, then leaves: its heartbeat row is marked stale, so that the
// others recover at once the runs it did not finish.
func (w *Worker) Stop(drain time.Duration) {
	w.stopping.Store(true)
	dbos.ListenQueues(w.ctx, "genesis-stopped-"+w.exec) // no queue of that name: take nothing more
	deadline := time.Now().Add(drain)
	for w.active.Load() > 0 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	w.stopHB()
	<-w.hbDone
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := w.hb.leave(ctx); err != nil {
		w.logf("leaving: %v", err)
	}
	if w.active.Load() == 0 {
		// Nothing left for the others: close the engine cleanly. (With
		// runs left, the process ends with them in flight, as a crash
		// would, and the others continue them.)
		dbos.Shutdown(w.ctx, drain)
	}
}

// workflow is a run's workflow: it rebuilds the run's journal from the
// steps an earlier execution completed, then runs the program with the
// runtime's resume until it ends, waiting for a resumption message each
// time it suspends.
func (w *Worker) workflow(ctx dbos.Context, in RunInput) (out RunOutput, err error) {
	if w.stopping.Load() {
		// DBOS applies a new listen set at its next reconciliation, up
		// to a second later: until then a stopping worker may still
		// take a run, even one the others just recovered from it. It
		// must not execute it, or the run's call in flight is made
		// once more. It holds the run without taking a step until the
		// engine closes (a cancellation, which DBOS does not record)
		// or the process ends; the others, which see this worker gone,
		// queue the run again.
		<-ctx.Done()
		return RunOutput{}, ctx.Err()
	}
	w.active.Add(1)
	defer w.active.Add(-1)
	defer func() {
		if err != nil && ctx.Err() != nil {
			// The engine is shutting down: a cancellation, which DBOS
			// does not record, so the run is recovered; another error
			// would end the workflow for good.
			err = ctx.Err()
		}
	}()
	p := w.programs[in.ProgramHash]
	if p == nil {
		// Not reached through the queues (a worker listens to its
		// programs' only); a run enqueued by hand is refused.
		return RunOutput{}, fmt.Errorf("this worker does not serve the program hash %s (it serves %s)", in.ProgramHash, strings.Join(w.queues, ", "))
	}
	input, err := parseInput(in.Input)
	if err != nil {
		return RunOutput{}, fmt.Errorf("the run's input: %w", err)
	}
	id, err := dbos.GetWorkflowID(ctx)
	if err != nil {
		return RunOutput{}, err
	}
	rec, err := w.recover(ctx, id)
	if err != nil {
		return RunOutput{}, err
	}
	sink := &stepSink{ctx: ctx, text: rec.text}
	awaiting, _, err := journalState(sink.text)
	if err != nil {
		return RunOutput{}, err
	}
	var resume *runtime.Resumption
	if rec.received != nil && awaiting != "" {
		resume = rec.received
	}
	waiting := rec.waiting
	for {
		awaiting, ended, err := journalState(sink.text)
		if err != nil {
			return RunOutput{}, err
		}
		if resume == nil && (waiting || (awaiting != "" && ended == runtime.StatusSuspended)) {
			// Suspended: wait for genesisc resume's message. A run
			// waiting is not in progress: stopping does not wait for it.
			w.active.Add(-1)
			resume, err = receive(ctx)
			w.active.Add(1)
			if err != nil {
				return RunOutput{}, err
			}
			waiting = false
		}
		out, err := p.exec.Execute(w.cfg.Host, &Execution{
			Program:     p.Name,
			ProgramHash: p.Hash,
			RunID:       id,
			Input:       input,
			Journal:     bytes.Clone(sink.text),
			Sink:        sink,
			Resume:      resume,
		})
		if err != nil {
			return RunOutput{}, err
		}
		res := out.Result
		if res.Error != nil && res.Error.Kind == "journal" && sink.failed() {
			// The engine could not record a step (the database is
			// gone, or the run was taken over): this execution must
			// not finish the run.
			return RunOutput{}, fmt.Errorf("recording the run's steps: %s", res.Error.Message)
		}
		if res.Status != runtime.StatusSuspended {
			w.Runs.Add(1)
			return RunOutput{Result: string(out.JSON), Trace: string(out.Trace)}, nil
		}
		resume = nil
	}
}

// journalState returns the step a run's journal text is suspended at
// and not resumed yet, and how its last execution ended ("" for an
// empty text).
func journalState(text []byte) (awaiting string, ended runtime.Status, err error) {
	if len(text) == 0 {
		return "", "", nil
	}
	j, err := runtime.ResumeSinkJournal(text, discardSink{})
	if err != nil {
		return "", "", fmt.Errorf("the run's journal: %w", err)
	}
	return j.Awaiting(), j.Ended(), nil
}

// discardSink is the sink of a journal only read.
type discardSink struct{}

func (discardSink) AppendLine([]byte) error { return errors.New("a journal only read") }

// receive waits for the message resuming the run.
func receive(ctx dbos.Context) (*runtime.Resumption, error) {
	for {
		m, err := dbos.Recv[string](ctx, ResumeTopic, 24*time.Hour)
		if err != nil {
			return nil, fmt.Errorf("waiting for the resumption: %w", err)
		}
		if m != "" {
			return decodeResumption(m)
		}
	}
}

func decodeResumption(m string) (*runtime.Resumption, error) {
	v, err := runtime.ParseJSON([]byte(m))
	if err != nil {
		return nil, fmt.Errorf("the resumption message: %w", err)
	}
	payload, _ := v.Get("payload")
	source, _ := v.Get("source")
	return &runtime.Resumption{Payload: payload, Source: source.Str()}, nil
}

// recovered is what the completed steps of a run's workflow hold.
type recovered struct {
	text []byte // the journal's lines
	// received is a resumption received after the last journal line
	// (the run did not get to record it); waiting says that the
	// execution was waiting for one when it stopped.
	received *runtime.Resumption
	waiting  bool
}

// recover reads the steps the run's earlier executions completed, and
// takes them again in order, so that the workflow's next step has the
// next step number: each journal line step returns its recorded line, a
// receive its recorded message.
func (w *Worker) recover(ctx dbos.Context, id string) (*recovered, error) {
	// Listed with the worker's context, outside the workflow: inside
	// it, the listing would be a step of its own.
	steps, err := dbos.GetWorkflowSteps(w.ctx, id, dbos.WithStepsLoadOutput(false))
	if err != nil {
		return nil, fmt.Errorf("reading the run's steps: %w", err)
	}
	sort.Slice(steps, func(a, b int) bool { return steps[a].StepID < steps[b].StepID })
	rec := &recovered{}
	lastRecv := -10
	for i, s := range steps {
		switch {
		case strings.HasPrefix(s.StepName, stepPrefix):
			line, err := dbos.RunAsStep(ctx, func(context.Context) (string, error) {
				return "", errors.New("a journal step that was not recorded")
			}, dbos.WithStepName(s.StepName))
			if err != nil {
				return nil, fmt.Errorf("reading step %d (%s): %w", s.StepID, s.StepName, err)
			}
			rec.text = append(rec.text, line...)
			rec.received = nil
		case s.StepName == "DBOS.recv":
			m, err := dbos.Recv[string](ctx, ResumeTopic, time.Second)
			if err != nil {
				return nil, fmt.Errorf("reading step %d (%s): %w", s.StepID, s.StepName, err)
			}
			lastRecv = s.StepID
			if m != "" {
				if rec.received, err = decodeResumption(m); err != nil {
					return nil, err
				}
			}
		case s.StepName == "DBOS.sleep" && s.StepID == lastRecv+1:
			// The receive's timeout, taken with it.
		case s.StepName == "DBOS.sleep" && i == len(steps)-1:
			// A receive's timeout whose receive did not complete: the
			// execution was waiting; the next receive takes both.
			rec.waiting = true
		default:
			return nil, fmt.Errorf("step %d of run %s is %q, which a run's workflow does not take", s.StepID, id, s.StepName)
		}
	}
	return rec, nil
}

// stepSink writes journal lines as steps of the run's workflow, and
// keeps the run's journal text: the lines recorded, in order.
type stepSink struct {
	ctx  dbos.Context
	err  atomic.Bool
	text []byte
}

func (s *stepSink) AppendLine(line []byte) error {
	str := string(line)
	ran := false
	_, err := dbos.RunAsStep(s.ctx, func(context.Context) (string, error) {
		ran = true
		return str, nil
	}, dbos.WithStepName(stepName(line)))
	if err == nil && !ran {
		// The engine answered with a step another execution recorded:
		// the run was recovered elsewhere while this execution went
		// on (a worker taken for dead). This one stops at once, its
		// effect in flight the only one made twice.
		err = errors.New("the run is continued by another worker")
	}
	if err != nil {
		s.err.Store(true)
		return err
	}
	s.text = append(s.text, line...)
	return nil
}

func (s *stepSink) failed() bool { return s.err.Load() }

// stepName names the step of a journal line for the engine's listings:
// the line's kind and step identity ("genesis: tool s1 @ prog.json:2:3").
func stepName(line []byte) string {
	v, err := runtime.ParseJSON(bytes.TrimSpace(line))
	if err != nil {
		return stepPrefix + "line"
	}
	get := func(k string) (string, bool) {
		x, ok := v.Get(k)
		if !ok {
			return "", false
		}
		if s, isStr := x.AsString(); isStr {
			return s, true
		}
		return x.String(), true
	}
	step, _ := get("step")
	if f, ok := get("format"); ok {
		return stepPrefix + f
	}
	if end, ok := get("end"); ok {
		return stepPrefix + "end " + end
	}
	if eff, ok := get("effect"); ok {
		if _, pending := v.Get("pending"); pending {
			return stepPrefix + eff + " pending " + step
		}
		return stepPrefix + eff + " " + step
	}
	if n, ok := get("attempt"); ok {
		return stepPrefix + "attempt " + n + " " + step
	}
	if _, ok := v.Get("resume"); ok {
		return stepPrefix + "resume " + step
	}
	return stepPrefix + "line " + step
}

// redact drops the password of a database URL, for messages.
func redact(url string) string {
	scheme, rest, ok := strings.Cut(url, "://")
	if !ok {
		return url
	}
	at := strings.LastIndex(rest, "@")
	if at < 0 {
		return url
	}
	user, _, _ := strings.Cut(rest[:at], ":")
	return scheme + "://" + user + "@" + rest[at+1:]
}

// InProcess reports whether the program's runs execute in the worker's
// process (on its host), rather than in processes of their own.
func (p *Program) InProcess() bool {
	_, ok := p.exec.(*forgeExecutor)
	return ok
}
