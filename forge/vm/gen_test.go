package vm_test

// Program construction for the differential tests: a builder of
// instructions whose jumps name instruction indexes, assembled by
// forge/asm once the program is complete (the generator fixes targets
// after it emits the jumps, and clamps random ones), a random
// program generator (property test), and a decoder from arbitrary bytes to
// valid programs (fuzzing).

import (
	"math"
	"math/rand/v2"
	"strconv"

	"github.com/genesis-toolchain/genesis/diag"
	"github.com/genesis-toolchain/genesis/forge/asm"
	bc "github.com/genesis-toolchain/genesis/forge/bytecode"
	"github.com/genesis-toolchain/genesis/forge/vm"
)

// fix says how an operand is resolved once every instruction's address and
// the heap start are known.
type fix uint8

const (
	fixNone   fix = iota
	fixTarget     // jump/call target: Imm = address of instruction #ref
	fixCode       // LI word: address of instruction #ref plus delta
	fixHeap       // LI word: heap start plus delta
	fixMemEnd     // LI word: memory quota plus delta
)

type genInst struct {
	in    bc.Inst
	fix   fix
	ref   int
	delta int64
}

// builder accumulates instructions; labels are instruction indexes.
type builder struct {
	insts []genInst
}

func (b *builder) here() int { return len(b.insts) }

func (b *builder) op(op bc.Opcode, a, bb, c uint8, imm uint64) int {
	b.insts = append(b.insts, genInst{in: bc.Inst{Op: op, A: a, B: bb, C: c, Imm: imm}})
	return len(b.insts) - 1
}

func (b *builder) rrr(op bc.Opcode, rd, rs1, rs2 uint8) { b.op(op, rd, rs1, rs2, 0) }
func (b *builder) li(rd uint8, v uint64)                { b.op(bc.LI, rd, 0, 0, v) }
func (b *builder) mem(op bc.Opcode, r, base uint8, off int32) {
	b.op(op, r, base, 0, uint64(uint32(off)))
}

// jump emits a transfer to instruction #target (which may not exist yet).
func (b *builder) jump(op bc.Opcode, a, bb uint8, target int) int {
	i := b.op(op, a, bb, 0, 0)
	b.insts[i].fix, b.insts[i].ref = fixTarget, target
	return i
}

// liFix emits an LI whose word is resolved at layout.
func (b *builder) liFix(rd uint8, f fix, ref int, delta int64) {
	i := b.op(bc.LI, rd, 0, 0, 0)
	b.insts[i].fix, b.insts[i].ref, b.insts[i].delta = f, ref, delta
}

// addr returns the address instruction #i will have.
func (b *builder) addr(i int) uint64 {
	var n uint64
	for _, g := range b.insts[:i] {
		n += uint64(g.in.Size())
	}
	return n
}

// program assembles the instructions with forge/asm: the label of every
// instruction a jump or an LI refers to is defined before it, the jumps
// are resolved by the Builder, and the LI words that depend on the heap
// start or the memory quota (which the Builder does not know) are
// computed here. Targets out of range are clamped to the last
// instruction.
func (b *builder) program(data []byte, memory uint64) *bc.Program {
	addr := make([]uint64, len(b.insts))
	var n uint64
	for i, g := range b.insts {
		addr[i] = n
		n += uint64(g.in.Size())
	}
	clamp := func(ref int) int { return min(max(ref, 0), len(b.insts)-1) }
	labelled := make([]bool, len(b.insts))
	for _, g := range b.insts {
		if g.fix == fixTarget || g.fix == fixCode {
			labelled[clamp(g.ref)] = true
		}
	}
	label := func(i int) string { return "i" + strconv.Itoa(i) }
	heap := (n + uint64(len(data)) + 7) &^ 7
	a := asm.New("gen")
	for i, g := range b.insts {
		if labelled[i] {
			a.Label(label(i), diag.Pos{})
		}
		in := g.in
		switch g.fix {
		case fixTarget:
			a.InstRef(in, label(clamp(g.ref)), diag.Pos{})
			continue
		case fixCode:
			if g.delta == 0 {
				a.InstRef(in, label(clamp(g.ref)), diag.Pos{})
				continue
			}
			in.Imm = addr[clamp(g.ref)] + uint64(g.delta)
		case fixHeap:
			in.Imm = heap + uint64(g.delta)
		case fixMemEnd:
			in.Imm = memory + uint64(g.delta)
		}
		a.Inst(in)
	}
	if len(data) > 0 {
		a.Bytes(data)
	}
	p, diags := a.Program()
	if diags.HasErrors() {
		panic("the generated program does not assemble: " + diags.Error())
	}
	return p
}

