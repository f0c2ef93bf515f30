// Package compiler is the driver of genesisc: it finds the frontend of
// its inputs in its registry of languages (languages.go), runs it, and
// hands the result to the requested backend. It holds no language logic
// of its own.
package compiler

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"

	"github.com/genesis-toolchain/genesis/backend/forgegen"
	"github.com/genesis-toolchain/genesis/backend/golang"
	"github.com/genesis-toolchain/genesis/backend/llvm"
	"github.com/genesis-toolchain/genesis/diag"
	"github.com/genesis-toolchain/genesis/forge/bytecode"
	"github.com/genesis-toolchain/genesis/frontend"
	"github.com/genesis-toolchain/genesis/frontend/fasm"
	"github.com/genesis-toolchain/genesis/ir"
	"github.com/genesis-toolchain/genesis/ir/opt"
)

// Emit selects what Build produces.
type Emit string

const (
	EmitBinary Emit = ""    // the target's binary form (.frgp for forge)
	EmitAsm    Emit = "asm" // Forge assembly text
	EmitIR     Emit = "ir"  // the optimized IR, printed
)

// Options configure a build.
type Options struct {
	Target string // "forge" (the default), "go" or "native"
	Emit   Emit
	// GoPackage names the Go package of the go target ("program" when
	// empty); GoMain makes it a command (package main with func main).
	GoPackage string
	GoMain    bool
	// GoRuntime is the import path of the runtime package a go-target
	// agent program links (golang.Options.RuntimeImport); empty: the
	// toolchain's own (golang.RuntimePath).
	GoRuntime string
	// OptLevel is the optimization level of ir/opt: 0 runs no pass, 2
	// every pass.
	OptLevel int
	// DumpAfter names a pass after which the IR is printed to Dump.
	DumpAfter string
	Dump      io.Writer
	// VerifyEach runs the IR verifier after every optimizer pass
	// (--verify-each): a pass that breaks the module is reported as an
	// internal compiler error naming it. Always on in tests (opt.Hooks).
	VerifyEach bool

	// standalone is set for Genesis sources: the go target then writes a
	// self-contained main package (golang.GenerateStandalone).
	standalone bool
	// agent is set for agent languages: the forge and go targets give
	// the program the same hash (ir.ProgramHash), computed once.
	agent bool
}

// Output is what a successful build produced: a program, and for text
// emits its rendering, or for the go target the package's files.
type Output struct {
	Program *bytecode.Program
	Text    string
	Files   []golang.File
	// LLVM is the native target's LLVM module, which llvm.Link turns
	// into an executable.
	LLVM string
	// UsesRuntime is true when Files import the runtime package (an
	// agent program; a standalone one needs only the standard library).
	UsesRuntime bool
	// Module is the optimized IR module of an --emit ir build, which
	// Text prints.
	Module *ir.Module
}

// Source is one input file.
type Source = frontend.Source

// ReadSources reads the named files. A file that cannot be read becomes a
// diagnostic, not a failure of the whole call.
func ReadSources(names []string) ([]Source, diag.List) {
	var srcs []Source
	var diags diag.List
	for _, n := range names {
		b, err := os.ReadFile(n)
		if err != nil {
			diags.Errorf(diag.Pos{File: n}, "E0001", "cannot read: %v", unwrapPath(err))
			continue
		}
		srcs = append(srcs, Source{Name: n, Data: b})
	}
	return srcs, diags
}

func unwrapPath(err error) error {
	if pe, ok := err.(*os.PathError); ok {
		return pe.Err
	}
	return err
}

// Build compiles the sources into one program: the registry finds their
// language (languages), its frontend checks and lowers them, and the IR
// pipeline and the backend of the target do the rest.
func Build(srcs []Source, opts Options) (*Output, diag.List) {
	var diags diag.List
	if opts.Target != "" && opts.Target != "forge" && opts.Target != "go" && opts.Target != "native" {
		diags.Errorf(diag.Pos{}, "E0002", "unknown target %q (supported: forge, go, native)", opts.Target)
		return nil, diags
	}
	lang, diags := language(srcs)
	if diags.HasErrors() {
		return nil, diags
	}
	name := srcs[0].Name
	if lang.Assembled != nil {
		return assemble(lang, srcs, opts)
	}
	m, diags := lower(lang, srcs)
	if diags.HasErrors() {
		return nil, diags
	}
	if lang.Agent && opts.Emit != EmitIR && opts.Target == "native" {
		// The native target compiles no dynamic value: one diagnostic
		// that says what to do, rather than one per instruction
		// (docs/decisions.md, "genesisc check and the memory of a check").
		diags.Errorf(diag.Pos{File: name, Line: 1, Col: 1}, CodeAgentTarget,
			"%s do not compile for the native target: build a Forge program with --target forge (the default) or a Go package with --target go (add --main for a command), or run the program with genesisc run %s",
			lang.Programs, name)
		return nil, diags
	}
	opts.agent = lang.Agent
	if lang.LargeInput {
		collectLarge(srcs)
	}
	opts.standalone = lang.Standalone
	out, more := compileModule(m, name, opts)
	return out, append(diags, more...)
}

