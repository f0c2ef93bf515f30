package opt

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/genesis-toolchain/genesis/diag"
	"github.com/genesis-toolchain/genesis/ir"
)

// allRewrites is a cost table under which every rewrite strength can
// build pays: divisions, remainders and multiplications cost far more
// than any sequence replacing them. The tests use it to check every
// sequence, including those the Forge table does not apply.
var allRewrites = costTable{
	op: func(op ir.Op, t ir.Type) int {
		switch op {
		case ir.OpDivS, ir.OpDivU, ir.OpRemS, ir.OpRemU:
			return 1000
		case ir.OpMul:
			return 100
		}
		return 1
	},
	cast: func(ir.Op, ir.Type, ir.Type) int { return 1 },
}

// evalLine evaluates the straight-line body of f, whose one parameter is
// x, written from docs/ir.md independently of constfold: values are
// kept sign-extended to int64 at their width.
func evalLine(t *testing.T, f *ir.Func, x int64) int64 {
	maxID := f.Params[0].ID
	for _, in := range f.Body.Instrs {
		for _, r := range in.Results {
			maxID = max(maxID, r.ID)
		}
	}
	vals := make([]int64, maxID+1) // by value ID, unique in f
	vals[f.Params[0].ID] = x
	for _, in := range f.Body.Instrs {
		a := func(i int) int64 { return vals[in.Args[i].ID] }
		var r int64
		switch in.Op {
		case ir.OpReturn:
			return a(0)
		case ir.OpConst:
			r = in.Lit.Int
		case ir.OpAdd:
			r = a(0) + a(1)
		case ir.OpSub:
			r = a(0) - a(1)
		case ir.OpMul:
			r = a(0) * a(1)
		case ir.OpNeg:
			r = -a(0)
		case ir.OpAnd:
			r = a(0) & a(1)
		case ir.OpShl:
			r = a(0) << (uint64(a(1)) & 63)
		case ir.OpShrS:
			r = a(0) >> (uint64(a(1)) & 63)
		case ir.OpShrU:
			r = int64(uint64(a(0)) & widthMask(in.Args[0].Type) >> (uint64(a(1)) & 63))
		case ir.OpSext, ir.OpTrunc:
			r = a(0)
		case ir.OpZext:
			r = int64(uint64(a(0)) & widthMask(in.Args[0].Type))
		default:
			t.Fatalf("evalLine: unexpected %s", in.Op)
		}
		vals[in.Results[0].ID] = ir.Normalize(in.Results[0].Type, r)
	}
	t.Fatal("evalLine: no return")
	return 0
}

func widthMask(t ir.Type) uint64 {
	if n := t.Bits(); n < 64 {
		return 1<<uint(n) - 1
	}
	return math.MaxUint64
}

// want computes op x, c at the width of ty with Go's arithmetic.
func want(ty ir.Type, op ir.Op, x, c int64) int64 {
	m := widthMask(ty)
	ux, uc := uint64(x)&m, uint64(c)&m
	var r int64
	switch op {
	case ir.OpMul:
		r = x * c
	case ir.OpDivU:
		r = int64(ux / uc)
	case ir.OpRemU:
		r = int64(ux % uc)
	case ir.OpDivS:
		if c == -1 {
			r = -x
		} else {
			r = x / c
		}
	case ir.OpRemS:
		if c == -1 {
			r = 0
		} else {
			r = x % c
		}
	}
	return ir.Normalize(ty, r)
}

// reduced returns the function op x, c of type ty after strength with
// costs, and whether it was rewritten.
func reduced(t *testing.T, ty ir.Type, op ir.Op, c int64, costs *costTable) (*ir.Module, bool) {
	m := ir.NewModule()
	f := m.NewFunc("f", []ir.Type{ty}, []ir.Type{ty}, diag.Pos{})
	b := ir.NewBuilder(f)
	b.Return(b.Op(op, f.Params[0], b.Const(ty, c)))
	strengthWith(m, costs)
	if ds := ir.Verify(m); len(ds) > 0 {
		t.Fatalf("%s %s by %d: does not verify:\n%s\n%s", op, ty, c, ds.Render(nil), ir.Print(m))
	}
	for _, in := range f.Body.Instrs {
		if in.Op == op {
			return m, false
		}
	}
	return m, true
}

// divisors returns the constants tried for type ty: every value for i8;
// edge values, powers of two and their negations, small numbers and
// random ones for the wider types.
func divisors(ty ir.Type, r *rand.Rand) []int64 {
	n := ty.Bits()
	if n == 8 {
		var out []int64
		for c := -128; c < 128; c++ {
			out = append(out, int64(c))
		}
		return out
	}
	min, max := int64(-1)<<(n-1), int64(1)<<(n-1)-1
	out := []int64{min, min + 1, max, max - 1, -1, 0, 1, 2, 3, 5, 6, 7, 9, 10, 11, 13, 25, 60, 100, 641, 1000, 6700417 % max, -3, -7, -10, -1000}
	for k := 0; k < n; k++ {
		out = append(out, ir.Normalize(ty, int64(1)<<k), ir.Normalize(ty, -(int64(1)<<k)), ir.Normalize(ty, int64(1)<<k+1), ir.Normalize(ty, int64(1)<<k-1))
	}
	for range 40 {
		out = append(out, ir.Normalize(ty, r.Int64()>>r.IntN(n)))
	}
	return out
}

