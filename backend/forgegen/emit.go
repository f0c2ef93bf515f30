package forgegen

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/genesis-toolchain/genesis/diag"
	"github.com/genesis-toolchain/genesis/forge/asm"
	"github.com/genesis-toolchain/genesis/forge/bytecode"
)

// An emitter receives the final code of a function, or of the program's
// own routines: asmWriter writes it as Forge assembly (--emit asm), a
// builder assembles it in memory, and a tee does both (tests compare the
// two). The text and the program are the same program: assembling the
// text gives the builder's program, byte for byte (TestTextIsProgram).
type emitter interface {
	label(name string)
	inst(in *minst)
	comment(s string) // text only
	blank()           // text only: a blank line between routines
	data(d dataDef)
}

// dataDef is one data object of the module: its alignment, label and
// bytes.
type dataDef struct {
	name  string
	align uint64
	bytes []byte
}

// asmWriter accumulates assembly text. Instructions are written either
// with ins, a format, or, on the hot path of writeInst, operand by operand
// (op, then reg, int and sym, then end), which formats nothing through fmt.
type asmWriter struct {
	b        []byte
	operands int // of the instruction being written
}

func (w *asmWriter) line(s string) { w.b = append(append(w.b, s...), '\n') }

func (w *asmWriter) label(name string) { w.line(quoteName(name) + ":") }

func (w *asmWriter) ins(format string, args ...any) { w.line("    " + fmt.Sprintf(format, args...)) }

func (w *asmWriter) comment(s string) { w.line("; " + s) }

func (w *asmWriter) blank() { w.line("") }

func (w *asmWriter) inst(in *minst) { writeInst(w, in) }

func (w *asmWriter) data(d dataDef) {
	if d.align > 1 {
		w.ins(".align %d", d.align)
	}
	w.label(d.name)
	if len(d.bytes) > 0 {
		w.ins(".ascii %s", quoteString(d.bytes))
	}
}

// builder is an emitter that assembles in memory.
type builder struct{ b *asm.Builder }

func (e builder) label(name string) { e.b.Label(name, diag.Pos{}) }
func (e builder) comment(string)    {}
func (e builder) blank()            {}
func (e builder) inst(in *minst)    { buildInst(e.b, in) }

func (e builder) data(d dataDef) {
	if d.align > 1 {
		e.b.Align(d.align, diag.Pos{})
	}
	e.b.DataLabel(d.name, diag.Pos{})
	if len(d.bytes) > 0 {
		e.b.Bytes(d.bytes)
	}
}

// tee is an emitter that writes the text and builds the program.
type tee struct {
	w *asmWriter
	b builder
}

func (e tee) label(name string) { e.w.label(name); e.b.label(name) }
func (e tee) comment(s string)  { e.w.comment(s) }
func (e tee) blank()            { e.w.blank() }
func (e tee) inst(in *minst)    { e.w.inst(in); e.b.inst(in) }
func (e tee) data(d dataDef)    { e.w.data(d); e.b.data(d) }

func (w *asmWriter) String() string { return string(w.b) }

// op starts an instruction line.
func (w *asmWriter) op(mnemonic string) {
	w.b = append(append(w.b, "    "...), mnemonic...)
	w.operands = 0
}

func (w *asmWriter) sep() {
	if w.operands == 0 {
		w.b = append(w.b, ' ')
	} else {
		w.b = append(w.b, ", "...)
	}
	w.operands++
}

func (w *asmWriter) reg(r reg) {
	w.sep()
	if r.virtual() { // only in debugging output: allocation maps them all
		w.b = append(w.b, r.String()...)
		return
	}
	w.b = strconv.AppendInt(append(w.b, 'r'), int64(r), 10)
}

func (w *asmWriter) int(v int64) { w.sep(); w.b = strconv.AppendInt(w.b, v, 10) }

func (w *asmWriter) sym(name string) { w.sep(); w.b = append(w.b, quoteName(name)...) }

// end ends an instruction line.
func (w *asmWriter) end() { w.b = append(w.b, '\n') }

