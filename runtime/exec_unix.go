//go:build unix

package runtime

import (
	"os/exec"
	"syscall"
)

// killGroup makes cmd run in a process group of its own that a timeout or
// a cancelled run kills whole: the shell of exec:CMD and everything it
// started. On Linux the shell also dies with the process that started it
// (setPdeathsig).
func killGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	setPdeathsig(cmd.SysProcAttr, syscall.SIGKILL)
	cmd.Cancel = func() error {
		if cmd.Process == nil {
			return nil
		}
		return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
}

// endGroup kills what is left of cmd's process group once its leader has
// exited.
func endGroup(cmd *exec.Cmd) {
	if cmd.Process != nil {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) // ESRCH: nothing left
	}
}

// closeOnExec keeps an inherited descriptor (the journal stream's) from
// the processes the run starts: a tool holding the stream's write end
// would keep the parent from seeing the program's end.
func closeOnExec(fd uintptr) { syscall.CloseOnExec(int(fd)) }
