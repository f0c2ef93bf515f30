package vm

import (
	"fmt"

	"github.com/genesis-toolchain/genesis/forge/bytecode"
)

// op is the interpreter's internal opcode. Internal opcodes are dense so
// the dispatch switch compiles to a jump table; the canonical opcodes map
// onto the first ones, and superinstructions formed at load time follow.
type op uint8

const (
	opInvalid op = iota // the second word of an LI: never a valid target

	opADD
	opSUB
	opMUL
	opDIV
	opMOD
	opNEG
	opDIVS
	opMODS
	opAND
	opOR
	opXOR
	opNOT
	opSHL
	opSHR
	opSAR
	opLOAD
	opSTORE
	opLOADW
	opSTOREW
	opPUSH
	opPOP
	opLOAD16S
	opLOAD32S
	opSTORE16
	opSTORE32
	opLOADWX
	opSTOREWX
	opLOAD32SX
	opSTORE32X
	opLOADX
	opJMP
	opJZ
	opJNZ
	opJLT
	opJLTS
	opJEQ
	opJNE
	opCALL
	opRET
	opLI
	opHALT
	opFAULT
	opNOP
	opSEND
	opRECV
	opPOLL
	opTICK
	opBUDGET
	opHCALL

	opEnd        // past the last instruction: execution fell off the end of code
	opOutOfTicks // ends the scratch copy of a run that does not fit the budget

	// Superinstructions. Each replaces the op of the first instruction of a
	// canonical sequence (see fusions); the following instructions keep
	// their own slots, so a jump into the middle of a sequence runs the
	// canonical code.
	opLIADD            // LI ra, imm; ADD
	opLISUB            // LI ra, imm; SUB
	opLIJLT            // LI ra, imm; JLT
	opLIJLTS           // LI ra, imm; JLTS
	opLIJLTRET         // LI ra, imm; JLT whose target is a RET
	opLIJLTSRET        // LI ra, imm; JLTS whose target is a RET
	opLISHLSAR         // LI ra, imm; SHL; SAR: a sign extension
	opPUSHLISUBCALL    // PUSH; LI ra, imm; SUB; CALL: a recursive call saving a value
	opPOPPUSHLISUBCALL // POP; PUSH; LI ra, imm; SUB; CALL: kept for the fib benchmark (docs/bench.md)
	opADDJLT           // ADD; JLT
	opADDJMP           // ADD; JMP
	opADDADDJLT        // ADD; ADD; JLT
	opADDADDJLTS       // ADD; ADD; JLTS
	opMULADD           // MUL; ADD: an index scaled and added
	opMULMOD           // MUL; MOD: kept for the loop benchmark (docs/bench.md)
	opMULMODS          // MUL; MODS: the same, signed
	opSTOREADDJLT      // STORE; ADD; JLT, and the strided fill (see isFill)
	opLOADJZ           // LOAD; JZ
	opPOPADDRET        // POP; ADD; RET
	opADDADD           // ADD; ADD: induction variables stepped together (issue 17's suite)
	opOROR             // OR; OR: two moves (a loop's variables passed back)
	opMODADD           // MOD; ADD: a hash or checksum step
	opADDLOAD          // ADD; LOAD: a byte read through an address just computed (issue 17, fourth step)
	opLOADWLOADW       // LOADW; LOADW: two words read before they are combined
	opORJMP            // OR; JMP: a move on a loop's back edge or an if's join
	opORJLT            // OR; JLT: a move before a loop's exit test
	opSTOREWXADD       // STOREWX; ADD: an indexed store and the index stepped
	opLOADJNZ          // LOAD; JNZ: a byte flag or a string's end tested
	opADDADDADD        // ADD; ADD; ADD: three induction variables stepped together
	opSTOREWXADDJLT    // STOREWX; ADD; JLT: an array filled or updated by index
	opANDJNZ           // AND; JNZ: a bit tested
	opLOADWXLOADWX     // LOADWX; LOADWX: two elements read before they are compared or combined (issue 17, fifth step)

	numOps

	// opMask bounds the dispatch switch: the interpreter switches on
	// op&opMask and has a case for every value up to opMask, so the Go
	// compiler emits its jump table without a range check.
	opMask = 127

	// freeOps is the number of dispatch values left for new ops: the
	// values numOps..opMask, which the dispatch switch lists by hand.
	freeOps = opMask + 1 - numOps
)

