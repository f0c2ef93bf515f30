// Package llvm is the native backend of Genesis programs: it lowers a
// verified IR module (docs/ir.md) to LLVM IR with github.com/llir/llvm,
// and Link turns that into an executable with llc and the system C
// compiler (docs/backend-llvm.md).
//
// The program keeps the Forge Machine's semantics (docs/forge.md): its
// memory is one region with the same layout (internal/machine lays it
// out from the Forge program), of the size the executable is given at
// run time (--memory and --stack, as forge exec takes them), every load
// and store is checked against it, the machine stack and the frames are
// charged as the Forge program uses them (so recursion faults at the
// same depth), a fault prints the fault's name on standard error and
// exits with status 3, and channels 0, 1 and 2 are standard output,
// standard error and standard input. Inline asm blocks are translated
// instruction by instruction.
package llvm

import (
	"fmt"

	"github.com/genesis-toolchain/genesis/backend/forgegen"
	"github.com/genesis-toolchain/genesis/backend/internal/memlayout"
	"github.com/genesis-toolchain/genesis/diag"
	gir "github.com/genesis-toolchain/genesis/ir"
	"github.com/llir/llvm/ir"
	"github.com/llir/llvm/ir/constant"
	"github.com/llir/llvm/ir/enum"
	"github.com/llir/llvm/ir/types"
	"github.com/llir/llvm/ir/value"
)

// codeUnsupported is the diagnostic code of IR this backend cannot
// compile (the Genesis class of codegen errors, as for the Forge backend).
const codeUnsupported = "0x0802"

// Compile lowers m, which must have passed gir.Verify and have a function
// main, to the text of an LLVM module. file names the program in
// diagnostics. The text holds the program and its memory image; Link adds
// the runtime.
func Compile(m *gir.Module, file string) (string, diag.List) {
	u := NewUnit(file)
	diags := u.Add(m, file, "gen")
	if diags.HasErrors() {
		return "", diags
	}
	return u.String(), diags
}

// Unit is one LLVM module holding one or more programs, which share the
// declarations of the runtime and the machine's globals (one program runs
// per process, so they may share its memory too). Program P's entry is
// P_main, its memory image P_image and P_image_len, and its functions are
// named P.NAME.
type Unit struct {
	mod *ir.Module

	// The machine of the run, set by the runtime before the program
	// starts: the base of linear memory, its size (the quota), where the
	// machine stack's region starts (heap_end), and the shadow stack's
	// limit (set by the program's entry, which knows heap_start).
	mem, memory, heapEnd, frameLimit *ir.Global
	fault, send, recv, poll          *ir.Func
	halt, memmove                    *ir.Func
}

// NewUnit starts an empty unit; name is its source file name.
func NewUnit(name string) *Unit {
	u := &Unit{mod: ir.NewModule()}
	m := u.mod
	m.SourceFilename = name
	// The machine, defined by the runtime: linear memory is allocated
	// (zero) when the run starts, with the quota the executable is given,
	// and the image copied to its start before main runs.
	global := func(name string, t types.Type) *ir.Global {
		g := m.NewGlobal(name, t)
		g.Linkage = enum.LinkageExternal
		g.Preemption = enum.PreemptionDSOLocal
		return g
	}
	u.mem = global("gen_mem", types.NewPointer(types.I8))
	u.memory = global("gen_memory", types.I64)
	u.heapEnd = global("gen_heap_end", types.I64)
	u.frameLimit = global("gen_frame_limit", types.I64)

	// The runtime (rt/runtime.c).
	u.fault = m.NewFunc("gen_fault", types.Void, ir.NewParam("code", types.I64), ir.NewParam("user", types.I64))
	u.fault.FuncAttrs = append(u.fault.FuncAttrs, enum.FuncAttrNoReturn, enum.FuncAttrCold, enum.FuncAttrNoUnwind)
	u.halt = m.NewFunc("gen_halt", types.Void)
	u.halt.FuncAttrs = append(u.halt.FuncAttrs, enum.FuncAttrNoReturn, enum.FuncAttrNoUnwind)
	u.send = m.NewFunc("gen_send", types.Void, ir.NewParam("ch", types.I64), ir.NewParam("addr", types.I64), ir.NewParam("n", types.I64))
	u.recv = m.NewFunc("gen_recv", types.Void, ir.NewParam("ch", types.I64), ir.NewParam("addr", types.I64), ir.NewParam("n", types.I64), ir.NewParam("heap_start", types.I64))
	u.poll = m.NewFunc("gen_poll", types.I64, ir.NewParam("ch", types.I64))
	i8p := types.NewPointer(types.I8)
	u.memmove = m.NewFunc("llvm.memmove.p0i8.p0i8.i64", types.Void, ir.NewParam("", i8p), ir.NewParam("", i8p), ir.NewParam("", types.I64), ir.NewParam("", types.I1))
	return u
}

// String is the unit's LLVM assembly.
func (u *Unit) String() string { return u.mod.String() }

// Add lowers m, which must have passed gir.Verify and have a function
// main, into the unit as the program named prefix. On errors the unit
// must not be used.
func (u *Unit) Add(m *gir.Module, file, prefix string) diag.List {
	layout, diags := memlayout.Of(m, file)
	if diags.HasErrors() {
		return diags
	}
	g := &gen{Unit: u, src: m, file: file, prefix: prefix, layout: layout, funcs: map[string]*ir.Func{}, fnIndex: map[string]int64{},
		unrolled: memlayout.Unrolled(m)}
	g.module()
	return append(diags, g.diags...)
}

