package golang

import (
	"bytes"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/genesis-toolchain/genesis/backend/forgegen"
	"github.com/genesis-toolchain/genesis/backend/internal/memlayout"
	"github.com/genesis-toolchain/genesis/diag"
	"github.com/genesis-toolchain/genesis/ir"
)

// funcGen translates one function.
type funcGen struct {
	g *generator
	f *ir.Func
	b bytes.Buffer

	uses     map[*ir.Value]int
	hasFrame bool             // agent programs: the function allocates a frame on m.sp
	slots    map[string]int64 // slot offsets in the frame
	depth    int              // indentation
	lastPos  diag.Pos         // of the last /*line*/ directive

	// Standalone programs charge the Forge program's use of the stacks
	// (docs/decisions.md, N4): stack holds its figures, act is the
	// activation being written (the function, or a copy of its body
	// standing for a call to itself), copies counts the copies.
	stack  *forgegen.FuncStack
	act    activation
	copies int
}

// activation is one run of a standalone function's body: the function
// itself or a copy of it (memlayout.Unrolled), whose Go names carry a
// suffix of their own.
type activation struct {
	suffix string // of the Go names of the copy's values, vars and labels
	// The Forge Machine's stack pointer on entry is the function's sp
	// minus spOff: a copy's is not a variable of its own, which Go would
	// keep live (and reload) across every call.
	spOff int64
	frame string // the frame base (r254 after the prologue), when there is a frame
	fp    string // m.fp on entry, which returns restore, when there is a frame
	level int    // how many copies deep
	// stackChecked is the largest need already checked on every path to the
	// code being written: sp does not change in an activation, so a
	// smaller need cannot fault.
	stackChecked int64
	// A copy's returns assign the call's results and jump past it.
	results []string
	exit    string
	exited  *bool
}

func (fg *funcGen) printf(format string, args ...any) {
	fmt.Fprintf(&fg.b, "%s", strings.Repeat("\t", fg.depth))
	fmt.Fprintf(&fg.b, format, args...)
	fg.b.WriteByte('\n')
}

// name is the Go variable of an SSA value.
func (fg *funcGen) name(v *ir.Value) string { return "v" + strconv.Itoa(v.ID) + fg.act.suffix }

// local is the Go variable of a var local.
func (fg *funcGen) local(name string) string { return "l_" + ident(name) + fg.act.suffix }

// label is the Go label of a loop or block.
func (fg *funcGen) label(name string) string { return "L_" + ident(name) + fg.act.suffix }

func (fg *funcGen) function() {
	f := fg.f
	fg.uses = map[*ir.Value]int{}
	ir.Walk(f.Body, func(in *ir.Instr) {
		if in.Op == ir.OpBuiltin && fg.hoistable(in) {
			return // computed once in a package variable: its operands are not read here
		}
		for _, a := range in.Args {
			fg.uses[a]++
		}
	})
	var params []string
	params = append(params, "m *machine")
	if fg.g.standalone {
		// The Forge Machine's stack pointer on entry, which the function
		// charges its use of the machine stack to (the frame pointer r254
		// is m.fp: passing it too would cost every call of a function
		// without a frame).
		params = append(params, "sp uint64")
		fg.stack = fg.g.layout.Func(f.Name)
		fg.act = activation{}
	}
	for _, p := range f.Params {
		params = append(params, fg.name(p)+" "+goType(p.Type))
	}
	var results []string
	for _, t := range f.Results {
		results = append(results, goType(t))
	}
	res := strings.Join(results, ", ")
	if len(results) > 1 {
		res = "(" + res + ")"
	}
	fmt.Fprintf(&fg.b, "// %s is the IR function @%s.\n", funcName(f.Name), f.Name)
	fmt.Fprintf(&fg.b, "func %s(%s) %s {\n", funcName(f.Name), strings.Join(params, ", "), res)
	fg.depth = 1
	for _, p := range f.Params {
		if fg.uses[p] == 0 {
			fg.printf("_ = %s", fg.name(p))
		}
	}
	if fg.g.standalone {
		fg.printf("mem := m.mem") // see access
		fg.printf("_ = mem")
	}
	// The frame of the slots.
	fg.slots = map[string]int64{}
	var size int64
	for _, l := range f.Locals {
		if l.Kind == ir.Slot {
			a := max(l.Align, 1)
			size = (size + a - 1) &^ (a - 1)
			fg.slots[l.Name] = size
			size += l.Size
		}
	}
	if fg.g.standalone {
		if size > fg.stack.Frame {
			fg.g.diags.Errorf(f.Pos, "0x08FF", "internal error: the slots of @%s take %d bytes, its Forge frame %d", f.Name, size, fg.stack.Frame)
		}
		if fg.stack.Frame > 0 {
			fg.printf("fp := m.fp")
			fg.act.frame, fg.act.fp = "fp", "fp"
		}
		fg.activate(nil)
	} else {
		// Count the nesting of calls, so that a recursion without end
		// stops the run (kind limit.depth) before Go's stack overflows,
		// which would end the process; returns count down (ret).
		fg.printf("m.calls++")
		fg.printf("if m.calls > rt.MaxCallDepth {")
		fg.printf("\tm.r.TooDeep(%s.At())", fg.g.site(f.Name, f.Pos))
		fg.printf("}")
		fg.declareVars()
		if len(fg.slots) > 0 {
			fg.hasFrame = true
			fg.printf("sp := m.sp")
			fg.printf("_ = sp // restored by returns; a function may have none")
			fg.printf("frame := m.enter(%d)", size)
			fg.printf("_ = frame")
			fg.act.frame = "frame"
		}
	}
	fg.region(f.Body, nil)
	if fg.g.regionFallsThrough(f.Body) && !endsInTerminator(f.Body) {
		fg.ret(nil)
	}
	fg.depth = 0
	fg.b.WriteString("}\n")
}

