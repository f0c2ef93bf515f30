// Package forgegen is the Forge Machine backend: it lowers a verified IR
// module to a Forge program, assembled in memory by forge/asm, or to its
// Forge assembly text (docs/fasm.md) for --emit asm.
//
// The pipeline per function is: lowering of the structured IR to a linear
// machine-level code over virtual registers (lower.go), dead-code removal
// and register allocation over r0–r249 (regalloc.go), then emission with
// the saves around calls, the epilogues and a peephole pass (emit.go).
// docs/backend-forge.md describes the calling convention, the frame
// layout, the register allocator and the lowering of every IR operation.
package forgegen

import (
	"fmt"
	"sort"
	"strconv"
	"unsafe"

	"github.com/genesis-toolchain/genesis/diag"
	"github.com/genesis-toolchain/genesis/forge/asm"
	"github.com/genesis-toolchain/genesis/forge/bytecode"
	"github.com/genesis-toolchain/genesis/internal/graph"
	"github.com/genesis-toolchain/genesis/internal/parallel"
	"github.com/genesis-toolchain/genesis/ir"
)

// Diagnostic codes: the Genesis error classes (docs/decisions.md).
const (
	codeCodegen  = "0x0802" // an IR construct the backend cannot compile
	codeAsm      = "0x0804" // inline assembly that does not assemble
	codeInternal = "0x08FF" // a bug in the compiler
)

// User fault codes raised by compiled code.
const (
	faultUnreachable    = 0 // an IR unreachable was reached
	faultBadFuncRef     = 1 // call_indirect of a value that is no function of its type
	faultShadowOverflow = 2 // the frames of slots outgrew the shadow stack
)

// maxArgs bounds the parameters and results of a function: they travel in
// r0 upward.
const maxArgs = 64

// Options are the target parameters of compiled programs.
type Options struct {
	// FrameSize bounds the shadow stack of slot frames, which starts at
	// the top of the heap (heap_end, which the machine reports in r255
	// at start) and grows down, never below heap_start (r254 at start):
	// a deeper nesting of frames faults USER_FAULT with code 2. Zero
	// means DefaultFrameSize.
	FrameSize uint64
	// Consume lets compilation drop each function's IR body once the
	// function's assembly is written, leaving the module's functions
	// without bodies: for a caller done with the module (the compiler
	// driver), so that a large program's IR and its machine code are not
	// both held whole.
	Consume bool
	// Program and ProgramHash are an agent program's identity
	// (agentabi.Metadata): by default the base name of the module's
	// source file and ir.ProgramHash of the module. The compiler computes
	// the hash once for the forge and go targets.
	Program, ProgramHash string
}

// DefaultFrameSize is the default bound of the shadow stack: the frames
// take at most the top 1 MiB of the heap, leaving the rest below to the
// program's own use of raw memory.
const DefaultFrameSize = 1 << 20

// Compile lowers m, which must have passed ir.Verify, to Forge assembly
// with the default Options. The program starts at _start, which calls the
// function main and HALTs when it returns (main's first result, if any, is
// left in r0). When the returned list holds errors the text is empty.
func Compile(m *ir.Module) (string, diag.List) {
	return CompileOptions(m, Options{})
}

// CompileOptions is Compile with explicit Options: the text --emit asm
// prints.
func CompileOptions(m *ir.Module, opts Options) (string, diag.List) {
	out := &output{text: &asmWriter{}}
	diags := newCompiler(m, opts).compile(out)
	if diags.HasErrors() {
		return "", diags
	}
	return unsafe.String(unsafe.SliceData(out.text.b), len(out.text.b)), diags // out.text.b is not written again
}

// BuildOptions compiles m into a program, assembled in memory (forge/asm),
// with explicit Options; file names the program in messages. The program
// is the one CompileOptions's text assembles to. When the returned list
// holds errors the program is nil. Inline asm blocks are read with the
// text syntax frontend/fasm registers in forge/asm (asm.RegisterSyntax):
// a program that compiles them links frontend/fasm, as the compiler does;
// without it they are reported as errors.
func BuildOptions(m *ir.Module, file string, opts Options) (*bytecode.Program, diag.List) {
	p, _, diags := newCompiler(m, opts).build(file, nil)
	return p, diags
}