// gen holds the state of the lowering of one program.
type gen struct {
	*Unit
	src    *gir.Module
	file   string
	prefix string
	layout *memlayout.Layout
	diags  diag.List

	fnTable  *ir.Global // the functions func_ref names, by index - 1
	funcs    map[string]*ir.Func
	fnIndex  map[string]int64 // func_ref index of each referenced function, from 1
	unrolled map[string]bool  // functions whose calls to themselves are expanded (memlayout.Unrolled)
}

// llType is the LLVM type of an IR scalar type: integers as themselves,
// bool as i1, pointers (addresses in linear memory) and function
// references (table indices) as i64.
func llType(t gir.Type) types.Type {
	switch t.Kind() {
	case gir.KindBool:
		return types.I1
	case gir.KindI8:
		return types.I8
	case gir.KindI16:
		return types.I16
	case gir.KindI32:
		return types.I32
	}
	return types.I64
}

// resultType is the LLVM return type of a function with results rs: void,
// the one type, or a struct of them.
func resultType(rs []gir.Type) types.Type {
	switch len(rs) {
	case 0:
		return types.Void
	case 1:
		return llType(rs[0])
	}
	fields := make([]types.Type, len(rs))
	for i, t := range rs {
		fields[i] = llType(t)
	}
	return types.NewStruct(fields...)
}

// sigType is the LLVM type of functions of signature sig: the machine
// stack's free bytes and the frame pointer (stackParams), then the
// parameters.
func sigType(sig *gir.Signature) *types.FuncType {
	params := []types.Type{types.I64, types.I64}
	for _, t := range sig.Params {
		params = append(params, llType(t))
	}
	return types.NewFunc(resultType(sig.Results), params...)
}

// stackParams is the number of parameters every function has before its
// own: the Forge Machine's stack pointer on entry, as the bytes free
// below it (sp − heap_end, so that a function checks its need against it
// without reading the machine), and its frame pointer (r254), which the
// function charges its use of the stacks against.
const stackParams = 2

func i64(x int64) *constant.Int { return constant.NewInt(types.I64, x) }

// module writes the whole LLVM module: globals, the runtime's
// declarations, every function and the entry gen_main.
func (g *gen) module() {
	main := g.src.FuncMap()["main"]
	if main == nil {
		g.diags.Errorf(diag.Pos{File: g.file}, codeUnsupported, "the module has no function main, where the program starts")
		return
	}
	if len(main.Params) > 0 {
		g.diags.Errorf(main.Pos, codeUnsupported, "function main must take no parameter to run natively")
		return
	}
	for _, f := range g.src.Funcs {
		for _, t := range append(paramTypes(f), f.Results...) {
			if t.Kind() == gir.KindDyn {
				pos := f.Pos
				if pos.File == "" { // a function a frontend synthesized
					pos = diag.Pos{File: g.file}
				}
				g.diags.Errorf(pos, codeUnsupported, "dynamic values do not compile to native code (agent programs compile through --target go)")
				return
			}
		}
	}
	m := g.mod
	img := m.NewGlobalDef(g.prefix+"_image", constant.NewCharArray(append([]byte(nil), g.layout.Image...)))
	img.Immutable = true
	lenG := m.NewGlobalDef(g.prefix+"_image_len", i64(int64(len(g.layout.Image))))
	lenG.Immutable = true
	i8p := types.NewPointer(types.I8)

	// Function references, numbered in module order of the functions.
	refs := map[string]bool{}
	for _, f := range g.src.Funcs {
		gir.Walk(f.Body, func(in *gir.Instr) {
			if in.Op == gir.OpFuncRef {
				refs[in.Sym] = true
			}
		})
	}
	pure := faultOnly(g.src, func(name string) bool { return g.layout.Func(name).Frame > 0 })
	for _, f := range g.src.Funcs {
		sig := f.Type().Sig()
		params := []*ir.Param{ir.NewParam("free", types.I64), ir.NewParam("fp", types.I64)}
		for i, p := range f.Params {
			params = append(params, ir.NewParam(fmt.Sprintf("p%d", i), llType(p.Type)))
		}
		lf := m.NewFunc(g.prefix+"."+f.Name, resultType(sig.Results), params...)
		lf.Linkage = enum.LinkageInternal
		lf.FuncAttrs = append(lf.FuncAttrs, enum.FuncAttrNoUnwind)
		if reads, ok := pure[f.Name]; ok {
			// Two calls with the same stack pointers and arguments (and
			// memory) return the same or fault the same, so LLVM may
			// merge them, as it did before functions could fault on the
			// stack; it removes no call that may not return, so a
			// call that would fault still does.
			if reads {
				lf.FuncAttrs = append(lf.FuncAttrs, enum.FuncAttrReadOnly)
			} else {
				lf.FuncAttrs = append(lf.FuncAttrs, enum.FuncAttrReadNone)
			}
		}
		g.funcs[f.Name] = lf
	}
	var table []constant.Constant
	for _, f := range g.src.Funcs {
		if refs[f.Name] {
			table = append(table, constant.NewBitCast(g.funcs[f.Name], i8p))
			g.fnIndex[f.Name] = int64(len(table))
		}
	}
	if len(table) > 0 {
		g.fnTable = m.NewGlobalDef(g.prefix+"_fntab", constant.NewArray(types.NewArray(uint64(len(table)), i8p), table...))
		g.fnTable.Immutable = true
		g.fnTable.Linkage = enum.LinkageInternal
	}
	for _, f := range g.src.Funcs {
		fg := &fnGen{g: g, f: f, lf: g.funcs[f.Name]}
		fg.function()
	}

	// P_main: what the runtime's main calls, once the machine is set
	// up. It does what the Forge program's _start does: it places the
	// shadow stack of frames at the top of the heap (docs/forge.md,
	// Registers at start; backend/internal/machine), then calls main,
	// whose CALL pushes a return address.
	entry := m.NewFunc(g.prefix+"_main", types.Void)
	b := entry.NewBlock("")
	heapEnd := b.NewLoad(types.I64, g.heapEnd)
	top := b.NewAnd(heapEnd, i64(-memlayout.FrameAlign))
	limit := b.NewSub(top, i64(memlayout.FrameSize))
	hs := i64(int64(g.layout.HeapStart))
	below := b.NewICmp(enum.IPredSLT, limit, hs)
	b.NewStore(b.NewSelect(below, hs, limit), g.frameLimit)
	free := b.NewSub(b.NewLoad(types.I64, g.memory), heapEnd)
	overflow := b.NewICmp(enum.IPredULT, free, i64(8))
	fail, run := entry.NewBlock(""), entry.NewBlock("")
	b.NewCondBr(overflow, fail, run)
	fail.NewCall(g.fault, i64(memlayout.FaultStackOverflow), i64(0))
	fail.NewUnreachable()
	run.NewCall(g.funcs["main"], run.NewSub(free, i64(8)), top)
	run.NewRet(nil)
}

