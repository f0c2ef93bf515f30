package ir

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/genesis-toolchain/genesis/diag"
	"github.com/genesis-toolchain/genesis/internal/parallel"
)

// VerifyCode is the diagnostic code of IR verification errors.
const VerifyCode = "I002"

// Verify checks that m is well formed and returns a diagnostic for each
// violation, in program order, positioned at the offending instruction's
// source position (its function's when it has none) and naming it. The
// rules are listed in docs/ir.md; in short:
//
//   - symbols (functions and data), locals, labels and named values are
//     unique in their scope; data and slot alignments are powers of two;
//   - every operand is defined before its use, in the same region or an
//     enclosing one (structured dominance), in the same function;
//   - operand and result types follow the op table's rules; calls, builtins
//     and indirect calls match their signatures;
//   - break targets an enclosing loop or block, continue an enclosing loop,
//     with the values they expect; yield appears only in if, switch and
//     block regions and yields their result types; return returns the
//     function's result types;
//   - a terminator is the last instruction of its region, and a region
//     that must produce values (or a loop body) ends in one;
//   - effects have a step name, i64 iteration counters and an identity
//     (name and position) unique in the module.
func Verify(m *Module) diag.List {
	v := &verifier{m: m, funcs: m.FuncMap(), data: map[string]bool{}, steps: map[string]bool{}, syms: map[string]bool{}}
	v.addData(m.Data)
	for _, f := range m.Funcs {
		v.symbol(f.Name, f.Pos)
	}
	// Functions are verified independently, concurrently in a large
	// module; only the uniqueness of step identities spans functions, and
	// is checked when the results are joined, in module order, so the
	// diagnostics are exactly those of one pass over the functions.
	fvs := make([]*verifier, len(m.Funcs))
	parallel.Do(len(m.Funcs), len(m.Funcs)/32, func(i int) {
		fvs[i] = v.verifyFunc(m.Funcs[i])
	})
	seen := map[string]bool{} // step identities of the functions before
	for _, fv := range fvs {
		v.join(fv, seen)
	}
	return v.diags
}

// addData checks the data objects ds and adds them to the symbols.
func (v *verifier) addData(ds []*Data) {
	for _, d := range ds {
		v.data[d.Name] = true
		v.symbol(d.Name, d.Pos)
		if d.Align < 0 || d.Align > 1 && d.Align&(d.Align-1) != 0 {
			v.errorf(d.Pos, "data %s: alignment %d is not a power of two", sigilName('@', d.Name), d.Align)
		}
	}
}

// verifyFunc verifies f with the module-level tables of v, in a
// verifier of its own (verifyFunc only reads v).
func (v *verifier) verifyFunc(f *Func) *verifier {
	fv := &verifier{m: v.m, funcs: v.funcs, data: v.data, steps: map[string]bool{}}
	fv.fn(f)
	return fv
}

// join appends the diagnostics of fv, a function's verifier, to v's,
// with those of its step identities that a function before it (seen)
// already used, each where the function met it; it then adds the
// function's identities to seen.
func (v *verifier) join(fv *verifier, seen map[string]bool) {
	ds := fv.diags
	inserted := 0
	for _, u := range fv.stepLog {
		if seen[u.id] && !u.dupInFunc {
			sv := *fv
			sv.diags = nil
			sv.stepNotUnique(u.in)
			ds = slices.Insert(ds, u.at+inserted, sv.diags...)
			inserted++
		}
	}
	for _, u := range fv.stepLog {
		seen[u.id] = true
	}
	v.diags = append(v.diags, ds...)
}

// A FuncVerifier verifies the functions of a module one at a time, as a
// frontend builds them, for a caller that drops each function's body
// once it is verified (genesisc check), so that the module is never held
// whole. The diagnostics of all its calls are those Verify gives the
// whole module, in the same order when the module's data all exist
// when NewFuncVerifier is called (a data object added later is checked
// with the first function verified after).
type FuncVerifier struct {
	v     *verifier
	ndata int             // the data objects of the module checked so far
	seen  map[string]bool // the step identities of the functions verified
}

// NewFuncVerifier returns a verifier of m's functions. Every function of
// m must be declared (with its signature, NewFunc) before: calls are
// checked against the functions m holds now. Data may be added between
// calls of Verify.
func NewFuncVerifier(m *Module) *FuncVerifier {
	v := &verifier{m: m, funcs: m.FuncMap(), data: map[string]bool{}, syms: map[string]bool{}}
	v.addData(m.Data)
	for _, f := range m.Funcs {
		v.symbol(f.Name, f.Pos)
	}
	return &FuncVerifier{v: v, ndata: len(m.Data), seen: map[string]bool{}}
}

