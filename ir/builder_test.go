package ir_test

import (
	"math"
	"strings"
	"testing"

	"github.com/genesis-toolchain/genesis/diag"
	"github.com/genesis-toolchain/genesis/ir"
)

func at(line, col int) diag.Pos { return diag.Pos{File: "fact.gen", Line: line, Col: col} }

// roundTrip checks that m verifies, and that its printed form parses and
// prints identically; it returns the printed form.
func roundTrip(t *testing.T, m *ir.Module) string {
	t.Helper()
	if diags := ir.Verify(m); len(diags) > 0 {
		t.Fatalf("Verify:\n%s\n%s", diags, ir.Print(m))
	}
	text := ir.Print(m)
	m2, diags := ir.Parse("printed.ir", []byte(text))
	if diags.HasErrors() {
		t.Fatalf("Parse:\n%s\n%s", diags, text)
	}
	if diags := ir.Verify(m2); len(diags) > 0 {
		t.Fatalf("Verify after parse:\n%s", diags)
	}
	if again := ir.Print(m2); again != text {
		t.Fatalf("print → parse → print differs:\n%s\n---\n%s", text, again)
	}
	return text
}

// TestBuilderFactorial builds the iterative and recursive factorials
// with the Builder, the way a frontend would.
func TestBuilderFactorial(t *testing.T) {
	m := ir.NewModule()
	fact := m.NewFunc("fact", []ir.Type{ir.I64}, []ir.Type{ir.I64}, at(1, 1))
	n := fact.Params[0]
	n.Name = "n"
	b := ir.NewBuilder(fact)
	b.SetPos(at(2, 3))
	one := b.Const(ir.I64, 1)
	small := b.Op(ir.OpLeU, n, one)
	r := b.If(small, []ir.Type{ir.I64},
		func() { b.Yield(one) },
		func() {
			m1 := b.Op(ir.OpSub, n, one)
			f := b.Call(fact, m1)[0]
			b.Yield(b.Op(ir.OpMul, n, f))
		})
	b.Return(r...)

	loop := m.NewFunc("fact_loop", []ir.Type{ir.I64}, []ir.Type{ir.I64}, at(10, 1))
	b = ir.NewBuilder(loop)
	b.SetPos(at(11, 3))
	one = b.Const(ir.I64, 1)
	res := b.Loop("", []*ir.Value{one, one}, []ir.Type{ir.I64}, func(label string, p []*ir.Value) {
		i, acc := p[0], p[1]
		done := b.Op(ir.OpGtU, i, loop.Params[0])
		b.If(done, nil, func() { b.Break(label, acc) }, nil)
		b.Continue(label, b.Op(ir.OpAdd, i, one), b.Op(ir.OpMul, acc, i))
	})
	b.Return(res...)

	got := roundTrip(t, m)
	want := `func @fact(%n: i64) -> i64 @fact.gen:1:1 {
  %0 = const i64 1 @2:3
  %1 = le.u %n, %0 @2:3
  %5 = if %1 -> i64 @2:3 {
    yield %0 @2:3
  } else {
    %2 = sub %n, %0 @2:3
    %3 = call @fact(%2) -> i64 @2:3
    %4 = mul %n, %3 @2:3
    yield %4 @2:3
  }
  return %5 @2:3
}

func @fact_loop(%0: i64) -> i64 @fact.gen:10:1 {
  %1 = const i64 1 @11:3
  %7 = loop ^loop1(%2: i64 = %1, %3: i64 = %1) -> i64 @11:3 {
    %4 = gt.u %2, %0 @11:3
    if %4 @11:3 {
      break ^loop1 %3 @11:3
    }
    %5 = add %2, %1 @11:3
    %6 = mul %3, %2 @11:3
    continue ^loop1 %5, %6 @11:3
  }
  return %7 @11:3
}
`
	if got != want {
		t.Errorf("printed:\n%s\nwant:\n%s", got, want)
	}
}