// faultOnly returns the functions whose only effect is to fault: they
// store nothing, run no asm and make no indirect call, and call only such
// functions. Each maps to whether it reads memory (loads, or takes a
// frame, whose check reads the shadow stack's limit: framed says which
// do; itself or in a callee).
func faultOnly(m *gir.Module, framed func(string) bool) map[string]bool {
	reads := map[string]bool{} // the candidates
	callees := map[string][]string{}
	for _, f := range m.Funcs {
		ok, loads := true, framed(f.Name)
		gir.Walk(f.Body, func(in *gir.Instr) {
			switch in.Op {
			case gir.OpStore, gir.OpCopy, gir.OpAsm, gir.OpCallIndirect:
				ok = false
			case gir.OpLoad:
				loads = true
			case gir.OpCall:
				callees[f.Name] = append(callees[f.Name], in.Sym)
			}
		})
		if ok {
			reads[f.Name] = loads
		}
	}
	// Drop the callers of non-candidates, and mark the callers of
	// candidates that read, until nothing changes.
	for changed := true; changed; {
		changed = false
		for _, f := range m.Funcs {
			r, ok := reads[f.Name]
			if !ok {
				continue
			}
			for _, g := range callees[f.Name] {
				gr, gok := reads[g]
				if !gok {
					delete(reads, f.Name)
					changed = true
					break
				}
				if gr && !r {
					reads[f.Name], r = true, true
					changed = true
				}
			}
		}
	}
	return reads
}

func paramTypes(f *gir.Func) []gir.Type {
	ts := make([]gir.Type, len(f.Params))
	for i, p := range f.Params {
		ts[i] = p.Type
	}
	return ts
}

// target is where control goes when it leaves a structured instruction
// (exit, with the values of its results) or continues a loop (header).
type target struct {
	exit     *ir.Block
	incoming [][]*ir.Incoming // per result: the values arriving at exit
	arrivals int              // the edges into exit
	header   *ir.Block
	params   []*ir.InstPhi
}

// fnGen lowers one function.
type fnGen struct {
	g  *gen
	f  *gir.Func
	lf *ir.Func

	entry, cur *ir.Block
	slots      map[string]int64
	stack      *forgegen.FuncStack    // what the Forge program's function takes from the stacks
	faults     map[[2]int64]*ir.Block // the shared block raising each fault
	machine    map[*ir.Global]value.Value
	unchecked  map[*gir.Instr]bool // the accesses of the versioned copy being emitted (version.go)
	activation
}

// machineValue is the value of one of the machine's globals, loaded once
// at the function's entry, before everything else: the runtime sets them
// before the program starts and nothing changes them, and a function
// that needs none reads no memory (its attributes may say so).
func (fg *fnGen) machineValue(gl *ir.Global) value.Value {
	if v, ok := fg.machine[gl]; ok {
		return v
	}
	l := ir.NewLoad(gl.ContentType, gl)
	l.SetName(fmt.Sprintf("m%d", len(fg.machine)))
	fg.entry.Insts = append([]ir.Instruction{l}, fg.entry.Insts...)
	fg.machine[gl] = l
	return l
}

// activation is one run of the function's body: the function itself, or
// a copy of it standing for a call to itself (memlayout.Unrolled), which
// has stack figures, values, vars and a frame of its own.
type activation struct {
	sp      value.Value // the Forge Machine's stack pointer on entry, as the bytes free below it (sp − heap_end)
	frame   value.Value // the frame base (r254 after the prologue)
	vals    map[*gir.Value]value.Value
	vars    map[string]*ir.InstAlloca
	targets map[*gir.Instr]*target
	ret     *target // a copy's exit, where its returns arrive; nil for the function
	level   int     // how many copies deep
	// stackChecked is the largest need already checked on every path to the
	// code being emitted: sp does not change in an activation, so a
	// smaller need cannot fault.
	stackChecked int64
}

