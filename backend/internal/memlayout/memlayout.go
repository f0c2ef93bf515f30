// Package memlayout describes, for the backends that compile Genesis
// programs to other machines (backend/llvm for native code, the
// standalone mode of backend/golang), the Forge Machine state they must
// reproduce: the layout of linear memory, the fault codes, and
// the instructions of inline asm blocks, decoded.
//
// The layout is not re-derived: the module is compiled by the Forge
// backend and the resulting program's code and data become the first
// bytes of memory, so a data object has the same address on every target,
// a program can read its own code, and stores below the heap fault at the
// same addresses as under `forge exec`.
package memlayout

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/genesis-toolchain/genesis/backend/forgegen"
	"github.com/genesis-toolchain/genesis/diag"
	"github.com/genesis-toolchain/genesis/forge/asm"
	"github.com/genesis-toolchain/genesis/forge/bytecode"
	"github.com/genesis-toolchain/genesis/ir"
)

// The memory of a run. A compiled program does not assume a quota: like
// the Forge program, which reads the heap's bounds from r254 and r255 at
// start (docs/forge.md, Registers at start), the native and Go programs
// take the quota and the stack size when they start (--memory, --stack,
// with forge exec's defaults) and derive the rest:
//
//	heap_end    = memory − stack          the machine stack is above it
//	frame top   = heap_end rounded down to FrameAlign
//	frame limit = max(heap_start, frame top − FrameSize), signed
//
// and fault OUT_OF_MEMORY before running when code, data and the stack
// do not fit in the quota, as the Forge Machine does at creation.
const (
	DefaultMemory = 16 << 20 // forge exec's default quota
	DefaultStack  = 64 << 10 // forge exec's default machine stack
	MaxMemory     = 1 << 32  // the largest quota (forge/vm.MaxMemory)
	FrameSize     = forgegen.DefaultFrameSize
	FrameAlign    = 16 // the frames' alignment: the frame top is rounded down to it
)

// Fault codes (docs/forge.md, Faults) the compiled targets raise; their
// runtimes (backend/llvm/rt/runtime.c, the standalone Go program) name
// them on standard error and exit with status 3.
const (
	FaultOutOfMemory    = 0x02
	FaultDivideByZero   = 0x03
	FaultInvalidAddress = 0x04
	FaultStackOverflow  = 0x06
	FaultStackUnderflow = 0x07
	FaultUser           = 0xFF
)

// User fault codes the Forge backend raises (docs/backend-forge.md).
const (
	UserUnreachable   = 0 // an unreachable instruction was reached
	UserBadFuncRef    = 1 // call_indirect of a reference to no function
	UserFrameOverflow = 2 // the shadow stack of slot frames is full
)

// Layout is a program's linear memory at the start of a run.
type Layout struct {
	// Image is the initial content of memory from address 0: the
	// program's Forge code, then its data. Everything below HeapStart is
	// read-only.
	Image     []byte
	HeapStart uint64
	// Data is the address of each data object of the module.
	Data map[string]uint64
	// Stack is what each function takes from the machine stack and the
	// shadow stack of frames on the Forge Machine, which the compiled
	// targets charge against the same limits (docs/decisions.md, N4).
	Stack *forgegen.StackUse
}

// Func returns what function name takes from the stacks (zero figures
// for a function the Forge program lacks, which a verified module does
// not have).
func (l *Layout) Func(name string) *forgegen.FuncStack {
	if fs := l.Stack.Funcs[name]; fs != nil {
		return fs
	}
	return &forgegen.FuncStack{}
}

// Of lays out m's memory. m must have passed ir.Verify; it is not
// modified. A module the Forge backend cannot compile gets its
// diagnostics: what Forge cannot run has no layout to reproduce.
func Of(m *ir.Module, file string) (*Layout, diag.List) {
	p, stack, diags := forgegen.BuildStack(m, file)
	if diags.HasErrors() {
		return nil, diags
	}
	for _, f := range m.Funcs {
		if fs := stack.Funcs[f.Name]; fs != nil && fs.Inexact != "" {
			// The targets would fault at other depths than Forge: a bug
			// of the Forge backend, reported rather than hidden.
			diags.Errorf(f.Pos, "0x08FF", "internal error: the Forge program's stack use is not exact: %s", fs.Inexact)
			return nil, diags
		}
	}
	l := &Layout{HeapStart: p.HeapStart(), Data: map[string]uint64{}, Stack: stack}
	l.Image = append(append(l.Image, p.Code...), p.Data...)
	addr := map[string]uint64{}
	for _, s := range p.Symbols {
		addr[s.Name] = s.Addr
	}
	for _, d := range m.Data {
		a, ok := addr[d.Name]
		if !ok {
			diags.Errorf(diag.Pos{File: file}, "0x08FF", "internal error: data object %q has no address in the Forge program", d.Name)
			return nil, diags
		}
		l.Data[d.Name] = a
	}
	return l, diags
}

// AsmInst is one instruction of an asm block; for a CALL, Callee names
// the function called.
type AsmInst struct {
	bytecode.Inst
	Callee string
}

// asmCallName finds the function operands of CALLs.
var asmCallName = regexp.MustCompile(`(?i)\bCALL\s+([A-Za-z_][A-Za-z0-9_.]*)`)

// DecodeAsm assembles the text of an inline asm block and returns its
// instructions in order. Only straight-line code and calls of functions
// translate to another machine: a block that jumps or returns is an
// error, as is text that does not assemble.
func DecodeAsm(text string) ([]AsmInst, error) {
	// HALT gives the assembler a program end; it is dropped below. Each
	// function called gets a label of its own after it, whose address
	// identifies the callee.
	src := text + "\nHALT\n"
	var names []string
	seen := map[string]bool{}
	for _, m := range asmCallName.FindAllStringSubmatch(text, -1) {
		if !seen[m[1]] {
			seen[m[1]] = true
			names = append(names, m[1])
			src += m[1] + ": HALT\n"
		}
	}
	b := asm.New("asm")
	b.Source("asm", []byte(src))
	p, diags := b.Program()
	if diags.HasErrors() {
		var msgs []string
		for _, d := range diags {
			if d.Severity == diag.Error {
				msgs = append(msgs, d.Msg)
			}
		}
		return nil, fmt.Errorf("%s", strings.Join(msgs, "; "))
	}
	insts, offs, err := bytecode.Insts(p.Code)
	if err != nil {
		return nil, err
	}
	// The block's instructions end before the HALT and the labels.
	n := len(insts) - 1 - len(names)
	callee := map[uint64]string{}
	for i, name := range names {
		callee[uint64(offs[n+1+i])] = name
	}
	var out []AsmInst
	for _, in := range insts[:n] {
		ai := AsmInst{Inst: in}
		switch {
		case in.Op == bytecode.CALL:
			ai.Callee = callee[in.Imm]
			if ai.Callee == "" {
				return nil, fmt.Errorf("CALL of an address: only calls of named functions run outside the Forge Machine")
			}
		case bytecode.IsTransfer(in.Op) || in.Op == bytecode.RET:
			return nil, fmt.Errorf("%s: only straight-line asm (no jumps or returns) runs outside the Forge Machine", in.Op)
		}
		out = append(out, ai)
	}
	return out, nil
}
