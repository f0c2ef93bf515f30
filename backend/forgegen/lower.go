package forgegen

import (
	"fmt"
	"math"
	"strconv"

	"github.com/genesis-toolchain/genesis/diag"
	"github.com/genesis-toolchain/genesis/ir"
)

// maxFrameAlign is the largest slot alignment the backend honours: frames
// are multiples of it and the shadow stack top is aligned to it.
const maxFrameAlign = 16

// maxInlineCopy is the largest copy expanded into straight-line loads and
// stores; larger copies run a word loop.
const maxInlineCopy = 128

// fnLower lowers one IR function to machine-level code with virtual
// registers (docs/backend-forge.md, "Lowering").
type fnLower struct {
	c    *compiler
	f    *ir.Func
	code []*minst

	nextV     reg
	frameLI   *minst // the prologue's LI of the frame size, if the function has a frame
	vals      map[*ir.Value]reg
	vars      map[string]reg
	slots     map[string]int64
	frameSize int64
	fused     map[*ir.Value]*ir.Instr // comparisons evaluated by the branch that uses them
	uses      map[*ir.Value][]*ir.Instr
	zext      map[*ir.Value]bool        // byte loads left zero-extended (zeroExtendedLoads)
	indexed   map[*ir.Value]indexedAddr // addresses read and written by LOADWX, STOREWX, LOAD32SX and STORE32X (indexedAddresses)
	folded    map[*ir.Value]bool        // values not computed: an indexed address, or a scaled index only such addresses use
	lowOnly   map[*ir.Value]bool        // narrow results left unnormalized: every use reads only their low bits (lowBitsOnly)
	ivAcc     map[*ir.Instr]ivAccess    // loads and stores of dropped pointer parameters, indexed from their loop's leader (planLoop)
	sunk      map[*ir.Instr]bool        // steps of loop leaders, lowered only right before the first instruction of their region that needs them (lowerPending)
	hoist     *constHoist               // the outermost loop being lowered's constants of the lowering itself (imm), if it hoists them
	loopDepth int                       // the loops being lowered
	targets   map[string]*target        // loop and block labels
	cold      []func()                  // regions laid out after the body
	nlabel    int
	labels    map[string]bool // the function's labels (label)
	failed    bool
	clobbered regSet     // after allocation: the registers the function may change
	src       *ir.Instr  // the IR instruction being lowered (minst.src)
	stack     *FuncStack // after emission: the function's use of the stacks

	// What lowering found, merged into the compiler once the functions
	// compiled concurrently with this one are done (compileSCC).
	diags          diag.List
	unsupported    []unsupported // what it cannot compile, reported once per cause (compiler.unsupported)
	usesFrames     bool
	usesOverflow   bool
	usedDispatches []string // type keys of the dispatches called
	out            *output  // the function's code, when it compiled
}

// target is what break and continue of one label jump to.
type target struct {
	results []reg  // the loop's or block's results
	params  []reg  // a loop's parameters
	drop    []bool // a loop's parameters kept in no register (planLoop), if any
	head    string // a loop's first instruction
	exit    string // after the loop or block
}

// yieldTarget is what a yield in a region of an if, switch or block does.
type yieldTarget struct {
	results []reg
	end     string
}

func (l *fnLower) errorf(pos diag.Pos, code, format string, args ...any) {
	if pos == (diag.Pos{}) {
		pos = l.f.Pos
	}
	if pos.File == "" {
		pos = diag.Pos{File: l.c.file}
	}
	l.failed = true
	if code == codeCodegen {
		l.unsupported = append(l.unsupported, unsupported{cause: fmt.Sprintf(format, args...), fn: l.f.Name, pos: pos})
		return
	}
	l.diags.Errorf(pos, code, "%s", fmt.Sprintf("in function @%s: ", l.f.Name)+fmt.Sprintf(format, args...))
}

// unsupported is one use of a construct the backend cannot compile.
type unsupported struct {
	cause string // what is not supported, the message
	fn    string // the function using it
	pos   diag.Pos
}

// before reports whether u is the better place to report its cause than
// v: a use with a source line before one without, then the first in
// the source, then by function name, so that the choice does not depend
// on the order functions were compiled in.
func (u unsupported) before(v unsupported) bool {
	if a, b := u.pos.File != "" && u.pos.Line > 0, v.pos.File != "" && v.pos.Line > 0; a != b {
		return a
	}
	if u.pos.File != v.pos.File {
		return u.pos.File < v.pos.File
	}
	if u.pos.Line != v.pos.Line {
		return u.pos.Line < v.pos.Line
	}
	if u.pos.Col != v.pos.Col {
		return u.pos.Col < v.pos.Col
	}
	return u.fn < v.fn
}

func (l *fnLower) newV() reg {
	r := l.nextV
	l.nextV++
	return r
}

// label returns a new label of the function. Labels are the function's
// name, a dot and a number, kept apart from every module symbol and
// reserved name (c.names, read-only while functions compile) and from
// the function's other labels; two functions' labels differ by their
// prefix, so functions can be compiled concurrently.
func (l *fnLower) label() string {
	l.nlabel++
	base := l.f.Name + "." + strconv.Itoa(l.nlabel)
	s := base
	for i := 0; l.c.names.used[s] || l.labels[s]; i++ {
		s = base + "_" + strconv.Itoa(i)
	}
	if l.labels == nil {
		l.labels = map[string]bool{}
	}
	l.labels[s] = true
	return s
}

func (l *fnLower) emit(in *minst) {
	if in.src == nil {
		in.src = l.src
	}
	l.code = append(l.code, in)
}

// emitPrologue emits the frame's allocation: rFrame moves down by the
// frame size, checked against the shadow stack's limit. The size is
// l.frameLI's immediate, which spilling may raise later. The comparison
// is signed: the shadow stack's addresses are below MaxMemory (2^32) and
// a frame is below 2^31 bytes, so a frame larger than what is left of
// a small heap makes rFrame negative rather than wrap to a huge address
// that would pass an unsigned check.
func (l *fnLower) emitPrologue() {
	l.usesFrames, l.usesOverflow = true, true
	l.frameLI = &minst{op: mLI, defs: []reg{rScratch0}, imm: l.frameSize}
	l.emit(l.frameLI)
	l.alu("SUB", rFrame, rFrame, rScratch0)
	l.emit(&minst{op: mJcc, name: "JLTS", uses: []reg{rFrame, rShadowLimit}, sym: l.c.overflow})
}

func (l *fnLower) move(d, s reg) {
	if d != s {
		l.emit(&minst{op: mMove, defs: []reg{d}, uses: []reg{s}})
	}
}

func (l *fnLower) li(d reg, v int64) { l.emit(&minst{op: mLI, defs: []reg{d}, imm: v}) }

func (l *fnLower) alu(name string, d, a, b reg) {
	l.emit(&minst{op: mALU, name: name, defs: []reg{d}, uses: []reg{a, b}})
}

func (l *fnLower) jmp(label string) { l.emit(&minst{op: mJmp, sym: label}) }

func (l *fnLower) place(label string) { l.emit(&minst{op: mLabel, sym: label}) }

