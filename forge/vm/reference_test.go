package vm_test

// The reference interpreter: the Forge Machine written as plainly as
// possible, straight from the specification (05-FORGE.md §2, DESIGN.md §3),
// one instruction at a time over the canonical bytes. It has no
// translation, no fusion, no per-run metering: each step decodes the
// instruction at pc with bytecode.DecodeAt, checks the budget, charges the
// instruction's cost from the opcode table and executes it. It is the
// oracle the fast interpreter (vm.Machine) is compared with.

import (
	"crypto/sha256"
	"encoding/binary"

	bc "github.com/genesis-toolchain/genesis/forge/bytecode"
	"github.com/genesis-toolchain/genesis/forge/vm"
)

type refMachine struct {
	code   []byte
	starts map[uint64]bool // byte addresses of instruction starts

	regs [256]uint64
	mem  []byte

	pc        uint64
	sp        uint64
	heapStart uint64
	heapEnd   uint64
	ticks     uint64
	budget    uint64
	grant     uint16
	quota     uint64 // output quota; 0: none
	sentBytes uint64
	host      bool // HCALL calls fakeCall (Config.Host is a fakeHost)
	// hostTicks is set when an HCALL faulted OUT_OF_TICKS for the ticks
	// its host function reported.
	hostTicks bool

	state    vm.State
	fault    vm.Fault
	userCode uint32
	blockCh  uint8

	inbox [256][][]byte // queued messages per channel, head first
	sent  []sentMsg
	recvd uint64 // bytes RECV copied into memory
	steps uint64 // instructions executed (faulting ones included)

	// The trace stream of trace.go, kept whole: one bit per conditional
	// branch (taken = 1) packed into little-endian words, and the 4-byte
	// target of every RET.
	trace []byte
	bits  uint64
	nbits uint
}

type sentMsg struct {
	ch   uint8
	data string
}

func newRef(p *bc.Program, cfg vm.Config) *refMachine {
	insts, offs, err := bc.Insts(p.Code)
	if err != nil {
		panic(err) // the caller only builds verified programs
	}
	r := &refMachine{
		code:      p.Code,
		starts:    map[uint64]bool{},
		pc:        p.Entry,
		budget:    cfg.Ticks,
		grant:     cfg.Grant,
		quota:     cfg.Output,
		host:      cfg.Host != nil,
		heapStart: (uint64(len(p.Code)) + uint64(len(p.Data)) + 7) &^ 7, // 8-aligned after data
	}
	for i := range insts {
		r.starts[uint64(offs[i])] = true
	}
	if r.grant == 0 {
		r.grant = 1<<0 | 1<<1 | 1<<2
	}
	// Code, data and the stack must fit in the memory quota (which
	// vm.New also caps at 2^48 bytes).
	need := r.heapStart + cfg.Stack
	if need < r.heapStart || cfg.Memory < need || cfg.Memory > 1<<48 {
		r.state, r.fault = vm.Faulted, vm.OutOfMemory
		return r
	}
	r.mem = make([]byte, cfg.Memory)
	copy(r.mem, p.Code)
	copy(r.mem[len(p.Code):], p.Data)
	r.sp = cfg.Memory
	r.heapEnd = cfg.Memory - cfg.Stack
	r.regs[254], r.regs[255] = r.heapStart, r.heapEnd // the heap's bounds (docs/forge.md)
	r.state = vm.Ready
	return r
}

func (r *refMachine) Deliver(ch uint8, msg []byte) {
	r.inbox[ch] = append(r.inbox[ch], append([]byte{}, msg...))
}

// Run steps until the machine halts, faults, blocks or yields.
func (r *refMachine) Run() vm.State {
	if r.state != vm.Ready && r.state != vm.Blocked {
		return r.state
	}
	r.state = vm.Running
	for r.state == vm.Running {
		r.step()
	}
	return r.state
}

func (r *refMachine) faultWith(f vm.Fault) {
	r.state, r.fault = vm.Faulted, f
}

// inMemory reports whether the n bytes at addr lie inside memory.
func (r *refMachine) inMemory(addr, n uint64) bool {
	size := uint64(len(r.mem))
	return addr <= size && n <= size-addr
}

// writable reports whether the n bytes at addr may be stored to: memory
// from the heap start on (code and data are read-only).
func (r *refMachine) writable(addr, n uint64) bool {
	return addr >= r.heapStart && r.inMemory(addr, n)
}

// channel checks a channel for a send (out) or a receive.
func (r *refMachine) channel(ch uint8, out bool) vm.Fault {
	switch {
	case ch > 9:
		return vm.ChannelError // 10–15 reserved, 16 and up do not exist
	case out && ch == 2:
		return vm.ChannelError // stdin is input only
	case !out && (ch == 0 || ch == 1):
		return vm.ChannelError // stdout and stderr are output only
	case r.grant&(1<<ch) == 0:
		return vm.PermissionDenied
	}
	return vm.NoFault
}

