// Package genesis_test is the Genesis conformance suite: whole programs
// compiled by genesisc's driver and run on the Forge Machine, and invalid
// programs with the diagnostics they must get. (The frontend's own golden
// tests, of its phases, live in parse/, check/ and lower/ and run from
// frontend/genesis.)
//
// The cases are read by internal/filetest (docs/testing.md): each
// declares its checks and targets in its header.
//
// A run case, run/*.txtar, opens with
//
//	test run                 compiled at -O0 and -O2 and run on the Forge
//	                         Machine: both must print the same and end the
//	                         same way, and that is out/stdout, out/fault
//	target forge native go   the targets TestDifferential runs it on,
//	                         against the Forge Machine's run
//	test ir O0               optional: out/ir, the IR as lowered
//	test ir O2               optional: out/ir.O2, the IR after -O2
//	test asm                 optional: out/asm, the assembly at -O2
//
// and has these sections:
//
//	*.gen       the program: one or more files, compiled together in order
//	in/stdin    optional: its standard input, which reaches channel 2 as
//	            forge exec delivers it (64 KiB messages, then empty ones)
//	in/limits   optional: the machine to run on instead of forge exec's
//	            default, lines "memory BYTES" and "stack BYTES" (suffixes
//	            K and M), as forge exec's --memory and --stack take them
//	out/stdout  what it writes on channel 0, written by hand: the expected
//	            output is the specification, not a record of this compiler
//	out/fault   only when the program must fault: the fault's name, and
//	            for FAULT its code ("USER_FAULT code=3")
//	out/ir, out/ir.O2, out/asm   as the header's checks declare them
//	            (out/ir: the IR as lowered, unreachable functions removed)
//
// A stack case, stack/*.txtar, is a run case whose header says
// "test run O2": it is compiled at -O2 only. It recurses to the exact
// depth where the Forge program's machine stack or shadow stack of
// frames runs out, which depends on the code each level makes (the
// registers pushed around calls, the spill slots). The differential test
// runs them on every target the header names, which must fault at the
// same depth.
//
// An error case, errors/*.txtar, says "test errors", has one or more
// *.gen files and
//
//	out/errors  the rendered diagnostics, as genesisc prints them
//
// and its comment lists the errors it must get, one per line, as
// "want CLASS LINE:COL" (e.g. "want 0x0801 3:12"), in order; the file is
// the first .gen file unless the line says "want CLASS FILE:LINE:COL".
// The want lines are written by hand; out/errors is golden and may be
// rewritten by -update.
//
// go test ./tests/genesis -update rewrites the out/ sections.
package genesis_test

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/genesis-toolchain/genesis/compiler"
	"github.com/genesis-toolchain/genesis/diag"
	"github.com/genesis-toolchain/genesis/forge/vm"
	"github.com/genesis-toolchain/genesis/internal/filetest"
	"github.com/genesis-toolchain/genesis/internal/testharness/difftest"
)

// minRunCases and minErrorCases are the floor for the suite.
const (
	minRunCases   = 150
	minErrorCases = 60
)

// sources returns the case's .gen sections, in order.
func sources(t *testing.T, c *filetest.Case) []compiler.Source {
	var srcs []compiler.Source
	for _, f := range c.Sources(".gen") {
		srcs = append(srcs, compiler.Source{Name: f.Name, Data: f.Data})
	}
	if len(srcs) == 0 {
		t.Fatal("no .gen section")
	}
	return srcs
}

// targets are the targets a case may name: the Forge Machine, native
// code through LLVM and Go (internal/testharness/difftest runs them).
var targets = []string{"forge", "native", "go"}

// suite runs the run, stack and error cases.
var suite = filetest.Suite{
	Checks: map[string]filetest.Check{
		"run":    checkRun,
		"ir":     checkEmit,
		"asm":    checkEmit,
		"errors": checkErrors,
	},
	Targets: targets,
	Outputs: map[string][]string{
		"run":    {"out/stdout", "out/fault"},
		"ir":     {"out/ir", "out/ir.O2"},
		"asm":    {"out/asm"},
		"errors": {"out/errors"},
	},
	Parallel: true,
}

func TestRun(t *testing.T) {
	if n := len(filetest.Files(t, "run/*.txtar")); n < minRunCases {
		t.Errorf("%d run cases, want at least %d", n, minRunCases)
	}
	filetest.Run(t, "run/*.txtar", suite)
}

// TestStack runs the stack cases (see the package comment).
func TestStack(t *testing.T) {
	filetest.Run(t, "stack/*.txtar", suite)
}

// optLevels reads the levels of "test run [O0] [O2]": both without any.
func optLevels(d filetest.Directive) ([]int, error) {
	if len(d.Args) == 0 {
		return []int{0, 2}, nil
	}
	var levels []int
	for _, a := range d.Args {
		switch a {
		case "O0":
			levels = append(levels, 0)
		case "O2":
			levels = append(levels, 2)
		default:
			return nil, fmt.Errorf("test %s: %q is not O0 or O2", d, a)
		}
	}
	return levels, nil
}

