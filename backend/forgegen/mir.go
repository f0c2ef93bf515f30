package forgegen

import (
	"fmt"
	"math/bits"
	"strings"

	"github.com/genesis-toolchain/genesis/ir"
)

// reg is a register operand of the machine-level code: 0–255 are the
// machine's registers, firstVirtual and above are virtual registers that
// the allocator maps onto r0–r249.
type reg int32

// Register conventions (docs/backend-forge.md).
const (
	numAllocatable     = 250 // r0–r249 hold values
	rScratch0      reg = 250 // scratch within one expanded instruction
	rScratch1      reg = 251
	rScratch2      reg = 252
	rShadowLimit   reg = 253 // lowest address the shadow stack may reach
	rFrame         reg = 254 // shadow stack pointer = frame base of the running function
	rReserved      reg = 255 // reserved, never written by compiled code
	firstVirtual   reg = 256
)

func (r reg) virtual() bool { return r >= firstVirtual }

func (r reg) String() string {
	if r.virtual() {
		return fmt.Sprintf("v%d", r-firstVirtual)
	}
	return fmt.Sprintf("r%d", int(r))
}

// regSet is a set of machine registers.
type regSet [4]uint64

func (s *regSet) add(r reg)      { s[r>>6] |= 1 << (uint(r) & 63) }
func (s *regSet) has(r reg) bool { return s[r>>6]&(1<<(uint(r)&63)) != 0 }
func (s *regSet) union(t *regSet) {
	s[0], s[1], s[2], s[3] = s[0]|t[0], s[1]|t[1], s[2]|t[2], s[3]|t[3]
}
func (s *regSet) empty() bool { return s[0]|s[1]|s[2]|s[3] == 0 }
func (s *regSet) count() (n int) {
	for _, w := range s {
		n += bits.OnesCount64(w)
	}
	return n
}

// allAllocatable is the clobber set of a call whose callee is unknown.
var allAllocatable = func() regSet {
	var s regSet
	for r := reg(0); r < numAllocatable; r++ {
		s.add(r)
	}
	return s
}()

// mop is the kind of a machine-level instruction.
type mop uint8

const (
	mLabel   mop = iota // sym:
	mMove               // defs[0] = uses[0]            (OR d, s, s)
	mLI                 // defs[0] = imm, or the address of sym
	mALU                // name defs[0], uses[0], uses[1]
	mUnary              // name defs[0], uses[0]        (NEG, NOT)
	mLoad               // name defs[0], uses[0], imm   (LOAD, LOADW, ...); LOADWX: defs[0], uses[0] base, uses[1] index
	mStore              // name uses[0], uses[1], imm   (STORE, STOREW, ...); STOREWX: uses[0] value, uses[1] base, uses[2] index
	mJmp                // JMP sym
	mJcc                // name uses..., sym            (JZ, JNZ, JLT, JLTS, JEQ, JNE)
	mCall               // CALL sym; uses: argument registers; defs: result registers
	mCallInd            // uses[0] the function index, then argument registers; sym: dispatch routine
	mRet                // uses: result registers; runs the epilogue and RET
	mAsm                // text; uses: in registers; defs: out registers
	mEntry              // defs: parameter registers, defined by the caller
	mFault              // FAULT imm
	mPush               // PUSH uses[0]
	mPop                // POP defs[0]
	mHalt               // HALT: only in the program's start routine
	mHCall              // HCALL imm; uses: operands in r0–r2; defs: r0 or none; clob: r0
	mChan               // name (SEND, RECV) ch, uses[0], imm: the buffer's address and length; clob: for a parallel block's RECV
)

// minst is one machine-level instruction. Before register allocation its
// operands may be virtual registers.
type minst struct {
	op         mop
	name       string // mnemonic of mALU, mUnary, mLoad, mStore, mJcc
	defs, uses []reg
	imm        int64
	sym        string // label, jump or call target, LI symbol
	text       string // mAsm: the assembly text
	clob       regSet // mCall, mCallInd, mAsm, mHCall, mChan: registers the instruction may change
	ch         uint8  // mChan: the channel
	reserved   []reg  // mAsm: reserved registers (r253–r255) to save around the text
	resIn      []reg  // mAsm: the reserved registers the trailing uses bind
	resOut     []reg  // mAsm: the reserved registers the trailing defs read
	// src is the IR instruction whose lowering emitted this one (nil for
	// the entry, the prologue, spill code and saves), so that stackUse can
	// tell the native and Go targets what each IR instruction's Forge
	// code has on the machine stack.
	src *ir.Instr
}

// isCall reports whether the instruction clobbers registers beyond its
// definitions, so values live across it may need saving.
func (in *minst) isCall() bool {
	switch in.op {
	case mCall, mCallInd, mAsm, mHCall:
		return true
	case mChan:
		return !in.clob.empty()
	}
	return false
}

// pure reports whether the instruction can be deleted when its results are
// unused: it has no side effect and cannot fault.
func (in *minst) pure() bool {
	switch in.op {
	case mMove, mLI, mUnary:
		return true
	case mALU:
		switch in.name {
		case "DIV", "MOD", "DIVS", "MODS":
			return false
		}
		return true
	}
	return false
}

// terminates reports whether control never falls through to the next
// instruction.
func (in *minst) terminates() bool {
	switch in.op {
	case mJmp, mRet, mFault:
		return true
	}
	return false
}

// branches reports whether the instruction may transfer control to sym.
func (in *minst) branches() bool { return in.op == mJmp || in.op == mJcc }

func (in *minst) String() string {
	var b strings.Builder
	switch in.op {
	case mLabel:
		return in.sym + ":"
	case mMove:
		fmt.Fprintf(&b, "mov %v, %v", in.defs[0], in.uses[0])
	case mLI:
		if in.sym != "" {
			fmt.Fprintf(&b, "LI %v, %s", in.defs[0], in.sym)
		} else {
			fmt.Fprintf(&b, "LI %v, %d", in.defs[0], in.imm)
		}
	default:
		fmt.Fprintf(&b, "op%d %s defs=%v uses=%v imm=%d sym=%s", in.op, in.name, in.defs, in.uses, in.imm, in.sym)
	}
	return b.String()
}
