package distributed

import (
	"context"
	"database/sql"
	"errors"
	"os"
	"strings"
	"time"

	"github.com/dbos-inc/dbos-transact-golang/dbos"
	"github.com/dbos-inc/dbos-transact-golang/dbos/internals"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// A heartbeat is a worker's row in the table genesis_workers of the
// engine's database: its executor id, the queues it listens to, and the
// time of its last beat on the database's clock (milliseconds), so that
// workers on machines whose clocks differ agree on who is silent. A
// worker that finds another's row older than DeadAfter re-queues that
// worker's pending runs (DBOS's recovery of an executor; see stale). A
// worker that stops cleanly leaves its row stale, so that its runs are
// recovered at once (its row says it stopped).
type heartbeat struct {
	exec, queues string
	pg           *pgxpool.Pool
	db           *sql.DB
}

func newHeartbeat(rt internals.Runtime, exec, queues string) (*heartbeat, error) {
	pool := rt.SystemDB().Pool()
	h := &heartbeat{exec: exec, queues: queues, pg: dbos.PgxPool(pool), db: dbos.SQLDB(pool)}
	if h.pg == nil && h.db == nil {
		return nil, errors.New("the engine's database is neither Postgres nor SQLite")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	const create = `CREATE TABLE IF NOT EXISTS genesis_workers (executor_id TEXT PRIMARY KEY, queues TEXT NOT NULL, heartbeat BIGINT NOT NULL, stopped INTEGER NOT NULL DEFAULT 0)`
	if err := h.exec_(ctx, create); err != nil {
		return nil, err
	}
	return h, nil
}

// now is the database's clock in milliseconds, in SQL.
func (h *heartbeat) now() string { return nowSQL(h.pg != nil) }

// nowSQL is the database's clock in milliseconds, in Postgres's SQL or
// SQLite's.
func nowSQL(postgres bool) string {
	if postgres {
		return `(extract(epoch from clock_timestamp()) * 1000)::bigint`
	}
	return `CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER)`
}

func (h *heartbeat) exec_(ctx context.Context, q string, args ...any) error {
	_, err := h.execN(ctx, q, args...)
	return err
}

func (h *heartbeat) execN(ctx context.Context, q string, args ...any) (int64, error) {
	if h.pg != nil {
		tag, err := h.pg.Exec(ctx, q, args...)
		return tag.RowsAffected(), err
	}
	res, err := h.db.ExecContext(ctx, q, args...)
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

// beat records that the worker is alive.
func (h *heartbeat) beat(ctx context.Context) error {
	return h.exec_(ctx, `INSERT INTO genesis_workers (executor_id, queues, heartbeat) VALUES ($1, $2, `+h.now()+`)
ON CONFLICT (executor_id) DO UPDATE SET heartbeat = excluded.heartbeat, queues = excluded.queues`, h.exec, h.queues)
}

// leave makes the worker's row stale at once: stopped.
func (h *heartbeat) leave(ctx context.Context) error {
	return h.exec_(ctx, `UPDATE genesis_workers SET stopped = 1 WHERE executor_id = $1`, h.exec)
}

// stale returns the workers silent for longer than after. Their rows
// stay: recovering a worker's runs re-queues those still pending under
// its id, which is idempotent (a run another worker took since is
// pending under that one's), so every worker recovers every silent one
// at every beat, and a run a dying worker took at the last moment is
// recovered too. Rows silent for a day are deleted.
func (h *heartbeat) stale(ctx context.Context, after time.Duration) ([]string, error) {
	if err := h.exec_(ctx, `DELETE FROM genesis_workers WHERE heartbeat < `+h.now()+` - $1`, int64(24*time.Hour/time.Millisecond)); err != nil {
		return nil, err
	}
	q := `SELECT executor_id FROM genesis_workers WHERE executor_id <> $1 AND (stopped = 1 OR heartbeat < ` + h.now() + ` - $2) ORDER BY executor_id`
	ms := after.Milliseconds()
	if h.pg != nil {
		rows, err := h.pg.Query(ctx, q, h.exec, ms)
		if err != nil {
			return nil, err
		}
		defer rows.Close()
		return scanIDs(rows)
	}
	rows, err := h.db.QueryContext(ctx, q, h.exec, ms)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	return scanIDs(rows)
}

// idRows is what scanIDs reads of a query's rows: pgx's and
// database/sql's both have it.
type idRows interface {
	Next() bool
	Scan(dest ...any) error
	Err() error
}

// scanIDs returns the one text column of every row.
func scanIDs(rows idRows) ([]string, error) {
	var ids []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, err
		}
		ids = append(ids, id)
	}
	return ids, rows.Err()
}

// LiveWorkers returns how many workers serving the program whose hash
// is hash beat within DeadAfter and have not stopped, by the heartbeat
// table of the database url (0 when no worker ever connected to it).
func LiveWorkers(ctx context.Context, url, hash string) (int, error) {
	if err := CheckURL(url); err != nil {
		return 0, err
	}
	queue := "%" + QueueName(hash) + "%"
	ms := DefaultDeadAfter.Milliseconds()
	if strings.HasPrefix(url, "sqlite:") {
		path := strings.TrimPrefix(url, "sqlite:")
		if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
			return 0, nil
		}
		db, err := sql.Open("sqlite", "file:"+path+"?mode=ro&_pragma=busy_timeout(5000)")
		if err != nil {
			return 0, err
		}
		defer db.Close()
		var n int
		err = db.QueryRowContext(ctx, `SELECT count(*) FROM genesis_workers WHERE stopped = 0 AND queues LIKE $1 AND heartbeat >= `+nowSQL(false)+` - $2`, queue, ms).Scan(&n)
		if err != nil && strings.Contains(err.Error(), "no such table") {
			return 0, nil
		}
		return n, err
	}
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		return 0, err
	}
	defer conn.Close(context.Background())
	var n int
	err = conn.QueryRow(ctx, `SELECT count(*) FROM genesis_workers WHERE stopped = 0 AND queues LIKE $1 AND heartbeat >= `+nowSQL(true)+` - $2`, queue, ms).Scan(&n)
	if err != nil && strings.Contains(err.Error(), "42P01") { // undefined_table
		return 0, nil
	}
	return n, err
}
