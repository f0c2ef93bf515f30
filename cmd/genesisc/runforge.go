package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/genesis-toolchain/genesis/compiler"
	"github.com/genesis-toolchain/genesis/forge/host"
	"github.com/genesis-toolchain/genesis/forge/vm"
	"github.com/genesis-toolchain/genesis/ir/opt"
)

// stdin is what a Genesis or Forge assembly program that genesisc run
// runs reads on channel 2; tests replace it.
var stdin io.Reader = os.Stdin

// Exit statuses of a program genesisc run runs on the Forge Machine,
// forge exec's (docs/forge-cli.md).
const (
	exitFaulted = 3 // the program faulted
	exitBlocked = 4 // the program blocked on a channel nobody services
)

// forgeRun reports whether the files of a genesisc run are a program for
// the Forge Machine rather than an agent program: Genesis (one or more
// .gen files) or Forge assembly (.fasm). Any other mix is left to the
// agent path, which says what is wrong with it.
func forgeRun(names []string) bool {
	if len(names) == 0 {
		return false
	}
	for _, n := range names {
		switch strings.ToLower(filepath.Ext(n)) {
		case ".gen", ".fasm":
		default:
			return false
		}
	}
	return true
}

// agentOnlyFlags are genesisc run's flags that mean something only to an
// agent program: given with a Genesis or Forge assembly program they are
// a usage error rather than silently ignored.
var agentOnlyFlags = append([]string{"llm", "tools", "models", "model", "input", "trace", "journal", "resume", "payload",
	"source", "replay", "overwrite", "repeat", "state", "narrate", "trigger", "event", "event-payload",
	"param", "mode", "yes", "cache-max", "target"}, limitFlagNames...)

// runOnForge is genesisc run of a Genesis or Forge assembly program: it
// compiles the files for the Forge Machine and runs the program in this
// process as `forge exec` would with its default limits — channel 0 to
// standard output, channel 1 to standard error, standard input on channel
// 2 — and returns forge exec's exit status: 0 halted, 3 faulted, 4
// blocked (a line on standard error says how), 1 when --result cannot be
// written. Other limits need genesisc build and forge exec.
func runOnForge(c *cli.Context, stdout, stderr io.Writer) error {
	for _, name := range agentOnlyFlags {
		if c.IsSet(name) {
			fmt.Fprintf(stderr, "genesisc run: --%s is for agent programs; %s is run on the Forge Machine with forge exec's default limits and standard input (other limits: genesisc build -o prog.frgp %s, then forge exec --ticks N --memory BYTES prog.frgp)\n",
				name, c.Args().First(), strings.Join(c.Args().Slice(), " "))
			return exitError{exitUsage}
		}
	}
	out, err := compile(c, compiler.Options{Target: "forge", OptLevel: opt.MaxLevel}, stderr)
	if err != nil {
		return err
	}
	img, err := vm.NewImage(out.Program)
	if err != nil {
		// The compiler emits verified programs: this is genesisc's fault.
		fmt.Fprintf(stderr, "genesisc run: internal error: the compiled program does not load: %v\n", err)
		return exitError{exitDiag}
	}
	lim := host.DefaultLimits()
	r, err := host.Run(img, host.Options{Limits: lim, Input: host.NewStdin(stdin), Stdout: stdout, Stderr: stderr})
	if err != nil {
		fmt.Fprintf(stderr, "genesisc run: %v\n", err)
		return exitError{exitDiag}
	}
	if path := c.String("result"); path != "" {
		if err := os.WriteFile(path, r.JSON(), 0o644); err != nil {
			fmt.Fprintf(stderr, "genesisc run: %v\n", err)
			return exitError{exitDiag}
		}
	}
	switch r.State {
	case vm.Halted:
		return nil
	case vm.Faulted:
		if r.Fault == vm.OutOfMemory {
			if need, ok := vm.Need(img, lim.Stack); ok {
				fmt.Fprintf(stderr, "genesisc run: %s: the program needs a memory quota of at least %d bytes (genesisc build, then forge exec --memory)\n", r.Summary(), need)
			} else {
				fmt.Fprintf(stderr, "genesisc run: %s: no memory quota holds the program\n", r.Summary())
			}
		} else {
			fmt.Fprintf(stderr, "genesisc run: %s\n", r.Summary())
		}
		return exitError{exitFaulted}
	case vm.Blocked:
		fmt.Fprintf(stderr, "genesisc run: %s\n", r.Summary())
		return exitError{exitBlocked}
	}
	fmt.Fprintf(stderr, "genesisc run: internal error: the run ended %s\n", r.Summary())
	return exitError{exitDiag}
}