// testCase is a program with its configuration and its input: messages
// queued before the first Run, and messages delivered one each time the
// machine blocks.
type testCase struct {
	prog   *bc.Program
	cfg    vm.Config
	input  []delivery
	resume []delivery
	// enters are the host's nested calls: one each time the machine
	// blocks, before any resume message (see differential).
	enters []enterCall
}

// enterCall is a nested call: Machine.Enter(entry, ret, args...).
type enterCall struct {
	entry, ret uint64
	args       []uint64
}

type delivery struct {
	ch   uint8
	data []byte
}

// Values worth putting in registers: edges of every arithmetic rule.
var interesting = []uint64{
	0, 1, 2, 3, 7, 8, 63, 64, 65, 127, 128, 255, 256,
	math.MaxUint64, math.MaxUint64 - 1, 1 << 63, 1<<63 - 1, 1<<63 + 1,
	math.MaxUint32, 1 << 32, 0x8000_0000, 0x0123_4567_89ab_cdef,
	uint64(1<<64 - 7), uint64(1<<64 - 64),
}

// The generator's register sets: data registers for random computation,
// loop registers that only counted loops touch, so loops mostly end.
var (
	dataRegs = []uint8{0, 1, 2, 3, 4, 255}
	loopRegs = []uint8{5, 6, 7}
)

type gen struct {
	r *rand.Rand
	b builder
	// nfuncs functions are emitted after the main body. Calls emitted
	// before their callee exists are listed in pending, with the callee's
	// number, and resolved at the end.
	nfuncs  int
	pending []pendingCall
}

type pendingCall struct{ inst, fn int }

func (g *gen) n(k int) int       { return g.r.IntN(k) }
func (g *gen) chance(p int) bool { return g.r.IntN(100) < p }
func (g *gen) reg() uint8        { return dataRegs[g.n(len(dataRegs))] }

func (g *gen) value() uint64 {
	switch g.n(4) {
	case 0:
		return g.r.Uint64()
	case 1:
		return uint64(g.n(20)) - 10
	default:
		return interesting[g.n(len(interesting))]
	}
}

// addr loads into rb an address for a memory operation: mostly in the
// heap, sometimes in code or data (readable, not writable), near or past
// the end of memory, or anywhere.
func (g *gen) addr(rb uint8) {
	switch k := g.n(20); {
	case k < 15:
		g.b.liFix(rb, fixHeap, 0, int64(16+g.n(64)))
	case k < 16:
		g.b.liFix(rb, fixCode, 0, int64(g.n(32)))
	case k < 18:
		g.b.liFix(rb, fixMemEnd, 0, -int64(g.n(24)))
	case k < 19:
		g.b.liFix(rb, fixMemEnd, 0, int64(g.n(4)))
	default:
		g.b.li(rb, g.value())
	}
}

func (g *gen) offset() int32 {
	switch g.n(40) {
	case 0:
		return int32(g.r.Uint32())
	case 1:
		return math.MinInt32
	default:
		return int32(g.n(33)) - 16
	}
}

var (
	aluOps = []bc.Opcode{bc.ADD, bc.SUB, bc.MUL, bc.DIV, bc.MOD, bc.DIVS, bc.MODS,
		bc.AND, bc.OR, bc.XOR, bc.SHL, bc.SHR, bc.SAR}
	memOps  = []bc.Opcode{bc.LOAD, bc.STORE, bc.LOADW, bc.STOREW, bc.LOAD16S, bc.LOAD32S, bc.STORE16, bc.STORE32}
	condOps = []bc.Opcode{bc.JZ, bc.JNZ, bc.JLT, bc.JLTS, bc.JEQ, bc.JNE}
)

