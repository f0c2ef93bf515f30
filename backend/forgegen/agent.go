package forgegen

import (
	"math"
	"path/filepath"

	"github.com/genesis-toolchain/genesis/diag"
	"github.com/genesis-toolchain/genesis/forge/agentabi"
	"github.com/genesis-toolchain/genesis/ir"
)

// Agent programs (docs/backend-forge.md, "Agent programs"): a module that
// uses dynamic values, builtins or effects compiles to the host ABI of
// package forge/agentabi. Its dynamic values are handles in ordinary
// registers; a builtin is one HCALL; an effect is a request frame sent
// on its operation's channel and the RECV of the reply. Everything that
// numbers (constants, builtins, positions, sites) is decided by a pass
// over the whole module before the functions compile concurrently, so
// that the numbering follows the module's order and the functions only
// read it.

// agentProgram is what the pass over an agent program found.
type agentProgram struct {
	meta agentabi.Metadata
	// consts is the handle of each dyn constant, hcalls the HCALL
	// immediate of each builtin, effects the request of each effect.
	consts  map[*ir.Instr]uint64
	hcalls  map[*ir.Instr]uint32
	effects map[*ir.Instr]*effectReq
	// prefixes are the request prefixes, data of the program.
	prefixes []dataDef
	ret      string // the label of the HALT that branch calls return to
}

// effectReq is how one effect instruction makes its request.
type effectReq struct {
	op     agentabi.Op
	prefix string // the label of its constant prefix
	size   int64  // the prefix's bytes
}

// replyBuffer is the size of the buffer a reply is received into: the
// reply rounded up to words.
const replyBuffer = (agentabi.ReplySize + 7) &^ 7

// isAgentModule reports whether m is an agent program: whether it uses
// a dynamic value, a builtin or an effect anywhere.
func isAgentModule(m *ir.Module) bool {
	for _, f := range m.Funcs {
		for _, p := range f.Params {
			if p.Type == ir.Dyn {
				return true
			}
		}
		for _, t := range f.Results {
			if t == ir.Dyn {
				return true
			}
		}
		for _, l := range f.Locals {
			if l.Kind == ir.Var && l.Type == ir.Dyn {
				return true
			}
		}
		found := false
		if f.Body != nil {
			ir.Walk(f.Body, func(in *ir.Instr) {
				if found {
					return
				}
				if in.Op == ir.OpBuiltin || in.Op.IsEffect() {
					found = true
					return
				}
				for _, r := range in.Results {
					if r.Type == ir.Dyn {
						found = true
						return
					}
				}
			})
		}
		if found {
			return true
		}
	}
	return false
}