// declareVars declares the activation's var locals, zero as on entry.
func (fg *funcGen) declareVars() {
	for _, l := range fg.f.Locals {
		if l.Kind == ir.Var {
			fg.printf("var %s %s", fg.local(l.Name), goType(l.Type))
			fg.printf("_ = %s", fg.local(l.Name))
		}
	}
}

// activate writes the entry of the activation fg.act of a standalone
// function, as the Forge program's prologue does: the registers it
// pushes before checking the frame are charged to the machine stack,
// then the frame is taken from the shadow stack below fg.act.frame
// (USER_FAULT 2 past its limit, compared signed as Forge does) and
// becomes m.fp for the calls. args are the Go expressions of a copy's
// arguments, bound to the parameters; nil for the function, whose
// parameters are Go's.
//
// The faults of the stacks panic (main recovers them): Go then knows
// the check's failure does not come back, and keeps it off the path
// that continues.
func (fg *funcGen) activate(args []string) {
	fg.stackCheck(fg.stack.Entry)
	if fg.stack.Frame > 0 {
		frame := "frame" + fg.act.suffix
		fg.printf("%s := %s - %d", frame, fg.act.frame, fg.stack.Frame)
		fg.printf("if int64(%s) < int64(frameLimit) {", frame) // signed, as the Forge prologue compares
		fg.printf("\tpanic(fault{%d, %d})", memlayout.FaultUser, memlayout.UserFrameOverflow)
		fg.printf("}")
		fg.printf("m.fp = %s", frame)
		fg.act.frame = frame
	}
	for i, a := range args {
		p := fg.f.Params[i]
		fg.printf("%s := %s", fg.name(p), a)
		if fg.uses[p] == 0 {
			fg.printf("_ = %s", fg.name(p))
		}
	}
	fg.declareVars()
}

// stackCheck writes the fault STACK_OVERFLOW unless need bytes below
// the activation's entry stack pointer are in the machine stack.
func (fg *funcGen) stackCheck(need int64) {
	if need > fg.act.stackChecked {
		fg.printf("if sp < heapEnd+%d {", need+fg.act.spOff)
		fg.printf("\tpanic(fault{%d, 0})", memlayout.FaultStackOverflow)
		fg.printf("}")
		fg.act.stackChecked = need
	}
}

// unrolledCall writes in, a call of the function to itself, as a copy of
// its body (memlayout.Unrolled): a Go block holding a new activation, whose
// stack pointer is the callee's, and whose returns assign the call's
// results and jump past the block.
func (fg *funcGen) unrolledCall(in *ir.Instr) {
	fg.declare(in)
	outer := fg.act
	var results []string
	for _, r := range in.Results {
		results = append(results, fg.name(r))
	}
	args := make([]string, len(in.Args))
	for i, a := range in.Args {
		args[i] = fg.name(a)
	}
	fg.copies++
	suffix := "_u" + strconv.Itoa(fg.copies)
	exited := false
	fg.act = activation{suffix: suffix, spOff: outer.spOff + fg.stack.Instrs[in].Depth + 8, frame: outer.frame, fp: outer.frame,
		level: outer.level + 1, results: results, exit: "L_ret" + suffix, exited: &exited}
	fg.printf("{")
	fg.depth++
	fg.activate(args)
	body := fg.f.Body
	fg.region(body, nil)
	if fg.g.regionFallsThrough(body) && !endsInTerminator(body) {
		fg.ret(nil)
	}
	fg.depth--
	fg.printf("}")
	if exited {
		fg.printf("%s:", fg.act.exit)
	}
	fg.act = outer
}

