package main

import (
	"bufio"
	"bytes"
	"io"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// startGoWorker starts genesisc worker (this test binary) in dir with
// args and returns it once it serves; its output is kept for failures.
func startGoWorker(t *testing.T, dir string, args ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0], append([]string{"worker"}, args...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GENESISC_TEST_MAIN=1")
	var errs bytes.Buffer
	cmd.Stderr = &errs
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	ready := make(chan bool, 1)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if strings.Contains(sc.Text(), ": serving ") {
				select {
				case ready <- true:
				default:
				}
			}
		}
		io.Copy(io.Discard, out)
		cmd.Wait()
		close(done)
	}()
	t.Cleanup(func() {
		cmd.Process.Kill()
		<-done
		if t.Failed() {
			t.Logf("worker stderr:\n%s", errs.String())
		}
	})
	select {
	case <-ready:
	case <-done:
		t.Fatalf("the worker ended before serving:\n%s", errs.String())
	case <-time.After(3 * time.Minute): // a hang guard: the worker builds the program
		t.Fatalf("the worker did not start:\n%s", errs.String())
	}
	return cmd
}
