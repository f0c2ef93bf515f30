// Package compiler is the driver of genesisc: it picks a frontend by file
// extension, runs it, and hands the result to the requested backend. It
// holds no language logic of its own.
package compiler

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"

	backend "github.com/genesis-toolchain/genesis/backend/forge"
	"github.com/genesis-toolchain/genesis/backend/golang"
	"github.com/genesis-toolchain/genesis/backend/llvm"
	"github.com/genesis-toolchain/genesis/forge/bytecode"
	"github.com/genesis-toolchain/genesis/frontend/diag"
	"github.com/genesis-toolchain/genesis/frontend/fasm"
	"github.com/genesis-toolchain/genesis/frontend/genesis"
	"github.com/genesis-toolchain/genesis/frontend/grimoire"
	"github.com/genesis-toolchain/genesis/frontend/nanovm"
	"github.com/genesis-toolchain/genesis/frontend/plan"
	"github.com/genesis-toolchain/genesis/frontend/vvm"
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
	// OptLevel is the optimization level of ir/opt: 0 runs no pass, 2
	// every pass.
	OptLevel int
	// DumpAfter names a pass after which the IR is printed to Dump.
	DumpAfter string
	Dump      io.Writer

	// standalone is set for Genesis sources: the go target then writes a
	// self-contained main package (golang.GenerateStandalone).
	standalone bool
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
	// Module is the optimized IR module of an --emit ir build, which
	// Text prints.
	Module *ir.Module
}

// Source is one input file.
type Source struct {
	Name string
	Data []byte
}

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

// Build compiles the sources into one program.
func Build(srcs []Source, opts Options) (*Output, diag.List) {
	var diags diag.List
	if opts.Target != "" && opts.Target != "forge" && opts.Target != "go" && opts.Target != "native" {
		diags.Errorf(diag.Pos{}, "E0002", "unknown target %q (supported: forge, go, native)", opts.Target)
		return nil, diags
	}
	ext, diags := language(srcs)
	if diags.HasErrors() {
		return nil, diags
	}
	switch ext {
	case ".fasm":
		if opts.Emit == EmitIR {
			diags.Errorf(diag.Pos{File: srcs[0].Name}, "E0007", "Forge assembly has no IR form (--emit ir is for languages that compile through the IR)")
			return nil, diags
		}
		if opts.Target == "go" || opts.Target == "native" {
			diags.Errorf(diag.Pos{File: srcs[0].Name}, "E0007", "Forge assembly runs only on the Forge Machine (--target forge)")
			return nil, diags
		}
		p, ds := fasm.Assemble(srcs[0].Name, srcs[0].Data)
		if ds.HasErrors() {
			return nil, ds
		}
		out := &Output{Program: p}
		if opts.Emit == EmitAsm {
			out.Text = fasm.Disassemble(p)
		}
		return out, ds
	case ".json", ".yaml", ".yml", ".vvm", ".spell":
		m, ds := compileAgent(ext, srcs[0].Name, srcs[0].Data, entryReader(srcs[0]))
		if ds.HasErrors() {
			return nil, ds
		}
		if opts.Emit != EmitIR && opts.Target != "go" {
			// Until agent programs run on the Forge Machine, the Forge
			// backend (which the native target goes through) compiles no
			// dynamic value: one diagnostic that says what to do, rather
			// than one per instruction (docs/decisions.md, "genesisc check
			// and the memory of a check").
			target := opts.Target
			if target == "" {
				target = "forge"
			}
			ds.Errorf(diag.Pos{File: srcs[0].Name, Line: 1, Col: 1}, CodeAgentTarget,
				"%s do not compile for the %s target yet: build a Go package with --target go (add --main for a command), or run the program with genesisc run %s",
				programsOf(ext, srcs[0].Data), target, srcs[0].Name)
			return nil, ds
		}
		out, more := compileModule(m, srcs[0].Name, opts)
		return out, append(ds, more...)
	case ".gen":
		m, ds := genesisModule(srcs)
		if ds.HasErrors() {
			return nil, ds
		}
		collectLarge(srcs)
		opts.standalone = true
		out, more := compileModule(m, srcs[0].Name, opts)
		return out, append(ds, more...)
	}
	// ".ir"
	m, ds := ir.Parse(srcs[0].Name, srcs[0].Data)
	if ds.HasErrors() {
		return nil, ds
	}
	return compileModule(m, srcs[0].Name, opts)
}

// CodeAgentTarget is the code of the diagnostic of a build of an agent
// program (VVM, Grimoire, nano-vm, a plan) for a target that cannot run
// it: the forge and native targets, until agent programs run on the
// Forge Machine.
const CodeAgentTarget = "E0009"

// programsOf names the programs of the language of an agent program,
// for messages.
func programsOf(ext string, data []byte) string {
	switch {
	case ext == ".vvm":
		return "VVM programs"
	case ext == ".spell":
		return "Grimoire spells"
	case ext == ".json" && plan.Is(data):
		return "execution plans"
	}
	return "nano-vm programs"
}

