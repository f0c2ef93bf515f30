package host

import (
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/genesis-toolchain/genesis/forge/vm"
	"github.com/genesis-toolchain/genesis/runtime"
)

// AgentCommand is the command line of an agent program on the Forge
// Machine (forge exec, forge replay, genesisc run --target forge):
// runtime.Main's flags (the providers, the journal, the trace, the run
// limits: docs/runtime.md) and the machine's own, --ticks, --memory,
// --stack and --output, whose defaults are Agent.AgentLimits.
type AgentCommand struct {
	Agent *Agent
	// Flags, when not nil, adds the caller's own flags.
	Flags func(*flag.FlagSet)
	// Trace, when not nil and true once the flags are parsed, computes
	// the machine's trace hash (for a proof).
	Trace *bool
	// Limits, when not nil, are the machine's limits, and the command
	// has no flags to set them (forge check-proof: the proof's).
	Limits *Limits
	// Done, when not nil, is called after the last run with its result,
	// its machine's figures and the limits it ran under; an error it
	// returns is reported and makes the exit status 1.
	Done func(res *runtime.Result, stats *AgentStats, lim Limits) error
}

// Main runs the command with args (the arguments after the program's
// path) and returns its exit status: runtime.Main's.
func (c *AgentCommand) Main(args []string, stdout, stderr io.Writer) int {
	a := c.Agent
	lim := a.AgentLimits()
	if c.Limits != nil {
		lim = *c.Limits
	}
	flags := func(fs *flag.FlagSet) {
		if c.Flags != nil {
			c.Flags(fs)
		}
		if c.Limits != nil {
			return
		}
		fs.Var(countFlag{&lim.Ticks, parseTicks}, "ticks", "the machine's tick budget: the run ends budget_exceeded (limit.ticks) rather than use more than `N` ticks")
		fs.Var(countFlag{&lim.Memory, parseMemory}, "memory", "the machine's memory quota in `BYTES` (code, data, frames, stack; suffixes K, M, G); values live in the host, bounded by --max-memory")
		fs.Var(countFlag{&lim.Stack, ParseSize}, "stack", "the machine stack in `BYTES` (suffixes K, M, G)")
		fs.Var(countFlag{&lim.Output, ParseSize}, "output", "the output quota in `BYTES` of the frames the program sends (suffixes K, M, G)")
	}
	var stats *AgentStats
	var last *runtime.Result
	run := func(h *runtime.Host, ropts runtime.RunOptions) *runtime.Result {
		ropts.Program = a.Meta.Program
		opts := AgentOptions{Limits: lim, Trace: c.Trace != nil && *c.Trace}
		if l := runtime.ValueLimit(); l > 0 {
			// The store may hold what the run's memory limit allows:
			// runtime.Main bounds one value to a quarter of it.
			opts.Values = uint64(l) * 4
		}
		last, stats = a.Run(h, ropts, opts)
		return last
	}
	code := runtime.MainWith(args, a.Meta.Program, flags, run, stdout, stderr)
	if c.Done != nil && stats != nil {
		if err := c.Done(last, stats, lim); err != nil {
			fmt.Fprintf(stderr, "%s: %v\n", a.Meta.Program, err)
			if code == 0 {
				code = 1
			}
		}
	}
	return code
}

// countFlag is a flag holding a count that parse reads (ParseSize for
// sizes, parseTicks for tick counts).
type countFlag struct {
	v     *uint64
	parse func(string) (uint64, error)
}

func (f countFlag) String() string {
	if f.v == nil {
		return ""
	}
	return strconv.FormatUint(*f.v, 10)
}

func (f countFlag) Set(s string) error {
	n, err := f.parse(s)
	if err != nil {
		return err
	}
	*f.v = n
	return nil
}

// parseMemory parses a memory quota: a size (ParseSize) no machine may
// exceed (vm.MaxMemory).
func parseMemory(s string) (uint64, error) {
	n, err := ParseSize(s)
	if err == nil && n > vm.MaxMemory {
		err = fmt.Errorf("%d bytes is more than a machine may have (%d)", n, uint64(vm.MaxMemory))
	}
	return n, err
}

// parseTicks parses a tick count: a decimal integer, underscores allowed.
func parseTicks(s string) (uint64, error) {
	n, err := strconv.ParseUint(strings.ReplaceAll(s, "_", ""), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%q is not a tick count", s)
	}
	return n, nil
}

// ParseSize parses a byte count: a decimal integer, optionally followed by
// K, M or G (times 2^10, 2^20, 2^30).
func ParseSize(s string) (uint64, error) {
	mult := uint64(1)
	num := s
	if n := len(s); n > 0 {
		switch s[n-1] {
		case 'K', 'k':
			mult, num = 1<<10, s[:n-1]
		case 'M', 'm':
			mult, num = 1<<20, s[:n-1]
		case 'G', 'g':
			mult, num = 1<<30, s[:n-1]
		}
	}
	v, err := strconv.ParseUint(strings.ReplaceAll(num, "_", ""), 10, 64)
	if err != nil || v > (1<<64-1)/mult {
		return 0, fmt.Errorf("%q is not a size in bytes (an integer, optionally with K, M or G)", s)
	}
	return v * mult, nil
}
