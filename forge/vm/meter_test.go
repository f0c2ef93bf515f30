package vm_test

import (
	"bytes"
	"testing"

	bc "github.com/genesis-toolchain/genesis/forge/bytecode"
	"github.com/genesis-toolchain/genesis/forge/vm"
)

// runBoth runs tc with the given budget on the fast interpreter and the
// reference (which must agree on every observable), then once more on
// the fast interpreter alone to return the machine and what it sent.
func runBoth(t *testing.T, tc testCase, budget uint64) (*vm.Machine, *recorder) {
	t.Helper()
	img := image(t, tc.prog)
	if _, err := differential(img, tc, budget); err != nil {
		t.Fatalf("%v\n%s", err, disasm(tc))
	}
	cfg := tc.cfg
	cfg.Ticks = budget
	out := &recorder{}
	m := vm.New(img, cfg, out)
	for _, d := range tc.input {
		m.Deliver(d.ch, d.data)
	}
	for m.Run() == vm.Ready {
	}
	return m, out
}

func sentBytes(out *recorder) uint64 {
	var n uint64
	for _, msg := range out.msgs {
		n += uint64(len(msg.data))
	}
	return n
}

// A program with a 40-tick budget that loops sending as much as it can
// stops with OUT_OF_TICKS at a SEND, having sent at most 8 bytes per
// tick: a SEND longer than its budget pays for is not executed at all,
// whatever its length, even one longer than memory.
func TestSendFloodStopsAtBudget(t *testing.T) {
	const budget = 40
	for _, c := range []struct {
		name   string
		length uint64 // of each SEND
		memory uint64
		sent   uint64 // bytes sent before the fault
		ticks  uint64
		pc     uint64 // of the instruction that does not fit
	}{
		{"4 GiB", 1<<32 - 1, 1 << 16, 0, 1, 16},          // LI, then the SEND does not fit
		{"1 MiB", 1 << 20, 2 << 20, 0, 1, 16},            // fits in memory, not in the budget
		{"64 bytes", 64, 1 << 16, 3 * 64, 1 + 3*12, 16},  // 3 rounds of SEND (11) and JMP (1), then 3 ticks left
		{"7 bytes", 7, 1 << 16, 10 * 7, 1 + 9*4 + 3, 24}, // the seed's 3 ticks a message: the 10th SEND fits, its JMP not
	} {
		t.Run(c.name, func(t *testing.T) {
			var b builder
			b.liFix(1, fixHeap, 0, 0)
			top := b.op(bc.SEND, 1, 0, 0, c.length)
			b.jump(bc.JMP, 0, 0, top)
			tc := testCase{prog: b.program(nil, c.memory), cfg: vm.Config{Memory: c.memory, Trace: true}}
			m, out := runBoth(t, tc, budget)
			if m.State() != vm.Faulted || m.Fault() != vm.OutOfTicks || m.PC() != c.pc {
				t.Fatalf("ended %v %v at pc %d, want OUT_OF_TICKS at pc %d", m.State(), m.Fault(), m.PC(), c.pc)
			}
			if got := sentBytes(out); got != c.sent || m.Ticks() != c.ticks {
				t.Errorf("sent %d bytes in %d ticks, want %d bytes in %d ticks", got, m.Ticks(), c.sent, c.ticks)
			}
			if got := sentBytes(out); got > bc.BytesPerTick*budget {
				t.Errorf("sent %d bytes on a %d-tick budget", got, budget)
			}
		})
	}
}

// The cost of SEND and RECV: 3 ticks for a message shorter than 8 bytes
// (the seed's cost), one more per whole 8 bytes moved. A RECV pays for
// what it copies, min(maxlen, the head message), not for its maxlen.
func TestChannelCosts(t *testing.T) {
	for _, c := range []struct {
		op     bc.Opcode
		length uint64 // SEND length or RECV maxlen
		msg    int    // RECV: the queued message's length
		cost   uint64
	}{
		{bc.SEND, 0, 0, 3},
		{bc.SEND, 1, 0, 3},
		{bc.SEND, 7, 0, 3},
		{bc.SEND, 8, 0, 4},
		{bc.SEND, 15, 0, 4},
		{bc.SEND, 16, 0, 5},
		{bc.SEND, 4096, 0, 3 + 512},
		{bc.RECV, 64, 0, 3},
		{bc.RECV, 64, 7, 3},
		{bc.RECV, 64, 8, 4},
		{bc.RECV, 4096, 100, 3 + 12},
		{bc.RECV, 16, 4096, 3 + 2}, // copies 16, the rest stays queued
		{bc.RECV, 4096, 4096, 3 + 512},
	} {
		var b builder
		b.liFix(1, fixHeap, 0, 0)
		b.op(c.op, 1, 0, map[bc.Opcode]uint8{bc.SEND: 0, bc.RECV: 2}[c.op], c.length)
		b.op(bc.HALT, 0, 0, 0, 0)
		tc := testCase{prog: b.program(nil, 1<<16), cfg: vm.Config{Memory: 1 << 16, Trace: true}}
		if c.op == bc.RECV {
			tc.input = []delivery{{2, bytes.Repeat([]byte("m"), c.msg)}}
		}
		moved := c.length
		if c.op == bc.RECV {
			moved = min(c.length, uint64(c.msg))
		}
		if got := bc.Lookup(c.op).CostMoving(moved); got != c.cost {
			t.Errorf("bytecode: %s moving %d bytes costs %d, want %d", c.op, moved, got, c.cost)
		}
		m, _ := runBoth(t, tc, 1<<20)
		if m.State() != vm.Halted || m.Ticks() != 1+c.cost+1 {
			t.Errorf("%s length %d, message %d: %v after %d ticks, want HALTED after %d (LI, %d, HALT)",
				c.op, c.length, c.msg, m.State(), m.Ticks(), 1+c.cost+1, c.cost)
		}
		// Every budget up to the full cost stops at the same places on
		// both interpreters.
		for budget := uint64(0); budget <= 1+c.cost+1; budget++ {
			runBoth(t, tc, budget)
		}
	}
}