// language returns the extension, lower case, of the one language srcs
// are written in, or the diagnostics of inputs that do not form one
// program: none, languages mixed, several files of a language whose
// program is one file, an extension no frontend reads.
func language(srcs []Source) (string, diag.List) {
	var diags diag.List
	if len(srcs) == 0 {
		diags.Errorf(diag.Pos{}, "E0003", "no input files")
		return "", diags
	}
	langs := map[string]bool{}
	for _, s := range srcs {
		langs[strings.ToLower(filepath.Ext(s.Name))] = true
	}
	if len(langs) > 1 {
		exts := make([]string, 0, len(langs))
		for e := range langs {
			exts = append(exts, e)
		}
		sort.Strings(exts)
		diags.Errorf(diag.Pos{File: srcs[0].Name}, "E0004", "inputs mix languages (%s): build each language separately and link the results", strings.Join(exts, ", "))
		return "", diags
	}
	ext := strings.ToLower(filepath.Ext(srcs[0].Name))
	several := ""
	switch ext {
	case ".gen":
	case ".fasm":
		several = "several .fasm files: assemble each one and combine them with forge link"
	case ".json", ".yaml", ".yml":
		several = "several nano-vm programs or plans: a program is one file"
	case ".vvm", ".spell":
		several = "several " + ext + " files: a program is its entry file, which imports the others"
	case ".ir":
		several = "several .ir files: an IR file is a whole module"
	default:
		diags.Errorf(diag.Pos{File: srcs[0].Name}, "E0006", "no frontend for %q files (supported: .gen, .vvm, .spell, .json, .yaml, .yml, .fasm, .ir)", ext)
		return "", diags
	}
	if len(srcs) > 1 && several != "" {
		diags.Errorf(diag.Pos{File: srcs[1].Name}, "E0005", "%s", several)
		return "", diags
	}
	return ext, nil
}

// Check reports every diagnostic of srcs that their language gives — a
// frontend's syntax, names, types and checks, and for Genesis the
// lowering and the IR verifier, for Forge assembly the assembler, for
// the printed IR the parser and the verifier — without building a
// program: no optimizer and no backend run, so a target's limits show
// only at Build (as cargo check does). Its diagnostics are those Build
// reports before the optimizer and the backend run, but for the
// internal errors of a compiler bug in the IR of an agent language (E999
// and the like: the agent languages' lowering reports nothing else,
// which TestCheckIsTheFrontend holds it to, and Check does not lower
// them). What it holds is bounded by a
// small multiple of the input (docs/genesis.md, docs/vvm.md,
// docs/nanovm.md: "Limits"): Genesis is lowered and verified one
// function at a time, each function's IR dropped once verified.
func Check(srcs []Source) (diags diag.List) {
	ext, diags := language(srcs)
	if diags.HasErrors() {
		return diags
	}
	name := srcs[0].Name
	// A panic of a frontend is a bug of this compiler: a diagnostic,
	// never a crash of genesisc (Build gets the same from each
	// frontend's Compile, or from compileModule).
	defer func() {
		if p := recover(); p != nil {
			diags = append(diags, diag.Diagnostic{Pos: diag.Pos{File: name}, Severity: diag.Error, Code: "0x08FF",
				Msg: fmt.Sprintf("internal compiler error: %v", p)})
		}
	}()
	switch ext {
	case ".fasm":
		_, ds := fasm.Assemble(name, srcs[0].Data)
		return ds
	case ".json", ".yaml", ".yml", ".vvm", ".spell":
		return checkAgent(ext, name, srcs[0].Data, entryReader(srcs[0]))
	case ".gen":
		return checkGenesis(srcs)
	}
	// ".ir"
	m, ds := ir.Parse(name, srcs[0].Data)
	if ds.HasErrors() {
		return ds
	}
	checkPeak(m)
	return append(ds, ir.Verify(m)...)
}

// compileAgent compiles an agent program, whose language ext names, to
// IR: name and data are its entry file, read reads the modules it
// imports.
func compileAgent(ext, name string, data []byte, read func(string) ([]byte, error)) (*ir.Module, diag.List) {
	switch {
	case ext == ".vvm":
		return vvm.Compile(name, read)
	case ext == ".spell":
		return grimoire.Compile(name, read)
	case ext == ".json" && plan.Is(data):
		return plan.Compile(name, data) // an execution plan: groups, not steps
	}
	return nanovm.Compile(name, data)
}