// costOf is the tick cost of each internal op; a superinstruction costs
// what its first canonical instruction costs (the others are charged by
// their own slots' run values).
// The dispatch switch lists the unused values numOps..opMask by hand; these
// fail to compile when an op is added or removed, to say it needs updating.
var (
	_ [freeOps - 44]struct{}
	_ [44 - freeOps]struct{}
	// The call block tests for either early-return op with one comparison.
	_ [opLIJLTSRET - opLIJLTRET - 1]struct{}
	_ [1 - (opLIJLTSRET - opLIJLTRET)]struct{}
)

var costOf [numOps]uint8

// canonicalOf undoes fusion: the op of the first canonical instruction.
var canonicalOf [numOps]op

func init() {
	for cop, o := range fromCanonical {
		costOf[o] = uint8(bytecode.Lookup(cop).Cost)
		canonicalOf[o] = o
	}
	for _, f := range fusions {
		costOf[f.op] = costOf[f.seq[0]]
		canonicalOf[f.op] = f.seq[0]
	}
	costOf[opLIJLTRET], canonicalOf[opLIJLTRET] = costOf[opLI], opLI
	costOf[opLIJLTSRET], canonicalOf[opLIJLTSRET] = costOf[opLI], opLI
	canonicalOf[opEnd] = opEnd
	canonicalOf[opOutOfTicks] = opOutOfTicks
}

var fromCanonical = map[bytecode.Opcode]op{
	bytecode.ADD: opADD, bytecode.SUB: opSUB, bytecode.MUL: opMUL, bytecode.DIV: opDIV,
	bytecode.MOD: opMOD, bytecode.NEG: opNEG, bytecode.DIVS: opDIVS, bytecode.MODS: opMODS,
	bytecode.AND: opAND, bytecode.OR: opOR, bytecode.XOR: opXOR, bytecode.NOT: opNOT,
	bytecode.SHL: opSHL, bytecode.SHR: opSHR, bytecode.SAR: opSAR,
	bytecode.LOAD: opLOAD, bytecode.STORE: opSTORE, bytecode.LOADW: opLOADW, bytecode.STOREW: opSTOREW,
	bytecode.PUSH: opPUSH, bytecode.POP: opPOP,
	bytecode.LOAD16S: opLOAD16S, bytecode.LOAD32S: opLOAD32S, bytecode.STORE16: opSTORE16, bytecode.STORE32: opSTORE32,
	bytecode.LOADWX: opLOADWX, bytecode.STOREWX: opSTOREWX,
	bytecode.LOAD32SX: opLOAD32SX, bytecode.STORE32X: opSTORE32X,
	bytecode.LOADX: opLOADX,
	bytecode.JMP:   opJMP, bytecode.JZ: opJZ, bytecode.JNZ: opJNZ, bytecode.JLT: opJLT, bytecode.JLTS: opJLTS,
	bytecode.JEQ: opJEQ, bytecode.JNE: opJNE,
	bytecode.CALL: opCALL, bytecode.RET: opRET, bytecode.LI: opLI,
	bytecode.HALT: opHALT, bytecode.FAULT: opFAULT, bytecode.NOP: opNOP,
	bytecode.SEND: opSEND, bytecode.RECV: opRECV, bytecode.POLL: opPOLL,
	bytecode.TICK: opTICK, bytecode.BUDGET: opBUDGET, bytecode.HCALL: opHCALL,
}

// inst is one pre-decoded instruction slot; slot i holds the instruction at
// byte address 8*i. A jump or call target is the byte offset of the
// target's slot in the code array (16 × its slot index), memory offsets
// are sign-extended, and run is the metering unit (see Image).
type inst struct {
	op      op
	a, b, c uint8
	// run is the number of ticks from this instruction to the end of its
	// straight-line run: the sum of the costs of this instruction and the
	// ones after it, up to and including the next instruction that may
	// transfer control (a jump, CALL, RET, HALT, FAULT, RECV or the end of
	// code), or SEND or HCALL (bytecode.Info.EndsRun). Entering a run at slot i charges run[i] at once; a fault,
	// block or exact read of the tick counter inside the run gives back
	// what was charged for instructions that did not execute.
	run uint32
	imm uint64
}

