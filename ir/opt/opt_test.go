package opt_test

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/genesis-toolchain/genesis/diag"
	"github.com/genesis-toolchain/genesis/ir"
	"github.com/genesis-toolchain/genesis/ir/opt"
)

var intTypes = []ir.Type{ir.I8, ir.I16, ir.I32, ir.I64}

// gen builds random functions of integer arithmetic with the Builder:
// every op of the subset, vars, if, switch, bounded loops, blocks with
// breaks, early returns and calls to small helpers.
type gen struct {
	r       *rand.Rand
	b       *ir.Builder
	vars    []*ir.Local
	helpers []*ir.Func
	depth   int
}

// pool holds the values visible at a point, by type.
type pool map[ir.Type][]*ir.Value

// scope returns a copy of p for a nested region: values added to it are
// not visible in p.
func (p pool) scope() pool {
	q := pool{}
	for t, vs := range p {
		q[t] = vs[:len(vs):len(vs)]
	}
	return q
}

func (p pool) add(v *ir.Value) { p[v.Type] = append(p[v.Type], v) }

func (g *gen) intType() ir.Type { return intTypes[g.r.IntN(len(intTypes))] }

var interesting = []int64{0, 1, 2, 3, -1, -2, 7, 8, 63, 64, 65, 127, 128, 255, 1 << 31, -1 << 63, 1<<63 - 1}

func (g *gen) constant(t ir.Type) *ir.Value {
	if g.r.IntN(2) == 0 {
		return g.b.Const(t, interesting[g.r.IntN(len(interesting))])
	}
	return g.b.Const(t, g.r.Int64())
}

// val returns a value of type t: one of the pool's, often, or a new
// constant, cast or comparison.
func (g *gen) val(p pool, t ir.Type) *ir.Value {
	if vs := p[t]; len(vs) > 0 && g.r.IntN(4) != 0 {
		return vs[g.r.IntN(len(vs))]
	}
	if t == ir.Bool {
		u := g.intType()
		ops := []ir.Op{ir.OpEq, ir.OpNe, ir.OpLtS, ir.OpLtU, ir.OpLeS, ir.OpLeU, ir.OpGtS, ir.OpGtU, ir.OpGeS, ir.OpGeU}
		v := g.b.Op(ops[g.r.IntN(len(ops))], g.val(p, u), g.val(p, u))
		p.add(v)
		return v
	}
	return g.constant(t)
}

var binOps = []ir.Op{ir.OpAdd, ir.OpSub, ir.OpMul, ir.OpDivS, ir.OpDivU, ir.OpRemS, ir.OpRemU,
	ir.OpAnd, ir.OpOr, ir.OpXor, ir.OpShl, ir.OpShrU, ir.OpShrS}

func (g *gen) stmts(p pool, n int) {
	for range n {
		if g.b.Terminated() {
			return
		}
		g.stmt(p)
	}
}

