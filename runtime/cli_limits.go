package runtime

import (
	"errors"
	"flag"
	"io"
	"math"
	"runtime/debug"
	"sort"
	"strconv"
	"strings"
)

// limitFlags are Main's --max-* flags, DefaultLimits unless given.
type limitFlags struct {
	l Limits
}

// addLimitFlags declares the limit flags on fs.
func addLimitFlags(fs *flag.FlagSet) *limitFlags {
	f := &limitFlags{l: DefaultLimits()}
	fs.IntVar(&f.l.Steps, "max-steps", f.l.Steps, "stop the run after `N` steps (0: no limit)")
	fs.IntVar(&f.l.Tokens, "max-tokens", f.l.Tokens, "stop the run once it has used `N` LLM tokens (0: no limit)")
	fs.Float64Var(&f.l.Cost, "max-cost", f.l.Cost, "stop the run once its LLM calls cost `USD` (0: no limit)")
	fs.DurationVar(&f.l.Wall, "max-wall", f.l.Wall, "stop the run after this `DURATION` of real time (0: no limit)")
	fs.Var((*sizeFlag)(&f.l.Memory), "max-memory", "stop the run when its live heap reaches `SIZE` (bytes, or with KiB, MiB, GiB; 0: no limit)")
	fs.Var((*sizeFlag)(&f.l.Trace), "max-trace", "stop the run when its trace reaches `SIZE` (0: no limit)")
	return f
}

// check reports a limit flag's bad value.
func (f *limitFlags) check() error {
	switch {
	case f.l.Steps < 0:
		return errors.New("--max-steps must not be negative")
	case f.l.Tokens < 0:
		return errors.New("--max-tokens must not be negative")
	case f.l.Cost < 0 || math.IsNaN(f.l.Cost) || math.IsInf(f.l.Cost, 0):
		return errors.New("--max-cost must be a number of USD, 0 or more")
	case f.l.Wall < 0:
		return errors.New("--max-wall must not be negative")
	}
	return nil
}

// apply sets the process-wide parts of the limits: the largest value (a
// quarter of the memory limit) and the Go runtime's soft memory limit
// (one and a half times it), so that the garbage collector runs before
// the heap outgrows the limit by much, and the live heap Tick and the
// steps check is measured often enough.
func (f *limitFlags) apply() {
	if f.l.Memory > 0 {
		SetValueLimit(f.l.Memory / 4)
		debug.SetMemoryLimit(f.l.Memory + f.l.Memory/2)
	} else {
		SetValueLimit(0)
	}
}

// sizeFlag is a number of bytes: digits with an optional unit, B, KiB,
// MiB, GiB, TiB (powers of 1024) or kB, MB, GB, TB (powers of 1000).
type sizeFlag int64

func (s *sizeFlag) String() string {
	if s == nil {
		return "0"
	}
	return formatSize(int64(*s))
}

func (s *sizeFlag) Set(v string) error {
	n, err := parseSize(v)
	if err != nil {
		return err
	}
	*s = sizeFlag(n)
	return nil
}

var sizeUnits = []struct {
	suffix string
	mult   int64
}{
	{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}, {"TiB", 1 << 40},
	{"kB", 1e3}, {"KB", 1e3}, {"MB", 1e6}, {"GB", 1e9}, {"TB", 1e12},
	{"B", 1},
}

// parseSize reads a size such as 1048576, 64MiB or 1.5GB.
func parseSize(v string) (int64, error) {
	s := strings.TrimSpace(v)
	mult := int64(1)
	for _, u := range sizeUnits {
		if strings.HasSuffix(s, u.suffix) {
			s, mult = strings.TrimSpace(strings.TrimSuffix(s, u.suffix)), u.mult
			break
		}
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || f < 0 || math.IsNaN(f) || f*float64(mult) >= math.MaxInt64 {
		return 0, errors.New("want a size in bytes, such as 1048576, 64MiB or 1GiB")
	}
	return int64(f * float64(mult)), nil
}

// formatSize writes n in the largest binary unit that divides it.
func formatSize(n int64) string {
	for _, u := range []struct {
		suffix string
		mult   int64
	}{{"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}} {
		if n != 0 && n%u.mult == 0 {
			return strconv.FormatInt(n/u.mult, 10) + u.suffix
		}
	}
	return strconv.FormatInt(n, 10)
}

// LimitsFromFlags returns the limits that Main's --max-* flags give,
// set holding the flags given (name without dashes → value, as on
// Main's command line; others keep DefaultLimits), checked as Main
// checks them, and applies their process-wide parts as Main does (the
// largest value, the Go heap's soft limit): for a host that runs many
// programs in one process (genesisc worker).
func LimitsFromFlags(set map[string]string) (Limits, error) {
	fs := flag.NewFlagSet("limits", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	f := addLimitFlags(fs)
	names := make([]string, 0, len(set))
	for k := range set {
		names = append(names, k)
	}
	sort.Strings(names)
	var args []string
	for _, k := range names {
		args = append(args, "--"+k+"="+set[k])
	}
	if err := fs.Parse(args); err != nil {
		return Limits{}, err
	}
	if err := f.check(); err != nil {
		return Limits{}, err
	}
	f.apply()
	return f.l, nil
}