// Image is a verified program translated for the interpreter. It is
// immutable, so any number of machines can share one.
type Image struct {
	prog      *bytecode.Program
	hash      [32]byte
	code      []inst // one slot per 8 bytes of code, plus the opEnd sentinel
	memory    []byte // the initial contents of memory: code then data
	heapStart uint64
	entry     uint32 // slot of the entry point
}

// Program returns the program the image was made from.
func (img *Image) Program() *bytecode.Program { return img.prog }

// Hash returns the sha256 of the program's canonical encoding.
func (img *Image) Hash() [32]byte { return img.hash }

// HeapStart returns the first writable address.
func (img *Image) HeapStart() uint64 { return img.heapStart }

// NewImage verifies p and translates it. It returns an error for any
// program that bytecode.Verify rejects, and for programs with unresolved
// imports, which must be linked first.
func NewImage(p *bytecode.Program) (*Image, error) {
	if err := p.Verify(); err != nil {
		return nil, err
	}
	if len(p.Imports) > 0 {
		return nil, fmt.Errorf("program imports %d symbol set(s) from other programs: link it first (forge link)", len(p.Imports))
	}
	insts, offs, err := bytecode.Insts(p.Code)
	if err != nil {
		return nil, err
	}
	n := len(p.Code) / 8
	code := make([]inst, n+1)
	code[n] = inst{op: opEnd}
	for i, in := range insts {
		slot := offs[i] / 8
		x := inst{op: fromCanonical[in.Op], a: in.A, b: in.B, c: in.C, imm: in.Imm}
		switch {
		case bytecode.IsTransfer(in.Op):
			x.imm = in.Imm * 2 // the target slot's byte offset in code: slot (Imm/8) × 16 bytes
		case bytecode.Lookup(in.Op).Format == bytecode.FmtMem:
			x.imm = uint64(in.Offset())
		}
		code[slot] = x
		if in.Op == bytecode.LI {
			code[slot+1] = inst{op: opInvalid}
		}
	}
	// Runs, computed backwards: a branch ends its run; the LI word slot
	// costs nothing and belongs to the LI's run. An HCALL, whose cost
	// beyond its base only the host knows, ends its run, so the budget
	// left after it is exact (see meter.go). A SEND, whose cost is
	// known from its length (see meter.go), also ends its run, so a run
	// holds at most one and its cost fits run's 32 bits: under 2^30 for
	// the other instructions (at most 2 ticks per 8 bytes of a code
	// section of at most 2^32 bytes) plus under 2^29+3 for the SEND.
	var next uint64
	for k := len(insts) - 1; k >= 0; k-- {
		info := bytecode.Lookup(insts[k].Op)
		if info.EndsRun() {
			next = 0
		}
		next += encodedCost(insts[k].Op, insts[k].Imm, info.Cost)
		slot := offs[k] / 8
		code[slot].run = uint32(next)
		if insts[k].Op == bytecode.LI {
			code[slot+1].run = uint32(next - info.Cost)
		}
	}
	fuse(code)
	mem := make([]byte, 0, len(p.Code)+len(p.Data))
	mem = append(append(mem, p.Code...), p.Data...)
	return &Image{
		prog:      p,
		hash:      p.Hash(),
		code:      code,
		memory:    mem,
		heapStart: p.HeapStart(),
		entry:     uint32(p.Entry / 8),
	}, nil
}