// finish rewrites the allocated code onto machine registers, adds the saves
// around calls and the epilogues, cleans up jumps and writes the
// function's code to w.
func (l *fnLower) finish(a *allocation, w emitter) {
	phys := func(r reg) reg {
		if r.virtual() {
			return a.assign[r-firstVirtual]
		}
		return r
	}
	mapRegs := func(rs []reg) []reg {
		out := make([]reg, len(rs))
		for i, r := range rs {
			out[i] = phys(r)
		}
		return out
	}
	// Single-definition LIs can be redone after a call instead of saved.
	defs := make([]int, len(a.assign))
	remat := make([]*minst, len(a.assign))
	for _, in := range a.code {
		for _, d := range in.defs {
			if d.virtual() {
				defs[d-firstVirtual]++
				if in.op == mLI {
					remat[d-firstVirtual] = in
				}
			}
		}
	}

	// The values live across each call (strictly inside one of their
	// segments), in the order of the virtual registers, found from the
	// segments rather than by testing every value at every call.
	var callAt []int32
	for i, in := range a.code {
		if in.isCall() {
			callAt = append(callAt, int32(2*i))
		}
	}
	across := make([][]int, len(callAt))
	if len(callAt) > 0 {
		for v, r := range a.assign {
			if r < 0 {
				continue
			}
			for _, sg := range a.vsegs[v] {
				k, _ := slices.BinarySearch(callAt, sg.s+1)
				for ; k < len(callAt) && callAt[k] < sg.e; k++ {
					if n := len(across[k]); n == 0 || across[k][n-1] != v {
						across[k] = append(across[k], v)
					}
				}
			}
		}
	}
	call := 0

	var out []*minst
	add := func(in *minst) { out = append(out, in) }
	for _, in := range a.code {
		p := &minst{}
		*p = *in
		p.defs, p.uses = mapRegs(in.defs), mapRegs(in.uses)
		if !in.isCall() {
			switch in.op {
			case mEntry:
				continue
			case mRet:
				if l.frameSize > 0 {
					add(&minst{op: mLI, defs: []reg{rScratch0}, imm: l.frameSize})
					add(&minst{op: mALU, name: "ADD", defs: []reg{rFrame}, uses: []reg{rFrame, rScratch0}})
				}
			}
			add(p)
			continue
		}
		// Values live across the call in registers it may change.
		var saved []reg
		var redo []*minst
		live := across[call]
		call++
		for _, v := range live {
			r := a.assign[v]
			if !in.clob.has(r) {
				continue
			}
			if defs[v] == 1 && remat[v] != nil {
				redo = append(redo, &minst{op: mLI, defs: []reg{r}, imm: remat[v].imm, sym: remat[v].sym})
			} else {
				saved = append(saved, r)
			}
		}
		for _, r := range saved {
			add(&minst{op: mPush, uses: []reg{r}})
		}
		switch in.op {
		case mCall, mHCall, mChan:
			add(p)
		case mCallInd:
			add(&minst{op: mMove, defs: []reg{rScratch0}, uses: []reg{p.uses[0]}})
			add(&minst{op: mCall, sym: p.sym, src: p.src})
		case mAsm:
			for _, r := range in.reserved {
				add(&minst{op: mPush, uses: []reg{r}})
			}
			nres := len(in.resIn)
			for k, r := range in.resIn {
				add(&minst{op: mMove, defs: []reg{r}, uses: []reg{p.uses[len(p.uses)-nres+k]}})
			}
			add(&minst{op: mAsm, text: in.text, src: p.src})
			nout := len(in.resOut)
			for k, r := range in.resOut {
				add(&minst{op: mMove, defs: []reg{p.defs[len(p.defs)-nout+k]}, uses: []reg{r}})
			}
			for k := len(in.reserved) - 1; k >= 0; k-- {
				add(&minst{op: mPop, defs: []reg{in.reserved[k]}})
			}
		}
		for k := len(saved) - 1; k >= 0; k-- {
			add(&minst{op: mPop, defs: []reg{saved[k]}})
		}
		for _, r := range redo {
			add(r)
		}
	}
	out = peephole(out, l.f.Name)
	l.stack = l.stackUse(out)

	w.label(l.f.Name)
	for _, in := range out {
		w.inst(in)
	}
}

