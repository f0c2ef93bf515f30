package vm

import (
	"math/bits"
	"unsafe"
)

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
// Calls continue at the call block, below the loop, and early returns at
// guard, which runs a called function's early return (the base case of a
// recursion) and its RET without a dispatch.
//
// Keeping it fast: only regs, code0, ip (a pointer to the slot
// executing), left (the remaining budget) and sp are hot locals;
// everything else is read from m where needed. ip makes the slots of a
// fused sequence and a straight-line successor constant displacements, and
// a branch target one addition (transfer immediates hold the target's byte
// offset in code); slot indexes are computed only where a pc is reported
// or saved (faults, CALL's return address). No value but the loop
// invariants may stay live across a call, or the Go compiler spills it on
// every dispatch, so the calls that continue take the hot values and
// return them: the tracer's (traceBranch, traceRet) ip, left and sp;
// channelOp ip and left, with sp stored to m.sp before it and reloaded
// after. left and sp are written back to m wherever exec stops (exit).
// The switch is on op&opMask with every value a case, so it compiles to a
// jump table with no range check. Measure any change with
// `go test ./bench -bench Forge` and cachegrind (docs/bench.md).

// exec runs code from slot pc until the machine stops, blocks or yields.
// code is the image's code, or for the last partial run a scratch copy of
// it whose slot 0 is slot base of the program (see tail).
func (m *Machine) exec(code []inst, base, pc uint64) {
	// Only the values every instruction needs live in locals, so the Go
	// compiler keeps them in machine registers; the rest is read from m
	// by the cases that need it.
	regs := &m.regs
	code0 := unsafe.Pointer(&code[0])
	// ip points at the slot being executed: straight-line successors are
	// constant offsets from it, and branch targets are byte offsets from
	// code0 (see target).
	ip := at(code0, pc)
	// The remaining budget lives in a local, so the run entry of every
	// dispatch is register arithmetic, not a load that waits for the
	// store of the dispatch before. It goes back to m.left before any
	// call that may read it and wherever exec returns (exit).
	left := m.left
	// The stack pointer too: PUSH, POP, CALL and RET would otherwise chain
	// through a store and load of m.sp.
	sp := m.sp
	// back is the slot after the CALL that just ran (see guard).
	var back *inst
	// A fault sets fc and fip (the faulting slot) and jumps to fault, so
	// that one block, outside the cases, computes the pc and the ticks.
	var fc Fault
	var fip *inst

run:
	for {
		// A run starts at ip: charge it whole, or finish exactly.
		r := uint64(ip.run)
		if r > left {
			m.left, m.sp = left, sp
			m.ticks = m.budget - left
			m.pc = uint32(base + slot(code0, ip))
			m.tail() // runs exec on a scratch copy, which sets m.left
			return
		}
		left -= r
		for {
			in := ip
			switch in.op & opMask {
			case opADD: // rd = rs1 + rs2
				regs[in.a] = regs[in.b] + regs[in.c]
				ip = next(ip, 1)
			case opSUB: // rd = rs1 - rs2
				regs[in.a] = regs[in.b] - regs[in.c]
				ip = next(ip, 1)
			case opMUL: // rd = rs1 * rs2 (low 64 bits)
				regs[in.a] = regs[in.b] * regs[in.c]
				ip = next(ip, 1)
			case opDIV: // rd = rs1 / rs2, unsigned
				d := regs[in.c]
				if d == 0 {
					fc, fip = DivideByZero, ip
					goto fault
				}
				regs[in.a] = regs[in.b] / d
				ip = next(ip, 1)
			case opMOD: // rd = rs1 % rs2, unsigned
				d := regs[in.c]
				if d == 0 {
					fc, fip = DivideByZero, ip
					goto fault
				}
				regs[in.a] = regs[in.b] % d
				ip = next(ip, 1)
			case opNEG: // rd = -rs1
				regs[in.a] = -regs[in.b]
				ip = next(ip, 1)
			case opDIVS: // rd = rs1 / rs2, signed, toward zero; MinInt64 / -1 wraps
				d := int64(regs[in.c])
				if d == 0 {
					fc, fip = DivideByZero, ip
					goto fault
				}
				regs[in.a] = uint64(int64(regs[in.b]) / d)
				ip = next(ip, 1)
			case opMODS: // rd = rs1 % rs2, signed, sign of the dividend
				d := int64(regs[in.c])
				if d == 0 {
					fc, fip = DivideByZero, ip
					goto fault
				}
				regs[in.a] = uint64(int64(regs[in.b]) % d)
				ip = next(ip, 1)
			case opAND: // rd = rs1 & rs2
				regs[in.a] = regs[in.b] & regs[in.c]
				ip = next(ip, 1)
			case opOR: // rd = rs1 | rs2 (OR rd, rs, rs is the move)
				regs[in.a] = regs[in.b] | regs[in.c]
				ip = next(ip, 1)
			case opXOR: // rd = rs1 ^ rs2
				regs[in.a] = regs[in.b] ^ regs[in.c]
				ip = next(ip, 1)
			case opNOT: // rd = ^rs1
				regs[in.a] = ^regs[in.b]
				ip = next(ip, 1)
			case opSHL: // rd = rs1 << (rs2 mod 64)
				regs[in.a] = regs[in.b] << (regs[in.c] & 63)
				ip = next(ip, 1)
			case opSHR: // rd = rs1 >> (rs2 mod 64), logical
				regs[in.a] = regs[in.b] >> (regs[in.c] & 63)
				ip = next(ip, 1)
			case opSAR: // rd = rs1 >> (rs2 mod 64), arithmetic
				regs[in.a] = uint64(int64(regs[in.b]) >> (regs[in.c] & 63))
				ip = next(ip, 1)
			case opLOAD: // rd = mem[rs1 + offset], one byte, zero-extended
				addr := regs[in.b] + in.imm
				mem := m.mem
				if addr >= uint64(len(mem)) {
					fc, fip = InvalidAddress, ip
					goto fault
				}
				regs[in.a] = uint64(mem[addr])
				ip = next(ip, 1)
			case opSTORE: // mem[rs2 + offset] = low byte of rs1; code and data are read-only
				addr := regs[in.b] + in.imm
				mem := m.mem
				if addr < m.img.heapStart || addr >= uint64(len(mem)) {
					fc, fip = InvalidAddress, ip
					goto fault
				}
				mem[addr] = byte(regs[in.a])
				ip = next(ip, 1)
			case opLOADW: // rd = mem[rs1 + offset], 8 bytes little-endian
				addr := regs[in.b] + in.imm
				mem := m.mem
				if addr > uint64(len(mem))-8 {
					fc, fip = InvalidAddress, ip
					goto fault
				}
				regs[in.a] = load64(mem, addr)
				ip = next(ip, 1)
			case opSTOREW: // mem[rs2 + offset] = rs1, 8 bytes little-endian
				addr := regs[in.b] + in.imm
				mem := m.mem
				if addr < m.img.heapStart || addr > uint64(len(mem))-8 {
					fc, fip = InvalidAddress, ip
					goto fault
				}
				store64(mem, addr, regs[in.a])
				ip = next(ip, 1)
			case opLOAD16S: // rd = mem[rs1 + offset], 2 bytes little-endian, sign-extended
				addr := regs[in.b] + in.imm
				mem := m.mem
				if addr > uint64(len(mem))-2 {
					fc, fip = InvalidAddress, ip
					goto fault
				}
				regs[in.a] = uint64(int64(int16(load16(mem, addr))))
				ip = next(ip, 1)
			case opLOAD32S: // rd = mem[rs1 + offset], 4 bytes little-endian, sign-extended
				addr := regs[in.b] + in.imm
				mem := m.mem
				if addr > uint64(len(mem))-4 {
					fc, fip = InvalidAddress, ip
					goto fault
				}
				regs[in.a] = uint64(int64(int32(load32(mem, addr))))
				ip = next(ip, 1)
			case opSTORE16: // mem[rs2 + offset] = low 2 bytes of rs1, little-endian
				addr := regs[in.b] + in.imm
				mem := m.mem
				if addr < m.img.heapStart || addr > uint64(len(mem))-2 {
					fc, fip = InvalidAddress, ip
					goto fault
				}
				store16(mem, addr, uint16(regs[in.a]))
				ip = next(ip, 1)
			case opSTORE32: // mem[rs2 + offset] = low 4 bytes of rs1, little-endian
				addr := regs[in.b] + in.imm
				mem := m.mem
				if addr < m.img.heapStart || addr > uint64(len(mem))-4 {
					fc, fip = InvalidAddress, ip
					goto fault
				}
				store32(mem, addr, uint32(regs[in.a]))
				ip = next(ip, 1)
			case opLOADWX: // rd = mem[rs1 + 8·rs2], 8 bytes little-endian
				addr := regs[in.b] + regs[in.c]<<3
				mem := m.mem
				if addr > uint64(len(mem))-8 {
					fc, fip = InvalidAddress, ip
					goto fault
				}
				regs[in.a] = load64(mem, addr)
				ip = next(ip, 1)
			case opSTOREWX: // mem[rs2 + 8·rs3] = rs1, 8 bytes little-endian
				addr := regs[in.b] + regs[in.c]<<3
				mem := m.mem
				if addr < m.img.heapStart || addr > uint64(len(mem))-8 {
					fc, fip = InvalidAddress, ip
					goto fault
				}
				store64(mem, addr, regs[in.a])
				ip = next(ip, 1)
			case opLOAD32SX: // rd = mem[rs1 + 4·rs2], 4 bytes little-endian, sign-extended
				addr := regs[in.b] + regs[in.c]<<2
				mem := m.mem
				if addr > uint64(len(mem))-4 {
					fc, fip = InvalidAddress, ip
					goto fault
				}
				regs[in.a] = uint64(int64(int32(load32(mem, addr))))
				ip = next(ip, 1)
			case opLOADX: // rd = mem[rs1 + rs2], one byte, zero-extended
				addr := regs[in.b] + regs[in.c]
				mem := m.mem
				if addr >= uint64(len(mem)) {
					fc, fip = InvalidAddress, ip
					goto fault
				}
				regs[in.a] = uint64(mem[addr])
				ip = next(ip, 1)
			case opSTORE32X: // mem[rs2 + 4·rs3] = low 4 bytes of rs1, little-endian
				addr := regs[in.b] + regs[in.c]<<2
				mem := m.mem
				if addr < m.img.heapStart || addr > uint64(len(mem))-4 {
					fc, fip = InvalidAddress, ip
					goto fault
				}
				store32(mem, addr, uint32(regs[in.a]))
				ip = next(ip, 1)
			case opPUSH: // sp -= 8; mem[sp] = rs
				if sp < m.heapEnd+8 {
					fc, fip = StackOverflow, ip
					goto fault
				}
				sp -= 8
				store64(m.mem, sp, regs[in.a])
				ip = next(ip, 1)
			case opPOP: // rd = mem[sp]; sp += 8
				if sp > uint64(len(m.mem))-8 {
					fc, fip = StackUnderflow, ip
					goto fault
				}
				regs[in.a] = load64(m.mem, sp)
				sp += 8
				ip = next(ip, 1)
			case opJMP: // pc = target
				ip = target(code0, in.imm)
				continue run
			case opJZ: // if rs == 0: pc = target
				taken := regs[in.a] == 0
				ip = pick(taken, target(code0, in.imm), next(ip, 1))
				if m.tracer != nil {
					ip, left, sp = m.traceBranch(taken, ip, left, sp)
				}
				continue run
			case opJNZ: // if rs != 0: pc = target
				taken := regs[in.a] != 0
				ip = pick(taken, target(code0, in.imm), next(ip, 1))
				if m.tracer != nil {
					ip, left, sp = m.traceBranch(taken, ip, left, sp)
				}
				continue run
			case opJLT: // if rs1 < rs2 (unsigned): pc = target
				taken := regs[in.a] < regs[in.b]
				ip = pick(taken, target(code0, in.imm), next(ip, 1))
				if m.tracer != nil {
					ip, left, sp = m.traceBranch(taken, ip, left, sp)
				}
				continue run
			case opJLTS: // if rs1 < rs2 (signed): pc = target
				taken := int64(regs[in.a]) < int64(regs[in.b])
				ip = pick(taken, target(code0, in.imm), next(ip, 1))
				if m.tracer != nil {
					ip, left, sp = m.traceBranch(taken, ip, left, sp)
				}
				continue run
			case opJEQ: // if rs1 == rs2: pc = target
				taken := regs[in.a] == regs[in.b]
				ip = pick(taken, target(code0, in.imm), next(ip, 1))
				if m.tracer != nil {
					ip, left, sp = m.traceBranch(taken, ip, left, sp)
				}
				continue run
			case opJNE: // if rs1 != rs2: pc = target
				taken := regs[in.a] != regs[in.b]
				ip = pick(taken, target(code0, in.imm), next(ip, 1))
				if m.tracer != nil {
					ip, left, sp = m.traceBranch(taken, ip, left, sp)
				}
				continue run
			case opCALL: // sp -= 8; mem[sp] = address of the next instruction; pc = target
				if sp < m.heapEnd+8 {
					fc, fip = StackOverflow, ip
					goto fault
				}
				sp -= 8
				store64(m.mem, sp, returnAddress(code0, ip, 1))
				back = next(ip, 1)
				ip = target(code0, in.imm)
				goto call
			case opLIJLTRET, opLIJLTSRET: // LI ra, imm; JLT or JLTS to a RET: an early return (see guard)
				back = at(code0, uint64(len(code)-1)) // not from a CALL: the closing sentinel
				goto guard
			case opRET: // pc = mem[sp]; sp += 8
				if sp > uint64(len(m.mem))-8 {
					fc, fip = StackUnderflow, ip
					goto fault
				}
				to := load64(m.mem, sp)
				if !returnable(code0, code, to) {
					fc, fip = InvalidAddress, ip
					goto fault
				}
				sp += 8
				ip = (*inst)(unsafe.Add(code0, to*2))
				if m.tracer != nil {
					ip, left, sp = m.traceRet(to, ip, left, sp)
				}
				continue run
			case opLI: // rd = imm64
				regs[in.a] = in.imm
				ip = next(ip, 2)
			case opHALT: // stop: HALTED
				m.stop(Halted, NoFault, base+slot(code0, ip), m.budget-left)
				goto exit
			case opFAULT: // stop: FAULTED with USER_FAULT and the user code
				m.userCode = uint32(in.imm)
				m.stop(Faulted, UserFault, base+slot(code0, ip), m.budget-left)
				goto exit
			case opNOP: // nothing
				ip = next(ip, 1)
			case opSEND, opRECV:
				// SEND: channel c receives mem[rs .. rs+len) as one message.
				// RECV: copy up to len bytes of channel c's head message to
				// mem[rs..]; block if none. Both end their runs.
				var ok bool
				m.sp = sp
				ip, ok, left = m.channelOp(in, base+slot(code0, ip), left)
				sp = m.sp
				if !ok {
					goto exit
				}
				continue run
			case opPOLL: // rd = bytes left in channel c's head message; block if none
				var ok bool
				m.sp = sp
				ip, ok, left = m.channelOp(in, base+slot(code0, ip), left)
				sp = m.sp
				if !ok {
					goto exit
				}
			case opTICK: // yield to the host: Run returns READY
				m.stop(Ready, NoFault, base+slot(code0, ip)+1, m.budget-left)
				goto exit
			case opBUDGET: // rd = ticks left after this instruction
				regs[in.a] = m.budget - spent(in, m.budget-left)
				ip = next(ip, 1)
			case opHCALL: // the host's function imm on r0–r2, result in r0; ends its run
				var ok bool
				m.sp = sp
				ip, ok, left = m.hostCall(in, base+slot(code0, ip), left)
				sp = m.sp
				if !ok {
					goto exit
				}
				continue run

			case opLIADD: // LI ra, imm; ADD
				regs[in.a] = in.imm
				n := next(ip, 2)
				regs[n.a] = regs[n.b] + regs[n.c]
				ip = next(ip, 3)
			case opLISUB: // LI ra, imm; SUB
				regs[in.a] = in.imm
				n := next(ip, 2)
				regs[n.a] = regs[n.b] - regs[n.c]
				ip = next(ip, 3)
			case opLIJLT: // LI ra, imm; JLT
				regs[in.a] = in.imm
				n := next(ip, 2)
				taken := regs[n.a] < regs[n.b]
				ip = pick(taken, target(code0, n.imm), next(ip, 3))
				if m.tracer != nil {
					ip, left, sp = m.traceBranch(taken, ip, left, sp)
				}
				continue run
			case opLISHLSAR: // LI ra, imm; SHL; SAR
				regs[in.a] = in.imm
				n := next(ip, 2)
				regs[n.a] = regs[n.b] << (regs[n.c] & 63)
				n = next(ip, 3)
				regs[n.a] = uint64(int64(regs[n.b]) >> (regs[n.c] & 63))
				ip = next(ip, 4)
			case opLIJLTS: // LI ra, imm; JLTS
				regs[in.a] = in.imm
				n := next(ip, 2)
				taken := int64(regs[n.a]) < int64(regs[n.b])
				ip = pick(taken, target(code0, n.imm), next(ip, 3))
				if m.tracer != nil {
					ip, left, sp = m.traceBranch(taken, ip, left, sp)
				}
				continue run
			case opPUSHLISUBCALL: // PUSH; LI ra, imm; SUB; CALL: a recursive call saving a value
				if sp < m.heapEnd+16 {
					// The PUSH or the CALL overflows: run the canonical
					// sequence up to the faulting instruction.
					if sp < m.heapEnd+8 {
						fc, fip = StackOverflow, ip
						goto fault
					}
					sp -= 8
					store64(m.mem, sp, regs[in.a])
					li := next(ip, 1)
					regs[li.a] = li.imm
					n := next(ip, 3)
					regs[n.a] = regs[n.b] - regs[n.c]
					fc, fip = StackOverflow, next(ip, 4)
					goto fault
				}
				mem := m.mem
				store64(mem, sp-8, regs[in.a])
				li := next(ip, 1)
				regs[li.a] = li.imm
				n := next(ip, 3)
				regs[n.a] = regs[n.b] - regs[n.c]
				sp -= 16
				store64(mem, sp, returnAddress(code0, ip, 5))
				back = next(ip, 5)
				ip = target(code0, next(ip, 4).imm)
				goto call
			case opPOPPUSHLISUBCALL: // POP; PUSH; LI ra, imm; SUB; CALL: the second call of a recursion
				mem := m.mem
				if sp > uint64(len(mem))-8 {
					fc, fip = StackUnderflow, ip
					goto fault
				}
				// The POP frees the slot the PUSH refills, so the PUSH
				// cannot overflow; the CALL can.
				regs[in.a] = load64(mem, sp)
				store64(mem, sp, regs[next(ip, 1).a])
				li := next(ip, 2)
				regs[li.a] = li.imm
				n := next(ip, 4)
				regs[n.a] = regs[n.b] - regs[n.c]
				if sp < m.heapEnd+8 {
					fc, fip = StackOverflow, next(ip, 5)
					goto fault
				}
				sp -= 8
				store64(mem, sp, returnAddress(code0, ip, 6))
				back = next(ip, 6)
				ip = target(code0, next(ip, 5).imm)
				goto call
			case opADDJLT: // ADD; JLT
				regs[in.a] = regs[in.b] + regs[in.c]
				n := next(ip, 1)
				taken := regs[n.a] < regs[n.b]
				ip = pick(taken, target(code0, n.imm), next(ip, 2))
				if m.tracer != nil {
					ip, left, sp = m.traceBranch(taken, ip, left, sp)
				}
				continue run
			case opADDJMP: // ADD; JMP
				regs[in.a] = regs[in.b] + regs[in.c]
				ip = target(code0, next(ip, 1).imm)
				continue run
			case opADDADDJLT: // ADD; ADD; JLT
				regs[in.a] = regs[in.b] + regs[in.c]
				n := next(ip, 1)
				regs[n.a] = regs[n.b] + regs[n.c]
				n = next(ip, 2)
				taken := regs[n.a] < regs[n.b]
				ip = pick(taken, target(code0, n.imm), next(ip, 3))
				if m.tracer != nil {
					ip, left, sp = m.traceBranch(taken, ip, left, sp)
				}
				continue run
			case opADDADDJLTS: // ADD; ADD; JLTS
				regs[in.a] = regs[in.b] + regs[in.c]
				n := next(ip, 1)
				regs[n.a] = regs[n.b] + regs[n.c]
				n = next(ip, 2)
				taken := int64(regs[n.a]) < int64(regs[n.b])
				ip = pick(taken, target(code0, n.imm), next(ip, 3))
				if m.tracer != nil {
					ip, left, sp = m.traceBranch(taken, ip, left, sp)
				}
				continue run
			case opMULADD: // MUL; ADD
				regs[in.a] = regs[in.b] * regs[in.c]
				n := next(ip, 1)
				regs[n.a] = regs[n.b] + regs[n.c]
				ip = next(ip, 2)
			case opMULMODS: // MUL; MODS
				regs[in.a] = regs[in.b] * regs[in.c]
				n := next(ip, 1)
				d := int64(regs[n.c])
				if d == 0 {
					fc, fip = DivideByZero, next(ip, 1)
					goto fault
				}
				regs[n.a] = uint64(int64(regs[n.b]) % d)
				ip = next(ip, 2)
			case opMULMOD: // MUL; MOD
				regs[in.a] = regs[in.b] * regs[in.c]
				n := next(ip, 1)
				d := regs[n.c]
				if d == 0 {
					fc, fip = DivideByZero, next(ip, 1)
					goto fault
				}
				regs[n.a] = regs[n.b] % d
				ip = next(ip, 2)
			case opSTOREADDJLT: // STORE; ADD; JLT
				addr := regs[in.b] + in.imm
				mem := m.mem
				if addr < m.img.heapStart || addr >= uint64(len(mem)) {
					fc, fip = InvalidAddress, ip
					goto fault
				}
				mem[addr] = byte(regs[in.a])
				n := next(ip, 1)
				regs[n.a] = regs[n.b] + regs[n.c]
				n = next(ip, 2)
				taken := regs[n.a] < regs[n.b]
				ip = pick(taken, target(code0, n.imm), next(ip, 3))
				if m.tracer != nil {
					ip, left, sp = m.traceBranch(taken, ip, left, sp)
				} else if taken && in.c == fillMark {
					// A strided fill (see isFill): the next iterations run
					// here, the address register p in a local, each charged
					// its run first; a run the budget does not cover is the
					// run entry's.
					p, off := regs[in.b], in.imm
					v, step, bound := byte(regs[in.a]), regs[next(in, 1).c], regs[n.b]
					hs, r := m.img.heapStart, uint64(in.run)
					for r <= left {
						left -= r
						addr := p + off
						if addr < hs || addr >= uint64(len(mem)) {
							regs[in.b] = p
							fc, fip = InvalidAddress, ip
							goto fault
						}
						mem[addr] = v
						p += step
						if p >= bound {
							ip = next(in, 3)
							break
						}
					}
					regs[in.b] = p
				}
				continue run
			case opLOADJZ: // LOAD; JZ
				addr := regs[in.b] + in.imm
				mem := m.mem
				if addr >= uint64(len(mem)) {
					fc, fip = InvalidAddress, ip
					goto fault
				}
				regs[in.a] = uint64(mem[addr])
				n := next(ip, 1)
				taken := regs[n.a] == 0
				ip = pick(taken, target(code0, n.imm), next(ip, 2))
				if m.tracer != nil {
					ip, left, sp = m.traceBranch(taken, ip, left, sp)
				}
				continue run
			case opPOPADDRET: // POP; ADD; RET
				mem := m.mem
				if sp > uint64(len(mem))-16 {
					// POP or RET underflows: run the canonical sequence.
					if sp > uint64(len(mem))-8 {
						fc, fip = StackUnderflow, ip
						goto fault
					}
					regs[in.a] = load64(mem, sp)
					n := next(ip, 1)
					regs[n.a] = regs[n.b] + regs[n.c]
					sp += 8
					fc, fip = StackUnderflow, next(ip, 2)
					goto fault
				}
				to := load64(mem, sp+8)
				if !returnable(code0, code, to) {
					regs[in.a] = load64(mem, sp)
					n := next(ip, 1)
					regs[n.a] = regs[n.b] + regs[n.c]
					sp += 8
					fc, fip = InvalidAddress, next(ip, 2)
					goto fault
				}
				regs[in.a] = load64(mem, sp)
				n := next(ip, 1)
				regs[n.a] = regs[n.b] + regs[n.c]
				sp += 16
				ip = (*inst)(unsafe.Add(code0, to*2))
				if m.tracer != nil {
					ip, left, sp = m.traceRet(to, ip, left, sp)
				}
				continue run

			case opADDADD: // ADD; ADD
				regs[in.a] = regs[in.b] + regs[in.c]
				n := next(ip, 1)
				regs[n.a] = regs[n.b] + regs[n.c]
				ip = next(ip, 2)
			case opOROR: // OR; OR
				regs[in.a] = regs[in.b] | regs[in.c]
				n := next(ip, 1)
				regs[n.a] = regs[n.b] | regs[n.c]
				ip = next(ip, 2)
			case opMODADD: // MOD; ADD
				d := regs[in.c]
				if d == 0 {
					fc, fip = DivideByZero, ip
					goto fault
				}
				regs[in.a] = regs[in.b] % d
				n := next(ip, 1)
				regs[n.a] = regs[n.b] + regs[n.c]
				ip = next(ip, 2)

			case opADDLOAD: // ADD; LOAD
				regs[in.a] = regs[in.b] + regs[in.c]
				n := next(ip, 1)
				addr := regs[n.b] + n.imm
				mem := m.mem
				if addr >= uint64(len(mem)) {
					fc, fip = InvalidAddress, n
					goto fault
				}
				regs[n.a] = uint64(mem[addr])
				ip = next(ip, 2)
			case opLOADWLOADW: // LOADW; LOADW
				addr := regs[in.b] + in.imm
				mem := m.mem
				if addr > uint64(len(mem))-8 {
					fc, fip = InvalidAddress, ip
					goto fault
				}
				regs[in.a] = load64(mem, addr)
				n := next(ip, 1)
				addr = regs[n.b] + n.imm
				if addr > uint64(len(mem))-8 {
					fc, fip = InvalidAddress, n
					goto fault
				}
				regs[n.a] = load64(mem, addr)
				ip = next(ip, 2)
			case opORJMP: // OR; JMP
				regs[in.a] = regs[in.b] | regs[in.c]
				ip = target(code0, next(ip, 1).imm)
				continue run
			case opORJLT: // OR; JLT
				regs[in.a] = regs[in.b] | regs[in.c]
				n := next(ip, 1)
				taken := regs[n.a] < regs[n.b]
				ip = pick(taken, target(code0, n.imm), next(ip, 2))
				if m.tracer != nil {
					ip, left, sp = m.traceBranch(taken, ip, left, sp)
				}
				continue run
			case opSTOREWXADD: // STOREWX; ADD
				addr := regs[in.b] + regs[in.c]<<3
				mem := m.mem
				if addr < m.img.heapStart || addr > uint64(len(mem))-8 {
					fc, fip = InvalidAddress, ip
					goto fault
				}
				store64(mem, addr, regs[in.a])
				n := next(ip, 1)
				regs[n.a] = regs[n.b] + regs[n.c]
				ip = next(ip, 2)
			case opLOADJNZ: // LOAD; JNZ
				addr := regs[in.b] + in.imm
				mem := m.mem
				if addr >= uint64(len(mem)) {
					fc, fip = InvalidAddress, ip
					goto fault
				}
				regs[in.a] = uint64(mem[addr])
				n := next(ip, 1)
				taken := regs[n.a] != 0
				ip = pick(taken, target(code0, n.imm), next(ip, 2))
				if m.tracer != nil {
					ip, left, sp = m.traceBranch(taken, ip, left, sp)
				}
				continue run

			case opADDADDADD: // ADD; ADD; ADD
				regs[in.a] = regs[in.b] + regs[in.c]
				n := next(ip, 1)
				regs[n.a] = regs[n.b] + regs[n.c]
				n = next(ip, 2)
				regs[n.a] = regs[n.b] + regs[n.c]
				ip = next(ip, 3)
			case opSTOREWXADDJLT: // STOREWX; ADD; JLT
				addr := regs[in.b] + regs[in.c]<<3
				mem := m.mem
				if addr < m.img.heapStart || addr > uint64(len(mem))-8 {
					fc, fip = InvalidAddress, ip
					goto fault
				}
				store64(mem, addr, regs[in.a])
				n := next(ip, 1)
				regs[n.a] = regs[n.b] + regs[n.c]
				n = next(ip, 2)
				taken := regs[n.a] < regs[n.b]
				ip = pick(taken, target(code0, n.imm), next(ip, 3))
				if m.tracer != nil {
					ip, left, sp = m.traceBranch(taken, ip, left, sp)
				}
				continue run
			case opLOADWXLOADWX: // LOADWX; LOADWX
				addr := regs[in.b] + regs[in.c]<<3
				mem := m.mem
				if addr > uint64(len(mem))-8 {
					fc, fip = InvalidAddress, ip
					goto fault
				}
				regs[in.a] = load64(mem, addr)
				n := next(ip, 1)
				addr = regs[n.b] + regs[n.c]<<3
				if addr > uint64(len(mem))-8 {
					fc, fip = InvalidAddress, n
					goto fault
				}
				regs[n.a] = load64(mem, addr)
				ip = next(ip, 2)
			case opANDJNZ: // AND; JNZ
				regs[in.a] = regs[in.b] & regs[in.c]
				n := next(ip, 1)
				taken := regs[n.a] != 0
				ip = pick(taken, target(code0, n.imm), next(ip, 2))
				if m.tracer != nil {
					ip, left, sp = m.traceBranch(taken, ip, left, sp)
				}
				continue run
			case opEnd: // execution ran past the last instruction
				m.stop(Faulted, InvalidAddress, base+slot(code0, ip), m.budget-left)
				goto exit
			case opOutOfTicks: // the first instruction of a tail that does not fit
				m.stop(Faulted, OutOfTicks, base+slot(code0, ip), m.budget-left)
				goto exit
			case opInvalid, numOps, numOps + 1, numOps + 2, numOps + 3, numOps + 4, numOps + 5, numOps + 6, numOps + 7, numOps + 8, numOps + 9, numOps + 10, numOps + 11, numOps + 12, numOps + 13, numOps + 14, numOps + 15, numOps + 16, numOps + 17, numOps + 18, numOps + 19, numOps + 20, numOps + 21, numOps + 22, numOps + 23, numOps + 24, numOps + 25, numOps + 26, numOps + 27, numOps + 28, numOps + 29, numOps + 30, numOps + 31, numOps + 32, numOps + 33, numOps + 34, numOps + 35, numOps + 36, numOps + 37, numOps + 38, numOps + 39, numOps + 40, numOps + 41, numOps + 42, numOps + 43:
				// Unreachable in a verified image. The unused values up to
				// opMask (freeOps of them; image.go checks the count) are
				// listed so that the switch covers them all and compiles
				// to a jump table without a range check; adding an op
				// makes one of them a duplicate case.
				fc, fip = InvalidInstruction, ip
				goto fault
			}
		}
	}
exit:
	m.left, m.sp = left, sp
	return

fault:
	// The instruction at fip faulted: it is charged, the rest of its run
	// is given back (see spent).
	m.left, m.sp = left, sp
	m.stop(Faulted, fc, base+slot(code0, fip), spent(fip, m.budget-left))
	return

call:
	// A CALL has just jumped to ip; back is the slot after the CALL. When
	// the function begins with an early return, its run is charged here
	// as the run entry would, and guard runs it. (The two early-return
	// ops are adjacent: one comparison tests for either.)
	if ip.op-opLIJLTRET > opLIJLTSRET-opLIJLTRET {
		goto run
	}
	if r := uint64(ip.run); r <= left {
		left -= r
	} else {
		goto run // the run entry finishes exactly
	}

guard:
	// ip is an early return, LI; JLT or JLTS to a RET (the base case of a
	// recursion), its run charged. When a CALL has just reached it (back
	// is the slot after the CALL, else the sentinel that closes the code)
	// and it returns, the RET runs here too: it pops the address the CALL
	// pushed (nothing in between wrote memory or moved sp), so the next
	// slot is back, known without loading it, and no dispatch is spent on
	// either. The RET's run is charged as the run entry would; a run that
	// does not fit, and a CALL at the very end of the code (whose RET
	// faults), leave the RET to the loop.
	{
		g := ip
		regs[g.a] = g.imm
		n := next(g, 2)
		taken := regs[n.a] < regs[n.b]
		if g.op == opLIJLTSRET {
			taken = int64(regs[n.a]) < int64(regs[n.b])
		}
		ip = pick(taken, target(code0, n.imm), next(g, 3))
		if m.tracer != nil {
			ip, left, sp = m.traceBranch(taken, ip, left, sp)
		}
		if taken && back.op != opEnd {
			if r := uint64(ip.run); r <= left {
				left -= r
				sp += 8
				ip = back
				if m.tracer != nil {
					ip, left, sp = m.traceRet(offset(code0, ip)>>1, ip, left, sp)
				}
			}
		}
	}
	goto run
}

