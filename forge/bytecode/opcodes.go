// Package bytecode defines the Forge Machine's instruction set and the FRGP
// program container.
//
// The opcode table in this file is the single source of truth for mnemonics,
// opcode numbers, operand layouts and tick costs: the assembler, the
// disassembler, the verifier and the interpreter all read it.
//
// Every instruction is 8 bytes, little-endian:
//
//	[0] opcode u8   [1] a u8   [2] b u8   [3] c u8   [4..8] imm u32
//
// except LI, which is 16 bytes: the 8-byte header (imm zero) followed by a
// little-endian imm64 word. Fields an instruction does not use must be zero.
package bytecode

import "fmt"

// Opcode is the first byte of an encoded instruction.
type Opcode uint8

// The opcode numbers of reference/kingdom/requirements-FORGE.md §3.5.
const (
	ADD  Opcode = 0x01
	SUB  Opcode = 0x02
	MUL  Opcode = 0x03
	DIV  Opcode = 0x04
	MOD  Opcode = 0x05
	NEG  Opcode = 0x06
	DIVS Opcode = 0x07
	MODS Opcode = 0x08

	AND Opcode = 0x10
	OR  Opcode = 0x11
	XOR Opcode = 0x12
	NOT Opcode = 0x13
	SHL Opcode = 0x14
	SHR Opcode = 0x15
	SAR Opcode = 0x16

	LOAD   Opcode = 0x20
	STORE  Opcode = 0x21
	LOADW  Opcode = 0x22
	STOREW Opcode = 0x23
	PUSH   Opcode = 0x24
	POP    Opcode = 0x25
	// LOAD16S, LOAD32S, STORE16 and STORE32 are not in 05-FORGE.md: the
	// 2- and 4-byte accesses of narrow integers in one instruction
	// (docs/forge.md, "Narrow loads and stores"; docs/decisions.md,
	// "Forge speed, third step (issue 17)").
	LOAD16S Opcode = 0x26
	LOAD32S Opcode = 0x27
	STORE16 Opcode = 0x28
	STORE32 Opcode = 0x29
	// LOADWX and STOREWX are not in 05-FORGE.md either: the 8-byte access
	// of element ri of the array at rb, rb + 8·ri, in one instruction
	// (docs/forge.md, "Indexed loads and stores").
	LOADWX  Opcode = 0x2A
	STOREWX Opcode = 0x2B
	// LOAD32SX and STORE32X: the same for arrays of 4-byte integers, at
	// rb + 4·ri.
	LOAD32SX Opcode = 0x2C
	STORE32X Opcode = 0x2D
	// LOADX: the byte at rb + ri, zero-extended, as LOAD's: element ri of
	// a byte array (docs/forge.md, "Indexed loads and stores").
	LOADX Opcode = 0x2E

	JMP  Opcode = 0x30
	JZ   Opcode = 0x31
	JNZ  Opcode = 0x32
	JLT  Opcode = 0x33
	CALL Opcode = 0x34
	RET  Opcode = 0x35
	JLTS Opcode = 0x36
	// JEQ and JNE are not in 05-FORGE.md: an equality test and its branch
	// in one instruction (docs/forge.md, "Equality branches").
	JEQ Opcode = 0x37
	JNE Opcode = 0x38

	LI Opcode = 0x40

	HALT  Opcode = 0x50
	FAULT Opcode = 0x51
	NOP   Opcode = 0x52

	SEND Opcode = 0x60
	RECV Opcode = 0x61
	POLL Opcode = 0x62

	TICK   Opcode = 0x70
	BUDGET Opcode = 0x71
	// HCALL is not in 05-FORGE.md: it calls a function of the host
	// (docs/forge.md, "Host calls"; docs/decisions.md, "HCALL and nested
	// calls (issue 16)").
	HCALL Opcode = 0x72
)

// Format is the operand layout of an instruction: which of the fields a, b,
// c and imm it uses, and how its assembly operands map onto them.
type Format uint8

const (
	FmtNone     Format = iota // no operands: HALT, NOP, RET, TICK
	FmtRRR                    // rd, rs1, rs2        a=rd b=rs1 c=rs2
	FmtRR                     // rd, rs1             a=rd b=rs1
	FmtR                      // r                   a=r
	FmtMem                    // r, base, offset     a=r b=base imm=offset (signed 32-bit)
	FmtTarget                 // target              imm=code address
	FmtRTarget                // rs, target          a=rs imm=code address
	FmtRRTarget               // rs1, rs2, target    a=rs1 b=rs2 imm=code address
	FmtLI                     // rd, imm64           a=rd, then a 64-bit word
	FmtImm                    // code                imm=u32 (FAULT's code, HCALL's function)
	FmtChanRLen               // channel, r, len     c=channel a=r imm=length
	FmtChanR                  // channel, rd         c=channel a=rd
)

