// Package vm is the Forge Machine: a deterministic, tick-metered register
// machine with 256 64-bit registers, a linear byte memory holding code,
// data, heap and stack, and 16 message channels.
//
// A Machine runs until it halts, faults or blocks on an empty channel; it
// never blocks the calling goroutine. A host services the channel the
// machine is blocked on (Deliver) and calls Run again. Everything that
// enters a machine does so through Deliver, the host functions HCALL
// calls (Config.Host) and the functions a host calls while the program
// waits (Enter), so a host whose functions and calls are deterministic
// reproduces a run bit for bit from a record of its deliveries (a
// journal).
package vm

import (
	"encoding/binary"
	"fmt"
	"unsafe"
)

// State is a machine's lifecycle state.
type State uint8

const (
	Ready State = iota
	Running
	Blocked
	Halted
	Faulted
)

var stateNames = [...]string{"READY", "RUNNING", "BLOCKED", "HALTED", "FAULTED"}

func (s State) String() string {
	if int(s) < len(stateNames) {
		return stateNames[s]
	}
	return fmt.Sprintf("State(%d)", s)
}

// Fault is a fault code of 05-FORGE.md §3.3.
type Fault uint8

const (
	NoFault            Fault = 0x00
	OutOfTicks         Fault = 0x01
	OutOfMemory        Fault = 0x02
	DivideByZero       Fault = 0x03
	InvalidAddress     Fault = 0x04
	InvalidInstruction Fault = 0x05
	StackOverflow      Fault = 0x06
	StackUnderflow     Fault = 0x07
	ChannelError       Fault = 0x08
	PermissionDenied   Fault = 0x09
	OutputQuota        Fault = 0x0A // not in 05-FORGE.md: see Config.Output
	HostFault          Fault = 0x0B // not in 05-FORGE.md: a host call refused its operands (HostCalls)
	UserFault          Fault = 0xFF
)

var faultNames = map[Fault]string{
	OutOfTicks:         "OUT_OF_TICKS",
	OutOfMemory:        "OUT_OF_MEMORY",
	DivideByZero:       "DIVIDE_BY_ZERO",
	InvalidAddress:     "INVALID_ADDRESS",
	InvalidInstruction: "INVALID_INSTRUCTION",
	StackOverflow:      "STACK_OVERFLOW",
	StackUnderflow:     "STACK_UNDERFLOW",
	ChannelError:       "CHANNEL_ERROR",
	PermissionDenied:   "PERMISSION_DENIED",
	OutputQuota:        "OUTPUT_QUOTA",
	HostFault:          "HOST_FAULT",
	UserFault:          "USER_FAULT",
}

func (f Fault) String() string {
	if n, ok := faultNames[f]; ok {
		return n
	}
	if f == NoFault {
		return "NONE"
	}
	return fmt.Sprintf("FAULT_0x%02X", uint8(f))
}

// Faults lists every fault code in numeric order.
func Faults() []Fault {
	return []Fault{OutOfTicks, OutOfMemory, DivideByZero, InvalidAddress, InvalidInstruction,
		StackOverflow, StackUnderflow, ChannelError, PermissionDenied, OutputQuota, HostFault, UserFault}
}

// Channels. 0 and 1 are output only, 2 is input only, 3–8 carry requests
// and replies, 9 is the agent ABI's control channel (package agentabi),
// 10–15 are reserved.
const (
	ChanStdout   = 0
	ChanStderr   = 1
	ChanStdin    = 2
	NumChannels  = 16
	maxUsedChan  = 9
	DefaultGrant = 1<<ChanStdout | 1<<ChanStderr | 1<<ChanStdin
)

// MaxMemory is the largest memory quota a machine accepts: 4 GiB. Memory
// is allocated whole when a machine is created, and a Go program cannot
// survive an allocation the host refuses, so the quota is bounded.
const MaxMemory = 1 << 32