// prepareAgent numbers the constants, builtins, positions and sites of
// an agent program, in module order, and names its request prefixes and
// its return HALT. It runs before the functions compile (c.names is
// still written to) and reports what the ABI cannot express.
func (c *compiler) prepareAgent(main *ir.Func) {
	a := &agentProgram{
		consts:  map[*ir.Instr]uint64{},
		hcalls:  map[*ir.Instr]uint32{},
		effects: map[*ir.Instr]*effectReq{},
	}
	c.agent = a
	a.meta.Program = c.opts.Program
	if a.meta.Program == "" && c.file != "" {
		a.meta.Program = filepath.Base(c.file)
	}
	a.meta.ProgramHash = c.opts.ProgramHash
	if a.meta.ProgramHash == "" {
		a.meta.ProgramHash = ir.ProgramHash(c.m)
	}
	a.meta.Input = len(main.Params) == 1
	a.meta.Result = len(main.Results) > 0 && main.Results[0] == ir.Dyn
	a.ret = c.names.unique("__return")
	a.meta.Return = a.ret

	type constKey struct {
		kind ir.LitKind
		bits uint64
		str  string
	}
	consts := map[constKey]uint64{}
	builtins := map[string]int{}
	positions := map[agentabi.Pos]int{}
	sites := map[string]int{}
	prefixes := map[string]string{}
	base := func(file string) string {
		if file == "" {
			return ""
		}
		return filepath.Base(file)
	}
	for _, f := range c.m.Funcs {
		if f.Body == nil {
			continue
		}
		ir.Walk(f.Body, func(in *ir.Instr) {
			switch {
			case in.Op == ir.OpConst && in.Type == ir.Dyn:
				k := constKey{kind: in.Lit.Kind}
				var v agentabi.Constant
				switch in.Lit.Kind {
				case ir.LitUnit:
					v.Kind = "unit"
				case ir.LitBool:
					k.bits = uint64(in.Lit.Int)
					v.Kind, v.Bool = "bool", in.Lit.Int != 0
				case ir.LitNumber:
					if math.IsNaN(in.Lit.Num) || math.IsInf(in.Lit.Num, 0) {
						c.diags.Errorf(posOr(in.Pos, f.Pos), codeCodegen, "in function @%s: the number constant %v is not finite", f.Name, in.Lit.Num)
						return
					}
					k.bits = math.Float64bits(in.Lit.Num)
					v.Kind, v.Number = "number", in.Lit.Num
				case ir.LitString:
					k.str = in.Lit.Str
					v.Kind, v.String = "string", in.Lit.Str
				default:
					c.diags.Errorf(posOr(in.Pos, f.Pos), codeInternal, "internal error: in function @%s: a dyn constant of literal kind %d", f.Name, in.Lit.Kind)
					return
				}
				h, ok := consts[k]
				if !ok {
					a.meta.Constants = append(a.meta.Constants, v)
					h = agentabi.Handle(uint64(len(a.meta.Constants)))
					consts[k] = h
				}
				a.consts[in] = h
			case in.Op == ir.OpBuiltin:
				b, ok := builtins[in.Sym]
				if !ok {
					b = len(a.meta.Builtins)
					if b >= agentabi.MaxBuiltins {
						c.diags.Errorf(posOr(in.Pos, f.Pos), codeCodegen, "in function @%s: the program calls more than %d builtins", f.Name, agentabi.MaxBuiltins)
						return
					}
					a.meta.Builtins = append(a.meta.Builtins, in.Sym)
					builtins[in.Sym] = b
				}
				pos := 0
				if bi, _ := ir.LookupBuiltin(in.Sym); bi != nil && bi.Fallible && in.Pos.Line > 0 && in.Pos.File != "" {
					// As backend/golang's rt.ErrorAt: the file's base name.
					p := agentabi.Pos{File: filepath.Base(in.Pos.File), Line: in.Pos.Line, Col: in.Pos.Col}
					if pos = positions[p]; pos == 0 {
						if len(a.meta.Positions)+1 >= agentabi.MaxPositions {
							c.diags.Errorf(posOr(in.Pos, f.Pos), codeCodegen, "in function @%s: more than %d fallible builtin calls at distinct positions", f.Name, agentabi.MaxPositions-1)
							return
						}
						a.meta.Positions = append(a.meta.Positions, p)
						pos = len(a.meta.Positions)
						positions[p] = pos
					}
				}
				a.hcalls[in] = agentabi.HostCallImm(b, pos)
			case in.Op.IsEffect():
				op, ok := agentabi.OpNamed(in.Op.Info().Name)
				if !ok {
					c.diags.Errorf(posOr(in.Pos, f.Pos), codeInternal, "internal error: in function @%s: effect %s has no operation in the agent ABI", f.Name, in.Op)
					return
				}
				if in.Iters > agentabi.MaxIters {
					c.diags.Errorf(posOr(in.Pos, f.Pos), codeCodegen, "in function @%s: step %q is nested in %d loops, more than the %d iteration counters a step identity holds", f.Name, in.Str, in.Iters, agentabi.MaxIters)
					return
				}
				if n := len(in.Args) - in.Iters; n != op.Args() {
					c.diags.Errorf(posOr(in.Pos, f.Pos), codeInternal, "internal error: in function @%s: %s with %d operands, the ABI's request has %d", f.Name, in.Op, n, op.Args())
					return
				}
				// A step's site is its name and position, as on the Go
				// target (rt.NewSite with the file's base name): steps
				// of one name and position share it. A parallel block
				// has a site of its own, which lists its branches.
				site := agentabi.Site{Name: in.Str, File: base(in.Pos.File), Line: in.Pos.Line, Col: in.Pos.Col}
				var idx int
				if in.Op == ir.OpParallel || in.Op == ir.OpParallelEach {
					site.Branches = append([]string(nil), in.Syms...)
					if len(in.Waits) > 0 {
						site.Waits = in.Waits
					}
					idx = len(a.meta.Sites)
					a.meta.Sites = append(a.meta.Sites, site)
				} else {
					key := in.Str + "\x00" + in.Pos.String()
					var ok bool
					if idx, ok = sites[key]; !ok {
						idx = len(a.meta.Sites)
						a.meta.Sites = append(a.meta.Sites, site)
						sites[key] = idx
					}
				}
				p := agentabi.RequestPrefix(op, idx, in.Iters)
				label, ok := prefixes[string(p)]
				if !ok {
					label = c.names.unique("__request")
					prefixes[string(p)] = label
					a.prefixes = append(a.prefixes, dataDef{name: label, align: 1, bytes: p})
				}
				a.effects[in] = &effectReq{op: op, prefix: label, size: int64(len(p))}
			}
		})
	}
	if len(a.meta.Sites) > math.MaxInt32 {
		c.diags.Errorf(diag.Pos{File: c.file}, codeCodegen, "the program has %d step sites, more than %d", len(a.meta.Sites), math.MaxInt32)
	}
}

