package opt

import (
	"math/bits"

	"github.com/genesis-toolchain/genesis/diag"
	"github.com/genesis-toolchain/genesis/ir"
)

// strength replaces multiplications, divisions and remainders by
// constants with cheaper sequences of shifts, masks, additions and
// multiplications, when the cost table (forgeCosts) says the sequence
// is cheaper than the operation it replaces. Every rewrite is exact for
// every input at every width (docs/ir.md's wrapping semantics), and only
// divisions and remainders by a nonzero constant are rewritten, which
// cannot fault: no fault appears or disappears.
//
// The candidate rewrites, for x of an integer type of n bits and k ≥ 1:
//
//   - mul x, 2^k → shl x, k; mul x, -1 → neg x;
//   - div.u x, 2^k → shr.u x, k (i64), and (shr.s x, k), 2^(n-k)-1
//     (narrower types, whose registers hold values sign-extended: a
//     logical shift would first have to zero-extend them);
//   - rem.u x, 2^k → and x, 2^k-1;
//   - div.s x, ±2^k and rem.s x, ±2^k → shr.s and and when x is known
//     to be non-negative; otherwise the shift with the rounding fix-up
//     (a negative x is biased by 2^k-1 so that the shift truncates toward
//     zero);
//   - div.u, rem.u, div.s, rem.s by any other constant d ≥ 2 (or ≤ -2)
//     of an i8, i16 or i32 → a multiplication by a magic number in 64
//     bits (Granlund and Montgomery's method: the magic m and shift s,
//     with floor(x·m / 2^s) = floor(x/d) for every x of the width, are
//     searched for and checked when the rewrite is built). The product
//     of an i64 would need the high half of a 128-bit product, which
//     Forge has no instruction for: an i64 division by a constant stays
//     a division.
//
// On Forge, where MUL, DIV and MOD cost 2 ticks and shifts and masks 1,
// the table keeps the power-of-two rewrites of mul, div.u and rem.u and
// the signed ones of a non-negative x; the fix-up and magic sequences
// cost more ticks than the division they would replace and are not
// applied (docs/decisions.md, "Strength reduction and loop rotation").
func strength(m *ir.Module) { strengthWith(m, &forgeCosts) }

// strengthWith is strength under the cost table c, so that the tests
// can exercise every rewrite with a table under which each pays.
func strengthWith(m *ir.Module, c *costTable) {
	forEachFunc(m, func(f *ir.Func) {
		s := &reducer{f: f, costs: c}
		s.region(f.Body)
	})
}

// costTable prices an instruction, in ticks, as a backend lowers it.
type costTable struct {
	// op returns the cost of op with result (or, for casts, operand)
	// type t; cast the cost of a cast from one type to another.
	op   func(op ir.Op, t ir.Type) int
	cast func(op ir.Op, from, to ir.Type) int
}

// forgeCosts mirrors what backend/forgegen emits for each operation
// (lower.go), in ticks (forge/bytecode's costs): a narrow integer result
// of add, sub, mul, shl and neg is normalized (LI, SHL, SAR: 3 ticks);
// div.u, rem.u and shr.u of a narrow type zero-extend their operands
// first (LI, AND each); shr.s, and, or and xor need nothing. Constants
// cost nothing: the backend loads those of a loop once, before it, and
// the loops are where the ticks are.
var forgeCosts = costTable{
	op: func(op ir.Op, t ir.Type) int {
		narrow := 0
		if t.Bits() < 64 {
			narrow = 1
		}
		switch op {
		case ir.OpConst:
			return 0
		case ir.OpAdd, ir.OpSub, ir.OpShl, ir.OpNeg:
			return 1 + 3*narrow
		case ir.OpMul:
			return 2 + 3*narrow
		case ir.OpDivS:
			return 2 + 3*narrow
		case ir.OpRemS:
			return 2
		case ir.OpDivU, ir.OpRemU:
			return 2 + 7*narrow
		case ir.OpShrU:
			return 1 + 5*narrow
		case ir.OpShrS, ir.OpAnd, ir.OpOr, ir.OpXor, ir.OpNot:
			return 1
		}
		return 2
	},
	cast: func(op ir.Op, from, to ir.Type) int {
		switch op {
		case ir.OpSext:
			return 0 // a move, which the allocator coalesces
		case ir.OpZext:
			return 2
		}
		return 3 // trunc: normalize
	},
}