// Verify verifies f, a function of the module whose body is complete,
// and returns its diagnostics: those of the module's functions when this
// is the first call, those of the data added to the module since the
// last call, and f's own. f's body may be dropped after (its signature
// must stay, for the calls of functions verified later).
func (fv *FuncVerifier) Verify(f *Func) diag.List {
	v := fv.v
	v.addData(v.m.Data[fv.ndata:])
	fv.ndata = len(v.m.Data)
	v.join(v.verifyFunc(f), fv.seen)
	ds := v.diags
	v.diags = nil
	return ds
}

// stepUse is an effect's step identity met while verifying a function.
type stepUse struct {
	id        string
	in        *Instr
	at        int  // the function's diagnostics before it
	dupInFunc bool // already met in the same function, and reported
}

func (v *verifier) stepNotUnique(in *Instr) {
	v.instrErrorf(in, "step %q at %s is not unique: another effect has the same name and position", in.Str, in.Pos)
}

// VerifyLowered verifies a module a frontend just lowered: its
// diagnostics, if any, re-coded as code (the frontend's internal-error
// code), since lowered IR that does not verify is a bug of the frontend.
func VerifyLowered(m *Module, code string) diag.List {
	var out diag.List
	for _, d := range Verify(m) {
		out = append(out, diag.Diagnostic{Pos: d.Pos, Severity: diag.Error, Code: code,
			Msg: "internal compiler error: the lowered IR does not verify: " + d.Msg})
	}
	return out
}

type regionKind uint8

const (
	rkFunc  regionKind = iota // a function body: falls off as return
	rkYield                   // if, switch, block: falls off as yield
	rkLoop                    // loop body: must not fall off
)

type verifier struct {
	m     *Module
	funcs map[string]*Func // m's functions by name
	data  map[string]bool  // m's data names
	f     *Func
	diags diag.List
	syms  map[string]bool
	steps map[string]bool // the step identities of the function
	// stepLog lists the function's effects, for the check across
	// functions.
	stepLog []stepUse
	scope   map[*Value]bool
	names   map[string]bool
	pnames  map[*Value]string // printed names, for messages
	labels  map[string]bool
	// targets are the enclosing loops and blocks, innermost last.
	targets []*Instr
}

func (v *verifier) errorf(pos diag.Pos, format string, args ...any) {
	if pos == (diag.Pos{}) && v.f != nil {
		pos = v.f.Pos
	}
	if pos.File == "" {
		pos = diag.Pos{File: v.m.SourceFile()}
	}
	v.diags.Errorf(pos, VerifyCode, format, args...)
}

// instrErrorf reports a problem with in, naming it.
func (v *verifier) instrErrorf(in *Instr, format string, args ...any) {
	p := printer{f: v.f, names: v.pnames}
	p.header(in)
	v.errorf(in.Pos, "%s, `%s`: %s", sigilName('@', v.f.Name), strings.TrimSuffix(p.b.String(), " {"), fmt.Sprintf(format, args...))
}

func (v *verifier) symbol(name string, pos diag.Pos) {
	if name == "" {
		v.errorf(pos, "empty symbol name")
	}
	if v.syms[name] {
		v.errorf(pos, "symbol %s is defined twice", sigilName('@', name))
	}
	v.syms[name] = true
}

func (v *verifier) fn(f *Func) {
	v.f = f
	v.scope, v.names, v.labels, v.targets = map[*Value]bool{}, map[string]bool{}, map[string]bool{}, nil
	v.pnames = nameValues(f)
	for _, p := range f.Params {
		v.define(nil, p)
		if !p.Type.IsValid() {
			v.errorf(f.Pos, "%s: parameter %s has no type", sigilName('@', f.Name), sigilName('%', p.Name))
		}
	}
	for _, t := range f.Results {
		if !t.IsValid() {
			v.errorf(f.Pos, "%s: invalid result type", sigilName('@', f.Name))
		}
	}
	locals := map[string]bool{}
	for _, l := range f.Locals {
		where := fmt.Sprintf("%s, local %s", sigilName('@', f.Name), sigilName('$', l.Name))
		if locals[l.Name] {
			v.errorf(l.Pos, "%s is declared twice", where)
		}
		locals[l.Name] = true
		switch l.Kind {
		case Var:
			if !l.Type.IsValid() {
				v.errorf(l.Pos, "%s has no type", where)
			}
		case Slot:
			if l.Size < 0 {
				v.errorf(l.Pos, "%s has negative size %d", where, l.Size)
			}
			if l.Align < 1 || l.Align&(l.Align-1) != 0 {
				v.errorf(l.Pos, "%s: alignment %d is not a power of two", where, l.Align)
			}
		}
	}
	if f.Body == nil {
		v.errorf(f.Pos, "%s has no body", sigilName('@', f.Name))
		return
	}
	if f.Body.Parent != nil {
		v.errorf(f.Pos, "%s: the body region has a parent instruction", sigilName('@', f.Name))
	}
	v.region(f.Body, rkFunc, f.Results, "the function body")
}