func (fg *fnGen) function() {
	fg.slots = map[string]int64{}
	fg.faults = map[[2]int64]*ir.Block{}
	fg.machine = map[*ir.Global]value.Value{}
	fg.stack = fg.g.layout.Func(fg.f.Name)
	fg.entry = fg.lf.NewBlock("entry")
	fg.cur = fg.entry
	var size int64
	for _, l := range fg.f.Locals {
		if l.Kind == gir.Slot {
			al := max(l.Align, 1)
			size = (size + al - 1) &^ (al - 1)
			fg.slots[l.Name] = size
			size += l.Size
		}
	}
	if size > fg.stack.Frame {
		fg.g.diags.Errorf(fg.f.Pos, "0x08FF", "internal error: the slots of @%s take %d bytes, its Forge frame %d", fg.f.Name, size, fg.stack.Frame)
		return
	}
	var params []value.Value
	for _, p := range fg.lf.Params[stackParams:] {
		params = append(params, p)
	}
	fg.activate(fg.lf.Params[0], fg.lf.Params[1], params, nil, 0)
	fg.region(fg.f.Body, nil)
	if fg.cur.Term == nil {
		fg.ret(nil)
	}
	for _, b := range fg.lf.Blocks {
		if b.Term == nil {
			b.NewUnreachable()
		}
	}
}

// activate starts an activation of the function's body with the machine
// stack's free bytes sp and the frame pointer fp on entry, and args bound to
// its parameters, as its prologue does on the Forge Machine: registers
// pushed before the frame check are charged, then the frame is taken
// from the shadow stack below fp (USER_FAULT 2 past its limit); its vars
// start at zero.
func (fg *fnGen) activate(sp, fp value.Value, args []value.Value, ret *target, level int) {
	fg.activation = activation{sp: sp, frame: fp, vals: map[*gir.Value]value.Value{}, vars: map[string]*ir.InstAlloca{},
		targets: map[*gir.Instr]*target{}, ret: ret, level: level}
	for i, p := range fg.f.Params {
		fg.vals[p] = args[i]
	}
	fg.stackCheck(fg.stack.Entry)
	if fg.stack.Frame > 0 {
		// Signed, as the Forge prologue compares: a frame larger than
		// what is left takes the pointer below zero.
		frame := fg.cur.NewSub(fp, i64(fg.stack.Frame))
		fg.check(fg.cur.NewICmp(enum.IPredSLT, frame, fg.machineValue(fg.g.frameLimit)), memlayout.FaultUser, memlayout.UserFrameOverflow)
		fg.frame = frame
	}
	for _, l := range fg.f.Locals {
		if l.Kind == gir.Var {
			a := fg.entry.NewAlloca(llType(l.Type))
			fg.cur.NewStore(zero(l.Type), a)
			fg.vars[l.Name] = a
		}
	}
}

// stackCheck faults STACK_OVERFLOW unless need bytes below the
// activation's entry stack pointer are in the machine stack, where the
// Forge program's PUSH or CALL would fault.
func (fg *fnGen) stackCheck(need int64) {
	if need > fg.stackChecked {
		fg.check(fg.cur.NewICmp(enum.IPredULT, fg.sp, i64(need)), memlayout.FaultStackOverflow, 0)
		fg.stackChecked = need
	}
}

// unrolledCall expands in, a call of the function to itself, into a copy
// of its body (memlayout.Unrolled): a new activation whose stack pointer is
// the callee's, whose returns arrive at the copy's exit with the call's
// results.
func (fg *fnGen) unrolledCall(in *gir.Instr, args []value.Value) {
	u := fg.stack.Instrs[in]
	outer := fg.activation
	t := &target{exit: fg.lf.NewBlock(""), incoming: make([][]*ir.Incoming, len(in.Results))}
	fg.activate(fg.cur.NewSub(outer.sp, i64(u.Depth+8)), outer.frame, args, t, outer.level+1)
	fg.region(fg.f.Body, nil)
	if fg.cur.Term == nil {
		fg.ret(nil)
	}
	fg.activation = outer
	fg.leave(in, t)
}

func zero(t gir.Type) constant.Constant {
	if t.Kind() == gir.KindBool {
		return constant.False
	}
	return constant.NewInt(llType(t).(*types.IntType), 0)
}

// newBlock starts a new block and makes it current.
func (fg *fnGen) newBlock() *ir.Block {
	fg.cur = fg.lf.NewBlock("")
	return fg.cur
}

// check branches to the block raising fault (code, user) when cond holds.
func (fg *fnGen) check(cond value.Value, code, user int64) {
	key := [2]int64{code, user}
	fb := fg.faults[key]
	if fb == nil {
		fb = fg.lf.NewBlock("")
		fb.NewCall(fg.g.fault, i64(code), i64(user))
		fb.NewUnreachable()
		fg.faults[key] = fb
	}
	ok := fg.lf.NewBlock("")
	fg.cur.NewCondBr(cond, fb, ok)
	fg.cur = ok
}

