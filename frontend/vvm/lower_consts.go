package vvm

import (
	"math"

	"github.com/genesis-toolchain/genesis/ir"
)

// constKey identifies a constant: its type and literal, the number by
// its bits (0 and -0 differ; a NaN is one constant).
type constKey struct {
	t    ir.Type
	kind ir.LitKind
	i    int64
	bits uint64
	s    string
}

// shareConsts makes each distinct constant of f one instruction at the
// start of its body, which every use then reads: the lowering makes a
// constant at each use ("kind", "note", unit, 0 after every call…), a
// third of a function's instructions, and the IR is most of the
// frontend's memory. A constant is pure and the start of the body
// dominates every instruction of f, so the program means the same. Each
// shared constant keeps its first use's position.
//
// The walk visits instructions in order of definition, so a use comes
// after the constant it reads has been seen and is rewritten on the way.
func shareConsts(f *ir.Func) {
	if f.Body == nil {
		return
	}
	shared := map[constKey]*ir.Value{}
	subst := map[*ir.Value]*ir.Value{}
	var consts []*ir.Instr
	var walk func(r *ir.Region)
	walk = func(r *ir.Region) {
		kept := r.Instrs[:0]
		for _, in := range r.Instrs {
			for i, a := range in.Args {
				if s, ok := subst[a]; ok {
					in.Args[i] = s
				}
			}
			if in.Op == ir.OpConst && len(in.Results) == 1 && len(in.Regions) == 0 {
				k := constKey{in.Type, in.Lit.Kind, in.Lit.Int, math.Float64bits(in.Lit.Num), in.Lit.Str}
				if s, ok := shared[k]; ok {
					subst[in.Results[0]] = s
				} else {
					shared[k] = in.Results[0]
					consts = append(consts, in)
				}
				continue
			}
			for _, sub := range in.Regions {
				walk(sub)
			}
			kept = append(kept, in)
		}
		clear(r.Instrs[len(kept):]) // drop the moved instructions' pointers
		r.Instrs = kept
	}
	walk(f.Body)
	if len(consts) == 0 {
		return
	}
	f.Body.SetInstrs(append(consts, f.Body.Instrs...))
}
