package opt

import "github.com/genesis-toolchain/genesis/ir"

// licm is loop-invariant code motion: an instruction inside a loop whose
// operands are all defined outside it (or by instructions already
// hoisted) computes the same on every iteration, and moves to just
// before the loop, so that it runs once per entry into the loop rather
// than once per iteration (i*n in the inner loops of a matrix product).
// Loops are done innermost first, so that an instruction invariant in
// several nested loops moves out of all of them.
//
// What may move, and from where, is decided by what it could do:
//
//   - A pure op cannot fault and has no effect: it moves from anywhere in
//     the loop (inside ifs, switches and blocks too), even from an arm
//     that would not have run, since computing an unused value changes
//     nothing. So do division and remainder by a constant that cannot
//     fault (nonzero, and for signed ops MIN / -1 wraps).
//   - An instruction that can fault (a division or remainder by a
//     divisor that may be zero, a load) moves only when it is certain to
//     run, with nothing observable before it, on the loop's first
//     iteration: it stands in the loop body itself (not in a nested
//     region), and everything before it in the body is transparent — it
//     cannot leave the loop, fault, run forever or have an effect (pure
//     ops; divisions that cannot fault; builtins; get and set; and ifs,
//     switches and blocks holding only those and yields and breaks that
//     stay inside them), or was hoisted before it, in order. A loop
//     body runs at least once each time control reaches the loop, so the
//     hoisted instruction faults exactly when, with the same position,
//     and after the same effects as the first iteration's would have.
//   - A load moves only out of a loop that writes no memory anywhere
//     (no store, copy, call, effect or asm block in it), which is what
//     makes its value invariant.
//   - A builtin cannot fault, but may be costly: it moves under the rule
//     for faulting instructions, so that the loop never computes one its
//     iterations would not have.
//   - Effects, calls, stores, copies, asm blocks, get, set, and
//     structured ops never move.
//   - Out of a loop that calls, at any depth, only constants and
//     function references move: anything else would live across the
//     calls, which costs a save and a restore around each.
func licm(m *ir.Module) {
	forEachFunc(m, hoistLoops)
}

// hoister holds what licm knows of one function.
type hoister struct {
	// pre numbers the instructions inside loops in program order, as
	// they stood before any moved; last is, for a loop, the largest
	// number inside it. Moving instructions out of a loop keeps them
	// inside every loop around it, so the numbers keep telling which
	// loops an instruction is in.
	pre, last map[*ir.Instr]int
	// paramLoop maps a loop parameter to its loop.
	paramLoop map[*ir.Value]*ir.Instr
	// from maps a moved instruction to the last loop it moved out of.
	from map[*ir.Instr]*ir.Instr
	// effects caches whether a structured op may write memory or call.
	effects *numberer
}

func hoistLoops(f *ir.Func) {
	if !hasLoop(f.Body) {
		return
	}
	h := &hoister{
		pre:       map[*ir.Instr]int{},
		last:      map[*ir.Instr]int{},
		paramLoop: map[*ir.Value]*ir.Instr{},
		from:      map[*ir.Instr]*ir.Instr{},
		effects:   &numberer{effects: map[*ir.Instr]effect{}},
	}
	// Only instructions inside loops are numbered: one outside every
	// loop is invariant in all of them, as inside reports for an
	// instruction without a number.
	counter := 0
	var number func(r *ir.Region, inLoop bool)
	number = func(r *ir.Region, inLoop bool) {
		for _, in := range r.Instrs {
			counter++
			if inLoop || in.Op == ir.OpLoop {
				h.pre[in] = counter
			}
			for _, sub := range in.Regions {
				number(sub, inLoop || in.Op == ir.OpLoop)
			}
			if in.Op == ir.OpLoop {
				h.last[in] = counter
				for _, p := range in.Regions[0].Params {
					h.paramLoop[p] = in
				}
			}
		}
	}
	number(f.Body, false)
	h.region(f.Body)
}

// hasLoop reports whether r holds a loop, at any depth.
func hasLoop(r *ir.Region) bool {
	for _, in := range r.Instrs {
		if in.Op == ir.OpLoop {
			return true
		}
		for _, sub := range in.Regions {
			if hasLoop(sub) {
				return true
			}
		}
	}
	return false
}

// region hoists out of every loop of r, at any depth, and places what
// leaves a loop of r itself just before it.
func (h *hoister) region(r *ir.Region) {
	var out []*ir.Instr
	changed := false
	for i, in := range r.Instrs {
		if in.Op == ir.OpLoop {
			if moved := h.loop(in); len(moved) > 0 {
				changed = true
				for _, x := range moved {
					x.Parent = r
				}
				if out == nil {
					out = append(out, r.Instrs[:i]...)
				}
				out = append(out, moved...)
			}
		} else {
			for _, sub := range in.Regions {
				h.region(sub)
			}
		}
		if out != nil {
			out = append(out, in)
		}
	}
	if changed {
		r.Instrs = out
	}
}

