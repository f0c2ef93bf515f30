package ir

// This file holds the small mutation helpers the optimizer (ir/opt) needs.
// The IR keeps no use lists: a value's uses are found by walking its
// function, which keeps every other part of the package simple.

// Walk calls fn for every instruction of r and of the regions nested in
// it, in program order: an instruction before the instructions of its
// regions. fn must not add or remove instructions of the region it is
// called for.
func Walk(r *Region, fn func(in *Instr)) {
	for _, in := range r.Instrs {
		fn(in)
		for _, sub := range in.Regions {
			Walk(sub, fn)
		}
	}
}

// SetInstrs makes ins the instructions of r and sets their Parent to r.
func (r *Region) SetInstrs(ins []*Instr) {
	r.Instrs = ins
	for _, in := range ins {
		in.Parent = r
	}
}

// AddResult appends a fresh result of type t to in, numbered in f, and
// returns it.
func (in *Instr) AddResult(f *Func, t Type) *Value {
	v := f.NewValue(t)
	v.Def = in
	in.Results = append(in.Results, v)
	return v
}

// Resolve follows subst from v until it reaches a value subst does not
// map, and returns that value. subst must not contain a cycle.
func Resolve(subst map[*Value]*Value, v *Value) *Value {
	for {
		w, ok := subst[v]
		if !ok {
			return v
		}
		v = w
	}
}

// ReplaceUses rewrites every operand of the instructions of f that subst
// maps (directly or through a chain of mappings) to the value it resolves
// to. The caller guarantees that each replacement dominates the uses of
// the value it replaces.
func ReplaceUses(f *Func, subst map[*Value]*Value) {
	if len(subst) == 0 || f.Body == nil {
		return
	}
	Walk(f.Body, func(in *Instr) {
		for i, a := range in.Args {
			in.Args[i] = Resolve(subst, a)
		}
	})
}
