package vm_test

import (
	"bytes"
	"sync"
	"testing"

	"github.com/genesis-toolchain/genesis/forge/vm"
)

// branchProg is nested (it blocks on stdin, and double and wait run
// while it does) with functions that send, fault, and spin.
const branchProg = nested + `
say:
	SEND 0, r10, 8
	RET
boom:
	FAULT 42
spin:
	LI r5, 1
	SUB r0, r0, r5
	JNZ r0, spin
	RET
`

// runBranch runs function f with arg on a branch of m and returns the
// branch, stopped.
func runBranch(t *testing.T, m *vm.Machine, f string, arg uint64) *vm.Machine {
	t.Helper()
	p := assemble(t, branchProg)
	b := m.Branch(nil, nil)
	if b == nil {
		t.Fatal("Branch of a blocked machine = nil")
	}
	if fault := b.Enter(symbol(t, p, f), symbol(t, p, "back"), arg); fault != vm.NoFault {
		t.Fatalf("Enter(%s) = %v", f, fault)
	}
	b.Run()
	return b
}

// blocked returns a machine of branchProg blocked at its RECV, with the
// budget ticks.
func blocked(t *testing.T, ticks, output uint64) *vm.Machine {
	t.Helper()
	m := vm.New(image(t, assemble(t, branchProg)), vm.Config{Ticks: ticks, Memory: 1 << 12, Stack: 256, Trace: true, Output: output}, nil)
	if m.Run() != vm.Blocked {
		t.Fatalf("%v, want BLOCKED", m.State())
	}
	return m
}

// TestBranchesRunApart runs two branches of a blocked machine at once:
// each sees the machine's memory and registers, writes its own copy (its
// stack), and the machine, joined with them in branch order, has their
// ticks added and a trace hash that depends on the order of the joins,
// not on the order the branches ran in.
func TestBranchesRunApart(t *testing.T) {
	m := blocked(t, 100000, 0)
	mem := bytes.Clone(m.Memory())
	var b [2]*vm.Machine
	var wg sync.WaitGroup
	for i, f := range []string{"double", "spin"} {
		wg.Add(1)
		go func() { defer wg.Done(); b[i] = runBranch(t, m, f, 20) }()
	}
	wg.Wait()
	if b[0].Register(0) != 41 || b[1].Register(0) != 0 || b[0].State() != vm.Halted {
		t.Fatalf("double(20), spin(20) on branches = %d, %d (%v)", b[0].Register(0), b[1].Register(0), b[0].State())
	}
	if !bytes.Equal(m.Memory(), mem) {
		t.Error("a branch's writes changed the machine's memory")
	}
	if bytes.Equal(b[0].Memory(), mem) {
		t.Error("a branch that pushed left its memory as it was")
	}
	if b[0].Budget() != m.Budget()-m.Ticks() || b[0].Ticks() == 0 {
		t.Errorf("a branch's budget is %d with %d ticks used, want %d", b[0].Budget(), b[0].Ticks(), m.Budget()-m.Ticks())
	}
	join := func(order ...int) (*vm.Machine, [32]byte) {
		m := blocked(t, 100000, 0)
		for _, i := range order {
			if f := m.Join(b[i].Outcome()); f != vm.NoFault {
				t.Fatalf("Join = %v", f)
			}
		}
		m.Deliver(vm.ChanStdin, word(1))
		m.Run()
		h, _ := m.TraceHash()
		return m, h
	}
	j1, h1 := join(0, 1)
	j2, h2 := join(0, 1)
	_, h3 := join(1, 0)
	plain := blocked(t, 100000, 0)
	plain.Deliver(vm.ChanStdin, word(1))
	plain.Run()
	if j1.Ticks() != plain.Ticks()+b[0].Ticks()+b[1].Ticks() || j1.Register(0) != 101 {
		t.Errorf("joined: %d ticks, r0 = %d; want %d and 101", j1.Ticks(), j1.Register(0), plain.Ticks()+b[0].Ticks()+b[1].Ticks())
	}
	if h1 != h2 || h1 == h3 || j2.Ticks() != j1.Ticks() {
		t.Error("the trace hash of the joins does not follow their order alone")
	}
}

// TestJoinLimits: a branch gets what the machine has left; the joins
// fault the machine OUT_OF_TICKS or OUTPUT_QUOTA when their sum does not
// fit, or when a branch ran out itself, and with a branch's own fault.
func TestJoinLimits(t *testing.T) {
	m := blocked(t, 1000, 0)
	left := m.Budget() - m.Ticks()
	// spin(n) costs about 3n+3 ticks: two branches of a bit more than
	// half of what is left each fit alone, not together.
	n := left / 5
	b0, b1 := runBranch(t, m, "spin", n), runBranch(t, m, "spin", n)
	if b0.State() != vm.Halted || b1.State() != vm.Halted || b0.Ticks()+b1.Ticks() <= left {
		t.Fatalf("spin(%d): %v after %d ticks; %d left", n, b0.State(), b0.Ticks(), left)
	}
	if f := m.Join(b0.Outcome()); f != vm.NoFault {
		t.Fatalf("first join: %v", f)
	}
	if f := m.Join(b1.Outcome()); f != vm.OutOfTicks || m.State() != vm.Faulted || m.Ticks() != m.Budget() {
		t.Fatalf("second join: %v, %v after %d ticks; want OUT_OF_TICKS after %d", f, m.State(), m.Ticks(), m.Budget())
	}
	if f := m.Join(b1.Outcome()); f != vm.PermissionDenied {
		t.Errorf("a join into a faulted machine: %v", f)
	}

	m = blocked(t, 1000, 0)
	if b := runBranch(t, m, "spin", left); b.Fault() != vm.OutOfTicks {
		t.Fatalf("spin(%d) on a branch: %v", left, b.Fault())
	} else if f := m.Join(b.Outcome()); f != vm.OutOfTicks || m.Ticks() != m.Budget() {
		t.Errorf("join of a branch out of ticks: %v after %d ticks", f, m.Ticks())
	}

	m = blocked(t, 1000, 0)
	if b := runBranch(t, m, "boom", 0); b.Fault() != vm.UserFault {
		t.Fatalf("boom: %v", b.Fault())
	} else if f := m.Join(b.Outcome()); f != vm.UserFault || m.UserCode() != 42 || m.PC() != b.PC() {
		t.Errorf("join of a branch that faulted: %v %d at %#x", f, m.UserCode(), m.PC())
	}

	m = blocked(t, 1000, 12)
	b0, b1 = runBranch(t, m, "say", 0), runBranch(t, m, "say", 0)
	if b0.State() != vm.Halted || b0.OutputUsed() != 8 {
		t.Fatalf("say: %v, %d bytes sent", b0.State(), b0.OutputUsed())
	}
	if f := m.Join(b0.Outcome()); f != vm.NoFault || m.OutputUsed() != 8 {
		t.Fatalf("first join: %v, %d bytes counted", f, m.OutputUsed())
	}
	if f := m.Join(b1.Outcome()); f != vm.OutputQuota {
		t.Errorf("second join past the output quota: %v", f)
	}
}
