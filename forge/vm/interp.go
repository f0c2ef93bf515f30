package vm

import "unsafe"

// This file is the interpreter's hot loop, and only that.
//
// Metering is per straight-line run (see inst.run): entering a run charges
// its whole cost at once, so instructions inside a run pay nothing. Every
// observable stays that of one-at-a-time metering:
//   - a fault inside a run gives back the cost of the instructions after
//     the faulting one (the faulting instruction itself is charged);
//   - BUDGET computes the exact count from the run cost left;
//   - a run that does not fit in the budget is handed to tail, which runs
//     exactly the instructions that fit and faults OUT_OF_TICKS at the
//     first that does not, with that instruction not executed.
//
// Superinstructions (the cases after BUDGET) execute a canonical sequence
// in one dispatch; a fault in the sequence stops at the faulting
// instruction's slot with the effects of the instructions before it.
//
// Keeping it fast: only regs, code0, pc and left (the remaining budget)
// are hot locals; everything else is read from m where needed. No value
// but the loop invariants may stay live across a call, or the Go compiler
// spills it on every dispatch: the calls that continue (channelOp, the
// tracer) take pc and left and return them. left is written back to
// m.left wherever exec stops (exit) and before calls that read it. The switch is on op&opMask with every value a case,
// so it compiles to a jump table with no range check. Measure any change
// with `go test ./bench -bench Forge` and cachegrind (docs/bench.md).

