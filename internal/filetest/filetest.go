// Package filetest is the one runner of the txtar test cases: a case
// declares in its header which checks it runs and on which targets, and
// a suite says how to run each check. Adding a backend is then a line per
// case ("target forge native go"), not a new runner.
//
// A case's header is the first lines of its comment, one directive a line
// (as Cranelift's filetests open with "test run" and "target" lines):
//
//	test NAME [ARG...]   a check the case runs: run, ir O0, asm, errors ...
//	target NAME...       the targets its run checks run on
//	args FLAG...         the command-line flags of a run ("quotes" group)
//	exit N               the exit status a run must end with
//
// The prose after the header is free. Every out/ section must be one a
// declared check produces, and every in/ and out/ section one of the
// names internal/golden.Sections lists (docs/testing.md describes the
// format). Outputs are compared with cmp.Diff and rewritten by -update,
// as internal/golden does.
package filetest

import (
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/genesis-toolchain/genesis/internal/golden"
)

// Directive is one "test" line of a header: the check's name and its
// arguments ("test ir O2" is {ir, [O2]}).
type Directive struct {
	Name string
	Args []string
}

// String is the directive as written.
func (d Directive) String() string {
	return strings.Join(append([]string{d.Name}, d.Args...), " ")
}

// Header is what a case's header declares.
type Header struct {
	Tests   []Directive
	Targets []string
	Args    []string // nil without an args line
	HasArgs bool
	Exit    int
	HasExit bool
}

// Case is one txtar case with its header read.
type Case struct {
	*golden.Case
	Name string
	Header
	// Prose is the comment after the header.
	Prose string
	// State is where a check leaves work for the checks after it (a
	// run's outputs for the checks that pin its trace and journal).
	State any
}

// Has reports whether the case declares check name (with these leading
// arguments, when given).
func (c *Case) Has(name string, args ...string) bool {
	for _, d := range c.Tests {
		if d.Name == name && len(d.Args) >= len(args) && slices.Equal(d.Args[:len(args)], args) {
			return true
		}
	}
	return false
}

// On reports whether the case declares target name.
func (c *Case) On(target string) bool { return slices.Contains(c.Targets, target) }

// Sources returns the case's sections whose names end in one of exts, in
// order.
func (c *Case) Sources(exts ...string) []File {
	var out []File
	for _, f := range c.Archive.Files {
		for _, e := range exts {
			if strings.HasSuffix(f.Name, e) {
				out = append(out, File{Name: f.Name, Data: f.Data})
				break
			}
		}
	}
	return out
}

// File is one section of a case.
type File struct {
	Name string
	Data []byte
}

// Check runs one declared check of a case: it records outputs with
// c.Check (compared when the case ends) and reports failures on t.
type Check func(t *testing.T, c *Case, d Directive)

// Suite is what a directory of cases runs.
type Suite struct {
	// Checks maps each check name a case may declare to how it runs.
	Checks map[string]Check
	// Targets are the targets a case may name; the run checks run on the
	// ones a case names. Empty: a case may name none.
	Targets []string
	// Outputs maps a check name to the out/ sections it may produce; a
	// case with an out/ section that none of its checks produces fails.
	// Nil: not checked.
	Outputs map[string][]string
	// Parallel runs the cases of the suite in parallel.
	Parallel bool
}

// ParseHeader reads the header of a comment and returns it with the
// prose after it.
func ParseHeader(comment string) (Header, string, error) {
	var h Header
	lines := strings.SplitAfter(comment, "\n")
	i := 0
	for ; i < len(lines); i++ {
		line := strings.TrimRight(lines[i], "\n")
		key, rest, _ := strings.Cut(line, " ")
		rest = strings.TrimSpace(rest)
		switch key {
		case "test":
			f := strings.Fields(rest)
			if len(f) == 0 {
				return h, "", fmt.Errorf("header line %d: test with no check", i+1)
			}
			h.Tests = append(h.Tests, Directive{Name: f[0], Args: f[1:]})
		case "target":
			f := strings.Fields(rest)
			if len(f) == 0 {
				return h, "", fmt.Errorf("header line %d: target with no name", i+1)
			}
			h.Targets = append(h.Targets, f...)
		case "args":
			if h.HasArgs {
				return h, "", fmt.Errorf("header line %d: a second args line", i+1)
			}
			args, err := SplitArgs(rest)
			if err != nil {
				return h, "", fmt.Errorf("header line %d: %v", i+1, err)
			}
			h.Args, h.HasArgs = args, true
		case "exit":
			n, err := strconv.Atoi(rest)
			if err != nil || n < 0 || n > 255 {
				return h, "", fmt.Errorf("header line %d: exit %q is not a status 0..255", i+1, rest)
			}
			if h.HasExit {
				return h, "", fmt.Errorf("header line %d: a second exit line", i+1)
			}
			h.Exit, h.HasExit = n, true
		default:
			return h, strings.Join(lines[i:], ""), nil
		}
	}
	return h, "", nil
}

