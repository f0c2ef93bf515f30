// Package pgtest starts a private Postgres cluster for a test: initdb
// in a temporary directory, postgres on a free port of 127.0.0.1 with
// its unix socket in that directory, stopped and removed when the test
// ends, so that a test needs no server running beforehand and leaves
// nothing behind. The Makefile's postgres target installs Debian's
// postgresql when it is missing; without it a test that needs Postgres
// skips, saying why.
package pgtest

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"syscall"
	"testing"
)

// Server is a running private cluster.
type Server struct {
	// URL is the connection URL of its database "genesis" for the user
	// "genesis" (no password: trust authentication on 127.0.0.1).
	URL  string
	Port int
	Dir  string

	bin     string
	cred    *syscall.Credential
	started bool
}

// Bin returns the directory holding initdb, pg_ctl and postgres: the
// newest /usr/lib/postgresql/*/bin, else PATH's ("" when there is none).
func Bin() string {
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	sort.Slice(dirs, func(i, j int) bool { return version(dirs[i]) > version(dirs[j]) })
	for _, d := range dirs {
		if _, err := os.Stat(filepath.Join(d, "initdb")); err == nil {
			return d
		}
	}
	if p, err := exec.LookPath("initdb"); err == nil {
		return filepath.Dir(p)
	}
	return ""
}

func version(dir string) int {
	n, _ := strconv.Atoi(filepath.Base(filepath.Dir(dir)))
	return n
}

// ErrNotInstalled is the error of StartServer when Postgres is not
// installed.
var ErrNotInstalled = errors.New("Postgres is not installed (initdb not found in /usr/lib/postgresql/*/bin or PATH): `make postgres` installs Debian's postgresql")

// Start starts a cluster for t, stopped and removed when t ends, or
// skips t when Postgres is not installed (make test installs it: the
// Makefile's postgres target).
func Start(t testing.TB) *Server {
	t.Helper()
	s, err := StartServer()
	if errors.Is(err, ErrNotInstalled) || errors.Is(err, errNoUser) {
		t.Skip(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := s.Stop(); err != nil {
			t.Log(err)
		}
	})
	return s
}

var errNoUser = errors.New("running as root and there is no user postgres to run the cluster as")

// StartServer starts a cluster; Stop stops and removes it. Postgres
// refuses to run as root: as root, the cluster runs as the user
// postgres (Debian's package makes it), its directory theirs.
func StartServer() (*Server, error) {
	bin := Bin()
	if bin == "" {
		return nil, ErrNotInstalled
	}
	var cred *syscall.Credential
	if os.Geteuid() == 0 {
		u, err := user.Lookup("postgres")
		if err != nil {
			return nil, errNoUser
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		cred = &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}
	}
	dir, err := os.MkdirTemp("", "genesis-pg-")
	if err != nil {
		return nil, err
	}
	s := &Server{Dir: dir, bin: bin, cred: cred}
	if err := s.start(); err != nil {
		s.Stop()
		return nil, err
	}
	return s, nil
}

func (s *Server) run(name string, args ...string) error {
	cmd := exec.Command(filepath.Join(s.bin, name), args...)
	cmd.Dir = s.Dir
	cmd.Env = append(os.Environ(), "LC_ALL=C", "TZ=UTC")
	if s.cred != nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: s.cred}
	}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("%s %v: %v\n%s", name, args, err, out.String())
	}
	return nil
}

func (s *Server) start() error {
	if s.cred != nil {
		if err := os.Chown(s.Dir, int(s.cred.Uid), int(s.cred.Gid)); err != nil {
			return err
		}
	}
	data := filepath.Join(s.Dir, "data")
	if err := s.run("initdb", "-D", data, "-U", "genesis", "--auth=trust", "--no-sync", "-E", "UTF8", "--locale=C"); err != nil {
		return err
	}
	for attempt := 0; ; attempt++ {
		port, err := freePort()
		if err != nil {
			return err
		}
		opts := fmt.Sprintf("-p %d -k %s -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=200 -c shared_buffers=32MB", port, s.Dir)
		err = s.run("pg_ctl", "-D", data, "-l", filepath.Join(s.Dir, "log"), "-o", opts, "-w", "-t", "60", "start")
		if err == nil {
			s.Port, s.started = port, true
			break
		}
		if attempt == 2 { // the port was taken between the probe and the start
			log, _ := os.ReadFile(filepath.Join(s.Dir, "log"))
			return fmt.Errorf("%v\n%s", err, log)
		}
	}
	s.URL = fmt.Sprintf("postgres://genesis@127.0.0.1:%d/genesis?sslmode=disable", s.Port)
	return s.CreateDB("genesis")
}

// CreateDB creates the database name (owned by the user genesis); its
// URL is URL with the database's name replaced.
func (s *Server) CreateDB(name string) error {
	return s.run("createdb", "-h", s.Dir, "-p", strconv.Itoa(s.Port), "-U", "genesis", name)
}

// DBURL returns the URL of the database name.
func (s *Server) DBURL(name string) string {
	return fmt.Sprintf("postgres://genesis@127.0.0.1:%d/%s?sslmode=disable", s.Port, name)
}

// Stop stops the cluster and removes its directory.
func (s *Server) Stop() error {
	var err error
	if s.started {
		err = s.run("pg_ctl", "-D", filepath.Join(s.Dir, "data"), "-m", "immediate", "-w", "-t", "30", "stop")
		s.started = false
	}
	if rmErr := os.RemoveAll(s.Dir); err == nil {
		err = rmErr
	}
	return err
}

// freePort returns a TCP port of 127.0.0.1 free a moment ago.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
