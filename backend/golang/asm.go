package golang

import (
	"fmt"
	"strings"

	"github.com/genesis-toolchain/genesis/backend/internal/memlayout"
	"github.com/genesis-toolchain/genesis/forge/bytecode"
	"github.com/genesis-toolchain/genesis/ir"
)

// asm translates an inline asm block of a standalone program instruction
// by instruction, into a Go block whose variables rN are the Forge
// registers it uses (64 bits, zero unless bound). In registers start as
// the operands in their canonical 64-bit form (narrow integers
// sign-extended); out registers are brought to the result's type as the
// IR defines it (the low bits of a narrow integer, nonzero for a bool).
func (fg *funcGen) asm(in *ir.Instr) {
	insts, err := memlayout.DecodeAsm(in.Str)
	if err != nil {
		fg.g.diags.Errorf(in.Pos, "0x0804", "inline assembly does not translate to Go: %v", err)
		return
	}
	for _, v := range in.Results {
		if fg.uses[v] > 0 {
			fg.printf("var %s %s", fg.name(v), goType(v.Type))
		}
	}
	fg.printf("{")
	fg.depth++
	used := map[int]bool{}
	for _, r := range in.Regs {
		used[r] = true
	}
	for _, x := range insts {
		if x.Op == bytecode.CALL {
			for r := 0; r < 64; r++ {
				used[r] = true // arguments and results: declared, maybe unused
			}
		}
		info := bytecode.Lookup(x.Op)
		a, b, c, _ := info.Format.Uses()
		if a {
			used[int(x.A)] = true
		}
		if b {
			used[int(x.B)] = true
		}
		if c {
			used[int(x.C)] = true
		}
	}
	for r := 0; r < 256; r++ {
		if used[r] {
			if r == 255 {
				// Compiled code never writes r255, which holds heap_end
				// from the start (docs/forge.md, Registers at start).
				fg.printf("var r255 uint64 = heapEnd")
			} else {
				fg.printf("var r%d uint64", r)
			}
			fg.printf("_ = r%d", r)
		}
	}
	for i, arg := range in.Args {
		v := fg.name(arg)
		if arg.Type.Kind() == ir.KindBool {
			v = "b2i(" + v + ")"
		}
		fg.printf("r%d = uint64(%s)", in.Regs[i], v)
	}
	for _, x := range insts {
		if x.Op == bytecode.PUSH || x.Op == bytecode.POP || x.Op == bytecode.CALL {
			// The machine stack pointer as the text starts: below what
			// the Forge code pushed around the block (instr checked that
			// it fits).
			fg.printf("asp := sp - %d", fg.act.spOff+fg.stack.Instrs[in].Depth)
			fg.printf("_ = asp")
			break
		}
	}
	for _, x := range insts {
		fg.asmInst(in, x)
	}
	for i, v := range in.Results {
		if fg.uses[v] == 0 {
			continue
		}
		r := in.Regs[len(in.Args)+i]
		if v.Type.Kind() == ir.KindBool {
			fg.printf("%s = r%d != 0", fg.name(v), r)
		} else {
			fg.printf("%s = %s(r%d)", fg.name(v), goType(v.Type), r)
		}
	}
	fg.depth--
	fg.printf("}")
}

