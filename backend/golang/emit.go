package golang

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"

	"github.com/genesis-toolchain/genesis/frontend/diag"
	"github.com/genesis-toolchain/genesis/ir"
)

// funcGen translates one function.
type funcGen struct {
	g *generator
	f *ir.Func
	b bytes.Buffer

	uses     map[*ir.Value]int
	hasFrame bool
	slots    map[string]int64 // slot offsets in the frame
	depth    int              // indentation
	lastPos  diag.Pos         // of the last /*line*/ directive
}

func (fg *funcGen) printf(format string, args ...any) {
	fmt.Fprintf(&fg.b, "%s", strings.Repeat("\t", fg.depth))
	fmt.Fprintf(&fg.b, format, args...)
	fg.b.WriteByte('\n')
}

// name is the Go variable of an SSA value.
func (fg *funcGen) name(v *ir.Value) string { return "v" + strconv.Itoa(v.ID) }

// local is the Go variable of a var local.
func local(name string) string { return "l_" + ident(name) }

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
	// The frame of the slots.
	fg.slots = map[string]int64{}
	var size int64
	for _, l := range f.Locals {
		switch l.Kind {
		case ir.Var:
			fg.printf("var %s %s", local(l.Name), goType(l.Type))
			fg.printf("_ = %s", local(l.Name))
		case ir.Slot:
			a := max(l.Align, 1)
			size = (size + a - 1) &^ (a - 1)
			fg.slots[l.Name] = size
			size += l.Size
		}
	}
	if len(fg.slots) > 0 {
		fg.hasFrame = true
		fg.printf("sp := m.sp")
		fg.printf("_ = sp // restored by returns; a function may have none")
		fg.printf("frame := m.enter(%d)", size)
		fg.printf("_ = frame")
	}
	fg.region(f.Body, nil)
	if fg.g.regionFallsThrough(f.Body) && !endsInTerminator(f.Body) {
		fg.ret(nil)
	}
	fg.depth = 0
	fg.b.WriteString("}\n")
}

func endsInTerminator(r *ir.Region) bool {
	last := r.Last()
	return last != nil && last.Info().Flags&ir.Terminator != 0
}

// ret writes a return of vals, freeing the frame first.
func (fg *funcGen) ret(vals []*ir.Value) {
	if fg.hasFrame {
		fg.printf("m.sp = sp")
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
	if len(dst) == 1 {
		if dst[0] != src[0] {
			fg.printf("%s = %s", fg.name(dst[0]), fg.name(src[0]))
		}
		return
	}
	fg.printf("%s = %s", fg.list(dst), fg.list(src))
}

func (fg *funcGen) instr(in *ir.Instr, yieldTo *owner) {
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
			fg.def(in, fmt.Sprintf("frame + %d", fg.slots[in.Local]))
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
		fg.printf("\tm.fault(\"divide_by_zero\", %q)", "division by zero at "+in.Pos.String())
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
		fg.def(in, fg.load(in.Type, fmt.Sprintf("%s + %d", a(0), in.Int)))
	case ir.OpStore:
		fg.store(in.Args[0].Type, fmt.Sprintf("%s + %d", a(1), in.Int), a(0))
	case ir.OpCopy:
		fg.printf("m.copyMem(%s, %s, %d)", a(0), a(1), in.Int)
	case ir.OpGet:
		fg.def(in, local(in.Local))
	case ir.OpSet:
		fg.printf("%s = %s", local(in.Local), a(0))

	case ir.OpCall:
		fg.call(in, funcName(in.Sym)+"(m"+fg.argList(in.Args)+")")
	case ir.OpCallIndirect:
		sig := in.Args[0].Type.Sig()
		fg.call(in, fmt.Sprintf("funcTable[%s].(%s)(m%s)", a(0), funcType(sig), fg.argList(in.Args[1:])))
	case ir.OpBuiltin:
		if h := fg.hoist(in); h != "" {
			fg.def(in, h)
			if v := in.Results[0]; fg.uses[v] > 0 {
				fg.printf("_ = %s", fg.name(v)) // its uses may be hoisted too
			}
			return
		}
		fg.def(in, "rt."+builtinName(in.Sym)+"("+fg.list(in.Args)+")")

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
			fg.printf("L_%s:", ident(in.Label))
		}
		fg.printf("for {")
		fg.depth++
		fg.region(body, nil)
		fg.depth--
		fg.printf("}")
	case ir.OpBlock:
		fg.declare(in)
		label := "L_" + ident(in.Label)
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
		fg.printf("break L_%s", ident(in.Label))
	case ir.OpContinue:
		target := fg.target(in)
		fg.assign(target.Regions[0].Params, in.Args)
		fg.printf("continue L_%s", ident(in.Label))
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

func funcType(sig *ir.Signature) string {
	ps := []string{"*machine"}
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
	case ir.KindValue:
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
		return "m.load8(" + addr + ") != 0"
	case ir.KindI8:
		return "int8(m.load8(" + addr + "))"
	case ir.KindI16:
		return "int16(m.load16(" + addr + "))"
	case ir.KindI32:
		return "int32(m.load32(" + addr + "))"
	case ir.KindI64, ir.KindFunc:
		return "int64(m.load64(" + addr + "))"
	}
	return "m.load64(" + addr + ")"
}

// store writes the store of val of type t at address addr.
func (fg *funcGen) store(t ir.Type, addr, val string) {
	switch t.Kind() {
	case ir.KindBool:
		fg.printf("m.store8(%s, uint8(b2i(%s)))", addr, val)
	case ir.KindI8:
		fg.printf("m.store8(%s, uint8(%s))", addr, val)
	case ir.KindI16:
		fg.printf("m.store16(%s, uint16(%s))", addr, val)
	case ir.KindI32:
		fg.printf("m.store32(%s, uint32(%s))", addr, val)
	default:
		fg.printf("m.store64(%s, uint64(%s))", addr, val)
	}
}
