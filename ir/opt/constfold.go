package opt

import "github.com/genesis-toolchain/genesis/ir"

// constfold evaluates operations whose operands are constants, applies
// algebraic identities, and resolves branches on constants.
//
// Folding follows the IR's semantics exactly (docs/ir.md): integer
// arithmetic wraps at the type's width; shift amounts are taken modulo 64
// and the shift is done in 64 bits, then truncated; div.s and rem.s of
// MIN by -1 give MIN and 0; comparisons are signed or unsigned as the op
// says; sext, zext and trunc extend or cut at their widths. A division or
// remainder by zero is never folded: it must fault when it runs.
//
// A folded instruction becomes a const in place (keeping its result).
// An identity (x+0, x*1, x&x, not(not x), ...) makes the instruction's
// result an alias of an operand; x-x, x*0, x^x and the like become
// constants. An if on a constant is replaced by the arm that runs, a
// switch on a constant by the region it selects; the instructions left
// unused are deadcode's.
func constfold(m *ir.Module) {
	forEachFunc(m, func(f *ir.Func) {
		c := &folder{f: f, subst: map[*ir.Value]*ir.Value{}}
		c.region(f.Body)
		ir.ReplaceUses(f, c.subst)
	})
}

type folder struct {
	f     *ir.Func
	subst map[*ir.Value]*ir.Value
}

// region folds r in one pass, building its new instruction list as it
// goes, so that replacing many ifs on constants in one region (inlined
// calls with constant arguments) stays linear.
func (c *folder) region(r *ir.Region) {
	out, _ := c.instrs(r, r.Instrs, make([]*ir.Instr, 0, len(r.Instrs)))
	r.SetInstrs(out)
}

// instrs folds ins, instructions of region r or of an arm spliced into
// it, appending them to out, r's new instructions. An if or switch on a
// constant is replaced by the instructions of the region that runs,
// folded in turn; a yield ending that region gives the op's results. It
// returns out and whether a spliced terminator ended r, the rest of
// which is then dropped.
func (c *folder) instrs(r *ir.Region, ins, out []*ir.Instr) ([]*ir.Instr, bool) {
	for _, in := range ins {
		for j, a := range in.Args {
			in.Args[j] = ir.Resolve(c.subst, a)
		}
		var arm *ir.Region
		switch in.Op {
		case ir.OpIf:
			if x, ok := constInt(in.Args[0]); ok {
				arm = in.Regions[1]
				if x != 0 {
					arm = in.Regions[0]
				}
			}
		case ir.OpSwitch:
			if x, ok := constInt(in.Args[0]); ok {
				arm = in.Regions[switchTarget(in, x)]
			}
		default:
			if len(in.Results) == 1 && len(in.Regions) == 0 {
				c.fold(in)
			}
		}
		if arm != nil {
			body, ends := arm.Instrs, false
			if last := arm.Last(); last != nil && last.Op.IsTerminator() {
				if last.Op == ir.OpYield {
					for i, res := range in.Results {
						c.subst[res] = last.Args[i]
					}
					body = body[:len(body)-1]
				} else {
					ends = true
				}
			}
			var stop bool
			if out, stop = c.instrs(r, body, out); stop || ends {
				return out, true
			}
			continue
		}
		for _, sub := range in.Regions {
			c.region(sub)
		}
		in.Parent = r
		out = append(out, in)
	}
	return out, false
}

// switchTarget returns the index of the region switch in selects for x.
func switchTarget(in *ir.Instr, x int64) int {
	for i, vals := range in.Cases {
		for _, v := range vals {
			if v == x {
				return i
			}
		}
	}
	return len(in.Regions) - 1
}

// fold folds in if it can.
func (c *folder) fold(in *ir.Instr) {
	t := in.Results[0].Type
	if len(in.Args) == 0 || !(t.IsInt() || t == ir.Bool || t == ir.Ptr) {
		return
	}
	a, aok := constInt(in.Args[0])
	var b int64
	bok := false
	if len(in.Args) > 1 {
		b, bok = constInt(in.Args[1])
	}
	if aok && (len(in.Args) == 1 || bok) {
		if x, ok := eval(in.Op, in.Args[0].Type, t, a, b); ok {
			toConst(in, t, x)
		}
		return
	}
	c.identity(in, a, aok, b, bok)
}

// toConst turns in into the constant x of type t, keeping its result.
func toConst(in *ir.Instr, t ir.Type, x int64) {
	*in = ir.Instr{Op: ir.OpConst, Type: t, Lit: ir.Literal{Kind: ir.LitInt, Int: ir.Normalize(t, x)},
		Results: in.Results, Parent: in.Parent, Pos: in.Pos}
}

// alias makes in's result another name for v.
func (c *folder) alias(in *ir.Instr, v *ir.Value) { c.subst[in.Results[0]] = v }