func (r *refMachine) step() {
	if !r.starts[r.pc] {
		// Only reachable by running past the last instruction.
		r.faultWith(vm.InvalidAddress)
		return
	}
	in, err := bc.DecodeAt(r.code, int(r.pc))
	if err != nil {
		r.faultWith(vm.InvalidInstruction)
		return
	}
	// The cost: the opcode's, plus for SEND and RECV one tick per 8
	// bytes they move: a SEND its length, a RECV what it will copy of
	// the head message (nothing when it faults). A RECV that will block
	// costs its fixed part here, so a budget that does not cover even
	// that faults rather than blocks.
	info := bc.Lookup(in.Op)
	var moves uint64
	switch in.Op {
	case bc.SEND:
		moves = in.Imm
	case bc.RECV:
		if r.channel(in.C, false) == vm.NoFault && r.writable(r.regs[in.A], in.Imm) && len(r.inbox[in.C]) > 0 {
			moves = min(in.Imm, uint64(len(r.inbox[in.C][0])))
		}
	}
	cost := info.Cost + moves/8
	if info.CostMoving(moves) != cost {
		panic("the opcode table prices channel traffic differently from the reference")
	}
	if r.ticks+cost > r.budget {
		r.faultWith(vm.OutOfTicks) // not executed, not charged
		return
	}
	if in.Op == bc.RECV && r.channel(in.C, false) == vm.NoFault &&
		r.writable(r.regs[in.A], in.Imm) && len(r.inbox[in.C]) == 0 {
		r.state, r.blockCh = vm.Blocked, in.C // not charged: retried on resume
		return
	}
	if in.Op == bc.POLL && r.channel(in.C, false) == vm.NoFault && len(r.inbox[in.C]) == 0 {
		// POLL reports what the next RECV would get: with nothing
		// queued, it waits for the host as RECV does.
		r.state, r.blockCh = vm.Blocked, in.C
		return
	}
	r.ticks += cost
	r.steps++
	next := r.pc + uint64(in.Size())
	x, y := r.regs[in.B], r.regs[in.C]
	addr := r.regs[in.B] + uint64(in.Offset()) // memory operand: base + signed offset
	set := func(v uint64) { r.regs[in.A] = v }

	switch in.Op {
	case bc.ADD:
		set(x + y)
	case bc.SUB:
		set(x - y)
	case bc.MUL:
		set(x * y)
	case bc.DIV, bc.MOD, bc.DIVS, bc.MODS:
		if y == 0 {
			r.faultWith(vm.DivideByZero)
			return
		}
		switch in.Op {
		case bc.DIV:
			set(x / y)
		case bc.MOD:
			set(x % y)
		case bc.DIVS:
			if int64(x) == -1<<63 && int64(y) == -1 {
				set(x) // the quotient 2^63 wraps to MinInt64
			} else {
				set(uint64(int64(x) / int64(y)))
			}
		case bc.MODS:
			if int64(y) == -1 {
				set(0)
			} else {
				set(uint64(int64(x) % int64(y)))
			}
		}
	case bc.NEG:
		set(0 - x)
	case bc.AND:
		set(x & y)
	case bc.OR:
		set(x | y)
	case bc.XOR:
		set(x ^ y)
	case bc.NOT:
		set(^x)
	case bc.SHL:
		set(x << (y % 64))
	case bc.SHR:
		set(x >> (y % 64))
	case bc.SAR:
		set(uint64(int64(x) >> (y % 64)))
	case bc.LOAD:
		if !r.inMemory(addr, 1) {
			r.faultWith(vm.InvalidAddress)
			return
		}
		set(uint64(r.mem[addr]))
	case bc.LOADW:
		if !r.inMemory(addr, 8) {
			r.faultWith(vm.InvalidAddress)
			return
		}
		set(binary.LittleEndian.Uint64(r.mem[addr:]))
	case bc.STORE:
		if !r.writable(addr, 1) {
			r.faultWith(vm.InvalidAddress)
			return
		}
		r.mem[addr] = byte(r.regs[in.A])
	case bc.STOREW:
		if !r.writable(addr, 8) {
			r.faultWith(vm.InvalidAddress)
			return
		}
		binary.LittleEndian.PutUint64(r.mem[addr:], r.regs[in.A])
	case bc.LOAD16S:
		if !r.inMemory(addr, 2) {
			r.faultWith(vm.InvalidAddress)
			return
		}
		set(uint64(int64(int16(binary.LittleEndian.Uint16(r.mem[addr:])))))
	case bc.LOAD32S:
		if !r.inMemory(addr, 4) {
			r.faultWith(vm.InvalidAddress)
			return
		}
		set(uint64(int64(int32(binary.LittleEndian.Uint32(r.mem[addr:])))))
	case bc.STORE16:
		if !r.writable(addr, 2) {
			r.faultWith(vm.InvalidAddress)
			return
		}
		binary.LittleEndian.PutUint16(r.mem[addr:], uint16(r.regs[in.A]))
	case bc.STORE32:
		if !r.writable(addr, 4) {
			r.faultWith(vm.InvalidAddress)
			return
		}
		binary.LittleEndian.PutUint32(r.mem[addr:], uint32(r.regs[in.A]))
	case bc.LOADX:
		a := r.regs[in.B] + r.regs[in.C]
		if !r.inMemory(a, 1) {
			r.faultWith(vm.InvalidAddress)
			return
		}
		set(uint64(r.mem[a]))
	case bc.LOAD32SX, bc.STORE32X:
		a := r.regs[in.B] + 4*r.regs[in.C]
		if in.Op == bc.LOAD32SX {
			if !r.inMemory(a, 4) {
				r.faultWith(vm.InvalidAddress)
				return
			}
			set(uint64(int64(int32(binary.LittleEndian.Uint32(r.mem[a:])))))
			break
		}
		if !r.writable(a, 4) {
			r.faultWith(vm.InvalidAddress)
			return
		}
		binary.LittleEndian.PutUint32(r.mem[a:], uint32(r.regs[in.A]))
	case bc.LOADWX, bc.STOREWX:
		a := r.regs[in.B] + 8*r.regs[in.C]
		if in.Op == bc.LOADWX {
			if !r.inMemory(a, 8) {
				r.faultWith(vm.InvalidAddress)
				return
			}
			set(binary.LittleEndian.Uint64(r.mem[a:]))
			break
		}
		if !r.writable(a, 8) {
			r.faultWith(vm.InvalidAddress)
			return
		}
		binary.LittleEndian.PutUint64(r.mem[a:], r.regs[in.A])
	case bc.PUSH:
		if !r.push(r.regs[in.A]) {
			return
		}
	case bc.POP:
		v, ok := r.pop()
		if !ok {
			return
		}
		set(v)
	case bc.JMP:
		next = in.Imm
	case bc.JZ, bc.JNZ, bc.JLT, bc.JLTS, bc.JEQ, bc.JNE:
		a, b := r.regs[in.A], r.regs[in.B]
		taken := in.Op == bc.JZ && a == 0 ||
			in.Op == bc.JNZ && a != 0 ||
			in.Op == bc.JLT && a < b ||
			in.Op == bc.JLTS && int64(a) < int64(b) ||
			in.Op == bc.JEQ && a == b ||
			in.Op == bc.JNE && a != b
		r.traceBranch(taken)
		if taken {
			next = in.Imm
		}
	case bc.CALL:
		if !r.push(next) {
			return
		}
		next = in.Imm
	case bc.RET:
		if r.sp+8 > uint64(len(r.mem)) {
			r.faultWith(vm.StackUnderflow)
			return
		}
		to := binary.LittleEndian.Uint64(r.mem[r.sp:])
		if !r.starts[to] {
			r.faultWith(vm.InvalidAddress) // the stack is left as it was
			return
		}
		r.sp += 8
		r.trace = binary.LittleEndian.AppendUint32(r.trace, uint32(to))
		next = to
	case bc.LI:
		set(in.Imm)
	case bc.HALT:
		r.state = vm.Halted
		return
	case bc.FAULT:
		r.userCode = uint32(in.Imm)
		r.faultWith(vm.UserFault)
		return
	case bc.NOP:
	case bc.SEND:
		if f := r.channel(in.C, true); f != vm.NoFault {
			r.faultWith(f)
			return
		}
		from := r.regs[in.A]
		if !r.inMemory(from, in.Imm) {
			r.faultWith(vm.InvalidAddress)
			return
		}
		if r.quota != 0 && r.sentBytes+in.Imm > r.quota {
			r.faultWith(vm.OutputQuota) // the whole message or nothing
			return
		}
		r.sentBytes += in.Imm
		r.sent = append(r.sent, sentMsg{in.C, string(r.mem[from : from+in.Imm])})
	case bc.RECV:
		if f := r.channel(in.C, false); f != vm.NoFault {
			r.faultWith(f)
			return
		}
		to := r.regs[in.A]
		if !r.writable(to, in.Imm) {
			r.faultWith(vm.InvalidAddress)
			return
		}
		head := r.inbox[in.C][0]
		n := min(uint64(len(head)), in.Imm)
		copy(r.mem[to:], head[:n])
		r.recvd += n
		if rest := head[n:]; len(rest) > 0 {
			r.inbox[in.C][0] = rest
		} else {
			r.inbox[in.C] = r.inbox[in.C][1:]
		}
	case bc.POLL:
		if f := r.channel(in.C, false); f != vm.NoFault {
			r.faultWith(f)
			return
		}
		set(uint64(len(r.inbox[in.C][0])))
	case bc.TICK:
		r.pc = next
		r.state = vm.Ready
		return
	case bc.BUDGET:
		set(r.budget - r.ticks) // what is left once BUDGET itself is paid
	case bc.HCALL:
		// The base cost is charged; then the host's extra ticks, all of
		// the budget when they do not fit (OUT_OF_TICKS at the HCALL).
		if !r.host {
			r.faultWith(vm.PermissionDenied)
			return
		}
		res, ok, extra, f := fakeCall(uint32(in.Imm), r.regs[0], r.regs[1], r.regs[2], r.mem)
		if ok {
			r.regs[0] = res
		}
		if extra > r.budget-r.ticks {
			r.ticks, r.hostTicks = r.budget, true
			r.faultWith(vm.OutOfTicks)
			return
		}
		r.ticks += extra
		if f != vm.NoFault {
			r.faultWith(f)
			return
		}
	default:
		r.faultWith(vm.InvalidInstruction)
		return
	}
	r.pc = next
}

