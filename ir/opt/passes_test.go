package opt

import (
	"errors"
	"strings"
	"testing"

	"github.com/genesis-toolchain/genesis/diag"
	"github.com/genesis-toolchain/genesis/ir"
)

// TestCheckTable runs the start-up check on the real table and on broken
// ones: each must fail with a message naming the passes at fault.
func TestCheckTable(t *testing.T) {
	if err := checkTable(passes[:], passOrder[:]); err != nil {
		t.Fatalf("the pass table fails its own check: %v", err)
	}
	nop := func(*ir.Module) {}
	a := Pass{Name: "a", Func: nop, Doc: "a", Level: 1}
	b := Pass{Name: "b", Func: nop, Doc: "b", Level: 1}
	req := Pass{Name: "req", Func: nop, Doc: "req", Required: true}
	for _, c := range []struct {
		name  string
		table []Pass
		order []Order
		want  string // "" when the table is valid
	}{
		{"in order", []Pass{a, b}, []Order{{"a", "b"}}, ""},
		{"required first", []Pass{req, a}, []Order{{"req", "a"}}, ""},
		{"out of order", []Pass{b, a}, []Order{{"a", "b"}}, `passes "a" and "b" are out of order`},
		{"before itself", []Pass{a}, []Order{{"a", "a"}}, `passes "a" and "a" are out of order`},
		{"unknown before", []Pass{a}, []Order{{"x", "a"}}, `no pass "x"`},
		{"unknown after", []Pass{a}, []Order{{"a", "y"}}, `no pass "y"`},
		{"twice", []Pass{a, a}, nil, `pass "a" appears twice`},
		{"no name", []Pass{{Func: nop, Doc: "d", Level: 1}}, nil, "pass 0 has no name"},
		{"no func", []Pass{{Name: "f", Doc: "d", Level: 1}}, nil, `pass "f" has no function`},
		{"level 0", []Pass{{Name: "z", Func: nop, Doc: "d"}}, nil, `pass "z" has level 0`},
		{"level too high", []Pass{{Name: "h", Func: nop, Doc: "d", Level: MaxLevel + 1}}, nil, `pass "h" has level 3`},
		{"required with level", []Pass{{Name: "r", Func: nop, Doc: "d", Required: true, Level: 1}}, nil, `required pass "r" has level 1`},
	} {
		err := checkTable(c.table, c.order)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s: %v", c.name, err)
		case c.want != "" && err == nil:
			t.Errorf("%s: accepted, want an error containing %q", c.name, c.want)
		case c.want != "" && !strings.Contains(err.Error(), c.want):
			t.Errorf("%s: error %q, want one containing %q", c.name, err, c.want)
		}
	}
}

// TestOrderIsBinding moves each constrained pass of the real table to
// the other side of its constraint: every such table must fail, so no
// constraint is vacuous.
func TestOrderIsBinding(t *testing.T) {
	for _, o := range passOrder {
		table := Passes()
		i, j := indexOf(table, o.Before), indexOf(table, o.After)
		table[i], table[j] = table[j], table[i]
		err := checkTable(table, passOrder[:])
		if err == nil {
			t.Errorf("swapping %s and %s: accepted", o.Before, o.After)
			continue
		}
		if !strings.Contains(err.Error(), "out of order") {
			t.Errorf("swapping %s and %s: %v", o.Before, o.After, err)
		}
	}
}

func indexOf(table []Pass, name string) int {
	for i, p := range table {
		if p.Name == name {
			return i
		}
	}
	panic("no pass " + name)
}

// sumModule is a small verified module: main calls @double, and @unused
// is called by nobody.
func sumModule(t *testing.T) *ir.Module {
	t.Helper()
	src := `func @double(%x: i64) -> i64 {
  %y = add %x, %x
  return %y
}

func @unused() -> i64 {
  %c = const i64 7
  return %c
}

func @main() -> i64 {
  %a = const i64 20
  %b = call @double(%a) -> i64
  return %b
}
`
	m, ds := ir.Parse("sum.ir", []byte(src))
	if ds.HasErrors() {
		t.Fatal(ds.Error())
	}
	if ds := ir.Verify(m); ds.HasErrors() {
		t.Fatal(ds.Error())
	}
	return m
}