// loop hoists out of the loops nested in loop, then out of loop itself,
// and returns the instructions that leave loop, in the order they must
// run.
func (h *hoister) loop(loop *ir.Instr) []*ir.Instr {
	body := loop.Regions[0]
	h.region(body) // inner loops first
	var moved []*ir.Instr
	hoist := func(in *ir.Instr) {
		h.from[in] = loop
		moved = append(moved, in)
	}
	// mayMove reports whether in may leave the loop as far as its
	// operands go: whether it is invariant.
	mayMove := func(in *ir.Instr) bool {
		for _, a := range in.Args {
			if h.inside(a, loop) {
				return false
			}
		}
		return true
	}
	fx := h.effects.effect(loop)
	readsOnly := fx&fxWrites == 0
	if fx&fxCalls != 0 {
		// What moves out of a loop that calls lives across the calls,
		// and the Forge backend saves and restores it around each
		// (a PUSH and a POP), which costs more than the one or two
		// ops that moving saves. Constants are loaded again after a
		// call, so they still move.
		mayMove = func(in *ir.Instr) bool {
			return (in.Op == ir.OpConst || in.Op == ir.OpFuncRef) && len(in.Args) == 0
		}
	}
	// clear is whether every instruction of the body before the current
	// one is transparent or moved.
	clear := true
	for _, in := range body.Instrs {
		switch kind := classify(in); {
		case kind == movable && mayMove(in):
			hoist(in)
			continue
		case clear && mayMove(in) && (kind == mayFault || kind == costly || kind == load && readsOnly):
			hoist(in)
			continue
		}
		if clear && !h.transparent(in) {
			clear = false
		}
		for _, sub := range in.Regions {
			if in.Op != ir.OpLoop {
				h.nested(sub, mayMove, hoist)
			}
		}
	}
	if len(moved) > 0 {
		h.remove(body, loop)
	}
	return moved
}

// nested hoists the pure instructions of r, a region of an if, switch or
// block of a loop's body, that mayMove allows, at any depth but that of
// inner loops, which were done before.
func (h *hoister) nested(r *ir.Region, mayMove func(*ir.Instr) bool, hoist func(*ir.Instr)) {
	for _, in := range r.Instrs {
		if classify(in) == movable && mayMove(in) {
			hoist(in)
			continue
		}
		if in.Op == ir.OpLoop {
			continue
		}
		for _, sub := range in.Regions {
			h.nested(sub, mayMove, hoist)
		}
	}
}

// remove deletes, from r and the regions nested in it but those of
// inner loops, the instructions that moved out of loop.
func (h *hoister) remove(r *ir.Region, loop *ir.Instr) {
	keep := r.Instrs[:0]
	for _, in := range r.Instrs {
		if h.from[in] == loop {
			continue
		}
		if in.Op != ir.OpLoop {
			for _, sub := range in.Regions {
				h.remove(sub, loop)
			}
		}
		keep = append(keep, in)
	}
	clear(r.Instrs[len(keep):])
	r.Instrs = keep
}

// inside reports whether v is defined inside loop, where it may change
// from one iteration to the next: by an instruction of the loop that has
// not moved out of it, or as the loop's (or an inner loop's) parameter.
func (h *hoister) inside(v *ir.Value, loop *ir.Instr) bool {
	def := v.Def
	if def == nil {
		def = h.paramLoop[v]
		if def == nil {
			return false // a function parameter
		}
	} else if h.from[def] == loop {
		return false
	}
	n, ok := h.pre[def]
	return ok && h.pre[loop] <= n && n <= h.last[loop]
}

// motion classifies what an instruction may do, for licm.
type motion uint8

const (
	fixed    motion = iota // never moves
	movable                // pure: moves from anywhere in the loop
	mayFault               // may fault: moves only when certain to run first
	costly                 // a builtin: moves only when certain to run
	load                   // a load: as mayFault, and only out of loops that do not write
)

func classify(in *ir.Instr) motion {
	if len(in.Regions) > 0 || len(in.Results) != 1 {
		return fixed
	}
	switch in.Op {
	case ir.OpDivS, ir.OpDivU, ir.OpRemS, ir.OpRemU:
		if safeDivisor(in) {
			return movable
		}
		return mayFault
	case ir.OpBuiltin:
		return costly
	case ir.OpLoad:
		return load
	}
	if in.Info().Flags&ir.Pure != 0 {
		return movable
	}
	return fixed
}

// safeDivisor reports whether the division or remainder in cannot fault:
// its divisor is a nonzero constant. (MIN / -1 wraps, it does not fault.)
func safeDivisor(in *ir.Instr) bool {
	b, ok := constInt(in.Args[1])
	return ok && b != 0
}

// transparent reports whether in, left in a loop body, lets the
// instructions after it be hoisted as if it were not there: it cannot
// leave the loop, fault, run forever or have an effect.
func (h *hoister) transparent(in *ir.Instr) bool {
	return h.transparentIn(in, nil)
}

// transparentIn is transparent for an instruction nested in the ops of
// inner, whose labels a break may target without leaving.
func (h *hoister) transparentIn(in *ir.Instr, inner []string) bool {
	switch in.Op {
	case ir.OpGet, ir.OpSet, ir.OpBuiltin, ir.OpYield:
		return true
	case ir.OpBreak:
		for _, l := range inner {
			if l == in.Label {
				return true
			}
		}
		return false
	case ir.OpIf, ir.OpSwitch, ir.OpBlock:
		if in.Op == ir.OpBlock {
			inner = append(inner[:len(inner):len(inner)], in.Label)
		}
		for _, sub := range in.Regions {
			for _, x := range sub.Instrs {
				if !h.transparentIn(x, inner) {
					return false
				}
			}
		}
		return true
	}
	return classify(in) == movable
}
