// Package agentabi is the contract between an agent program compiled for
// the Forge Machine (backend/forgegen) and the host that runs it
// (forge/host): the program's agent metadata, the host calls of the value
// builtins, the handles that name values, and the frames of the effects on
// channels 3–9. docs/forge.md, "Agent programs: the host ABI", is its
// prose; this package is its one implementation on both sides, so that
// the two cannot drift apart.
//
// In short: the dynamic values of an agent program live in the host's
// value store and the sandbox holds handles to them (64-bit words tagged
// with HandleTag). A builtin on values is one HCALL instruction whose
// immediate names the builtin (an index into Metadata.Builtins) and the
// source position its error values carry (an index into
// Metadata.Positions); its operands are in r0–r2 and its result in r0.
// An effect is a request frame sent on the channel of its operation and
// answered by one reply frame holding a handle (Stop is never answered).
package agentabi

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// Version is the version of this ABI; Metadata.Version holds it and a
// host refuses a program of another.
const Version = 1

// Format is the value of Metadata.Format: what marks a Forge program as
// an agent program.
const Format = "genesis-agent"

// Handles. A handle is HandleTag | i for the value at index i ≥ 1 of the
// host's store; 0 and any word without the tag name no value. The
// constants of Metadata.Constants are the indices 1 to len(Constants), in
// order, in every run. The tag keeps the words that hold handles apart
// from the integers a program computes (a host that collects the values
// no register or memory word names scans for tagged words).
const (
	HandleTag  uint64 = 0x5647 << 48 // "GV"
	HandleMask uint64 = 0xFFFF << 48
	MaxIndex          = 1<<48 - 1
)

// Handle returns the handle of the value at index i of the store.
func Handle(i uint64) uint64 { return HandleTag | i }

// Index returns the store index a handle names, and false for a word
// that is no handle.
func Index(h uint64) (uint64, bool) {
	if h&HandleMask != HandleTag || h == HandleTag {
		return 0, false
	}
	return h &^ HandleMask, true
}

// Host calls. HCALL's 32-bit immediate holds the builtin (its index in
// Metadata.Builtins) in its low 8 bits and, above, the index in
// Metadata.Positions of the operation's source position, 0 for none: the
// position an error value of a fallible builtin names (runtime.ErrorAt),
// as on the Go target.
const (
	MaxBuiltins  = 1 << 8
	MaxPositions = 1 << 24
)

// HostCallImm returns the immediate of the HCALL of builtin b at
// position pos.
func HostCallImm(b, pos int) uint32 { return uint32(pos)<<8 | uint32(b) }

// SplitHostCallImm returns the builtin and position indexes of an HCALL
// immediate.
func SplitHostCallImm(imm uint32) (b, pos int) { return int(imm & 0xFF), int(imm >> 8) }

// Op is an effect operation: the first item of a request frame.
type Op uint8

// The effect operations, each with the IR operation it implements
// (docs/ir.md) and the channel its frames travel on.
const (
	OpLLM          Op = 1  // llm: channel 4 (Oracle)
	OpJudge        Op = 2  // judge: channel 4
	OpTool         Op = 3  // tool: channel 8
	OpEmit         Op = 4  // emit: channel 5 (Agora)
	OpStateGet     Op = 5  // state.get: channel 3 (Vault)
	OpStatePut     Op = 6  // state.put: channel 3
	OpWait         Op = 7  // wait: channel 9 (control)
	OpStop         Op = 8  // stop: channel 9, never answered
	OpTrace        Op = 9  // trace: channel 9
	OpExport       Op = 10 // export: channel 9
	OpParallel     Op = 11 // parallel: channel 9
	OpParallelEach Op = 12 // parallel.each: channel 9
	numOps            = 13
)

// Channels of the agent ABI (DESIGN §3 places 3–8; 9 is this ABI's).
const (
	ChanVault   uint8 = 3
	ChanOracle  uint8 = 4
	ChanAgora   uint8 = 5
	ChanTools   uint8 = 8
	ChanControl uint8 = 9
)

