//go:build !unix

package runtime

import "os/exec"

// killGroup: without process groups, a timeout kills the command only.
func killGroup(cmd *exec.Cmd) {}

// endGroup: without process groups there is nothing to kill.
func endGroup(cmd *exec.Cmd) {}

// closeOnExec: descriptors are not inherited here.
func closeOnExec(fd uintptr) {}
