package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/genesis-toolchain/genesis/forge/bytecode"
	"github.com/genesis-toolchain/genesis/forge/host"
	"github.com/genesis-toolchain/genesis/forge/vm"
	"github.com/genesis-toolchain/genesis/internal/cliargs"
)

// Exit statuses of the forge command (docs/forge-cli.md).
const (
	exitOK      = 0 // success; for exec and replay, the program halted
	exitFail    = 1 // assembly or link errors, an invalid proof, a diverging replay, a failed write
	exitUsage   = 2 // a bad command line, or an input file that cannot be read or does not load
	exitFaulted = 3 // the program faulted
	exitBlocked = 4 // the program blocked on a channel nobody services
)

// exitError carries an exit status out of a command action; whatever
// there was to say has been written to stderr already.
type exitError struct{ code int }

func (e exitError) Error() string { return fmt.Sprintf("exit status %d", e.code) }

// env is what a command may touch: the three standard streams. Files are
// named by the command line.
type env struct {
	stdin          io.Reader
	stdout, stderr io.Writer
}

// run is the whole forge command: it parses args, runs the command and
// returns the exit status, reading only stdin and the files named in args
// and writing only stdout, stderr and the files named in args.
func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	// A run's heap is mostly the machine's memory, allocated once and free
	// of pointers; collecting at the default 100 % growth only spends CPU
	// time in the middle of metered execution (about 3 % on make bench).
	debug.SetGCPercent(400)
	e := &env{stdin: stdin, stdout: stdout, stderr: stderr}
	app := &cli.App{
		Name:  "forge",
		Usage: "run, prove, replay and link Forge Machine programs",
		UsageText: "forge COMMAND [flags] ARGS...\n\n" +
			"Flags may come before or after the arguments; after --, everything is an\n" +
			"argument. Exit status: 0 success (the program halted), 1 failure (assembly\n" +
			"or link errors, an invalid proof, a diverging replay), 2 bad usage or an\n" +
			"input that does not load, 3 the program faulted, 4 the program blocked on a\n" +
			"channel nobody services.",
		Writer:          stdout,
		ErrWriter:       stderr,
		Reader:          stdin,
		Version:         cliargs.Version(),
		HideHelpCommand: false,
		OnUsageError:    e.onUsageError,
		ExitErrHandler:  func(*cli.Context, error) {},
		Action: func(c *cli.Context) error {
			if c.Args().Present() {
				return e.fail(exitUsage, "unknown command %q (run 'forge --help' for the list)", c.Args().First())
			}
			// No command: the usage, as an error, goes to stderr.
			c.App.Writer = e.stderr
			cli.ShowAppHelp(c)
			return exitError{exitUsage}
		},
		Commands: e.commands(),
	}
	for _, cmd := range app.Commands {
		cmd.OnUsageError = e.onUsageError
	}
	if len(args) > 2 {
		switch cmd := args[1]; cmd {
		case "exec", "replay", "check-proof":
			// An agent program takes the flags of a compiled agent
			// program (docs/runtime.md, Main) besides the machine's.
			if p, at, ok := agentProgram(args[2:]); ok {
				return e.runAgent(cmd, args[2:], p, at)
			}
		}
	}
	args, err := cliargs.Reorder(app, args)
	if err != nil {
		var mv *cliargs.MissingValue
		errors.As(err, &mv)
		fmt.Fprintf(stderr, "forge %s: %v\nRun 'forge %s --help' for usage.\n", mv.Command, err, mv.Command)
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
		fmt.Fprintf(stderr, "forge: %v\n", err)
		return exitUsage
	}
}

func (e *env) commands() []*cli.Command {
	return []*cli.Command{
		e.execCommand(),
		e.replayCommand(),
		e.keygenCommand(),
		e.checkProofCommand(),
		e.asmCommand(),
		e.disasmCommand(),
		e.verifyCommand(),
		e.hashCommand(),
		e.linkCommand(),
	}
}

// fail reports an error on stderr, "forge: " first, and returns the exit
// status to leave with.
func (e *env) fail(code int, format string, args ...any) error {
	fmt.Fprintf(e.stderr, "forge: "+format+"\n", args...)
	return exitError{code}
}

// usage reports a command line mistake.
func (e *env) usage(c *cli.Context, format string, args ...any) error {
	fmt.Fprintf(e.stderr, "forge %s: %s\nRun 'forge %s --help' for usage.\n", c.Command.Name, fmt.Sprintf(format, args...), c.Command.Name)
	return exitError{exitUsage}
}

func (e *env) onUsageError(c *cli.Context, err error, _ bool) error {
	name := c.Command.Name
	if name == "" {
		fmt.Fprintf(e.stderr, "forge: %v\nRun 'forge --help' for usage.\n", err)
	} else {
		fmt.Fprintf(e.stderr, "forge %s: %v\nRun 'forge %s --help' for usage.\n", name, err, name)
	}
	return exitError{exitUsage}
}