func newCompiler(m *ir.Module, opts Options) *compiler {
	if opts.FrameSize == 0 {
		opts.FrameSize = DefaultFrameSize
	}
	opts.FrameSize = min(opts.FrameSize, 1<<32) // no heap is larger: the machine's memory is at most 4 GiB
	return &compiler{m: m, opts: opts, names: newNames(m), clobbers: map[string]regSet{}, done: map[string]bool{}, stacks: map[string]*FuncStack{}}
}

// Build compiles m with the default Options: the assembly text, and the
// program, assembled in memory, when there are no errors. The text
// assembles to the program (tests check it).
func Build(m *ir.Module, file string) (string, *bytecode.Program, diag.List) {
	text := &asmWriter{}
	p, _, diags := newCompiler(m, Options{}).build(file, text)
	if p == nil {
		return "", nil, diags
	}
	return string(text.b), p, diags
}

// build compiles the module into a program, and into text as well when
// text is not nil, and returns the program with the stack use of its
// functions.
func (c *compiler) build(file string, text *asmWriter) (*bytecode.Program, *StackUse, diag.List) {
	out := &output{text: text, build: asm.New(file)}
	diags := c.compile(out)
	if diags.HasErrors() {
		return nil, nil, diags
	}
	p, adiags := out.build.Program()
	if adiags.HasErrors() {
		for _, d := range adiags {
			diags.Errorf(diag.Pos{File: file}, codeInternal, "internal error: the generated program does not assemble: %s", d.Error())
		}
		return nil, nil, diags
	}
	return p, &StackUse{Funcs: c.stacks}, diags
}

// compiler holds the module-wide state of one compilation.
type compiler struct {
	m     *ir.Module
	opts  Options
	names *names
	diags diag.List
	file  string // the module's source file, for what has no position

	funcIdx      map[string]int // func_ref index of each referenced function
	dispatches   map[string]*dispatch
	clobbers     map[string]regSet // registers each compiled function may change
	done         map[string]bool
	usesFrames   bool
	overflow     string // label of the shadow stack overflow stub
	usesOverflow bool   // some function checks its frame against it
	stacks       map[string]*FuncStack
	agent        *agentProgram // for an agent program: its numbering (prepareAgent)
	// unsupported holds, per cause, the first use of a construct the
	// backend cannot compile (unsupported.before) and how many uses
	// there are: one diagnostic per cause, not one per instruction.
	unsupported map[string]*unsupportedUses
}

// unsupportedUses are the uses of one construct the backend cannot
// compile.
type unsupportedUses struct {
	first unsupported
	n     int
}

// addUnsupported records the uses of unsupported constructs us.
func (c *compiler) addUnsupported(us []unsupported) {
	for _, u := range us {
		if c.unsupported == nil {
			c.unsupported = map[string]*unsupportedUses{}
		}
		uses := c.unsupported[u.cause]
		if uses == nil {
			c.unsupported[u.cause] = &unsupportedUses{first: u, n: 1}
			continue
		}
		uses.n++
		if u.before(uses.first) {
			uses.first = u
		}
	}
}

// reportUnsupported adds one diagnostic per construct the backend could
// not compile, at its first use, saying how many uses there are.
func (c *compiler) reportUnsupported() {
	causes := make([]string, 0, len(c.unsupported))
	for cause := range c.unsupported {
		causes = append(causes, cause)
	}
	sort.Strings(causes)
	for _, cause := range causes {
		uses := c.unsupported[cause]
		msg := "in function @" + uses.first.fn + ": " + cause
		if uses.n > 1 {
			msg += fmt.Sprintf(" (reported once: %d uses in the program)", uses.n)
		}
		c.diags.Errorf(uses.first.pos, codeCodegen, "%s", msg)
	}
}