// simple emits one straight-line instruction (or a short group) that does
// not transfer control.
func (g *gen) simple() {
	b := &g.b
	switch k := g.n(42); {
	case k < 12:
		b.rrr(aluOps[g.n(len(aluOps))], g.reg(), g.reg(), g.reg())
	case k < 14:
		b.rrr([]bc.Opcode{bc.NEG, bc.NOT}[g.n(2)], g.reg(), g.reg(), 0)
	case k < 19:
		b.li(g.reg(), g.value())
	case k < 22: // LI + ADD, fused
		r := g.reg()
		b.li(r, g.value())
		b.rrr(bc.ADD, g.reg(), g.reg(), r)
	case k < 28:
		rb := g.reg()
		g.addr(rb)
		if ri := g.reg(); ri != rb && g.n(4) == 0 {
			// An indexed access: element -3..3 of the array at rb.
			b.li(ri, uint64(g.n(7))-3)
			b.rrr([]bc.Opcode{bc.LOADWX, bc.STOREWX, bc.LOAD32SX, bc.STORE32X, bc.LOADX}[g.n(5)], g.reg(), rb, ri)
			break
		}
		b.mem(memOps[g.n(len(memOps))], g.reg(), rb, g.offset())
	case k < 30:
		b.op(bc.PUSH, g.reg(), 0, 0, 0)
	case k < 31:
		b.op(bc.POP, g.reg(), 0, 0, 0)
	case k < 32: // a balanced pair
		b.op(bc.PUSH, g.reg(), 0, 0, 0)
		g.simple()
		b.op(bc.POP, g.reg(), 0, 0, 0)
	case k < 34:
		b.op(bc.BUDGET, g.reg(), 0, 0, 0)
	case k < 35:
		b.op(bc.NOP, 0, 0, 0, 0)
	case k < 37:
		g.send()
	case k < 38:
		b.op(bc.POLL, g.reg(), 0, g.channel(2), 0)
	case k < 39:
		b.rrr(bc.DIV+bc.Opcode(g.n(2)), g.reg(), g.reg(), 0) // DIV or MOD by r0, sometimes zero
	case k < 41: // a host function (fakeHost), sometimes with small operands
		if g.chance(50) {
			b.li(1, uint64(g.n(300)))
		}
		b.op(bc.HCALL, 0, 0, 0, uint64(g.n(7)))
	default:
		b.rrr(bc.SHL+bc.Opcode(g.n(3)), g.reg(), g.reg(), g.reg())
	}
}

// channel returns want most of the time, and otherwise any channel
// number, valid or not.
func (g *gen) channel(want uint8) uint8 {
	if g.chance(85) {
		return want
	}
	return []uint8{0, 1, 2, 3, 4, 8, 9, 15, 16, 200}[g.n(10)]
}

func (g *gen) send() {
	rb := g.reg()
	g.addr(rb)
	g.b.op(bc.SEND, rb, 0, g.channel(0), g.length(12))
}

func (g *gen) recv() {
	rb := g.reg()
	g.addr(rb)
	g.b.op(bc.RECV, rb, 0, g.channel(2), g.length(10))
}

// length is a SEND length or RECV maxlen: mostly below short, which costs
// the fixed 3 ticks or one more, sometimes long enough to pay several
// ticks for its bytes, now and then far longer than memory (a SEND that
// must fault before moving anything, usually OUT_OF_TICKS).
func (g *gen) length(short int) uint64 {
	switch k := g.n(20); {
	case k < 14:
		return uint64(g.n(short))
	case k < 19:
		return uint64(g.n(120))
	default:
		return uint64(g.r.Uint32())
	}
}

