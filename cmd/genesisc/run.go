package main

import (
	"errors"
	"fmt"
	"go/token"
	"io"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/genesis-toolchain/genesis/backend/golang"
	"github.com/genesis-toolchain/genesis/backend/llvm"
	"github.com/genesis-toolchain/genesis/compiler"
	"github.com/genesis-toolchain/genesis/diag"
	"github.com/genesis-toolchain/genesis/internal/cliargs"
	"github.com/genesis-toolchain/genesis/ir/opt"
	"github.com/genesis-toolchain/genesis/runtime/export"
)

// Exit statuses.
const (
	exitOK    = 0
	exitDiag  = 1 // the input has errors
	exitUsage = 2 // the command line is wrong
)

// exitError carries an exit status out of a command action.
type exitError struct{ code int }

func (e exitError) Error() string { return fmt.Sprintf("exit %d", e.code) }

// run is the whole command: it parses args, runs the command, and returns
// the exit status. It writes only to stdout and stderr.
func run(args []string, stdout, stderr io.Writer) int {
	app := &cli.App{
		Name:  "genesisc",
		Usage: "compile agent programs and Genesis ahead of time",
		UsageText: "genesisc COMMAND [flags] FILE...\n\n" +
			"Flags may come before or after the files; after --, everything is a file.",
		Version:   cliargs.Version(),
		Writer:    stdout,
		ErrWriter: stderr,
		// --input values are JSON, whose commas must not split them.
		DisableSliceFlagSeparator: true,
		Commands: []*cli.Command{
			{
				Name:      "build",
				Usage:     "compile FILEs into one program",
				UsageText: "genesisc build [-o OUT] [--target forge|go|native] [--main] [--package NAME] [--emit ir|asm] [-O0|-O2] [--dump-after PASS] [--verify-each] FILE...",
				Description: "Compiles the input files into one program. The frontend is chosen by extension:\n" +
					"  .gen              Genesis (several files are one program)\n" +
					"  .vvm              a VVM program\n" +
					"  .spell            a Grimoire spell (indentation or brace syntax)\n" +
					"  .json .yaml .yml  a nano-vm program; a .json with \"groups\" is an execution plan\n" +
					"  .fasm             Forge assembly\n" +
					"  .ir               the printed IR\n" +
					"Targets (--target):\n" +
					"  forge   (default) a Forge program, OUT.frgp, run by 'forge exec'; Genesis, Forge\n" +
					"          assembly and IR without agent effects\n" +
					"  go      a Go package in the directory OUT (default: the first input's name without\n" +
					"          extension, plus _go): for an agent program a package linked against the\n" +
					"          runtime (--main: a command taking genesisc run's flags), for Genesis a\n" +
					"          standalone command with its own go.mod\n" +
					"  native  an executable through LLVM (llc and cc must be installed; default OUT: the\n" +
					"          first input's name without extension); Genesis only\n" +
					"--emit ir prints the optimized IR and --emit asm the Forge assembly (native: the\n" +
					"LLVM module) instead, on standard output unless -o is given. Flags may also follow\n" +
					"the files; after --, everything is a file.",
				Flags: []cli.Flag{
					&cli.StringFlag{Name: "o", Usage: "write the output to `OUT` (default: the first input with the output's extension; - for stdout)"},
					&cli.StringFlag{Name: "target", Value: "forge", Usage: "the backend: forge, go or native"},
					&cli.BoolFlag{Name: "main", Usage: "with --target go: make the package a command (package main) taking genesisc run's flags"},
					&cli.StringFlag{Name: "package", Usage: "with --target go: the Go package `NAME` (default: program)"},
					&cli.StringFlag{Name: "runtime", Usage: "with --target go, output inside an app's Go module: the runtime copy's directory `DIR` (default: " + export.DefaultDir + " under the module's root)"},
					&cli.StringFlag{Name: "emit", Usage: "print an intermediate form instead of the binary: ir or asm"},
					&cli.BoolFlag{Name: "O0", Usage: "do not optimize"},
					&cli.BoolFlag{Name: "O2", Usage: "optimize fully (the default)"},
					&cli.StringFlag{Name: "dump-after", Usage: "print the IR after the optimization pass `PASS` to standard output"},
					&cli.BoolFlag{Name: "verify-each", Usage: "verify the IR after every optimization pass (an internal error then names the pass that broke it)"},
				},
				Action: func(c *cli.Context) error { return build(c, stdout, stderr) },
			},
			runCommand(stdout, stderr),
			runtimeCommand(stdout, stderr),
			cacheCommand(stdout, stderr),
			planCommand(stdout, stderr),
			traceCommand(stdout, stderr),
			fmtCommand(stdout, stderr),
			workerCommand(stdout, stderr),
			submitCommand(stdout, stderr),
			statusCommand(stdout, stderr),
			runsCommand(stdout, stderr),
			resumeCommand(stdout, stderr),
			{
				Name:      "check",
				Usage:     "report the program's diagnostics without building it",
				UsageText: "genesisc check FILE...",
				Description: "Runs the frontend of the input files' language (the kinds build reads) and\n" +
					"reports its diagnostics: syntax, names, types and every check of the\n" +
					"language, and for Genesis the lowering to the IR and the IR verifier. No\n" +
					"backend runs, so a target's limits show at build. Exits 0 when there is\n" +
					"no error (warnings are printed), 1 when there is one.",
				Action: func(c *cli.Context) error { return check(c, stderr) },
			},
		},
		ExitErrHandler: func(*cli.Context, error) {},
	}
	args, err := cliargs.Reorder(app, args)
	if err != nil {
		var mv *cliargs.MissingValue
		errors.As(err, &mv)
		fmt.Fprintf(stderr, "genesisc %s: %v\n", mv.Command, err)
		return exitUsage
	}
	err = app.Run(args)
	var ee exitError
	switch {
	case err == nil:
		return exitOK
	case errors.As(err, &ee):
		return ee.code
	default:
		fmt.Fprintf(stderr, "genesisc: %v\n", err)
		return exitUsage
	}
}