// buildInst assembles one instruction into b: the instruction writeInst
// writes, as fasm would assemble it.
func buildInst(b *asm.Builder, in *minst) {
	r := func(x reg) uint8 {
		if x.virtual() || x < 0 {
			b.Errorf(diag.Pos{}, codeInternal, "internal error: %s reaches the program", x)
		}
		return uint8(x)
	}
	op := func() bytecode.Opcode {
		info := bytecode.LookupName(in.name)
		if info == nil {
			b.Errorf(diag.Pos{}, codeInternal, "internal error: unknown instruction %q", in.name)
			return bytecode.NOP
		}
		return info.Op
	}
	switch in.op {
	case mLabel:
		b.Label(in.sym, diag.Pos{})
	case mMove:
		u := r(in.uses[0])
		b.Inst(bytecode.Inst{Op: bytecode.OR, A: r(in.defs[0]), B: u, C: u})
	case mLI:
		if in.sym != "" {
			b.InstRef(bytecode.Inst{Op: bytecode.LI, A: r(in.defs[0])}, in.sym, diag.Pos{})
		} else {
			b.Inst(bytecode.Inst{Op: bytecode.LI, A: r(in.defs[0]), Imm: uint64(in.imm)})
		}
	case mALU:
		b.Inst(bytecode.Inst{Op: op(), A: r(in.defs[0]), B: r(in.uses[0]), C: r(in.uses[1])})
	case mUnary:
		b.Inst(bytecode.Inst{Op: op(), A: r(in.defs[0]), B: r(in.uses[0])})
	case mLoad:
		if len(in.uses) == 2 { // LOADWX rd, base, index
			b.Inst(bytecode.Inst{Op: op(), A: r(in.defs[0]), B: r(in.uses[0]), C: r(in.uses[1])})
			break
		}
		b.Inst(bytecode.Inst{Op: op(), A: r(in.defs[0]), B: r(in.uses[0]), Imm: uint64(uint32(in.imm))})
	case mStore:
		if len(in.uses) == 3 { // STOREWX rs, base, index
			b.Inst(bytecode.Inst{Op: op(), A: r(in.uses[0]), B: r(in.uses[1]), C: r(in.uses[2])})
			break
		}
		b.Inst(bytecode.Inst{Op: op(), A: r(in.uses[0]), B: r(in.uses[1]), Imm: uint64(uint32(in.imm))})
	case mJmp:
		b.InstRef(bytecode.Inst{Op: bytecode.JMP}, in.sym, diag.Pos{})
	case mJcc:
		j := bytecode.Inst{Op: op(), A: r(in.uses[0])}
		if len(in.uses) > 1 {
			j.B = r(in.uses[1])
		}
		b.InstRef(j, in.sym, diag.Pos{})
	case mCall:
		b.InstRef(bytecode.Inst{Op: bytecode.CALL}, in.sym, diag.Pos{})
	case mRet:
		b.Inst(bytecode.Inst{Op: bytecode.RET})
	case mHalt:
		b.Inst(bytecode.Inst{Op: bytecode.HALT})
	case mFault:
		b.Inst(bytecode.Inst{Op: bytecode.FAULT, Imm: uint64(uint32(in.imm))})
	case mPush:
		b.Inst(bytecode.Inst{Op: bytecode.PUSH, A: r(in.uses[0])})
	case mPop:
		b.Inst(bytecode.Inst{Op: bytecode.POP, A: r(in.defs[0])})
	case mHCall:
		b.Inst(bytecode.Inst{Op: bytecode.HCALL, Imm: uint64(uint32(in.imm))})
	case mChan:
		b.Inst(bytecode.Inst{Op: op(), A: r(in.uses[0]), C: in.ch, Imm: uint64(uint32(in.imm))})
	case mAsm:
		// Checked by lowerAsm: what is wrong here shows as an internal
		// error when the program is assembled.
		b.Source("asm", []byte(in.text))
	}
}