// reducer rewrites one function.
type reducer struct {
	f     *ir.Func
	costs *costTable
}

// region rewrites the instructions of r and of its nested regions.
func (s *reducer) region(r *ir.Region) {
	var out []*ir.Instr
	for i, in := range r.Instrs {
		for _, sub := range in.Regions {
			s.region(sub)
		}
		seq := s.rewrite(in)
		if seq == nil {
			if out != nil {
				out = append(out, in)
			}
			continue
		}
		if out == nil {
			out = append(make([]*ir.Instr, 0, len(r.Instrs)+8), r.Instrs[:i]...)
		}
		out = append(out, seq...)
	}
	if out != nil {
		r.SetInstrs(out)
	}
}

// rewrite returns the instructions that replace in, the last of which
// defines in's result, or nil to keep in.
func (s *reducer) rewrite(in *ir.Instr) []*ir.Instr {
	if len(in.Args) != 2 || len(in.Results) != 1 || !in.Results[0].Type.IsInt() {
		return nil
	}
	x, cv := in.Args[0], in.Args[1]
	c, ok := constInt(cv)
	if !ok && in.Op == ir.OpMul {
		if c, ok = constInt(x); ok {
			x = cv
		}
	}
	if !ok {
		return nil
	}
	t := in.Results[0].Type
	var best *seq
	for _, build := range []func(*seq, *ir.Value, ir.Op, int64) bool{pow2Seq, magicSeq} {
		q := &seq{f: s.f, pos: in.Pos}
		if !build(q, x, in.Op, c) {
			continue
		}
		if best == nil || q.cost(s.costs) < best.cost(s.costs) {
			best = q
		}
	}
	if best == nil || best.cost(s.costs) >= s.costs.op(in.Op, t) {
		return nil
	}
	// The last instruction takes over in's result, and so its name and
	// uses.
	last := best.ins[len(best.ins)-1]
	res := in.Results[0]
	res.Def = last
	last.Results[0] = res
	return best.ins
}

// seq is a sequence of instructions being built to replace one.
type seq struct {
	f   *ir.Func
	pos diag.Pos
	ins []*ir.Instr
}

func (q *seq) add(in *ir.Instr, t ir.Type) *ir.Value {
	in.Pos = q.pos
	q.ins = append(q.ins, in)
	return in.AddResult(q.f, t)
}

// c returns the constant x of type t, normalized.
func (q *seq) c(t ir.Type, x int64) *ir.Value {
	return q.add(&ir.Instr{Op: ir.OpConst, Type: t, Lit: ir.Literal{Kind: ir.LitInt, Int: ir.Normalize(t, x)}}, t)
}

// op returns op of args, of the type of args[0].
func (q *seq) op(op ir.Op, args ...*ir.Value) *ir.Value {
	return q.add(&ir.Instr{Op: op, Args: args}, args[0].Type)
}

// cast returns the cast op of a to t.
func (q *seq) cast(op ir.Op, t ir.Type, a *ir.Value) *ir.Value {
	return q.add(&ir.Instr{Op: op, Type: t, Args: []*ir.Value{a}}, t)
}

// cost is the sum of the costs of q's instructions under c.
func (q *seq) cost(c *costTable) int {
	n := 0
	for _, in := range q.ins {
		switch in.Op {
		case ir.OpSext, ir.OpZext, ir.OpTrunc:
			n += c.cast(in.Op, in.Args[0].Type, in.Type)
		default:
			n += c.op(in.Op, in.Results[0].Type)
		}
	}
	return n
}

// log2 returns k when the n-bit word u is 2^k, else -1.
func log2(u uint64) int {
	if u == 0 || u&(u-1) != 0 {
		return -1
	}
	return bits.TrailingZeros64(u)
}