// compile reads and compiles the command's file arguments, printing
// diagnostics to stderr.
func compile(c *cli.Context, opts compiler.Options, stderr io.Writer) (*compiler.Output, error) {
	names := c.Args().Slice()
	if len(names) == 0 {
		fmt.Fprintf(stderr, "genesisc %s: no input files\n", c.Command.Name)
		return nil, exitError{exitUsage}
	}
	return compileFiles(names, opts, stderr)
}

// compileFiles reads and compiles the files names, under the heap limit a
// build of them calls for, printing diagnostics to stderr.
func compileFiles(names []string, opts compiler.Options, stderr io.Writer) (*compiler.Output, error) {
	srcs, diags := compiler.ReadSources(names)
	var out *compiler.Output
	if !diags.HasErrors() {
		var more diag.List
		withHeapLimit(compiler.HeapLimit(srcs), func() {
			out, more = compiler.Build(srcs, opts)
		})
		diags = append(diags, more...)
	}
	fmt.Fprint(stderr, diags.Render(compiler.DiagSources(srcs, diags)))
	if diags.HasErrors() {
		return nil, exitError{exitDiag}
	}
	return out, nil
}

// check reports the diagnostics of the command's file arguments
// (compiler.Check), under the heap limit a check of them calls for.
func check(c *cli.Context, stderr io.Writer) error {
	names := c.Args().Slice()
	if len(names) == 0 {
		fmt.Fprintf(stderr, "genesisc %s: no input files\n", c.Command.Name)
		return exitError{exitUsage}
	}
	srcs, diags := compiler.ReadSources(names)
	// The report is rendered under the limit too: lifted as soon as the
	// check returns, it would let the heap grow from what the check left
	// (four times the live heap of its last collection, with GOGC 400)
	// while the diagnostics are rendered.
	withHeapLimit(compiler.CheckHeapLimit(srcs), func() {
		if !diags.HasErrors() {
			diags = append(diags, compiler.Check(srcs)...)
		}
		fmt.Fprint(stderr, diags.Render(compiler.DiagSources(srcs, diags)))
	})
	if diags.HasErrors() {
		return exitError{exitDiag}
	}
	return nil
}