// dispatch is the routine that call_indirect of one function type calls.
type dispatch struct {
	used  bool // some call_indirect calls it
	label string
	funcs []string // indexes base, base+1, ...
	base  int
}

// names hands out assembly labels that collide with no module symbol.
type names struct{ used map[string]bool }

func newNames(m *ir.Module) *names {
	n := &names{used: map[string]bool{}}
	for _, f := range m.Funcs {
		n.used[f.Name] = true
	}
	for _, d := range m.Data {
		n.used[d.Name] = true
	}
	return n
}

func (n *names) unique(base string) string {
	s := base
	for i := 0; n.used[s]; i++ {
		s = base + "_" + strconv.Itoa(i)
	}
	n.used[s] = true
	return s
}

func (c *compiler) funcIndex(name string) int { return c.funcIdx[name] }

// numberFuncRefs gives every function named by a func_ref an index, from
// 1 (0 is the zero value of function types, no function), grouped by
// type so that each dispatch routine covers one contiguous range. It
// creates the dispatch of every function type that is referenced or
// called through call_indirect, so that functions compiled concurrently
// only look them up.
func (c *compiler) numberFuncRefs() {
	refs := map[string]bool{}
	called := map[string]bool{}
	var walk func(r *ir.Region)
	walk = func(r *ir.Region) {
		for _, in := range r.Instrs {
			switch in.Op {
			case ir.OpFuncRef:
				refs[in.Sym] = true
			case ir.OpCallIndirect:
				called[in.Args[0].Type.String()] = true
			}
			for _, s := range in.Regions {
				walk(s)
			}
		}
	}
	for _, f := range c.m.Funcs {
		walk(f.Body)
	}
	byType := map[string][]string{}
	var types []string
	for _, f := range c.m.Funcs {
		if refs[f.Name] {
			t := f.Type().String()
			if byType[t] == nil {
				types = append(types, t)
			}
			byType[t] = append(byType[t], f.Name)
		}
	}
	for t := range called {
		if byType[t] == nil {
			types = append(types, t)
		}
	}
	sort.Strings(types)
	c.funcIdx = map[string]int{}
	c.dispatches = map[string]*dispatch{}
	next := 1
	for _, t := range types {
		d := &dispatch{label: c.names.unique("__dispatch"), funcs: byType[t], base: next}
		c.dispatches[t] = d
		for _, f := range byType[t] {
			c.funcIdx[f] = next
			next++
		}
	}
}

// output is where compiled code goes: text for --emit asm, a Builder
// for the program, or both (Build, whose text tests compare).
type output struct {
	text  *asmWriter
	build *asm.Builder
}

// newOutput returns an empty output of the kinds o has.
func (o *output) newOutput() *output {
	n := &output{}
	if o.text != nil {
		n.text = &asmWriter{}
	}
	if o.build != nil {
		n.build = asm.NewFragment()
	}
	return n
}

// emitter returns the emitter that writes into o.
func (o *output) emitter() emitter {
	switch {
	case o.text != nil && o.build != nil:
		return tee{o.text, builder{o.build}}
	case o.text != nil:
		return o.text
	}
	return builder{o.build}
}

