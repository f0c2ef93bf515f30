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
	if m.state == Running || m.mem == nil {
		return nil
	}
	b := new(Machine)
	*b = *m
	b.out, b.host = out, host
	b.mem = make([]byte, len(m.mem))
	copy(b.mem, m.mem)
	b.inbox = nil
	b.budget, b.ticks, b.left = m.budget-m.ticks, 0, 0
	b.outQuota = m.outLeft
	b.tracer = nil
	if m.tracer != nil {
		b.tracer = newTracer()
	}
	return b
}

// OutputUsed returns the bytes the machine has sent, all channels
// together (what its output quota counted).
func (m *Machine) OutputUsed() uint64 { return m.outQuota - m.outLeft }

// Join charges m for branch b, a machine Branch made from m that has
// stopped (HALTED, FAULTED, or BLOCKED where its host left it): on a
// traced m it appends b's trace hash to m's trace stream (8 units of 4
// bytes: the hash covers b's own stream, Enter's addresses and b's final
// state, pc and ticks), then adds b's ticks to m's and the bytes b sent
// to what m's output quota has counted. A host joins a block's branches
// in branch order, so m's ticks, quota and trace hash do not depend on
// the order in which the branches ran.
//
// When b's ticks do not fit in what m has left, or b faulted
// OUT_OF_TICKS (it needed more than that), m uses its whole budget and
// faults OUT_OF_TICKS, its pc unchanged; when b's output does not fit,
// or b faulted OUTPUT_QUOTA, m faults OUTPUT_QUOTA; when b faulted
// otherwise, m faults as b did, at b's pc. Join returns m's new fault, or
// NoFault. It does nothing and returns PERMISSION_DENIED when m is RUNNING
// or not BLOCKED or READY (a host joins branches into the machine
// waiting for them).
func (m *Machine) Join(b *Machine) Fault {
	if m.state != Blocked && m.state != Ready {
		return PermissionDenied
	}
	if m.tracer != nil {
		var h [32]byte
		if b.tracer != nil {
			h = b.tracer.sum(b)
		}
		for i := 0; i < len(h); i += 4 {
			m.tracer.put(binary.LittleEndian.Uint32(h[i:]))
		}
	}
	bf := NoFault
	if b.state == Faulted {
		bf = b.fault
	}
	if b.ticks > m.budget-m.ticks || bf == OutOfTicks {
		m.ticks = m.budget
		m.state, m.fault, m.userCode = Faulted, OutOfTicks, 0
		return OutOfTicks
	}
	m.ticks += b.ticks
	used := b.OutputUsed()
	if used > m.outLeft || bf == OutputQuota {
		m.state, m.fault, m.userCode = Faulted, OutputQuota, 0
		return OutputQuota
	}
	m.outLeft -= used
	if bf != NoFault {
		m.state, m.fault, m.userCode, m.pc = Faulted, bf, b.userCode, b.pc
		return bf
	}
	return NoFault
}
