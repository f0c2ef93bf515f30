package host

import (
	"strconv"
	"strings"
	"testing"

	"github.com/genesis-toolchain/genesis/forge/agentabi"
	bc "github.com/genesis-toolchain/genesis/forge/bytecode"
	"github.com/genesis-toolchain/genesis/forge/vm"
	rt "github.com/genesis-toolchain/genesis/runtime"
)

// appendLoop is a program that builds the list [0, 1, …, n-1] with
// list.new, num.from_int and list.append, and leaves json.encode of it
// in r0 (the handles in registers only: r23 the list).
func appendLoop(t testing.TB, n uint64) (*vm.Image, *agentabi.Metadata) {
	meta := &agentabi.Metadata{Builtins: []string{"list.new", "num.from_int", "list.append", "json.encode"}, Return: "halt"}
	b := newBuilder()
	b.op(bc.LI, 21, 0, 0, n)
	b.op(bc.LI, 22, 0, 0, 1)
	b.op(bc.LI, 20, 0, 0, 0)
	b.op(bc.LI, 24, 0, 0, 0)
	b.op(bc.HCALL, 0, 0, 0, uint64(agentabi.HostCallImm(0, 0)))
	b.op(bc.ADD, 23, 0, 24, 0)
	b.label("loop")
	b.op(bc.ADD, 0, 20, 24, 0)
	b.op(bc.HCALL, 0, 0, 0, uint64(agentabi.HostCallImm(1, 0)))
	b.op(bc.ADD, 1, 0, 24, 0)
	b.op(bc.ADD, 0, 23, 24, 0)
	b.op(bc.HCALL, 0, 0, 0, uint64(agentabi.HostCallImm(2, 0)))
	b.op(bc.ADD, 23, 0, 24, 0)
	b.op(bc.ADD, 20, 20, 22, 0)
	b.jump(bc.JLT, 20, 21, "loop")
	b.op(bc.ADD, 0, 23, 24, 0)
	b.op(bc.HCALL, 0, 0, 0, uint64(agentabi.HostCallImm(3, 0)))
	b.op(bc.HALT, 0, 0, 0, 0)
	return b.image(t), meta
}

// TestValueHostOnMachine runs host calls on the machine: a list built by
// appending in a loop, in a store small enough to collect many times,
// gives the Go target's JSON; two runs use the same ticks and handles;
// a budget too small stops the run OUT_OF_TICKS at an HCALL, and an
// operand that is no handle HOST_FAULT.
func TestValueHostOnMachine(t *testing.T) {
	const n = 3000
	img, meta := appendLoop(t, n)
	var want strings.Builder
	want.WriteByte('[')
	for i := 0; i < n; i++ {
		if i > 0 {
			want.WriteByte(',')
		}
		want.WriteString(strconv.Itoa(i))
	}
	want.WriteByte(']')
	type outcome struct {
		state       vm.State
		fault       vm.Fault
		ticks, r0   uint64
		collections int
	}
	runOnce := func(budget uint64) (outcome, *ValueHost) {
		s, err := NewValueHost(meta, 512<<10)
		if err != nil {
			t.Fatal(err)
		}
		m := vm.New(img, vm.Config{Ticks: budget, Memory: 64 << 10, Stack: 4 << 10, Host: s}, nil)
		s.Attach(m, nil)
		m.Run()
		return outcome{m.State(), m.Fault(), m.Ticks(), m.Register(0), s.Collections()}, s
	}
	a, s := runOnce(1 << 40)
	if a.state != vm.Halted {
		t.Fatalf("the program ended %v %v (%s)", a.state, a.fault, s.Err())
	}
	got, ok := s.Get(a.r0)
	if !ok || got.Str() != want.String() {
		t.Fatalf("r0 = %v, want the JSON of [0..%d)", got, n)
	}
	if a.collections == 0 {
		t.Error("no collection in a store of 512 KiB")
	}
	b, _ := runOnce(1 << 40)
	if a != b {
		t.Fatalf("two runs: %+v and %+v", a, b)
	}
	c, s := runOnce(a.ticks - 100)
	if c.state != vm.Faulted || c.fault != vm.OutOfTicks {
		t.Fatalf("with 100 ticks too few: %v %v (%s)", c.state, c.fault, s.Err())
	}
	// The cost of json.encode of the list is in the ticks.
	if enc := uint64(len(want.String())); a.ticks < 2*n*10 {
		t.Errorf("%d ticks for %d iterations and an encoding of %d bytes", a.ticks, n, enc)
	}
	_ = rt.Unit
}

// TestValueHostFaultOnMachine checks that an operand that is no handle
// stops the machine HOST_FAULT, and Err says why.
func TestValueHostFaultOnMachine(t *testing.T) {
	meta := &agentabi.Metadata{Builtins: []string{"list.append"}, Return: "halt"}
	b := newBuilder()
	b.op(bc.LI, 0, 0, 0, 42)
	b.op(bc.HCALL, 0, 0, 0, uint64(agentabi.HostCallImm(0, 0)))
	b.op(bc.HALT, 0, 0, 0, 0)
	s, err := NewValueHost(meta, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	m := vm.New(b.image(t), vm.Config{Ticks: 1000, Memory: 64 << 10, Stack: 4 << 10, Host: s}, nil)
	m.Run()
	if m.State() != vm.Faulted || m.Fault() != vm.HostFault || !strings.Contains(s.Err(), "list.append: operand 1 (r0 = 0x2a) is no live value handle") {
		t.Fatalf("%v %v %q", m.State(), m.Fault(), s.Err())
	}
}