func writeInst(w *asmWriter, in *minst) {
	switch in.op {
	case mLabel:
		w.label(in.sym)
		return
	case mMove:
		w.op("OR")
		w.reg(in.defs[0])
		w.reg(in.uses[0])
		w.reg(in.uses[0])
	case mLI:
		w.op("LI")
		w.reg(in.defs[0])
		if in.sym != "" {
			w.sym(in.sym)
		} else {
			w.int(in.imm)
		}
	case mALU:
		w.op(in.name)
		w.reg(in.defs[0])
		w.reg(in.uses[0])
		w.reg(in.uses[1])
	case mUnary:
		w.op(in.name)
		w.reg(in.defs[0])
		w.reg(in.uses[0])
	case mLoad:
		w.op(in.name)
		w.reg(in.defs[0])
		w.reg(in.uses[0])
		if len(in.uses) == 2 { // LOADWX rd, base, index
			w.reg(in.uses[1])
			break
		}
		w.int(in.imm)
	case mStore:
		w.op(in.name)
		w.reg(in.uses[0])
		w.reg(in.uses[1])
		if len(in.uses) == 3 { // STOREWX rs, base, index
			w.reg(in.uses[2])
			break
		}
		w.int(in.imm)
	case mJmp:
		w.op("JMP")
		w.sym(in.sym)
	case mJcc:
		w.op(in.name)
		for _, u := range in.uses {
			w.reg(u)
		}
		w.sym(in.sym)
	case mCall:
		w.op("CALL")
		w.sym(in.sym)
	case mRet:
		w.op("RET")
	case mHalt:
		w.op("HALT")
	case mFault:
		w.op("FAULT")
		w.int(in.imm)
	case mPush:
		w.op("PUSH")
		w.reg(in.uses[0])
	case mPop:
		w.op("POP")
		w.reg(in.defs[0])
	case mHCall:
		w.op("HCALL")
		w.int(in.imm)
	case mChan:
		w.op(in.name)
		w.int(int64(in.ch))
		w.reg(in.uses[0])
		w.int(in.imm)
	case mAsm:
		w.comment("asm")
		for _, line := range strings.Split(in.text, "\n") {
			w.line("    " + strings.TrimSpace(line))
		}
		w.comment("end asm")
		return
	default:
		return
	}
	w.end()
}

// maxReturnTail bounds the straight-line instructions before a RET that a
// jump to them is replaced by.
const maxReturnTail = 2

// returnTail returns the length of the tail at j, RET included, when it is
// at most maxReturnTail simple instructions then a RET; else 0.
func returnTail(code []*minst, j int) int {
	for k := j; k < len(code) && k <= j+maxReturnTail; k++ {
		switch code[k].op {
		case mRet:
			return k - j + 1
		case mMove, mLI, mALU, mUnary:
		default:
			return 0
		}
	}
	return 0
}

// maxStepAndTest bounds the instructions before the test that
// stepAndTest copies.
const maxStepAndTest = 2

// stepAndTest reports whether code from j is at most maxStepAndTest
// moves, LIs and ALU operations that cannot fault, then a conditional
// jump, then a JMP or a label: it returns the instructions up to the
// conditional jump included, and the label control reaches when that
// jump is not taken; 0 otherwise.
func stepAndTest(code []*minst, j int) (int, string) {
	for k := j; k < len(code) && k <= j+maxStepAndTest; k++ {
		switch code[k].op {
		case mMove, mLI, mUnary:
			continue
		case mALU:
			switch code[k].name {
			case "DIV", "MOD", "DIVS", "MODS":
				return 0, ""
			}
			continue
		case mJcc:
			if k == j || k+1 >= len(code) {
				return 0, "" // a bare test: the rotation above
			}
			if f := code[k+1]; f.op == mJmp || f.op == mLabel {
				return k - j + 1, f.sym
			}
		}
		return 0, ""
	}
	return 0, ""
}

// invertJcc maps each conditional jump that has an exact inverse to it.
var invertJcc = map[string]string{"JZ": "JNZ", "JNZ": "JZ", "JEQ": "JNE", "JNE": "JEQ"}