func endsInTerminator(r *ir.Region) bool {
	last := r.Last()
	return last != nil && last.Info().Flags&ir.Terminator != 0
}

// ret writes a return of vals, freeing the frame first (agent
// programs); in a copy of the body, the assignment of the call's results
// and the jump past the copy.
func (fg *funcGen) ret(vals []*ir.Value) {
	if fg.act.fp != "" {
		fg.printf("m.fp = %s", fg.act.fp) // the caller's frame pointer
	}
	if fg.act.exit != "" {
		if len(vals) > 0 {
			fg.printf("%s = %s", strings.Join(fg.act.results, ", "), fg.list(vals))
		}
		fg.printf("goto %s", fg.act.exit)
		*fg.act.exited = true
		return
	}
	if fg.hasFrame {
		fg.printf("m.sp = sp")
	}
	if !fg.g.standalone {
		fg.printf("m.calls--")
	}
	if len(vals) == 0 {
		fg.printf("return")
		return
	}
	fg.printf("return %s", fg.list(vals))
}

func (fg *funcGen) list(vs []*ir.Value) string {
	names := make([]string, len(vs))
	for i, v := range vs {
		names[i] = fg.name(v)
	}
	return strings.Join(names, ", ")
}

// results is what a structured instruction's results are assigned from:
// its yields, breaks and, for loops, nothing else.
type owner struct {
	in    *ir.Instr
	label string // the Go label of a loop or block
}

// region writes the instructions of r; yieldTo is the structured
// instruction a yield in r leaves (nil in a function body or loop body).
func (fg *funcGen) region(r *ir.Region, yieldTo *owner) {
	// Stack checks made in r do not cover what follows it: r may not run.
	checked := fg.act.stackChecked
	defer func() { fg.act.stackChecked = checked }()
	for _, in := range r.Instrs {
		fg.line(in.Pos)
		fg.instr(in, yieldTo)
		if !fg.g.fallsThrough(in) {
			return // the rest of the region is dead
		}
	}
}

// line writes a line directive when the position changed, so that the Go
// toolchain's positions are the source's.
func (fg *funcGen) line(pos diag.Pos) {
	if pos.Line == 0 || pos == fg.lastPos {
		return
	}
	fg.lastPos = pos
	file := pos.File
	if file == "" {
		file = fg.f.Pos.File
	}
	if file == "" || strings.ContainsAny(file, "*/\n") {
		return
	}
	fg.printf("/*line %s:%d:%d*/", file, pos.Line, pos.Col)
}

// def writes `results := expr`, with _ for unused results.
func (fg *funcGen) def(in *ir.Instr, expr string) {
	if len(in.Results) == 0 {
		fg.printf("%s", expr)
		return
	}
	names := make([]string, len(in.Results))
	used := false
	for i, v := range in.Results {
		if fg.uses[v] == 0 {
			names[i] = "_"
		} else {
			names[i] = fg.name(v)
			used = true
		}
	}
	op := ":="
	if !used {
		op = "="
	}
	fg.printf("%s %s %s", strings.Join(names, ", "), op, expr)
}

// declare writes the declarations of a structured instruction's results,
// which its regions assign.
func (fg *funcGen) declare(in *ir.Instr) {
	for _, v := range in.Results {
		// Assigned by the regions, and read only where control reaches,
		// which may be nowhere the Go compiler can see.
		fg.printf("var %s %s", fg.name(v), goType(v.Type))
		fg.printf("_ = %s", fg.name(v))
	}
}

