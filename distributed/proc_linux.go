package distributed

import (
	"os/exec"
	"syscall"
)

// childAttr runs an execution's child in a process group of its own,
// with SIGKILL as its parent-death signal: a worker that dies takes its
// children with it (their tools have their own parent-death signal).
func childAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}

// killChild kills the child's process group.
func killChild(cmd *exec.Cmd) {
	if cmd.Process != nil {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
}

func processSupported() error { return nil }