// Grant is the set of channels an agent program is granted: the standard
// ones and 3, 4, 5, 8 and 9.
const Grant uint16 = 1<<0 | 1<<1 | 1<<2 | 1<<ChanVault | 1<<ChanOracle | 1<<ChanAgora | 1<<ChanTools | 1<<ChanControl

var opInfo = [numOps]struct {
	name string
	ch   uint8
	args int // argument words after the iteration counters
}{
	OpLLM:          {"llm", ChanOracle, 2},
	OpJudge:        {"judge", ChanOracle, 2},
	OpTool:         {"tool", ChanTools, 2},
	OpEmit:         {"emit", ChanAgora, 2},
	OpStateGet:     {"state.get", ChanVault, 1},
	OpStatePut:     {"state.put", ChanVault, 2},
	OpWait:         {"wait", ChanControl, 1},
	OpStop:         {"stop", ChanControl, 2},
	OpTrace:        {"trace", ChanControl, 2},
	OpExport:       {"export", ChanControl, 2},
	OpParallel:     {"parallel", ChanControl, 2},
	OpParallelEach: {"parallel.each", ChanControl, 2},
}

// Valid reports whether op is an operation of this ABI.
func (op Op) Valid() bool { return op >= 1 && op < numOps }

// String returns the IR name of op.
func (op Op) String() string {
	if !op.Valid() {
		return fmt.Sprintf("op(%d)", uint8(op))
	}
	return opInfo[op].name
}

// Channel returns the channel op's frames travel on.
func (op Op) Channel() uint8 { return opInfo[op].ch }

// Args returns the number of argument words of op's requests: its
// operands (handles; for parallel and parallel.each the concurrency limit,
// a signed integer, then the argument's or the items' handle).
func (op Op) Args() int { return opInfo[op].args }

// OpNamed returns the operation whose IR name is name.
func OpNamed(name string) (Op, bool) {
	for op := Op(1); op < numOps; op++ {
		if opInfo[op].name == name {
			return op, true
		}
	}
	return 0, false
}

// Frames. On channels 3–9 the host reads the program's messages as one
// byte stream of frames, [u64 little-endian length][payload], and
// answers a request with one frame.
//
// A request's payload is the CBOR array (deterministic encoding, RFC 8949
// §4.2) [op, site, k, words]: op and site (the index of the step's site in
// Metadata.Sites) unsigned integers, k the number of iteration counters,
// and words a byte string of 8·(k+n) bytes: the k counters (signed,
// little-endian), then the n = op.Args() argument words. Everything but
// the words is known when the program is compiled: the program sends it
// as one constant prefix (RequestPrefix) and the words from memory.
//
// A reply's payload is the CBOR byte string of 8 bytes holding the
// handle of the operation's result, little-endian (unit for operations
// without one): ReplySize bytes in all, the handle at ReplyHandleOffset.
const (
	ReplySize         = 8 + 1 + 8
	ReplyHandleOffset = 9
	// MaxIters bounds the iteration counters of one step identity.
	MaxIters = 64
)

// RequestPrefix returns the bytes a request frame of op at site with k
// iteration counters starts with, up to its words: the frame's length,
// the array's head, op, site and k, and the head of the byte string.
func RequestPrefix(op Op, site, k int) []byte {
	words := 8 * (k + op.Args())
	var p []byte
	p = append(p, 0x84) // array(4)
	p = appendUint(p, 0, uint64(op))
	p = appendUint(p, 0, uint64(site))
	p = appendUint(p, 0, uint64(k))
	p = appendUint(p, 2, uint64(words)) // byte string head
	n := len(p) + words
	frame := binary.LittleEndian.AppendUint64(nil, uint64(n))
	return append(frame, p...)
}

// appendUint appends the head of a CBOR item of major type major and
// argument v in its shortest form (RFC 8949 §4.2.1).
func appendUint(p []byte, major byte, v uint64) []byte {
	m := major << 5
	switch {
	case v < 24:
		return append(p, m|byte(v))
	case v <= 0xFF:
		return append(p, m|24, byte(v))
	case v <= 0xFFFF:
		return binary.BigEndian.AppendUint16(append(p, m|25), uint16(v))
	case v <= 0xFFFFFFFF:
		return binary.BigEndian.AppendUint32(append(p, m|26), uint32(v))
	}
	return binary.BigEndian.AppendUint64(append(p, m|27), v)
}

