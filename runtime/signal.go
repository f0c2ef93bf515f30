package runtime

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"sync/atomic"
	"syscall"
)

// signalContext returns a context that the first SIGINT or SIGTERM
// cancels, with the signal as its cause, a function that reports that
// signal (nil while none came), and stop, which stops listening. Later
// signals are swallowed while the run ends: it ends promptly anyway —
// its tool processes are killed, its calls aborted — and the clean end
// (result, trace, journal end line) is the point of catching the first.
func signalContext(parent context.Context) (ctx context.Context, received func() os.Signal, stop func()) {
	ctx, cancel := context.WithCancelCause(parent)
	ch := make(chan os.Signal, 4)
	signal.Notify(ch, os.Interrupt, syscall.SIGTERM)
	var got atomic.Value
	done := make(chan struct{})
	go func() {
		for {
			select {
			case s := <-ch:
				if got.Load() == nil {
					got.Store(s)
					cancel(fmt.Errorf("received %v", signalName(s)))
				}
			case <-done:
				return
			}
		}
	}()
	received = func() os.Signal {
		s, _ := got.Load().(os.Signal)
		return s
	}
	stop = func() {
		signal.Stop(ch)
		close(done)
		cancel(nil)
	}
	return ctx, received, stop
}

func signalName(s os.Signal) string {
	switch s {
	case os.Interrupt:
		return "SIGINT"
	case syscall.SIGTERM:
		return "SIGTERM"
	}
	return s.String()
}

// signalExit is the exit status of a run cancelled by signal s: 128 plus
// the signal's number, as a shell reports a process that a signal ended
// (130 for SIGINT, 143 for SIGTERM).
func signalExit(s os.Signal) int {
	switch s {
	case os.Interrupt:
		return 128 + 2
	case syscall.SIGTERM:
		return 128 + 15
	}
	return 1
}
