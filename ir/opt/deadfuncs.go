package opt

import (
	"strings"

	"github.com/genesis-toolchain/genesis/ir"
)

// deadfuncs removes the functions the program cannot reach. The roots
// are the entry points every backend knows: main, where a program starts
// (the forge, native and Go targets call nothing else; a Go package
// exports only Run, which calls main). From a reached function, a
// function is reached by call, func_ref (its address is taken: an
// indirect call may reach it), a parallel or parallel.each branch, or by
// name in the text of an asm block (a CALL, which the backends resolve
// against the module's functions). The asm test is textual and
// conservative: any occurrence of the name, bare or quoted, keeps the
// function.
//
// A module without main is no program (every backend rejects it): it
// keeps every function, so that --emit ir of a module of functions
// prints them all. The functions kept stay in their order.
func deadfuncs(m *ir.Module) {
	byName := m.FuncMap()
	main := byName["main"]
	if main == nil {
		return
	}
	reached := map[*ir.Func]bool{main: true}
	work := []*ir.Func{main}
	reach := func(name string) {
		if f := byName[name]; f != nil && !reached[f] {
			reached[f] = true
			work = append(work, f)
		}
	}
	var asm []string // the texts of the reached asm blocks not yet searched
	for {
		for len(work) > 0 {
			f := work[len(work)-1]
			work = work[:len(work)-1]
			ir.Walk(f.Body, func(in *ir.Instr) {
				switch in.Op {
				case ir.OpCall, ir.OpFuncRef:
					reach(in.Sym)
				case ir.OpParallel, ir.OpParallelEach:
					for _, s := range in.Syms {
						reach(s)
					}
				case ir.OpAsm:
					asm = append(asm, in.Str)
				}
			})
		}
		if len(asm) == 0 {
			break
		}
		// The functions an asm block may CALL, in module order so that
		// the walk is the same at every run.
		texts := asm
		asm = nil
		for _, f := range m.Funcs {
			if !reached[f] && mentions(texts, f.Name) {
				reach(f.Name)
			}
		}
		if len(work) == 0 {
			break
		}
	}
	if len(reached) == len(m.Funcs) {
		return
	}
	// A new slice: a caller may hold the old one.
	kept := make([]*ir.Func, 0, len(reached))
	for _, f := range m.Funcs {
		if reached[f] {
			kept = append(kept, f)
		}
	}
	m.Funcs = kept
}

// mentions reports whether name occurs in one of texts, as written or as
// Forge assembly writes it in a string literal (with \ and " escaped).
func mentions(texts []string, name string) bool {
	quoted := strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`).Replace(name)
	for _, t := range texts {
		if strings.Contains(t, name) || strings.Contains(t, quoted) {
			return true
		}
	}
	return false
}
