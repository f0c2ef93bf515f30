package vm

import "github.com/genesis-toolchain/genesis/forge/bytecode"

// Channel traffic is metered (docs/forge.md, "Metering"): SEND and RECV
// cost their fixed 3 ticks plus one tick per whole bytecode.BytesPerTick
// bytes they move.
//
// A SEND moves its length, an immediate, so its whole cost is known when
// the program is loaded: it is part of the run values like any other
// cost, and a SEND ends its run (see NewImage), which keeps run values
// within 32 bits and makes what was charged up to a SEND exactly what
// one-at-a-time metering charges through it. A RECV moves min(maxlen,
// the head message's length), known only once a message is queued: the
// run entry charges its fixed part, and Machine.recv charges the bytes
// before it copies them, or faults OUT_OF_TICKS with nothing copied and
// nothing charged. A RECV ends its run too, so the budget left at that
// point is exact.

// encodedCost is the cost of a canonical instruction as its encoding
// tells it: its opcode's cost, plus the bytes a SEND moves. cost is the
// opcode's cost from the table.
func encodedCost(op bytecode.Opcode, imm, cost uint64) uint64 {
	if op == bytecode.SEND {
		return cost + imm/bytecode.BytesPerTick
	}
	return cost
}

// slotCost is encodedCost for an interpreter slot, fused or not: the cost
// of the slot's first canonical instruction.
func slotCost(x *inst) uint64 {
	o := canonicalOf[x.op]
	c := uint64(costOf[o])
	if o == opSEND {
		c += x.imm / bytecode.BytesPerTick
	}
	return c
}

// recvCost is the part of a RECV's cost that depends on the n bytes it
// moves.
func recvCost(n uint64) uint64 { return n / bytecode.BytesPerTick }