// define adds x, defined by in (nil for parameters), to the scope.
func (v *verifier) define(in *Instr, x *Value) {
	if x.Name != "" {
		if v.names[x.Name] {
			if in != nil {
				v.instrErrorf(in, "value %s is defined twice", sigilName('%', x.Name))
			} else {
				v.errorf(v.f.Pos, "%s: value %s is defined twice", sigilName('@', v.f.Name), sigilName('%', x.Name))
			}
		}
		v.names[x.Name] = true
	}
	v.scope[x] = true
}

// region checks r, whose falling off the end means kind, given the types
// it must produce; what names the region in messages.
func (v *verifier) region(r *Region, kind regionKind, results []Type, what string) {
	var defined []*Value
	for _, p := range r.Params {
		v.define(nil, p)
		defined = append(defined, p)
	}
	for i, in := range r.Instrs {
		if i > 0 && r.Instrs[i-1].Op.IsTerminator() {
			v.instrErrorf(in, "unreachable: follows the terminator %s", r.Instrs[i-1].Op)
		}
		if in.Parent != r {
			v.instrErrorf(in, "the instruction's Parent is not its region")
		}
		v.instr(in, kind, results)
		for _, x := range in.Results {
			if x.Def != in {
				v.instrErrorf(in, "result %s does not name the instruction as its definition", v.val(x))
			}
			v.define(in, x)
			defined = append(defined, x)
		}
	}
	if last := r.Last(); last == nil || !last.Op.IsTerminator() {
		pos := v.f.Pos
		if last != nil {
			pos = last.Pos
		} else if r.Parent != nil {
			pos = r.Parent.Pos
		}
		switch {
		case kind == rkLoop:
			v.errorf(pos, "%s: %s can reach its end; end it with continue, break or return", sigilName('@', v.f.Name), what)
		case len(results) > 0 && kind == rkFunc:
			v.errorf(pos, "%s: %s can reach its end without returning %s", sigilName('@', v.f.Name), what, typeList(results))
		case len(results) > 0:
			v.errorf(pos, "%s: %s can reach its end without yielding %s", sigilName('@', v.f.Name), what, typeList(results))
		}
	}
	for _, x := range defined {
		delete(v.scope, x)
	}
}

// val returns the printed name of x in the function being verified.
func (v *verifier) val(x *Value) string {
	p := printer{f: v.f, names: v.pnames}
	return p.val(x)
}

// FormatValue returns the printed name of x in f.
func FormatValue(f *Func, x *Value) string {
	p := printer{f: f, names: nameValues(f)}
	return p.val(x)
}

func (v *verifier) instr(in *Instr, kind regionKind, results []Type) {
	info := in.Info()
	if info.Name == "" {
		v.instrErrorf(in, "invalid op %d", in.Op)
		return
	}
	for i, a := range in.Args {
		if a == nil {
			v.instrErrorf(in, "operand %d is missing", i+1)
			return
		}
		if !v.scope[a] {
			v.instrErrorf(in, "operand %s is not defined before this instruction in its region or an enclosing one", v.val(a))
			return
		}
	}
	if info.Regions >= 0 && len(in.Regions) != info.Regions {
		v.instrErrorf(in, "has %d regions, want %d", len(in.Regions), info.Regions)
		return
	}
	for _, r := range in.Regions {
		if r == nil || r.Parent != in {
			v.instrErrorf(in, "a region's Parent is not the instruction")
			return
		}
	}
	if !info.Variadic {
		args := in.Args
		if info.Flags&Effect != 0 {
			if in.Iters < 0 || in.Iters > len(in.Args) {
				v.instrErrorf(in, "has %d iteration counters but %d operands", in.Iters, len(in.Args))
				return
			}
			args = in.EffectArgs()
		}
		if !v.args(in, args, info.Args) {
			return
		}
	}
	if info.Result != RExplicit {
		if want, ok := inferResults(v.f, in); ok && !typesEqual(want, resultTypes(in)) {
			v.instrErrorf(in, "results are %s, want %s", typeList(resultTypes(in)), typeList(want))
		}
	}
	for _, x := range in.Results {
		if !x.Type.IsValid() {
			v.instrErrorf(in, "a result has no type")
		}
	}
	v.check(in, kind, results)
}