// identity applies the algebraic identities of in, whose operands may be
// partly constant.
func (c *folder) identity(in *ir.Instr, a int64, aok bool, b int64, bok bool) {
	t := in.Results[0].Type
	ones := ir.Normalize(t, -1) // all bits set; true for bool
	x := in.Args[0]
	var y *ir.Value
	if len(in.Args) > 1 {
		y = in.Args[1]
	}
	// Put the constant of a commutative op second.
	if aok && !bok && in.Op.Info().Flags&ir.Commutative != 0 {
		x, y, a, b, bok = y, x, b, a, true
	}
	switch in.Op {
	case ir.OpAdd, ir.OpOr, ir.OpXor:
		if bok && b == 0 {
			c.alias(in, x)
		}
	case ir.OpSub, ir.OpShl, ir.OpShrU, ir.OpShrS:
		switch {
		case bok && (b == 0 || in.Op != ir.OpSub && b&63 == 0):
			c.alias(in, x)
		case in.Op == ir.OpSub && x == y:
			toConst(in, t, 0)
		}
	case ir.OpMul:
		switch {
		case bok && b == 1:
			c.alias(in, x)
		case bok && b == 0:
			toConst(in, t, 0)
		}
	case ir.OpDivS, ir.OpDivU:
		if bok && b == 1 {
			c.alias(in, x)
		}
	case ir.OpRemS, ir.OpRemU:
		if bok && (b == 1 || in.Op == ir.OpRemS && b == -1) {
			toConst(in, t, 0)
		}
	}
	switch in.Op {
	case ir.OpAnd:
		switch {
		case bok && b == 0:
			toConst(in, t, 0)
		case bok && b == ones, x == y:
			c.alias(in, x)
		}
	case ir.OpOr:
		switch {
		case bok && b == ones:
			toConst(in, t, ones)
		case x == y:
			c.alias(in, x)
		}
	case ir.OpXor:
		if x == y {
			toConst(in, t, 0)
		}
	case ir.OpNot, ir.OpNeg:
		if d := x.Def; d != nil && d.Op == in.Op {
			c.alias(in, d.Args[0])
		}
	case ir.OpEq, ir.OpLeS, ir.OpLeU, ir.OpGeS, ir.OpGeU:
		if x == y {
			toConst(in, ir.Bool, 1)
		}
	case ir.OpNe, ir.OpLtS, ir.OpLtU, ir.OpGtS, ir.OpGtU:
		if x == y {
			toConst(in, ir.Bool, 0)
		}
	}
}

// eval computes op on the constants a and b (b unused for unary ops) of
// type at, giving a result of type rt; constants are normalized (see
// ir.Normalize). It reports false for ops it does not evaluate and for
// division and remainder by zero, which fault at run time.
func eval(op ir.Op, at, rt ir.Type, a, b int64) (int64, bool) {
	bits := at.Bits()
	mask := ^uint64(0)
	if bits < 64 {
		mask = 1<<uint(bits) - 1
	}
	ua, ub := uint64(a)&mask, uint64(b)&mask
	var r int64
	switch op {
	case ir.OpAdd:
		r = a + b
	case ir.OpSub:
		r = a - b
	case ir.OpMul:
		r = a * b
	case ir.OpDivS:
		if b == 0 {
			return 0, false
		}
		if b == -1 {
			r = -a // MIN / -1 wraps to MIN
		} else {
			r = a / b
		}
	case ir.OpDivU:
		if ub == 0 {
			return 0, false
		}
		r = int64(ua / ub)
	case ir.OpRemS:
		if b == 0 {
			return 0, false
		}
		if b == -1 {
			r = 0
		} else {
			r = a % b
		}
	case ir.OpRemU:
		if ub == 0 {
			return 0, false
		}
		r = int64(ua % ub)
	case ir.OpAnd:
		r = a & b
	case ir.OpOr:
		r = a | b
	case ir.OpXor:
		r = a ^ b
	case ir.OpShl:
		r = a << (uint64(b) & 63)
	case ir.OpShrU:
		r = int64(ua >> (uint64(b) & 63))
	case ir.OpShrS:
		r = a >> (uint64(b) & 63)
	case ir.OpNeg:
		r = -a
	case ir.OpNot:
		r = ^a
	case ir.OpEq:
		r = b2i(a == b)
	case ir.OpNe:
		r = b2i(a != b)
	case ir.OpLtS:
		r = b2i(a < b)
	case ir.OpLtU:
		r = b2i(ua < ub)
	case ir.OpLeS:
		r = b2i(a <= b)
	case ir.OpLeU:
		r = b2i(ua <= ub)
	case ir.OpGtS:
		r = b2i(a > b)
	case ir.OpGtU:
		r = b2i(ua > ub)
	case ir.OpGeS:
		r = b2i(a >= b)
	case ir.OpGeU:
		r = b2i(ua >= ub)
	case ir.OpSext, ir.OpTrunc, ir.OpIntToPtr, ir.OpPtrToInt:
		r = a // a is stored sign-extended; Normalize cuts it to rt
	case ir.OpZext:
		r = int64(ua)
	case ir.OpPtrAdd:
		r = a + b
	default:
		return 0, false
	}
	return ir.Normalize(rt, r), true
}

func b2i(b bool) int64 {
	if b {
		return 1
	}
	return 0
}