// ret returns vals: from the function, or to the exit of the copy being
// emitted.
func (fg *fnGen) ret(vals []value.Value) {
	if fg.activation.ret != nil {
		fg.arrive(fg.activation.ret, vals)
		return
	}
	switch len(vals) {
	case 0:
		fg.cur.NewRet(nil)
	case 1:
		fg.cur.NewRet(vals[0])
	default:
		var agg value.Value = constant.NewUndef(fg.lf.Sig.RetType)
		for i, v := range vals {
			agg = fg.cur.NewInsertValue(agg, v, uint64(i))
		}
		fg.cur.NewRet(agg)
	}
}

func (fg *fnGen) args(vs []*gir.Value) []value.Value {
	out := make([]value.Value, len(vs))
	for i, v := range vs {
		out[i] = fg.vals[v]
	}
	return out
}

// region lowers the instructions of r. own is the target a yield in r
// leaves to (nil for a function body or a loop body).
func (fg *fnGen) region(r *gir.Region, own *target) {
	// Stack checks made in r do not cover what follows it: r may not run.
	checked := fg.stackChecked
	defer func() { fg.stackChecked = checked }()
	for _, in := range r.Instrs {
		if fg.cur.Term != nil {
			fg.newBlock() // dead code after a terminator: a block nothing reaches
		}
		fg.instr(in, own)
	}
}

// arrive records an edge from the current block into t's exit carrying
// vals, and ends the block with the branch.
func (fg *fnGen) arrive(t *target, vals []value.Value) {
	for i, v := range vals {
		t.incoming[i] = append(t.incoming[i], ir.NewIncoming(v, fg.cur))
	}
	t.arrivals++
	fg.cur.NewBr(t.exit)
}

// leave finishes a structured instruction: control continues at t's exit,
// whose phis become in's results.
func (fg *fnGen) leave(in *gir.Instr, t *target) {
	fg.cur = t.exit
	for i, res := range in.Results {
		if t.arrivals == 0 {
			fg.vals[res] = constant.NewUndef(llType(res.Type)) // nothing arrives: dead code follows
			continue
		}
		fg.vals[res] = t.exit.NewPhi(t.incoming[i]...)
	}
}

func (fg *fnGen) newTarget(in *gir.Instr) *target {
	t := &target{exit: fg.lf.NewBlock(""), incoming: make([][]*ir.Incoming, len(in.Results))}
	fg.targets[in] = t
	return t
}

// breakTarget returns the loop or block a break or continue names.
func breakTarget(in *gir.Instr) *gir.Instr {
	for r := in.Parent; r != nil && r.Parent != nil; r = r.Parent.Parent {
		if p := r.Parent; (p.Op == gir.OpLoop || p.Op == gir.OpBlock) && p.Label == in.Label {
			return p
		}
	}
	return nil
}