// word returns the constant c of type t as an unsigned n-bit word.
func word(t ir.Type, c int64) uint64 {
	if n := t.Bits(); n < 64 {
		return uint64(c) & (1<<uint(n) - 1)
	}
	return uint64(c)
}

// pow2Seq builds in q the power-of-two rewrite of op x, c, if there is
// one.
func pow2Seq(q *seq, x *ir.Value, op ir.Op, c int64) bool {
	t := x.Type
	n := t.Bits()
	switch op {
	case ir.OpMul:
		if c == -1 {
			q.op(ir.OpNeg, x)
			return true
		}
		k := log2(word(t, c))
		if k < 1 {
			return false
		}
		q.op(ir.OpShl, x, q.c(t, int64(k)))
		return true
	case ir.OpDivU:
		k := log2(word(t, c))
		if k < 1 {
			return false
		}
		if n == 64 {
			q.op(ir.OpShrU, x, q.c(t, int64(k)))
			return true
		}
		sh := q.op(ir.OpShrS, x, q.c(t, int64(k)))
		q.op(ir.OpAnd, sh, q.c(t, int64(1)<<uint(n-k)-1))
		return true
	case ir.OpRemU:
		k := log2(word(t, c))
		if k < 1 {
			return false
		}
		q.op(ir.OpAnd, x, q.c(t, int64(1)<<uint(k)-1))
		return true
	case ir.OpDivS, ir.OpRemS:
		// |c| = 2^k with 1 ≤ k ≤ n-2: MIN (c = -2^(n-1)) is left alone.
		neg := c < 0
		a := uint64(c)
		if neg {
			a = -a
		}
		k := log2(a)
		if k < 1 || k > n-2 {
			return false
		}
		mask := int64(1)<<uint(k) - 1
		if nonNegative(x, 8) {
			if op == ir.OpRemS { // the sign of x: the divisor's does not matter
				q.op(ir.OpAnd, x, q.c(t, mask))
				return true
			}
			d := q.op(ir.OpShrS, x, q.c(t, int64(k)))
			if neg {
				q.op(ir.OpNeg, d)
			}
			return true
		}
		// bias = 2^k-1 when x < 0, else 0; x+bias cannot wrap (x < 0).
		sign := q.op(ir.OpShrS, x, q.c(t, int64(n-1)))
		bias := q.op(ir.OpAnd, sign, q.c(t, mask))
		biased := q.op(ir.OpAdd, x, bias)
		if op == ir.OpRemS {
			// x - trunc(x/2^k)·2^k = ((x+bias) & mask) - bias.
			low := q.op(ir.OpAnd, biased, q.c(t, mask))
			q.op(ir.OpSub, low, bias)
			return true
		}
		d := q.op(ir.OpShrS, biased, q.c(t, int64(k)))
		if neg {
			q.op(ir.OpNeg, d)
		}
		return true
	}
	return false
}

// nonNegative reports whether v, of an integer type, is known to be
// non-negative when read as signed, looking at most depth definitions
// deep.
func nonNegative(v *ir.Value, depth int) bool {
	d := v.Def
	if d == nil || depth == 0 {
		return false
	}
	n := v.Type.Bits()
	switch d.Op {
	case ir.OpConst:
		return d.Lit.Kind == ir.LitInt && d.Lit.Int >= 0
	case ir.OpZext:
		return d.Args[0].Type.Bits() < n || d.Args[0].Type == ir.Bool
	case ir.OpAnd:
		return nonNegative(d.Args[0], depth-1) || nonNegative(d.Args[1], depth-1)
	case ir.OpOr, ir.OpXor:
		return nonNegative(d.Args[0], depth-1) && nonNegative(d.Args[1], depth-1)
	case ir.OpShrU:
		k, ok := constInt(d.Args[1])
		return ok && k&63 >= 1
	case ir.OpShrS, ir.OpRemS:
		return nonNegative(d.Args[0], depth-1)
	case ir.OpDivS:
		return nonNegative(d.Args[0], depth-1) && nonNegative(d.Args[1], depth-1)
	case ir.OpRemU:
		// the remainder is below the divisor
		return nonNegative(d.Args[1], depth-1)
	case ir.OpDivU:
		c, ok := constInt(d.Args[1])
		return ok && word(v.Type, c) >= 2
	}
	return false
}