// readUint reads the head of a CBOR item of major type major in its
// shortest form.
func readUint(p []byte, major byte) (v uint64, rest []byte, err error) {
	if len(p) == 0 {
		return 0, nil, errShort
	}
	if p[0]>>5 != major {
		return 0, nil, fmt.Errorf("CBOR major type %d where %d was expected", p[0]>>5, major)
	}
	info := p[0] & 31
	p = p[1:]
	switch {
	case info < 24:
		return uint64(info), p, nil
	case info == 24 && len(p) >= 1:
		v, p = uint64(p[0]), p[1:]
		if v < 24 {
			return 0, nil, errNotShortest
		}
	case info == 25 && len(p) >= 2:
		v, p = uint64(binary.BigEndian.Uint16(p)), p[2:]
		if v <= 0xFF {
			return 0, nil, errNotShortest
		}
	case info == 26 && len(p) >= 4:
		v, p = uint64(binary.BigEndian.Uint32(p)), p[4:]
		if v <= 0xFFFF {
			return 0, nil, errNotShortest
		}
	case info == 27 && len(p) >= 8:
		v, p = binary.BigEndian.Uint64(p), p[8:]
		if v <= 0xFFFFFFFF {
			return 0, nil, errNotShortest
		}
	case info < 28:
		return 0, nil, errShort
	default:
		return 0, nil, fmt.Errorf("CBOR additional information %d is not a definite length", info)
	}
	return v, p, nil
}

var (
	errShort       = errors.New("truncated CBOR item")
	errNotShortest = errors.New("CBOR integer not in its shortest form (RFC 8949 §4.2.1)")
)

// Request is a decoded request frame.
type Request struct {
	Op    Op
	Site  int
	Iters []int64
	Args  []uint64
}

// ParseRequest decodes a request payload (the frame without its length
// word). It accepts exactly the encoding RequestPrefix and the words
// make, and nothing else.
func ParseRequest(payload []byte) (Request, error) {
	var r Request
	if len(payload) == 0 || payload[0] != 0x84 {
		return r, errors.New("a request is a CBOR array of 4 items")
	}
	p := payload[1:]
	op, p, err := readUint(p, 0)
	if err != nil {
		return r, fmt.Errorf("op: %w", err)
	}
	if op >= numOps || !Op(op).Valid() {
		return r, fmt.Errorf("unknown operation %d", op)
	}
	r.Op = Op(op)
	site, p, err := readUint(p, 0)
	if err != nil {
		return r, fmt.Errorf("site: %w", err)
	}
	if site > 1<<31 {
		return r, fmt.Errorf("site %d out of range", site)
	}
	r.Site = int(site)
	k, p, err := readUint(p, 0)
	if err != nil {
		return r, fmt.Errorf("iteration count: %w", err)
	}
	if k > MaxIters {
		return r, fmt.Errorf("%d iteration counters, more than %d", k, MaxIters)
	}
	n, p, err := readUint(p, 2)
	if err != nil {
		return r, fmt.Errorf("words: %w", err)
	}
	want := 8 * (k + uint64(r.Op.Args()))
	if n != want || uint64(len(p)) != n {
		return r, fmt.Errorf("%s request with %d iteration counters has %d bytes of words (with %d after the head), not %d", r.Op, k, n, len(p), want)
	}
	r.Iters = make([]int64, k)
	for i := range r.Iters {
		r.Iters[i] = int64(binary.LittleEndian.Uint64(p[8*i:]))
	}
	p = p[8*k:]
	r.Args = make([]uint64, r.Op.Args())
	for i := range r.Args {
		r.Args[i] = binary.LittleEndian.Uint64(p[8*i:])
	}
	return r, nil
}

// Reply returns the whole reply frame (length word and payload) holding
// handle h.
func Reply(h uint64) []byte {
	b := make([]byte, ReplySize)
	binary.LittleEndian.PutUint64(b, ReplySize-8)
	b[8] = 0x48 // byte string of 8 bytes
	binary.LittleEndian.PutUint64(b[ReplyHandleOffset:], h)
	return b
}