func (fg *fnGen) instr(in *gir.Instr, own *target) {
	// Registers the Forge code pushed and has not yet checked against
	// the machine stack's limit (or a CALL's return address) must fit
	// before the instruction has any effect.
	fg.stackCheck(fg.stack.Instrs[in].Need)
	a := func(i int) value.Value { return fg.vals[in.Args[i]] }
	def := func(v value.Value) { fg.vals[in.Results[0]] = v }
	b := func() *ir.Block { return fg.cur }
	switch in.Op {
	case gir.OpConst:
		def(fg.constant(in))
	case gir.OpFuncRef:
		def(i64(fg.g.fnIndex[in.Sym]))
	case gir.OpAddrOf:
		if in.Local != "" {
			def(b().NewAdd(fg.frame, i64(fg.slots[in.Local]))) // the activation's frame
		} else {
			def(i64(int64(fg.g.layout.Data[in.Sym])))
		}

	case gir.OpAdd:
		def(b().NewAdd(a(0), a(1)))
	case gir.OpSub:
		def(b().NewSub(a(0), a(1)))
	case gir.OpMul:
		def(b().NewMul(a(0), a(1)))
	case gir.OpAnd:
		def(b().NewAnd(a(0), a(1)))
	case gir.OpOr:
		def(b().NewOr(a(0), a(1)))
	case gir.OpXor:
		def(b().NewXor(a(0), a(1)))
	case gir.OpNeg:
		def(b().NewSub(zero(in.Results[0].Type), a(0)))
	case gir.OpNot:
		t := in.Results[0].Type
		if t.Kind() == gir.KindBool {
			def(b().NewXor(a(0), constant.True))
		} else {
			def(b().NewXor(a(0), constant.NewInt(llType(t).(*types.IntType), -1)))
		}
	case gir.OpDivS, gir.OpDivU, gir.OpRemS, gir.OpRemU:
		def(fg.divide(in.Op, in.Results[0].Type, a(0), a(1)))
	case gir.OpShl, gir.OpShrS, gir.OpShrU:
		def(fg.shift(in.Op, in.Results[0].Type, a(0), a(1)))

	case gir.OpEq, gir.OpNe, gir.OpLtS, gir.OpLeS, gir.OpGtS, gir.OpGeS, gir.OpLtU, gir.OpLeU, gir.OpGtU, gir.OpGeU:
		def(b().NewICmp(predicates[in.Op], a(0), a(1)))

	case gir.OpSext:
		def(fg.resize(a(0), in.Args[0].Type, in.Type, true))
	case gir.OpZext:
		def(fg.resize(a(0), in.Args[0].Type, in.Type, false))
	case gir.OpTrunc:
		def(b().NewTrunc(a(0), llType(in.Type)))
	case gir.OpIntToPtr, gir.OpPtrToInt:
		def(a(0))
	case gir.OpPtrAdd:
		def(b().NewAdd(a(0), a(1)))

	case gir.OpLoad:
		def(fg.load(in.Type, fg.checked(in, in.Args[0], in.Int, in.Type.Size(), false)))
	case gir.OpStore:
		t := in.Args[0].Type
		fg.store(t, fg.checked(in, in.Args[1], in.Int, t.Size(), true), a(0))
	case gir.OpCopy:
		if in.Int > 0 {
			dst := fg.checked(in, in.Args[0], 0, in.Int, true)
			src := fg.checked(in, in.Args[1], 0, in.Int, false)
			fg.cur.NewCall(fg.g.memmove, fg.pointer(dst, types.I8), fg.pointer(src, types.I8), i64(in.Int), constant.False)
		}
	case gir.OpGet:
		v := fg.vars[in.Local]
		def(b().NewLoad(v.ElemType, v))
	case gir.OpSet:
		b().NewStore(a(0), fg.vars[in.Local])

	case gir.OpCall:
		if in.Sym == fg.f.Name && fg.g.unrolled[in.Sym] && fg.level < memlayout.UnrollLevels {
			fg.unrolledCall(in, fg.args(in.Args))
			break
		}
		fg.call(in, fg.g.funcs[in.Sym], fg.args(in.Args))
	case gir.OpCallIndirect:
		sig := in.Args[0].Type.Sig()
		if fg.g.fnTable == nil {
			// No function is ever referenced: every reference is to none.
			fg.cur.NewCall(fg.g.fault, i64(memlayout.FaultUser), i64(memlayout.UserBadFuncRef))
			fg.cur.NewUnreachable()
			for _, r := range in.Results {
				fg.vals[r] = constant.NewUndef(llType(r.Type))
			}
			break
		}
		idx := b().NewSub(a(0), i64(1))
		n := int64(len(fg.g.fnTable.Init.(*constant.Array).Elems))
		fg.check(b().NewICmp(enum.IPredUGE, idx, i64(n)), memlayout.FaultUser, memlayout.UserBadFuncRef)
		i8p := types.NewPointer(types.I8)
		slot := b().NewGetElementPtr(fg.g.fnTable.ContentType, fg.g.fnTable, i64(0), idx)
		raw := b().NewLoad(i8p, slot)
		callee := b().NewBitCast(raw, types.NewPointer(sigType(sig)))
		fg.call(in, callee, fg.args(in.Args[1:]))

	case gir.OpIf:
		t := fg.newTarget(in)
		then, els := fg.lf.NewBlock(""), fg.lf.NewBlock("")
		fg.cur.NewCondBr(a(0), then, els)
		for i, blk := range []*ir.Block{then, els} {
			fg.cur = blk
			fg.region(in.Regions[i], t)
			if fg.cur.Term == nil {
				fg.arrive(t, nil)
			}
		}
		fg.leave(in, t)
	case gir.OpSwitch:
		t := fg.newTarget(in)
		blocks := make([]*ir.Block, len(in.Regions))
		for i := range blocks {
			blocks[i] = fg.lf.NewBlock("")
		}
		it := llType(in.Args[0].Type).(*types.IntType)
		var cases []*ir.Case
		for i, vs := range in.Cases {
			for _, v := range vs {
				cases = append(cases, ir.NewCase(constant.NewInt(it, v), blocks[i]))
			}
		}
		fg.cur.NewSwitch(a(0), blocks[len(blocks)-1], cases...)
		for i, blk := range blocks {
			fg.cur = blk
			fg.region(in.Regions[i], t)
			if fg.cur.Term == nil {
				fg.arrive(t, nil)
			}
		}
		fg.leave(in, t)
	case gir.OpBlock:
		t := fg.newTarget(in)
		body := fg.lf.NewBlock("")
		fg.cur.NewBr(body)
		fg.cur = body
		fg.region(in.Regions[0], t)
		if fg.cur.Term == nil {
			fg.arrive(t, nil)
		}
		fg.leave(in, t)
	case gir.OpLoop:
		t := fg.newTarget(in)
		args := fg.args(in.Args)
		if plan := fg.planVersion(in); plan != nil && fg.unchecked == nil {
			// Two copies of the loop sharing its exit (version.go): the
			// first without the checks the test proves, the second the
			// original.
			fast, slow := fg.lf.NewBlock(""), fg.lf.NewBlock("")
			fast.SetName(fmt.Sprintf("versioned.%d", len(fg.lf.Blocks)))
			fg.cur.NewCondBr(fg.versionTest(plan, args), fast, slow)
			fg.unchecked = map[*gir.Instr]bool{}
			for _, acc := range plan.accesses {
				fg.unchecked[acc.in] = true
			}
			fg.cur = fast
			fg.loopCopy(in, t, args)
			fg.unchecked = nil
			fg.cur = slow
		}
		fg.loopCopy(in, t, args)
		fg.leave(in, t)

	case gir.OpYield:
		if own != nil {
			fg.arrive(own, fg.args(in.Args))
		}
	case gir.OpBreak:
		fg.arrive(fg.targets[breakTarget(in)], fg.args(in.Args))
	case gir.OpContinue:
		t := fg.targets[breakTarget(in)]
		for i, v := range fg.args(in.Args) {
			t.params[i].Incs = append(t.params[i].Incs, ir.NewIncoming(v, fg.cur))
		}
		fg.cur.NewBr(t.header)
	case gir.OpReturn:
		fg.ret(fg.args(in.Args))
	case gir.OpUnreachable:
		fg.cur.NewCall(fg.g.fault, i64(memlayout.FaultUser), i64(memlayout.UserUnreachable))
		fg.cur.NewUnreachable()

	case gir.OpAsm:
		fg.asm(in)
	default:
		fg.g.diags.Errorf(in.Pos, codeUnsupported, "%s does not compile to native code (dynamic values and effects run through --target go)", in.Op)
	}
}

