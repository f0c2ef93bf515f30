// Package difftest runs Genesis programs on the three targets of the
// toolchain — the Forge Machine, native code through LLVM and Go — and
// compares how they end: what they print on standard output and the fault
// they stop with, if any. The conformance suite's differential test and
// the random program generator (internal/testharness/genfuzz) use it.
//
// Building is batched, because the external compilers dominate the time:
// native programs share one compiled runtime object, and every Go program
// becomes a package of one command, built by a single go build.
package difftest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/genesis-toolchain/genesis/backend/llvm"
	"github.com/genesis-toolchain/genesis/compiler"
	"github.com/genesis-toolchain/genesis/forge/host"
	"github.com/genesis-toolchain/genesis/forge/vm"
	"github.com/genesis-toolchain/genesis/ir"
)

// The machine of a run: forge exec's defaults, unless the program sets
// its own (Program.Memory, Program.Stack), and on the Forge Machine a
// tick budget the programs do not near.
const (
	runTicks      = 1 << 32
	DefaultMemory = 16 << 20
	DefaultStack  = 64 << 10
)

// RunTimeout bounds one run of a compiled program.
const RunTimeout = 20 * time.Second

// Program is one Genesis program: its files, compiled together in order,
// its standard input, and the machine it runs on.
type Program struct {
	Name    string
	Sources []compiler.Source
	Stdin   []byte
	Limits
}

// Limits are the memory quota and the machine stack of a run, in bytes;
// zero means forge exec's default. The Forge Machine gets them as
// forge exec's --memory and --stack, and the compiled programs as the
// same arguments.
type Limits struct {
	Memory, Stack uint64
}

func (l Limits) resolve() Limits {
	if l.Memory == 0 {
		l.Memory = DefaultMemory
	}
	if l.Stack == 0 {
		l.Stack = DefaultStack
	}
	return l
}

// Args returns the command-line arguments that give a compiled program
// the limits (none for the defaults).
func (l Limits) Args() []string {
	var args []string
	if l.Memory != 0 {
		args = append(args, "--memory", fmt.Sprint(l.Memory))
	}
	if l.Stack != 0 {
		args = append(args, "--stack", fmt.Sprint(l.Stack))
	}
	return args
}

func (l Limits) String() string {
	l = l.resolve()
	return fmt.Sprintf("memory %d, stack %d", l.Memory, l.Stack)
}

// Outcome is how a run ended: its standard output, and the fault it
// stopped with as the conformance suite writes it ("DIVIDE_BY_ZERO",
// "USER_FAULT code=7"), empty when it halted.
type Outcome struct {
	Stdout string
	Fault  string
}

func (o Outcome) String() string {
	if o.Fault == "" {
		return fmt.Sprintf("printed %q and halted", o.Stdout)
	}
	return fmt.Sprintf("printed %q and faulted %s", o.Stdout, o.Fault)
}

// Forge compiles p at the optimization level and runs it on the Forge
// Machine as `forge exec` does, p.Stdin delivered on channel 2.
func Forge(p Program, level int) (Outcome, error) {
	img, err := CompileForge(p, level)
	if err != nil {
		return Outcome{}, err
	}
	return RunForge(img, p.Stdin, p.Limits)
}

// CompileForge compiles p at the optimization level for the Forge
// Machine, to run it with RunForge (on several machines, say).
func CompileForge(p Program, level int) (*vm.Image, error) {
	res, diags := compiler.Build(p.Sources, compiler.Options{OptLevel: level})
	if diags.HasErrors() {
		return nil, fmt.Errorf("does not compile: %s", diags.Error())
	}
	img, err := vm.NewImage(res.Program)
	if err != nil {
		return nil, fmt.Errorf("does not load: %v", err)
	}
	return img, nil
}

// RunForge runs a program on the Forge Machine as forge exec does with
// the limits (docs/forge-cli.md) and a tick budget the programs do not
// near: stdin is delivered on channel 2 in forge exec's messages.
func RunForge(img *vm.Image, stdin []byte, lim Limits) (Outcome, error) {
	var stdout strings.Builder
	lim = lim.resolve()
	r, err := host.Run(img, host.Options{
		Limits: host.Limits{Ticks: runTicks, Memory: lim.Memory, Stack: lim.Stack},
		Input:  host.NewStdin(bytes.NewReader(stdin)),
		Stdout: &stdout,
	})
	if err != nil {
		return Outcome{}, err
	}
	o := Outcome{Stdout: stdout.String()}
	switch r.State {
	case vm.Halted:
	case vm.Faulted:
		o.Fault = r.Fault.String()
		if r.Fault == vm.UserFault {
			o.Fault += fmt.Sprintf(" code=%d", r.UserCode)
		}
	default:
		return o, fmt.Errorf("stopped in state %s", r.State)
	}
	return o, nil
}

// NativeAvailable reports why native programs cannot be built here (llc
// or cc missing), or nil.
func NativeAvailable() error { return llvm.Available(llvm.Tools{}) }