func (fg *funcGen) asmInst(in *ir.Instr, x memlayout.AsmInst) {
	binop := map[bytecode.Opcode]string{bytecode.ADD: "+", bytecode.SUB: "-", bytecode.MUL: "*", bytecode.AND: "&", bytecode.OR: "|", bytecode.XOR: "^"}
	switch x.Op {
	case bytecode.ADD, bytecode.SUB, bytecode.MUL, bytecode.AND, bytecode.OR, bytecode.XOR:
		fg.printf("r%d = r%d %s r%d", x.A, x.B, binop[x.Op], x.C)
	case bytecode.DIV, bytecode.MOD, bytecode.DIVS, bytecode.MODS:
		fg.printf("if r%d == 0 {", x.C)
		fg.printf("\tpanic(fault{%d, 0})", memlayout.FaultDivideByZero)
		fg.printf("}")
		op := "/"
		if x.Op == bytecode.MOD || x.Op == bytecode.MODS {
			op = "%"
		}
		if x.Op == bytecode.DIVS || x.Op == bytecode.MODS {
			fg.printf("r%d = uint64(int64(r%d) %s int64(r%d))", x.A, x.B, op, x.C)
		} else {
			fg.printf("r%d = r%d %s r%d", x.A, x.B, op, x.C)
		}
	case bytecode.NEG:
		fg.printf("r%d = -r%d", x.A, x.B)
	case bytecode.NOT:
		fg.printf("r%d = ^r%d", x.A, x.B)
	case bytecode.SHL:
		fg.printf("r%d = r%d << (r%d & 63)", x.A, x.B, x.C)
	case bytecode.SHR:
		fg.printf("r%d = r%d >> (r%d & 63)", x.A, x.B, x.C)
	case bytecode.SAR:
		fg.printf("r%d = uint64(int64(r%d) >> (r%d & 63))", x.A, x.B, x.C)
	case bytecode.LOAD:
		fg.printf("r%d = uint64(load8(mem, r%d + %d))", x.A, x.B, uint64(x.Offset()))
	case bytecode.LOADW:
		fg.printf("r%d = load64(mem, r%d + %d)", x.A, x.B, uint64(x.Offset()))
	case bytecode.STORE:
		fg.printf("store8(mem, r%d + %d, uint8(r%d))", x.B, uint64(x.Offset()), x.A)
	case bytecode.STOREW:
		fg.printf("store64(mem, r%d + %d, r%d)", x.B, uint64(x.Offset()), x.A)
	case bytecode.LOAD16S:
		fg.printf("r%d = uint64(int64(int16(load16(mem, r%d + %d))))", x.A, x.B, uint64(x.Offset()))
	case bytecode.LOAD32S:
		fg.printf("r%d = uint64(int64(int32(load32(mem, r%d + %d))))", x.A, x.B, uint64(x.Offset()))
	case bytecode.STORE16:
		fg.printf("store16(mem, r%d + %d, uint16(r%d))", x.B, uint64(x.Offset()), x.A)
	case bytecode.STORE32:
		fg.printf("store32(mem, r%d + %d, uint32(r%d))", x.B, uint64(x.Offset()), x.A)
	case bytecode.LOAD32SX:
		fg.printf("r%d = uint64(int64(int32(load32(mem, r%d + r%d<<2))))", x.A, x.B, x.C)
	case bytecode.STORE32X:
		fg.printf("store32(mem, r%d + r%d<<2, uint32(r%d))", x.B, x.C, x.A)
	case bytecode.LOADX:
		fg.printf("r%d = uint64(load8(mem, r%d + r%d))", x.A, x.B, x.C)
	case bytecode.LOADWX:
		fg.printf("r%d = load64(mem, r%d + r%d<<3)", x.A, x.B, x.C)
	case bytecode.STOREWX:
		fg.printf("store64(mem, r%d + r%d<<3, r%d)", x.B, x.C, x.A)
	case bytecode.PUSH:
		fg.printf("asp = m.push(asp, r%d)", x.A)
	case bytecode.POP:
		fg.printf("r%d, asp = m.pop(asp)", x.A)
	case bytecode.LI:
		fg.printf("r%d = %d", x.A, x.Imm)
	case bytecode.HALT:
		fg.printf("m.exit(0)")
	case bytecode.FAULT:
		fg.printf("m.faultCode(%d, %d)", memlayout.FaultUser, x.Imm)
	case bytecode.NOP, bytecode.TICK:
	case bytecode.BUDGET:
		// Go code is not metered: the budget never runs out.
		fg.printf("r%d = 1 << 62", x.A)
	case bytecode.SEND:
		fg.printf("m.send(%d, r%d, %d)", x.C, x.A, x.Imm)
	case bytecode.RECV:
		fg.printf("m.recv(%d, r%d, %d)", x.C, x.A, x.Imm)
	case bytecode.POLL:
		fg.printf("r%d = m.poll(%d)", x.A, x.C)
	case bytecode.CALL:
		// The Forge calling convention: arguments in r0, r1, …, results
		// back in r0, r1, ….
		f := fg.g.funcs[x.Callee]
		if f == nil {
			fg.g.diags.Errorf(in.Pos, "0x0804", "inline assembly: CALL %s: no such function", x.Callee)
			return
		}
		args := ""
		for i, p := range f.Params {
			if p.Type.Kind() == ir.KindBool {
				args += fmt.Sprintf(", r%d != 0", i)
			} else {
				args += fmt.Sprintf(", %s(r%d)", goType(p.Type), i)
			}
		}
		// CALL pushes the return address.
		fg.printf("if asp < heapEnd+8 {")
		fg.printf("\tpanic(fault{%d, 0})", memlayout.FaultStackOverflow)
		fg.printf("}")
		call := fmt.Sprintf("%s(m, asp-8%s)", funcName(x.Callee), args)
		if len(f.Results) == 0 {
			fg.printf("%s", call)
			return
		}
		var outs []string
		for i := range f.Results {
			outs = append(outs, fmt.Sprintf("c%d", i))
		}
		fg.printf("{")
		fg.printf("\t%s := %s", strings.Join(outs, ", "), call)
		for i, t := range f.Results {
			if t.Kind() == ir.KindBool {
				fg.printf("\tr%d = uint64(b2i(c%d))", i, i)
			} else {
				fg.printf("\tr%d = uint64(c%d)", i, i)
			}
		}
		fg.printf("}")
	default:
		fg.g.diags.Errorf(in.Pos, "0x0804", "%s", fmt.Sprintf("inline assembly: %s does not translate to Go", x.Op))
	}
}