func (g *gen) stmt(p pool) {
	b := g.b
	nested := g.depth < 3
	switch k := g.r.IntN(20); {
	case k < 6:
		t := g.intType()
		op := binOps[g.r.IntN(len(binOps))]
		p.add(b.Op(op, g.val(p, t), g.val(p, t)))
	case k < 7:
		t := g.intType()
		ops := []ir.Op{ir.OpNeg, ir.OpNot}
		p.add(b.Op(ops[g.r.IntN(2)], g.val(p, t)))
	case k < 8:
		p.add(b.Op(ir.OpNot, g.val(p, ir.Bool)))
	case k < 9:
		from, to := g.intType(), g.intType()
		x := g.val(p, from)
		switch {
		case to.Bits() > from.Bits():
			op := ir.OpSext
			if g.r.IntN(2) == 0 {
				op = ir.OpZext
			}
			p.add(b.Cast(op, to, x))
		case to.Bits() < from.Bits():
			p.add(b.Cast(ir.OpTrunc, to, x))
		default:
			p.add(b.Cast(ir.OpZext, ir.I64, g.val(p, ir.Bool)))
		}
	case k < 11:
		l := g.vars[g.r.IntN(len(g.vars))]
		p.add(b.Get(l))
	case k < 13:
		l := g.vars[g.r.IntN(len(g.vars))]
		b.Set(l, g.val(p, l.Type))
	case k < 14 && nested:
		t := g.intType()
		c := g.val(p, ir.Bool)
		arm := func() {
			q := p.scope()
			g.stmts(q, g.r.IntN(4))
			if !b.Terminated() {
				b.Yield(g.val(q, t))
			}
		}
		g.depth++
		p.add(b.If(c, []ir.Type{t}, arm, arm)[0])
		g.depth--
	case k < 15 && nested:
		g.depth++
		n := b.Const(ir.I64, int64(g.r.IntN(5)))
		zero, one := b.Const(ir.I64, 0), b.Const(ir.I64, 1)
		t := g.intType()
		init := g.val(p, t)
		res := b.Loop("", []*ir.Value{zero, init}, []ir.Type{t}, func(label string, ps []*ir.Value) {
			q := p.scope()
			q.add(ps[0])
			q.add(ps[1])
			done := b.Op(ir.OpGeS, ps[0], n)
			b.If(done, nil, func() { b.Break(label, ps[1]) }, nil)
			g.stmts(q, 1+g.r.IntN(4))
			if !b.Terminated() {
				next := g.val(q, t)
				b.Continue(label, b.Op(ir.OpAdd, ps[0], one), next)
			}
		})
		p.add(res[0])
		g.depth--
	case k < 16 && nested:
		g.depth++
		t := g.intType()
		res := b.Block("", []ir.Type{t}, func(label string) {
			q := p.scope()
			g.stmts(q, g.r.IntN(3))
			if b.Terminated() {
				return
			}
			c, v := g.val(q, ir.Bool), g.val(q, t)
			b.If(c, nil, func() { b.Break(label, v) }, nil)
			g.stmts(q, g.r.IntN(3))
			if !b.Terminated() {
				b.Yield(g.val(q, t))
			}
		})
		p.add(res[0])
		g.depth--
	case k < 17 && nested:
		g.depth++
		x := g.val(p, g.intType())
		t := g.intType()
		arm := func() {
			q := p.scope()
			g.stmts(q, g.r.IntN(3))
			if !b.Terminated() {
				b.Yield(g.val(q, t))
			}
		}
		var cases []ir.Case
		used := map[int64]bool{}
		for range 1 + g.r.IntN(3) {
			v := ir.Normalize(x.Type, interesting[g.r.IntN(len(interesting))])
			if !used[v] {
				used[v] = true
				cases = append(cases, ir.Case{Values: []int64{v}, Body: arm})
			}
		}
		p.add(b.Switch(x, []ir.Type{t}, cases, arm)[0])
		g.depth--
	case k < 18 && len(g.helpers) > 0:
		h := g.helpers[g.r.IntN(len(g.helpers))]
		args := make([]*ir.Value, len(h.Params))
		for i, q := range h.Params {
			args[i] = g.val(p, q.Type)
		}
		for _, v := range b.Call(h, args...) {
			p.add(v)
		}
	case k < 19 && nested:
		c := g.val(p, ir.Bool)
		g.depth++
		b.If(c, nil, func() {
			b.Return(g.val(p.scope(), b.Func().Results[0]))
		}, nil)
		g.depth--
	default:
		// A constant-folding opportunity: an op on constants.
		t := g.intType()
		op := binOps[g.r.IntN(len(binOps))]
		p.add(b.Op(op, g.constant(t), g.constant(t)))
	}
}

// function adds a random function with params i64, i32, i8 returning
// i64 to m.
func (g *gen) function(m *ir.Module, name string, size int) *ir.Func {
	f := m.NewFunc(name, []ir.Type{ir.I64, ir.I32, ir.I8}, []ir.Type{ir.I64}, diag.Pos{File: "gen", Line: 1, Col: 1})
	g.b = ir.NewBuilder(f)
	g.vars = []*ir.Local{
		f.NewVar("a", ir.I64, diag.Pos{}),
		f.NewVar("b", ir.I32, diag.Pos{}),
		f.NewVar("c", ir.I8, diag.Pos{}),
	}
	p := pool{}
	for _, v := range f.Params {
		p.add(v)
	}
	g.stmts(p, size)
	if !g.b.Terminated() {
		g.b.Return(g.val(p, ir.I64))
	}
	return f
}

// module returns a random module: two helpers (the second may call the
// first) and @main, which may call both.
func (g *gen) module() *ir.Module {
	m := ir.NewModule()
	g.helpers = nil
	h1 := g.function(m, "h1", 3)
	g.helpers = []*ir.Func{h1}
	h2 := g.function(m, "h2", 5)
	g.helpers = append(g.helpers, h2)
	g.function(m, "main", 12)
	return m
}

// result is the outcome of one evaluation.
type result struct {
	vals []uint64
	err  error
}