// assign writes dst = src element-wise (through temporaries when they may
// overlap, as loop parameters rebound from each other do).
func (fg *funcGen) assign(dst, src []*ir.Value) {
	if len(dst) == 0 {
		return
	}
	// A pair whose two sides are one variable (a loop parameter that
	// continues unchanged) is left out: it changes nothing, also in a
	// parallel assignment, and go vet reports it as a self-assignment.
	var lhs, rhs []string
	for i := range dst {
		if d, s := fg.name(dst[i]), fg.name(src[i]); d != s {
			lhs, rhs = append(lhs, d), append(rhs, s)
		}
	}
	if len(lhs) > 0 {
		fg.printf("%s = %s", strings.Join(lhs, ", "), strings.Join(rhs, ", "))
	}
}

func (fg *funcGen) instr(in *ir.Instr, yieldTo *owner) {
	if fg.g.standalone {
		// Registers the Forge code pushed and has not yet checked
		// against the machine stack's limit (or a CALL's return
		// address) must fit before the instruction has any effect.
		fg.stackCheck(fg.stack.Instrs[in].Need)
	}
	a := func(i int) string { return fg.name(in.Args[i]) }
	t := in.Type
	if len(in.Results) == 1 {
		t = in.Results[0].Type
	}
	switch in.Op {
	case ir.OpConst:
		fg.def(in, constant(in))
		if v := in.Results[0]; fg.uses[v] > 0 {
			// Its uses may all be hoisted builtins (hoist).
			fg.printf("_ = %s", fg.name(v))
		}
	case ir.OpFuncRef:
		fg.def(in, "int64("+strconv.Itoa(fg.g.funcRef(in.Sym))+")")
	case ir.OpAddrOf:
		if in.Local != "" {
			fg.def(in, fmt.Sprintf("%s + %d", fg.act.frame, fg.slots[in.Local]))
		} else {
			fg.def(in, fmt.Sprintf("uint64(%d)", fg.g.dataAddr[in.Sym]))
		}

	case ir.OpAdd:
		fg.def(in, a(0)+" + "+a(1))
	case ir.OpSub:
		fg.def(in, a(0)+" - "+a(1))
	case ir.OpMul:
		fg.def(in, a(0)+" * "+a(1))
	case ir.OpAnd:
		if t == ir.Bool { // both operands are values already: no short circuit to keep
			fg.def(in, a(0)+" && "+a(1))
		} else {
			fg.def(in, a(0)+" & "+a(1))
		}
	case ir.OpOr:
		if t == ir.Bool {
			fg.def(in, a(0)+" || "+a(1))
		} else {
			fg.def(in, a(0)+" | "+a(1))
		}
	case ir.OpXor:
		if t == ir.Bool {
			fg.def(in, a(0)+" != "+a(1))
		} else {
			fg.def(in, a(0)+" ^ "+a(1))
		}
	case ir.OpNeg:
		fg.def(in, "-"+a(0))
	case ir.OpNot:
		if t == ir.Bool {
			fg.def(in, "!"+a(0))
		} else {
			fg.def(in, "^"+a(0))
		}
	case ir.OpDivS, ir.OpDivU, ir.OpRemS, ir.OpRemU:
		fg.printf("if %s == 0 {", a(1))
		if fg.g.standalone {
			// A panic (main recovers it) tells Go the branch does not
			// come back: a call to m.fault would keep every value live
			// across it out of the registers of the loop around it.
			fg.printf("\tpanic(fault{%d, 0})", memlayout.FaultDivideByZero)
		} else {
			fg.printf("\tm.fault(\"divide_by_zero\", %q)", "division by zero at "+in.Pos.String())
		}
		fg.printf("}")
		op := "/"
		if in.Op == ir.OpRemS || in.Op == ir.OpRemU {
			op = "%"
		}
		if in.Op == ir.OpDivU || in.Op == ir.OpRemU {
			u := unsignedType(t)
			fg.def(in, fmt.Sprintf("%s(%s(%s) %s %s(%s))", goType(t), u, a(0), op, u, a(1)))
		} else {
			// Go defines MIN / -1 = MIN and MIN %% -1 = 0, the IR's wrapping.
			fg.def(in, a(0)+" "+op+" "+a(1))
		}
	case ir.OpShl:
		fg.def(in, fmt.Sprintf("%s << (uint64(%s) & 63)", a(0), a(1)))
	case ir.OpShrS:
		fg.def(in, fmt.Sprintf("%s >> (uint64(%s) & 63)", a(0), a(1)))
	case ir.OpShrU:
		u := unsignedType(t)
		fg.def(in, fmt.Sprintf("%s(%s(%s) >> (uint64(%s) & 63))", goType(t), u, a(0), a(1)))

	case ir.OpEq, ir.OpNe:
		op := "=="
		if in.Op == ir.OpNe {
			op = "!="
		}
		fg.def(in, a(0)+" "+op+" "+a(1))
	case ir.OpLtS, ir.OpLeS, ir.OpGtS, ir.OpGeS:
		fg.def(in, a(0)+" "+cmpOp(in.Op)+" "+a(1))
	case ir.OpLtU, ir.OpLeU, ir.OpGtU, ir.OpGeU:
		u := unsignedType(in.Args[0].Type)
		fg.def(in, fmt.Sprintf("%s(%s) %s %s(%s)", u, a(0), cmpOp(in.Op), u, a(1)))

	case ir.OpSext:
		fg.def(in, fmt.Sprintf("%s(%s)", goType(t), a(0)))
	case ir.OpZext:
		if in.Args[0].Type == ir.Bool {
			fg.def(in, fmt.Sprintf("%s(b2i(%s))", goType(t), a(0)))
		} else {
			fg.def(in, fmt.Sprintf("%s(%s(%s))", goType(t), unsignedType(in.Args[0].Type), a(0)))
		}
	case ir.OpTrunc:
		if t == ir.Bool {
			fg.def(in, a(0)+"&1 != 0")
		} else {
			fg.def(in, fmt.Sprintf("%s(%s)", goType(t), a(0)))
		}
	case ir.OpIntToPtr, ir.OpPtrToInt:
		fg.def(in, fmt.Sprintf("%s(%s)", goType(t), a(0)))
	case ir.OpPtrAdd:
		fg.def(in, fmt.Sprintf("%s + uint64(%s)", a(0), a(1)))

	case ir.OpLoad:
		fg.def(in, fg.load(in.Type, offset(a(0), in.Int)))
	case ir.OpStore:
		fg.store(in.Args[0].Type, offset(a(1), in.Int), a(0))
	case ir.OpCopy:
		fg.printf("m.copyMem(%s, %s, %d)", a(0), a(1), in.Int)
	case ir.OpGet:
		fg.def(in, fg.local(in.Local))
	case ir.OpSet:
		fg.printf("%s = %s", fg.local(in.Local), a(0))

	case ir.OpCall:
		if fg.g.standalone && in.Sym == fg.f.Name && fg.g.unrolled[in.Sym] && fg.act.level < memlayout.UnrollLevels {
			fg.unrolledCall(in)
			break
		}
		fg.call(in, funcName(in.Sym)+"(m"+fg.stackArgs(in)+fg.argList(in.Args)+")")
	case ir.OpCallIndirect:
		sig := in.Args[0].Type.Sig()
		fg.call(in, fmt.Sprintf("funcTable[%s].(%s)(m%s%s)", a(0), fg.g.funcType(sig), fg.stackArgs(in), fg.argList(in.Args[1:])))
	case ir.OpBuiltin:
		if h := fg.hoist(in); h != "" {
			fg.def(in, h)
			if v := in.Results[0]; fg.uses[v] > 0 {
				fg.printf("_ = %s", fg.name(v)) // its uses may be hoisted too
			}
			return
		}
		call := "rt." + builtinName(in.Sym) + "(" + fg.list(in.Args) + ")"
		if b, _ := ir.LookupBuiltin(in.Sym); b != nil && b.Fallible && in.Pos.Line > 0 && in.Pos.File != "" {
			// Its error names where the program wrote the operation, as
			// step identities do (the file's base name).
			call = fmt.Sprintf("rt.ErrorAt(%s, %q, %d, %d)", call, filepath.Base(in.Pos.File), in.Pos.Line, in.Pos.Col)
		}
		fg.def(in, call)

	case ir.OpIf:
		fg.declare(in)
		o := &owner{in: in}
		fg.printf("if %s {", a(0))
		fg.depth++
		fg.region(in.Regions[0], o)
		fg.depth--
		if len(in.Regions) > 1 && len(in.Regions[1].Instrs) > 0 {
			fg.printf("} else {")
			fg.depth++
			fg.region(in.Regions[1], o)
			fg.depth--
		}
		fg.printf("}")
	case ir.OpSwitch:
		fg.declare(in)
		o := &owner{in: in}
		fg.printf("switch %s {", a(0))
		for i, r := range in.Regions {
			if i < len(in.Cases) {
				vals := make([]string, len(in.Cases[i]))
				for k, c := range in.Cases[i] {
					vals[k] = strconv.FormatInt(c, 10)
				}
				fg.printf("case %s:", strings.Join(vals, ", "))
			} else {
				fg.printf("default:")
			}
			fg.depth++
			fg.region(r, o)
			fg.depth--
		}
		fg.printf("}")
	case ir.OpLoop:
		fg.declare(in)
		body := in.Regions[0]
		for i, p := range body.Params {
			fg.printf("%s := %s", fg.name(p), a(i))
			if fg.uses[p] == 0 {
				fg.printf("_ = %s", fg.name(p))
			}
		}
		if fg.g.labels[in] {
			fg.printf("%s:", fg.label(in.Label))
		}
		fg.printf("for {")
		fg.depth++
		if !fg.g.standalone {
			// Every iteration ticks the run, which checks now and then
			// for cancellation and the wall and memory limits: a loop
			// that performs no effect is stopped too.
			fg.printf("m.r.Tick(%s.At())", fg.g.site("loop", in.Pos))
		}
		fg.region(body, nil)
		fg.depth--
		fg.printf("}")
	case ir.OpBlock:
		fg.declare(in)
		label := fg.label(in.Label)
		if fg.g.labels[in] {
			fg.printf("%s:", label)
		}
		fg.printf("for {")
		fg.depth++
		fg.region(in.Regions[0], &owner{in: in, label: label})
		if fg.g.regionFallsThrough(in.Regions[0]) && !endsInTerminator(in.Regions[0]) {
			fg.printf("break %s", label)
		}
		fg.depth--
		fg.printf("}")

	case ir.OpYield:
		if yieldTo == nil {
			return
		}
		fg.assign(yieldTo.in.Results, in.Args)
		if yieldTo.in.Op == ir.OpBlock {
			fg.printf("break %s", yieldTo.label)
		}
	case ir.OpBreak:
		target := fg.target(in)
		fg.assign(target.Results, in.Args)
		fg.printf("break %s", fg.label(in.Label))
	case ir.OpContinue:
		target := fg.target(in)
		fg.assign(target.Regions[0].Params, in.Args)
		fg.printf("continue %s", fg.label(in.Label))
	case ir.OpReturn:
		fg.ret(in.Args)
	case ir.OpAsm:
		fg.asm(in)
	case ir.OpUnreachable:
		fg.printf("m.fault(\"unreachable\", %q)", "unreachable code reached at "+in.Pos.String())
		fg.printf("panic(\"unreachable\")")

	case ir.OpLLM, ir.OpJudge, ir.OpTool, ir.OpEmit, ir.OpStateGet, ir.OpStatePut, ir.OpWait, ir.OpStop, ir.OpTrace, ir.OpExport:
		fg.effect(in)
	case ir.OpParallelEach:
		// One branch per element of the list, built when the block runs.
		site := fg.g.site(in.Str, in.Pos)
		iters := in.Args[len(in.Args)-in.Iters:]
		fg.def(in, fmt.Sprintf("rt.List(m.r.Parallel(%s.At(%s), int(%s), m.each(%s, %s)...)...)",
			site, fg.list(iters), a(0), a(1), funcName(in.Syms[0])))
	case ir.OpParallel:
		// Each branch runs on a Run of its own (and a machine around it);
		// the results come back in branch order as a list value.
		site := fg.g.site(in.Str, in.Pos)
		iters := in.Args[len(in.Args)-in.Iters:]
		var b strings.Builder
		if in.Waits == nil {
			fmt.Fprintf(&b, "rt.List(m.r.Parallel(%s.At(%s), int(%s)", site, fg.list(iters), a(0))
			for _, f := range in.Syms {
				fmt.Fprintf(&b, ", func(r *rt.Run) rt.Value { return %s(m.branch(r), %s) }", funcName(f), a(1))
			}
		} else {
			// Branches that wait get the results of those they wait for
			// as their second argument.
			fmt.Fprintf(&b, "rt.List(m.r.ParallelAfter(%s.At(%s), int(%s), [][]int{", site, fg.list(iters), a(0))
			sep := ""
			for i, w := range in.Waits {
				if len(w) == 0 {
					continue
				}
				fmt.Fprintf(&b, "%s%d: {", sep, i)
				for k, d := range w {
					if k > 0 {
						b.WriteString(", ")
					}
					b.WriteString(strconv.Itoa(d))
				}
				b.WriteString("}")
				sep = ", "
			}
			b.WriteString("}")
			for i, f := range in.Syms {
				if i < len(in.Waits) && len(in.Waits[i]) > 0 {
					fmt.Fprintf(&b, ", func(r *rt.Run, deps []rt.Value) rt.Value { return %s(m.branch(r), %s, rt.List(deps...)) }", funcName(f), a(1))
				} else {
					fmt.Fprintf(&b, ", func(r *rt.Run, _ []rt.Value) rt.Value { return %s(m.branch(r), %s) }", funcName(f), a(1))
				}
			}
		}
		b.WriteString(")...)")
		fg.def(in, b.String())
	default:
		fg.printf("panic(%q)", "unsupported operation "+in.Op.Info().Name)
	}
}