// TestBuilderAgent builds an agent function with every effect, builtins,
// a switch, a block, asm, locals and data.
func TestBuilderAgent(t *testing.T) {
	m := ir.NewModule()
	msg := m.NewData("msg", []byte("hi"), 1, diag.Pos{})
	g := m.NewFunc("g", []ir.Type{ir.Dyn}, nil, diag.Pos{File: "a.vvm", Line: 1, Col: 1})
	b := ir.NewBuilder(g)
	v := g.Params[0]
	opts := b.Builtin("obj.new")
	zero := b.Const(ir.I64, 0)
	steps := []ir.Op{ir.OpLLM, ir.OpJudge, ir.OpTool, ir.OpEmit, ir.OpStatePut}
	b.Loop("each", []*ir.Value{zero}, nil, func(label string, p []*ir.Value) {
		for i, op := range steps {
			b.SetPos(diag.Pos{File: "a.vvm", Line: 2 + i, Col: 3})
			b.Effect(op, op.String(), []*ir.Value{p[0]}, v, opts)
		}
		b.Break(label)
	})
	b.SetPos(diag.Pos{File: "other.vvm", Line: 9, Col: 9})
	b.Effect(ir.OpStateGet, "get", nil, v)
	b.Effect(ir.OpWait, "wait", nil, b.NumberValue(math.Pi))
	x := b.Builtin("list.len", b.Builtin("list.new"))
	b.Switch(x, nil, []ir.Case{{Values: []int64{0, 1}, Body: func() {}}, {Values: []int64{2}, Body: func() { b.Unreachable() }}}, nil)
	b.Block("", []ir.Type{ir.I64}, func(label string) { b.Break(label, x) })
	p := b.AddrOfData(msg)
	slot := g.NewSlot("s", 8, 8, diag.Pos{})
	q := b.AddrOf(slot)
	b.Copy(q, p, 2)
	vr := g.NewVar("weird name", ir.I64, diag.Pos{})
	b.Set(vr, b.Get(vr))
	outs := b.Asm("ADD r2, r0, r1", []ir.AsmIn{{Reg: 0, V: x}, {Reg: 1, V: x}}, []ir.AsmOut{{Reg: 2, Type: ir.I64}})
	outs[0].Name = "sum 1"
	b.StringValue("s").Name = "3"
	b.UnitValue()
	b.Bool(false)
	text := roundTrip(t, m)
	for _, want := range []string{`%"sum 1" = asm`, `var $"weird name": i64`, `@other.vvm:9:9`, `const dyn 3.141592653589793`, `%3 = const dyn "s"`, `llm "llm" [%`} {
		if !strings.Contains(text, want) {
			t.Errorf("printed form lacks %q:\n%s", want, text)
		}
	}
}

// TestOpTable checks that every op is described and found by name.
func TestOpTable(t *testing.T) {
	for _, op := range ir.Ops() {
		info := op.Info()
		if info.Name == "" || info.Doc == "" || !strings.HasPrefix(info.Doc, info.Name) {
			t.Errorf("op %d: name %q, doc %q: the doc must start with the name", op, info.Name, info.Doc)
		}
		if got, ok := ir.LookupOp(info.Name); !ok || got != op {
			t.Errorf("LookupOp(%q) = %v, %v", info.Name, got, ok)
		}
	}
	for _, b := range ir.Builtins() {
		if !strings.HasPrefix(b.Doc, b.Name+"(") {
			t.Errorf("builtin %s: doc %q must start with its call", b.Name, b.Doc)
		}
	}
}

// TestFuncTypesInterned checks that equal function types compare equal.
func TestFuncTypesInterned(t *testing.T) {
	a := ir.FuncType([]ir.Type{ir.I64}, []ir.Type{ir.Bool})
	b := ir.FuncType([]ir.Type{ir.I64}, []ir.Type{ir.Bool})
	c := ir.FuncType([]ir.Type{ir.I64}, nil)
	if a != b || a == c {
		t.Errorf("interning: %v == %v is %v, %v == %v is %v", a, b, a == b, a, c, a == c)
	}
	if s := ir.FuncType(nil, []ir.Type{c}).String(); s != "fn() -> (fn(i64))" {
		t.Errorf("String = %q", s)
	}
}
