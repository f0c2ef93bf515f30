package runtime

import (
	"errors"
	"fmt"
)

// HostFlags are the command-line settings a host of runs is made from:
// Main's provider, state and clock flags, and its limits (already
// checked: Main's --max-* flags, or LimitsFromFlags).
type HostFlags struct {
	// LLM is --llm (mock:FILE or openai:URL; "" for none), Models and
	// Model --models and --model, which need an LLM.
	LLM, Models, Model string
	// Tools are the --tools specs, in order.
	Tools []string
	// State is --state: the SQLite file of the persistent state ("":
	// memory).
	State string
	// RealClock is --real-clock.
	RealClock bool
	// Limits are the runs' limits.
	Limits Limits
}

// UsageError is an error of the command line rather than of the
// environment: a malformed provider spec, a flag that needs another.
// Commands answer it with their usage exit status (2).
type UsageError struct{ Err error }

func (e *UsageError) Error() string { return e.Err.Error() }
func (e *UsageError) Unwrap() error { return e.Err }

// IsUsage reports whether err is (or wraps) a UsageError.
func IsUsage(err error) bool {
	var u *UsageError
	return errors.As(err, &u)
}

// HostFromFlags makes the host that f describes, as Main gives one to a
// program and genesisc worker to the programs it serves: it parses the
// LLM provider, starts the tool providers (an MCP server's process
// starts here), opens the state file. The closer it returns ends what
// they hold open (MCP servers, the state file); it is never nil when the
// error is. An error is a UsageError when the command line is at fault
// (an --llm, --models, --model or --tools that does not parse), another
// error when the environment is (a tool provider that does not start, a
// state file that does not open); each names its flag.
func HostFromFlags(f HostFlags) (*Host, func(), error) {
	usage := func(format string, a ...any) (*Host, func(), error) {
		return nil, nil, &UsageError{fmt.Errorf(format, a...)}
	}
	cfg := Config{Limits: f.Limits, RealTime: f.RealClock}
	if f.LLM != "" {
		p, err := ParseLLMWith(f.LLM, LLMOptions{ModelsFile: f.Models, Model: f.Model})
		if err != nil {
			return usage("--llm: %v", err)
		}
		cfg.LLM = p
	} else if f.Models != "" || f.Model != "" {
		return usage("--models and --model choose the models of an --llm provider: give one (--llm openai:URL)")
	}
	// Every spec is checked before any provider starts: a malformed one
	// is a usage error, and no MCP server was started for nothing.
	for _, spec := range f.Tools {
		if err := CheckTools(spec); err != nil {
			return usage("--tools: %v", err)
		}
	}
	for _, spec := range f.Tools {
		p, err := ParseTools(spec)
		if err != nil {
			closeTools(cfg.Tools)
			return nil, nil, fmt.Errorf("--tools: %v", err)
		}
		cfg.Tools = append(cfg.Tools, p)
	}
	closeAll := func() { closeTools(cfg.Tools) }
	if f.State != "" {
		s, err := OpenSQLiteStore(f.State)
		if err != nil {
			closeTools(cfg.Tools)
			return nil, nil, fmt.Errorf("--state: %v", err)
		}
		cfg.State = s
		closeAll = func() {
			closeTools(cfg.Tools)
			s.Close()
		}
	}
	return NewHost(cfg), closeAll, nil
}