// BuildNative compiles every program into one native executable in dir
// (llvm.LinkMulti), which runs program i when its argument is Arg(i). It
// returns the executable, the error of each program that does not
// compile, and the error of the tools.
func BuildNative(progs []Program, dir string, level int) (string, []error, error) {
	errs := make([]error, len(progs))
	mods := make([]llvm.Program, len(progs))
	for i, p := range progs {
		// The module the Forge program is compiled from: the native
		// program charges that program's use of the stacks.
		res, diags := compiler.Build(p.Sources, compiler.Options{Emit: compiler.EmitIR, OptLevel: level})
		if diags.HasErrors() {
			errs[i] = fmt.Errorf("does not compile: %s", diags.Error())
			mods[i] = llvm.Program{Module: ir.NewModule(), File: p.Name} // fails again below, without main
			continue
		}
		mods[i] = llvm.Program{Module: res.Module, File: p.Sources[0].Name}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", errs, err
	}
	bin := filepath.Join(dir, "native.bin")
	diags, err := llvm.LinkMulti(mods, bin, llvm.Tools{})
	for i, ds := range diags {
		if errs[i] == nil && ds.HasErrors() {
			errs[i] = fmt.Errorf("does not compile natively: %s", ds.Error())
		}
	}
	return bin, errs, err
}

// Arg is the argument that selects program i of the commands BuildNative
// and BuildGo make.
func Arg(i int) string { return llvm.MultiArg(i) }

// BuildGo compiles every program to a package of one Go command in dir,
// built by one go build; the command runs program i when its argument is
// Arg(i). It returns the command, the error of each
// program that does not translate, and the error of the build.
func BuildGo(progs []Program, dir string, level int) (string, []error, error) {
	errs := make([]error, len(progs))
	var imports, cases strings.Builder
	for i, p := range progs {
		pkg := Arg(i)
		res, diags := compiler.Build(p.Sources, compiler.Options{Target: "go", OptLevel: level, GoPackage: pkg})
		if diags.HasErrors() {
			errs[i] = fmt.Errorf("does not compile: %s", diags.Error())
			continue
		}
		for _, f := range res.Files {
			if err := write(filepath.Join(dir, pkg, f.Name), f.Data); err != nil {
				return "", errs, err
			}
		}
		fmt.Fprintf(&imports, "\t%q\n", "difftest/"+pkg)
		fmt.Fprintf(&cases, "\tcase %q:\n\t\t%s.Main(os.Args[2:])\n", pkg, pkg)
	}
	main := "package main\n\nimport (\n\t\"os\"\n\n" + imports.String() + ")\n\nfunc main() {\n\tswitch os.Args[1] {\n" + cases.String() + "\t}\n\tos.Exit(2)\n}\n"
	if err := write(filepath.Join(dir, "main.go"), []byte(main)); err != nil {
		return "", errs, err
	}
	if err := write(filepath.Join(dir, "go.mod"), []byte("module difftest\n\ngo 1.21\n")); err != nil {
		return "", errs, err
	}
	bin := filepath.Join(dir, "difftest.bin")
	cmd := exec.Command("go", "build", "-trimpath", "-o", bin, ".")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GOWORK=off")
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", errs, fmt.Errorf("go build: %v\n%s", err, out)
	}
	return bin, errs, nil
}

func write(path string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return os.WriteFile(path, data, 0o644)
}

// faultLine is the line a compiled program's fault prints on standard
// error; OUT_OF_MEMORY goes on to say what the program needs.
var faultLine = regexp.MustCompile(`(?m)^genesis: FAULTED: (\w+)(?: \(code (\d+)\))?(?:: .*)?$`)

// Run runs a compiled program with stdin as its standard input and reads
// how it ended: exit status 0 is a halt, 3 a fault named on standard
// error; anything else is an error.
func Run(bin string, stdin []byte, args ...string) (Outcome, error) {
	ctx, cancel := context.WithTimeout(context.Background(), RunTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Stdin = bytes.NewReader(stdin)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	o := Outcome{Stdout: stdout.String()}
	var ee *exec.ExitError
	switch {
	case err == nil:
		return o, nil
	case errors.As(err, &ee) && ee.ExitCode() == 3:
		m := faultLine.FindStringSubmatch(stderr.String())
		if m == nil {
			return o, fmt.Errorf("exit status 3 without a fault line: %q", stderr.String())
		}
		o.Fault = m[1]
		if m[2] != "" {
			o.Fault += " code=" + m[2]
		}
		return o, nil
	}
	return o, fmt.Errorf("%v: %s", err, stderr.String())
}

// parallel runs f(0), …, f(n-1) on GOMAXPROCS workers.
func parallel(n int, f func(int)) {
	var wg sync.WaitGroup
	next := make(chan int)
	for w := 0; w < runtime.GOMAXPROCS(0); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				f(i)
			}
		}()
	}
	for i := 0; i < n; i++ {
		next <- i
	}
	close(next)
	wg.Wait()
}

// Parallel runs f(0), …, f(n-1) on GOMAXPROCS workers.
func Parallel(n int, f func(int)) { parallel(n, f) }
