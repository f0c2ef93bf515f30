//go:build unix && !linux

package distributed

import (
	"os/exec"
	"syscall"
)

// childAttr runs an execution's child in a process group of its own
// (this system has no parent-death signal: the child of a worker killed
// outright stops at its next journal line, which has no reader left).
func childAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}

// killChild kills the child's process group.
func killChild(cmd *exec.Cmd) {
	if cmd.Process != nil {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
}

func processSupported() error { return nil }
