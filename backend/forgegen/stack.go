package forgegen

import (
	"fmt"

	"github.com/genesis-toolchain/genesis/diag"
	"github.com/genesis-toolchain/genesis/forge/bytecode"
	"github.com/genesis-toolchain/genesis/ir"
)

// StackUse is what a compiled program takes from the Forge Machine's two
// stacks: the shadow stack of frames (each function's slots and spill
// slots, checked by its prologue) and the machine stack (return
// addresses, and the registers saved with PUSH around calls). The native
// and Go targets, which have neither, charge the same amounts against the
// same limits, so that a recursion faults at the same depth, with the
// same fault, after the same output on every target (docs/decisions.md,
// N4).
type StackUse struct {
	Funcs map[string]*FuncStack
}

// FuncStack is one function's use of the stacks. Machine stack amounts
// are bytes below the stack pointer on entry to the function (after the
// CALL pushed the return address).
type FuncStack struct {
	// Frame is the bytes the prologue takes from the shadow stack (slots
	// and spill slots, rounded to 16); 0 when the function has no frame.
	Frame int64
	// Entry is the machine stack in use when the prologue checks the
	// frame: registers pushed before it.
	Entry int64
	// Instrs holds the IR instructions whose Forge code can fault or
	// has an effect (calls, asm, loads, stores, divisions, unreachable),
	// and those of every call and asm block.
	Instrs map[*ir.Instr]InstrStack
	// Inexact says why the figures are not exact, when they are not: two
	// paths reach an instruction with different stack depths. It is a
	// bug of the backend; the targets that need the figures report it.
	Inexact string
}

// InstrStack is one IR instruction's use of the machine stack.
type InstrStack struct {
	// Need is the most the instruction's code has on the machine stack
	// before one of its effects, counting what a CALL pushes: when fewer
	// bytes are free, the Forge Machine faults STACK_OVERFLOW before the
	// instruction has any effect (registers pushed earlier and not yet
	// checked against the limit count too: a PUSH is not observable, the
	// next effect is).
	Need int64
	// Depth is, for a call, the bytes pushed before the CALL (the callee
	// starts Depth+8 below the caller's entry), and for an asm block the
	// bytes pushed before its text runs.
	Depth int64
}

// BuildStack compiles m into a program, as BuildOptions does with the
// default Options, and returns the program's use of the stacks too. The
// figures are those of the program: the instructions are m's own.
func BuildStack(m *ir.Module, file string) (*bytecode.Program, *StackUse, diag.List) {
	return newCompiler(m, Options{}).build(file, nil)
}

// stackUse follows the function's final code, as the machine runs it,
// and records for each IR instruction how deep the machine stack is at
// its effects. Every path must reach an instruction with the same depth:
// PUSHes and POPs come in pairs around calls, within a basic block.
func (l *fnLower) stackUse(code []*minst) *FuncStack {
	fs := &FuncStack{Instrs: map[*ir.Instr]InstrStack{}}
	if l.frameLI != nil {
		fs.Frame = l.frameLI.imm
	}
	inexact := func(format string, args ...any) {
		if fs.Inexact == "" {
			fs.Inexact = fmt.Sprintf("function @%s: ", l.f.Name) + fmt.Sprintf(format, args...)
		}
	}
	note := func(in *minst, need, depth int64) {
		u := fs.Instrs[in.src]
		u.Need = max(u.Need, need)
		if in.op == mCall || in.op == mAsm {
			u.Depth = depth
		}
		fs.Instrs[in.src] = u
	}
	// The depth at each label, found by passes over the code until no
	// label is new: code after a JMP is reached through its label, which
	// a later jump (a rotated loop's) may be the first to name.
	at := map[string]int64{}
	for changed := true; changed; {
		changed = false
		depth, reached := int64(0), true
		reach := func(label string) {
			if d, ok := at[label]; !ok {
				at[label] = depth
				changed = true
			} else if d != depth {
				inexact("label %s is reached with %d and %d bytes on the machine stack", label, d, depth)
			}
		}
		for _, in := range code {
			if in.op == mLabel {
				if d, ok := at[in.sym]; ok {
					if reached && d != depth {
						inexact("label %s is reached with %d and %d bytes on the machine stack", in.sym, d, depth)
					}
					depth, reached = d, true
				} else if reached {
					reach(in.sym)
				}
				continue
			}
			if !reached {
				continue
			}
			switch in.op {
			case mCall:
				note(in, depth+8, depth)
			case mAsm:
				note(in, depth, depth)
			case mLoad, mStore, mFault:
				if in.src != nil { // else spill code, inside the checked frame
					note(in, depth, depth)
				}
			case mALU:
				switch in.name {
				case "DIV", "MOD", "DIVS", "MODS":
					note(in, depth, depth)
				}
			case mJcc:
				if in.sym == l.c.overflow {
					fs.Entry = depth // the prologue's check of the frame
				}
			case mPush:
				depth += 8
			case mPop:
				if depth -= 8; depth < 0 {
					inexact("a POP below the entry's stack")
				}
			}
			if in.branches() && in.sym != l.c.overflow {
				reach(in.sym)
			}
			if in.terminates() {
				reached = false
			}
		}
	}
	delete(fs.Instrs, nil)
	return fs
}
