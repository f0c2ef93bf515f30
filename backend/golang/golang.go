// Package golang is the Go backend: it translates a verified IR module
// (docs/ir.md) into the source of one Go package that links the runtime
// package (docs/runtime.md), for apps that vendor a compiled agent program
// and for `genesisc run`. docs/backend-go.md describes the translation.
//
// The IR is structured, and so is the Go it becomes: an if is an if, a
// loop or block a labelled for, a switch a switch; every SSA value is a Go
// variable defined once; effects are calls of the runtime's Run; builtins
// are calls of the runtime's functions of the same name (num.add is
// runtime.NumAdd). The output is formatted with go/format and carries
// /*line*/ directives back to the source, so panics and profiles point at
// the program, not at the generated file.
package golang

import (
	"bytes"
	"fmt"
	"go/format"
	"math"
	"path/filepath"
	"strconv"
	"strings"
	"unicode"

	"github.com/genesis-toolchain/genesis/backend/internal/memlayout"
	"github.com/genesis-toolchain/genesis/diag"
	"github.com/genesis-toolchain/genesis/ir"
)

// RuntimePath is the import path of the runtime package.
const RuntimePath = "github.com/genesis-toolchain/genesis/runtime"

// codeUnsupported is the diagnostic code of IR the backend cannot
// translate (the Genesis class of codegen errors).
const codeUnsupported = "0x0802"

// Options configure the generated package.
type Options struct {
	// Package is the Go package name; "program" when empty. With Main it
	// is ignored: the package is main.
	Package string
	// Source names the compiled program in the package's doc comment and
	// in the run's program identity (journals check it).
	Source string
	// Main adds a func main that runs the program as `genesisc run` does,
	// taking the same flags.
	Main bool
	// ProgramHash is the program's hash, which its effects' idempotency
	// keys derive from: ir.ProgramHash of the module, the same as the Forge
	// target's (the compiler computes it once for both). Empty means
	// computed here.
	ProgramHash string
	// RuntimeImport is the import path of the runtime package the
	// generated package links: RuntimePath when empty, or the path of a
	// copy of it inside an app's module (genesisc runtime, docs/runtime.md,
	// "Vendoring generated packages").
	RuntimeImport string
}

// File is one generated source file.
type File struct {
	Name string // a file name, relative to the package directory
	Data []byte
}

// Generate translates m into the files of a Go package. m must have passed
// ir.Verify and have a function main. The entry point depends on main's
// signature: main(value) -> value is an agent program, run on its input;
// main() (with any results) is run for its effects.
func Generate(m *ir.Module, opts Options) ([]File, diag.List) {
	g := &generator{m: m, opts: opts, funcs: m.FuncMap()}
	g.check()
	if g.diags.HasErrors() {
		return nil, g.diags
	}
	if g.opts.ProgramHash == "" {
		g.opts.ProgramHash = ir.ProgramHash(m)
	}
	src := g.program()
	out, err := format.Source(src)
	if err != nil {
		// The generator must always produce valid Go: this is a bug.
		g.diags.Errorf(diag.Pos{File: opts.Source}, "0x08FF", "internal error: the generated Go does not parse: %v", err)
		return nil, g.diags
	}
	return []File{{Name: "program.go", Data: out}}, g.diags
}

type generator struct {
	m     *ir.Module
	opts  Options
	funcs map[string]*ir.Func
	diags diag.List

	b         bytes.Buffer
	sites     []siteDecl        // package-level step sites, in order of use
	siteNames map[string]string // site key -> Go name
	usesMem   bool              // the module reads or writes linear memory
	usesEach  bool              // the module has a parallel.each block
	funcRefs  []string          // functions named by func_ref, in order of first use
	refIndex  map[string]int
	dataAddr  map[string]int64   // the address of each data object
	labels    map[*ir.Instr]bool // loops and blocks whose Go label is used
	exits     map[*ir.Instr]bool // loops left by a break, blocks left at all
	statics   []string           // package-level constant values, by index
	staticIdx map[string]int     // expression -> index in statics

	// standalone is set by GenerateStandalone: inline asm is translated
	// (asm.go) rather than refused, and the Forge program's use of the
	// stacks (layout.Stack) is charged.
	standalone bool
	layout     *memlayout.Layout
	unrolled   map[string]bool // functions whose calls to themselves are expanded (memlayout.Unrolled)
}