// val returns the register of an IR value.
func (l *fnLower) val(v *ir.Value) reg {
	if r, ok := l.vals[v]; ok {
		return r
	}
	if in := l.fused[v]; in != nil {
		// A fused comparison used where its value is needed after all.
		r := l.newV()
		l.vals[v] = r
		if in.Op == ir.OpNot {
			l.alu("XOR", r, l.val(in.Args[0]), l.imm(1))
		} else {
			l.setcc(r, in)
		}
		return r
	}
	if !l.failed { // else an earlier error left it undefined
		l.errorf(l.f.Pos, codeInternal, "value %%%d used before it is defined", v.ID)
	}
	r := l.newV()
	l.vals[v] = r
	return r
}

// def returns a fresh register for the result v.
func (l *fnLower) def(v *ir.Value) reg {
	r := l.newV()
	l.vals[v] = r
	return r
}

// checkType reports types the backend cannot represent.
func (l *fnLower) checkType(pos diag.Pos, t ir.Type) bool {
	if t == ir.Dyn && l.c.agent == nil {
		l.errorf(pos, codeCodegen, "dynamic values (type dyn) are not supported by the Forge backend; agent languages compile through the Go backend")
		return false
	}
	return true
}

// lowerFunc lowers the function into l.code.
func (l *fnLower) lowerFunc() {
	f := l.f
	l.vals = map[*ir.Value]reg{}
	l.vars = map[string]reg{}
	l.slots = map[string]int64{}
	l.targets = map[string]*target{}
	l.fused, l.uses = fusedCompares(f)
	l.zext = zeroExtendedLoads(f, l.uses)
	l.indexed, l.folded = indexedAddresses(f, l.uses)
	l.lowOnly = lowBitsOnly(f, l.uses)
	l.ivAcc = map[*ir.Instr]ivAccess{}
	l.sunk = map[*ir.Instr]bool{}
	if len(f.Params) > maxArgs || len(f.Results) > maxArgs {
		l.errorf(f.Pos, codeCodegen, "more than %d parameters or results", maxArgs)
		return
	}
	for _, p := range f.Params {
		l.checkType(f.Pos, p.Type)
	}
	for _, t := range f.Results {
		l.checkType(f.Pos, t)
	}
	// The frame: the buffer of effects at its base, then the slots at
	// increasing offsets.
	l.frameSize = l.effectBuffer()
	for _, loc := range f.Locals {
		if loc.Kind != ir.Slot {
			continue
		}
		a := max(loc.Align, 1)
		if a > maxFrameAlign {
			l.errorf(loc.Pos, codeCodegen, "slot $%s: alignment %d is above the supported %d", loc.Name, a, maxFrameAlign)
			continue
		}
		l.frameSize = (l.frameSize + a - 1) &^ (a - 1)
		l.slots[loc.Name] = l.frameSize
		l.frameSize += loc.Size
	}
	l.frameSize = (l.frameSize + maxFrameAlign - 1) &^ (maxFrameAlign - 1)
	if l.frameSize > math.MaxInt32 {
		l.errorf(f.Pos, codeCodegen, "frame of %d bytes is too large", l.frameSize)
		return
	}

	entry := &minst{op: mEntry}
	for i := range f.Params {
		entry.defs = append(entry.defs, reg(i))
	}
	l.emit(entry)
	// The prologue comes before anything that could address the frame:
	// a parameter that is spilled is stored to it right after its move.
	if l.frameSize > 0 {
		l.emitPrologue()
	}
	for i, p := range f.Params {
		l.move(l.def(p), reg(i))
	}
	for _, loc := range f.Locals {
		if loc.Kind == ir.Var {
			if !l.checkType(loc.Pos, loc.Type) {
				continue
			}
			r := l.newV()
			l.vars[loc.Name] = r
			l.li(r, 0)
		}
	}
	if l.lowerRegion(f.Body, nil) {
		if len(f.Results) > 0 {
			l.errorf(f.Pos, codeInternal, "function body falls off its end without returning its results")
		}
		l.emit(&minst{op: mRet})
	}
	for len(l.cold) > 0 {
		c := l.cold[0]
		l.cold = l.cold[1:]
		c()
	}
}

// fusedCompares finds the conditions of ifs that the branch evaluates, so
// they are never materialized: a comparison whose only use is the
// condition, or is a `not` (or a chain of them) that is. Each such value
// maps to the comparison the branch tests, with the nots folded in (lt.u
// under a not is ge.u); a chain of nots over any other bool maps to an
// OpNot of that bool, tested with the inverted jump. It also reports the
// uses of every value.
func fusedCompares(f *ir.Func) (map[*ir.Value]*ir.Instr, map[*ir.Value][]*ir.Instr) {
	uses := map[*ir.Value][]*ir.Instr{}
	var conds []*ir.Value
	var walk func(r *ir.Region)
	walk = func(r *ir.Region) {
		for _, in := range r.Instrs {
			for i, a := range in.Args {
				uses[a] = append(uses[a], in)
				if in.Op == ir.OpIf && i == 0 {
					conds = append(conds, a)
				}
			}
			for _, sub := range in.Regions {
				walk(sub)
			}
		}
	}
	walk(f.Body)
	fused := map[*ir.Value]*ir.Instr{}
	for _, c := range conds {
		if len(uses[c]) != 1 {
			continue
		}
		chain := []*ir.Value{c}
		neg := false
		v := c
		for v.Def != nil && v.Def.Op == ir.OpNot && v.Def.Args[0].Type == ir.Bool && len(uses[v.Def.Args[0]]) == 1 {
			neg = !neg
			v = v.Def.Args[0]
			chain = append(chain, v)
		}
		var test *ir.Instr
		switch {
		case v.Def != nil && isCompare(v.Def.Op):
			test = v.Def
			if neg {
				test = &ir.Instr{Op: invertCompare[test.Op], Args: test.Args, Pos: test.Pos}
			}
		case neg:
			chain = chain[:len(chain)-1] // v itself is an ordinary bool
			test = &ir.Instr{Op: ir.OpNot, Args: []*ir.Value{v}}
		default:
			continue
		}
		for _, x := range chain {
			fused[x] = test
		}
	}
	return fused, uses
}

// invertCompare maps each comparison to its negation.
var invertCompare = map[ir.Op]ir.Op{
	ir.OpEq: ir.OpNe, ir.OpNe: ir.OpEq,
	ir.OpLtS: ir.OpGeS, ir.OpGeS: ir.OpLtS, ir.OpLtU: ir.OpGeU, ir.OpGeU: ir.OpLtU,
	ir.OpGtS: ir.OpLeS, ir.OpLeS: ir.OpGtS, ir.OpGtU: ir.OpLeU, ir.OpLeU: ir.OpGtU,
}

// isZeroConst reports whether v is an integer constant 0.
func isZeroConst(v *ir.Value) bool {
	return v.Def != nil && v.Def.Op == ir.OpConst && v.Def.Lit.Kind == ir.LitInt && v.Def.Lit.Int == 0
}

// constOf returns the value of an integer constant.
func constOf(v *ir.Value) (int64, bool) {
	if v.Def != nil && v.Def.Op == ir.OpConst && v.Def.Lit.Kind == ir.LitInt {
		return v.Def.Lit.Int, true
	}
	return 0, false
}

