//go:build !unix

package runtime

import "os/exec"

// killGroup: without process groups, a timeout kills the command only.
func killGroup(cmd *exec.Cmd) {}
