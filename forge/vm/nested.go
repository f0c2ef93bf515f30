package vm

// The host's side of HCALL and of nested calls (docs/forge.md, "Host
// calls" and "Nested calls"): a host sets a host function's result, runs
// one of the program's functions while the program waits on a channel,
// and runs a program again without reallocating its memory.

// SetRegister sets register r to v: how a host function (HostCalls)
// returns its result, and how a host passes a value to a program it
// starts or resumes. Registers RegHeapStart and RegHeapEnd are ordinary
// registers once the program runs, so setting them is allowed too.
func (m *Machine) SetRegister(r uint8, v uint64) { m.regs[r] = v }

// Saved is what Save keeps of a machine: its pc, registers, stack
// pointer and state (a BLOCKED machine's channel and whether it waits at
// a POLL, a FAULTED machine's fault and user code). Memory, the tick
// count and the channel queues are not in it: they stay shared between
// the saved run and whatever runs before Restore.
type Saved struct {
	regs      [256]uint64
	sp        uint64
	pc        uint32
	userCode  uint32
	state     State
	fault     Fault
	blockCh   uint8
	blockPoll bool
}

// Register returns the value register r had when the machine was saved.
func (s *Saved) Register(r uint8) uint64 { return s.regs[r] }

// Save returns the machine's pc, registers, stack pointer and state, for
// Restore.
func (m *Machine) Save() Saved {
	return Saved{
		regs: m.regs, sp: m.sp, pc: m.pc, userCode: m.userCode,
		state: m.state, fault: m.fault, blockCh: m.blockCh, blockPoll: m.blockPoll,
	}
}

// Restore puts back what Save returned: pc, registers, stack pointer and
// state. Memory, ticks used (the meter keeps counting across) and the
// channel queues stay as they are. A machine restored to BLOCKED retries
// its RECV or POLL on the next Run. Restore does nothing on a RUNNING
// machine (from inside a host call), nor with what Save returned there:
// a machine cannot be put back in the middle of an HCALL.
func (m *Machine) Restore(s Saved) {
	if m.state == Running || s.state == Running {
		return
	}
	m.regs, m.sp, m.pc, m.userCode = s.regs, s.sp, s.pc, s.userCode
	m.state, m.fault, m.blockCh, m.blockPoll = s.state, s.fault, s.blockCh, s.blockPoll
	if m.tracer != nil {
		m.tracer.put(uint32(m.PC()))
	}
}

// Enter calls the function at code address entry as CALL would: it
// pushes the return address ret on the machine stack, puts args in r0,
// r1, … (the other registers keep their values), sets the pc to entry
// and the state to READY, so that Run executes the function; when the
// function returns to ret, the instruction there runs next (a HALT, for
// a host that wants the machine to stop there). Enter itself costs no
// ticks: the function's instructions are charged as they run, on the
// same meter.
//
// It returns NoFault, or, changing nothing: STACK_OVERFLOW when the
// return address does not fit on the machine stack; INVALID_ADDRESS when
// entry or ret is not the start of an instruction; INVALID_INSTRUCTION
// for more than 256 arguments; OUT_OF_MEMORY for a machine created
// without memory (New's OUT_OF_MEMORY); PERMISSION_DENIED on a RUNNING
// machine (from inside a host call).
//
// A host runs a function while the program is blocked (a parallel
// branch while main waits for its RECV) as
//
//	s := m.Save()
//	m.Enter(f, halt, arg)
//	m.Run() // and service it until it is HALTED at halt
//	result := m.Register(0)
//	m.Restore(s)
//
// The function's frames live below the blocked program's on the stack,
// so the program's stack is intact when it resumes. A traced machine
// records entry and ret in its trace stream, and Restore the pc it
// restores, so the trace hash still determines every instruction run.
func (m *Machine) Enter(entry, ret uint64, args ...uint64) Fault {
	switch {
	case m.state == Running:
		return PermissionDenied
	case m.mem == nil:
		return OutOfMemory
	case !m.instructionStart(entry) || !m.instructionStart(ret):
		return InvalidAddress
	case len(args) > len(m.regs):
		return InvalidInstruction
	case m.sp < m.heapEnd+8:
		return StackOverflow
	}
	m.sp -= 8
	putLE64(m.mem[m.sp:], ret)
	copy(m.regs[:], args)
	m.pc = uint32(entry / 8)
	m.state, m.fault, m.userCode, m.blockCh, m.blockPoll = Ready, NoFault, 0, 0, false
	if m.tracer != nil {
		m.tracer.put(uint32(entry))
		m.tracer.put(uint32(ret))
	}
	return NoFault
}

// instructionStart reports whether addr is the byte address of an
// instruction: aligned, inside the code, and not the second word of an
// LI.
func (m *Machine) instructionStart(addr uint64) bool {
	code := m.img.code
	return addr%8 == 0 && addr/8 < uint64(len(code)-1) && code[addr/8].op != opInvalid
}

// Reset returns the machine to its state just after New with the same
// image and Config: registers, pc, state, ticks, output quota, channel
// queues and trace, and memory (code and data copied again, the rest
// zeroed), reusing its memory rather than allocating it, for hosts that
// run one program many times. A machine New created FAULTED
// (OUT_OF_MEMORY) stays so.
func (m *Machine) Reset() {
	m.regs = [256]uint64{}
	clear(m.inbox)
	m.inbox = m.inbox[:0]
	m.pc, m.ticks, m.left, m.outLeft = m.img.entry, 0, 0, m.outQuota
	m.userCode, m.blockCh, m.blockPoll = 0, 0, false
	if m.tracer != nil {
		m.tracer.reset()
	}
	if m.mem == nil {
		m.state, m.fault = Faulted, OutOfMemory
		return
	}
	n := copy(m.mem, m.img.memory)
	clear(m.mem[n:])
	m.sp = uint64(len(m.mem))
	m.startRegisters()
	m.state, m.fault = Ready, NoFault
}
