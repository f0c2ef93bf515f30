package distributed

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	"github.com/dbos-inc/dbos-transact-golang/dbos"

	"github.com/genesis-toolchain/genesis/runtime"
)

// Client submits runs and reads them: genesisc submit, status, runs and
// resume. It runs nothing.
type Client struct {
	c dbos.Client
}

// Open connects a client to the engine's database (creating the
// engine's tables when they are missing).
func Open(ctx context.Context, url string, log io.Writer) (*Client, error) {
	if err := CheckURL(url); err != nil {
		return nil, err
	}
	open := func(log io.Writer) (dbos.Client, error) {
		return dbos.NewClient(ctx, dbos.ClientConfig{DatabaseURL: url, AppName: AppName, Logger: logger(log)})
	}
	c, err := open(nil) // quiet: a new database is no error
	if err != nil && strings.Contains(err.Error(), "schema version") {
		// A new database, no worker connected yet: a client does not
		// create the engine's tables itself.
		c, err = withMigrationLock(ctx, url, func() (dbos.Client, error) {
			if err := dbos.Migrate(ctx, url, dbos.WithMigrateLogger(logger(log))); err != nil {
				return nil, err
			}
			return open(log)
		})
	}
	if err != nil {
		return nil, fmt.Errorf("connecting to %s: %w", redact(url), err)
	}
	return &Client{c: c}, nil
}

// Close disconnects the client.
func (c *Client) Close() { dbos.Shutdown(c.c, 5*time.Second) }

// Submit enqueues a run of the program (its name and hash) with input,
// on the program's queue, and returns the run's id (a runtime run id:
// its idempotency keys derive from it).
func (c *Client) Submit(program, hash string, input runtime.Value) (string, error) {
	id := runtime.NewRunID()
	_, err := dbos.Enqueue[RunOutput](c.c, QueueName(hash), WorkflowName,
		RunInput{Program: program, ProgramHash: hash, Input: string(runtime.AppendJSON(nil, input))},
		dbos.WithEnqueueWorkflowID(id), dbos.WithEnqueueApplicationVersion(AppVersion))
	if err != nil {
		return "", fmt.Errorf("enqueueing the run: %w", err)
	}
	return id, nil
}

// Run is what the engine knows of a run.
type Run struct {
	ID      string
	Program string
	Hash    string
	// Status is the engine's: ENQUEUED, PENDING (running, or suspended
	// waiting for a resumption), SUCCESS (the run ended: its result
	// says how), ERROR, CANCELLED, …
	Status string
	// State says where the run is: queued, running, suspended (waiting
	// for genesisc resume), the result's status once it ended (success,
	// failed, budget_exceeded, …), or the engine's status lower-cased
	// when the workflow itself failed (error, cancelled, …).
	State string
	// Awaiting is the step a suspended run waits at.
	Awaiting string
	// Result is the run's result, when it ended.
	Result *runtime.Result
	// ResultJSON and Trace are the result and trace text.
	ResultJSON, Trace string
	// Usage is the run's LLM usage: the result's, or for a run that has
	// not ended, the journaled calls' so far.
	Usage   runtime.Usage
	Steps   int // the journal lines recorded (runs not ended)
	Error   string
	Created time.Time
	// Executor is the worker running it (or that last ran it).
	Executor string
}

// ErrNoRun is the error of Status for an id the engine does not have.
var ErrNoRun = errors.New("no such run")

// Status returns the run id.
func (c *Client) Status(id string) (*Run, error) {
	ws, err := dbos.ListWorkflows(c.c, dbos.WithFilterWorkflowIDs(id), dbos.WithFilterLoadInput(true), dbos.WithFilterLoadOutput(true))
	if err != nil {
		return nil, err
	}
	if len(ws) == 0 || ws[0].Name != WorkflowName {
		return nil, fmt.Errorf("%w: %s", ErrNoRun, id)
	}
	return c.run(ws[0])
}

// List returns every run, oldest first.
func (c *Client) List() ([]*Run, error) {
	ws, err := dbos.ListWorkflows(c.c, dbos.WithFilterName(WorkflowName), dbos.WithFilterLoadInput(true), dbos.WithFilterLoadOutput(true))
	if err != nil {
		return nil, err
	}
	runs := make([]*Run, 0, len(ws))
	for _, w := range ws {
		r, err := c.run(w)
		if err != nil {
			return nil, err
		}
		runs = append(runs, r)
	}
	sort.SliceStable(runs, func(i, j int) bool {
		if !runs[i].Created.Equal(runs[j].Created) {
			return runs[i].Created.Before(runs[j].Created)
		}
		return runs[i].ID < runs[j].ID
	})
	return runs, nil
}