// channelOp runs SEND, RECV or POLL, the instruction in, at slot pc. It
// returns the next slot and true, or false when the machine stopped (fault,
// or a RECV or POLL blocked on an empty channel), and the budget left, less the bytes a RECV moved (see
// meter.go). It returns the next slot, rather than the loop keeping ip
// live across the call, so that the Go compiler does not spill ip on every
// dispatch.
func (m *Machine) channelOp(in *inst, pc, left uint64) (*inst, bool, uint64) {
	m.left = left
	var f Fault
	switch in.op {
	case opSEND:
		f = m.send(in.c, m.regs[in.a], in.imm)
	case opRECV:
		var blocked bool
		f, blocked = m.recv(in.c, m.regs[in.a], in.imm)
		if blocked {
			m.blockCh, m.blockPoll = in.c, false
			m.stop(Blocked, NoFault, pc, m.charged()-uint64(in.run))
			return in, false, left
		}
	case opPOLL:
		var n uint64
		var blocked bool
		n, f, blocked = m.poll(in.c)
		if blocked {
			// POLL is inside a run: what its run charged from the POLL
			// on is given back, and Run charges it again on the retry.
			m.blockCh, m.blockPoll = in.c, true
			m.stop(Blocked, NoFault, pc, m.charged()-uint64(in.run))
			return in, false, left
		}
		if f == NoFault {
			m.regs[in.a] = n
		}
	}
	if f != NoFault {
		// SEND and RECV end their runs, so what was charged is exactly
		// their cost (a RECV's fixed part: a faulting RECV moves nothing),
		// or, for a RECV whose bytes do not fit, what they leave
		// uncharged; POLL is inside a run.
		ticks := m.charged()
		switch {
		case f == OutOfTicks:
			ticks -= uint64(in.run)
		case in.op == opPOLL:
			ticks = spent(in, ticks)
		}
		m.stop(Faulted, f, pc, ticks)
		return in, false, m.left
	}
	return next(in, 1), true, m.left
}

