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

// Start starts a cluster for t, or skips t when Postgres is not
// installed (make test installs it: the Makefile's postgres target).
// Postgres refuses to run as root: as root, the cluster runs as the
// user postgres (Debian's package makes it), its directory theirs.
func Start(t testing.TB) *Server {
	t.Helper()
	bin := Bin()
	if bin == "" {
		t.Skip("Postgres is not installed (initdb not found in /usr/lib/postgresql/*/bin or PATH): `make postgres` installs Debian's postgresql")
	}
	var cred *syscall.Credential
	if os.Geteuid() == 0 {
		u, err := user.Lookup("postgres")
		if err != nil {
			t.Skip("running as root and there is no user postgres to run the cluster as")
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		cred = &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}
	}
	dir, err := os.MkdirTemp("", "genesis-pg-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if cred != nil {
		if err := os.Chown(dir, int(cred.Uid), int(cred.Gid)); err != nil {
			t.Fatal(err)
		}
	}
	data := filepath.Join(dir, "data")
	run := func(name string, args ...string) error {
		cmd := exec.Command(filepath.Join(bin, name), args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "LC_ALL=C", "TZ=UTC")
		if cred != nil {
			cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
		}
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("%s %v: %v\n%s", name, args, err, out.String())
		}
		return nil
	}
	if err := run("initdb", "-D", data, "-U", "genesis", "--auth=trust", "--no-sync", "-E", "UTF8", "--locale=C"); err != nil {
		t.Fatal(err)
	}
	var port int
	for attempt := 0; ; attempt++ {
		port = freePort(t)
		opts := fmt.Sprintf("-p %d -k %s -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=200 -c shared_buffers=32MB", port, dir)
		err := run("pg_ctl", "-D", data, "-l", filepath.Join(dir, "log"), "-o", opts, "-w", "-t", "60", "start")
		if err == nil {
			break
		}
		if attempt == 2 { // the port was taken between the probe and the start
			log, _ := os.ReadFile(filepath.Join(dir, "log"))
			t.Fatalf("%v\n%s", err, log)
		}
	}
	t.Cleanup(func() {
		if err := run("pg_ctl", "-D", data, "-m", "immediate", "-w", "-t", "30", "stop"); err != nil {
			t.Log(err)
		}
	})
	s := &Server{Port: port, Dir: dir, URL: fmt.Sprintf("postgres://genesis@127.0.0.1:%d/genesis?sslmode=disable", port)}
	if err := run("createdb", "-h", dir, "-p", strconv.Itoa(port), "-U", "genesis", "genesis"); err != nil {
		t.Fatal(err)
	}
	return s
}

// freePort returns a TCP port of 127.0.0.1 free a moment ago.
func freePort(t testing.TB) int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}