// block emits a piece of the main body.
func (g *gen) block(depth int) {
	b := &g.b
	switch k := g.n(100); {
	case k < 45:
		g.simple()
	case k < 55 && depth < 2: // counted loop
		g.loop(depth)
	case k < 62: // forward conditional branch over a few instructions
		skip := b.jump(condOps[g.n(len(condOps))], g.reg(), g.reg(), -1)
		if b.insts[skip].in.Op == bc.JZ || b.insts[skip].in.Op == bc.JNZ {
			b.insts[skip].in.B = 0
		}
		for i := g.n(3); i >= 0; i-- {
			g.simple()
		}
		b.insts[skip].ref = b.here()
	case k < 65: // a branch anywhere, backwards too
		op := condOps[g.n(len(condOps))]
		rs2 := g.reg()
		if op == bc.JZ || op == bc.JNZ {
			rs2 = 0
		}
		b.jump(op, g.reg(), rs2, g.n(b.here()+4))
	case k < 73 && g.nfuncs > 0:
		i := b.jump(bc.CALL, 0, 0, 0)
		g.pending = append(g.pending, pendingCall{i, g.n(g.nfuncs)})
	case k < 77:
		g.recv()
	case k < 80:
		b.op(bc.TICK, 0, 0, 0, 0)
	case k < 81:
		if g.chance(20) {
			g.earlyReturn()
		} else {
			g.superinstruction()
		}
	case k < 82: // ADD + JMP, fused: a short jump forward
		b.rrr(bc.ADD, g.reg(), g.reg(), g.reg())
		b.jump(bc.JMP, 0, 0, b.here()+2)
		g.simple()
	case k < 84: // return to a chosen address: valid or not
		r := g.reg()
		switch g.n(4) {
		case 0:
			b.liFix(r, fixCode, b.here()+3, 0) // just after the RET
		case 1:
			b.liFix(r, fixCode, g.n(b.here()+1), int64(g.n(3))*4)
		case 2:
			b.li(r, g.value())
		case 3:
			b.liFix(r, fixCode, b.here(), 8) // the word of this LI
		}
		b.op(bc.PUSH, r, 0, 0, 0)
		b.op(bc.RET, 0, 0, 0, 0)
	case k < 85:
		b.op(bc.RET, 0, 0, 0, 0)
	case k < 86:
		b.op(bc.FAULT, 0, 0, 0, uint64(g.r.Uint32()))
	case k < 87:
		b.op(bc.HALT, 0, 0, 0, 0)
	case k < 88: // push until the stack overflows
		top := b.here()
		b.op(bc.PUSH, g.reg(), 0, 0, 0)
		b.jump(bc.JMP, 0, 0, top)
	case k < 90:
		g.fill()
	default:
		g.simple()
	}
}

// loop emits a counted loop in one of the shapes the interpreter fuses:
// LI+ADD for the increment, ADD+JLT or LI+JLT(S) for the back edge.
func (g *gen) loop(depth int) {
	b := &g.b
	i, lim := loopRegs[depth], loopRegs[2] // lim also holds the step
	b.li(i, 0)
	top := b.here()
	for k := g.n(4); k >= 0; k-- {
		g.block(depth + 1)
	}
	count := uint64(1 + g.n(6))
	switch g.n(4) {
	case 0: // LI lim, 1 ; ADD i, i, lim ; LI lim, n ; JLT i, lim, top
		b.li(lim, 1)
		b.rrr(bc.ADD, i, i, lim)
		b.li(lim, count)
		b.jump(bc.JLT, i, lim, top)
	case 1: // the same with JLTS
		b.li(lim, 1)
		b.rrr(bc.ADD, i, i, lim)
		b.li(lim, count)
		b.jump(bc.JLTS, i, lim, top)
	case 2: // LI lim, n ; LI r255, 1 ; ADD i, i, r255 ; JLT i, lim, top
		b.li(lim, count)
		b.li(255, 1)
		b.rrr(bc.ADD, i, i, 255)
		b.jump(bc.JLT, i, lim, top)
	default: // counting down from n: LI lim, -1 ; ADD i, i, lim ; JNZ i, top
		b.insts[top-1].in.Imm = count
		b.li(lim, math.MaxUint64)
		b.rrr(bc.ADD, i, i, lim)
		b.jump(bc.JNZ, i, 0, top)
	}
}

