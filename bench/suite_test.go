package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/genesis-toolchain/genesis/forge/vm"
)

// TestSuite runs the Genesis version of every program of the integer
// suite (docs/bench.md, "The integer suite (issue 17)") on the Forge
// Machine at its small size, given on standard input as the harness
// gives it, and checks its answer: the answer gcc -O2, Lua 5.4 and
// LuaJIT's versions print at that size (go run ./bench checks all of
// them at the benchmark's size). With no input, or input that is not a
// number, the programs run at the same small size, their default.
func TestSuite(t *testing.T) {
	if len(suite) < 12 {
		t.Errorf("the suite has %d programs; issue 17 asks for at least 12", len(suite))
	}
	for _, p := range suite {
		t.Run(p.name, func(t *testing.T) {
			for _, f := range []string{filepath.Join("c", p.name+".c"), filepath.Join("lua", p.name+".lua")} {
				if _, err := os.Stat(f); err != nil {
					t.Errorf("the suite's program %s has no %s: %v", p.name, f, err)
				}
			}
			img := genesisImage(t, "corpus", p.name)
			for _, in := range []struct {
				what  string
				stdin []byte
			}{
				{"size on standard input", []byte(strconv.FormatUint(p.small, 10) + "\n")},
				{"no input (the default size)", nil},
				{"input that is not a size (the default)", []byte("size?\n")},
			} {
				got, err := runWithInput(img, in.stdin)
				if err != nil {
					t.Fatalf("%s: %v", in.what, err)
				}
				if got != p.smallWant {
					t.Errorf("%s: printed %q, want %q", in.what, got, p.smallWant)
				}
			}
		})
	}
}

// runWithInput runs img on a fresh machine, delivering stdin as one
// message on standard input and then the end of input, as forge exec
// does, and returns what it printed.
func runWithInput(img *vm.Image, stdin []byte) (string, error) {
	var out output
	m := vm.New(img, vm.Config{Ticks: testTicks, Memory: testMemory, Stack: 1 << 20}, &out)
	delivered := 0
	for {
		st := m.Run()
		switch {
		case st == vm.Halted:
			return out.String(), nil
		case st == vm.Blocked && m.BlockedOn() == vm.ChanStdin && delivered < 2:
			if delivered == 0 && len(stdin) > 0 {
				m.Deliver(vm.ChanStdin, stdin)
				delivered = 1
			} else {
				m.Deliver(vm.ChanStdin, nil) // the end of input
				delivered = 2
			}
		default:
			return out.String(), &runError{st, m}
		}
	}
}

// runError describes a run that did not halt.
type runError struct {
	st vm.State
	m  *vm.Machine
}

func (e *runError) Error() string {
	return fmt.Sprintf("%v %v at pc %#x after %d ticks", e.st, e.m.Fault(), e.m.PC(), e.m.Ticks())
}
