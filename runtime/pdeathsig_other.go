//go:build unix && !linux

package runtime

import "syscall"

// setPdeathsig: only Linux has a parent-death signal.
func setPdeathsig(a *syscall.SysProcAttr, sig syscall.Signal) {}