// zeroExtendedLoads returns the byte loads of f whose results may be
// left zero-extended instead of sign-extended, because every use reads
// only what the two forms share:
//
//   - eq, ne, lt.u, le.u, gt.u or ge.u with a constant 0 to 127 (whose
//     two forms are the same number) or with another such byte load:
//     both forms order the bytes alike, unsigned (a byte of 128 or more
//     is above 127 in both; sign-extended it is above 2^64 − 129);
//   - the value a 1-byte store writes: STORE writes the low byte;
//   - a zext, which is then the load's register itself.
//
// A load compared with another stays zero-extended only if that one does
// too: the set is the largest one closed under the rules, found by
// dropping loads with a use outside them until none is dropped. Saves
// the LI; SHL; SAR after each LOAD: lcs's `a[i − 1] == b[j − 1]`,
// strings' byte compares and copies (docs/decisions.md, "Optimizer,
// second step (issue 17)").
func zeroExtendedLoads(f *ir.Func, uses map[*ir.Value][]*ir.Instr) map[*ir.Value]bool {
	set := map[*ir.Value]bool{}
	var loads []*ir.Value // in program order, for a deterministic sweep
	ir.Walk(f.Body, func(in *ir.Instr) {
		if in.Op == ir.OpLoad && in.Type != ir.Bool && in.Type.IsInt() && in.Type.Size() == 1 && len(uses[in.Results[0]]) > 0 {
			set[in.Results[0]] = true
			loads = append(loads, in.Results[0])
		}
	})
	for changed := true; changed; {
		changed = false
		for _, v := range loads {
			if set[v] && !zeroExtendedUses(v, uses[v], set) {
				delete(set, v)
				changed = true
			}
		}
	}
	return set
}

// zeroExtendedUses reports whether every use of v is one zeroExtendedLoads
// allows, given the loads still in set.
func zeroExtendedUses(v *ir.Value, uses []*ir.Instr, set map[*ir.Value]bool) bool {
	for _, u := range uses {
		switch u.Op {
		case ir.OpStore:
			if u.Args[0] != v || u.Args[1] == v || u.Args[0].Type.Size() != 1 {
				return false
			}
			continue
		case ir.OpZext:
			continue
		case ir.OpEq, ir.OpNe, ir.OpLtU, ir.OpLeU, ir.OpGtU, ir.OpGeU:
		default:
			return false
		}
		for _, other := range u.Args {
			if other == v || set[other] {
				continue
			}
			if c, ok := constOf(other); !ok || c < 0 || c > 127 {
				return false
			}
		}
	}
	return true
}

// indexedAddr is an address base + scale·index that an indexed load or
// store computes itself.
type indexedAddr struct {
	base, index *ir.Value
	scale       int64 // 1, 4 or 8: the size of the element
}

// indexedAddresses finds the addresses of 8- and 4-byte array elements
// that LOADWX and STOREWX, LOAD32SX and STORE32X compute themselves:
// p = ptradd(base, i << 3) (or i * 8, in 64 bits; << 2 and * 4 for
// 4-byte elements) whose every use is the address of a load or store of
// an integer or pointer of that size at offset 0. It maps each such p to
// its base, i and scale; folded holds those p and the scaled indexes that
// only they use, which are then not computed at all. The address is the
// same wrapping sum either way, so the access faults exactly where the
// LOADW or LOAD32S would have; it saves the SHL and the ADD of every
// `a[i]` that is not stepped by a pointer (docs/decisions.md, "Forge
// speed, third step (issue 17)").
//
// p = ptradd(base, i) with i not a constant, whose every use is a 1-byte
// load at offset 0, is read by LOADX base, i (scale 1): the ADD is saved
// and the byte is read at the same wrapping address, so LOADX faults
// where the LOAD would have ("Forge speed, fifth step (issue 17)").
func indexedAddresses(f *ir.Func, uses map[*ir.Value][]*ir.Instr) (map[*ir.Value]indexedAddr, map[*ir.Value]bool) {
	indexed := map[*ir.Value]indexedAddr{}
	folded := map[*ir.Value]bool{}
	var scaled []*ir.Value // in program order, for a deterministic sweep
	ir.Walk(f.Body, func(in *ir.Instr) {
		if in.Op != ir.OpPtrAdd || len(in.Results) != 1 {
			return
		}
		p := in.Results[0]
		if len(uses[p]) == 0 {
			return
		}
		i, scale := scaledIndex(in.Args[1])
		if scale == 0 {
			if byteIndexed(in, uses[p]) {
				indexed[p] = indexedAddr{in.Args[0], in.Args[1], 1}
				folded[p] = true
			}
			return
		}
		// fits: an element of the scale's size; a 4-byte one an integer
		// (the load sign-extends it: the canonical form).
		fits := func(t ir.Type) bool {
			return t.Size() == scale && (scale == 8 || t.IsInt() && t != ir.Bool)
		}
		for _, u := range uses[p] {
			switch {
			case u.Op == ir.OpLoad && u.Args[0] == p && u.Int == 0 && fits(u.Type):
			case u.Op == ir.OpStore && u.Args[1] == p && u.Args[0] != p && u.Int == 0 && fits(u.Args[0].Type):
			default:
				return
			}
		}
		indexed[p] = indexedAddr{in.Args[0], i, scale}
		folded[p] = true
		scaled = append(scaled, in.Args[1])
	})
	for _, s := range scaled {
		only := true
		for _, u := range uses[s] {
			if len(u.Results) != 1 || !folded[u.Results[0]] || u.Op != ir.OpPtrAdd || u.Args[1] != s || u.Args[0] == s {
				only = false
			}
		}
		if only {
			folded[s] = true
		}
	}
	return indexed, folded
}

// byteIndexed reports whether the address p = ptradd(base, i) that in
// defines is read by LOADX: i is a 64-bit integer, neither i nor base is
// a constant (a constant, such as a global's address, folds into LOAD's
// immediate instead, which needs no register), and every use of p is a
// 1-byte load at offset 0.
func byteIndexed(in *ir.Instr, uses []*ir.Instr) bool {
	i := in.Args[1]
	if i.Type.Size() != 8 || !i.Type.IsInt() {
		return false
	}
	for _, a := range in.Args {
		if _, ok := constOf(a); ok {
			return false
		}
	}
	p := in.Results[0]
	for _, u := range uses {
		if u.Op != ir.OpLoad || u.Args[0] != p || u.Int != 0 || u.Type.Size() != 1 {
			return false
		}
	}
	return true
}