// loopCopy emits loop in, from the current block, with t as its target:
// its header (with its parameters' phis, starting at args) and body.
func (fg *fnGen) loopCopy(in *gir.Instr, t *target, args []value.Value) {
	t.header = fg.lf.NewBlock("")
	t.params = nil
	body := in.Regions[0]
	for i, p := range body.Params {
		phi := t.header.NewPhi(ir.NewIncoming(args[i], fg.cur))
		t.params = append(t.params, phi)
		fg.vals[p] = phi
	}
	fg.cur.NewBr(t.header)
	fg.cur = t.header
	checked := fg.stackChecked
	fg.region(body, nil)
	fg.stackChecked = checked
	if fg.cur.Term == nil {
		fg.cur.NewUnreachable() // the verifier requires a terminator
	}
}

var predicates = map[gir.Op]enum.IPred{
	gir.OpEq: enum.IPredEQ, gir.OpNe: enum.IPredNE,
	gir.OpLtS: enum.IPredSLT, gir.OpLeS: enum.IPredSLE, gir.OpGtS: enum.IPredSGT, gir.OpGeS: enum.IPredSGE,
	gir.OpLtU: enum.IPredULT, gir.OpLeU: enum.IPredULE, gir.OpGtU: enum.IPredUGT, gir.OpGeU: enum.IPredUGE,
}

func (fg *fnGen) constant(in *gir.Instr) value.Value {
	t := in.Type
	switch t.Kind() {
	case gir.KindBool:
		return constant.NewBool(in.Lit.Int != 0)
	case gir.KindDyn:
		fg.g.diags.Errorf(in.Pos, codeUnsupported, "dynamic values do not compile to native code")
		return constant.NewUndef(types.I64)
	}
	return constant.NewInt(llType(t).(*types.IntType), in.Lit.Int)
}

// call calls callee and binds in's results. The callee starts where
// the Forge program's CALL leaves the machine stack, with the caller's
// frame pointer.
func (fg *fnGen) call(in *gir.Instr, callee value.Value, args []value.Value) {
	sp := fg.cur.NewSub(fg.sp, i64(fg.stack.Instrs[in].Depth+8))
	c := fg.cur.NewCall(callee, append([]value.Value{sp, fg.frame}, args...)...)
	switch len(in.Results) {
	case 0:
	case 1:
		fg.vals[in.Results[0]] = c
	default:
		for i, r := range in.Results {
			fg.vals[r] = fg.cur.NewExtractValue(c, uint64(i))
		}
	}
}

// divide lowers a division or remainder: by zero faults; MIN / -1 wraps
// to MIN and MIN rem -1 is 0, where LLVM's sdiv and srem are undefined.
func (fg *fnGen) divide(op gir.Op, t gir.Type, x, y value.Value) value.Value {
	it := llType(t).(*types.IntType)
	fg.check(fg.cur.NewICmp(enum.IPredEQ, y, constant.NewInt(it, 0)), memlayout.FaultDivideByZero, 0)
	switch op {
	case gir.OpDivU:
		return fg.cur.NewUDiv(x, y)
	case gir.OpRemU:
		return fg.cur.NewURem(x, y)
	}
	minus1 := fg.cur.NewICmp(enum.IPredEQ, y, constant.NewInt(it, -1))
	safe := fg.cur.NewSelect(minus1, constant.NewInt(it, 1), y)
	if op == gir.OpDivS {
		return fg.cur.NewSelect(minus1, fg.cur.NewSub(constant.NewInt(it, 0), x), fg.cur.NewSDiv(x, safe))
	}
	return fg.cur.NewSelect(minus1, constant.NewInt(it, 0), fg.cur.NewSRem(x, safe))
}

// shift lowers a shift: the amount is read unsigned modulo 64 and the
// operand shifted in 64 bits, then truncated, as the IR defines it (LLVM's
// shifts by the width or more are poison).
func (fg *fnGen) shift(op gir.Op, t gir.Type, x, y value.Value) value.Value {
	b := fg.cur
	amt := value.Value(y)
	if t.Bits() < 64 {
		amt = b.NewZExt(y, types.I64)
	}
	amt = b.NewAnd(amt, i64(63))
	wide := x
	if t.Bits() < 64 {
		if op == gir.OpShrS {
			wide = b.NewSExt(x, types.I64)
		} else {
			wide = b.NewZExt(x, types.I64)
		}
	}
	var r value.Value
	switch op {
	case gir.OpShl:
		r = b.NewShl(wide, amt)
	case gir.OpShrU:
		r = b.NewLShr(wide, amt)
	default:
		r = b.NewAShr(wide, amt)
	}
	if t.Bits() < 64 {
		r = b.NewTrunc(r, llType(t))
	}
	return r
}