// compile lowers the module into out: its text, its program or both.
func (c *compiler) compile(out *output) diag.List {
	main := c.m.Func("main")
	if main == nil {
		c.diags.Errorf(diag.Pos{File: c.m.SourceFile()}, codeCodegen, "the module has no function main, where the program starts")
		return c.diags
	}
	c.file = c.m.SourceFile() // before compileFuncs, which may drop bodies
	if isAgentModule(c.m) {
		// An agent program's main takes the run's input, or nothing.
		if len(main.Params) > 1 || len(main.Params) == 1 && main.Params[0].Type != ir.Dyn {
			c.diags.Errorf(main.Pos, codeCodegen, "function main must take no parameter or one value (the run's input)")
			return c.diags
		}
		c.prepareAgent(main)
		if c.diags.HasErrors() {
			c.diags.Sort()
			return c.diags
		}
	} else if len(main.Params) > 0 {
		c.diags.Errorf(main.Pos, codeCodegen, "function main must take no parameters")
	}
	c.numberFuncRefs()
	start := c.names.unique("_start")

	c.overflow = c.names.unique("__shadow_overflow")
	funcs := c.compileFuncs(out)
	if !c.usesOverflow {
		c.overflow = ""
	}
	c.reportUnsupported()
	if c.diags.HasErrors() {
		c.diags.Sort()
		return c.diags
	}

	if out.text != nil {
		// One buffer for the program, sized up front, and each
		// function's text released once copied: the program's assembly
		// is held once, not in pieces, a doubling buffer and a string at
		// the same time.
		size := 4096
		for _, fo := range funcs {
			size += len(fo.text.b) + 1
		}
		for _, d := range c.m.Data {
			size += 64 + 4*len(d.Bytes)
		}
		out.text.b = make([]byte, 0, size)
		out.text.comment("generated by genesis backend/forgegen")
	}
	if c.agent != nil {
		meta, err := c.agent.meta.Marshal()
		if err != nil {
			c.diags.Errorf(diag.Pos{File: c.file}, codeInternal, "internal error: the agent metadata does not encode: %v", err)
			return c.diags
		}
		if out.text != nil {
			// In lines of 64 bytes, as forge disasm writes metadata: the
			// assembler appends them.
			for rest := meta; len(rest) > 0; {
				n := min(len(rest), 64)
				out.text.ins(".meta %s", quoteString(rest[:n]))
				rest = rest[n:]
			}
		}
		if out.build != nil {
			out.build.Meta(meta)
		}
	}
	if out.text != nil {
		out.text.line(".text")
	}
	if out.build != nil {
		code, names := 4096, 64
		for _, fo := range funcs {
			code += int(fo.build.CodeSize())
			names += fo.build.Names()
		}
		out.build.Reserve(code, names)
	}
	w := out.emitter()
	w.label(start)
	if c.usesFrames {
		// The shadow stack's place comes from the machine (docs/forge.md,
		// Registers at start): its top is heap_end (r255) rounded down
		// to the frames' alignment, and its limit FrameSize below, but
		// not below heap_start (r254 until here). Signed: with a heap of
		// less than FrameSize, top − FrameSize is negative.
		ok := c.names.unique(start + ".frames")
		w.inst(&minst{op: mMove, defs: []reg{rShadowLimit}, uses: []reg{rFrame}})
		w.inst(&minst{op: mLI, defs: []reg{rScratch0}, imm: -maxFrameAlign})
		w.inst(&minst{op: mALU, name: "AND", defs: []reg{rFrame}, uses: []reg{rReserved, rScratch0}})
		w.inst(&minst{op: mLI, defs: []reg{rScratch0}, imm: int64(c.opts.FrameSize)})
		w.inst(&minst{op: mALU, name: "SUB", defs: []reg{rScratch1}, uses: []reg{rFrame, rScratch0}})
		w.inst(&minst{op: mJcc, name: "JLTS", uses: []reg{rScratch1, rShadowLimit}, sym: ok})
		w.inst(&minst{op: mMove, defs: []reg{rShadowLimit}, uses: []reg{rScratch1}})
		w.label(ok)
	}
	w.inst(&minst{op: mCall, sym: "main"})
	if c.agent != nil {
		// The return address of the parallel branches the host calls.
		w.label(c.agent.ret)
	}
	w.inst(&minst{op: mHalt})
	for _, f := range c.m.Funcs {
		w.blank()
		fo := funcs[f.Name]
		if fo == nil {
			continue
		}
		if out.text != nil {
			out.text.b = append(out.text.b, fo.text.b...)
			fo.text.b = nil
		}
		if out.build != nil {
			out.build.Append(fo.build)
		}
	}
	c.writeDispatches(w)
	if c.overflow != "" {
		w.blank()
		w.label(c.overflow)
		w.inst(&minst{op: mFault, imm: faultShadowOverflow})
	}
	var prefixes []dataDef
	if c.agent != nil {
		prefixes = c.agent.prefixes
	}
	if len(c.m.Data) > 0 || len(prefixes) > 0 {
		w.blank()
		if out.text != nil {
			out.text.line(".data")
		}
		for _, d := range c.m.Data {
			w.data(dataDef{name: d.Name, align: uint64(d.Align), bytes: d.Bytes})
		}
		for _, d := range prefixes {
			w.data(d)
		}
	}
	return c.diags
}