// lowBitsOnly returns the narrow integer results of add, sub, mul, shl,
// neg and trunc whose every use reads only their low n bits (n the width of
// their type), so that the normalization to the canonical sign-extended
// form (LI; SHL; SAR) after them can be left out. A use reads only the low
// n bits when it is:
//
//   - an add, sub, mul or neg of the same type, or a shl of it by another
//     value: the low n bits of the result depend only on the low n bits
//     of the operands, and the result is normalized in turn (or is itself
//     in the set);
//   - a trunc to n bits or fewer, or a zext from n bits, which normalize
//     or mask themselves;
//   - the value a store of n bits writes.
//
// A comparison, a shift right, a division, a sext, a move into a var and
// every other use need the canonical form. Saves the normalization of
// u32 and u8 arithmetic: djb2's h * 33 + c (hash), the byte sums and
// case changes of strings (docs/decisions.md, "Forge speed, third step
// (issue 17)"); and of a trunc that is only stored, `(v % 10 + 48) as u8`
// written to a byte, `x as i32` to an i32 array (docs/decisions.md,
// "Optimizer, fourth step (issue 17)").
func lowBitsOnly(f *ir.Func, uses map[*ir.Value][]*ir.Instr) map[*ir.Value]bool {
	set := map[*ir.Value]bool{}
	ir.Walk(f.Body, func(in *ir.Instr) {
		switch in.Op {
		case ir.OpAdd, ir.OpSub, ir.OpMul, ir.OpShl, ir.OpNeg, ir.OpTrunc:
		default:
			return
		}
		if len(in.Results) != 1 {
			return
		}
		v := in.Results[0]
		t := v.Type
		if !t.IsInt() || t == ir.Bool || t.Bits() >= 64 || len(uses[v]) == 0 {
			return
		}
		for _, u := range uses[v] {
			switch u.Op {
			case ir.OpAdd, ir.OpSub, ir.OpMul, ir.OpNeg:
				if len(u.Results) != 1 || u.Results[0].Type != t {
					return
				}
			case ir.OpShl:
				if u.Args[0] != v || u.Args[1] == v || u.Results[0].Type != t {
					return
				}
			case ir.OpTrunc:
				if u.Type != ir.Bool && u.Type.Bits() > t.Bits() {
					return
				}
			case ir.OpZext:
				if u.Args[0] != v {
					return
				}
			case ir.OpStore:
				if u.Args[0] != v || u.Args[1] == v {
					return
				}
			default:
				return
			}
		}
		set[v] = true
	})
	return set
}

// scaledIndex reports whether v is i << 3 or i * 8 (either order), or
// i << 2 or i * 4, in 64 bits, and returns i and the scale, 8 or 4; else
// a scale of 0.
func scaledIndex(v *ir.Value) (*ir.Value, int64) {
	d := v.Def
	if d == nil || len(d.Args) != 2 || v.Type.Size() != 8 || !v.Type.IsInt() {
		return nil, 0
	}
	switch d.Op {
	case ir.OpShl:
		if c, ok := constOf(d.Args[1]); ok && (c == 3 || c == 2) {
			return d.Args[0], 1 << c
		}
	case ir.OpMul:
		for k, a := range d.Args {
			if c, ok := constOf(a); ok && (c == 8 || c == 4) {
				return d.Args[1-k], c
			}
		}
	}
	return nil, 0
}

// shiftCount returns the register operand for a shift by b: a shift
// counts mod 64 in the IR (docs/ir.md) and in Forge's SHL, SHR and SAR
// alike, so a count b = y & m with m's low six bits set (strength's
// `i % 64`: nsieve's 1 << (j % 64)) shifts by y itself, and the AND goes
// when nothing else uses it (docs/decisions.md, "Optimizer, fourth step
// (issue 17)").
func shiftCount(b *ir.Value) *ir.Value {
	d := b.Def
	if d == nil || d.Op != ir.OpAnd || len(d.Args) != 2 || !b.Type.IsInt() {
		return b
	}
	for k, a := range d.Args {
		if m, ok := constOf(a); ok && m&63 == 63 && d.Args[1-k].Type.IsInt() {
			return d.Args[1-k]
		}
	}
	return b
}