// fill emits a strided fill loop, STORE; ADD; JLT back to the STORE,
// which the interpreter iterates in one dispatch when the ADD steps the
// address register p and nothing else in the loop is p. Sometimes the
// step or the bound is p, so it is not a fill; the bound and the start
// are sometimes past the end of memory (a fault in the middle of the
// loop), and a zero step loops until the budget ends.
func (g *gen) fill() {
	b := &g.b
	regs := g.r.Perm(len(dataRegs))
	p, step, bound, v := dataRegs[regs[0]], dataRegs[regs[1]], dataRegs[regs[2]], g.reg()
	if g.chance(10) {
		step = p
	} else if g.chance(10) {
		bound = p
	}
	b.li(step, uint64(g.n(9)))
	switch g.n(4) {
	case 0:
		b.liFix(bound, fixMemEnd, 0, int64(g.n(8)))
	default:
		b.liFix(bound, fixHeap, 0, int64(16+g.n(256)))
	}
	g.addr(p)
	top := b.here()
	b.mem(bc.STORE, v, p, g.offset())
	b.rrr(bc.ADD, p, p, step)
	b.jump(bc.JLT, p, bound, top)
}

// superinstruction emits one of the sequences the interpreter fuses, with
// random operands: jumps go a little forward, calls to a generated
// function, memory operands mostly in range.
func (g *gen) superinstruction() {
	b := &g.b
	seqs := vm.Superinstructions()
	seq := seqs[g.n(len(seqs))]
	// The base (and index) registers of the memory accesses are set up
	// before the sequence, so that its instructions stay adjacent; an
	// instruction of the sequence may still overwrite one.
	type base struct{ rb, ri uint8 }
	bases := make([]base, len(seq))
	for k, op := range seq {
		switch op {
		case bc.LOAD, bc.STORE, bc.LOADW, bc.STOREW:
			bases[k].rb = g.reg()
			g.addr(bases[k].rb)
		case bc.LOADWX, bc.STOREWX, bc.LOADX:
			bases[k] = base{g.reg(), g.reg()}
			g.addr(bases[k].rb)
			if bases[k].ri != bases[k].rb {
				b.li(bases[k].ri, uint64(g.n(7))-3) // element -3..3 of the array at rb
			}
		}
	}
	for k, op := range seq {
		switch op {
		case bc.LI:
			b.li(g.reg(), g.value())
		case bc.LOAD, bc.STORE, bc.LOADW, bc.STOREW:
			b.mem(op, g.reg(), bases[k].rb, g.offset())
		case bc.LOADWX, bc.STOREWX, bc.LOADX:
			b.rrr(op, g.reg(), bases[k].rb, bases[k].ri)
		case bc.JZ, bc.JNZ:
			b.jump(op, g.reg(), 0, b.here()+1+g.n(3))
		case bc.JLT, bc.JLTS, bc.JEQ, bc.JNE:
			b.jump(op, g.reg(), g.reg(), b.here()+1+g.n(3))
		case bc.JMP:
			b.jump(op, 0, 0, b.here()+1+g.n(3))
		case bc.CALL:
			if g.nfuncs == 0 {
				b.jump(op, 0, 0, b.here()+1)
				continue
			}
			i := b.jump(bc.CALL, 0, 0, 0)
			g.pending = append(g.pending, pendingCall{i, g.n(g.nfuncs)})
		case bc.PUSH, bc.POP:
			b.op(op, g.reg(), 0, 0, 0)
		case bc.RET:
			b.op(op, 0, 0, 0, 0)
		default:
			b.rrr(op, g.reg(), g.reg(), g.reg())
		}
	}
	for i := g.n(3); i > 0; i-- {
		g.simple()
	}
}

// earlyReturn emits LI; JLT or LI; JLTS over a few instructions to a
// RET: the shapes the interpreter fuses with the RET (the leaf case of a
// recursion).
func (g *gen) earlyReturn() {
	b := &g.b
	r := g.reg()
	b.li(r, g.value())
	cmp := bc.JLT
	if g.n(2) == 0 {
		cmp = bc.JLTS
	}
	j := b.jump(cmp, g.reg(), r, -1)
	for i := g.n(3); i > 0; i-- {
		g.simple()
	}
	b.insts[j].ref = b.here()
	b.op(bc.RET, 0, 0, 0, 0)
}