func build(c *cli.Context, stdout, stderr io.Writer) error {
	opts := compiler.Options{Target: c.String("target"), Emit: compiler.Emit(c.String("emit")), OptLevel: opt.MaxLevel,
		GoPackage: c.String("package"), GoMain: c.Bool("main"), VerifyEach: c.Bool("verify-each")}
	switch opts.Emit {
	case compiler.EmitBinary, compiler.EmitAsm, compiler.EmitIR:
	default:
		fmt.Fprintf(stderr, "genesisc build: unknown --emit %q (supported: ir, asm)\n", opts.Emit)
		return exitError{exitUsage}
	}
	switch {
	case c.Bool("O0") && c.Bool("O2"):
		fmt.Fprintln(stderr, "genesisc build: -O0 and -O2 contradict each other")
		return exitError{exitUsage}
	case c.Bool("O0"):
		opts.OptLevel = 0
	}
	if name := c.String("dump-after"); name != "" {
		p, ok := opt.Lookup(name)
		if !ok {
			var names []string
			for _, p := range opt.Passes() {
				names = append(names, p.Name)
			}
			fmt.Fprintf(stderr, "genesisc build: --dump-after: no pass %q (passes: %s)\n", name, strings.Join(names, ", "))
			return exitError{exitUsage}
		}
		if !p.Runs(opts.OptLevel) {
			fmt.Fprintf(stderr, "genesisc build: --dump-after: pass %q does not run at -O%d\n", name, opts.OptLevel)
			return exitError{exitUsage}
		}
		opts.DumpAfter, opts.Dump = name, stdout
	}
	if opts.Target != "forge" && opts.Target != "go" && opts.Target != "native" {
		fmt.Fprintf(stderr, "genesisc build: unknown --target %q (supported: forge, go, native)\n", opts.Target)
		return exitError{exitUsage}
	}
	if opts.Target == "native" && opts.Emit == compiler.EmitBinary {
		// Before compiling: a missing tool is the first thing to say.
		if err := llvm.Available(llvm.Tools{}); err != nil {
			fmt.Fprintf(stderr, "genesisc build: %v\n", err)
			return exitError{exitDiag}
		}
	}
	if opts.Target != "go" && (opts.GoMain || opts.GoPackage != "" || c.String("runtime") != "") {
		fmt.Fprintln(stderr, "genesisc build: --main, --package and --runtime are for --target go")
		return exitError{exitUsage}
	}
	if opts.GoPackage != "" && !token.IsIdentifier(opts.GoPackage) {
		fmt.Fprintf(stderr, "genesisc build: --package %q is not a Go identifier\n", opts.GoPackage)
		return exitError{exitUsage}
	}
	goDir := c.String("o")
	if goDir == "" && c.NArg() > 0 {
		first := c.Args().First()
		goDir = strings.TrimSuffix(first, filepath.Ext(first)) + "_go"
	}
	// A package written into an app's module links a copy of the runtime
	// in that module (the toolchain's module is not published).
	var (
		rtModule export.Module
		rtDir    string
	)
	if opts.Target == "go" && opts.Emit == compiler.EmitBinary && goDir != "" {
		var err error
		rtModule, rtDir, opts.GoRuntime, err = runtimeFor(goDir, c.String("runtime"))
		if err != nil {
			fmt.Fprintf(stderr, "genesisc build: %v\n", err)
			return exitError{exitUsage}
		}
	}
	out, err := compile(c, opts, stderr)
	if err != nil {
		return err
	}
	if out.Files != nil {
		if err := writeFiles(goDir, out.Files); err != nil {
			fmt.Fprintf(stderr, "genesisc build: %v\n", err)
			return exitError{exitDiag}
		}
		if out.UsesRuntime && rtDir != "" {
			if err := exportRuntime(rtModule, rtDir, goDir, stderr); err != nil {
				fmt.Fprintf(stderr, "genesisc build: the runtime copy: %v\n", err)
				return exitError{exitDiag}
			}
		}
		return nil
	}
	if opts.Target == "native" && opts.Emit == compiler.EmitBinary {
		dest := c.String("o")
		if dest == "" {
			first := c.Args().First()
			dest = strings.TrimSuffix(first, filepath.Ext(first))
		}
		if err := llvm.Link(out.LLVM, dest, llvm.Tools{}); err != nil {
			fmt.Fprintf(stderr, "genesisc build: %v\n", err)
			return exitError{exitDiag}
		}
		return nil
	}
	data := []byte(out.Text)
	if opts.Emit == compiler.EmitBinary {
		data = out.Program.Encode()
	}
	dest := c.String("o")
	if dest == "" {
		if opts.Emit != compiler.EmitBinary {
			dest = "-"
		} else {
			dest = compiler.OutputName(c.Args().First(), opts.Emit)
		}
	}
	if dest == "-" {
		_, err := stdout.Write(data)
		return err
	}
	if err := os.WriteFile(dest, data, 0o644); err != nil {
		fmt.Fprintf(stderr, "genesisc build: %v\n", err)
		return exitError{exitDiag}
	}
	return nil
}

// writeFiles writes a generated Go package into dir.
func writeFiles(dir string, files []golang.File) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for _, f := range files {
		if err := os.WriteFile(filepath.Join(dir, f.Name), f.Data, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// withHeapLimit runs build with the Go heap's soft limit lowered to limit
// (when limit is positive and below the current one, which GOMEMLIMIT may
// have set), and restores the previous limit after, so that what runs
// next in the process (a program genesisc run executes) is not bound by
// it. main collects only when the heap has grown by 400 %, which keeps
// small builds fast but let a large Genesis compile reach 340 bytes per
// byte of input; compiler.HeapLimit keeps it near 160 (docs/decisions.md,
// "Hostile input").
func withHeapLimit(limit int64, build func()) {
	if prev := debug.SetMemoryLimit(-1); limit > 0 && limit < prev {
		debug.SetMemoryLimit(limit)
		defer debug.SetMemoryLimit(prev)
	}
	build()
}
