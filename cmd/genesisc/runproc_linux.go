package main

import "syscall"

// childAttr runs the program in a process group of its own (signals come
// to it through genesisc, once) with SIGTERM as its parent-death signal.
func childAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM}
}