// function emits a function body ending in RET. Functions may call the
// ones emitted after them, and themselves (recursion ends on overflow or
// on the budget).
func (g *gen) function() int {
	b := &g.b
	entry := b.here()
	if g.chance(40) {
		// A base case first: the shape a call runs without a dispatch
		// (the interpreter's guard).
		g.earlyReturn()
	}
	for k := g.n(5); k >= 0; k-- {
		if g.chance(15) {
			g.earlyReturn()
			continue
		}
		if g.chance(10) {
			i := b.jump(bc.CALL, 0, 0, 0)
			g.pending = append(g.pending, pendingCall{i, g.n(g.nfuncs)})
			continue
		}
		g.simple()
	}
	b.op(bc.RET, 0, 0, 0, 0)
	return entry
}

// generate builds a random test case.
func generate(r *rand.Rand) testCase {
	g := &gen{r: r, nfuncs: r.IntN(3)}
	if g.chance(80) { // registers start at zero: mostly give them values
		for _, d := range dataRegs {
			g.b.li(d, g.value()|1)
		}
	}
	for k := 3 + g.n(25); k > 0; k-- {
		g.block(0)
	}
	halt := -1
	if g.chance(90) {
		halt = g.b.op(bc.HALT, 0, 0, 0, 0) // otherwise: run off the end of code
	}
	funcs := make([]int, g.nfuncs)
	for f := range funcs {
		funcs[f] = g.function()
	}
	for _, c := range g.pending {
		g.b.insts[c.inst].ref = funcs[c.fn]
	}

	data := make([]byte, g.n(20))
	for i := range data {
		data[i] = byte(r.Uint32())
	}
	stack := []uint64{0, 8, 16, 24, 64, 256, 256, 512}[g.n(8)]
	code := uint64(0)
	for _, gi := range g.b.insts {
		code += uint64(gi.in.Size())
	}
	heap := (code + uint64(len(data)) + 7) &^ 7
	mem := heap + stack + uint64(g.n(300))
	if g.chance(2) {
		mem = heap + stack - 1 - uint64(g.n(8)) // too small: OUT_OF_MEMORY at start
	}
	tc := testCase{
		prog: g.b.program(data, mem),
		cfg:  vm.Config{Memory: mem, Stack: stack, Trace: g.chance(50)},
	}
	if g.chance(10) { // start somewhere else than address 0
		tc.prog.Entry = g.b.addr(g.n(len(g.b.insts)))
	}
	// Nested calls of the functions, returning to the HALT as a host
	// does, now and then to any address, valid or not.
	for k := g.n(3); k > 0 && len(funcs) > 0; k-- {
		e := enterCall{entry: g.b.addr(funcs[g.n(len(funcs))])}
		switch {
		case halt >= 0 && g.chance(80):
			e.ret = g.b.addr(halt)
		case g.chance(50):
			e.ret = g.b.addr(g.n(len(g.b.insts)))
		default:
			e.ret = g.value()
		}
		if g.chance(5) {
			e.entry += 8
		}
		for a := g.n(4); a > 0; a-- {
			e.args = append(e.args, g.value())
		}
		tc.enters = append(tc.enters, e)
	}
	if g.chance(85) { // else HCALL is PERMISSION_DENIED
		tc.cfg.Host = fakeHost{}
	}
	if g.chance(15) { // an output quota a few messages exhaust
		tc.cfg.Output = uint64(1 + g.n(40))
	}
	switch g.n(10) {
	case 0:
		tc.cfg.Grant = 0xFFFF
	case 1:
		tc.cfg.Grant = 1<<0 | 1<<2 | 1<<3
	}
	for k := g.n(4); k > 0; k-- {
		tc.input = append(tc.input, delivery{2 + uint8(g.n(4)/3), randBytes(r, g.n([]int{12, 12, 100}[g.n(3)]))})
	}
	for k := g.n(3); k > 0; k-- {
		tc.resume = append(tc.resume, delivery{2, randBytes(r, g.n([]int{6, 6, 60}[g.n(3)]))})
	}
	return tc
}

func randBytes(r *rand.Rand, n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte('a' + r.IntN(26))
	}
	return b
}