// breakReturn is a deliberately broken pass: it makes main return
// nothing while main is declared to return an i64, which the verifier
// rejects.
func breakReturn(m *ir.Module) {
	f := m.Func("main")
	ret := f.Body.Instrs[len(f.Body.Instrs)-1]
	ret.Args = nil
}

// TestVerifyEachCatchesBrokenPass runs a table holding a broken pass:
// with VerifyEach the pipeline stops right after it with an internal
// error naming it, and the passes after it do not run.
func TestVerifyEachCatchesBrokenPass(t *testing.T) {
	var ran []string
	record := func(name string) Pass {
		return Pass{Name: name, Doc: name, Level: 1, Func: func(*ir.Module) { ran = append(ran, name) }}
	}
	table := []Pass{record("before"), {Name: "breaker", Doc: "breaks main", Level: 1, Func: breakReturn}, record("after")}
	if err := checkTable(table, nil); err != nil {
		t.Fatal(err)
	}
	m := sumModule(t)
	err := run(table, m, 1, &Hooks{VerifyEach: true})
	var ice *InternalError
	if !errors.As(err, &ice) {
		t.Fatalf("got %v, want an *InternalError", err)
	}
	if ice.Pass != "breaker" {
		t.Errorf("the error names pass %q, want breaker", ice.Pass)
	}
	const prefix = `internal compiler error in pass "breaker": the module does not verify after it: `
	if !strings.HasPrefix(err.Error(), prefix) || !strings.Contains(err.Error(), "@main") {
		t.Errorf("message %q: want it to start with %q and name @main", err, prefix)
	}
	if strings.Join(ran, ",") != "before" {
		t.Errorf("passes run: %v, want only before (the pipeline stops at the broken pass)", ran)
	}
}

// TestVerifyEachOnInTests checks that a test binary verifies after every
// pass even when the caller does not ask: tests always run with
// --verify-each.
func TestVerifyEachOnInTests(t *testing.T) {
	table := []Pass{{Name: "breaker", Doc: "breaks main", Level: 1, Func: breakReturn}}
	err := run(table, sumModule(t), 1, nil)
	if err == nil || !strings.Contains(err.Error(), `in pass "breaker"`) {
		t.Fatalf("got %v, want the breaker's internal error", err)
	}
}

// TestPanicNamesPass checks that a panic in a pass, on the caller's
// goroutine or on a worker of forEachFunc, becomes an internal error
// naming the pass and, for a function pass, the function.
func TestPanicNamesPass(t *testing.T) {
	direct := Pass{Name: "licm", Doc: "panics", Level: 1, Func: func(*ir.Module) { panic("index out of range") }}
	err := run([]Pass{direct}, sumModule(t), 1, nil)
	if err == nil || err.Error() != `internal compiler error in pass "licm": index out of range` {
		t.Errorf("got %v", err)
	}

	// Enough functions for forEachFunc to start workers, one of which
	// panics.
	m := ir.NewModule()
	for i := range 4 * minFuncsPerWorker {
		name := "f" + strings.Repeat("x", i)
		if i == 0 {
			name = "main"
		}
		f := m.NewFunc(name, nil, nil, diag.Pos{})
		ir.NewBuilder(f).Return()
	}
	perFunc := Pass{Name: "late-licm", Doc: "panics in one function", Level: 1, Func: func(m *ir.Module) {
		forEachFunc(m, func(f *ir.Func) {
			if f.Name == "fxxx" {
				panic("bad loop")
			}
		})
	}}
	err = run([]Pass{perFunc}, m, 1, nil)
	if err == nil || err.Error() != `internal compiler error in pass "late-licm": function @fxxx: bad loop` {
		t.Errorf("got %v", err)
	}
}

// TestRequiredRunsAtO0 checks that -O0 runs the required passes and
// only them.
func TestRequiredRunsAtO0(t *testing.T) {
	var ran []string
	if err := Run(sumModule(t), 0, &Hooks{AfterPass: func(p Pass, m *ir.Module) { ran = append(ran, p.Name) }}); err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, p := range passes {
		if p.Required {
			want = append(want, p.Name)
		}
	}
	if len(want) == 0 || strings.Join(ran, ",") != strings.Join(want, ",") {
		t.Errorf("-O0 ran %v, want the required passes %v", ran, want)
	}
}
