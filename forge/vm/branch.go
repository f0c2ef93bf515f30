package vm

import "encoding/binary"

// Branch machines (docs/forge.md, "Parallel blocks"): a host runs the
// branches of a parallel block at once, each on a machine of its own
// that starts as a copy of the machine waiting for the block's reply,
// and then charges the waiting machine for them (Join), in branch order,
// so that what the branches cost does not depend on which ran first.

// Branch returns a new machine that starts as a copy of m, for running
// one of m's functions (Enter) beside m and beside other branches: it has
// m's image, grant, registers, stack pointer, pc and state, and a copy of
// m's memory, so that what a branch writes is seen neither by m nor by
// the other branches. Its tick budget is what m has left (Budget minus
// Ticks) and its tick count 0; its output quota is what m's has left; its
// channel queues are empty; on a traced m its trace starts empty (its
// events, Config.Events, are not reported: they would interleave). out
// and host receive its messages and its host calls.
//
// It returns nil when m is RUNNING (from inside a host call) or was
// created without memory. The copy reads m: m must not run meanwhile,
// but any number of branches may be made from it at once.
func (m *Machine) Branch(out Sender, host HostCalls) *Machine {
	return m.BranchInto(nil, out, host)
}

// BranchInto is Branch reusing machine b, a branch made earlier (of any
// machine) that is done with: its memory when it has the size of m's,
// its trace, its queue. With b nil it is Branch.
func (m *Machine) BranchInto(b *Machine, out Sender, host HostCalls) *Machine {
	if m.state == Running || m.mem == nil {
		return nil
	}
	var mem []byte
	var tr *tracer
	var inbox []message
	if b != nil {
		mem, tr, inbox = b.mem, b.tracer, b.inbox
	} else {
		b = new(Machine)
	}
	// The whole struct is copied, then what a branch must own of its own
	// is replaced: a field added to Machine that must not be shared
	// between machines (a buffer, a cache) must be replaced here too.
	*b = *m
	b.out, b.host = out, host
	if len(mem) != len(m.mem) {
		mem = make([]byte, len(m.mem))
	}
	copy(mem, m.mem)
	b.mem = mem
	clear(inbox)
	b.inbox = inbox[:0]
	b.budget, b.ticks, b.left = m.budget-m.ticks, 0, 0
	b.outQuota = m.outLeft
	b.tracer = nil
	if m.tracer != nil {
		if tr == nil {
			tr = newTracer()
		}
		tr.reset()
		tr.events = nil
		b.tracer = tr
	}
	return b
}

// OutputUsed returns the bytes the machine has sent, all channels
// together (what its output quota counted).
func (m *Machine) OutputUsed() uint64 { return m.outQuota - m.outLeft }

// Outcome is what Join charges a machine for a branch: the branch's
// ticks and output, how it ended, and its trace hash. Taking it lets the
// host reuse the branch machine before the block's other branches end.
type Outcome struct {
	ticks, output uint64
	state         State
	fault         Fault
	userCode      uint32
	pc            uint32
	traced        bool
	traceHash     [32]byte
}

// Outcome returns what Join needs of b, a branch that has stopped
// (HALTED, FAULTED, or BLOCKED where its host left it).
func (b *Machine) Outcome() Outcome {
	o := Outcome{ticks: b.ticks, output: b.OutputUsed(), state: b.state, fault: b.fault, userCode: b.userCode, pc: b.pc}
	if b.tracer != nil {
		o.traced, o.traceHash = true, b.tracer.sum(b)
	}
	return o
}

// Join charges m for a branch (Branch) that ended with o: on a traced m
// it appends the branch's trace hash to m's trace stream (8 units of 4
// bytes: the hash covers the branch's own stream, Enter's addresses and
// its final state, pc and ticks; zeros for an untraced branch), then adds
// its ticks to m's and the bytes it sent to what m's output quota has
// counted. A host joins a block's branches in branch order, so m's
// ticks, quota and trace hash do not depend on the order in which the
// branches ran.
//
// When the branch's ticks do not fit in what m has left, or it faulted
// OUT_OF_TICKS (it needed more than that), m uses its whole budget and
// faults OUT_OF_TICKS, its pc unchanged; when its output does not fit, or
// it faulted OUTPUT_QUOTA, m faults OUTPUT_QUOTA; when it faulted
// otherwise, m faults as it did, at its pc. Join returns m's new fault,
// or NoFault. It does nothing and returns PERMISSION_DENIED when m is not
// BLOCKED or READY (a host joins branches into the machine waiting for
// them).
func (m *Machine) Join(o Outcome) Fault {
	if m.state != Blocked && m.state != Ready {
		return PermissionDenied
	}
	if m.tracer != nil {
		for i := 0; i < len(o.traceHash); i += 4 {
			m.tracer.put(binary.LittleEndian.Uint32(o.traceHash[i:]))
		}
	}
	bf := NoFault
	if o.state == Faulted {
		bf = o.fault
	}
	if o.ticks > m.budget-m.ticks || bf == OutOfTicks {
		m.ticks = m.budget
		m.state, m.fault, m.userCode = Faulted, OutOfTicks, 0
		return OutOfTicks
	}
	m.ticks += o.ticks
	if o.output > m.outLeft || bf == OutputQuota {
		m.state, m.fault, m.userCode = Faulted, OutputQuota, 0
		return OutputQuota
	}
	m.outLeft -= o.output
	if bf != NoFault {
		m.state, m.fault, m.userCode, m.pc = Faulted, bf, o.userCode, o.pc
		return bf
	}
	return NoFault
}