// SplitArgs splits a line of flags at spaces, keeping "quoted strings"
// whole (the quotes go).
func SplitArgs(s string) ([]string, error) {
	var out []string
	var cur strings.Builder
	quoted, any := false, false
	for _, r := range s {
		switch {
		case r == '"':
			quoted, any = !quoted, true
		case r == ' ' && !quoted:
			if any {
				out = append(out, cur.String())
				cur.Reset()
				any = false
			}
		default:
			cur.WriteRune(r)
			any = true
		}
	}
	if quoted {
		return nil, fmt.Errorf("args %q: a quote is not closed", s)
	}
	if any {
		out = append(out, cur.String())
	}
	return out, nil
}

// Load reads one case and its header.
func Load(path string) (*Case, error) {
	gc, err := golden.Load(path)
	if err != nil {
		return nil, err
	}
	h, prose, err := ParseHeader(gc.Comment())
	if err != nil {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	name := strings.TrimSuffix(filepath.Base(path), filepath.Ext(path))
	return &Case{Case: gc, Name: name, Header: h, Prose: prose}, nil
}

// Files returns the cases matching pattern, sorted; none is an error.
func Files(t testing.TB, pattern string) []string { return golden.Files(t, pattern) }

// Run runs every case matching pattern as a subtest named after its file:
// it checks the header against the suite, runs the declared checks in
// order and compares (or, with -update, rewrites) the outputs.
func Run(t *testing.T, pattern string, s Suite) {
	t.Helper()
	for _, path := range Files(t, pattern) {
		name := strings.TrimSuffix(filepath.Base(path), filepath.Ext(path))
		t.Run(name, func(t *testing.T) {
			if s.Parallel {
				t.Parallel()
			}
			c, err := Load(path)
			if err != nil {
				t.Fatal(err)
			}
			if err := s.validate(c); err != nil {
				t.Fatalf("%s: %v", path, err)
			}
			for _, d := range c.Tests {
				s.Checks[d.Name](t, c, d)
			}
			c.Finish(t)
		})
	}
}

// validate checks a case's header against the suite: every check and
// target known, at least one check, and every out/ section produced by
// one of the declared checks.
func (s Suite) validate(c *Case) error {
	if len(c.Tests) == 0 {
		return fmt.Errorf("the header declares no check (a first line \"test NAME\"; known: %s)", strings.Join(s.checkNames(), ", "))
	}
	for _, d := range c.Tests {
		if s.Checks[d.Name] == nil {
			return fmt.Errorf("test %s: no such check here (known: %s)", d.Name, strings.Join(s.checkNames(), ", "))
		}
	}
	for _, tg := range c.Targets {
		if !slices.Contains(s.Targets, tg) {
			return fmt.Errorf("target %s: no such target here (known: %s)", tg, strings.Join(s.Targets, ", "))
		}
	}
	if s.Outputs == nil {
		return nil
	}
	for _, f := range c.Archive.Files {
		if !strings.HasPrefix(f.Name, "out/") {
			continue
		}
		ok := false
		for _, d := range c.Tests {
			if slices.Contains(s.Outputs[d.Name], f.Name) {
				ok = true
			}
		}
		if !ok {
			return fmt.Errorf("section %s: none of the case's checks (%s) produces it", f.Name, c.testList())
		}
	}
	return nil
}

func (s Suite) checkNames() []string {
	var names []string
	for n := range s.Checks {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

func (c *Case) testList() string {
	var ds []string
	for _, d := range c.Tests {
		ds = append(ds, d.String())
	}
	return strings.Join(ds, ", ")
}