// push stores v below the stack pointer, or faults STACK_OVERFLOW when the
// stack would grow below its region.
func (r *refMachine) push(v uint64) bool {
	if r.sp < r.heapEnd+8 {
		r.faultWith(vm.StackOverflow)
		return false
	}
	r.sp -= 8
	binary.LittleEndian.PutUint64(r.mem[r.sp:], v)
	return true
}

// pop loads the word at the stack pointer, or faults STACK_UNDERFLOW when
// the stack is empty.
func (r *refMachine) pop() (uint64, bool) {
	if r.sp+8 > uint64(len(r.mem)) {
		r.faultWith(vm.StackUnderflow)
		return 0, false
	}
	v := binary.LittleEndian.Uint64(r.mem[r.sp:])
	r.sp += 8
	return v, true
}

func (r *refMachine) traceBranch(taken bool) {
	if taken {
		r.bits |= 1 << r.nbits
	}
	r.nbits++
	if r.nbits == 64 {
		r.trace = binary.LittleEndian.AppendUint64(r.trace, r.bits)
		r.bits, r.nbits = 0, 0
	}
}

// traceHash is the sha256 of the trace stream and the final record.
func (r *refMachine) traceHash() [32]byte {
	b := append([]byte{}, r.trace...)
	b = binary.LittleEndian.AppendUint64(b, r.bits)
	b = append(b, byte(r.nbits), byte(r.state), byte(r.fault))
	b = binary.LittleEndian.AppendUint32(b, r.userCode)
	b = binary.LittleEndian.AppendUint64(b, r.pc)
	b = binary.LittleEndian.AppendUint64(b, r.ticks)
	return sha256.Sum256(b)
}

