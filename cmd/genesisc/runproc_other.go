//go:build !linux

package main

import "syscall"

// childAttr: without a parent-death signal the program is not told when
// genesisc is killed (docs/runtime.md); SIGINT and SIGTERM are still
// passed on. It stays in genesisc's process group, so that a terminal's
// Ctrl-C reaches it even where process groups cannot be set.
func childAttr() *syscall.SysProcAttr { return nil }