// assemble builds the program of a language that builds a Forge program
// without the IR (Forge assembly): for the forge target only, and with
// no IR to emit.
func assemble(lang *frontend.Language, srcs []Source, opts Options) (*Output, diag.List) {
	var diags diag.List
	name := srcs[0].Name
	if opts.Emit == EmitIR {
		diags.Errorf(diag.Pos{File: name}, "E0007", "%s has no IR form (--emit ir is for languages that compile through the IR)", lang.Name)
		return nil, diags
	}
	if opts.Target == "go" || opts.Target == "native" {
		diags.Errorf(diag.Pos{File: name}, "E0007", "%s runs only on the Forge Machine (--target forge)", lang.Name)
		return nil, diags
	}
	checked, diags := runFrontend(lang, srcs, func(in frontend.Input) (any, diag.List) { return lang.Check(in) })
	if diags.HasErrors() {
		return nil, diags
	}
	p := lang.Assembled(checked)
	out := &Output{Program: p}
	if opts.Emit == EmitAsm {
		out.Text = fasm.Disassemble(p)
	}
	return out, diags
}

// lower runs the frontend of lang on srcs: Check, then, when it found no
// error, Lower. The module is nil when the diagnostics hold an error.
func lower(lang *frontend.Language, srcs []Source) (*ir.Module, diag.List) {
	var m *ir.Module
	_, diags := runFrontend(lang, srcs, func(in frontend.Input) (any, diag.List) {
		checked, diags := lang.Check(in)
		if diags.HasErrors() {
			return nil, diags
		}
		var more diag.List
		m, more = lang.Lower(checked)
		return nil, append(diags, more...)
	})
	if diags.HasErrors() {
		return nil, diags
	}
	return m, diags
}

// runFrontend runs stages of the frontend of lang on the input srcs form:
// srcs, and the modules they import, read from the file system. A panic
// of a frontend is a bug of this compiler: a diagnostic, never a crash
// of genesisc.
func runFrontend(lang *frontend.Language, srcs []Source, stages func(frontend.Input) (any, diag.List)) (checked any, diags diag.List) {
	defer func() {
		if p := recover(); p != nil {
			checked = nil
			diags = append(diags, diag.Diagnostic{Pos: diag.Pos{File: srcs[0].Name}, Severity: diag.Error, Code: "0x08FF",
				Msg: fmt.Sprintf("internal compiler error: %v", p)})
		}
	}()
	return stages(frontend.Input{Files: srcs, Import: os.ReadFile})
}

// CodeAgentTarget is the code of the diagnostic of a build of an agent
// program (VVM, Grimoire, nano-vm, a plan) for a target that cannot run
// it: the native target.
const CodeAgentTarget = "E0009"

// language returns the one language srcs are written in (the registry's
// languages, by extension and then its detection step), or the
// diagnostics of inputs that do not form one program: none, extensions
// mixed, several files of a language whose program is one file, an
// extension no frontend reads.
func language(srcs []Source) (*frontend.Language, diag.List) {
	var diags diag.List
	if len(srcs) == 0 {
		diags.Errorf(diag.Pos{}, "E0003", "no input files")
		return nil, diags
	}
	exts := map[string]bool{}
	for _, s := range srcs {
		exts[frontend.Ext(s.Name)] = true
	}
	if len(exts) > 1 {
		mixed := make([]string, 0, len(exts))
		for e := range exts {
			mixed = append(mixed, e)
		}
		sort.Strings(mixed)
		diags.Errorf(diag.Pos{File: srcs[0].Name}, "E0004", "inputs mix languages (%s): build each language separately and link the results", strings.Join(mixed, ", "))
		return nil, diags
	}
	lang := languages.Language(srcs[0].Name, srcs[0].Data)
	if lang == nil {
		diags.Errorf(diag.Pos{File: srcs[0].Name}, "E0006", "no frontend for %q files (supported: %s)", frontend.Ext(srcs[0].Name), strings.Join(languages.Extensions(), ", "))
		return nil, diags
	}
	if len(srcs) > 1 && lang.OneFile != "" {
		diags.Errorf(diag.Pos{File: srcs[1].Name}, "E0005", "%s", lang.OneFile)
		return nil, diags
	}
	return lang, nil
}