// posOr returns p, or def when p is the zero position.
func posOr(p, def diag.Pos) diag.Pos {
	if p == (diag.Pos{}) {
		return def
	}
	return p
}

// effectBuffer returns the size of the buffer in f's frame that its
// effects' words go out of and their replies come into: 0 when f has no
// effect.
func (l *fnLower) effectBuffer() int64 {
	if l.c.agent == nil {
		return 0
	}
	var size int64
	ir.Walk(l.f.Body, func(in *ir.Instr) {
		if e := l.c.agent.effects[in]; e != nil {
			size = max(size, replyBuffer, 8*int64(in.Iters+e.op.Args()))
		}
	})
	return size
}

// lowerBuiltin lowers a builtin call to an HCALL: its operands in r0–r2,
// its result in r0, which is the only register it changes, so values
// stay in the other registers across it.
func (l *fnLower) lowerBuiltin(in *ir.Instr) {
	imm, ok := l.c.agent.hcalls[in]
	if !ok {
		l.errorf(in.Pos, codeInternal, "builtin %s was not numbered", in.Sym)
		return
	}
	if len(in.Args) > 3 || len(in.Results) > 1 {
		l.errorf(in.Pos, codeInternal, "builtin %s with %d operands and %d results, more than an HCALL passes", in.Sym, len(in.Args), len(in.Results))
		return
	}
	h := &minst{op: mHCall, imm: int64(imm)}
	h.clob.add(0)
	for i, s := range l.args(in.Args) {
		l.move(reg(i), s)
		h.uses = append(h.uses, reg(i))
	}
	if len(in.Results) == 1 {
		h.defs = []reg{0}
	}
	l.emit(h)
	if len(in.Results) == 1 {
		l.move(l.def(in.Results[0]), 0)
	}
}

// lowerEffect lowers an effect to its request and reply frames: the
// constant prefix SENT from the program's data, the iteration counters
// and operands stored into the buffer at the frame's base and SENT, and
// the reply RECEIVED into the same buffer, whose handle the result is.
// A stop is never answered: its RECV blocks until the host ends the run,
// and the FAULT after it is never reached.
func (l *fnLower) lowerEffect(in *ir.Instr) {
	e := l.c.agent.effects[in]
	if e == nil {
		l.errorf(in.Pos, codeInternal, "effect %s was not numbered", in.Op)
		return
	}
	ch := e.op.Channel()
	l.emit(&minst{op: mLI, defs: []reg{rScratch0}, sym: e.prefix})
	l.emit(&minst{op: mChan, name: "SEND", ch: ch, uses: []reg{rScratch0}, imm: e.size})
	n := 0
	for _, v := range in.IterArgs() {
		l.emit(&minst{op: mStore, name: "STOREW", uses: []reg{l.val(v), rFrame}, imm: int64(8 * n)})
		n++
	}
	for _, v := range in.EffectArgs() {
		l.emit(&minst{op: mStore, name: "STOREW", uses: []reg{l.val(v), rFrame}, imm: int64(8 * n)})
		n++
	}
	l.emit(&minst{op: mChan, name: "SEND", ch: ch, uses: []reg{rFrame}, imm: int64(8 * n)})
	recv := &minst{op: mChan, name: "RECV", ch: ch, uses: []reg{rFrame}, imm: agentabi.ReplySize}
	if in.Op == ir.OpParallel || in.Op == ir.OpParallelEach {
		// The host runs the branch functions while it answers: counted
		// as a call that may change every register, whatever the host
		// restores.
		recv.clob = allAllocatable
	}
	l.emit(recv)
	if in.Op == ir.OpStop {
		l.emit(&minst{op: mFault, imm: faultUnreachable})
		return
	}
	if len(in.Results) == 1 {
		l.emit(&minst{op: mLoad, name: "LOADW", defs: []reg{l.def(in.Results[0])}, uses: []reg{rFrame}, imm: agentabi.ReplyHandleOffset})
	}
}