// hoist returns the package-level variable holding the result of a
// builtin call whose operands are all constants (or such calls), declaring
// it on first use; "" when in is not such a call. Builtins are pure and
// deterministic, so a constant list or object (nano-vm's allowed outputs,
// the empty options object) is built once per process, not once per run.
func (fg *funcGen) hoist(in *ir.Instr) string {
	if !fg.hoistable(in) {
		return ""
	}
	expr, _ := fg.staticExpr(in.Results[0])
	return fg.g.static(expr)
}

// hoistable reports whether hoist moves in to a package variable.
func (fg *funcGen) hoistable(in *ir.Instr) bool {
	if len(in.Results) != 1 || in.Results[0].Type != ir.Dyn {
		return false
	}
	_, ok := fg.staticExpr(in.Results[0])
	return ok
}

// staticExpr returns a Go expression computing v from constants only.
func (fg *funcGen) staticExpr(v *ir.Value) (string, bool) {
	in := v.Def
	switch {
	case in == nil:
		return "", false
	case in.Op == ir.OpConst:
		return constant(in), true
	case in.Op == ir.OpBuiltin && len(in.Results) == 1:
		args := make([]string, len(in.Args))
		for i, a := range in.Args {
			e, ok := fg.staticExpr(a)
			if !ok {
				return "", false
			}
			args[i] = e
		}
		return "rt." + builtinName(in.Sym) + "(" + strings.Join(args, ", ") + ")", true
	}
	return "", false
}

