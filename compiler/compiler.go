// Package compiler is the driver of genesisc: it picks a frontend by file
// extension, runs it, and hands the result to the requested backend. It
// holds no language logic of its own.
package compiler

import (
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
	if len(srcs) == 0 {
		diags.Errorf(diag.Pos{}, "E0003", "no input files")
		return nil, diags
	}
	langs := map[string][]Source{}
	for _, s := range srcs {
		ext := strings.ToLower(filepath.Ext(s.Name))
		langs[ext] = append(langs[ext], s)
	}
	if len(langs) > 1 {
		exts := make([]string, 0, len(langs))
		for e := range langs {
			exts = append(exts, e)
		}
		sort.Strings(exts)
		diags.Errorf(diag.Pos{File: srcs[0].Name}, "E0004", "inputs mix languages (%s): build each language separately and link the results", strings.Join(exts, ", "))
		return nil, diags
	}
	ext := strings.ToLower(filepath.Ext(srcs[0].Name))
	switch ext {
	case ".fasm":
		if len(srcs) > 1 {
			diags.Errorf(diag.Pos{File: srcs[1].Name}, "E0005", "several .fasm files: assemble each one and combine them with forge link")
			return nil, diags
		}
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
	case ".json", ".yaml", ".yml":
		if len(srcs) > 1 {
			diags.Errorf(diag.Pos{File: srcs[1].Name}, "E0005", "several nano-vm programs or plans: a program is one file")
			return nil, diags
		}
		compile := nanovm.Compile
		if ext == ".json" && plan.Is(srcs[0].Data) {
			compile = plan.Compile // an execution plan: groups, not steps
		}
		m, ds := compile(srcs[0].Name, srcs[0].Data)
		if ds.HasErrors() {
			return nil, ds
		}
		out, more := compileModule(m, srcs[0].Name, opts)
		return out, append(ds, more...)
	case ".vvm", ".spell":
		if len(srcs) > 1 {
			diags.Errorf(diag.Pos{File: srcs[1].Name}, "E0005", "several %s files: a program is its entry file, which imports the others", ext)
			return nil, diags
		}
		compile := vvm.Compile
		if ext == ".spell" {
			compile = grimoire.Compile
		}
		m, ds := compile(srcs[0].Name, entryReader(srcs[0]))
		if ds.HasErrors() {
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
	case ".ir":
		if len(srcs) > 1 {
			diags.Errorf(diag.Pos{File: srcs[1].Name}, "E0005", "several .ir files: an IR file is a whole module")
			return nil, diags
		}
		m, ds := ir.Parse(srcs[0].Name, srcs[0].Data)
		if ds.HasErrors() {
			return nil, ds
		}
		return compileModule(m, srcs[0].Name, opts)
	}
	diags.Errorf(diag.Pos{File: srcs[0].Name}, "E0006", "no frontend for %q files (supported: .gen, .vvm, .spell, .json, .yaml, .yml, .fasm, .ir)", ext)
	return nil, diags
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

// genesisModule parses, checks and lowers Genesis files, which together
// form one program.
func genesisModule(srcs []Source) (*ir.Module, diag.List) {
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
	diags = append(diags, ds...)
	if diags.HasErrors() {
		return nil, diags
	}
	// Nothing reads the checked bodies after lowering: each may die as
	// soon as its IR is built.
	m, ds := genesis.LowerConsuming(prog)
	return m, append(diags, ds...)
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
	text, ds := backend.CompileOptions(m, backend.Options{Consume: true})
	if ds.HasErrors() {
		return nil, ds
	}
	if opts.Emit == EmitAsm {
		return &Output{Text: text}, ds
	}
	p, ads := fasm.Assemble(name+".s.fasm", []byte(text))
	if ads.HasErrors() {
		// The backend's assembly must always assemble: this is a compiler bug.
		var internal diag.List
		internal.Errorf(diag.Pos{File: name}, "0x08FF", "internal error: the generated assembly does not assemble: %s", ads.Error())
		return nil, internal
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