// checkAgent is compileAgent without the lowering and the IR verifier:
// the frontend's parse and checks only. The lowering of an agent
// language reports nothing but internal errors (TestCheckIsTheFrontend).
func checkAgent(ext, name string, data []byte, read func(string) ([]byte, error)) diag.List {
	var held any // the checked program
	var ds diag.List
	switch {
	case ext == ".vvm":
		held, ds = vvm.Load(name, read)
	case ext == ".spell":
		held, ds = grimoire.Load(name, read)
	case ext == ".json" && plan.Is(data):
		held, ds = plan.Check(name, data)
	default:
		held, ds = nanovm.Check(name, data)
	}
	checkPeak(held)
	return ds
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

// entryReader reads the modules of a program whose entry file is entry:
// the entry from its source, the modules it imports from the file system.
func entryReader(entry Source) func(path string) ([]byte, error) {
	return func(path string) ([]byte, error) {
		if filepath.Clean(path) == filepath.Clean(entry.Name) {
			return entry.Data, nil
		}
		return os.ReadFile(path)
	}
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
// or 0 when it needs none: srcs are Genesis files of largeInput bytes or
// more in all, and the limit is heapLimitBase plus heapLimitPerByte bytes
// per byte of them. It is a soft limit: a program that needs more live
// memory still compiles, with the collector running more often (the Go
// runtime caps that at about half the CPU).
func HeapLimit(srcs []Source) int64 {
	n := int64(0)
	for _, s := range srcs {
		if strings.ToLower(filepath.Ext(s.Name)) != ".gen" {
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
// small tables, plus a multiple of the input. What Check holds live
// peaks at the checked tree, about 26 bytes per byte of Genesis and 19
// of VVM (TestCheckMemory bounds it at 40): 64 leaves the collector
// room enough to cost about a quarter more CPU on large Genesis input,
// where without a limit the heap of genesisc (which collects at 400 %
// growth) reached 150 bytes a byte (docs/genesis.md, "Limits").
const checkLimitPerByte = 64

// CheckHeapLimit returns the soft limit on the Go heap (for
// runtime/debug.SetMemoryLimit) under which a process should Check
// srcs: heapLimitBase plus checkLimitPerByte bytes per byte of them,
// whatever their size and language (a small input's limit is mostly the
// base, which the heap of a small check does not reach). As with
// HeapLimit, a check that needs more live memory still runs, with the
// collector running more often.
func CheckHeapLimit(srcs []Source) int64 {
	n := int64(0)
	for _, s := range srcs {
		n += int64(len(s.Data))
	}
	return heapLimitBase + checkLimitPerByte*n
}

// genesisModule parses, checks and lowers Genesis files, which together
// form one program.
func genesisModule(srcs []Source) (*ir.Module, diag.List) {
	prog, diags := genesisProgram(srcs)
	if diags.HasErrors() {
		return nil, diags
	}
	// Nothing reads the checked bodies after lowering: each may die as
	// soon as its IR is built.
	m, ds := genesis.LowerConsuming(prog)
	return m, append(diags, ds...)
}

// checkGenesis reports what genesisModule would, keeping neither the
// module nor the checked bodies: each function's IR is verified and
// dropped once lowered (genesis.CheckLowering).
func checkGenesis(srcs []Source) diag.List {
	prog, diags := genesisProgram(srcs)
	if diags.HasErrors() {
		return diags
	}
	checkPeak(prog)
	return append(diags, genesis.CheckLowering(prog)...)
}

// genesisProgram parses and checks Genesis files.
func genesisProgram(srcs []Source) (*genesis.Program, diag.List) {
	gsrcs := make([]genesis.Source, len(srcs))
	for i, src := range srcs {
		gsrcs[i] = genesis.Source{Name: src.Name, Data: src.Data}
	}
	// One error cap for all the files (and phases: each runs only if
	// those before it found no error).
	files, diags := genesis.ParseFiles(gsrcs)
	if diags.HasErrors() {
		return nil, diags
	}
	prog, ds := genesis.Check(files)
	return prog, append(diags, ds...)
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
	var hooks opt.Hooks
	if opts.DumpAfter != "" && opts.Dump != nil {
		hooks.AfterPass = func(p opt.Pass, m *ir.Module) {
			if p.Name == opts.DumpAfter {
				io.WriteString(opts.Dump, "; after "+p.Name+"\n"+ir.Print(m))
			}
		}
	}
	opt.Run(m, opts.OptLevel, &hooks)
	if opts.Emit == EmitIR {
		return &Output{Text: ir.Print(m), Module: m}, nil
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
		files, ds := golang.Generate(m, golang.Options{Package: opts.GoPackage, Source: name, Main: opts.GoMain})
		if ds.HasErrors() {
			return nil, ds
		}
		return &Output{Files: files}, ds
	}
	// The module is not used after: the backend may drop each function's
	// IR once compiled (the IR is the largest thing a compile holds).
	if opts.Emit == EmitAsm {
		text, ds := backend.CompileOptions(m, backend.Options{Consume: true})
		if ds.HasErrors() {
			return nil, ds
		}
		return &Output{Text: text}, ds
	}
	// The backend assembles in memory (forge/asm): no text round trip.
	p, ds := backend.BuildOptions(m, name, backend.Options{Consume: true})
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
