package runtime

import (
	"errors"
	"os"
	"path/filepath"
	"sync"
)

// Store is the persistent state of state.get and state.put. Stores must be
// safe for concurrent use.
type Store interface {
	Get(key string) (Value, bool, error)
	Put(key string, v Value) error
}

// StoreBackend is implemented by stores that name where the state lives:
// the trace's run_started event carries it as "state": {"backend": name,
// "path": location}, so a run log says which state it ran against. A
// MemoryStore does not implement it (the state dies with the process).
type StoreBackend interface {
	Backend() (name, location string)
}

// MemoryStore is a Store in memory: state persists across the runs of one
// Host, not across processes.
type MemoryStore struct {
	mu sync.RWMutex
	m  map[string]Value
}

// NewMemoryStore returns an empty MemoryStore.
func NewMemoryStore() *MemoryStore { return &MemoryStore{m: make(map[string]Value)} }

// Get returns the value at key.
func (s *MemoryStore) Get(key string) (Value, bool, error) {
	s.mu.RLock()
	v, ok := s.m[key]
	s.mu.RUnlock()
	return v, ok, nil
}

// Put sets key to v.
func (s *MemoryStore) Put(key string, v Value) error {
	s.mu.Lock()
	s.m[key] = v
	s.mu.Unlock()
	return nil
}

// FileStore is a Store kept in a JSON object file (keys in the order they
// were first written). Every Put rewrites the file atomically (a
// temporary file renamed over it, fsynced), so a put that returned
// survives a crash.
type FileStore struct {
	mu   sync.Mutex
	path string
	obj  Value
}

// OpenFileStore opens the store in path, which need not exist yet.
func OpenFileStore(path string) (*FileStore, error) {
	s := &FileStore{path: path, obj: emptyObject}
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return s, nil
	}
	if err != nil {
		return nil, err
	}
	v, err := ParseJSONExt(data)
	if err != nil {
		return nil, errors.New("state file " + path + ": " + err.Error())
	}
	if v.k != KindObject {
		return nil, errors.New("state file " + path + ": not a JSON object")
	}
	s.obj = v
	return s, nil
}

// Get returns the value at key.
func (s *FileStore) Get(key string) (Value, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	v, ok := s.obj.Get(key)
	return v, ok, nil
}

// Put sets key to v and writes the file.
func (s *FileStore) Put(key string, v Value) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	obj := objSet(s.obj, key, v)
	if err := writeFileAtomic(s.path, append(AppendJSON(nil, obj), '\n')); err != nil {
		return err
	}
	s.obj = obj
	return nil
}

// Backend names the store for the trace: "file" and its path.
func (s *FileStore) Backend() (name, location string) { return "file", s.path }

func writeFileAtomic(path string, data []byte) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
	}
	return err
}