type siteDecl struct {
	goName, name string
	pos          diag.Pos
}

// check reports what the backend cannot translate, before any output.
func (g *generator) check() {
	main := g.funcs["main"]
	switch {
	case main == nil:
		g.diags.Errorf(diag.Pos{File: g.opts.Source}, codeUnsupported, "the module has no function main, where the program starts")
	case len(main.Params) > 1 || len(main.Params) == 1 && main.Params[0].Type != ir.Dyn:
		g.diags.Errorf(main.Pos, codeUnsupported, "function main must take no parameter or one value (the run's input)")
	}
	var asmAt diag.Pos // the first inline assembly, reported once
	asms := 0
	for _, f := range g.m.Funcs {
		ir.Walk(f.Body, func(in *ir.Instr) {
			switch in.Op {
			case ir.OpAsm:
				if g.standalone {
					break
				}
				if asms++; asms == 1 {
					asmAt = in.Pos
				}
			case ir.OpLoad, ir.OpStore, ir.OpCopy, ir.OpAddrOf:
				g.usesMem = true
			case ir.OpParallelEach:
				g.usesEach = true
			}
		})
		for _, l := range f.Locals {
			if l.Kind == ir.Slot {
				g.usesMem = true
			}
		}
	}
	if asms > 0 {
		// One report for the cause: the target, not each asm block.
		if asmAt.File == "" {
			asmAt = diag.Pos{File: g.opts.Source}
		}
		more := ""
		if asms > 1 {
			more = fmt.Sprintf(" (the program has %d asm blocks; the first is here)", asms)
		}
		g.diags.Errorf(asmAt, codeUnsupported, "inline assembly runs only on the Forge Machine (--target forge)%s", more)
	}
	g.labels = map[*ir.Instr]bool{}
	g.exits = map[*ir.Instr]bool{}
	for _, f := range g.m.Funcs {
		ir.Walk(f.Body, func(in *ir.Instr) {
			switch in.Op {
			case ir.OpBreak, ir.OpContinue:
				if t := breakTarget(in); t != nil {
					g.labels[t] = true
					if in.Op == ir.OpBreak {
						g.exits[t] = true
					}
				}
			case ir.OpBlock:
				// A block is left by its own yield or by falling off the
				// end, both a break of its label.
				if last := in.Regions[0].Last(); last == nil || last.Op == ir.OpYield || last.Info().Flags&ir.Terminator == 0 {
					g.labels[in] = true
					g.exits[in] = true
				}
			case ir.OpConst:
				if in.Type == ir.Dyn && in.Lit.Kind == ir.LitNumber && (math.IsInf(in.Lit.Num, 0) || math.IsNaN(in.Lit.Num)) {
					g.diags.Errorf(in.Pos, codeUnsupported, "the number %v has no JSON form", in.Lit.Num)
				}
			}
		})
	}
}

// fallsThrough reports whether control can reach the instruction after
// in. The generator writes no Go after one that cannot: the IR may hold
// such dead code (an unreachable after a switch whose every case leaves),
// and go vet reports unreachable Go.
func (g *generator) fallsThrough(in *ir.Instr) bool {
	switch in.Op {
	case ir.OpIf, ir.OpSwitch:
		if in.Op == ir.OpIf && len(in.Regions) < 2 {
			return true
		}
		for _, r := range in.Regions {
			if g.regionFallsThrough(r) {
				return true
			}
		}
		return false
	case ir.OpLoop, ir.OpBlock:
		return g.exits[in]
	}
	return in.Info().Flags&ir.Terminator == 0
}

// regionFallsThrough reports whether control can leave r at its end (or
// by its yield).
func (g *generator) regionFallsThrough(r *ir.Region) bool {
	for _, in := range r.Instrs {
		if in.Op == ir.OpYield {
			return true
		}
		if !g.fallsThrough(in) {
			return false
		}
	}
	return true
}

// breakTarget returns the loop or block a break or continue leaves.
func breakTarget(in *ir.Instr) *ir.Instr {
	for r := in.Parent; r != nil && r.Parent != nil; r = r.Parent.Parent {
		if p := r.Parent; (p.Op == ir.OpLoop || p.Op == ir.OpBlock) && p.Label == in.Label {
			return p
		}
	}
	return nil
}

