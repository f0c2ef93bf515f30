// Package backend_test holds the Forge backend's golden suite: one IR
// module per txtar file, compiled to Forge assembly, assembled and run.
//
// A case opens with its header (docs/testing.md): "target forge" and
// "test asm" and "test run", or "test errors" for a module the backend
// refuses. It has these sections:
//
//	in.ir       a module in the printed IR form (docs/ir.md); it must verify
//	out/asm     the assembly backend/forgegen emits
//	out/stdout  what the program wrote on channel 0
//	out/result  how the run ended: the state, r0 (main's result) and the
//	            ticks used, or the fault
//	out/errors  instead of the three above: the backend's diagnostics
//
// go test ./tests/backend -update rewrites the out/ sections.
package backend_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/genesis-toolchain/genesis/backend/forgegen"
	"github.com/genesis-toolchain/genesis/diag"
	"github.com/genesis-toolchain/genesis/forge/vm"
	"github.com/genesis-toolchain/genesis/internal/filetest"
	"github.com/genesis-toolchain/genesis/ir"
)

// Limits of a run: forge exec's default memory and stack, which the
// backend's default frame placement assumes.
const (
	ticks  = 1 << 32
	memory = 16 << 20
	stack  = 64 << 10
)

type output struct{ b strings.Builder }

func (o *output) Send(ch uint8, msg []byte) {
	if ch == vm.ChanStdout {
		o.b.Write(msg)
	}
}

// suite runs the cases on "target forge", the backend they test.
var suite = filetest.Suite{
	Checks:  map[string]filetest.Check{"asm": checkBuild, "run": checkBuild, "errors": checkBuild},
	Targets: []string{"forge"},
	Outputs: map[string][]string{
		"asm":    {"out/asm"},
		"run":    {"out/stdout", "out/result"},
		"errors": {"out/errors"},
	},
}

func TestGolden(t *testing.T) {
	filetest.Run(t, "*.txtar", suite)
}

// checkBuild compiles in.ir with the Forge backend and checks what the
// directive asks: the assembly (asm), a run of the program (run) or the
// backend's diagnostics (errors), which a case that builds must not
// declare.
func checkBuild(t *testing.T, c *filetest.Case, d filetest.Directive) {
	if !c.On("forge") || len(d.Args) != 0 {
		t.Fatalf("test %s: takes no arguments and needs \"target forge\"", d)
	}
	src, ok := c.File("in.ir")
	if !ok {
		t.Fatal("no in.ir section")
	}
	srcs := diag.Sources{"in.ir": []byte(src)}
	m, diags := ir.Parse("in.ir", []byte(src))
	if diags.HasErrors() {
		t.Fatalf("in.ir does not parse:\n%s", diags.Render(srcs))
	}
	if diags := ir.Verify(m); len(diags) > 0 {
		t.Fatalf("in.ir does not verify:\n%s", diags.Render(srcs))
	}
	text, p, diags := forgegen.Build(m, "out.fasm")
	if diags.HasErrors() != (d.Name == "errors") {
		if d.Name == "errors" {
			t.Fatalf("test errors: the module builds")
		}
		t.Fatalf("test %s: the module does not build:\n%s", d, diags.Render(srcs))
	}
	switch d.Name {
	case "errors":
		if p != nil {
			t.Error("Build returned a program along with errors")
		}
		c.Check("out/errors", diags.Render(srcs))
		if text != "" {
			t.Logf("assembly:\n%s", text)
		}
	case "asm":
		c.Check("out/asm", text)
	case "run":
		img, err := vm.NewImage(p)
		if err != nil {
			t.Fatalf("the program does not load: %v", err)
		}
		var out output
		mach := vm.New(img, vm.Config{Ticks: ticks, Memory: memory, Stack: stack}, &out)
		for mach.Run() == vm.Ready {
		}
		c.Check("out/stdout", out.b.String())
		c.Check("out/result", result(mach))
	}
}

// result describes how a run ended.
func result(m *vm.Machine) string {
	switch m.State() {
	case vm.Halted:
		return fmt.Sprintf("HALTED r0=%d ticks=%d", int64(m.Register(0)), m.Ticks())
	case vm.Faulted:
		s := fmt.Sprintf("FAULTED %s pc=%d ticks=%d", m.Fault(), m.PC(), m.Ticks())
		if m.Fault() == vm.UserFault {
			s += fmt.Sprintf(" code=%d", m.UserCode())
		}
		return s
	}
	return m.State().String()
}