// hostCall runs HCALL, the instruction in, at slot pc, which ends its run:
// what was charged is exact, HCALL's base cost included. It returns the
// next slot and true, or false when the machine stopped, and the budget
// left once the host's ticks are charged. While the host runs, the
// machine is RUNNING and its pc, tick count and stack pointer are exact
// (those of the HCALL, charged), so the host may read them; Run and Enter
// do nothing then.
func (m *Machine) hostCall(in *inst, pc, left uint64) (*inst, bool, uint64) {
	m.pc, m.ticks, m.left = uint32(pc), m.budget-left, left
	if m.host == nil {
		m.stop(Faulted, PermissionDenied, pc, m.ticks)
		return in, false, left
	}
	extra, f := m.host.HostCall(m, uint32(in.imm))
	if extra > left {
		m.stop(Faulted, OutOfTicks, pc, m.budget)
		return in, false, 0
	}
	left -= extra
	if f != NoFault {
		m.stop(Faulted, f, pc, m.budget-left)
		return in, false, left
	}
	return next(in, 1), true, left
}

// pick is a conditional branch's next slot. (The tracer is called at each
// branch, not here: pick must stay small enough to inline, and the call
// must take and return the budget.)
func pick(taken bool, target, next *inst) *inst {
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

// next returns the slot k slots after in, without a bounds check: the
// instructions of a straight-line run and of a fused sequence are in the
// code array, which ends with the opEnd or opOutOfTicks slot.
func next(in *inst, k uintptr) *inst {
	return (*inst)(unsafe.Add(unsafe.Pointer(in), k*unsafe.Sizeof(inst{})))
}

// target returns the slot at byte offset off of the code array: a branch
// or call target, verified at load time (see NewImage).
func target(code unsafe.Pointer, off uint64) *inst {
	return (*inst)(unsafe.Add(code, uintptr(off)))
}

// offset is the byte offset of the slot ip points at, the inverse of
// target.
func offset(code unsafe.Pointer, ip *inst) uint64 {
	return uint64(uintptr(unsafe.Pointer(ip)) - uintptr(code))
}

// returnAddress is the byte address in the program of the slot k slots
// after ip: what a CALL there saves. A CALL ends its run, so it never runs
// in a tail's scratch code (see Machine.tail), where slot addresses would
// need the scratch array's base.
func returnAddress(code unsafe.Pointer, ip *inst, k uint64) uint64 {
	return uint64(uintptr(unsafe.Pointer(ip))-uintptr(code))>>1 + 8*k
}

// slot is the index of the slot ip points at, for the slow paths that
// report or save a pc.
func slot(code unsafe.Pointer, ip *inst) uint64 {
	return uint64(uintptr(unsafe.Pointer(ip))-uintptr(code)) / uint64(unsafe.Sizeof(inst{}))
}

// returnable reports whether a RET may return to byte address to: an
// instruction start in code (not the second word of an LI, nor the closing
// sentinel). Rotating the address right by 3 moves a misalignment into the
// high bits, so one comparison checks both alignment and range.
func returnable(code0 unsafe.Pointer, code []inst, to uint64) bool {
	s := bits.RotateLeft64(to, -3)
	return s < uint64(len(code)-1) && at(code0, s).op != opInvalid
}

// at returns the instruction in slot pc without a bounds check. Every pc
// the interpreter reaches is a valid slot: verified jump targets, checked
// RET targets, and straight-line successors, which end at the opEnd or
// opOutOfTicks slot that closes every code array.
func at(code unsafe.Pointer, pc uint64) *inst {
	return (*inst)(unsafe.Add(code, uintptr(pc)*unsafe.Sizeof(inst{})))
}