// magicSeq builds in q the magic-number rewrite of a division or
// remainder of an i8, i16 or i32 x by the constant c, if there is one.
// It widens x to i64, where the product of x and the magic number fits.
func magicSeq(q *seq, x *ir.Value, op ir.Op, c int64) bool {
	t := x.Type
	n := uint(t.Bits())
	if n >= 64 {
		return false
	}
	switch op {
	case ir.OpDivU, ir.OpRemU:
		d := word(t, c)
		if d < 2 || log2(d) >= 0 {
			return false
		}
		m, sh, ok := magic(d, 1<<n-1, 64)
		if !ok {
			return false
		}
		wide := q.cast(ir.OpZext, ir.I64, x)
		quo := q.op(ir.OpShrU, q.op(ir.OpMul, wide, q.c(ir.I64, int64(m))), q.c(ir.I64, int64(sh)))
		if op == ir.OpRemU {
			quo = q.op(ir.OpSub, wide, q.op(ir.OpMul, quo, q.c(ir.I64, int64(d))))
		}
		q.cast(ir.OpTrunc, t, quo)
		return true
	case ir.OpDivS, ir.OpRemS:
		// d = |c|, 3 ≤ d < 2^(n-1), not a power of two. The quotient of
		// |x| (at most 2^(n-1)) by d is floor(|x|·m / 2^sh). For x < 0,
		// x·m/2^sh = -(|x|·m/2^sh) is never an integer, so its floor
		// (an arithmetic shift) is -floor(|x|/d) - 1: adding 1 for
		// x < 0 truncates toward zero.
		neg := c < 0
		d := uint64(c)
		if neg {
			d = -d
		}
		if d < 3 || d >= 1<<(n-1) || log2(d) >= 0 {
			return false
		}
		m, sh, ok := magic(d, 1<<(n-1), 63) // |x|·m < 2^63: the signed product does not wrap
		if !ok {
			return false
		}
		wide := q.cast(ir.OpSext, ir.I64, x)
		prod := q.op(ir.OpShrS, q.op(ir.OpMul, wide, q.c(ir.I64, int64(m))), q.c(ir.I64, int64(sh)))
		// prod - (x >> 63): adds 1 when x < 0.
		quo := q.op(ir.OpSub, prod, q.op(ir.OpShrS, wide, q.c(ir.I64, 63)))
		if op == ir.OpRemS {
			quo = q.op(ir.OpSub, wide, q.op(ir.OpMul, quo, q.c(ir.I64, int64(d))))
		} else if neg {
			quo = q.op(ir.OpNeg, quo)
		}
		q.cast(ir.OpTrunc, t, quo)
		return true
	}
	return false
}

// magic returns a magic number m and shift sh such that
// floor(x·m / 2^sh) = floor(x/d) for every 0 ≤ x ≤ maxX, with x·m below
// 2^limit (limit ≤ 64), for d ≥ 2 not a power of two. It takes the
// smallest sh for which m = ceil(2^sh / d) has an error e = m·d - 2^sh
// with e·maxX < 2^sh: then x·m/2^sh = x/d + x·e/(d·2^sh), whose second
// term is below 1/d and so never carries floor(x/d) to the next integer
// (Granlund and Montgomery's condition). m·d is never exactly 2^sh (d is
// no power of two), so x·m/2^sh is never an integer for x ≥ 1.
func magic(d, maxX uint64, limit uint) (m uint64, sh uint, ok bool) {
	for sh = uint(bits.Len64(d)); sh < 64; sh++ {
		p := uint64(1) << sh
		m = p / d
		if p%d != 0 {
			m++
		}
		e := m*d - p
		hi, lo := bits.Mul64(e, maxX)
		if hi == 0 && lo < p {
			hi, lo = bits.Mul64(m, maxX)
			return m, sh, hi == 0 && (limit == 64 || lo < uint64(1)<<limit)
		}
	}
	return 0, 0, false
}