// A RECV whose bytes do not fit the budget faults OUT_OF_TICKS before
// copying anything: the message stays queued, memory is unchanged and
// the RECV is not charged.
func TestRecvBytesDoNotFit(t *testing.T) {
	var b builder
	b.liFix(1, fixHeap, 0, 0)
	b.op(bc.RECV, 1, 0, 2, 1000)
	b.op(bc.HALT, 0, 0, 0, 0)
	msg := bytes.Repeat([]byte("x"), 800) // costs 3 + 100
	tc := testCase{prog: b.program(nil, 1<<16), cfg: vm.Config{Memory: 1 << 16, Trace: true}, input: []delivery{{2, msg}}}
	m, _ := runBoth(t, tc, 1+3+99)
	if m.State() != vm.Faulted || m.Fault() != vm.OutOfTicks || m.PC() != 16 || m.Ticks() != 1 {
		t.Fatalf("ended %v %v at pc %d after %d ticks, want OUT_OF_TICKS at the RECV (16) after 1", m.State(), m.Fault(), m.PC(), m.Ticks())
	}
	if n, ok := m.Pending(2); !ok || n != 800 {
		t.Errorf("the message has %d bytes left (queued %v), want all 800", n, ok)
	}
	heap := tc.prog.HeapStart()
	if !bytes.Equal(m.Memory()[heap:heap+800], make([]byte, 800)) {
		t.Error("the RECV wrote memory")
	}
	m, _ = runBoth(t, tc, 1+3+100)
	if m.State() != vm.Faulted || m.Fault() != vm.OutOfTicks || m.PC() != 24 || m.Ticks() != 104 {
		t.Errorf("with 104 ticks: %v %v at pc %d after %d ticks, want OUT_OF_TICKS at the HALT (24) after 104", m.State(), m.Fault(), m.PC(), m.Ticks())
	}
}

// A faulting SEND is charged its whole cost, bytes included, as any
// faulting instruction is; a faulting RECV moves nothing and is charged
// its fixed 3 ticks.
func TestFaultingChannelCosts(t *testing.T) {
	for _, c := range []struct {
		name  string
		op    bc.Opcode
		ch    uint8
		fault vm.Fault
		cost  uint64
	}{
		{"SEND to stdin", bc.SEND, 2, vm.ChannelError, 3 + 100},
		{"SEND past memory", bc.SEND, 0, vm.InvalidAddress, 3 + (1<<20)/8},
		{"RECV from stdout", bc.RECV, 0, vm.ChannelError, 3},
	} {
		length := uint64(800)
		if c.fault == vm.InvalidAddress {
			length = 1 << 20
		}
		var b builder
		b.liFix(1, fixHeap, 0, 0)
		b.op(c.op, 1, 0, c.ch, length)
		b.op(bc.HALT, 0, 0, 0, 0)
		tc := testCase{prog: b.program(nil, 1<<16), cfg: vm.Config{Memory: 1 << 16, Trace: true}, input: []delivery{{2, make([]byte, 800)}}}
		m, _ := runBoth(t, tc, 1<<30)
		if m.Fault() != c.fault || m.Ticks() != 1+c.cost {
			t.Errorf("%s: %v after %d ticks, want %v after %d", c.name, m.Fault(), m.Ticks(), c.fault, 1+c.cost)
		}
	}
}

// The output quota (Config.Output) bounds what a run sends, all channels
// together, whatever its budget: the SEND that would pass it faults
// OUTPUT_QUOTA, is charged like any faulting instruction, and sends
// nothing, not even the part that would fit.
func TestOutputQuota(t *testing.T) {
	var b builder
	b.liFix(1, fixHeap, 0, 0)
	top := b.op(bc.SEND, 1, 0, 0, 30)
	b.op(bc.SEND, 1, 0, 1, 0) // empty messages cost ticks, not quota
	b.jump(bc.JMP, 0, 0, top)
	tc := testCase{prog: b.program(nil, 1<<16), cfg: vm.Config{Memory: 1 << 16, Output: 100, Trace: true}}
	m, out := runBoth(t, tc, 1<<40)
	// LI, then 3 rounds of SEND 30 (6 ticks), SEND 0 (3) and JMP (1),
	// then the fourth SEND 30 (6).
	if m.State() != vm.Faulted || m.Fault() != vm.OutputQuota || m.PC() != 16 || m.Ticks() != 1+3*10+6 {
		t.Fatalf("ended %v %v at pc %d after %d ticks, want OUTPUT_QUOTA at the SEND (16) after %d", m.State(), m.Fault(), m.PC(), m.Ticks(), 1+3*10+6)
	}
	if got := sentBytes(out); got != 90 || len(out.msgs) != 6 {
		t.Errorf("sent %d bytes in %d messages, want 90 in 6", got, len(out.msgs))
	}
	// A quota the messages fit exactly is not exceeded.
	tc.cfg.Output = 120
	if m, _ := runBoth(t, tc, 1+4*10); m.Fault() != vm.OutOfTicks {
		t.Errorf("with a quota of exactly 4 messages: %v, want OUT_OF_TICKS", m.Fault())
	}
}
