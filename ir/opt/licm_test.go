package opt_test

import (
	"math/rand/v2"
	"testing"

	"github.com/genesis-toolchain/genesis/diag"
	"github.com/genesis-toolchain/genesis/ir"
	"github.com/genesis-toolchain/genesis/ir/opt"
)

// faultLoop builds a random @main(x, y, n: i64) -> i64 that is one loop
// whose body mixes, in random order, divisions and remainders (by
// parameters, which may be zero, and by constants, zero included) that
// are loop-invariant or not, the loop's exit test, ifs holding
// divisions, and an inner loop holding one: the shapes where hoisting a
// division decides whether, and where, the program faults.
func faultLoop(r *rand.Rand) *ir.Module {
	m := ir.NewModule()
	f := m.NewFunc("main", []ir.Type{ir.I64, ir.I64, ir.I64}, []ir.Type{ir.I64}, diag.Pos{File: "f", Line: 1, Col: 1})
	b := ir.NewBuilder(f)
	x, y, n := f.Params[0], f.Params[1], f.Params[2]
	zero, one := b.Const(ir.I64, 0), b.Const(ir.I64, 1)
	divOps := []ir.Op{ir.OpDivS, ir.OpDivU, ir.OpRemS, ir.OpRemU}
	line := 2
	pos := func() diag.Pos { line++; return diag.Pos{File: "f", Line: line, Col: 1} }
	res := b.Loop("", []*ir.Value{zero, zero}, []ir.Type{ir.I64}, func(label string, ps []*ir.Value) {
		i, acc := ps[0], ps[1]
		operand := func() *ir.Value {
			switch r.IntN(6) {
			case 0:
				return x
			case 1:
				return y
			case 2:
				return i
			case 3:
				return b.Const(ir.I64, int64(r.IntN(3))) // 0, 1 or 2
			case 4:
				return b.Op(ir.OpMul, x, y)
			}
			return b.Op(ir.OpSub, y, one)
		}
		div := func() *ir.Value {
			b.SetPos(pos())
			return b.Op(divOps[r.IntN(len(divOps))], operand(), operand())
		}
		exit := r.IntN(5) // the exit test's place among the statements
		for s := range 5 {
			if s == exit {
				b.SetPos(pos())
				done := b.Op(ir.OpGeU, i, n)
				b.If(done, nil, func() { b.Break(label, acc) }, nil)
			}
			switch r.IntN(4) {
			case 0, 1:
				acc = b.Op(ir.OpAdd, acc, div())
			case 2:
				c := b.Op(ir.OpLtU, operand(), operand())
				acc = b.If(c, []ir.Type{ir.I64}, func() { b.Yield(div()) }, func() { b.Yield(acc) })[0]
			case 3:
				acc = b.Loop("", []*ir.Value{zero, acc}, []ir.Type{ir.I64}, func(inner string, qs []*ir.Value) {
					end := b.Op(ir.OpGeU, qs[0], b.Const(ir.I64, int64(r.IntN(3))))
					b.If(end, nil, func() { b.Break(inner, qs[1]) }, nil)
					b.Continue(inner, b.Op(ir.OpAdd, qs[0], one), b.Op(ir.OpXor, qs[1], div()))
				})[0]
			}
		}
		b.Continue(label, b.Op(ir.OpAdd, i, one), acc)
	})
	b.Return(res[0])
	return m
}

// TestLICMFaults checks, on random loops of divisions, that -O2 (licm
// hoisting divisions) computes the same results and faults in the same
// cases as the unoptimized program, and that the cases do exercise
// hoisting a division that may fault.
func TestLICMFaults(t *testing.T) {
	n := 400
	if testing.Short() {
		n = 100
	}
	inputs := [][]uint64{{0, 0, 0}, {7, 0, 3}, {0, 5, 3}, {9, 2, 0}, {100, 3, 4}, {^uint64(0), 1, 2}, {1 << 63, ^uint64(0), 5}}
	hoisted, faults := 0, 0
	for seed := range n {
		m := faultLoop(rand.New(rand.NewPCG(uint64(seed), 17)))
		src, want, f := evalGenerated(t, seed, m, inputs)
		faults += f
		if err := opt.Run(m, opt.MaxLevel, &opt.Hooks{VerifyEach: true}); err != nil {
			t.Fatalf("seed %d: %v\n%s", seed, err, src)
		}
		for i, in := range inputs {
			if got := run(m, in); got.String() != want[i].String() {
				t.Fatalf("seed %d, input %v: got %s, want %s\nbefore:\n%s\nafter:\n%s", seed, in, got, want[i], src, ir.Print(m))
			}
		}
		for _, in := range m.Func("main").Body.Instrs {
			if (in.Op == ir.OpDivS || in.Op == ir.OpDivU || in.Op == ir.OpRemS || in.Op == ir.OpRemU) && !constDivisor(in) {
				hoisted++
				break
			}
		}
	}
	if hoisted < n/10 || faults == 0 {
		t.Errorf("%d of %d programs had a division that may fault hoisted, %d runs faulted: the generator misses the cases", hoisted, n, faults)
	}
	t.Logf("%d programs, %d with a faulting division hoisted, %d faulting runs", n, hoisted, faults)
}

func constDivisor(in *ir.Instr) bool {
	d := in.Args[1].Def
	return d != nil && d.Op == ir.OpConst
}
