package llvm

import (
	"github.com/genesis-toolchain/genesis/backend/internal/memlayout"
	"github.com/genesis-toolchain/genesis/forge/bytecode"
	gir "github.com/genesis-toolchain/genesis/ir"
	"github.com/llir/llvm/ir/constant"
	"github.com/llir/llvm/ir/enum"
	"github.com/llir/llvm/ir/types"
	"github.com/llir/llvm/ir/value"
)

// reservedReg is r255, which the Forge backend never writes: it keeps the
// heap_end the machine put there at start.
const reservedReg = 255

// codeAsm is the diagnostic code of inline assembly that does not
// translate (as the Forge backend's for text that does not assemble).
const codeAsm = "0x0804"

// asm translates an inline asm block instruction by instruction. The
// Forge registers are SSA values of the translation (all 64 bits, zero
// when the block does not bind them, as nothing else can be in them that
// the program could rely on, except r255, which holds heap_end); in registers start as the operands in their
// canonical 64-bit form, out registers are brought back to the result's
// type as the IR defines it.
func (fg *fnGen) asm(in *gir.Instr) {
	insts, err := memlayout.DecodeAsm(in.Str)
	if err != nil {
		fg.g.diags.Errorf(in.Pos, codeAsm, "inline assembly does not translate to native code: %v", err)
		return
	}
	regs := map[uint8]value.Value{}
	reg := func(r uint8) value.Value {
		if v, ok := regs[r]; ok {
			return v
		}
		if r == reservedReg {
			// Compiled code never writes r255, which holds heap_end
			// from the start (docs/forge.md, Registers at start).
			return fg.machineValue(fg.g.heapEnd)
		}
		return i64(0)
	}
	for i, arg := range in.Args {
		regs[uint8(in.Regs[i])] = fg.widen(fg.vals[arg], arg.Type)
	}
	// The machine stack pointer as the text starts: below what the Forge
	// code pushed around the block (instr checked that it fits). The
	// function has it as the bytes free above heap_end.
	heapEnd := fg.machineValue(fg.g.heapEnd)
	var sp value.Value = fg.cur.NewAdd(heapEnd, fg.cur.NewSub(fg.sp, i64(fg.stack.Instrs[in].Depth)))
	for _, x := range insts {
		b := fg.cur
		switch x.Op {
		case bytecode.ADD:
			regs[x.A] = b.NewAdd(reg(x.B), reg(x.C))
		case bytecode.SUB:
			regs[x.A] = b.NewSub(reg(x.B), reg(x.C))
		case bytecode.MUL:
			regs[x.A] = b.NewMul(reg(x.B), reg(x.C))
		case bytecode.DIV:
			regs[x.A] = fg.divide(gir.OpDivU, gir.I64, reg(x.B), reg(x.C))
		case bytecode.MOD:
			regs[x.A] = fg.divide(gir.OpRemU, gir.I64, reg(x.B), reg(x.C))
		case bytecode.DIVS:
			regs[x.A] = fg.divide(gir.OpDivS, gir.I64, reg(x.B), reg(x.C))
		case bytecode.MODS:
			regs[x.A] = fg.divide(gir.OpRemS, gir.I64, reg(x.B), reg(x.C))
		case bytecode.NEG:
			regs[x.A] = b.NewSub(i64(0), reg(x.B))
		case bytecode.AND:
			regs[x.A] = b.NewAnd(reg(x.B), reg(x.C))
		case bytecode.OR:
			regs[x.A] = b.NewOr(reg(x.B), reg(x.C))
		case bytecode.XOR:
			regs[x.A] = b.NewXor(reg(x.B), reg(x.C))
		case bytecode.NOT:
			regs[x.A] = b.NewXor(reg(x.B), i64(-1))
		case bytecode.SHL:
			regs[x.A] = fg.shift(gir.OpShl, gir.I64, reg(x.B), reg(x.C))
		case bytecode.SHR:
			regs[x.A] = fg.shift(gir.OpShrU, gir.I64, reg(x.B), reg(x.C))
		case bytecode.SAR:
			regs[x.A] = fg.shift(gir.OpShrS, gir.I64, reg(x.B), reg(x.C))
		case bytecode.LOAD:
			v := fg.load(gir.I8, fg.address(reg(x.B), x.Offset(), 1, false))
			regs[x.A] = fg.cur.NewZExt(v, types.I64)
		case bytecode.LOADW:
			regs[x.A] = fg.load(gir.I64, fg.address(reg(x.B), x.Offset(), 8, false))
		case bytecode.STORE:
			v := b.NewTrunc(reg(x.A), types.I8)
			fg.store(gir.I8, fg.address(reg(x.B), x.Offset(), 1, true), v)
		case bytecode.STOREW:
			fg.store(gir.I64, fg.address(reg(x.B), x.Offset(), 8, true), reg(x.A))
		case bytecode.LOAD16S, bytecode.LOAD32S:
			t, n := gir.I16, int64(2)
			if x.Op == bytecode.LOAD32S {
				t, n = gir.I32, 4
			}
			v := fg.load(t, fg.address(reg(x.B), x.Offset(), n, false))
			regs[x.A] = fg.cur.NewSExt(v, types.I64)
		case bytecode.STORE16, bytecode.STORE32:
			t, n, lt := gir.I16, int64(2), types.I16
			if x.Op == bytecode.STORE32 {
				t, n, lt = gir.I32, 4, types.I32
			}
			fg.store(t, fg.address(reg(x.B), x.Offset(), n, true), b.NewTrunc(reg(x.A), lt))
		case bytecode.LOAD32SX:
			a := b.NewAdd(reg(x.B), b.NewShl(reg(x.C), i64(2)))
			v := fg.load(gir.I32, fg.address(a, 0, 4, false))
			regs[x.A] = fg.cur.NewSExt(v, types.I64)
		case bytecode.STORE32X:
			a := b.NewAdd(reg(x.B), b.NewShl(reg(x.C), i64(2)))
			fg.store(gir.I32, fg.address(a, 0, 4, true), b.NewTrunc(reg(x.A), types.I32))
		case bytecode.LOADX:
			v := fg.load(gir.I8, fg.address(b.NewAdd(reg(x.B), reg(x.C)), 0, 1, false))
			regs[x.A] = fg.cur.NewZExt(v, types.I64)
		case bytecode.LOADWX:
			a := b.NewAdd(reg(x.B), b.NewShl(reg(x.C), i64(3)))
			regs[x.A] = fg.load(gir.I64, fg.address(a, 0, 8, false))
		case bytecode.STOREWX:
			a := b.NewAdd(reg(x.B), b.NewShl(reg(x.C), i64(3)))
			fg.store(gir.I64, fg.address(a, 0, 8, true), reg(x.A))
		case bytecode.PUSH:
			fg.check(b.NewICmp(enum.IPredULT, b.NewSub(sp, heapEnd), i64(8)), memlayout.FaultStackOverflow, 0)
			sp = fg.cur.NewSub(sp, i64(8))
			fg.store(gir.I64, sp, reg(x.A))
		case bytecode.POP:
			fg.check(b.NewICmp(enum.IPredUGT, sp, b.NewSub(fg.machineValue(fg.g.memory), i64(8))), memlayout.FaultStackUnderflow, 0)
			regs[x.A] = fg.load(gir.I64, sp)
			sp = fg.cur.NewAdd(sp, i64(8))
		case bytecode.LI:
			regs[x.A] = i64(int64(x.Imm))
		case bytecode.HALT:
			b.NewCall(fg.g.halt)
			b.NewUnreachable()
			fg.newBlock()
		case bytecode.FAULT:
			b.NewCall(fg.g.fault, i64(memlayout.FaultUser), i64(int64(x.Imm)))
			b.NewUnreachable()
			fg.newBlock()
		case bytecode.NOP, bytecode.TICK:
		case bytecode.BUDGET:
			// Native code is not metered: the budget never runs out.
			regs[x.A] = i64(1 << 62)
		case bytecode.SEND:
			b.NewCall(fg.g.send, i64(int64(x.C)), reg(x.A), i64(int64(x.Imm)))
		case bytecode.RECV:
			b.NewCall(fg.g.recv, i64(int64(x.C)), reg(x.A), i64(int64(x.Imm)), i64(int64(fg.g.layout.HeapStart)))
		case bytecode.POLL:
			regs[x.A] = b.NewCall(fg.g.poll, i64(int64(x.C)))
		case bytecode.CALL:
			// The Forge calling convention: arguments in r0, r1, …,
			// results back in r0, r1, ….
			f := fg.g.src.FuncMap()[x.Callee]
			if f == nil {
				fg.g.diags.Errorf(in.Pos, codeAsm, "inline assembly: CALL %s: no such function", x.Callee)
				return
			}
			// CALL pushes the return address.
			free := b.NewSub(sp, heapEnd)
			fg.check(b.NewICmp(enum.IPredULT, free, i64(8)), memlayout.FaultStackOverflow, 0)
			args := []value.Value{fg.cur.NewSub(free, i64(8)), fg.frame}
			for i, p := range f.Params {
				args = append(args, fg.narrow(reg(uint8(i)), p.Type))
			}
			c := fg.cur.NewCall(fg.g.funcs[x.Callee], args...)
			switch len(f.Results) {
			case 0:
			case 1:
				regs[0] = fg.widen(c, f.Results[0])
			default:
				for i, t := range f.Results {
					regs[uint8(i)] = fg.widen(fg.cur.NewExtractValue(c, uint64(i)), t)
				}
			}
		default:
			fg.g.diags.Errorf(in.Pos, codeAsm, "inline assembly: %s does not translate to native code", x.Op)
			return
		}
	}
	for i, res := range in.Results {
		fg.vals[res] = fg.narrow(reg(uint8(in.Regs[len(in.Args)+i])), res.Type)
	}
}

// widen is v, of IR type t, as a 64-bit Forge register holds it: narrow
// integers sign-extended, bools 0 or 1.
func (fg *fnGen) widen(v value.Value, t gir.Type) value.Value {
	switch t.Kind() {
	case gir.KindBool:
		return fg.cur.NewZExt(v, types.I64)
	case gir.KindI8, gir.KindI16, gir.KindI32:
		return fg.cur.NewSExt(v, types.I64)
	}
	return v
}

// narrow is a register's 64 bits as a value of type t: the low bits of a
// narrow integer, whether it is nonzero for a bool.
func (fg *fnGen) narrow(v value.Value, t gir.Type) value.Value {
	switch t.Kind() {
	case gir.KindBool:
		return fg.cur.NewICmp(enum.IPredNE, v, constant.NewInt(types.I64, 0))
	case gir.KindI8, gir.KindI16, gir.KindI32:
		return fg.cur.NewTrunc(v, llType(t))
	}
	return v
}
