package ir

import (
	"fmt"
	"testing"

	"github.com/genesis-toolchain/genesis/diag"
)

// TestLocalFollowsLocals checks that Func.Local answers as a scan of
// Locals would, while Locals is appended to by NewVar and directly, and
// filtered in place as the optimizer's passes do.
func TestLocalFollowsLocals(t *testing.T) {
	f := &Func{Name: "f"}
	scan := func(name string) *Local {
		for _, l := range f.Locals {
			if l.Name == name {
				return l
			}
		}
		return nil
	}
	check := func(step string) {
		t.Helper()
		for i := 0; i < 40; i++ {
			name := fmt.Sprintf("v%d", i)
			if got, want := f.Local(name), scan(name); got != want {
				t.Fatalf("%s: Local(%s) = %v, want %v", step, name, got, want)
			}
		}
	}
	for i := 0; i < 20; i++ {
		f.NewVar(fmt.Sprintf("v%d", i), I64, diag.Pos{})
		check("NewVar")
	}
	keep := f.Locals[:0]
	for i, l := range f.Locals {
		if i%3 != 0 {
			keep = append(keep, l)
		}
	}
	f.Locals = keep
	check("filtered")
	for i := 20; i < 27; i++ {
		f.Locals = append(f.Locals, &Local{Name: fmt.Sprintf("v%d", i), Kind: Var, Type: I64})
	}
	check("appended after filtering")
	f.Locals = f.Locals[:3]
	check("truncated")
	f.Locals = append(f.Locals, &Local{Name: "v0", Kind: Var, Type: I64})
	check("a removed name back")
}

// TestLocalConcurrently looks locals up from several goroutines at once,
// as verifiers may: with -race, a lookup that builds the index must not
// race with another.
func TestLocalConcurrently(t *testing.T) {
	f := &Func{Name: "f"}
	for i := 0; i < 100; i++ {
		f.Locals = append(f.Locals, &Local{Name: fmt.Sprintf("v%d", i), Kind: Var, Type: I64})
	}
	done := make(chan bool)
	for g := 0; g < 4; g++ {
		go func() {
			ok := true
			for i := 0; i < 100; i++ {
				ok = ok && f.Local(fmt.Sprintf("v%d", i)) == f.Locals[i]
			}
			done <- ok
		}()
	}
	for g := 0; g < 4; g++ {
		if !<-done {
			t.Error("a concurrent lookup found another local")
		}
	}
}