// target returns the loop or block a break or continue leaves.
func (fg *funcGen) target(in *ir.Instr) *ir.Instr {
	if t := breakTarget(in); t != nil {
		return t
	}
	panic("golang: break or continue without its target in verified IR")
}

// stackArgs is, in a standalone program, the stack pointer a call
// passes: the callee starts where the Forge program's CALL leaves the
// machine stack.
func (fg *funcGen) stackArgs(call *ir.Instr) string {
	if !fg.g.standalone {
		return ""
	}
	return fmt.Sprintf(", sp-%d", fg.act.spOff+fg.stack.Instrs[call].Depth+8)
}

// offset is the Go expression of address base plus a constant offset,
// which may be negative (base is a uint64: base + -8 would not compile).
func offset(base string, off int64) string {
	switch {
	case off == 0:
		return base
	case off < 0:
		return fmt.Sprintf("%s - %d", base, uint64(-off))
	}
	return fmt.Sprintf("%s + %d", base, off)
}

func (fg *funcGen) argList(args []*ir.Value) string {
	if len(args) == 0 {
		return ""
	}
	return ", " + fg.list(args)
}

// call writes a call, entering its call site when the callee (directly or
// through its own calls) runs steps, so their identities carry the path.
func (fg *funcGen) call(in *ir.Instr, expr string) {
	fg.def(in, expr)
}