// Uses reports which fields an instruction of this format uses; the others
// must be zero in a canonical encoding.
func (f Format) Uses() (a, b, c, imm bool) {
	switch f {
	case FmtRRR:
		return true, true, true, false
	case FmtRR:
		return true, true, false, false
	case FmtR, FmtLI:
		return true, false, false, false
	case FmtMem, FmtRRTarget:
		return true, true, false, true
	case FmtTarget, FmtImm:
		return false, false, false, true
	case FmtRTarget:
		return true, false, false, true
	case FmtChanRLen:
		return true, false, true, true
	case FmtChanR:
		return true, false, true, false
	}
	return false, false, false, false
}

// Operands is the number of assembly operands an instruction of this format
// takes.
func (f Format) Operands() int {
	switch f {
	case FmtNone:
		return 0
	case FmtR, FmtTarget, FmtImm:
		return 1
	case FmtRR, FmtRTarget, FmtLI, FmtChanR:
		return 2
	}
	return 3
}

// Info describes one opcode.
type Info struct {
	Name   string // assembly mnemonic
	Op     Opcode
	Format Format
	// Cost is the ticks charged when the instruction executes; for SEND
	// and RECV, which also pay for the bytes they move, it is the cost of
	// an empty message (see CostMoving), and for HCALL the base cost, to
	// which the host adds what the call costs it (see Variable).
	Cost uint64
	// Branch is true for instructions after which execution may continue
	// somewhere other than the next instruction (jumps, calls, returns), or
	// stop (HALT, FAULT), or block (RECV).
	Branch bool
}

// Size is the encoded size of the instruction in bytes.
func (i *Info) Size() int {
	if i.Format == FmtLI {
		return 16
	}
	return 8
}

// BytesPerTick is the channel traffic one tick pays for. SEND and RECV
// cost 3 ticks, as in 05-FORGE.md §2.2, plus one tick per whole
// BytesPerTick bytes they move: a message shorter than 8 bytes costs what
// the seed says, and every byte that leaves or enters a sandbox costs at
// least what storing it with STOREW does, so a run's channel traffic is
// at most BytesPerTick bytes per tick of its budget (docs/forge.md,
// "Metering"; docs/decisions.md T1).
const BytesPerTick = 8

// Moves reports whether the instruction's cost grows with the bytes it
// moves through a channel: SEND and RECV.
func (i *Info) Moves() bool { return i.Op == SEND || i.Op == RECV }

// CostMoving returns the ticks the instruction costs when it moves n bytes
// through a channel: Cost plus n/BytesPerTick for SEND and RECV, Cost for
// any other instruction. SEND moves its length (the immediate), so its
// cost is known from its encoding; RECV moves min(maxlen, the head
// message's length), known once a message is queued.
func (i *Info) CostMoving(n uint64) uint64 {
	if !i.Moves() {
		return i.Cost
	}
	return i.Cost + n/BytesPerTick
}

// EndsRun reports whether a straight-line metering run of the interpreter
// ends at the instruction (docs/forge.md, "Metering"): a Branch; SEND,
// whose cost grows with its length; and HCALL, whose cost beyond its base
// the host reports once the call has run. The instruction after one
// always starts a new run, so the budget left there is exact, and no
// superinstruction spans one.
func (i *Info) EndsRun() bool { return i.Branch || i.Op == SEND || i.Op == HCALL }