func (c *Client) run(w dbos.WorkflowStatus) (*Run, error) {
	r := &Run{ID: w.ID, Status: string(w.Status), Created: w.CreatedAt, Executor: w.ExecutorID}
	if w.Error != nil {
		r.Error = w.Error.Error()
	}
	var in RunInput
	if err := decodeAs(w.Input, &in); err == nil {
		r.Program, r.Hash = in.Program, in.ProgramHash
	}
	if w.Status == dbos.WorkflowStatusSuccess {
		var out RunOutput
		if err := decodeAs(w.Output, &out); err != nil {
			return nil, fmt.Errorf("run %s: its output: %w", w.ID, err)
		}
		res, err := runtime.ParseResult([]byte(out.Result))
		if err != nil {
			return nil, fmt.Errorf("run %s: its result: %w", w.ID, err)
		}
		r.Result, r.ResultJSON, r.Trace, r.Usage = res, out.Result, out.Trace, res.Usage
		r.State = string(res.Status)
		return r, nil
	}
	switch w.Status {
	case dbos.WorkflowStatusEnqueued, dbos.WorkflowStatusDelayed:
		r.State = "queued"
	case dbos.WorkflowStatusPending:
		r.State = "running"
	default:
		r.State = strings.ToLower(string(w.Status))
	}
	if w.Status == dbos.WorkflowStatusPending {
		// The usage so far: the journaled LLM calls'.
		ss, err := dbos.GetWorkflowSteps(c.c, w.ID, dbos.WithStepsLoadOutput(true))
		if err != nil {
			return nil, err
		}
		var text []byte
		for _, s := range ss {
			if !strings.HasPrefix(s.StepName, stepPrefix) {
				continue
			}
			line, ok := s.Output.(string)
			if !ok {
				continue
			}
			// A client gets the output as serialized: a JSON string.
			var decoded string
			if json.Unmarshal([]byte(line), &decoded) == nil {
				line = decoded
			}
			text = append(text, line...)
			r.Steps++
		}
		if len(text) > 0 {
			if j, err := runtime.ReadJournal(text); err == nil {
				r.Usage = j.Usage()
				if w.Status == dbos.WorkflowStatusPending && j.Ended() == runtime.StatusSuspended {
					if r.Awaiting = j.Awaiting(); r.Awaiting != "" {
						r.State = "suspended"
					}
				}
			}
		}
	}
	return r, nil
}

// decodeAs converts a decoded workflow input or output (a map from the
// JSON serializer, or the value itself) into v.
func decodeAs(x any, v any) error {
	switch t := x.(type) {
	case nil:
		return errors.New("none")
	case RunInput:
		if p, ok := v.(*RunInput); ok {
			*p = t
			return nil
		}
	case RunOutput:
		if p, ok := v.(*RunOutput); ok {
			*p = t
			return nil
		}
	case string: // the serialized value
		return json.Unmarshal([]byte(t), v)
	}
	b, err := json.Marshal(x)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, v)
}

// Resume sends a suspended run the resumption: the payload (JSON) and
// its source (WEBHOOK, OPERATOR or TIMER; "" is WEBHOOK).
func (c *Client) Resume(id string, payload runtime.Value, source string) error {
	if source == "" {
		source = "WEBHOOK"
	}
	r, err := c.Status(id)
	if err != nil {
		return err
	}
	if r.State != "suspended" && r.State != "running" && r.State != "queued" {
		return fmt.Errorf("run %s has ended (%s): there is nothing to resume", id, r.State)
	}
	msg := runtime.Object(runtime.Field{Key: "payload", Value: payload}, runtime.Field{Key: "source", Value: runtime.String(source)})
	return dbos.Send(c.c, id, string(runtime.AppendJSON(nil, msg)), ResumeTopic)
}

// Wait waits for the run to end and returns it.
func (c *Client) Wait(ctx context.Context, id string, poll time.Duration) (*Run, error) {
	for {
		r, err := c.Status(id)
		if err != nil {
			return nil, err
		}
		if r.State != "queued" && r.State != "running" {
			return r, nil
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(poll):
		}
	}
}

// StepTimes returns when each journal step of the run completed, in
// step order (make bench's per-effect figures).
func (c *Client) StepTimes(id string) ([]time.Time, error) {
	ss, err := dbos.GetWorkflowSteps(c.c, id, dbos.WithStepsLoadOutput(false))
	if err != nil {
		return nil, err
	}
	sort.Slice(ss, func(i, j int) bool { return ss[i].StepID < ss[j].StepID })
	var ts []time.Time
	for _, s := range ss {
		if strings.HasPrefix(s.StepName, stepPrefix) {
			ts = append(ts, s.CompletedAt)
		}
	}
	return ts, nil
}