// refSaved is what the reference's save keeps: vm.Saved's fields.
type refSaved struct {
	regs     [256]uint64
	pc, sp   uint64
	state    vm.State
	fault    vm.Fault
	userCode uint32
	blockCh  uint8
}

func (r *refMachine) save() refSaved {
	return refSaved{r.regs, r.pc, r.sp, r.state, r.fault, r.userCode, r.blockCh}
}

// restore puts back what save kept and records the pc in the trace.
func (r *refMachine) restore(s refSaved) {
	r.regs, r.pc, r.sp, r.state, r.fault, r.userCode, r.blockCh = s.regs, s.pc, s.sp, s.state, s.fault, s.userCode, s.blockCh
	r.trace = binary.LittleEndian.AppendUint32(r.trace, uint32(r.pc))
}

// enter is Machine.Enter as docs/forge.md, "Nested calls", states it.
func (r *refMachine) enter(entry, ret uint64, args ...uint64) vm.Fault {
	switch {
	case r.mem == nil:
		return vm.OutOfMemory
	case !r.starts[entry] || !r.starts[ret]:
		return vm.InvalidAddress
	case len(args) > 256:
		return vm.InvalidInstruction
	case r.sp < r.heapEnd+8:
		return vm.StackOverflow
	}
	r.sp -= 8
	binary.LittleEndian.PutUint64(r.mem[r.sp:], ret)
	copy(r.regs[:], args)
	r.pc = entry
	r.state, r.fault, r.userCode, r.blockCh = vm.Ready, vm.NoFault, 0, 0
	r.trace = binary.LittleEndian.AppendUint32(r.trace, uint32(entry))
	r.trace = binary.LittleEndian.AppendUint32(r.trace, uint32(ret))
	return vm.NoFault
}