// table lists every instruction. Costs are those of 05-FORGE.md §2.2:
// 1 tick, except MUL/DIV/DIVS/MOD/MODS (2), SEND/RECV (3, plus the bytes
// they move: see BytesPerTick), CALL/RET (2), and HCALL (2, plus what
// the host reports), which is not in the seed.
var table = []Info{
	{"ADD", ADD, FmtRRR, 1, false},
	{"SUB", SUB, FmtRRR, 1, false},
	{"MUL", MUL, FmtRRR, 2, false},
	{"DIV", DIV, FmtRRR, 2, false},
	{"MOD", MOD, FmtRRR, 2, false},
	{"NEG", NEG, FmtRR, 1, false},
	{"DIVS", DIVS, FmtRRR, 2, false},
	{"MODS", MODS, FmtRRR, 2, false},
	{"AND", AND, FmtRRR, 1, false},
	{"OR", OR, FmtRRR, 1, false},
	{"XOR", XOR, FmtRRR, 1, false},
	{"NOT", NOT, FmtRR, 1, false},
	{"SHL", SHL, FmtRRR, 1, false},
	{"SHR", SHR, FmtRRR, 1, false},
	{"SAR", SAR, FmtRRR, 1, false},
	{"LOAD", LOAD, FmtMem, 1, false},
	{"STORE", STORE, FmtMem, 1, false},
	{"LOADW", LOADW, FmtMem, 1, false},
	{"STOREW", STOREW, FmtMem, 1, false},
	{"PUSH", PUSH, FmtR, 1, false},
	{"POP", POP, FmtR, 1, false},
	{"LOAD16S", LOAD16S, FmtMem, 1, false},
	{"LOAD32S", LOAD32S, FmtMem, 1, false},
	{"STORE16", STORE16, FmtMem, 1, false},
	{"STORE32", STORE32, FmtMem, 1, false},
	{"LOADWX", LOADWX, FmtRRR, 1, false},
	{"STOREWX", STOREWX, FmtRRR, 1, false},
	{"LOAD32SX", LOAD32SX, FmtRRR, 1, false},
	{"STORE32X", STORE32X, FmtRRR, 1, false},
	{"LOADX", LOADX, FmtRRR, 1, false},
	{"JMP", JMP, FmtTarget, 1, true},
	{"JZ", JZ, FmtRTarget, 1, true},
	{"JNZ", JNZ, FmtRTarget, 1, true},
	{"JLT", JLT, FmtRRTarget, 1, true},
	{"CALL", CALL, FmtTarget, 2, true},
	{"RET", RET, FmtNone, 2, true},
	{"JLTS", JLTS, FmtRRTarget, 1, true},
	{"JEQ", JEQ, FmtRRTarget, 1, true},
	{"JNE", JNE, FmtRRTarget, 1, true},
	{"LI", LI, FmtLI, 1, false},
	{"HALT", HALT, FmtNone, 1, true},
	{"FAULT", FAULT, FmtImm, 1, true},
	{"NOP", NOP, FmtNone, 1, false},
	{"SEND", SEND, FmtChanRLen, 3, false},
	{"RECV", RECV, FmtChanRLen, 3, true},
	{"POLL", POLL, FmtChanR, 1, false},
	{"TICK", TICK, FmtNone, 1, true},
	{"BUDGET", BUDGET, FmtR, 1, false},
	{"HCALL", HCALL, FmtImm, 2, false},
}

var (
	byOp   [256]*Info
	byName = map[string]*Info{}
)

func init() {
	for i := range table {
		in := &table[i]
		if byOp[in.Op] != nil {
			panic(fmt.Sprintf("bytecode: opcode 0x%02x listed twice", in.Op))
		}
		byOp[in.Op] = in
		byName[in.Name] = in
	}
}

// Lookup returns the description of op, or nil if op is not an instruction.
func Lookup(op Opcode) *Info { return byOp[op] }

// LookupName returns the description of the instruction with the given
// upper-case mnemonic, or nil.
func LookupName(name string) *Info { return byName[name] }

// Instructions returns every instruction in opcode order.
func Instructions() []Info {
	out := make([]Info, 0, len(table))
	for op := 0; op < 256; op++ {
		if byOp[op] != nil {
			out = append(out, *byOp[op])
		}
	}
	return out
}

func (op Opcode) String() string {
	if in := byOp[op]; in != nil {
		return in.Name
	}
	return fmt.Sprintf("op(0x%02x)", uint8(op))
}

// Inst is one decoded instruction. Imm holds the 32-bit immediate, or the
// 64-bit word of LI.
type Inst struct {
	Op      Opcode
	A, B, C uint8
	Imm     uint64
}

// Size is the encoded size of the instruction in bytes.
func (in Inst) Size() int {
	if in.Op == LI {
		return 16
	}
	return 8
}

// Offset returns the immediate of a memory instruction as the signed
// displacement it denotes.
func (in Inst) Offset() int64 { return int64(int32(uint32(in.Imm))) }

// Append appends the canonical encoding of in to b.
func (in Inst) Append(b []byte) []byte {
	imm32 := uint32(in.Imm)
	if in.Op == LI {
		imm32 = 0
	}
	b = append(b, byte(in.Op), in.A, in.B, in.C,
		byte(imm32), byte(imm32>>8), byte(imm32>>16), byte(imm32>>24))
	if in.Op == LI {
		v := in.Imm
		b = append(b, byte(v), byte(v>>8), byte(v>>16), byte(v>>24),
			byte(v>>32), byte(v>>40), byte(v>>48), byte(v>>56))
	}
	return b
}