// peephole removes moves onto themselves, jumps to the next instruction,
// unreachable instructions and unused local labels, threads jumps to
// jumps, and turns "JZ x, L1; JMP L2; L1:" into "JNZ x, L2" (JEQ and JNE
// likewise).
func peephole(code []*minst, fn string) []*minst {
	out := code[:0]
	for _, in := range code {
		if in.op == mMove && in.defs[0] == in.uses[0] {
			continue
		}
		out = append(out, in)
	}
	code = out
	rotations := 0 // bounded: duplicated tests could otherwise chase each other
	tails := false
	for changed := true; changed || !tails; {
		if !changed {
			tails = true
		}
		changed = false
		// Where each label leads: the first instruction after it.
		next := map[string]int{}
		for i, in := range code {
			if in.op == mLabel {
				j := i
				for j < len(code) && code[j].op == mLabel {
					j++
				}
				next[in.sym] = j
			}
		}
		for i := 0; i < len(code); i++ {
			in := code[i]
			if in.op == mJmp {
				j, ok := next[in.sym]
				// A jump to a return is the return.
				if ok && j < len(code) && code[j].op == mRet {
					code[i] = &minst{op: mRet}
					changed = true
					continue
				}
				// A jump to a short tail that returns (a result move, an
				// epilogue) is a copy of the tail. Only in the second
				// round, once loops are rotated and skips inverted (which
				// look for "Jcc; JMP").
				if ok && tails && j != i+1 {
					if n := returnTail(code, j); n > 0 {
						tail := make([]*minst, n)
						for k := range tail {
							c := *code[j+k]
							tail[k] = &c
						}
						code = slices.Insert(slices.Delete(code, i, i+1), i, tail...)
						changed = true
						break // positions moved: recompute next
					}
				}
				// A jump to a loop test ("Jcc body; JMP exit") is the test:
				// the back edge of a loop then costs no JMP (loop rotation).
				if ok && rotations < 64 && j+1 < len(code) && j != i+1 && code[j].op == mJcc && code[j+1].op == mJmp &&
					code[j].sym != in.sym && code[j+1].sym != in.sym {
					test, exit := *code[j], *code[j+1]
					code = slices.Insert(slices.Delete(code, i, i+1), i, &test, &exit)
					rotations++
					changed = true
					break // positions moved: recompute next
				}
				// A jump to a short step and test ("ADD i, i, one; JNE
				// i, n, head", where the arms of a loop's if join) is a
				// copy of them and a jump to what follows the test: the
				// arm that jumped to the join then goes straight back to
				// the loop head (docs/decisions.md, "Optimizer, fourth
				// step (issue 17)").
				if ok && rotations < 64 && j != i+1 {
					if n, after := stepAndTest(code, j); n > 0 && code[j+n-1].sym != in.sym && after != in.sym {
						cp := make([]*minst, 0, n+1)
						for k := 0; k < n; k++ {
							c := *code[j+k]
							cp = append(cp, &c)
						}
						cp = append(cp, &minst{op: mJmp, sym: after, src: in.src})
						code = slices.Insert(slices.Delete(code, i, i+1), i, cp...)
						rotations++
						changed = true
						break // positions moved: recompute next
					}
				}
			}
			if !in.branches() {
				continue
			}
			for hops := 0; hops < 8; hops++ {
				j, ok := next[in.sym]
				if !ok || j >= len(code) || code[j].op != mJmp || code[j].sym == in.sym {
					break
				}
				in.sym = code[j].sym
				changed = true
			}
		}
		// Jumps to the labels right after them; inverted skips.
		labelsAfter := func(i int, sym string) bool {
			for j := i + 1; j < len(code) && code[j].op == mLabel; j++ {
				if code[j].sym == sym {
					return true
				}
			}
			return false
		}
		for i := 0; i < len(code); i++ {
			in := code[i]
			if in.branches() && labelsAfter(i, in.sym) {
				code = append(code[:i], code[i+1:]...)
				i--
				changed = true
				continue
			}
			if inv, ok := invertJcc[in.name]; ok && in.op == mJcc && i+1 < len(code) &&
				code[i+1].op == mJmp && labelsAfter(i+1, in.sym) {
				code[i] = &minst{op: mJcc, name: inv, uses: in.uses, sym: code[i+1].sym}
				code = append(code[:i+1], code[i+2:]...)
				changed = true
			}
		}
		// Unreachable code and unused labels.
		used := map[string]bool{fn: true}
		for _, in := range code {
			if in.branches() {
				used[in.sym] = true
			}
		}
		out := code[:0]
		dead := false
		for _, in := range code {
			if in.op == mLabel {
				if !used[in.sym] {
					changed = true
					continue
				}
				dead = false
			}
			if dead {
				changed = true
				continue
			}
			out = append(out, in)
			if in.terminates() {
				dead = true
			}
		}
		code = out
	}
	return code
}
