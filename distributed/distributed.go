// Package distributed runs compiled agent programs on DBOS Transact
// (github.com/dbos-inc/dbos-transact-golang): a run is a durable workflow
// on a queue of its program, stored in Postgres (or SQLite on one
// machine), executed by any number of worker processes. Every line the
// runtime journals — each effect's reply, attempt, suspension, resumption
// — is the output of one step of the run's workflow, so a run whose
// worker dies is continued by another worker from its last completed
// step, with the runtime's own resume (docs/distributed.md).
//
// The runtime package does not depend on this one: a program's journal
// is given a runtime.JournalSink that writes steps.
package distributed

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"time"

	"github.com/dbos-inc/dbos-transact-golang/dbos"
	_ "github.com/dbos-inc/dbos-transact-golang/dbos/driver/sqlite" // sqlite: URLs
	"github.com/jackc/pgx/v5"

	"github.com/genesis-toolchain/genesis/runtime"
)

// Names in the engine's database. They are part of the stored format:
// a worker finds the runs a submitter enqueued by them.
const (
	// AppName is the DBOS application every worker and client belongs to.
	AppName = "genesis"
	// AppVersion is the DBOS application version of every worker: the
	// program's own version is its hash, carried by the run (its queue
	// and input), so that any worker serving a program recovers its runs.
	AppVersion = "genesis-distributed-1"
	// WorkflowName is the registered name of a run's workflow.
	WorkflowName = "genesis.run"
	// ResumeTopic is the topic of the message that resumes a suspended run.
	ResumeTopic = "genesis.resume"
	// stepPrefix starts the name of every step holding a journal line.
	stepPrefix = "genesis: "
)

// QueueName returns the queue of the runs of the program whose hash is
// hash: a worker listens to the queues of the programs it serves only.
func QueueName(hash string) string {
	if len(hash) > 16 {
		hash = hash[:16]
	}
	return "genesis-" + hash
}

// RunInput is what a run's workflow is started with.
type RunInput struct {
	// Program is the program's name (runtime.RunOptions.Program).
	Program string `json:"program"`
	// ProgramHash identifies the program's code: only a worker serving
	// that hash runs it.
	ProgramHash string `json:"program_hash"`
	// Input is the run's input object, as JSON (runtime.AppendJSON).
	Input string `json:"input"`
}

// RunOutput is a finished run's workflow output.
type RunOutput struct {
	// Result is the run's result JSON (runtime.Result.AppendJSON).
	Result string `json:"result"`
	// Trace is the JSON Lines trace of the run's last execution.
	Trace string `json:"trace"`
}

// Resumption is the message that resumes a suspended run.
type Resumption struct {
	Payload string `json:"payload"` // JSON
	Source  string `json:"source"`
}

// CheckURL checks a --db URL: postgres://…, postgresql://… or
// sqlite:PATH.
func CheckURL(url string) error {
	switch {
	case strings.HasPrefix(url, "postgres://"), strings.HasPrefix(url, "postgresql://"):
		return nil
	case strings.HasPrefix(url, "sqlite:"):
		if strings.TrimPrefix(url, "sqlite:") == "" {
			return errors.New("sqlite: needs a database file path (sqlite:PATH)")
		}
		return nil
	case url == "":
		return errors.New("no database URL: give --db postgres://USER@HOST/DB or --db sqlite:PATH")
	}
	return fmt.Errorf("database URL %q: want postgres://… or sqlite:PATH", url)
}

// logger is the engine's logger: warnings and errors only, on w.
func logger(w io.Writer) *slog.Logger {
	if w == nil {
		w = io.Discard
	}
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: slog.LevelWarn}))
}

// newConfig is the DBOS configuration of a worker or client on url.
func newConfig(url, executor string, log io.Writer) dbos.Config {
	return dbos.Config{
		AppName:                AppName,
		DatabaseURL:            url,
		ApplicationVersion:     AppVersion,
		ExecutorID:             executor,
		Logger:                 logger(log),
		SystemDBStartupTimeout: 30 * time.Second,
	}
}

// parseInput returns the input object of a run.
func parseInput(s string) (runtime.Value, error) {
	if s == "" {
		return runtime.Object(), nil
	}
	return runtime.ParseJSON([]byte(s))
}

// initRetries bounds the retries of connecting to a new database: DBOS
// creates its schema when it is missing, and several processes starting
// at once against a new database race to create it (Postgres answers
// the losers with a unique violation, SQLSTATE 23505); a retry finds it
// made.
const initRetries = 5

// retryInit calls open until it succeeds, fails otherwise than by that
// race, or has tried initRetries times.
func retryInit[T any](open func() (T, error)) (T, error) {
	for i := 0; ; i++ {
		v, err := open()
		if err == nil || i == initRetries-1 || !strings.Contains(err.Error(), "23505") {
			return v, err
		}
		time.Sleep(time.Duration(50*(i+1)) * time.Millisecond)
	}
}

// migrationLockKey is the Postgres advisory lock that processes hold
// while DBOS creates or migrates its tables.
const migrationLockKey = 0x6765_6e19

// withMigrationLock calls open holding, on Postgres, an advisory lock
// that serializes the processes connecting at once: DBOS creates its
// schema when it is missing, and concurrent creations fail (unique
// violations, deadlocks). SQLite serializes them with its file lock.
func withMigrationLock[T any](ctx context.Context, url string, open func() (T, error)) (T, error) {
	if strings.HasPrefix(url, "sqlite:") {
		return retryInit(open)
	}
	var zero T
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		return zero, err
	}
	defer conn.Close(context.Background())
	// Polled, not waited for: a session blocked in pg_advisory_lock is
	// in a statement, whose snapshot the CREATE INDEX CONCURRENTLY of
	// the migrations would wait for.
	for {
		var got bool
		if err := conn.QueryRow(ctx, "SELECT pg_try_advisory_lock($1)", int64(migrationLockKey)).Scan(&got); err != nil {
			return zero, err
		}
		if got {
			break
		}
		select {
		case <-ctx.Done():
			return zero, ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
	defer conn.Exec(context.Background(), "SELECT pg_advisory_unlock($1)", int64(migrationLockKey))
	return retryInit(open)
}