// operands returns the dividends tried for type ty: every value for i8
// and i16; edge values, values near multiples of c and random ones for
// the wider types.
func operands(ty ir.Type, c int64, r *rand.Rand) []int64 {
	n := ty.Bits()
	if n <= 16 {
		var out []int64
		for x := int64(-1) << (n - 1); x < int64(1)<<(n-1); x++ {
			out = append(out, x)
		}
		return out
	}
	min, max := int64(-1)<<(n-1), int64(1)<<(n-1)-1
	out := []int64{min, min + 1, max, max - 1, -1, 0, 1, 2}
	for _, base := range []int64{0, min, max, c, -c, max / c * c, min / c * c} {
		for d := int64(-2); d <= 2; d++ {
			out = append(out, ir.Normalize(ty, base+d), ir.Normalize(ty, base*2+d))
		}
	}
	for range 300 {
		out = append(out, ir.Normalize(ty, r.Int64()>>r.IntN(64)))
	}
	return out
}

// TestStrengthExact checks every rewrite strength can build, under a
// table that applies them all and under Forge's, against Go's
// arithmetic: for every op, every integer type, the constants of
// divisors and the operands of operands (exhaustive for i8 and i16).
func TestStrengthExact(t *testing.T) {
	r := rand.New(rand.NewPCG(17, 17))
	rewritten := map[string]int{}
	for _, ty := range []ir.Type{ir.I8, ir.I16, ir.I32, ir.I64} {
		cs := divisors(ty, r)
		if ty == ir.I16 {
			cs = cs[:60] // every operand is tried: the edge values and powers of two
		}
		for _, op := range []ir.Op{ir.OpMul, ir.OpDivU, ir.OpRemU, ir.OpDivS, ir.OpRemS} {
			for _, c := range cs {
				if c == 0 && op != ir.OpMul {
					continue
				}
				for _, costs := range []*costTable{&allRewrites, &forgeCosts} {
					m, ok := reduced(t, ty, op, c, costs)
					if !ok {
						continue
					}
					rewritten[fmt.Sprintf("%s %s", op, ty)]++
					for _, x := range operands(ty, c, r) {
						if got, w := evalLine(t, m.Funcs[0], x), want(ty, op, x, c); got != w {
							t.Fatalf("%s %s %d, %d: got %d, want %d\n%s", op, ty, x, c, got, w, ir.Print(m))
						}
					}
				}
			}
		}
	}
	t.Logf("rewritten: %v", rewritten)
	// Every op is rewritten at every width for some constant.
	for _, ty := range []ir.Type{ir.I8, ir.I16, ir.I32, ir.I64} {
		for _, op := range []ir.Op{ir.OpMul, ir.OpDivU, ir.OpRemU, ir.OpDivS, ir.OpRemS} {
			if rewritten[fmt.Sprintf("%s %s", op, ty)] == 0 {
				t.Errorf("%s %s: never rewritten", op, ty)
			}
		}
	}
}

// TestStrengthForge pins what the Forge table rewrites: the power-of-two
// cases of mul, div.u and rem.u, the unsigned division of narrow types
// by a magic number, and signed division of non-negative operands; and
// what it keeps: signed division of any operand, and every i64 division
// by a constant that is not a power of two.
func TestStrengthForge(t *testing.T) {
	for _, tc := range []struct {
		ty   ir.Type
		op   ir.Op
		c    int64
		want bool
	}{
		{ir.I64, ir.OpMul, 8, true},
		{ir.I64, ir.OpMul, -1, true},
		{ir.I64, ir.OpMul, 3, false},
		{ir.I32, ir.OpMul, 1024, true},
		{ir.I64, ir.OpDivU, 64, true},
		{ir.I64, ir.OpRemU, 64, true},
		{ir.I64, ir.OpDivU, -1 << 63, true},
		{ir.I8, ir.OpDivU, 4, true},
		{ir.I16, ir.OpRemU, 4, true},
		{ir.I64, ir.OpDivU, 10, false}, // no high multiply on Forge
		{ir.I64, ir.OpDivS, 8, false},  // the fix-up costs more than DIVS
		{ir.I64, ir.OpRemS, 8, false},
		{ir.I32, ir.OpDivS, 7, false},
		{ir.I16, ir.OpDivU, 10, true}, // magic: 8 ticks against 9
		{ir.I16, ir.OpRemU, 10, false},
	} {
		if _, got := reduced(t, tc.ty, tc.op, tc.c, &forgeCosts); got != tc.want {
			t.Errorf("%s %s by %d: rewritten %v, want %v", tc.op, tc.ty, tc.c, got, tc.want)
		}
	}
}

// TestStrengthNonNegative checks that a signed division of a value
// known to be non-negative becomes a shift and a mask under Forge's
// table, and stays exact.
func TestStrengthNonNegative(t *testing.T) {
	for _, op := range []ir.Op{ir.OpDivS, ir.OpRemS} {
		for _, ty := range []ir.Type{ir.I16, ir.I64} {
			m := ir.NewModule()
			f := m.NewFunc("f", []ir.Type{ty}, []ir.Type{ty}, diag.Pos{})
			b := ir.NewBuilder(f)
			x := b.Op(ir.OpAnd, f.Params[0], b.Const(ty, 0x3fff))
			b.Return(b.Op(op, x, b.Const(ty, 16)))
			strengthWith(m, &forgeCosts)
			for _, in := range f.Body.Instrs {
				if in.Op == op {
					t.Fatalf("%s %s of a masked value not rewritten:\n%s", op, ty, ir.Print(m))
				}
			}
			for _, v := range []int64{0, 1, 15, 16, 17, 0x3fff, -1, -17, 12345} {
				xm := ir.Normalize(ty, v&0x3fff)
				if got, w := evalLine(t, f, v), want(ty, op, xm, 16); got != w {
					t.Fatalf("%s %s %d: got %d, want %d\n%s", op, ty, v, got, w, ir.Print(m))
				}
			}
		}
	}
}
