//go:build unix

package runtime

import (
	"os/exec"
	"syscall"
)

// killGroup makes cmd run in a process group of its own that a timeout
// kills whole: the shell of exec:CMD and everything it started.
func killGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error {
		if cmd.Process == nil {
			return nil
		}
		return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
}