// compileFuncs compiles every function, callees before callers, so that a
// caller knows what its calls clobber: the strongly connected components
// of the call graph, in waves. A component's wave is one more than the
// highest wave of the components it calls; the components of a wave
// depend only on earlier waves and compile concurrently. Everything they
// share is read-only meanwhile (the module, c.names, c.dispatches, and
// c.done and c.clobbers of earlier waves); what they find is merged in
// module order when the wave ends, so the output does not depend on
// scheduling. It returns each function's assembly.
func (c *compiler) compileFuncs(out *output) map[string]*output {
	calls := c.m.CallGraph()
	comps := graph.SCC(len(calls), func(v int) []int { return calls[v] })
	sccs := make([][]*ir.Func, len(comps))
	compOf := make([]int, len(calls))
	for i, comp := range comps {
		for _, f := range comp {
			compOf[f] = i
			sccs[i] = append(sccs[i], c.m.Funcs[f])
		}
	}
	wave := make([]int, len(comps))
	var waves [][]int
	for i, comp := range comps { // callees come first: their waves are known
		for _, f := range comp {
			for _, g := range calls[f] {
				if compOf[g] != i {
					wave[i] = max(wave[i], wave[compOf[g]]+1)
				}
			}
		}
		for len(waves) <= wave[i] {
			waves = append(waves, nil)
		}
		waves[wave[i]] = append(waves[wave[i]], i)
	}

	funcs := map[string]*output{}
	for _, members := range waves {
		results := make([]sccResult, len(members))
		parallel.Do(len(members), len(members), func(k int) { results[k] = c.compileSCC(sccs[members[k]], out) })
		for k, i := range members {
			r := &results[k]
			for _, f := range sccs[i] {
				c.clobbers[f.Name] = r.clobbered
				c.done[f.Name] = true
			}
			for _, l := range r.lowers {
				c.diags = append(c.diags, l.diags...)
				c.addUnsupported(l.unsupported)
				c.usesFrames = c.usesFrames || l.usesFrames
				c.usesOverflow = c.usesOverflow || l.usesOverflow
				for _, key := range l.usedDispatches {
					c.dispatches[key].used = true
				}
				for name := range l.labels {
					c.names.used[name] = true
				}
				if l.out != nil {
					funcs[l.f.Name] = l.out
					c.stacks[l.f.Name] = l.stack
				}
			}
		}
	}
	return funcs
}

// sccResult is what compiling one component produced.
type sccResult struct {
	lowers    []*fnLower // its functions, in module order
	clobbered regSet     // the registers a call to any of them may change
}

// compileSCC lowers, allocates and emits the functions of one strongly
// connected component of the call graph. A call within the component
// counts as changing every register; the component's clobber set is the
// union of its members'.
func (c *compiler) compileSCC(scc []*ir.Func, out *output) sccResult {
	var r sccResult
	var allocs []*allocation
	for _, f := range scc {
		l := &fnLower{c: c, f: f, nextV: firstVirtual}
		r.lowers = append(r.lowers, l)
		l.lowerFunc()
		var a *allocation
		if !l.failed {
			a = l.allocate(c.clobberOf)
		}
		if a != nil {
			r.clobbered.union(&l.clobbered)
		}
		allocs = append(allocs, a)
	}
	for k, l := range r.lowers {
		if allocs[k] != nil {
			l.out = out.newOutput()
			l.finish(allocs[k], l.out.emitter())
		}
		allocs[k] = nil
		l.release()
		if c.opts.Consume {
			l.f.Body = nil // only this goroutine reads it: callers read signatures
		}
	}
	return r
}