// Config sets a machine's limits.
type Config struct {
	Ticks  uint64 // tick budget
	Memory uint64 // memory quota in bytes: code, data, heap and stack
	Stack  uint64 // bytes at the top of memory reserved for the stack
	// Grant is the set of channels (bit i for channel i) the program may
	// use; using another is PERMISSION_DENIED. Zero means DefaultGrant.
	Grant uint16
	// Output is the output quota: the most bytes the program may send,
	// all channels together. A SEND that would go past it faults
	// OUTPUT_QUOTA and sends nothing. Zero means no quota: the tick
	// budget alone bounds what a run sends (bytecode.BytesPerTick bytes a
	// tick).
	Output uint64
	// Trace computes the trace hash (for proofs and replays).
	Trace bool
	// Events, when set, receives the events of the trace stream as they
	// happen (and implies Trace): with the program they determine every
	// instruction the run executes, in order, which is how the dynamic
	// instruction counts of bench/paircount are taken on the real
	// interpreter. It costs an interface call per conditional branch and
	// RET; untraced runs do not pay for it.
	Events TraceEvents
	// Host services HCALL. Without one, HCALL faults PERMISSION_DENIED:
	// a program that needs host functions cannot run where none are
	// offered.
	Host HostCalls
}

// HostCalls services HCALL.
type HostCalls interface {
	// HostCall runs host function imm on m's registers (operands r0–r2,
	// result in r0 via m.SetRegister) and returns the ticks it costs
	// beyond HCALL's own and NoFault, or the fault that ends the run.
	//
	// The machine charges HCALL's base cost before the call, like any
	// instruction's, and the returned ticks after it: when they exceed
	// the budget left, the machine faults OUT_OF_TICKS at the HCALL with
	// every tick of its budget used; else a fault other than NoFault
	// stops it at the HCALL with the ticks charged (HOST_FAULT is the
	// one for operands a function refuses). During the call the machine
	// is RUNNING, with PC at the HCALL and Ticks exact (the HCALL's base
	// cost charged); the host may read registers and memory and set
	// registers, but Run, Enter and Restore do nothing then. What the
	// host does must depend only on the machine's registers and memory,
	// and on what it delivers, for a run to stay reproducible.
	HostCall(m *Machine, imm uint32) (ticks uint64, f Fault)
}

// TraceEvents receives the events of a traced run (Config.Events): Branch
// for each conditional branch (JZ, JNZ, JLT, JLTS, JEQ, JNE), with whether it was
// taken, and Return for each RET, with the byte address it returns to.
// JMP and CALL targets and fall-through follow from the program, as in
// the trace stream (trace.go). The calls are synchronous, in execution
// order; a machine that faults inside a straight-line run reports
// nothing for the instructions of the run after the fault.
type TraceEvents interface {
	Branch(taken bool)
	Return(to uint64)
}

// Sender receives the messages a machine sends, synchronously, in order.
// The message is only valid during the call.
type Sender interface {
	Send(ch uint8, msg []byte)
}

// Machine is one sandbox. Its zero value is not usable; create one with
// New. A Machine is not safe for concurrent use, but any number of
// machines, sharing Images or not, may run in parallel.
type Machine struct {
	regs [256]uint64

	img    *Image
	mem    []byte
	out    Sender
	host   HostCalls
	inbox  []message
	tracer *tracer

	pc       uint32 // slot of the next instruction
	sp       uint64
	heapEnd  uint64
	ticks    uint64 // ticks used (exact whenever the machine is not running)
	left     uint64 // while running: budget minus the ticks charged so far
	budget   uint64
	outLeft  uint64 // bytes the output quota still allows
	outQuota uint64 // the output quota at start (for Reset)
	userCode uint32
	grant    uint16
	state    State
	fault    Fault
	blockCh  uint8
	// blockPoll is set when the machine is BLOCKED at a POLL rather than
	// at a RECV.
	blockPoll bool
}

type message struct {
	ch   uint8
	data []byte
}

// New creates a machine for img with the given limits. If code, data and
// stack do not fit in the memory quota, or the quota exceeds MaxMemory,
// the machine starts FAULTED with OUT_OF_MEMORY.
func New(img *Image, cfg Config, out Sender) *Machine {
	m := &Machine{img: img, out: out, host: cfg.Host, budget: cfg.Ticks, grant: cfg.Grant, pc: img.entry, outLeft: cfg.Output}
	if m.outLeft == 0 {
		m.outLeft = 1<<64 - 1
	}
	m.outQuota = m.outLeft
	if m.grant == 0 {
		m.grant = DefaultGrant
	}
	if cfg.Trace || cfg.Events != nil {
		m.tracer = newTracer()
		m.tracer.events = cfg.Events
	}
	if cfg.Memory < img.heapStart || cfg.Memory-img.heapStart < cfg.Stack || cfg.Memory > MaxMemory {
		m.state, m.fault = Faulted, OutOfMemory
		return m
	}
	m.mem = make([]byte, cfg.Memory)
	copy(m.mem, img.memory)
	m.sp = cfg.Memory
	m.heapEnd = cfg.Memory - cfg.Stack
	m.startRegisters()
	m.state = Ready
	return m
}

