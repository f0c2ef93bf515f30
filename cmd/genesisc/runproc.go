package main

import (
	"errors"
	"io"
	"os"
	"os/exec"
	"os/signal"
	goruntime "runtime"
	"syscall"
)

// runProgram runs the built program bin with args and returns its exit
// status. The program must not outlive genesisc run, nor run twice at
// once with the same journal:
//
//   - SIGINT and SIGTERM that genesisc receives are passed on to the
//     program, once each (it runs in a process group of its own, so a
//     terminal's Ctrl-C reaches it only this way), and it cancels the
//     run cleanly: result "cancelled", exit 130 or 143, which genesisc
//     returns;
//   - on Linux, if genesisc dies — SIGKILL included — the kernel sends
//     the program SIGTERM (the parent-death signal), which cancels the run
//     the same way: its tool processes are killed, its journal closed
//     with an end line, its result written where --result asks.
//
// A program ended by a signal it did not catch gives 128 plus the
// signal's number, as a shell reports it.
func runProgram(bin string, args []string, stdout, stderr io.Writer) (int, error) {
	cmd := exec.Command(bin, args...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, stdout, stderr
	cmd.SysProcAttr = childAttr()

	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sigs)

	// The parent-death signal is sent when the thread that started the
	// child ends: keep this goroutine on its thread until the child is
	// gone (a locked goroutine that unlocks leaves the thread alive).
	goruntime.LockOSThread()
	defer goruntime.UnlockOSThread()
	if err := cmd.Start(); err != nil {
		return 0, err
	}
	waited := make(chan error, 1)
	go func() { waited <- cmd.Wait() }()
	for {
		select {
		case s := <-sigs:
			cmd.Process.Signal(s) // an error: the program has just exited
		case err := <-waited:
			if err == nil {
				return 0, nil
			}
			var ee *exec.ExitError
			if errors.As(err, &ee) {
				if code := ee.ExitCode(); code >= 0 {
					return code, nil
				}
				if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
					return 128 + int(ws.Signal()), nil
				}
			}
			return 0, err
		}
	}
}
