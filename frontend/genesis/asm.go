package genesis

import (
	"strings"

	"github.com/genesis-toolchain/genesis/forge/bytecode"
)

// Checking of inline assembly (§7). Parse has read the registers; here
// the bindings are checked against §7's rules and each instruction
// against the opcode table of forge/bytecode, the one source of truth
// for mnemonics and operand layouts.

// asm checks an asm statement.
func (c *checker) asm(s *AsmStmt) {
	var in, out [256]bool
	for _, b := range s.Bindings {
		if b.Out {
			c.asmOut(b)
			if out[b.Reg] {
				c.errorf(b.RegPos, CodeAsm, "two out bindings from r%d", b.Reg)
			}
			out[b.Reg] = true
			continue
		}
		t := c.expr(b.Value, U64)
		if !isInvalid(t) && !fitsRegister(t) {
			c.errorf(b.Value.Pos(), CodeAsm, "an in binding takes a value that fits a register, not a %s", t)
		}
		if in[b.Reg] {
			c.errorf(b.RegPos, CodeAsm, "two in bindings to r%d", b.Reg)
		}
		in[b.Reg] = true
	}
	for _, inst := range s.Insts {
		c.asmInst(inst)
	}
}

// asmOut checks the lvalue of an out binding: a place, mutable (§7), that
// a register can be copied into. The binding assigns its target, so a
// target that could not be assigned with = is the same type error as
// there (requirements §9.5: "a type error if the lvalue is not mut").
func (c *checker) asmOut(b *AsmBinding) {
	t := c.expr(b.Value, nil)
	if isInvalid(t) {
		return
	}
	if !isPlace(b.Value) {
		c.errorf(b.Value.Pos(), CodeType, "cannot assign to %s; the target of an out binding must be a variable, *p, a[i], s.f or p->f", describeExpr(b.Value))
		return
	}
	if ok, why := mutable(b.Value); !ok {
		c.errorf(b.Value.Pos(), CodeType, "the target of an out binding must be mut: cannot assign to %s", why)
		return
	}
	if !fitsRegister(t) {
		c.errorf(b.Value.Pos(), CodeAsm, "an out binding needs a target that fits a register, not a %s", t)
	}
}

// fitsRegister reports whether a value of type t is held in one 64-bit
// register: integers, bool, pointers and function pointers.
func fitsRegister(t Type) bool {
	switch t := t.(type) {
	case *Basic:
		return IsInteger(t) || t == Bool
	case *Pointer, *FuncType:
		return true
	}
	return false
}

// operandSlot is what one assembly operand of an instruction format is.
type operandSlot uint8

const (
	slotReg     operandSlot = iota // a register
	slotChannel                    // a channel number, 0..255
	slotOffset                     // a signed 32-bit memory offset
	slotU32                        // an unsigned 32-bit immediate (length, fault code)
	slotTarget                     // a code address: a function name or a number
	slotImm64                      // LI's 64-bit word: a number or a function's address
)

// slots gives the assembly operands of each format, in order (see the
// Format constants of forge/bytecode).
var slots = map[bytecode.Format][]operandSlot{
	bytecode.FmtNone:     {},
	bytecode.FmtRRR:      {slotReg, slotReg, slotReg},
	bytecode.FmtRR:       {slotReg, slotReg},
	bytecode.FmtR:        {slotReg},
	bytecode.FmtMem:      {slotReg, slotReg, slotOffset},
	bytecode.FmtTarget:   {slotTarget},
	bytecode.FmtRTarget:  {slotReg, slotTarget},
	bytecode.FmtRRTarget: {slotReg, slotReg, slotTarget},
	bytecode.FmtLI:       {slotReg, slotImm64},
	bytecode.FmtImm:      {slotU32},
	bytecode.FmtChanRLen: {slotChannel, slotReg, slotU32},
	bytecode.FmtChanR:    {slotChannel, slotReg},
}

func (s operandSlot) String() string {
	switch s {
	case slotReg:
		return "a register"
	case slotChannel:
		return "a channel number"
	case slotOffset:
		return "a memory offset"
	case slotU32:
		return "a 32-bit immediate"
	case slotTarget:
		return "a function name or code address"
	}
	return "a number or function name"
}

// asmInst checks one instruction: a known mnemonic, and operands of the
// number and kinds its format takes.
func (c *checker) asmInst(in *AsmInst) {
	info := bytecode.LookupName(in.Mnemonic)
	if info == nil {
		if bytecode.LookupName(strings.ToUpper(in.Mnemonic)) != nil {
			c.errorf(in.MnemonicPos, CodeAsm, "unknown mnemonic %s (mnemonics are upper-case: %s)", in.Mnemonic, strings.ToUpper(in.Mnemonic))
		} else {
			c.errorf(in.MnemonicPos, CodeAsm, "unknown mnemonic %s", in.Mnemonic)
		}
		return
	}
	in.Info = info
	want := slots[info.Format]
	if len(in.Operands) != len(want) {
		c.errorf(in.MnemonicPos, CodeAsm, "%s takes %s, found %d", info.Name, plural(len(want), "operand"), len(in.Operands))
		return
	}
	for i, op := range in.Operands {
		c.asmOperand(info, op, want[i])
	}
}

func (c *checker) asmOperand(info *bytecode.Info, op *AsmOperand, slot operandSlot) {
	ok := true
	switch op.Kind {
	case AsmReg:
		ok = slot == slotReg
	case AsmImm:
		v := int64(op.Imm)
		switch slot {
		case slotReg:
			ok = false
		case slotChannel:
			if op.Imm > 255 {
				c.errorf(op.OpPos, CodeAsm, "channel %d out of range 0 to 255", op.Imm)
			}
		case slotOffset:
			// Both spellings of an offset: -2^31..2^32-1 (as forge asm).
			if v < -1<<31 || (v >= 0 && op.Imm > 1<<32-1) {
				c.errorf(op.OpPos, CodeAsm, "memory offset out of the 32-bit range")
			}
		case slotU32, slotTarget:
			if op.Imm > 1<<32-1 {
				c.errorf(op.OpPos, CodeAsm, "immediate out of range 0 to 4294967295")
			}
		}
	case AsmName:
		ok = slot == slotTarget || slot == slotImm64
		if ok {
			obj := c.lookup(op.Name.Name)
			op.Name.Obj = obj
			if fn, isFunc := obj.(*Func); isFunc {
				record(op.Name, fn.Type)
			} else if obj == nil {
				c.errorf(op.OpPos, CodeSymbol, "undefined: %s", op.Name.Name)
			} else {
				c.errorf(op.OpPos, CodeAsm, "%s is not a function; a name operand of asm is a function's address", op.Name.Name)
			}
		}
	}
	if !ok {
		c.errorf(op.OpPos, CodeAsm, "operand of %s must be %s", info.Name, slot)
	}
}