// Check reports every diagnostic of srcs that their language gives — a
// frontend's syntax, names, types and checks, and what its
// CheckLowering adds (for Genesis the lowering and the IR verifier, for
// the printed IR the verifier), for Forge assembly the assembler —
// without building a program: no optimizer and no backend run, so a
// target's limits show only at Build (as cargo check does). Its
// diagnostics are those Build reports before the optimizer and the
// backend run, but for the internal errors of a compiler bug in the IR
// of an agent language (E999 and the like: the agent languages'
// lowering reports nothing else, which TestCheckIsTheFrontend holds it
// to, and Check does not lower them). What it holds is bounded by a
// small multiple of the input (docs/genesis.md, docs/vvm.md,
// docs/nanovm.md: "Limits"): Genesis is checked in two passes, its
// declarations first, then each function body, parsed again chunk by
// chunk, checked, lowered and verified, and dropped; VVM in two passes
// too, the names each module declares and binds at its top level first,
// then each top-level statement, parsed again chunk by chunk
// (frontend.Language.CheckHolding).
func Check(srcs []Source) diag.List {
	lang, diags := language(srcs)
	if diags.HasErrors() {
		return diags
	}
	_, diags = runFrontend(lang, srcs, func(in frontend.Input) (any, diag.List) {
		if lang.CheckHolding != nil {
			return nil, lang.CheckHolding(in, func() { checkPeak(nil) })
		}
		checked, diags := lang.Check(in)
		checkPeak(checked)
		if diags.HasErrors() || lang.CheckLowering == nil {
			return nil, diags
		}
		return nil, append(diags, lang.CheckLowering(checked)...)
	})
	return diags
}

// atCheckPeak, when set (by the tests of the memory of Check), is called
// where Check holds the most: the checked program of the frontend (or
// the IR module of an .ir input) alive, before the Genesis lowering
// starts dropping it.
var atCheckPeak func()

// checkPeak calls atCheckPeak, if set, with held, what Check holds,
// still alive.
func checkPeak(held any) {
	if atCheckPeak != nil {
		atCheckPeak()
	}
	runtime.KeepAlive(held)
}

// largeInput is the total size of sources from which Build collects
// garbage once between the frontend and the backend.
const largeInput = 4 << 20

// collectLarge collects garbage when srcs are large: the syntax trees
// just died, and the Go heap would otherwise grow to twice what was live
// with them before the backend's first collection, rather than from the
// IR alone (docs/decisions.md, "Hostile input").
func collectLarge(srcs []Source) {
	n := 0
	for _, s := range srcs {
		n += len(s.Data)
	}
	if n >= largeInput {
		runtime.GC()
	}
}

// Heap limit of a large Genesis compile (HeapLimit): a base for the
// runtime and the small tables, plus a multiple of the input. What a
// compile of ordinary Genesis holds live peaks at about 110 bytes per
// byte of input (at the end of lowering, where the checked tree and the
// IR meet); 160 leaves the collector room enough to cost about a tenth
// more CPU, where the factor of 400 genesisc runs with would let the heap
// reach 340 bytes per byte (docs/genesis.md, "Limits").
const (
	heapLimitBase    = 64 << 20
	heapLimitPerByte = 160
)

// HeapLimit returns the soft limit on the Go heap (for
// runtime/debug.SetMemoryLimit) under which a process should Build srcs,
// or 0 when it needs none: srcs are files of a language with LargeInput
// (Genesis) of largeInput bytes or more in all, and the limit is heapLimitBase plus heapLimitPerByte bytes
// per byte of them. It is a soft limit: a program that needs more live
// memory still compiles, with the collector running more often (the Go
// runtime caps that at about half the CPU).
func HeapLimit(srcs []Source) int64 {
	n := int64(0)
	for _, s := range srcs {
		if l := languages.Language(s.Name, s.Data); l == nil || !l.LargeInput {
			return 0
		}
		n += int64(len(s.Data))
	}
	if n < largeInput {
		return 0
	}
	return heapLimitBase + heapLimitPerByte*n
}

