package runtime

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
)

func openSQLite(t *testing.T, path string) *SQLiteStore {
	t.Helper()
	s, err := OpenSQLiteStore(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// TestSQLiteStorePutGet: values of every kind round-trip through the
// database, error values included; a missing key is absent, not an error;
// a second Put replaces the value.
func TestSQLiteStorePutGet(t *testing.T) {
	s := openSQLite(t, filepath.Join(t.TempDir(), "state.db"))
	if _, ok, err := s.Get("nothing"); ok || err != nil {
		t.Fatalf("missing key: ok %v, err %v", ok, err)
	}
	values := []Value{
		Int(7), Number(0.5), String("héllo \"x\""), Bool(true), {},
		List(Int(1), String("a")),
		Object(Field{"b", Int(1)}, Field{"a", List()}),
		Error("tool", "boom"),
	}
	for i, v := range values {
		key := "k" + strconv.Itoa(i)
		if err := s.Put(key, v); err != nil {
			t.Fatal(err)
		}
		got, ok, err := s.Get(key)
		if err != nil || !ok || !ValueEq(got, v) || got.String() != v.String() {
			t.Errorf("%s: got %s (ok %v, err %v), want %s", key, got, ok, err, v)
		}
	}
	if err := s.Put("k0", String("new")); err != nil {
		t.Fatal(err)
	}
	if got, _, _ := s.Get("k0"); got.Str() != "new" {
		t.Errorf("k0 after a second put: %s", got)
	}
	if name, loc := s.Backend(); name != "sqlite" || loc != s.path {
		t.Errorf("Backend() = %q, %q", name, loc)
	}
}

// TestSQLiteStoreAcrossProcesses: a key another process put is there when
// this one opens the database, and a key this one put is there for the
// next process.
func TestSQLiteStoreAcrossProcesses(t *testing.T) {
	if path := os.Getenv("GENESIS_SQLITE_CHILD"); path != "" {
		// The child: read the parent's key, put its own.
		s, err := OpenSQLiteStore(path)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		v, ok, err := s.Get("parent")
		if err != nil || !ok {
			t.Fatalf("parent's key: ok %v, err %v", ok, err)
		}
		if err := s.Put("child", Int(int64(v.Num())+1)); err != nil {
			t.Fatal(err)
		}
		return
	}
	path := filepath.Join(t.TempDir(), "state.db")
	s := openSQLite(t, path)
	if err := s.Put("parent", Int(41)); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestSQLiteStoreAcrossProcesses$")
	cmd.Env = append(os.Environ(), "GENESIS_SQLITE_CHILD="+path)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		t.Fatalf("child: %v\n%s", err, out.String())
	}
	// The open store sees the child's committed put, and so does a
	// reopened one.
	for _, st := range []*SQLiteStore{s, openSQLite(t, path)} {
		if v, ok, err := st.Get("child"); err != nil || !ok || v.Num() != 42 {
			t.Errorf("child's key: %s (ok %v, err %v), want 42", v, ok, err)
		}
	}
}

// TestSQLiteStoreConcurrentPuts: goroutines on one store and on a second
// store of the same file (as another process would be) put at once;
// every put succeeds (writers wait on the busy timeout) and every value
// is there after.
func TestSQLiteStoreConcurrentPuts(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.db")
	stores := []*SQLiteStore{openSQLite(t, path), openSQLite(t, path)}
	const writers, puts = 8, 25
	var wg sync.WaitGroup
	errs := make(chan error, writers*puts)
	for w := 0; w < writers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			s := stores[w%len(stores)]
			for i := 0; i < puts; i++ {
				if err := s.Put("w"+strconv.Itoa(w)+"/"+strconv.Itoa(i), Int(int64(i))); err != nil {
					errs <- err
				}
				if _, _, err := s.Get("w0/0"); err != nil {
					errs <- err
				}
			}
		}(w)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	for w := 0; w < writers; w++ {
		for i := 0; i < puts; i++ {
			if v, ok, _ := stores[0].Get("w" + strconv.Itoa(w) + "/" + strconv.Itoa(i)); !ok || v.Num() != float64(i) {
				t.Fatalf("w%d/%d: %s (ok %v)", w, i, v, ok)
			}
		}
	}
}

// TestSQLiteStoreErrors: a file that is not a database and a path with
// '?' fail at open; a failing store stops the run with a state error.
func TestSQLiteStoreErrors(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.db")
	os.WriteFile(bad, []byte("this is not an SQLite database, it is a text file long enough to have a header"), 0o644)
	if s, err := OpenSQLiteStore(bad); err == nil {
		s.Close()
		t.Error("a file that is not a database was accepted")
	}
	if _, err := OpenSQLiteStore(filepath.Join(dir, "a?b")); err == nil {
		t.Error("a path with '?' was accepted")
	}
	s := openSQLite(t, filepath.Join(dir, "state.db"))
	s.Close() // every later Put fails
	res := NewHost(Config{State: s}).Execute(RunOptions{}, func(r *Run) Value {
		r.StatePut(NewSite("save", "p", 1, 1).At(), String("k"), Int(1))
		return Value{}
	})
	if res.Status != StatusFailed || res.Error == nil || res.Error.Kind != "state" {
		t.Errorf("put on a closed store: %s", resultJSON(res))
	}
}

// TestSQLiteStoreTrace: run_started names the state backend.
func TestSQLiteStoreTrace(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.db")
	var trace bytes.Buffer
	NewHost(Config{State: openSQLite(t, path)}).Execute(RunOptions{Program: "p", Trace: &trace}, func(r *Run) Value { return Value{} })
	first, _, _ := bytes.Cut(trace.Bytes(), []byte("\n"))
	want := `{"event":"run_started","t":0,"program":"p","clock":"virtual","state":{"backend":"sqlite","path":` + quote(path) + `}}`
	if string(first) != want {
		t.Errorf("run_started:\n%s\nwant\n%s", first, want)
	}
}