// exec runs code from slot pc until the machine stops, blocks or yields.
// code is the image's code, or for the last partial run a scratch copy of
// it whose slot 0 is slot base of the program (see tail).
func (m *Machine) exec(code []inst, base, pc uint64) {
	// Only the values every instruction needs live in locals, so the Go
	// compiler keeps them in machine registers; the rest is read from m
	// by the cases that need it.
	regs := &m.regs
	code0 := unsafe.Pointer(&code[0])
	tr := m.tracer
	// The remaining budget lives in a local, so the run entry of every
	// dispatch is register arithmetic, not a load that waits for the
	// store of the dispatch before. It goes back to m.left before any
	// call that may read it and wherever exec returns (exit).
	left := m.left

run:
	for {
		// A run starts at pc: charge it whole, or finish exactly.
		r := uint64(at(code0, pc).run)
		if r > left {
			m.left = left
			m.ticks = m.budget - left
			m.pc = uint32(base + pc)
			m.tail() // runs exec on a scratch copy, which sets m.left
			return
		}
		left -= r
		for {
			in := at(code0, pc)
			switch in.op & opMask {
			case opADD: // rd = rs1 + rs2
				regs[in.a] = regs[in.b] + regs[in.c]
				pc++
			case opSUB: // rd = rs1 - rs2
				regs[in.a] = regs[in.b] - regs[in.c]
				pc++
			case opMUL: // rd = rs1 * rs2 (low 64 bits)
				regs[in.a] = regs[in.b] * regs[in.c]
				pc++
			case opDIV: // rd = rs1 / rs2, unsigned
				d := regs[in.c]
				if d == 0 {
					m.stop(Faulted, DivideByZero, base+pc, spent(in, m.budget-left))
					goto exit
				}
				regs[in.a] = regs[in.b] / d
				pc++
			case opMOD: // rd = rs1 % rs2, unsigned
				d := regs[in.c]
				if d == 0 {
					m.stop(Faulted, DivideByZero, base+pc, spent(in, m.budget-left))
					goto exit
				}
				regs[in.a] = regs[in.b] % d
				pc++
			case opNEG: // rd = -rs1
				regs[in.a] = -regs[in.b]
				pc++
			case opDIVS: // rd = rs1 / rs2, signed, toward zero; MinInt64 / -1 wraps
				d := int64(regs[in.c])
				if d == 0 {
					m.stop(Faulted, DivideByZero, base+pc, spent(in, m.budget-left))
					goto exit
				}
				regs[in.a] = uint64(int64(regs[in.b]) / d)
				pc++
			case opMODS: // rd = rs1 % rs2, signed, sign of the dividend
				d := int64(regs[in.c])
				if d == 0 {
					m.stop(Faulted, DivideByZero, base+pc, spent(in, m.budget-left))
					goto exit
				}
				regs[in.a] = uint64(int64(regs[in.b]) % d)
				pc++
			case opAND: // rd = rs1 & rs2
				regs[in.a] = regs[in.b] & regs[in.c]
				pc++
			case opOR: // rd = rs1 | rs2 (OR rd, rs, rs is the move)
				regs[in.a] = regs[in.b] | regs[in.c]
				pc++
			case opXOR: // rd = rs1 ^ rs2
				regs[in.a] = regs[in.b] ^ regs[in.c]
				pc++
			case opNOT: // rd = ^rs1
				regs[in.a] = ^regs[in.b]
				pc++
			case opSHL: // rd = rs1 << (rs2 mod 64)
				regs[in.a] = regs[in.b] << (regs[in.c] & 63)
				pc++
			case opSHR: // rd = rs1 >> (rs2 mod 64), logical
				regs[in.a] = regs[in.b] >> (regs[in.c] & 63)
				pc++
			case opSAR: // rd = rs1 >> (rs2 mod 64), arithmetic
				regs[in.a] = uint64(int64(regs[in.b]) >> (regs[in.c] & 63))
				pc++
			case opLOAD: // rd = mem[rs1 + offset], one byte, zero-extended
				addr := regs[in.b] + in.imm
				mem := m.mem
				if addr >= uint64(len(mem)) {
					m.stop(Faulted, InvalidAddress, base+pc, spent(in, m.budget-left))
					goto exit
				}
				regs[in.a] = uint64(mem[addr])
				pc++
			case opSTORE: // mem[rs2 + offset] = low byte of rs1; code and data are read-only
				addr := regs[in.b] + in.imm
				mem := m.mem
				if addr < m.img.heapStart || addr >= uint64(len(mem)) {
					m.stop(Faulted, InvalidAddress, base+pc, spent(in, m.budget-left))
					goto exit
				}
				mem[addr] = byte(regs[in.a])
				pc++
			case opLOADW: // rd = mem[rs1 + offset], 8 bytes little-endian
				addr := regs[in.b] + in.imm
				mem := m.mem
				if addr > uint64(len(mem))-8 {
					m.stop(Faulted, InvalidAddress, base+pc, spent(in, m.budget-left))
					goto exit
				}
				regs[in.a] = load64(mem, addr)
				pc++
			case opSTOREW: // mem[rs2 + offset] = rs1, 8 bytes little-endian
				addr := regs[in.b] + in.imm
				mem := m.mem
				if addr < m.img.heapStart || addr > uint64(len(mem))-8 {
					m.stop(Faulted, InvalidAddress, base+pc, spent(in, m.budget-left))
					goto exit
				}
				store64(mem, addr, regs[in.a])
				pc++
			case opPUSH: // sp -= 8; mem[sp] = rs
				sp := m.sp
				if sp < m.heapEnd+8 {
					m.stop(Faulted, StackOverflow, base+pc, spent(in, m.budget-left))
					goto exit
				}
				sp -= 8
				m.sp = sp
				store64(m.mem, sp, regs[in.a])
				pc++
			case opPOP: // rd = mem[sp]; sp += 8
				sp := m.sp
				if sp > uint64(len(m.mem))-8 {
					m.stop(Faulted, StackUnderflow, base+pc, spent(in, m.budget-left))
					goto exit
				}
				regs[in.a] = load64(m.mem, sp)
				m.sp = sp + 8
				pc++
			case opJMP: // pc = target
				pc = in.imm
				continue run
			case opJZ: // if rs == 0: pc = target
				taken := regs[in.a] == 0
				pc = pick(taken, in.imm, pc+1)
				if tr != nil {
					pc, left = tr.branch(taken, pc, left)
				}
				continue run
			case opJNZ: // if rs != 0: pc = target
				taken := regs[in.a] != 0
				pc = pick(taken, in.imm, pc+1)
				if tr != nil {
					pc, left = tr.branch(taken, pc, left)
				}
				continue run
			case opJLT: // if rs1 < rs2 (unsigned): pc = target
				taken := regs[in.a] < regs[in.b]
				pc = pick(taken, in.imm, pc+1)
				if tr != nil {
					pc, left = tr.branch(taken, pc, left)
				}
				continue run
			case opJLTS: // if rs1 < rs2 (signed): pc = target
				taken := int64(regs[in.a]) < int64(regs[in.b])
				pc = pick(taken, in.imm, pc+1)
				if tr != nil {
					pc, left = tr.branch(taken, pc, left)
				}
				continue run
			case opCALL: // sp -= 8; mem[sp] = address of the next instruction; pc = target
				sp := m.sp
				if sp < m.heapEnd+8 {
					m.stop(Faulted, StackOverflow, base+pc, spent(in, m.budget-left))
					goto exit
				}
				sp -= 8
				m.sp = sp
				store64(m.mem, sp, (base+pc+1)<<3)
				pc = in.imm
				continue run
			case opLIJLTRET, opLIJLTSRET: // LI ra, imm; JLT or JLTS to a RET: the leaf case of a recursion
				regs[in.a] = in.imm
				n := at(code0, pc+2)
				taken := regs[n.a] < regs[n.b]
				if in.op == opLIJLTSRET {
					taken = int64(regs[n.a]) < int64(regs[n.b])
				}
				pc = pick(taken, n.imm, pc+3)
				if tr != nil {
					pc, left = tr.branch(taken, pc, left)
				}
				if !taken {
					continue run
				}
				// The RET is a run of its own: charge it here, or let the
				// run entry handle a budget it does not fit.
				in = at(code0, pc)
				if r := uint64(in.run); r <= left {
					left -= r
				} else {
					continue run
				}
				fallthrough
			case opRET: // pc = mem[sp]; sp += 8
				sp := m.sp
				if sp > uint64(len(m.mem))-8 {
					m.stop(Faulted, StackUnderflow, base+pc, spent(in, m.budget-left))
					goto exit
				}
				to := load64(m.mem, sp)
				if to&7 != 0 || to>>3 >= uint64(len(code)-1) || at(code0, to>>3).op == opInvalid {
					m.stop(Faulted, InvalidAddress, base+pc, spent(in, m.budget-left))
					goto exit
				}
				m.sp = sp + 8
				pc = to >> 3
				if tr != nil {
					pc, left = tr.ret(pc, left)
				}
				continue run
			case opLI: // rd = imm64
				regs[in.a] = in.imm
				pc += 2
			case opHALT: // stop: HALTED
				m.stop(Halted, NoFault, base+pc, m.budget-left)
				goto exit
			case opFAULT: // stop: FAULTED with USER_FAULT and the user code
				m.userCode = uint32(in.imm)
				m.stop(Faulted, UserFault, base+pc, m.budget-left)
				goto exit
			case opNOP: // nothing
				pc++
			case opSEND: // channel c receives mem[rs .. rs+len) as one message
				var ok bool
				if pc, ok, left = m.channelOp(in, base, pc, left); !ok {
					goto exit
				}
			case opRECV: // copy up to len bytes of channel c's head message to mem[rs..]; block if none
				var ok bool
				if pc, ok, left = m.channelOp(in, base, pc, left); !ok {
					goto exit
				}
				continue run
			case opPOLL: // rd = bytes left in channel c's head message, 0 if none
				var ok bool
				if pc, ok, left = m.channelOp(in, base, pc, left); !ok {
					goto exit
				}
			case opTICK: // yield to the host: Run returns READY
				m.stop(Ready, NoFault, base+pc+1, m.budget-left)
				goto exit
			case opBUDGET: // rd = ticks left after this instruction
				regs[in.a] = m.budget - spent(in, m.budget-left)
				pc++

			case opLIADD: // LI ra, imm; ADD
				regs[in.a] = in.imm
				n := at(code0, pc+2)
				regs[n.a] = regs[n.b] + regs[n.c]
				pc += 3
			case opLISUB: // LI ra, imm; SUB
				regs[in.a] = in.imm
				n := at(code0, pc+2)
				regs[n.a] = regs[n.b] - regs[n.c]
				pc += 3
			case opLIJLT: // LI ra, imm; JLT
				regs[in.a] = in.imm
				n := at(code0, pc+2)
				taken := regs[n.a] < regs[n.b]
				pc = pick(taken, n.imm, pc+3)
				if tr != nil {
					pc, left = tr.branch(taken, pc, left)
				}
				continue run
			case opLIJLTS: // LI ra, imm; JLTS
				regs[in.a] = in.imm
				n := at(code0, pc+2)
				taken := int64(regs[n.a]) < int64(regs[n.b])
				pc = pick(taken, n.imm, pc+3)
				if tr != nil {
					pc, left = tr.branch(taken, pc, left)
				}
				continue run
			case opLISUBCALL: // LI ra, imm; SUB; CALL
				sp := m.sp
				if sp < m.heapEnd+8 {
					// The CALL overflows: LI and SUB run, then the CALL faults.
					regs[in.a] = in.imm
					n := at(code0, pc+2)
					regs[n.a] = regs[n.b] - regs[n.c]
					m.stop(Faulted, StackOverflow, base+pc+3, spent(at(code0, pc+3), m.budget-left))
					goto exit
				}
				regs[in.a] = in.imm
				n := at(code0, pc+2)
				regs[n.a] = regs[n.b] - regs[n.c]
				sp -= 8
				m.sp = sp
				store64(m.mem, sp, (base+pc+4)<<3)
				pc = at(code0, pc+3).imm
				continue run
			case opPUSHLISUBCALL: // PUSH; LI ra, imm; SUB; CALL: a recursive call saving a value
				sp := m.sp
				if sp < m.heapEnd+16 {
					// The PUSH or the CALL overflows: run the canonical
					// sequence up to the faulting instruction.
					if sp < m.heapEnd+8 {
						m.stop(Faulted, StackOverflow, base+pc, spent(in, m.budget-left))
						goto exit
					}
					m.sp = sp - 8
					store64(m.mem, sp-8, regs[in.a])
					li := at(code0, pc+1)
					regs[li.a] = li.imm
					n := at(code0, pc+3)
					regs[n.a] = regs[n.b] - regs[n.c]
					m.stop(Faulted, StackOverflow, base+pc+4, spent(at(code0, pc+4), m.budget-left))
					goto exit
				}
				mem := m.mem
				store64(mem, sp-8, regs[in.a])
				li := at(code0, pc+1)
				regs[li.a] = li.imm
				n := at(code0, pc+3)
				regs[n.a] = regs[n.b] - regs[n.c]
				m.sp = sp - 16
				store64(mem, sp-16, (base+pc+5)<<3)
				pc = at(code0, pc+4).imm
				continue run
			case opPOPPUSHLISUBCALL: // POP; PUSH; LI ra, imm; SUB; CALL: the second call of a recursion
				sp := m.sp
				mem := m.mem
				if sp > uint64(len(mem))-8 {
					m.stop(Faulted, StackUnderflow, base+pc, spent(in, m.budget-left))
					goto exit
				}
				// The POP frees the slot the PUSH refills, so the PUSH
				// cannot overflow; the CALL can.
				regs[in.a] = load64(mem, sp)
				store64(mem, sp, regs[at(code0, pc+1).a])
				li := at(code0, pc+2)
				regs[li.a] = li.imm
				n := at(code0, pc+4)
				regs[n.a] = regs[n.b] - regs[n.c]
				if sp < m.heapEnd+8 {
					m.stop(Faulted, StackOverflow, base+pc+5, spent(at(code0, pc+5), m.budget-left))
					goto exit
				}
				m.sp = sp - 8
				store64(mem, sp-8, (base+pc+6)<<3)
				pc = at(code0, pc+5).imm
				continue run
			case opADDJLT: // ADD; JLT
				regs[in.a] = regs[in.b] + regs[in.c]
				n := at(code0, pc+1)
				taken := regs[n.a] < regs[n.b]
				pc = pick(taken, n.imm, pc+2)
				if tr != nil {
					pc, left = tr.branch(taken, pc, left)
				}
				continue run
			case opADDJLTS: // ADD; JLTS
				regs[in.a] = regs[in.b] + regs[in.c]
				n := at(code0, pc+1)
				taken := int64(regs[n.a]) < int64(regs[n.b])
				pc = pick(taken, n.imm, pc+2)
				if tr != nil {
					pc, left = tr.branch(taken, pc, left)
				}
				continue run
			case opADDJMP: // ADD; JMP
				regs[in.a] = regs[in.b] + regs[in.c]
				pc = at(code0, pc+1).imm
				continue run
			case opADDADDJLT: // ADD; ADD; JLT
				regs[in.a] = regs[in.b] + regs[in.c]
				n := at(code0, pc+1)
				regs[n.a] = regs[n.b] + regs[n.c]
				n = at(code0, pc+2)
				taken := regs[n.a] < regs[n.b]
				pc = pick(taken, n.imm, pc+3)
				if tr != nil {
					pc, left = tr.branch(taken, pc, left)
				}
				continue run
			case opADDADDJLTS: // ADD; ADD; JLTS
				regs[in.a] = regs[in.b] + regs[in.c]
				n := at(code0, pc+1)
				regs[n.a] = regs[n.b] + regs[n.c]
				n = at(code0, pc+2)
				taken := int64(regs[n.a]) < int64(regs[n.b])
				pc = pick(taken, n.imm, pc+3)
				if tr != nil {
					pc, left = tr.branch(taken, pc, left)
				}
				continue run
			case opMULMODS: // MUL; MODS
				regs[in.a] = regs[in.b] * regs[in.c]
				n := at(code0, pc+1)
				d := int64(regs[n.c])
				if d == 0 {
					m.stop(Faulted, DivideByZero, base+pc+1, spent(n, m.budget-left))
					goto exit
				}
				regs[n.a] = uint64(int64(regs[n.b]) % d)
				pc += 2
			case opMULMOD: // MUL; MOD
				regs[in.a] = regs[in.b] * regs[in.c]
				n := at(code0, pc+1)
				d := regs[n.c]
				if d == 0 {
					m.stop(Faulted, DivideByZero, base+pc+1, spent(n, m.budget-left))
					goto exit
				}
				regs[n.a] = regs[n.b] % d
				pc += 2
			case opSTOREADDJLT: // STORE; ADD; JLT
				addr := regs[in.b] + in.imm
				mem := m.mem
				if addr < m.img.heapStart || addr >= uint64(len(mem)) {
					m.stop(Faulted, InvalidAddress, base+pc, spent(in, m.budget-left))
					goto exit
				}
				mem[addr] = byte(regs[in.a])
				n := at(code0, pc+1)
				regs[n.a] = regs[n.b] + regs[n.c]
				n = at(code0, pc+2)
				taken := regs[n.a] < regs[n.b]
				pc = pick(taken, n.imm, pc+3)
				if tr != nil {
					pc, left = tr.branch(taken, pc, left)
				}
				continue run
			case opLOADJZ: // LOAD; JZ
				addr := regs[in.b] + in.imm
				mem := m.mem
				if addr >= uint64(len(mem)) {
					m.stop(Faulted, InvalidAddress, base+pc, spent(in, m.budget-left))
					goto exit
				}
				regs[in.a] = uint64(mem[addr])
				n := at(code0, pc+1)
				taken := regs[n.a] == 0
				pc = pick(taken, n.imm, pc+2)
				if tr != nil {
					pc, left = tr.branch(taken, pc, left)
				}
				continue run
			case opLOADJNZ: // LOAD; JNZ
				addr := regs[in.b] + in.imm
				mem := m.mem
				if addr >= uint64(len(mem)) {
					m.stop(Faulted, InvalidAddress, base+pc, spent(in, m.budget-left))
					goto exit
				}
				regs[in.a] = uint64(mem[addr])
				n := at(code0, pc+1)
				taken := regs[n.a] != 0
				pc = pick(taken, n.imm, pc+2)
				if tr != nil {
					pc, left = tr.branch(taken, pc, left)
				}
				continue run
			case opPOPPUSH: // POP; PUSH
				sp := m.sp
				if sp > uint64(len(m.mem))-8 {
					m.stop(Faulted, StackUnderflow, base+pc, spent(in, m.budget-left))
					goto exit
				}
				// The POP frees the slot the PUSH refills, so the PUSH
				// cannot overflow.
				mem := m.mem
				regs[in.a] = load64(mem, sp)
				store64(mem, sp, regs[at(code0, pc+1).a])
				pc += 2
			case opPOPADDRET: // POP; ADD; RET
				sp := m.sp
				mem := m.mem
				if sp > uint64(len(mem))-16 {
					// POP or RET underflows: run the canonical sequence.
					if sp > uint64(len(mem))-8 {
						m.stop(Faulted, StackUnderflow, base+pc, spent(in, m.budget-left))
						goto exit
					}
					regs[in.a] = load64(mem, sp)
					n := at(code0, pc+1)
					regs[n.a] = regs[n.b] + regs[n.c]
					m.sp = sp + 8
					m.stop(Faulted, StackUnderflow, base+pc+2, spent(at(code0, pc+2), m.budget-left))
					goto exit
				}
				to := load64(mem, sp+8)
				if to&7 != 0 || to>>3 >= uint64(len(code)-1) || at(code0, to>>3).op == opInvalid {
					regs[in.a] = load64(mem, sp)
					n := at(code0, pc+1)
					regs[n.a] = regs[n.b] + regs[n.c]
					m.sp = sp + 8
					m.stop(Faulted, InvalidAddress, base+pc+2, spent(at(code0, pc+2), m.budget-left))
					goto exit
				}
				regs[in.a] = load64(mem, sp)
				n := at(code0, pc+1)
				regs[n.a] = regs[n.b] + regs[n.c]
				m.sp = sp + 16
				pc = to >> 3
				if tr != nil {
					pc, left = tr.ret(pc, left)
				}
				continue run

			case opEnd: // execution ran past the last instruction
				m.stop(Faulted, InvalidAddress, base+pc, m.budget-left)
				goto exit
			case opOutOfTicks: // the first instruction of a tail that does not fit
				m.stop(Faulted, OutOfTicks, base+pc, m.budget-left)
				goto exit
			case opInvalid, numOps, numOps + 1, numOps + 2:
				// Unreachable in a verified image. The unused values up to
				// opMask are listed so that the switch covers them all;
				// adding an op makes one of them a duplicate case.
				m.stop(Faulted, InvalidInstruction, base+pc, spent(in, m.budget-left))
				goto exit
			}
		}
	}
exit:
	m.left = left

}