// Heap limit of a check (CheckHeapLimit): a base for the runtime and the
// small tables, plus a multiple of the input. What a check of Genesis
// holds live peaks at its declarations, the signatures of its IR and a
// few chunks of bodies, about 5 bytes per byte and the source
// (TestCheckMemory bounds it at maxCheckHeldGenesis), since the bodies
// are checked a chunk at a time (genesis.CheckHolding): checkLimitGenesis
// keeps the peak near 16 times the input at 50 MB for about a third more
// CPU than the check that held the whole tree (12 cost more again). A
// check of VVM holds the summary of its modules' top-level names and a
// chunk of statements (vvm.CheckHolding), about 3 bytes per byte, but
// its first pass holds the text of a module as runes besides (4 bytes
// per byte) while it cuts it into chunks: checkLimitVVM. A check of
// Grimoire holds its checked tree, about 23 bytes per byte, and its
// parse little besides (the trigger bodies are parsed a chunk at a time,
// the tokens kept compact: grimoire.ParseFile): checkLimitGrimoire. A
// check of nano-vm holds the document's tree, its steps and its
// diagnostics, about 20 bytes per byte: checkLimitNanoVM. The IR and
// Forge assembly hold their checked program (TestCheckMemory bounds them
// at maxCheckHeldPerByte) and get checkLimitPerByte, where without a
// limit the heap of genesisc (which collects at 400 % growth) reached
// five times what was live. TestCheckPeak measures the resident memory
// of a check in a child process against these limits (docs/genesis.md,
// docs/vvm.md, docs/grimoire.md, docs/nanovm.md, "Limits";
// docs/decisions.md, "A check in two passes", "VVM checked in two
// passes", "Grimoire and nano-vm checks in bounded memory").
const (
	checkLimitPerByte  = 64
	checkLimitGenesis  = 14
	checkLimitVVM      = 16
	checkLimitNanoVM   = 32
	checkLimitGrimoire = 40
)

// checkLimits is the heap limit of a check per byte of source, by the
// extension of the source, for every language but the IR and Forge
// assembly.
var checkLimits = map[string]int64{
	".gen": checkLimitGenesis, ".vvm": checkLimitVVM,
	".spell": checkLimitGrimoire, ".json": checkLimitNanoVM, ".yaml": checkLimitNanoVM, ".yml": checkLimitNanoVM,
}

// CheckHeapLimit returns the soft limit on the Go heap (for
// runtime/debug.SetMemoryLimit) under which a process should Check
// srcs: heapLimitBase plus, per byte of them, the largest of their
// languages' figures: checkLimitGenesis bytes for Genesis,
// checkLimitVVM for VVM, checkLimitGrimoire for Grimoire,
// checkLimitNanoVM for JSON and YAML (nano-vm programs and plans) and
// checkLimitPerByte for every other kind, whatever their size (a small input's limit is mostly the base, which
// the heap of a small check does not reach). As with HeapLimit, a check
// that needs more live memory still runs, with the collector running
// more often.
func CheckHeapLimit(srcs []Source) int64 {
	n := int64(0)
	perByte := int64(0)
	for _, s := range srcs {
		n += int64(len(s.Data))
		l, ok := checkLimits[strings.ToLower(filepath.Ext(s.Name))]
		if !ok {
			l = checkLimitPerByte
		}
		perByte = max(perByte, l)
	}
	if len(srcs) == 0 {
		perByte = checkLimitGenesis
	}
	return heapLimitBase + perByte*n
}