// args checks the operand count and each operand against its constraint.
func (v *verifier) args(in *Instr, args []*Value, cs []Constraint) bool {
	if len(args) != len(cs) {
		v.instrErrorf(in, "has %s, want %d", plural(len(args), "operand"), len(cs))
		return false
	}
	for i, a := range args {
		if !cs[i].Accepts(a.Type, args[0].Type) {
			v.instrErrorf(in, "operand %d (%s) has type %s, want %s", i+1, v.val(a), a.Type, cs[i])
			return false
		}
	}
	return true
}

// matchTypes checks that the types of vals are want; what names them.
func (v *verifier) matchTypes(in *Instr, what string, vals []*Value, want []Type) {
	got := make([]Type, len(vals))
	for i, x := range vals {
		got[i] = x.Type
	}
	if !typesEqual(got, want) {
		v.instrErrorf(in, "%s %s, want %s", what, typeList(got), typeList(want))
	}
}

func resultTypes(in *Instr) []Type {
	ts := make([]Type, len(in.Results))
	for i, x := range in.Results {
		ts[i] = x.Type
	}
	return ts
}

// target finds the enclosing loop or block labelled label.
func (v *verifier) target(label string) *Instr {
	for i := len(v.targets) - 1; i >= 0; i-- {
		if v.targets[i].Label == label {
			return v.targets[i]
		}
	}
	return nil
}

