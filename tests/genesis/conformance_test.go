// Package genesis_test is the Genesis conformance suite: whole programs
// compiled by genesisc's driver and run on the Forge Machine, and invalid
// programs with the diagnostics they must get. (The frontend's own golden
// tests, of its phases, live in parse/, check/ and lower/ and run from
// frontend/genesis.)
//
// A run case, run/*.txtar, has these sections:
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
//	out/ir      optional: the IR as lowered, unreachable functions removed
//	            (genesisc build -O0 --emit ir)
//	out/ir.O2   optional: the IR after optimization (-O2 --emit ir)
//	out/asm     optional: the emitted assembly at -O2 (--emit asm)
//
// Every run case is compiled at -O0 and at -O2, and both programs must
// print the same and end the same way.
//
// A stack case, stack/*.txtar, has the sections of a run case and is
// compiled at -O2 only: it recurses to the exact depth where the Forge
// program's machine stack or shadow stack of frames runs out, which
// depends on the code each level makes (the registers pushed around
// calls, the spill slots). The differential test runs them on every
// target, which must fault at the same depth.
//
// An error case, errors/*.txtar, has one or more *.gen files and
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
	"github.com/genesis-toolchain/genesis/forge/vm"
	"github.com/genesis-toolchain/genesis/frontend/diag"
	"github.com/genesis-toolchain/genesis/internal/difftest"
	"github.com/genesis-toolchain/genesis/internal/golden"
)

// minRunCases and minErrorCases are the floor for the suite.
const (
	minRunCases   = 150
	minErrorCases = 60
)

// sources returns the case's .gen sections, in order.
func sources(t *testing.T, c *golden.Case) []compiler.Source {
	var srcs []compiler.Source
	for _, f := range c.Archive.Files {
		if strings.HasSuffix(f.Name, ".gen") {
			srcs = append(srcs, compiler.Source{Name: f.Name, Data: f.Data})
		}
	}
	if len(srcs) == 0 {
		t.Fatal("no .gen section")
	}
	return srcs
}

func TestRun(t *testing.T) {
	if n := len(golden.Files(t, "run/*.txtar")); n < minRunCases {
		t.Errorf("%d run cases, want at least %d", n, minRunCases)
	}
	golden.Run(t, "run/*.txtar", func(t *testing.T, c *golden.Case) {
		t.Parallel()
		srcs := sources(t, c)
		var first string
		for _, level := range []int{0, 2} {
			res, diags := compiler.Build(srcs, compiler.Options{OptLevel: level})
			if diags.HasErrors() {
				t.Fatalf("-O%d: does not compile:\n%s", level, diags.Render(compiler.SourceMap(srcs)))
			}
			stdout, fault := run(t, c, res)
			got := stdout + "\x00" + fault
			if level == 0 {
				first = got
				c.Check("out/stdout", stdout)
				if fault != "" {
					c.Check("out/fault", fault)
				}
			} else if got != first {
				t.Errorf("-O2 printed %q and ended %q; -O0 printed %q and ended %q",
					stdout, fault, strings.Split(first, "\x00")[0], strings.Split(first, "\x00")[1])
			}
		}
		for _, emit := range []struct {
			section string
			level   int
			emit    compiler.Emit
		}{
			{"out/ir", 0, compiler.EmitIR},
			{"out/ir.O2", 2, compiler.EmitIR},
			{"out/asm", 2, compiler.EmitAsm},
		} {
			if _, ok := c.File(emit.section); !ok {
				continue
			}
			res, diags := compiler.Build(srcs, compiler.Options{OptLevel: emit.level, Emit: emit.emit})
			if diags.HasErrors() {
				t.Fatalf("%s: %s", emit.section, diags.Render(compiler.SourceMap(srcs)))
			}
			c.Check(emit.section, res.Text)
		}
	})
}

// TestStack runs the stack cases at -O2 (see the package comment).
func TestStack(t *testing.T) {
	golden.Run(t, "stack/*.txtar", func(t *testing.T, c *golden.Case) {
		t.Parallel()
		srcs := sources(t, c)
		res, diags := compiler.Build(srcs, compiler.Options{OptLevel: 2})
		if diags.HasErrors() {
			t.Fatalf("does not compile:\n%s", diags.Render(compiler.SourceMap(srcs)))
		}
		stdout, fault := run(t, c, res)
		c.Check("out/stdout", stdout)
		if fault != "" {
			c.Check("out/fault", fault)
		}
	})
}

// run runs case c's compiled program as forge exec does, with the case's
// standard input, and returns what it printed and, if it faulted, the
// fault.
func run(t *testing.T, c *golden.Case, res *compiler.Output) (stdout, fault string) {
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
func caseLimits(c *golden.Case) (difftest.Limits, error) {
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
	if n := len(golden.Files(t, "errors/*.txtar")); n < minErrorCases {
		t.Errorf("%d error cases, want at least %d", n, minErrorCases)
	}
	golden.Run(t, "errors/*.txtar", func(t *testing.T, c *golden.Case) {
		srcs := sources(t, c)
		var want []string
		for _, m := range wantLine.FindAllStringSubmatch(c.Comment(), -1) {
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
			if d.Severity != diag.Error {
				continue
			}
			got = append(got, fmt.Sprintf("%s %s:%d:%d", d.Code, d.Pos.File, d.Pos.Line, d.Pos.Col))
		}
		if strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Errorf("diagnostics:\n  %s\nwant:\n  %s\n%s", strings.Join(got, "\n  "), strings.Join(want, "\n  "),
				diags.Render(compiler.SourceMap(srcs)))
		}
		c.Check("out/errors", diags.Render(compiler.SourceMap(srcs)))
	})
}