// compileModule runs the IR pipeline: verify, optimize, then emit the IR
// or hand it to the Forge backend. name names the output program in
// diagnostics.
func compileModule(m *ir.Module, name string, opts Options) (out *Output, diags diag.List) {
	// A panic of the optimizer or the backend is a bug of this compiler:
	// it becomes a diagnostic, never a crash of genesisc.
	defer func() {
		if p := recover(); p != nil {
			out, diags = nil, nil
			diags.Errorf(diag.Pos{File: name}, "0x08FF", "internal compiler error: %v", p)
		}
	}()
	// Every diagnostic names a file: one the IR gives no position (a
	// prelude function's, a missing main) is the program's.
	defer func() {
		for i := range diags {
			if diags[i].Pos.File == "" {
				diags[i].Pos = diag.Pos{File: name}
			}
		}
	}()
	if ds := ir.Verify(m); ds.HasErrors() {
		return nil, ds
	}
	// One pipeline for every target: the native and Go targets charge the
	// Forge program's stack use instruction by instruction, so they
	// compile the module Forge compiles (docs/decisions.md, N4).
	hooks := opt.Hooks{VerifyEach: opts.VerifyEach}
	if opts.DumpAfter != "" && opts.Dump != nil {
		hooks.AfterPass = func(p opt.Pass, m *ir.Module) {
			if p.Name == opts.DumpAfter {
				io.WriteString(opts.Dump, "; after "+p.Name+"\n"+ir.Print(m))
			}
		}
	}
	if err := opt.Run(m, opts.OptLevel, &hooks); err != nil {
		diags.Errorf(diag.Pos{File: name}, "0x08FF", "%v", err)
		return nil, diags
	}
	if opts.Emit == EmitIR {
		return &Output{Text: ir.Print(m), Module: m}, nil
	}
	// An agent program's identity: its source's base name and the hash
	// of its optimized IR, the same for the forge and go targets, so
	// that their runs' idempotency keys and journals agree.
	// (Other modules with effects, IR sources, get the same hash from
	// each backend, which computes it when it is not given.)
	program, hash := filepath.Base(name), ""
	if opts.agent && opts.Target != "native" {
		hash = ir.ProgramHash(m)
	}
	if opts.Target == "native" {
		// --emit asm prints the LLVM module.
		text, ds := llvm.Compile(m, name)
		if ds.HasErrors() {
			return nil, ds
		}
		if opts.Emit == EmitAsm {
			return &Output{Text: text}, ds
		}
		return &Output{LLVM: text}, ds
	}
	if opts.Target == "go" && opts.standalone {
		if opts.Emit == EmitAsm {
			diags.Errorf(diag.Pos{File: name}, "E0008", "--emit asm is for the forge and native targets")
			return nil, diags
		}
		files, ds := golang.GenerateStandalone(m, golang.StandaloneOptions{Source: name, Package: opts.GoPackage})
		if ds.HasErrors() {
			return nil, ds
		}
		return &Output{Files: files}, ds
	}
	if opts.Target == "go" {
		if opts.Emit == EmitAsm {
			diags.Errorf(diag.Pos{File: name}, "E0008", "--emit asm is for the forge target")
			return nil, diags
		}
		files, ds := golang.Generate(m, golang.Options{Package: opts.GoPackage, Source: name, Main: opts.GoMain, ProgramHash: hash, RuntimeImport: opts.GoRuntime})
		if ds.HasErrors() {
			return nil, ds
		}
		return &Output{Files: files, UsesRuntime: true}, ds
	}
	// The module is not used after: the backend may drop each function's
	// IR once compiled (the IR is the largest thing a compile holds).
	if opts.Emit == EmitAsm {
		text, ds := forgegen.CompileOptions(m, forgegen.Options{Consume: true, Program: program, ProgramHash: hash})
		if ds.HasErrors() {
			return nil, ds
		}
		return &Output{Text: text}, ds
	}
	// The backend assembles in memory (forge/asm): no text round trip.
	p, ds := forgegen.BuildOptions(m, name, forgegen.Options{Consume: true, Program: program, ProgramHash: hash})
	if ds.HasErrors() {
		return nil, ds
	}
	return &Output{Program: p}, ds
}

// SourceMap returns the sources as a diag.Sources map for rendering.
func SourceMap(srcs []Source) diag.Sources {
	m := diag.Sources{}
	for _, s := range srcs {
		m[s.Name] = s.Data
	}
	return m
}

// DiagSources returns the sources for rendering diags: srcs, and every
// other file a diagnostic names that can be read (a module a program
// imports), so that its lines show too.
func DiagSources(srcs []Source, diags diag.List) diag.Sources {
	m := SourceMap(srcs)
	for _, d := range diags {
		if _, ok := m[d.Pos.File]; ok || d.Pos.File == "" {
			continue
		}
		data, err := os.ReadFile(d.Pos.File)
		if err != nil {
			data = nil // rendered without its line
		}
		m[d.Pos.File] = data
	}
	return m
}

// OutputName is the default output file for a build of the first input.
func OutputName(first string, emit Emit) string {
	base := strings.TrimSuffix(first, filepath.Ext(first))
	if emit == EmitAsm {
		return base + ".s.fasm"
	}
	return base + ".frgp"
}