// fusions lists the superinstructions, longest first where one sequence
// extends another. They are chosen from the instruction pairs and triples
// a corpus executes (the benchmarks, the conformance suite and ordinary
// programs: go run ./bench/paircount), keeping those that pay across it,
// not on one benchmark; docs/bench.md, "Fusions chosen from corpora", has
// the figures behind each.
// Every instruction of a sequence but the last is a non-branch, so a
// sequence never spans two runs and run metering stays exact.
var fusions = []struct {
	op  op
	seq []op
}{
	{opPOPPUSHLISUBCALL, []op{opPOP, opPUSH, opLI, opSUB, opCALL}},
	{opPUSHLISUBCALL, []op{opPUSH, opLI, opSUB, opCALL}},
	{opLISHLSAR, []op{opLI, opSHL, opSAR}},
	{opLIADD, []op{opLI, opADD}},
	{opLISUB, []op{opLI, opSUB}},
	{opLIJLT, []op{opLI, opJLT}},
	{opLIJLTS, []op{opLI, opJLTS}},
	{opADDADDJLT, []op{opADD, opADD, opJLT}},
	{opADDADDJLTS, []op{opADD, opADD, opJLTS}},
	{opADDADDADD, []op{opADD, opADD, opADD}},
	{opADDADD, []op{opADD, opADD}},
	{opADDJLT, []op{opADD, opJLT}},
	{opADDJMP, []op{opADD, opJMP}},
	{opADDLOAD, []op{opADD, opLOAD}},
	{opMULADD, []op{opMUL, opADD}},
	{opMULMOD, []op{opMUL, opMOD}},
	{opMULMODS, []op{opMUL, opMODS}},
	{opMODADD, []op{opMOD, opADD}},
	{opOROR, []op{opOR, opOR}},
	{opSTOREADDJLT, []op{opSTORE, opADD, opJLT}},
	{opLOADJZ, []op{opLOAD, opJZ}},
	{opLOADJNZ, []op{opLOAD, opJNZ}},
	{opLOADWLOADW, []op{opLOADW, opLOADW}},
	{opORJMP, []op{opOR, opJMP}},
	{opORJLT, []op{opOR, opJLT}},
	{opANDJNZ, []op{opAND, opJNZ}},
	{opLOADWXLOADWX, []op{opLOADWX, opLOADWX}},
	{opSTOREWXADDJLT, []op{opSTOREWX, opADD, opJLT}},
	{opSTOREWXADD, []op{opSTOREWX, opADD}},
	{opPOPADDRET, []op{opPOP, opADD, opRET}},
}

// Superinstructions returns the canonical instruction sequences the
// interpreter fuses, for tests and documentation.
func Superinstructions() [][]bytecode.Opcode {
	toCanonical := map[op]bytecode.Opcode{}
	for c, o := range fromCanonical {
		toCanonical[o] = c
	}
	out := make([][]bytecode.Opcode, len(fusions))
	for i, f := range fusions {
		for _, o := range f.seq {
			out[i] = append(out[i], toCanonical[o])
		}
	}
	return out
}

// fuse forms superinstructions. A fused slot executes its canonical
// sequence exactly: same results, same faults at the same pc, same ticks
// (the run costs are those of the canonical instructions). Slots are
// visited in order and only the visited slot changes, so the slots a
// pattern looks ahead at still hold canonical ops.
func fuse(code []inst) {
	for i := range code {
	patterns:
		for _, f := range fusions {
			at := i
			for _, want := range f.seq {
				if at >= len(code) || code[at].op != want {
					continue patterns
				}
				at++
				if want == opLI {
					at++
				}
			}
			code[i].op = f.op
			break
		}
	}
	// A conditional branch to a RET (an early return) continues into the
	// RET in the same dispatch. Fusion leaves RET slots alone, so the
	// target's op is still canonical. A STORE; ADD; JLT that jumps back
	// to itself stepping its address is a strided fill, iterated in one
	// dispatch (isFill).
	for i := range code {
		if code[i].op == opLIJLT && code[code[i+2].imm/16].op == opRET {
			code[i].op = opLIJLTRET
		}
		if code[i].op == opLIJLTS && code[code[i+2].imm/16].op == opRET {
			code[i].op = opLIJLTSRET
		}
		if code[i].op == opSTOREADDJLT && isFill(code, i) {
			code[i].c = fillMark
		}
	}
}

// fillMark, in the c field of a STORE;ADD;JLT slot (a STORE does not use
// c), marks a strided fill: the fill shares the fused form's op rather
// than taking a dispatch value of its own.
const fillMark = 1

// isFill reports whether the STORE; ADD; JLT at slot i is a strided fill
// the interpreter may iterate in one dispatch: the JLT jumps back to the
// STORE, and the ADD steps the STORE's address register p by a register
// that, like the stored value and the JLT's bound, is not p. Then only p
// changes from one iteration to the next.
func isFill(code []inst, i int) bool {
	st, add, jlt := code[i], code[i+1], code[i+2]
	p := st.b
	return jlt.imm/16 == uint64(i) &&
		add.a == p && add.b == p && jlt.a == p &&
		st.a != p && add.c != p && jlt.b != p
}