// check applies the op-specific rules.
func (v *verifier) check(in *Instr, kind regionKind, results []Type) {
	switch in.Op {
	case OpConst:
		v.constant(in)
	case OpFuncRef:
		callee := v.funcs[in.Sym]
		switch {
		case callee == nil:
			v.instrErrorf(in, "no function %s", sigilName('@', in.Sym))
		case callee.Type() != in.Type:
			v.instrErrorf(in, "%s has type %s, not %s", sigilName('@', in.Sym), callee.Type(), in.Type)
		}
	case OpAddrOf:
		if in.Local != "" {
			if l := v.f.Local(in.Local); l == nil || l.Kind != Slot {
				v.instrErrorf(in, "no slot %s in %s", sigilName('$', in.Local), sigilName('@', v.f.Name))
			}
		} else if !v.data[in.Sym] {
			v.instrErrorf(in, "no data %s", sigilName('@', in.Sym))
		}
	case OpSext, OpZext:
		if !in.Type.IsInt() || in.Type.Bits() <= in.Args[0].Type.Bits() {
			v.instrErrorf(in, "%s to %s: the target must be a wider integer type", in.Args[0].Type, in.Type)
		}
	case OpTrunc:
		if !in.Type.IsInt() && in.Type != Bool || in.Type.Bits() >= in.Args[0].Type.Bits() {
			v.instrErrorf(in, "%s to %s: the target must be a narrower integer type or bool", in.Args[0].Type, in.Type)
		}
	case OpLoad, OpStore:
		if in.Op == OpLoad && !in.Type.Storable() {
			v.instrErrorf(in, "type %s has no memory layout", in.Type)
		}
		if in.Int < math.MinInt32 || in.Int > math.MaxInt32 {
			v.instrErrorf(in, "offset %d does not fit in 32 signed bits", in.Int)
		}
	case OpCopy:
		if in.Int < 0 || in.Int > math.MaxUint32 {
			v.instrErrorf(in, "size %d is not in 0..2^32-1", in.Int)
		}
	case OpGet, OpSet:
		l := v.f.Local(in.Local)
		if l == nil || l.Kind != Var {
			v.instrErrorf(in, "no var %s in %s", sigilName('$', in.Local), sigilName('@', v.f.Name))
		} else if in.Op == OpSet && in.Args[0].Type != l.Type {
			v.instrErrorf(in, "assigns %s to a var of type %s", in.Args[0].Type, l.Type)
		}
	case OpCall:
		callee := v.funcs[in.Sym]
		if callee == nil {
			v.instrErrorf(in, "no function %s", sigilName('@', in.Sym))
			return
		}
		ps := callee.Type().Sig()
		v.matchTypes(in, "arguments are", in.Args, ps.Params)
		if !typesEqual(resultTypes(in), ps.Results) {
			v.instrErrorf(in, "results are %s, but %s returns %s", typeList(resultTypes(in)), sigilName('@', in.Sym), typeList(ps.Results))
		}
	case OpCallIndirect:
		if len(in.Args) == 0 || in.Args[0].Type.Kind() != KindFunc {
			v.instrErrorf(in, "the callee must be a function reference")
			return
		}
		sig := in.Args[0].Type.Sig()
		v.matchTypes(in, "arguments are", in.Args[1:], sig.Params)
		if !typesEqual(resultTypes(in), sig.Results) {
			v.instrErrorf(in, "results are %s, but the callee returns %s", typeList(resultTypes(in)), typeList(sig.Results))
		}
	case OpBuiltin:
		b, ok := LookupBuiltin(in.Sym)
		if !ok {
			v.instrErrorf(in, "no builtin %s", in.Sym)
			return
		}
		v.matchTypes(in, "arguments are", in.Args, b.Params)
	case OpIf:
		v.region(in.Regions[0], rkYield, resultTypes(in), "the then region")
		v.region(in.Regions[1], rkYield, resultTypes(in), "the else region")
	case OpLoop, OpBlock:
		v.label(in)
		body := in.Regions[0]
		if in.Op == OpLoop {
			if len(body.Params) != len(in.Args) {
				v.instrErrorf(in, "has %d loop parameters but %d initial values", len(body.Params), len(in.Args))
				return
			}
			for i, p := range body.Params {
				if p.Type != in.Args[i].Type {
					v.instrErrorf(in, "loop parameter %s has type %s, its initial value %s", v.val(p), p.Type, in.Args[i].Type)
				}
			}
		} else if len(body.Params) > 0 {
			v.instrErrorf(in, "a block's region has no parameters")
		}
		v.targets = append(v.targets, in)
		k := rkYield
		if in.Op == OpLoop {
			k = rkLoop
		}
		v.region(body, k, resultTypes(in), "the body of "+sigilName('^', in.Label))
		v.targets = v.targets[:len(v.targets)-1]
	case OpSwitch:
		if len(in.Regions) != len(in.Cases)+1 {
			v.instrErrorf(in, "has %d regions for %d cases and a default", len(in.Regions), len(in.Cases))
			return
		}
		seen := map[int64]bool{}
		for _, vals := range in.Cases {
			if len(vals) == 0 {
				v.instrErrorf(in, "a case has no values")
			}
			for _, c := range vals {
				if Normalize(in.Args[0].Type, c) != c {
					v.instrErrorf(in, "case %d is not normalized to %s", c, in.Args[0].Type)
				}
				if seen[c] {
					v.instrErrorf(in, "case %d appears twice", c)
				}
				seen[c] = true
			}
		}
		for i, r := range in.Regions {
			what := "the default region"
			if i < len(in.Cases) && len(in.Cases[i]) > 0 {
				what = fmt.Sprintf("the region of case %d", in.Cases[i][0])
			}
			v.region(r, rkYield, resultTypes(in), what)
		}
	case OpYield:
		if kind != rkYield {
			v.instrErrorf(in, "yield outside an if, switch or block region (use return or continue)")
			return
		}
		v.matchTypes(in, "yields", in.Args, results)
	case OpBreak, OpContinue:
		t := v.target(in.Label)
		switch {
		case t == nil:
			v.instrErrorf(in, "no enclosing loop or block %s", sigilName('^', in.Label))
		case in.Op == OpContinue && t.Op != OpLoop:
			v.instrErrorf(in, "%s is a block, not a loop", sigilName('^', in.Label))
		case in.Op == OpContinue:
			ps := make([]Type, len(t.Regions[0].Params))
			for i, p := range t.Regions[0].Params {
				ps[i] = p.Type
			}
			v.matchTypes(in, "passes", in.Args, ps)
		default:
			v.matchTypes(in, "passes", in.Args, resultTypes(t))
		}
	case OpReturn:
		v.matchTypes(in, "returns", in.Args, v.f.Results)
	case OpLLM, OpJudge, OpTool, OpEmit, OpStateGet, OpStatePut, OpWait, OpStop, OpTrace, OpParallel, OpParallelEach, OpExport:
		if in.Op == OpParallelEach && len(in.Syms) != 1 {
			v.instrErrorf(in, "parallel.each needs exactly one branch function, not %d", len(in.Syms))
		}
		if in.Op == OpParallel || in.Op == OpParallelEach {
			if len(in.Syms) == 0 {
				v.instrErrorf(in, "parallel needs at least one branch function")
			}
			if len(in.Waits) > len(in.Syms) {
				v.instrErrorf(in, "parallel has waits for %d branches, but %d branches", len(in.Waits), len(in.Syms))
			}
			for i, name := range in.Syms {
				var waits []int
				if i < len(in.Waits) {
					waits = in.Waits[i]
				}
				for k, w := range waits {
					if w < 0 || w >= i || k > 0 && w <= waits[k-1] {
						v.instrErrorf(in, "branch %d (%s) waits for branch %d: a branch waits for branches before it, in ascending order, each once", i, sigilName('@', name), w)
					}
				}
				want := FuncType([]Type{Dyn}, []Type{Dyn})
				if len(waits) > 0 {
					want = FuncType([]Type{Dyn, Dyn}, []Type{Dyn})
				}
				switch f := v.funcs[name]; {
				case f == nil:
					v.instrErrorf(in, "no function %s", sigilName('@', name))
				case f.Type() != want:
					v.instrErrorf(in, "branch %s has type %s, not %s", sigilName('@', name), f.Type(), want)
				}
			}
		}
		if in.Str == "" {
			v.instrErrorf(in, "an effect needs a step name")
		}
		for _, it := range in.IterArgs() {
			if it.Type != I64 {
				v.instrErrorf(in, "iteration counter %s has type %s, want i64", v.val(it), it.Type)
			}
		}
		id := in.Str + "\x00" + in.Pos.String()
		u := stepUse{id: id, in: in, at: len(v.diags), dupInFunc: v.steps[id]}
		if u.dupInFunc {
			v.stepNotUnique(in)
		}
		v.steps[id] = true
		v.stepLog = append(v.stepLog, u)
	case OpAsm:
		v.asm(in)
	}
}