// funcType is the Go type of functions of signature sig; those of
// standalone programs take the stack pointer first.
func (g *generator) funcType(sig *ir.Signature) string {
	ps := []string{"*machine"}
	if g.standalone {
		ps = append(ps, "uint64")
	}
	for _, p := range sig.Params {
		ps = append(ps, goType(p))
	}
	var rs []string
	for _, r := range sig.Results {
		rs = append(rs, goType(r))
	}
	res := strings.Join(rs, ", ")
	if len(rs) > 1 {
		res = "(" + res + ")"
	}
	return strings.TrimSpace("func(" + strings.Join(ps, ", ") + ") " + res)
}

// effect writes the call of the runtime's effect for in.
func (fg *funcGen) effect(in *ir.Instr) {
	site := fg.g.site(in.Str, in.Pos)
	iters := in.Args[len(in.Args)-in.Iters:]
	step := site + ".At(" + fg.list(iters) + ")"
	args := in.EffectArgs()
	argv := ""
	for _, v := range args {
		argv += ", " + fg.name(v)
	}
	method := map[ir.Op]string{
		ir.OpLLM: "LLM", ir.OpJudge: "Judge", ir.OpTool: "Tool", ir.OpEmit: "Emit",
		ir.OpStateGet: "StateGet", ir.OpStatePut: "StatePut", ir.OpWait: "Wait",
		ir.OpStop: "Stop", ir.OpTrace: "Trace", ir.OpExport: "ExportAt",
	}[in.Op]
	fg.def(in, "m.r."+method+"("+step+argv+")")
	if in.Op == ir.OpStop {
		fg.printf("panic(\"unreachable: the run stopped\")") // Stop does not return
	}
}

