package runtime

import (
	"database/sql"
	"errors"
	"strings"
	"sync"

	_ "modernc.org/sqlite" // the pure Go SQLite driver "sqlite": no cgo, so generated programs build anywhere
)

// SQLiteStore is a Store kept in an embedded SQLite database (the pure Go
// modernc.org/sqlite): one table
//
//	state(key TEXT PRIMARY KEY, value TEXT NOT NULL)
//
// whose values are the JSON encoding of the runtime's values (AppendJSON,
// read back with ParseJSONExt, so error values round-trip). Every Put is a
// transaction of its own, committed before Put returns: a put that
// returned survives a crash of the process. The database is in WAL mode
// with a busy timeout, so the parallel branches of a run, and other
// processes on the same file, may read and write it at once: a writer
// waits for another's transaction instead of failing.
//
// It is the store of runtime.Main's --state PATH; FileStore remains for
// hosts that prefer a JSON file.
type SQLiteStore struct {
	path string
	db   *sql.DB

	closeOnce sync.Once
	closeErr  error
}

// sqliteBusyTimeoutMS is how long a write waits for another connection's
// transaction (a parallel branch, another process) before it fails.
const sqliteBusyTimeoutMS = "10000"

// OpenSQLiteStore opens the database at path, creating it (and its table)
// when missing. A file that exists but is not an SQLite database, or
// whose state table has another shape, is an error. The path may not
// contain '?' (the driver reads what follows as connection parameters).
// Close the store when done.
func OpenSQLiteStore(path string) (*SQLiteStore, error) {
	if path == "" || strings.ContainsRune(path, '?') {
		return nil, errors.New("state database " + quote(path) + ": the path must be non-empty and free of '?'")
	}
	// _txlock=immediate takes the write lock when a transaction begins, so
	// two writers queue on the busy timeout instead of deadlocking on an
	// upgrade from a read lock.
	dsn := path + "?_busy_timeout=" + sqliteBusyTimeoutMS + "&_journal_mode=WAL&_txlock=immediate"
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, storeError(path, err)
	}
	s := &SQLiteStore{path: path, db: db}
	if _, err := db.Exec(`CREATE TABLE IF NOT EXISTS state (key TEXT PRIMARY KEY, value TEXT NOT NULL)`); err != nil {
		db.Close()
		return nil, storeError(path, err)
	}
	// A table of the right name but another shape fails here, at open,
	// rather than at the run's first state.get.
	if _, err := db.Exec(`SELECT key, value FROM state LIMIT 0`); err != nil {
		db.Close()
		return nil, storeError(path, err)
	}
	return s, nil
}

func storeError(path string, err error) error {
	return errors.New("state database " + path + ": " + err.Error())
}

func quote(s string) string { return string(appendString(nil, s)) }

// Get returns the value at key. A stored value that is not valid JSON is
// an error (the database was written by something else).
func (s *SQLiteStore) Get(key string) (Value, bool, error) {
	var text string
	err := s.db.QueryRow(`SELECT value FROM state WHERE key = ?`, key).Scan(&text)
	if errors.Is(err, sql.ErrNoRows) {
		return Value{}, false, nil
	}
	if err != nil {
		return Value{}, false, storeError(s.path, err)
	}
	v, err := ParseJSONExt([]byte(text))
	if err != nil {
		return Value{}, false, storeError(s.path, errors.New("key "+quote(key)+": "+err.Error()))
	}
	return v, true, nil
}

// Put sets key to v in a transaction of its own.
func (s *SQLiteStore) Put(key string, v Value) error {
	tx, err := s.db.Begin()
	if err != nil {
		return storeError(s.path, err)
	}
	if _, err := tx.Exec(`INSERT INTO state (key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value`, key, string(AppendJSON(nil, v))); err != nil {
		tx.Rollback()
		return storeError(s.path, err)
	}
	if err := tx.Commit(); err != nil {
		return storeError(s.path, err)
	}
	return nil
}

// Backend names the store for the trace: "sqlite" and the database's path
// as it was opened.
func (s *SQLiteStore) Backend() (name, location string) { return "sqlite", s.path }

// Close closes the database (checkpointing its WAL). Calling it again
// returns the first call's error.
func (s *SQLiteStore) Close() error {
	s.closeOnce.Do(func() { s.closeErr = s.db.Close() })
	return s.closeErr
}