func (r result) String() string {
	if r.err != nil {
		return "fault " + r.err.Error()
	}
	return fmt.Sprint(r.vals)
}

func run(m *ir.Module, args []uint64) result {
	e := &machine{m: m}
	vals, err := e.call(m.Func("main"), args)
	return result{vals, err}
}

// TestRandomPrograms optimizes random integer programs at -O1 and -O2,
// verifying the module after every pass, and checks with the reference
// evaluator that every program computes the same results, and faults in
// the same way, before and after.
func TestRandomPrograms(t *testing.T) {
	n := 600
	if testing.Short() {
		n = 100
	}
	inputs := [][]uint64{{0, 0, 0}, {1, 1, 1}, {^uint64(0), 0xFFFFFFFF, 0xFF}, {1 << 63, 1 << 31, 0x80}, {7, 3, 2}, {100, 0xFFFFFFF9, 0x05}}
	faults := 0
	for seed := range n {
		g := &gen{r: rand.New(rand.NewPCG(uint64(seed), 42))}
		m := g.module()
		src, want, f := evalGenerated(t, seed, m, inputs)
		faults += f
		for _, level := range []int{1, 2} {
			m2, diags := ir.Parse("gen.ir", []byte(src))
			if diags.HasErrors() {
				t.Fatalf("seed %d: %s", seed, diags.Render(nil))
			}
			if err := opt.Run(m2, level, &opt.Hooks{VerifyEach: true}); err != nil {
				t.Fatalf("seed %d -O%d: %v\nbefore:\n%s\nafter:\n%s", seed, level, err, src, ir.Print(m2))
			}
			for i, in := range inputs {
				if got := run(m2, in); got.String() != want[i].String() {
					t.Fatalf("seed %d -O%d, input %v: got %s, want %s\nbefore:\n%s\nafter:\n%s",
						seed, level, in, got, want[i], src, ir.Print(m2))
				}
			}
		}
	}
	if faults == 0 {
		t.Error("no program faulted: the generator does not exercise division by zero")
	}
	t.Logf("%d programs, %d inputs each, %d faulting runs", n, len(inputs), faults)
}

// TestEval checks constant folding of the corner cases against the
// reference evaluator, for every binary op at every width on interesting
// operands.
func TestEval(t *testing.T) {
	for _, ty := range intTypes {
		for _, op := range append(binOps, ir.OpEq, ir.OpNe, ir.OpLtS, ir.OpLtU, ir.OpLeS, ir.OpLeU, ir.OpGtS, ir.OpGtU, ir.OpGeS, ir.OpGeU) {
			for _, a := range interesting {
				for _, c := range interesting {
					m := ir.NewModule()
					rt := ty
					if op >= ir.OpEq && op <= ir.OpGeU {
						rt = ir.Bool
					}
					f := m.NewFunc("main", nil, []ir.Type{rt}, diag.Pos{})
					b := ir.NewBuilder(f)
					b.Return(b.Op(op, b.Const(ty, a), b.Const(ty, c)))
					want := run(m, nil)
					if err := opt.Run(m, opt.MaxLevel, nil); err != nil {
						t.Fatal(err)
					}
					if got := run(m, nil); got.String() != want.String() {
						t.Fatalf("%s %s %d, %d: folded to %s, want %s", op, ty, a, c, got, want)
					}
					folded := len(f.Body.Instrs) == 2 && f.Body.Instrs[0].Op == ir.OpConst
					if folded == (want.err != nil) {
						t.Fatalf("%s %s %d, %d: folded %v, fault %v:\n%s", op, ty, a, c, folded, want.err, ir.Print(m))
					}
				}
			}
		}
	}
}

func fibOf(n uint64) uint64 {
	if n < 2 {
		return n
	}
	return fibOf(n-1) + fibOf(n-2)
}

// evalGenerated verifies the generated module m (of seed) and runs it on
// each of inputs: its printed form, the results, and how many of them
// faulted.
func evalGenerated(t *testing.T, seed int, m *ir.Module, inputs [][]uint64) (string, []result, int) {
	t.Helper()
	if diags := ir.Verify(m); len(diags) > 0 {
		t.Fatalf("seed %d: the generated module does not verify:\n%s\n%s", seed, diags.Render(nil), ir.Print(m))
	}
	var want []result
	faults := 0
	for _, in := range inputs {
		r := run(m, in)
		if r.err == errSteps {
			t.Fatalf("seed %d: step limit", seed)
		}
		if r.err != nil {
			faults++
		}
		want = append(want, r)
	}
	return ir.Print(m), want, faults
}