// goType is the Go type of values of IR type t.
func goType(t ir.Type) string {
	switch t.Kind() {
	case ir.KindBool:
		return "bool"
	case ir.KindI8:
		return "int8"
	case ir.KindI16:
		return "int16"
	case ir.KindI32:
		return "int32"
	case ir.KindI64:
		return "int64"
	case ir.KindPtr:
		return "uint64"
	case ir.KindDyn:
		return "rt.Value"
	case ir.KindFunc:
		return "int64" // an index into funcTable; 0 is no function
	}
	return "struct{}"
}

// unsignedType is the unsigned Go type of an integer IR type's width.
func unsignedType(t ir.Type) string {
	switch t.Kind() {
	case ir.KindI8:
		return "uint8"
	case ir.KindI16:
		return "uint16"
	case ir.KindI32:
		return "uint32"
	}
	return "uint64"
}

// funcName is the Go name of IR function name: a prefix keeps it apart
// from the generated helpers and from Go keywords; characters Go does not
// allow in identifiers become _ and a hash of the name keeps distinct
// names distinct.
func funcName(name string) string { return "f_" + ident(name) }

func ident(name string) string {
	var b strings.Builder
	clean := true
	for _, r := range name {
		if r == '_' || unicode.IsLetter(r) && r < unicode.MaxASCII || unicode.IsDigit(r) && r < unicode.MaxASCII {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
			clean = false
		}
	}
	if !clean {
		fmt.Fprintf(&b, "_%x", fnv(name))
	}
	return b.String()
}

func fnv(s string) uint32 {
	h := uint32(2166136261)
	for i := 0; i < len(s); i++ {
		h ^= uint32(s[i])
		h *= 16777619
	}
	return h
}

// site returns the Go name of the package-level site of a step named name
// at pos, declaring it on first use.
func (g *generator) site(name string, pos diag.Pos) string {
	key := name + "\x00" + pos.String()
	if n, ok := g.siteNames[key]; ok {
		return n
	}
	if g.siteNames == nil {
		g.siteNames = map[string]string{}
	}
	n := "site" + strconv.Itoa(len(g.sites))
	g.siteNames[key] = n
	g.sites = append(g.sites, siteDecl{goName: n, name: name, pos: pos})
	return n
}

// static returns the package-level variable holding the value of the
// constant expression expr, declaring it on first use.
func (g *generator) static(expr string) string {
	if g.staticIdx == nil {
		g.staticIdx = map[string]int{}
	}
	i, ok := g.staticIdx[expr]
	if !ok {
		i = len(g.statics)
		g.statics = append(g.statics, expr)
		g.staticIdx[expr] = i
	}
	return "k" + strconv.Itoa(i)
}

// funcRef returns the funcTable index of function name.
func (g *generator) funcRef(name string) int {
	if i, ok := g.refIndex[name]; ok {
		return i
	}
	if g.refIndex == nil {
		g.refIndex = map[string]int{}
	}
	g.funcRefs = append(g.funcRefs, name)
	g.refIndex[name] = len(g.funcRefs)
	return len(g.funcRefs)
}

func (g *generator) printf(format string, args ...any) { fmt.Fprintf(&g.b, format, args...) }