func b2i(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

func isCompare(op ir.Op) bool { return op >= ir.OpEq && op <= ir.OpGeU }

// terminated reports whether a region ends in a terminator.
func terminated(r *ir.Region) bool {
	last := r.Last()
	return last != nil && last.Info().Flags&ir.Terminator != 0
}

// lowerRegion lowers the instructions of r and reports whether control
// falls off its end.
func (l *fnLower) lowerRegion(r *ir.Region, yt *yieldTarget) bool {
	var pending []*ir.Instr // sunk instructions not lowered yet (lowerPlan)
	for _, in := range r.Instrs {
		if l.sunk[in] {
			pending = append(pending, in)
			continue
		}
		if len(pending) > 0 {
			pending = l.lowerPending(pending, in, yt)
		}
		l.lowerInstr(in, yt)
		if in.Info().Flags&ir.Terminator != 0 {
			return false
		}
	}
	return true
}

// parallelMove assigns srcs to dsts as if all at once.
func (l *fnLower) parallelMove(dsts, srcs []reg) {
	safe := true
	for k, s := range srcs {
		for _, d := range dsts[:k] {
			if d == s {
				safe = false
			}
		}
	}
	if safe {
		for k := range dsts {
			l.move(dsts[k], srcs[k])
		}
		return
	}
	tmps := make([]reg, len(srcs))
	for k, s := range srcs {
		tmps[k] = l.newV()
		l.move(tmps[k], s)
	}
	for k := range dsts {
		l.move(dsts[k], tmps[k])
	}
}

func (l *fnLower) args(vs []*ir.Value) []reg {
	rs := make([]reg, len(vs))
	for i, v := range vs {
		rs[i] = l.val(v)
	}
	return rs
}

func (l *fnLower) lowerInstr(in *ir.Instr, yt *yieldTarget) {
	outer := l.src
	l.src = in
	defer func() { l.src = outer }()
	for _, a := range in.Args {
		if !l.checkType(in.Pos, a.Type) {
			return
		}
	}
	for _, r := range in.Results {
		if !l.checkType(in.Pos, r.Type) {
			return
		}
	}
	if in.Info().Flags&ir.Effect != 0 || in.Op == ir.OpBuiltin {
		switch {
		case l.c.agent == nil:
			// Unreachable: a module with either is an agent program.
			l.errorf(in.Pos, codeInternal, "%s outside an agent program", in.Op)
		case in.Op == ir.OpBuiltin:
			l.lowerBuiltin(in)
		default:
			l.lowerEffect(in)
		}
		return
	}
	if (isCompare(in.Op) || in.Op == ir.OpNot) && l.fused[in.Results[0]] != nil {
		return // evaluated by the branch
	}
	if len(in.Results) == 1 && l.folded[in.Results[0]] {
		return // computed by the LOADWX and STOREWX that use it
	}
	switch in.Op {
	case ir.OpConst:
		if _, ok := l.vals[in.Results[0]]; ok {
			return // hoisted out of a loop
		}
		l.li(l.def(in.Results[0]), l.constImm(in))
	case ir.OpFuncRef:
		if _, ok := l.vals[in.Results[0]]; ok {
			return
		}
		l.li(l.def(in.Results[0]), int64(l.c.funcIndex(in.Sym)))
	case ir.OpAddrOf:
		d := l.def(in.Results[0])
		if off, ok := l.slots[in.Local]; ok && in.Local != "" {
			if off == 0 {
				l.move(d, rFrame)
			} else {
				l.alu("ADD", d, rFrame, l.imm(off))
			}
		} else if in.Sym != "" {
			l.emit(&minst{op: mLI, defs: []reg{d}, sym: in.Sym})
		} else {
			l.errorf(in.Pos, codeInternal, "addr_of of an unknown local $%s", in.Local)
		}
	case ir.OpAdd, ir.OpSub, ir.OpMul, ir.OpShl:
		t := in.Results[0].Type
		d := l.def(in.Results[0])
		b := in.Args[1]
		if in.Op == ir.OpShl {
			b = shiftCount(b)
		}
		l.alu(map[ir.Op]string{ir.OpAdd: "ADD", ir.OpSub: "SUB", ir.OpMul: "MUL", ir.OpShl: "SHL"}[in.Op],
			d, l.val(in.Args[0]), l.val(b))
		if !l.lowOnly[in.Results[0]] {
			l.normalize(d, d, t)
		}
	case ir.OpDivS:
		t := in.Results[0].Type
		d := l.def(in.Results[0])
		l.alu("DIVS", d, l.val(in.Args[0]), l.val(in.Args[1]))
		l.normalize(d, d, t) // MIN / -1 of a narrow type
	case ir.OpRemS:
		l.alu("MODS", l.def(in.Results[0]), l.val(in.Args[0]), l.val(in.Args[1]))
	case ir.OpDivU, ir.OpRemU, ir.OpShrU:
		t := in.Results[0].Type
		bv := in.Args[1]
		if in.Op == ir.OpShrU {
			bv = shiftCount(bv)
		}
		a, b := l.val(in.Args[0]), l.val(bv)
		if t.Bits() < 64 {
			za := l.newV()
			l.zeroExtend(za, a, t.Bits())
			a = za
			if in.Op != ir.OpShrU {
				zb := l.newV()
				l.zeroExtend(zb, b, t.Bits())
				b = zb
			}
		}
		d := l.def(in.Results[0])
		l.alu(map[ir.Op]string{ir.OpDivU: "DIV", ir.OpRemU: "MOD", ir.OpShrU: "SHR"}[in.Op], d, a, b)
		l.normalize(d, d, t)
	case ir.OpShrS:
		l.alu("SAR", l.def(in.Results[0]), l.val(in.Args[0]), l.val(shiftCount(in.Args[1])))
	case ir.OpAnd, ir.OpOr, ir.OpXor:
		l.alu(map[ir.Op]string{ir.OpAnd: "AND", ir.OpOr: "OR", ir.OpXor: "XOR"}[in.Op],
			l.def(in.Results[0]), l.val(in.Args[0]), l.val(in.Args[1]))
	case ir.OpNeg:
		d := l.def(in.Results[0])
		l.emit(&minst{op: mUnary, name: "NEG", defs: []reg{d}, uses: []reg{l.val(in.Args[0])}})
		if !l.lowOnly[in.Results[0]] {
			l.normalize(d, d, in.Results[0].Type)
		}
	case ir.OpNot:
		d := l.def(in.Results[0])
		if in.Args[0].Type == ir.Bool {
			l.alu("XOR", d, l.val(in.Args[0]), l.imm(1))
		} else {
			l.emit(&minst{op: mUnary, name: "NOT", defs: []reg{d}, uses: []reg{l.val(in.Args[0])}})
		}
	case ir.OpEq, ir.OpNe, ir.OpLtS, ir.OpLtU, ir.OpLeS, ir.OpLeU, ir.OpGtS, ir.OpGtU, ir.OpGeS, ir.OpGeU:
		l.setcc(l.def(in.Results[0]), in)
	case ir.OpSext, ir.OpIntToPtr, ir.OpPtrToInt:
		l.move(l.def(in.Results[0]), l.val(in.Args[0]))
	case ir.OpZext:
		from := in.Args[0].Type
		d := l.def(in.Results[0])
		switch {
		case from == ir.Bool, l.zext[in.Args[0]]:
			// A bool is 0 or 1; a byte load left zero-extended is
			// already its zero extension.
			l.move(d, l.val(in.Args[0]))
		default:
			l.zeroExtend(d, l.val(in.Args[0]), from.Bits())
		}
	case ir.OpTrunc:
		d := l.def(in.Results[0])
		if in.Type == ir.Bool {
			l.alu("AND", d, l.val(in.Args[0]), l.imm(1))
		} else if l.lowOnly[in.Results[0]] {
			l.move(d, l.val(in.Args[0]))
		} else {
			l.normalize(d, l.val(in.Args[0]), in.Type)
		}
	case ir.OpPtrAdd:
		l.alu("ADD", l.def(in.Results[0]), l.val(in.Args[0]), l.val(in.Args[1]))
	case ir.OpLoad:
		if x, ok := l.ivAcc[in]; ok {
			name := map[int64]string{4: "LOAD32SX", 8: "LOADWX"}[x.scale]
			l.emit(&minst{op: mLoad, name: name, defs: []reg{l.def(in.Results[0])}, uses: []reg{x.base, l.val(x.leader)}})
			return
		}
		if x, ok := l.indexed[in.Args[0]]; ok && x.scale == 1 {
			l.loadByteIndexed(l.def(in.Results[0]), in.Type, l.val(x.base), l.val(x.index), l.zext[in.Results[0]])
			return
		}
		if x, ok := l.indexed[in.Args[0]]; ok {
			name := map[int64]string{4: "LOAD32SX", 8: "LOADWX"}[x.scale]
			l.emit(&minst{op: mLoad, name: name, defs: []reg{l.def(in.Results[0])}, uses: []reg{l.val(x.base), l.val(x.index)}})
			return
		}
		p, off := l.address(in.Args[0], in.Int, in.Type.Size())
		l.load(l.def(in.Results[0]), in.Type, p, off, l.zext[in.Results[0]])
	case ir.OpStore:
		if x, ok := l.ivAcc[in]; ok {
			name := map[int64]string{4: "STORE32X", 8: "STOREWX"}[x.scale]
			l.emit(&minst{op: mStore, name: name, uses: []reg{l.val(in.Args[0]), x.base, l.val(x.leader)}})
			return
		}
		if x, ok := l.indexed[in.Args[1]]; ok {
			name := map[int64]string{4: "STORE32X", 8: "STOREWX"}[x.scale]
			l.emit(&minst{op: mStore, name: name, uses: []reg{l.val(in.Args[0]), l.val(x.base), l.val(x.index)}})
			return
		}
		p, off := l.address(in.Args[1], in.Int, in.Args[0].Type.Size())
		l.store(l.val(in.Args[0]), in.Args[0].Type, p, off)
	case ir.OpCopy:
		l.copyMem(in)
	case ir.OpGet:
		r, ok := l.vars[in.Local]
		if !ok {
			l.errorf(in.Pos, codeInternal, "get of an unknown var $%s", in.Local)
			return
		}
		l.move(l.def(in.Results[0]), r)
	case ir.OpSet:
		r, ok := l.vars[in.Local]
		if !ok {
			l.errorf(in.Pos, codeInternal, "set of an unknown var $%s", in.Local)
			return
		}
		l.move(r, l.val(in.Args[0]))
	case ir.OpCall:
		l.call(in)
	case ir.OpCallIndirect:
		l.call(in)
	case ir.OpIf:
		l.lowerIf(in)
	case ir.OpLoop:
		t := &target{params: make([]reg, len(in.Args)), results: l.defs(in.Results), head: l.label(), exit: l.label()}
		body := in.Regions[0]
		inits := l.args(in.Args)
		plan := planLoop(in, l.uses, l.fused)
		var dsts, srcs []reg
		for i, p := range body.Params {
			if plan != nil && plan.drop[i] {
				continue
			}
			t.params[i] = l.def(p)
			dsts = append(dsts, t.params[i])
			srcs = append(srcs, inits[i])
		}
		if plan != nil {
			t.drop = plan.drop
			l.lowerPlan(plan, in, inits)
		}
		l.parallelMove(dsts, srcs)
		consts := l.hoistConstants(body)
		l.targets[in.Label] = t
		if l.loopDepth == 0 && !callsIn(body) {
			l.hoist = &constHoist{at: len(l.code), regs: consts, src: in}
		}
		l.loopDepth++
		l.place(t.head)
		if l.lowerRegion(body, nil) {
			l.errorf(in.Pos, codeInternal, "loop body falls off its end")
		}
		l.loopDepth--
		if l.loopDepth == 0 && l.hoist != nil {
			l.spliceHoisted()
		}
		l.place(t.exit)
	case ir.OpBlock:
		t := &target{results: l.defs(in.Results), exit: l.label()}
		l.targets[in.Label] = t
		l.lowerRegion(in.Regions[0], &yieldTarget{results: t.results, end: t.exit})
		l.place(t.exit)
	case ir.OpSwitch:
		l.lowerSwitch(in)
	case ir.OpYield:
		if yt == nil {
			l.errorf(in.Pos, codeInternal, "yield outside an if, switch or block region")
			return
		}
		l.parallelMove(yt.results, l.args(in.Args))
		l.jmp(yt.end)
	case ir.OpBreak:
		t := l.targets[in.Label]
		l.parallelMove(t.results, l.args(in.Args))
		l.jmp(t.exit)
	case ir.OpContinue:
		t := l.targets[in.Label]
		var dsts, srcs []reg
		for i, a := range in.Args {
			if t.drop == nil || !t.drop[i] {
				dsts = append(dsts, t.params[i])
				srcs = append(srcs, l.val(a))
			}
		}
		l.parallelMove(dsts, srcs)
		l.jmp(t.head)
	case ir.OpReturn:
		ret := &minst{op: mRet}
		for i, s := range l.args(in.Args) {
			l.move(reg(i), s)
			ret.uses = append(ret.uses, reg(i))
		}
		l.emit(ret)
	case ir.OpUnreachable:
		l.emit(&minst{op: mFault, imm: faultUnreachable})
	case ir.OpAsm:
		l.lowerAsm(in)
	default:
		l.errorf(in.Pos, codeCodegen, "operation %s is not supported by the Forge backend", in.Op)
	}
}

// maxHoisted bounds the constants hoisted in front of one loop nest, so
// that hoisting cannot push a function past the 250 registers.
const maxHoisted = 32

// hoistConstants loads the integer constants and function references of a
// loop body (nested loops included) once, before the loop: a constant then
// costs nothing per iteration. Equal constants share one register.
// Constants used only where the branch tests against zero, or folded into
// a memory offset, end up unused and are deleted with the dead code.
func (l *fnLower) hoistConstants(body *ir.Region) map[int64]reg {
	type key struct {
		fn  bool
		imm int64
	}
	regs := map[key]reg{}
	var walk func(r *ir.Region)
	walk = func(r *ir.Region) {
		for _, in := range r.Instrs {
			switch in.Op {
			case ir.OpConst, ir.OpFuncRef:
				v := in.Results[0]
				if _, done := l.vals[v]; done || (in.Op == ir.OpConst && in.Lit.Kind != ir.LitInt && v.Type != ir.Dyn) {
					break
				}
				k := key{imm: l.constImm(in)}
				if in.Op == ir.OpFuncRef {
					k = key{fn: true, imm: int64(l.c.funcIndex(in.Sym))}
				}
				if rr, ok := regs[k]; ok {
					l.vals[v] = rr
					break
				}
				if len(regs) >= maxHoisted {
					break
				}
				rr := l.def(v)
				l.li(rr, k.imm)
				regs[k] = rr
			}
			for _, sub := range in.Regions {
				walk(sub)
			}
		}
	}
	walk(body)
	ints := map[int64]reg{}
	for k, r := range regs {
		if !k.fn {
			ints[k.imm] = r
		}
	}
	return ints
}

// constImm returns the word a register holds for a constant: an
// integer's value, a dynamic value's handle.
func (l *fnLower) constImm(in *ir.Instr) int64 {
	if in.Type == ir.Dyn {
		return int64(l.c.agent.consts[in])
	}
	return in.Lit.Int
}

func (l *fnLower) defs(vs []*ir.Value) []reg {
	rs := make([]reg, len(vs))
	for i, v := range vs {
		rs[i] = l.def(v)
	}
	return rs
}

// normalize sets d to s truncated to the width of t and sign-extended: the
// canonical form of narrow integers in registers.
func (l *fnLower) normalize(d, s reg, t ir.Type) {
	n := t.Bits()
	if !t.IsInt() || n >= 64 {
		l.move(d, s)
		return
	}
	k := l.imm(int64(64 - n))
	l.alu("SHL", d, s, k)
	l.alu("SAR", d, d, k)
}

// zeroExtend sets d to the low n bits of s.
func (l *fnLower) zeroExtend(d, s reg, n int) {
	if n >= 64 {
		l.move(d, s)
		return
	}
	l.alu("AND", d, s, l.imm(int64(1)<<n-1))
}

// branch describes how to jump on a condition: jumpTrue and jumpFalse
// emit a jump to the label when the condition holds or does not hold, and
// canTrue and canFalse say which of them is one instruction.
type branch struct {
	l                 *fnLower
	op                ir.Op // a comparison, or OpInvalid for a bool register
	a, b              reg
	inv               bool // for a bool register: the condition is its negation
	canTrue, canFalse bool
}

func (l *fnLower) condition(c *ir.Value) *branch {
	in := l.fused[c]
	if in == nil {
		return &branch{l: l, a: l.val(c), canTrue: true, canFalse: true}
	}
	if in.Op == ir.OpNot {
		return &branch{l: l, a: l.val(in.Args[0]), inv: true, canTrue: true, canFalse: true}
	}
	if in.Op == ir.OpEq || in.Op == ir.OpNe {
		// x == 0 and x != 0 test x itself: JZ / JNZ.
		for k, a := range in.Args {
			if isZeroConst(a) {
				return &branch{l: l, a: l.val(in.Args[1-k]), inv: in.Op == ir.OpEq, canTrue: true, canFalse: true}
			}
		}
	}
	br := &branch{l: l, op: in.Op, a: l.val(in.Args[0]), b: l.val(in.Args[1])}
	switch in.Op {
	case ir.OpEq, ir.OpNe:
		br.canTrue, br.canFalse = true, true
	case ir.OpLtS, ir.OpLtU, ir.OpGtS, ir.OpGtU:
		br.canTrue = true
	default:
		br.canFalse = true
	}
	return br
}

// jump emits a jump to label taken when the condition equals want.
func (br *branch) jump(want bool, label string) {
	l := br.l
	jcc := func(name string, uses ...reg) {
		l.emit(&minst{op: mJcc, name: name, uses: uses, sym: label})
	}
	switch br.op {
	case ir.OpInvalid:
		if want != br.inv {
			jcc("JNZ", br.a)
		} else {
			jcc("JZ", br.a)
		}
		return
	case ir.OpEq, ir.OpNe:
		// One JEQ or JNE (docs/forge.md, "Equality branches"), where the
		// seed's ISA needed XOR; JZ.
		if want == (br.op == ir.OpEq) {
			jcc("JEQ", br.a, br.b)
		} else {
			jcc("JNE", br.a, br.b)
		}
		return
	}
	// a < b, possibly swapped, possibly negated.
	a, b, signed, neg := br.a, br.b, false, false
	switch br.op {
	case ir.OpLtS:
		signed = true
	case ir.OpLtU:
	case ir.OpGtS:
		a, b, signed = b, a, true
	case ir.OpGtU:
		a, b = b, a
	case ir.OpGeS:
		signed, neg = true, true
	case ir.OpGeU:
		neg = true
	case ir.OpLeS:
		a, b, signed, neg = b, a, true, true
	case ir.OpLeU:
		a, b, neg = b, a, true
	}
	name := "JLT"
	if signed {
		name = "JLTS"
	}
	if want != neg {
		jcc(name, a, b)
		return
	}
	skip := l.label()
	l.emit(&minst{op: mJcc, name: name, uses: []reg{a, b}, sym: skip})
	l.jmp(label)
	l.place(skip)
}

// setcc materializes the bool result of a comparison in d.
func (l *fnLower) setcc(d reg, in *ir.Instr) {
	br := &branch{l: l, op: in.Op, a: l.val(in.Args[0]), b: l.val(in.Args[1])}
	switch in.Op {
	case ir.OpEq, ir.OpNe, ir.OpLtS, ir.OpLtU, ir.OpGtS, ir.OpGtU:
		br.canTrue = true
	}
	// d is defined before the comparison reads a and b, so the allocator
	// keeps it apart from them.
	done := l.label()
	l.li(d, b2i(br.canTrue))
	br.jump(br.canTrue, done)
	l.li(d, b2i(!br.canTrue))
	l.place(done)
}

// lowerIf lays out an if so that the common shapes cost one branch:
// a region that only leaves (break, continue, return) is placed out of
// line when the condition jumps to it for free.
func (l *fnLower) lowerIf(in *ir.Instr) {
	results := l.defs(in.Results)
	then, els := in.Regions[0], in.Regions[1]
	br := l.condition(in.Args[0])
	end := l.label()
	yt := &yieldTarget{results: results, end: end}
	region := func(r *ir.Region) {
		if l.lowerRegion(r, yt) {
			l.jmp(end)
		}
	}
	coldRegion := func(r *ir.Region) string {
		lab := l.label()
		l.cold = append(l.cold, func() {
			l.place(lab)
			region(r)
		})
		return lab
	}
	switch {
	case terminated(then) && len(els.Instrs) == 0 && br.canTrue:
		br.jump(true, coldRegion(then))
	case terminated(els) && len(then.Instrs) == 0 && br.canFalse:
		br.jump(false, coldRegion(els))
	case br.canFalse:
		elseLabel := end
		if len(els.Instrs) > 0 {
			elseLabel = l.label()
		}
		br.jump(false, elseLabel)
		region(then)
		if elseLabel != end {
			l.place(elseLabel)
			region(els)
		}
	default:
		thenLabel := end
		if len(then.Instrs) > 0 {
			thenLabel = l.label()
		}
		br.jump(true, thenLabel)
		region(els)
		if thenLabel != end {
			l.place(thenLabel)
			region(then)
		}
	}
	l.place(end)
}

// lowerSwitch dispatches with a binary search over the sorted case values
// (signed order: registers hold values sign-extended), then an equality
// chain of at most linearCases values.
func (l *fnLower) lowerSwitch(in *ir.Instr) {
	const linearCases = 3
	results := l.defs(in.Results)
	x := l.val(in.Args[0])
	end := l.label()
	yt := &yieldTarget{results: results, end: end}
	type entry struct {
		v     int64
		label string
	}
	var entries []entry
	labels := make([]string, len(in.Regions)-1)
	for i, vs := range in.Cases {
		labels[i] = l.label()
		for _, v := range vs {
			entries = append(entries, entry{v, labels[i]})
		}
	}
	sortEntries(entries, func(a, b entry) bool { return a.v < b.v })
	def := l.label()
	var search func(es []entry)
	search = func(es []entry) {
		if len(es) <= linearCases {
			for _, e := range es {
				t := l.newV()
				l.li(rScratch0, e.v)
				l.alu("XOR", t, x, rScratch0)
				l.emit(&minst{op: mJcc, name: "JZ", uses: []reg{t}, sym: e.label})
			}
			l.jmp(def)
			return
		}
		mid := len(es) / 2
		left := l.label()
		k := l.newV()
		l.li(k, es[mid].v)
		l.emit(&minst{op: mJcc, name: "JLTS", uses: []reg{x, k}, sym: left})
		search(es[mid:])
		l.place(left)
		search(es[:mid])
	}
	search(entries)
	l.place(def)
	if l.lowerRegion(in.Regions[len(in.Regions)-1], yt) {
		l.jmp(end)
	}
	for i, r := range in.Regions[:len(in.Regions)-1] {
		l.place(labels[i])
		if l.lowerRegion(r, yt) {
			l.jmp(end)
		}
	}
	l.place(end)
}

func sortEntries[T any](s []T, less func(a, b T) bool) {
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && less(s[j], s[j-1]); j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
}

// memOffset returns a base register and offset for p + off + k, adding
// off to the base when off + k does not fit a signed 32-bit displacement.
func (l *fnLower) memBase(p reg, off int64, size int64) (reg, int64) {
	if off >= math.MinInt32 && off+size-1 <= math.MaxInt32 {
		return p, off
	}
	b := l.newV()
	l.li(rScratch0, off)
	l.alu("ADD", b, p, rScratch0)
	return b, 0
}

// address returns a base register and offset for the memory at p + off:
// a ptradd of a constant folds the constant into the offset (its ADD is
// then usually dead).
func (l *fnLower) address(p *ir.Value, off, size int64) (reg, int64) {
	if d := p.Def; d != nil && d.Op == ir.OpPtrAdd {
		for k, a := range d.Args {
			if c, ok := constOf(a); ok {
				o := off + c
				if (c >= 0) == (o >= off) && o >= math.MinInt32 && o <= math.MaxInt32-size+1 {
					return l.val(d.Args[1-k]), o
				}
			}
		}
	}
	return l.val(p), off
}

// load sets d to the value of type t at p + off. When zext, a byte is
// left zero-extended (zeroExtendedLoads).
//
// A 2- or 4-byte integer is read by LOAD16S or LOAD32S, which leave it
// sign-extended (the canonical form); bytes by LOAD, which zero-extends
// (docs/decisions.md, "Forge speed, third step (issue 17)").
func (l *fnLower) load(d reg, t ir.Type, p reg, off int64, zext bool) {
	size := t.Size()
	p, off = l.memBase(p, off, size)
	switch {
	case size == 8:
		l.emit(&minst{op: mLoad, name: "LOADW", defs: []reg{d}, uses: []reg{p}, imm: off})
	case t == ir.Bool:
		l.emit(&minst{op: mLoad, name: "LOAD", defs: []reg{d}, uses: []reg{p}, imm: off})
		l.emit(&minst{op: mUnary, name: "NEG", defs: []reg{d}, uses: []reg{d}})
		l.alu("SHR", d, d, l.imm(63))
	case t.IsInt() && size == 4:
		l.emit(&minst{op: mLoad, name: "LOAD32S", defs: []reg{d}, uses: []reg{p}, imm: off})
	case t.IsInt() && size == 2:
		l.emit(&minst{op: mLoad, name: "LOAD16S", defs: []reg{d}, uses: []reg{p}, imm: off})
	default:
		l.emit(&minst{op: mLoad, name: "LOAD", defs: []reg{d}, uses: []reg{p}, imm: off + size - 1})
		if size > 1 {
			l.li(rScratch0, 8)
			for k := size - 2; k >= 0; k-- {
				l.alu("SHL", d, d, rScratch0)
				l.emit(&minst{op: mLoad, name: "LOAD", defs: []reg{rScratch1}, uses: []reg{p}, imm: off + k})
				l.alu("OR", d, d, rScratch1)
			}
		}
		if !zext {
			l.normalize(d, d, t)
		}
	}
}

// loadByteIndexed reads the 1-byte value of type t at base + i into d
// with LOADX, then gives it its canonical form as load does after LOAD.
func (l *fnLower) loadByteIndexed(d reg, t ir.Type, base, i reg, zext bool) {
	l.emit(&minst{op: mLoad, name: "LOADX", defs: []reg{d}, uses: []reg{base, i}})
	switch {
	case t == ir.Bool:
		l.emit(&minst{op: mUnary, name: "NEG", defs: []reg{d}, uses: []reg{d}})
		l.alu("SHR", d, d, l.imm(63))
	case !zext:
		l.normalize(d, d, t)
	}
}

// store writes v of type t at p + off: 8, 4 and 2 bytes by STOREW,
// STORE32 and STORE16, which write the low bytes of the register.
func (l *fnLower) store(v reg, t ir.Type, p reg, off int64) {
	size := t.Size()
	p, off = l.memBase(p, off, size)
	switch size {
	case 8:
		l.emit(&minst{op: mStore, name: "STOREW", uses: []reg{v, p}, imm: off})
		return
	case 4:
		l.emit(&minst{op: mStore, name: "STORE32", uses: []reg{v, p}, imm: off})
		return
	case 2:
		l.emit(&minst{op: mStore, name: "STORE16", uses: []reg{v, p}, imm: off})
		return
	}
	l.emit(&minst{op: mStore, name: "STORE", uses: []reg{v, p}, imm: off})
	if size > 1 {
		l.li(rScratch0, 8)
		l.alu("SHR", rScratch1, v, rScratch0)
		for k := int64(1); k < size; k++ {
			if k > 1 {
				l.alu("SHR", rScratch1, rScratch1, rScratch0)
			}
			l.emit(&minst{op: mStore, name: "STORE", uses: []reg{rScratch1, p}, imm: off + k})
		}
	}
}

// loadOf and storeOf name the instructions that read and write 1, 2, 4
// or 8 bytes (a copy's loads: the sign extension does not matter, the
// store writes the low bytes).
var (
	loadOf  = map[int64]string{1: "LOAD", 2: "LOAD16S", 4: "LOAD32S", 8: "LOADW"}
	storeOf = map[int64]string{1: "STORE", 2: "STORE16", 4: "STORE32", 8: "STOREW"}
)

// copyMem lowers copy dst, src, n with memmove semantics.
func (l *fnLower) copyMem(in *ir.Instr) {
	n := in.Int
	dst, src := l.val(in.Args[0]), l.val(in.Args[1])
	if n == 0 {
		return
	}
	if n <= maxInlineCopy {
		// Everything is read into registers before anything is written.
		type piece struct {
			off, size int64
			r         reg
		}
		var ps []piece
		for off := int64(0); off < n; {
			// The widest access that fits: 8, 4, 2 or 1 bytes.
			size := int64(8)
			for size > n-off {
				size /= 2
			}
			p := piece{off, size, l.newV()}
			name := loadOf[size]
			l.emit(&minst{op: mLoad, name: name, defs: []reg{p.r}, uses: []reg{src}, imm: off})
			ps = append(ps, p)
			off += size
		}
		for _, p := range ps {
			l.emit(&minst{op: mStore, name: storeOf[p.size], uses: []reg{p.r, dst}, imm: p.off})
		}
		return
	}
	// A loop: forward when dst < src, else backward, a word at a time,
	// with the n%8 tail bytes done a byte at a time.
	words, tail := n/8, n%8
	back, done := l.label(), l.label()
	l.emit(&minst{op: mJcc, name: "JLT", uses: []reg{src, dst}, sym: back})
	l.copyLoop(dst, src, words, tail, true)
	l.jmp(done)
	l.place(back)
	l.copyLoop(dst, src, words, tail, false)
	l.place(done)
}

// copyLoop copies words 8-byte words then tail bytes, forward or backward.
func (l *fnLower) copyLoop(dst, src reg, words, tail int64, forward bool) {
	d, s, i, t, step := l.newV(), l.newV(), l.newV(), l.newV(), l.newV()
	byteCopy := func(off int64) {
		l.emit(&minst{op: mLoad, name: "LOAD", defs: []reg{t}, uses: []reg{s}, imm: off})
		l.emit(&minst{op: mStore, name: "STORE", uses: []reg{t, d}, imm: off})
	}
	head := l.label()
	if forward {
		l.move(d, dst)
		l.move(s, src)
	} else {
		l.li(rScratch0, words*8)
		l.alu("ADD", d, dst, rScratch0)
		l.alu("ADD", s, src, rScratch0)
		for k := tail - 1; k >= 0; k-- {
			byteCopy(k)
		}
	}
	l.li(i, words)
	l.li(step, 8)
	one := l.newV()
	l.li(one, 1)
	l.place(head)
	if !forward {
		l.alu("SUB", d, d, step)
		l.alu("SUB", s, s, step)
	}
	l.emit(&minst{op: mLoad, name: "LOADW", defs: []reg{t}, uses: []reg{s}, imm: 0})
	l.emit(&minst{op: mStore, name: "STOREW", uses: []reg{t, d}, imm: 0})
	if forward {
		l.alu("ADD", d, d, step)
		l.alu("ADD", s, s, step)
	}
	l.alu("SUB", i, i, one)
	l.emit(&minst{op: mJcc, name: "JNZ", uses: []reg{i}, sym: head})
	if forward {
		for k := int64(0); k < tail; k++ {
			byteCopy(k)
		}
	}
}

// call lowers call and call_indirect: arguments into r0.., the call, the
// results out of r0...
func (l *fnLower) call(in *ir.Instr) {
	args := in.Args
	c := &minst{op: mCall, sym: in.Sym}
	if in.Op == ir.OpCallIndirect {
		fn := l.val(args[0])
		args = args[1:]
		key := in.Args[0].Type.String()
		l.usedDispatches = append(l.usedDispatches, key)
		c = &minst{op: mCallInd, uses: []reg{fn}, sym: l.c.dispatches[key].label}
	}
	if len(args) > maxArgs || len(in.Results) > maxArgs {
		l.errorf(in.Pos, codeCodegen, "more than %d arguments or results", maxArgs)
		return
	}
	srcs := l.args(args)
	for i, s := range srcs {
		l.move(reg(i), s)
		c.uses = append(c.uses, reg(i))
	}
	for i := range in.Results {
		c.defs = append(c.defs, reg(i))
	}
	l.emit(c)
	for i, r := range in.Results {
		l.move(l.def(r), reg(i))
	}
}