// checkRun compiles the case at each level of "test run" and runs it on
// the Forge Machine: every level must print the same and end the same
// way, which out/stdout and out/fault pin.
func checkRun(t *testing.T, c *filetest.Case, d filetest.Directive) {
	srcs := sources(t, c)
	levels, err := optLevels(d)
	if err != nil {
		t.Fatal(err)
	}
	var first string
	for i, level := range levels {
		res, diags := compiler.Build(srcs, compiler.Options{OptLevel: level})
		if diags.HasErrors() {
			t.Fatalf("-O%d: does not compile:\n%s", level, diags.Render(compiler.SourceMap(srcs)))
		}
		stdout, fault := run(t, c, res)
		got := stdout + "\x00" + fault
		if i == 0 {
			first = got
			c.Check("out/stdout", stdout)
			if fault != "" {
				c.Check("out/fault", fault)
			}
		} else if got != first {
			t.Errorf("-O%d printed %q and ended %q; -O%d printed %q and ended %q", level,
				stdout, fault, levels[0], strings.Split(first, "\x00")[0], strings.Split(first, "\x00")[1])
		}
	}
}

// checkEmit checks "test ir O0" (out/ir), "test ir O2" (out/ir.O2) and
// "test asm" (out/asm, at -O2).
func checkEmit(t *testing.T, c *filetest.Case, d filetest.Directive) {
	srcs := sources(t, c)
	section, level, emit := "out/asm", 2, compiler.EmitAsm
	if d.Name == "ir" {
		switch {
		case len(d.Args) == 1 && d.Args[0] == "O0":
			section, level, emit = "out/ir", 0, compiler.EmitIR
		case len(d.Args) == 1 && d.Args[0] == "O2":
			section, level, emit = "out/ir.O2", 2, compiler.EmitIR
		default:
			t.Fatalf("test %s: want \"test ir O0\" or \"test ir O2\"", d)
		}
	} else if len(d.Args) != 0 {
		t.Fatalf("test %s: asm takes no arguments", d)
	}
	res, diags := compiler.Build(srcs, compiler.Options{OptLevel: level, Emit: emit})
	if diags.HasErrors() {
		t.Fatalf("%s: %s", section, diags.Render(compiler.SourceMap(srcs)))
	}
	c.Check(section, res.Text)
}

// run runs case c's compiled program as forge exec does, with the case's
// standard input, and returns what it printed and, if it faulted, the
// fault.
func run(t *testing.T, c *filetest.Case, res *compiler.Output) (stdout, fault string) {
	img, err := vm.NewImage(res.Program)
	if err != nil {
		t.Fatalf("the program does not load: %v", err)
	}
	stdin, _ := c.File("in/stdin")
	lim, err := caseLimits(c)
	if err != nil {
		t.Fatal(err)
	}
	o, err := difftest.RunForge(img, []byte(stdin), lim)
	if err != nil {
		t.Fatal(err)
	}
	return o.Stdout, o.Fault
}

// caseLimits reads the case's in/limits section (the defaults without
// one).
func caseLimits(c *filetest.Case) (difftest.Limits, error) {
	var lim difftest.Limits
	text, ok := c.File("in/limits")
	if !ok {
		return lim, nil
	}
	for _, line := range strings.Split(strings.TrimSpace(text), "\n") {
		f := strings.Fields(line)
		if len(f) != 2 {
			return lim, fmt.Errorf("in/limits: %q is not \"memory BYTES\" or \"stack BYTES\"", line)
		}
		mult, num := uint64(1), f[1]
		switch {
		case strings.HasSuffix(num, "K"):
			mult, num = 1<<10, strings.TrimSuffix(num, "K")
		case strings.HasSuffix(num, "M"):
			mult, num = 1<<20, strings.TrimSuffix(num, "M")
		}
		n, err := strconv.ParseUint(num, 10, 64)
		if err != nil {
			return lim, fmt.Errorf("in/limits: %q: %v", line, err)
		}
		switch f[0] {
		case "memory":
			lim.Memory = n * mult
		case "stack":
			lim.Stack = n * mult
		default:
			return lim, fmt.Errorf("in/limits: %q: no limit %s", line, f[0])
		}
	}
	return lim, nil
}

var wantLine = regexp.MustCompile(`(?m)^want (0x08[0-9A-F]{2}) (?:(\S+\.gen):)?(\d+):(\d+)\s*$`)

func TestErrors(t *testing.T) {
	if n := len(filetest.Files(t, "errors/*.txtar")); n < minErrorCases {
		t.Errorf("%d error cases, want at least %d", n, minErrorCases)
	}
	filetest.Run(t, "errors/*.txtar", suite)
}

// checkErrors compiles the case, which must get exactly the errors its
// want lines list; out/errors pins how they render.
func checkErrors(t *testing.T, c *filetest.Case, d filetest.Directive) {
	srcs := sources(t, c)
	var want []string
	for _, m := range wantLine.FindAllStringSubmatch(c.Prose, -1) {
		file := m[2]
		if file == "" {
			file = srcs[0].Name
		}
		want = append(want, fmt.Sprintf("%s %s:%s:%s", m[1], file, m[3], m[4]))
	}
	if len(want) == 0 {
		t.Fatal(`the comment has no "want CLASS LINE:COL" line`)
	}
	_, diags := compiler.Build(srcs, compiler.Options{OptLevel: 2})
	var got []string
	for _, d := range diags {
		if d.Severity == diag.Warning { // errors, and the note of the error cap (0x0803)
			continue
		}
		got = append(got, fmt.Sprintf("%s %s:%d:%d", d.Code, d.Pos.File, d.Pos.Line, d.Pos.Col))
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("diagnostics:\n  %s\nwant:\n  %s\n%s", strings.Join(got, "\n  "), strings.Join(want, "\n  "),
			diags.Render(compiler.SourceMap(srcs)))
	}
	c.Check("out/errors", diags.Render(compiler.SourceMap(srcs)))
}