// label checks that a loop's or block's label is present and unique in
// the function.
func (v *verifier) label(in *Instr) {
	if in.Label == "" {
		v.instrErrorf(in, "a %s needs a label", in.Op)
	} else if v.labels[in.Label] {
		v.instrErrorf(in, "label %s is used twice in %s", sigilName('^', in.Label), sigilName('@', v.f.Name))
	}
	v.labels[in.Label] = true
}

func (v *verifier) constant(in *Instr) {
	t, l := in.Type, in.Lit
	switch {
	case t.IsInt() || t == Bool || t == Ptr:
		if l.Kind != LitInt {
			v.instrErrorf(in, "a %s constant needs an integer literal", t)
		} else if Normalize(t, l.Int) != l.Int {
			v.instrErrorf(in, "constant %d is not normalized to %s", l.Int, t)
		}
	case t == Dyn:
		if l.Kind == LitInt {
			v.instrErrorf(in, "a value constant is unit, a bool, a number or a string")
		}
		if l.Kind == LitNumber && (math.IsInf(l.Num, 0) || math.IsNaN(l.Num)) {
			v.instrErrorf(in, "a number constant must be finite")
		}
	default:
		v.instrErrorf(in, "no constants of type %s", t)
	}
}

func (v *verifier) asm(in *Instr) {
	if len(in.Regs) != len(in.Args)+len(in.Results) {
		v.instrErrorf(in, "has %d registers for %d bindings", len(in.Regs), len(in.Args)+len(in.Results))
		return
	}
	ins, outs := map[int]bool{}, map[int]bool{}
	for i, r := range in.Regs {
		if r < 0 || r > 255 {
			v.instrErrorf(in, "register r%d does not exist", r)
			continue
		}
		set, dir := ins, "in"
		var t Type
		if i < len(in.Args) {
			t = in.Args[i].Type
		} else {
			set, dir, t = outs, "out", in.Results[i-len(in.Args)].Type
		}
		if set[r] {
			v.instrErrorf(in, "register r%d has two %s bindings", r, dir)
		}
		set[r] = true
		if !t.Storable() {
			v.instrErrorf(in, "the %s binding of r%d has type %s, which does not fit a register", dir, r, t)
		}
	}
}