// State returns the machine's state.
func (m *Machine) State() State { return m.state }

// Fault returns the fault code of a FAULTED machine.
func (m *Machine) Fault() Fault { return m.fault }

// UserCode returns the code of a USER_FAULT.
func (m *Machine) UserCode() uint32 { return m.userCode }

// PC returns the byte address of the next instruction to run, or of the
// faulting instruction.
func (m *Machine) PC() uint64 { return uint64(m.pc) * 8 }

// Ticks returns the ticks used so far.
func (m *Machine) Ticks() uint64 { return m.ticks }

// Budget returns the tick budget.
func (m *Machine) Budget() uint64 { return m.budget }

// BlockedOn returns the channel a BLOCKED machine waits on.
func (m *Machine) BlockedOn() uint8 { return m.blockCh }

// BlockedPolling reports whether a BLOCKED machine waits at a POLL (a
// POLL of an input channel with no message queued) rather than at a
// RECV. Hosts count these waits: before journal and proof version 3 such
// a POLL gave 0 at once, so a run that has one cannot reproduce an older
// record.
func (m *Machine) BlockedPolling() bool { return m.state == Blocked && m.blockPoll }

// Register returns the value of register r.
func (m *Machine) Register(r uint8) uint64 { return m.regs[r] }

// Memory returns the machine's linear memory (to inspect, not to modify).
func (m *Machine) Memory() []byte { return m.mem }

// SP returns the stack pointer.
func (m *Machine) SP() uint64 { return m.sp }

// TraceHashBlocked is TraceHash for a machine that is BLOCKED too: a host
// may end a run whose program waits on a channel, as the agent host does
// when the run stops at an effect, and prove it.
func (m *Machine) TraceHashBlocked() ([32]byte, bool) {
	if m.tracer != nil && m.state == Blocked {
		return m.tracer.sum(m), true
	}
	return m.TraceHash()
}

// TraceHash returns the trace hash of a machine created with Config.Trace
// once it has stopped (HALTED or FAULTED), and false otherwise.
func (m *Machine) TraceHash() ([32]byte, bool) {
	if m.tracer == nil || (m.state != Halted && m.state != Faulted) {
		return [32]byte{}, false
	}
	return m.tracer.sum(m), true
}

// Deliver queues a message on an input channel. Messages on one channel
// are received in the order delivered. A message may be empty (by
// convention, end of input).
func (m *Machine) Deliver(ch uint8, msg []byte) {
	m.inbox = append(m.inbox, message{ch: ch, data: append([]byte(nil), msg...)})
}

// Pending returns the number of bytes left in the head message of channel
// ch and whether there is one.
func (m *Machine) Pending(ch uint8) (int, bool) {
	for i := range m.inbox {
		if m.inbox[i].ch == ch {
			return len(m.inbox[i].data), true
		}
	}
	return 0, false
}

// Size returns the bytes a machine occupies beyond its linear memory and
// registers: its own fields, not counting queued messages.
func Size() int { return int(machineSize) - 256*8 }

// Run executes until the machine halts, faults or blocks, and returns the
// new state. Run on a HALTED or FAULTED machine does nothing; on a BLOCKED
// machine it retries the blocked RECV or POLL.
func (m *Machine) Run() State {
	if m.state != Ready && m.state != Blocked {
		return m.state
	}
	m.state = Running
	m.left = m.budget - m.ticks
	m.exec(m.img.code, 0, uint64(m.pc))
	return m.state
}

// channelOK checks that channel ch exists, may be used in the direction
// wanted, and is granted. It returns the fault to raise or NoFault.
func (m *Machine) channelOK(ch uint8, send bool) Fault {
	switch {
	case ch >= NumChannels || ch > maxUsedChan:
		return ChannelError
	case send && ch == ChanStdin, !send && (ch == ChanStdout || ch == ChanStderr):
		return ChannelError
	case m.grant&(1<<ch) == 0:
		return PermissionDenied
	}
	return NoFault
}