// resize widens x from type from to type to, by sign or zero extension;
// the same width (ptr and i64) is a no-op.
func (fg *fnGen) resize(x value.Value, from, to gir.Type, signed bool) value.Value {
	if llType(from).Equal(llType(to)) {
		return x
	}
	if signed && from.Kind() != gir.KindBool {
		return fg.cur.NewSExt(x, llType(to))
	}
	return fg.cur.NewZExt(x, llType(to))
}

// checked is address for the IR value base: an access that stays inside
// one of the function's own slots (base is its addr_of, plus constants)
// is in memory by construction — the frame was checked on entry — and
// needs no check. Most accesses of Genesis locals are of this kind, and
// leaving their checks out keeps the LLVM code small.
//
// An access of a versioned loop's unchecked copy (version.go), access,
// is not checked either: the test before the loop proved it in memory.
func (fg *fnGen) checked(access *gir.Instr, base *gir.Value, off, size int64, store bool) value.Value {
	if fg.unchecked[access] {
		addr := fg.vals[base]
		if off != 0 {
			addr = fg.cur.NewAdd(addr, i64(off))
		}
		return addr
	}
	start, v := off, base
	for v.Def != nil && v.Def.Op == gir.OpPtrAdd {
		c := v.Def.Args[1].Def
		if c == nil || c.Op != gir.OpConst {
			break
		}
		start += c.Lit.Int
		v = v.Def.Args[0]
	}
	if d := v.Def; d != nil && d.Op == gir.OpAddrOf && d.Local != "" {
		if l := fg.local(d.Local); l != nil && start >= 0 && size <= l.Size && start <= l.Size-size {
			addr := fg.vals[base]
			if off != 0 {
				addr = fg.cur.NewAdd(addr, i64(off))
			}
			return addr
		}
	}
	return fg.address(fg.vals[base], off, size, store)
}

// local returns the function's local named name.
func (fg *fnGen) local(name string) *gir.Local {
	for _, l := range fg.f.Locals {
		if l.Name == name {
			return l
		}
	}
	return nil
}

// address computes base + off and checks that the size bytes there are in
// memory, and for a store that they are above the read-only code and data
// (both faults are INVALID_ADDRESS, as on the Forge Machine).
//
// A store is checked in two comparisons, the end of memory first, then
// heap_start (a constant), rather than in one (addr − heap_start against
// the room above it): the first is then the very comparison a load of the
// same address makes, which LLVM drops when a load dominates it (x[i] +=
// …, a swap), and the second compares with a constant, which it often
// proves. Both branch to the same fault with nothing between them, so
// which one fails is not observable (docs/decisions.md, "The native
// target's speed (issue 17)").
func (fg *fnGen) address(base value.Value, off, size int64, store bool) value.Value {
	addr := base
	if off != 0 {
		addr = fg.cur.NewAdd(base, i64(off))
	}
	memory := fg.machineValue(fg.g.memory)
	hs := int64(fg.g.layout.HeapStart)
	// The bytes from heap_start to the end of memory: at least the
	// machine stack, which holds 8 bytes once any function runs (main's
	// return address), so memory − size does not wrap for an access of
	// up to 8 bytes; a longer copy first checks that it fits at all.
	if size > 8 {
		room := memory
		if store {
			room = fg.cur.NewSub(memory, i64(hs))
		}
		fg.check(fg.cur.NewICmp(enum.IPredULT, room, i64(size)), memlayout.FaultInvalidAddress, 0)
	}
	fg.check(fg.cur.NewICmp(enum.IPredUGT, addr, fg.cur.NewSub(memory, i64(size))), memlayout.FaultInvalidAddress, 0)
	if store && hs != 0 {
		fg.check(fg.cur.NewICmp(enum.IPredULT, addr, i64(hs)), memlayout.FaultInvalidAddress, 0)
	}
	return addr
}

// pointer is the native pointer to memory address addr (already checked),
// typed as a pointer to t.
func (fg *fnGen) pointer(addr value.Value, t types.Type) value.Value {
	p := fg.cur.NewGetElementPtr(types.I8, fg.machineValue(fg.g.mem), addr)
	p.InBounds = true
	if t.Equal(types.I8) {
		return p
	}
	return fg.cur.NewBitCast(p, types.NewPointer(t))
}

// memType is the LLVM type a value of IR type t has in memory.
func memType(t gir.Type) types.Type {
	if t.Kind() == gir.KindBool {
		return types.I8
	}
	return llType(t)
}

func (fg *fnGen) load(t gir.Type, addr value.Value) value.Value {
	mt := memType(t)
	l := fg.cur.NewLoad(mt, fg.pointer(addr, mt))
	l.Align = 1
	if t.Kind() == gir.KindBool {
		return fg.cur.NewICmp(enum.IPredNE, l, constant.NewInt(types.I8, 0))
	}
	return l
}

func (fg *fnGen) store(t gir.Type, addr, v value.Value) {
	mt := memType(t)
	if t.Kind() == gir.KindBool {
		v = fg.cur.NewZExt(v, types.I8)
	}
	s := fg.cur.NewStore(v, fg.pointer(addr, mt))
	s.Align = 1
}
