package runtime

import "syscall"

// setPdeathsig asks Linux to send sig to the child when the thread that
// started it ends (the Go runtime does not end threads that start
// processes, so: when this process dies, however it dies).
func setPdeathsig(a *syscall.SysProcAttr, sig syscall.Signal) { a.Pdeathsig = sig }