// send implements SEND: the len bytes at addr leave on channel ch, if
// the output quota allows them all.
func (m *Machine) send(ch uint8, addr, n uint64) Fault {
	if f := m.channelOK(ch, true); f != NoFault {
		return f
	}
	if addr > uint64(len(m.mem)) || n > uint64(len(m.mem))-addr {
		return InvalidAddress
	}
	if n > m.outLeft {
		return OutputQuota
	}
	m.outLeft -= n
	if m.out != nil {
		m.out.Send(ch, m.mem[addr:addr+n])
	}
	return NoFault
}

// recv implements RECV. It returns blocked when channel ch has no message.
// It charges the bytes it moves to m.left (recvCost) before it copies
// them; when they do not fit, it faults OUT_OF_TICKS with nothing copied
// and nothing charged.
func (m *Machine) recv(ch uint8, addr, maxlen uint64) (f Fault, blocked bool) {
	if f := m.channelOK(ch, false); f != NoFault {
		return f, false
	}
	if addr < m.img.heapStart || addr > uint64(len(m.mem)) || maxlen > uint64(len(m.mem))-addr {
		return InvalidAddress, false
	}
	for i := range m.inbox {
		msg := &m.inbox[i]
		if msg.ch != ch {
			continue
		}
		c := recvCost(min(maxlen, uint64(len(msg.data))))
		if c > m.left {
			return OutOfTicks, false
		}
		m.left -= c
		n := copy(m.mem[addr:addr+maxlen], msg.data)
		msg.data = msg.data[n:]
		if len(msg.data) == 0 {
			m.inbox = append(m.inbox[:i], m.inbox[i+1:]...)
		}
		return NoFault, false
	}
	return NoFault, true
}

// poll implements POLL: the bytes left in the head message of channel
// ch. It returns blocked when the channel has no message: POLL reports
// what the next RECV would receive, and only the host knows that, so the
// machine waits for the host to deliver the next message (the end of
// input is an empty one) as a RECV would, uncharged (docs/forge.md,
// "Channels").
func (m *Machine) poll(ch uint8) (n uint64, f Fault, blocked bool) {
	if f := m.channelOK(ch, false); f != NoFault {
		return 0, f, false
	}
	k, ok := m.Pending(ch)
	return uint64(k), NoFault, !ok
}

const machineSize = unsafe.Sizeof(Machine{})

func le64(b []byte) uint64       { return binary.LittleEndian.Uint64(b) }
func putLE64(b []byte, v uint64) { binary.LittleEndian.PutUint64(b, v) }

// charged returns the ticks charged so far while running: the exact count
// plus the cost of the rest of the current run.
func (m *Machine) charged() uint64 { return m.budget - m.left }

// stop records how and where the machine stopped; ticks is exact.
func (m *Machine) stop(s State, f Fault, slot, ticks uint64) {
	m.state, m.fault, m.pc, m.ticks = s, f, uint32(slot), ticks
}

// tail runs the run starting at m.pc that does not fit in the budget: it
// executes exactly the instructions whose cost fits, then faults
// OUT_OF_TICKS at the first one that does not, without executing it. The
// instructions that fit are copied, unfused, into a scratch code array that
// ends in an opOutOfTicks slot, with run values that end there; exec runs
// it like any code. A run holds no branch before its last instruction, so
// execution cannot leave the scratch array.
func (m *Machine) tail() {
	code := m.img.code
	j := m.pc
	left := m.budget - m.ticks
	k := j
	for spent := uint64(0); ; {
		o := canonicalOf[code[k].op]
		c := slotCost(&code[k])
		if spent+c > left {
			break
		}
		spent += c
		k++
		if o == opLI {
			k++
		}
	}
	if k == j {
		m.stop(Faulted, OutOfTicks, uint64(j), m.ticks)
		return
	}
	end := code[k].run
	scratch := make([]inst, k-j+1)
	for i := j; i < k; i++ {
		x := code[i]
		x.op = canonicalOf[x.op]
		x.run -= end
		scratch[i-j] = x
	}
	scratch[k-j] = inst{op: opOutOfTicks}
	m.left = m.budget - m.ticks
	m.exec(scratch, uint64(j), 0)
}
