package vm

import (
	"crypto/sha256"
	"encoding/binary"
	"hash"
)

// The trace of a run is the byte stream that, with the program, determines
// every instruction it executed, in order:
//
//   - each conditional branch (JZ, JNZ, JLT, JLTS, JEQ, JNE) contributes one bit,
//     1 if taken, packed least significant bit first into 64-bit words;
//     a word is appended (8 bytes, little-endian) when its 64th bit is set;
//   - each RET appends the byte address it returns to (4 bytes,
//     little-endian), at the moment it executes;
//   - each Machine.Enter appends the function's address and the return
//     address (4 bytes each), and each Machine.Restore the pc it
//     restores (4 bytes): a host's nested calls (nested.go);
//   - at the end, the partial bit word (8 bytes), the number of bits in it
//     (1 byte), then the final state (1 byte), fault code (1 byte), user
//     code (4 bytes), pc (8 bytes) and ticks used (8 bytes).
//
// Everything else (JMP and CALL targets, fall-through, HCALL) follows
// from the program; what a host function returns, like what a RECV
// receives, shows in the branches it steers. The trace hash is the sha256 of the stream. It does not depend
// on when the host delivered input, only on what the program observed.

type tracer struct {
	bits  uint64
	nbits uint
	n     int
	buf   [2048]uint32 // the stream in 4-byte units, not yet hashed
	bytes [2048 * 4]byte
	h     hash.Hash
	// events, when set, also receives each event (Config.Events).
	events TraceEvents
}

func newTracer() *tracer { return &tracer{h: sha256.New()} }

// reset empties the stream, for Machine.Reset.
func (t *tracer) reset() {
	t.bits, t.nbits, t.n = 0, 0, 0
	t.h.Reset()
}

// branch records a conditional branch's outcome. It is small enough to
// be inlined into traceBranch; a full word goes out through word.
func (t *tracer) branch(taken bool) {
	if taken {
		t.bits |= 1 << t.nbits
	}
	t.nbits++
	if t.nbits == 64 {
		t.word()
	}
}

// word appends the full word of branch bits to the stream.
func (t *tracer) word() {
	t.put(uint32(t.bits))
	t.put(uint32(t.bits >> 32))
	t.bits, t.nbits = 0, 0
}

// ret records the byte address a RET returns to.
func (t *tracer) ret(to uint64) {
	t.put(uint32(to))
}

// traceBranch and traceRet are the interpreter's calls to the tracer. They
// take the loop's hot values (the next slot, the budget left, the stack
// pointer) and return them unchanged, so that none is live across the
// call: the Go compiler would otherwise spill it on every dispatch, traced
// or not.
//
//go:noinline
func (m *Machine) traceBranch(taken bool, ip *inst, left, sp uint64) (*inst, uint64, uint64) {
	m.tracer.branch(taken)
	if m.tracer.events != nil {
		m.tracer.events.Branch(taken)
	}
	return ip, left, sp
}

// traceRet: see traceBranch. to is the byte address returned to.
//
//go:noinline
func (m *Machine) traceRet(to uint64, ip *inst, left, sp uint64) (*inst, uint64, uint64) {
	m.tracer.ret(to)
	if m.tracer.events != nil {
		m.tracer.events.Return(to)
	}
	return ip, left, sp
}

// put appends one 4-byte unit to the stream.
func (t *tracer) put(v uint32) {
	if t.n == len(t.buf) {
		t.flush()
	}
	t.buf[t.n] = v
	t.n++
}

func (t *tracer) flush() {
	for i, v := range t.buf[:t.n] {
		binary.LittleEndian.PutUint32(t.bytes[4*i:], v)
	}
	t.h.Write(t.bytes[:4*t.n])
	t.n = 0
}

// sum finishes the stream with the final record, without disturbing it (a
// machine's trace hash can be asked for more than once).
func (t *tracer) sum(m *Machine) [32]byte {
	t.flush()
	var tail [8 + 1 + 1 + 1 + 4 + 8 + 8]byte
	binary.LittleEndian.PutUint64(tail[0:], t.bits)
	tail[8] = byte(t.nbits)
	tail[9] = byte(m.state)
	tail[10] = byte(m.fault)
	binary.LittleEndian.PutUint32(tail[11:], m.userCode)
	binary.LittleEndian.PutUint64(tail[15:], m.PC())
	binary.LittleEndian.PutUint64(tail[23:], m.ticks)
	h := sha256.New()
	// Copy the running state: hash.Hash has no Clone, but sha256's digest
	// marshals its state.
	state, _ := t.h.(interface{ MarshalBinary() ([]byte, error) }).MarshalBinary()
	_ = h.(interface{ UnmarshalBinary([]byte) error }).UnmarshalBinary(state)
	h.Write(tail[:])
	var out [32]byte
	h.Sum(out[:0])
	return out
}