func cmpOp(op ir.Op) string {
	switch op {
	case ir.OpLtS, ir.OpLtU:
		return "<"
	case ir.OpLeS, ir.OpLeU:
		return "<="
	case ir.OpGtS, ir.OpGtU:
		return ">"
	}
	return ">="
}

// builtinName is the runtime function of a builtin: num.add is NumAdd.
func builtinName(name string) string {
	var b strings.Builder
	for _, part := range strings.FieldsFunc(name, func(r rune) bool { return r == '.' || r == '_' }) {
		if part == "json" {
			b.WriteString("JSON")
			continue
		}
		b.WriteString(strings.ToUpper(part[:1]) + part[1:])
	}
	return b.String()
}

// constant is the Go expression of a const instruction.
func constant(in *ir.Instr) string {
	t := in.Type
	lit := in.Lit
	switch t.Kind() {
	case ir.KindBool:
		return strconv.FormatBool(lit.Int != 0)
	case ir.KindDyn:
		switch lit.Kind {
		case ir.LitUnit:
			return "rt.Unit()"
		case ir.LitBool:
			return "rt.Bool(" + strconv.FormatBool(lit.Int != 0) + ")"
		case ir.LitNumber:
			return "rt.Number(" + floatLit(lit.Num) + ")"
		case ir.LitString:
			return "rt.String(" + strconv.Quote(lit.Str) + ")"
		}
	case ir.KindPtr:
		return "uint64(" + strconv.FormatUint(uint64(lit.Int), 10) + ")"
	case ir.KindFunc:
		return "int64(0)"
	}
	return goType(t) + "(" + strconv.FormatInt(lit.Int, 10) + ")"
}

// floatLit is a finite number as a Go literal (check rejects the others).
func floatLit(f float64) string {
	s := strconv.FormatFloat(f, 'g', -1, 64)
	if !strings.ContainsAny(s, ".eEn") {
		s += ".0"
	}
	return s
}

// load is the expression reading a value of type t at address expr.
func (fg *funcGen) load(t ir.Type, addr string) string {
	switch t.Kind() {
	case ir.KindBool:
		return fg.access("load8", addr) + " != 0"
	case ir.KindI8:
		return "int8(" + fg.access("load8", addr) + ")"
	case ir.KindI16:
		return "int16(" + fg.access("load16", addr) + ")"
	case ir.KindI32:
		return "int32(" + fg.access("load32", addr) + ")"
	case ir.KindI64, ir.KindFunc:
		return "int64(" + fg.access("load64", addr) + ")"
	}
	return fg.access("load64", addr)
}

// store writes the store of val of type t at address addr.
func (fg *funcGen) store(t ir.Type, addr, val string) {
	switch t.Kind() {
	case ir.KindBool:
		fg.printf("%s", fg.access("store8", addr+", uint8(b2i("+val+"))"))
	case ir.KindI8:
		fg.printf("%s", fg.access("store8", addr+", uint8("+val+")"))
	case ir.KindI16:
		fg.printf("%s", fg.access("store16", addr+", uint16("+val+")"))
	case ir.KindI32:
		fg.printf("%s", fg.access("store32", addr+", uint32("+val+")"))
	default:
		fg.printf("%s", fg.access("store64", addr+", uint64("+val+")"))
	}
}

// access is the call of the memory access fn (load8, store64, …) with
// args. A standalone program's accesses take the function's local copy
// of the memory slice, mem, which Go keeps in registers through a loop
// (m.mem would be read again at every access); an agent program's are
// methods of its machine.
func (fg *funcGen) access(fn, args string) string {
	if fg.g.standalone {
		return fn + "(mem, " + args + ")"
	}
	return "m." + fn + "(" + args + ")"
}