// program writes the whole package.
func (g *generator) program() []byte {
	var body bytes.Buffer
	for _, f := range g.m.Funcs {
		fg := &funcGen{g: g, f: f}
		fg.function()
		body.Write(fg.b.Bytes())
		body.WriteString("\n")
	}

	pkg := g.opts.Package
	if pkg == "" {
		pkg = "program"
	}
	if g.opts.Main {
		pkg = "main"
	}
	source := g.opts.Source
	g.printf("// Code generated by genesisc. DO NOT EDIT.\n\n")
	if g.opts.Main {
		g.printf("// Command %s runs the program %s, compiled by genesisc.\n", pkg, filepath.Base(source))
	} else {
		g.printf("// Package %s is the program %s, compiled by genesisc: call Run to run it.\n", pkg, filepath.Base(source))
	}
	g.printf("package %s\n\n", pkg)
	g.printf("import (\n")
	if g.usesMem {
		g.printf("\t\"encoding/binary\"\n")
	}
	if g.opts.Main {
		g.printf("\t\"os\"\n")
	}
	rtPath := g.opts.RuntimeImport
	if rtPath == "" {
		rtPath = RuntimePath
	}
	g.printf("\n\trt %q\n)\n\n", rtPath)
	g.printf("// Program is the compiled program's identity, which journals record.\nconst Program = %q\n\n", filepath.Base(source))
	// The hash of the program's code goes into its effects' idempotency
	// keys (docs/runtime.md): the hash of its IR, as on the Forge target.
	g.printf("// ProgramHash identifies the program's code (its idempotency keys derive from it).\nconst ProgramHash = %q\n\n", g.opts.ProgramHash)

	main := g.funcs["main"]
	g.printf(`// Run runs the program once on host h with opts (input, journal, trace,
// budgets) and returns the run's result.
func Run(h *rt.Host, opts rt.RunOptions) *rt.Result {
	if opts.Program == "" {
		opts.Program = Program
	}
	if opts.ProgramHash == "" {
		opts.ProgramHash = ProgramHash
	}
	return h.Execute(opts, func(r *rt.Run) rt.Value {
`)
	if g.usesMem {
		g.printf("\t\tm := newMachine(r)\n")
	} else {
		g.printf("\t\tm := &machine{r: r}\n")
	}
	call := funcName("main") + "(m"
	if len(main.Params) == 1 {
		call += ", r.Input()"
	}
	call += ")"
	switch {
	case len(main.Results) == 1 && main.Results[0] == ir.Dyn:
		g.printf("\t\treturn %s\n", call)
	case len(main.Results) == 0:
		g.printf("\t\t%s\n\t\treturn rt.Unit()\n", call)
	default:
		vars := make([]string, len(main.Results))
		for i := range vars {
			vars[i] = "_"
		}
		if main.Results[0] == ir.Dyn {
			vars[0] = "out"
			g.printf("\t\t%s := %s\n\t\treturn out\n", strings.Join(vars, ", "), call)
		} else {
			g.printf("\t\t%s = %s\n\t\treturn rt.Unit()\n", strings.Join(vars, ", "), call)
		}
	}
	g.printf("\t})\n}\n\n")

	if g.opts.Main {
		g.printf("func main() { os.Exit(rt.Main(os.Args[1:], Program, Run)) }\n\n")
	}

	g.printf("// machine is the state a run's functions share.\ntype machine struct {\n\tr *rt.Run\n\tcalls int // the calls under way (rt.MaxCallDepth)\n")
	if g.usesMem {
		g.printf("\tmem []byte\n\tsp  uint64 // the frame stack, growing down from the top of mem\n")
	}
	g.printf("}\n\n")
	g.printf("// branch is the machine of a parallel branch, which runs on r.\nfunc (m *machine) branch(r *rt.Run) *machine {\n\tb := *m\n\tb.r = r\n\treturn &b\n}\n\n")
	if g.usesEach {
		g.printf("// each returns the branches of a parallel.each block: f on each element\n// of the list items.\nfunc (m *machine) each(items rt.Value, f func(*machine, rt.Value) rt.Value) []func(*rt.Run) rt.Value {\n\telems := items.Elems()\n\tbranches := make([]func(*rt.Run) rt.Value, len(elems))\n\tfor i, item := range elems {\n\t\tbranches[i] = func(r *rt.Run) rt.Value { return f(m.branch(r), item) }\n\t}\n\treturn branches\n}\n\n")
	}
	if g.usesMem {
		g.memoryHelpers()
	}
	g.helpers()

	if len(g.sites) > 0 {
		g.printf("// The sites of the program's steps (effects and calls).\nvar (\n")
		for _, s := range g.sites {
			// The file's base name: a journal stays valid when the
			// program moves to another directory.
			file := ""
			if s.pos.File != "" {
				file = filepath.Base(s.pos.File)
			}
			g.printf("\t%s = rt.NewSite(%q, %q, %d, %d)\n", s.goName, s.name, file, s.pos.Line, s.pos.Col)
		}
		g.printf(")\n\n")
	}
	if len(g.statics) > 0 {
		g.printf("// Constant values the program computes from literals, once per process.\nvar (\n")
		for i, e := range g.statics {
			g.printf("\tk%d = %s\n", i, e)
		}
		g.printf(")\n\n")
	}
	if len(g.funcRefs) > 0 {
		g.printf("// funcTable holds the functions that func_ref names; a function\n// reference is an index into it, 0 being no function.\nvar funcTable []any\n\nfunc init() {\n\tfuncTable = []any{nil")
		for _, name := range g.funcRefs {
			g.printf(", %s", funcName(name))
		}
		g.printf("}\n}\n\n")
	}
	g.b.Write(body.Bytes())
	return g.b.Bytes()
}