// channelOp runs SEND, RECV or POLL at slot pc. It returns the next slot
// and true, or false when the machine stopped (fault or block). It takes
// and returns pc, rather than leaving pc live across the call, so that the
// Go compiler does not spill pc on every dispatch.
func (m *Machine) channelOp(in *inst, base, pc, left uint64) (uint64, bool, uint64) {
	m.left = left
	var f Fault
	switch in.op {
	case opSEND:
		f = m.send(in.c, m.regs[in.a], in.imm)
	case opRECV:
		var blocked bool
		f, blocked = m.recv(in.c, m.regs[in.a], in.imm)
		if blocked {
			m.blockCh = in.c
			m.stop(Blocked, NoFault, base+pc, m.charged()-uint64(in.run))
			return pc, false, left
		}
	case opPOLL:
		var n uint64
		if n, f = m.poll(in.c); f == NoFault {
			m.regs[in.a] = n
		}
	}
	if f != NoFault {
		m.stop(Faulted, f, base+pc, spent(in, m.charged()))
		return pc, false, left
	}
	return pc + 1, true, left
}

// pick is a conditional branch's next slot. (The tracer is called at each
// branch, not here: pick must stay small enough to inline, and the call
// must take and return the budget.)
func pick(taken bool, target, next uint64) uint64 {
	if taken {
		return target
	}
	return next
}

// spent is the exact tick count once in has run, given ticks charged to the
// end of in's run.
func spent(in *inst, ticks uint64) uint64 {
	return ticks - uint64(in.run) + uint64(costOf[in.op])
}

// at returns the instruction in slot pc without a bounds check. Every pc
// the interpreter reaches is a valid slot: verified jump targets, checked
// RET targets, and straight-line successors, which end at the opEnd or
// opOutOfTicks slot that closes every code array.
func at(code unsafe.Pointer, pc uint64) *inst {
	return (*inst)(unsafe.Add(code, uintptr(pc)*unsafe.Sizeof(inst{})))
}