// args checks the number of arguments: at least min, at most max (max < 0:
// no limit), and returns them.
func (e *env) args(c *cli.Context, min, max int, what string) ([]string, error) {
	a := c.Args().Slice()
	if len(a) < min || (max >= 0 && len(a) > max) {
		return nil, e.usage(c, "want %s, have %d argument(s)", what, len(a))
	}
	return a, nil
}

// readFile reads a file named on the command line; failing to is a usage
// error (exit 2).
func (e *env) readFile(path string) ([]byte, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return nil, e.fail(exitUsage, "cannot read %s: %v", path, err)
	}
	return b, nil
}

// openInput opens the file named by --stdin, or returns the process's
// standard input if path is empty. The caller closes what it opened.
func (e *env) openInput(path string) (io.Reader, func(), error) {
	if path == "" {
		return e.stdin, func() {}, nil
	}
	f, err := os.Open(path)
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return nil, nil, e.fail(exitUsage, "cannot read %s: %v", path, err)
	}
	return f, func() { f.Close() }, nil
}

// writeFile writes an output file; failing to is exit 1.
func (e *env) writeFile(path string, data []byte) error {
	if err := os.WriteFile(path, data, 0o644); err != nil {
		return e.fail(exitFail, "%v", err)
	}
	return nil
}

// loadProgram reads and decodes an FRGP file (exit 2 if it does not load).
func (e *env) loadProgram(path string) (*bytecode.Program, error) {
	b, err := e.readFile(path)
	if err != nil {
		return nil, err
	}
	p, err := bytecode.Decode(b)
	if err != nil {
		return nil, e.fail(exitUsage, "%s: %v", path, err)
	}
	return p, nil
}

// loadImage loads a program for running: decoded, verified and linked.
func (e *env) loadImage(path string) (*vm.Image, error) {
	p, err := e.loadProgram(path)
	if err != nil {
		return nil, err
	}
	img, err := vm.NewImage(p)
	if err != nil {
		return nil, e.fail(exitUsage, "%s: %v", path, err)
	}
	return img, nil
}

// limitFlags are the flags that set a run's limits.
func limitFlags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "ticks", Value: strconv.FormatUint(host.DefaultTicks, 10), DefaultText: strconv.FormatUint(host.DefaultTicks, 10),
			Usage: "the tick budget: the run faults OUT_OF_TICKS rather than use more than `N` ticks"},
		&cli.StringFlag{Name: "memory", Value: strconv.FormatUint(host.DefaultMemory, 10), DefaultText: "16777216 = 16M",
			Usage: "the memory quota in `BYTES`: code, data, heap and stack (suffixes K, M, G: KiB, MiB, GiB)"},
		&cli.StringFlag{Name: "stack", Value: strconv.FormatUint(host.DefaultStack, 10), DefaultText: "65536 = 64K",
			Usage: "the stack size in `BYTES`, at the top of memory (suffixes K, M, G)"},
		&cli.StringFlag{Name: "output", Value: strconv.FormatUint(host.DefaultOutput, 10), DefaultText: "1073741824 = 1G",
			Usage: "the output quota in `BYTES`, all channels together: a SEND past it faults OUTPUT_QUOTA (suffixes K, M, G; 0: no quota but the tick budget's 8 bytes a tick)"},
		&cli.StringFlag{Name: "grant", Usage: "also grant the channels in `LIST` (comma-separated, 3-8); nothing services them, so a receive on one ends the run BLOCKED"},
	}
}

// limits reads the limit flags.
func (e *env) limits(c *cli.Context) (host.Limits, error) {
	var lim host.Limits
	var err error
	if lim.Ticks, err = strconv.ParseUint(strings.ReplaceAll(c.String("ticks"), "_", ""), 10, 64); err != nil {
		return lim, e.usage(c, "--ticks %q is not a tick count", c.String("ticks"))
	}
	if lim.Memory, err = host.ParseSize(c.String("memory")); err != nil {
		return lim, e.usage(c, "--memory: %v", err)
	}
	if lim.Memory > vm.MaxMemory {
		return lim, e.usage(c, "--memory: %d bytes is more than a machine may have (%d)", lim.Memory, uint64(vm.MaxMemory))
	}
	if lim.Stack, err = host.ParseSize(c.String("stack")); err != nil {
		return lim, e.usage(c, "--stack: %v", err)
	}
	if lim.Output, err = host.ParseSize(c.String("output")); err != nil {
		return lim, e.usage(c, "--output: %v", err)
	}
	lim.Grant = vm.DefaultGrant
	if g := c.String("grant"); g != "" {
		for _, f := range strings.Split(g, ",") {
			ch, err := strconv.ParseUint(strings.TrimSpace(f), 10, 8)
			if err != nil || ch < 3 || ch > 8 {
				return lim, e.usage(c, "--grant: %q is not a channel from 3 to 8", f)
			}
			lim.Grant |= 1 << ch
		}
	}
	return lim, nil
}

// outputName replaces the extension of path with ext.
func outputName(path, ext string) string {
	return strings.TrimSuffix(path, filepath.Ext(path)) + ext
}