// release drops what only lowering, allocation and emission of the
// function use — its machine code and the maps from its IR — keeping what
// compileFuncs merges. The functions of a wave are all kept until it
// ends, and a program of many independent functions is one wave: without
// this, the machine code of every function would be live at once.
func (l *fnLower) release() {
	l.code, l.frameLI, l.src = nil, nil, nil
	l.vals, l.vars, l.slots, l.fused, l.uses, l.targets, l.cold = nil, nil, nil, nil, nil, nil, nil
}

// clobberOf returns the registers a call instruction may change.
func (c *compiler) clobberOf(in *minst) regSet {
	switch in.op {
	case mCall:
		if c.done[in.sym] {
			s := c.clobbers[in.sym]
			for _, d := range in.defs {
				s.add(d)
			}
			return s
		}
		return allAllocatable
	case mAsm, mHCall, mChan:
		return in.clob
	}
	return allAllocatable
}

// writeDispatches emits one routine per function type used by
// call_indirect: the index arrives in r250; the routine checks it is one
// of the type's functions (else FAULT 1), finds it by binary search and
// jumps to it, so the function returns straight to the caller.
func (c *compiler) writeDispatches(w emitter) {
	var keys []string
	for k := range c.dispatches {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	bad := ""
	for _, k := range keys {
		d := c.dispatches[k]
		if !d.used {
			continue
		}
		if bad == "" {
			bad = c.names.unique("__bad_funcref")
		}
		w.blank()
		w.comment("call_indirect of " + k)
		w.label(d.label)
		n := len(d.funcs)
		if n == 0 {
			w.inst(&minst{op: mJmp, sym: bad})
			continue
		}
		w.inst(&minst{op: mLI, defs: []reg{rScratch1}, imm: int64(d.base)})
		w.inst(&minst{op: mALU, name: "SUB", defs: []reg{rScratch0}, uses: []reg{rScratch0, rScratch1}})
		w.inst(&minst{op: mLI, defs: []reg{rScratch1}, imm: int64(n)})
		ok := c.names.unique(d.label + ".ok")
		w.inst(&minst{op: mJcc, name: "JLT", uses: []reg{rScratch0, rScratch1}, sym: ok})
		w.inst(&minst{op: mJmp, sym: bad})
		w.label(ok)
		var search func(lo, hi int)
		search = func(lo, hi int) {
			if lo == hi {
				w.inst(&minst{op: mJmp, sym: d.funcs[lo]})
				return
			}
			mid := (lo + hi + 1) / 2
			left := c.names.unique(fmt.Sprintf("%s.%d", d.label, mid))
			w.inst(&minst{op: mLI, defs: []reg{rScratch1}, imm: int64(mid)})
			w.inst(&minst{op: mJcc, name: "JLT", uses: []reg{rScratch0, rScratch1}, sym: left})
			search(mid, hi)
			w.label(left)
			search(lo, mid-1)
		}
		search(0, n-1)
	}
	if bad != "" {
		w.label(bad)
		w.inst(&minst{op: mFault, imm: faultBadFuncRef})
	}
}

// quoteName returns a label as fasm reads it: bare when it has the name
// form, else quoted.
func quoteName(s string) string {
	return asm.QuoteName(s)
}

// quoteString returns b as a fasm string literal.
func quoteString(b []byte) string {
	out := []byte{'"'}
	for _, c := range b {
		switch {
		case c == '"' || c == '\\':
			out = append(out, '\\', c)
		case c == '\n':
			out = append(out, '\\', 'n')
		case c == '\t':
			out = append(out, '\\', 't')
		case c >= 0x20 && c < 0x7f:
			out = append(out, c)
		default:
			out = append(out, fmt.Sprintf("\\x%02x", c)...)
		}
	}
	return string(append(out, '"'))
}
