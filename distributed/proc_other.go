//go:build !unix

package distributed

import (
	"errors"
	"os/exec"
	"syscall"
)

func childAttr() *syscall.SysProcAttr { return nil }

func killChild(cmd *exec.Cmd) {
	if cmd.Process != nil {
		cmd.Process.Kill()
	}
}

// processSupported: the journal stream passes inherited descriptors,
// which this system's process start does not.
func processSupported() error {
	return errors.New("serving compiled Go programs needs a Unix system (the journal stream uses inherited descriptors)")
}