// helpers writes the small functions every package uses.
func (g *generator) helpers() {
	g.printf(`// fault stops the run: the program did something the IR defines as a
// fault (a division by zero, an invalid address, unreachable code).
func (m *machine) fault(kind, msg string) { m.r.Fail(rt.Step{}, rt.Error(kind, msg)) }

func b2i(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

`)
}

// memorySize is the linear memory of programs that use it, as forge exec
// gives by default; dataBase is where the data section starts.
const (
	memorySize = 16 << 20
	dataBase   = 0x100
)

func (g *generator) memoryHelpers() {
	// The data section, laid out as the Forge backend would: in module
	// order, each object aligned.
	addr := int64(dataBase)
	g.printf("// The data section.\nvar dataInit = []struct {\n\taddr uint64\n\tbytes string\n}{\n")
	g.dataAddr = map[string]int64{}
	for _, d := range g.m.Data {
		a := max(d.Align, 1)
		addr = (addr + a - 1) &^ (a - 1)
		g.dataAddr[d.Name] = addr
		g.printf("\t{%d, %q},\n", addr, string(d.Bytes))
		addr += int64(len(d.Bytes))
	}
	g.printf("}\n\n")
	g.printf(`func newMachine(r *rt.Run) *machine {
	m := &machine{r: r, mem: make([]byte, %d), sp: %d}
	for _, d := range dataInit {
		copy(m.mem[d.addr:], d.bytes)
	}
	return m
}

// check faults unless [a, a+n) is in memory.
func (m *machine) check(a, n uint64) {
	if a < %d || a > uint64(len(m.mem)) || n > uint64(len(m.mem))-a {
		m.fault("invalid_address", "address "+itoa(a)+" is outside memory")
	}
}

func itoa(a uint64) string {
	const digits = "0123456789"
	if a == 0 {
		return "0"
	}
	var b [20]byte
	i := len(b)
	for a > 0 {
		i--
		b[i] = digits[a%%10]
		a /= 10
	}
	return string(b[i:])
}

func (m *machine) load8(a uint64) uint8   { m.check(a, 1); return m.mem[a] }
func (m *machine) load16(a uint64) uint16 { m.check(a, 2); return binary.LittleEndian.Uint16(m.mem[a:]) }
func (m *machine) load32(a uint64) uint32 { m.check(a, 4); return binary.LittleEndian.Uint32(m.mem[a:]) }
func (m *machine) load64(a uint64) uint64 { m.check(a, 8); return binary.LittleEndian.Uint64(m.mem[a:]) }
func (m *machine) store8(a uint64, v uint8)   { m.check(a, 1); m.mem[a] = v }
func (m *machine) store16(a uint64, v uint16) { m.check(a, 2); binary.LittleEndian.PutUint16(m.mem[a:], v) }
func (m *machine) store32(a uint64, v uint32) { m.check(a, 4); binary.LittleEndian.PutUint32(m.mem[a:], v) }
func (m *machine) store64(a uint64, v uint64) { m.check(a, 8); binary.LittleEndian.PutUint64(m.mem[a:], v) }

// copyMem copies n bytes from src to dst as if through a buffer.
func (m *machine) copyMem(dst, src, n uint64) {
	m.check(dst, n)
	m.check(src, n)
	copy(m.mem[dst:dst+n], m.mem[src:src+n])
}

// enter allocates a frame of size bytes aligned to 16; leave frees it.
func (m *machine) enter(size uint64) uint64 {
	if size > m.sp-%d {
		m.fault("stack_overflow", "the frames outgrew memory")
	}
	m.sp = (m.sp - size) &^ 15
	return m.sp
}

`, memorySize, memorySize, dataBase, memorySize/2)
}