// decodeFuzz turns arbitrary bytes into a valid test case, deterministically:
// a few bytes of configuration, then four bytes per instruction (opcode,
// two register or channel selectors, an immediate selector), a byte that
// when not zero adds a nested call (two more: its return address and
// argument), then the data and the rest as input on channel 2. Every
// opcode of the table is reachable, HCALL with a fakeHost or none;
// registers come from a small set so instructions interact; jump targets
// are instruction indexes; addresses are near the heap, code or memory
// end.
func decodeFuzz(data []byte) testCase {
	take := func() byte {
		if len(data) == 0 {
			return 0
		}
		c := data[0]
		data = data[1:]
		return c
	}
	ops := bc.Instructions()
	regs := [8]uint8{0, 1, 2, 3, 4, 5, 6, 255}
	budget := uint64(take())<<2 | uint64(take())>>6 // 0..1023
	sb := take()
	stack := uint64(sb%8) * 8
	output := uint64(0) // no quota, or one of up to 16 bytes
	if sb >= 128 {
		output = uint64(sb>>3&15) + 1
	}
	eb := take()
	extra := uint64(eb) * 2
	grant := uint16(0)
	if g := take(); g&1 != 0 {
		grant = uint16(g) << 1
	}
	n := 1 + int(take()%48)
	var b builder
	for i := 0; i < n; i++ {
		o, x, y, z := take(), take(), take(), take()
		info := ops[int(o)%len(ops)]
		ra, rb, rc := regs[x&7], regs[x>>3&7], regs[y&7]
		switch info.Format {
		case bc.FmtNone:
			b.op(info.Op, 0, 0, 0, 0)
		case bc.FmtRRR:
			b.rrr(info.Op, ra, rb, rc)
		case bc.FmtRR:
			b.rrr(info.Op, ra, rb, 0)
		case bc.FmtR:
			b.op(info.Op, ra, 0, 0, 0)
		case bc.FmtMem:
			b.mem(info.Op, ra, rb, int32(int8(z)))
		case bc.FmtTarget:
			b.jump(info.Op, 0, 0, int(z)%n)
		case bc.FmtRTarget:
			b.jump(info.Op, ra, 0, int(z)%n)
		case bc.FmtRRTarget:
			b.jump(info.Op, ra, rb, int(z)%n)
		case bc.FmtLI:
			switch y >> 6 {
			case 0:
				b.li(ra, interesting[int(z)%len(interesting)])
			case 1:
				b.liFix(ra, fixHeap, 0, int64(int8(z)))
			case 2:
				b.liFix(ra, fixMemEnd, 0, int64(int8(z)))
			default:
				b.liFix(ra, fixCode, int(z)%n, int64(y&7))
			}
		case bc.FmtImm:
			b.op(info.Op, 0, 0, 0, uint64(z))
		case bc.FmtChanRLen: // lengths below 16, or up to 8 times more (a few ticks for the bytes)
			length := uint64(z % 16)
			if z >= 128 {
				length = uint64(z-128) * 8
			}
			b.op(info.Op, ra, 0, y%10, length)
		case bc.FmtChanR:
			b.op(info.Op, ra, 0, y%10, 0)
		}
	}
	code := uint64(0)
	for _, gi := range b.insts {
		code += uint64(gi.in.Size())
	}
	// A nested call the host makes when the program blocks: a function
	// at any instruction, returning to any instruction.
	var enters []enterCall
	if e := take(); e != 0 {
		enters = append(enters, enterCall{entry: b.addr(int(e) % n), ret: b.addr(int(take()) % n),
			args: []uint64{interesting[int(take())%len(interesting)]}})
	}
	dlen := int(take() % 16)
	d := make([]byte, min(dlen, len(data)))
	copy(d, data)
	data = data[len(d):]
	heap := (code + uint64(len(d)) + 7) &^ 7
	mem := heap + stack + extra
	tc := testCase{
		prog: b.program(d, mem),
		cfg:  vm.Config{Ticks: budget, Memory: mem, Stack: stack, Grant: grant, Output: output, Trace: true},
	}
	tc.enters = enters
	if eb&1 == 0 { // else HCALL is PERMISSION_DENIED
		tc.cfg.Host = fakeHost{}
	}
	// The rest is input: messages of the lengths the next byte says.
	for len(data) > 0 && len(tc.input) < 8 {
		k := min(int(take()%64), len(data))
		tc.input = append(tc.input, delivery{2, data[:k]})
		data = data[k:]
	}
	return tc
}
