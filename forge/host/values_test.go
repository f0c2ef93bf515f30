package host

import (
	"encoding/binary"
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/genesis-toolchain/genesis/forge/agentabi"
	"github.com/genesis-toolchain/genesis/forge/vm"
	rt "github.com/genesis-toolchain/genesis/runtime"
)

// fakeMachine is the registers and memory of a machine, for the host
// calls and collections tested without one.
type fakeMachine struct {
	regs          [256]uint64
	mem           []byte
	ticks, budget uint64 // budget 0: unbounded
}

func (m *fakeMachine) Register(r uint8) uint64       { return m.regs[r] }
func (m *fakeMachine) SetRegister(r uint8, v uint64) { m.regs[r] = v }
func (m *fakeMachine) Memory() []byte                { return m.mem }
func (m *fakeMachine) Ticks() uint64                 { return m.ticks }
func (m *fakeMachine) Budget() uint64 {
	if m.budget == 0 {
		return 1<<64 - 1
	}
	return m.budget
}

// allBuiltins names every builtin of the runtime, in its order.
func allBuiltins() []string {
	names := make([]string, len(rt.Builtins))
	for i, b := range rt.Builtins {
		names[i] = b.Name
	}
	return names
}

var testPos = agentabi.Pos{File: "prog.spell", Line: 5, Col: 11}

// newTestHost returns a store for a program calling every builtin, with
// one position and the given constants.
func newTestHost(t testing.TB, memory uint64, consts ...agentabi.Constant) *ValueHost {
	t.Helper()
	meta := &agentabi.Metadata{Builtins: allBuiltins(), Positions: []agentabi.Pos{testPos}, Constants: consts, Return: "ret"}
	s, err := NewValueHost(meta, memory)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// builtinIndex returns the index of builtin name in allBuiltins.
func builtinIndex(t testing.TB, name string) int {
	for i, b := range rt.Builtins {
		if b.Name == name {
			return i
		}
	}
	t.Fatalf("no builtin %q", name)
	return 0
}

func mustPut(t testing.TB, s *ValueHost, v rt.Value) uint64 {
	t.Helper()
	h, f := s.Put(v)
	if f != vm.NoFault {
		t.Fatalf("Put(%v): %v (%s)", v, f, s.Err())
	}
	return h
}

// hostCall calls builtin name on operands (rt.Value: stored and passed
// as a handle; int64; bool) and returns the machine after the call.
func hostCall(t testing.TB, s *ValueHost, name string, pos int, ops ...any) (*fakeMachine, uint64, vm.Fault) {
	t.Helper()
	m := &fakeMachine{}
	for i, op := range ops {
		switch x := op.(type) {
		case rt.Value:
			m.regs[i] = mustPut(t, s, x)
		case int64:
			m.regs[i] = uint64(x)
		case bool:
			if x {
				m.regs[i] = 1
			}
		case uint64:
			m.regs[i] = x
		default:
			t.Fatalf("operand %T", op)
		}
	}
	ticks, f := s.call(m, agentabi.HostCallImm(builtinIndex(t, name), pos))
	return m, ticks, f
}

// direct calls the runtime function of builtin name on ops as the Go
// target's generated code does (rt.ErrorAt for a position), by
// reflection: independently of the host's adapters.
func direct(name string, pos bool, ops ...any) any {
	var fn any
	for _, b := range rt.Builtins {
		if b.Name == name {
			fn = b.Func
		}
	}
	in := make([]reflect.Value, len(ops))
	for i, op := range ops {
		in[i] = reflect.ValueOf(op)
	}
	out := reflect.ValueOf(fn).Call(in)
	r := out[0].Interface()
	if v, ok := r.(rt.Value); ok && pos {
		return rt.ErrorAt(v, testPos.File, testPos.Line, testPos.Col)
	}
	return r
}

// errPosOf returns the position an error value carries (rt.ErrorAt), by
// reflection: the runtime keeps it unexported, since it is no part of
// the value.
func errPosOf(v rt.Value) (string, int, int, bool) {
	h := reflect.ValueOf(v).FieldByName("h")
	if h.IsNil() {
		return "", 0, 0, false
	}
	at := h.Elem().FieldByName("at")
	if at.IsNil() {
		return "", 0, 0, false
	}
	at = at.Elem()
	return at.FieldByName("file").String(), int(at.FieldByName("line").Int()), int(at.FieldByName("col").Int()), true
}

// sameValue reports whether two values are the same to a program: of
// one kind, numbers of the same bits (NaN and -0 count), strings of the
// same bytes, lists and objects of the same elements (an object's keys in
// the same order), errors of the same kind, message and position; and
// then value.eq and of the same JSON.
func sameValue(a, b rt.Value) bool {
	if !deepSame(a, b) || string(rt.AppendJSON(nil, a)) != string(rt.AppendJSON(nil, b)) {
		return false
	}
	return rt.ValueEq(a, b) || holdsNaN(a)
}

func deepSame(a, b rt.Value) bool {
	if a.Kind() != b.Kind() || a.Len() != b.Len() {
		return false
	}
	switch a.Kind() {
	case rt.KindBool:
		x, _ := a.AsBool()
		y, _ := b.AsBool()
		return x == y
	case rt.KindNumber:
		return math.Float64bits(a.Num()) == math.Float64bits(b.Num())
	case rt.KindString:
		return a.Str() == b.Str()
	case rt.KindList:
		for i := 0; i < a.Len(); i++ {
			if !deepSame(a.Index(i), b.Index(i)) {
				return false
			}
		}
	case rt.KindObject:
		for i := 0; i < a.Len(); i++ {
			ka, va := a.Field(i)
			kb, vb := b.Field(i)
			if ka != kb || !deepSame(va, vb) {
				return false
			}
		}
	case rt.KindError:
		fa, la, ca, oka := errPosOf(a)
		fb, lb, cb, okb := errPosOf(b)
		return fa == fb && la == lb && ca == cb && oka == okb && a.ErrKind() == b.ErrKind() && a.ErrMessage() == b.ErrMessage()
	}
	return true
}

// holdsNaN reports whether v is or holds a NaN (which value.eq does not
// find equal to itself).
func holdsNaN(v rt.Value) bool {
	switch v.Kind() {
	case rt.KindNumber:
		return math.IsNaN(v.Num())
	case rt.KindList:
		for _, e := range v.Elems() {
			if holdsNaN(e) {
				return true
			}
		}
	case rt.KindObject:
		for i := 0; i < v.Len(); i++ {
			if _, e := v.Field(i); holdsNaN(e) {
				return true
			}
		}
	}
	return false
}

// checkCall calls builtin name through the host and directly, and fails
// when the results differ.
func checkCall(t testing.TB, s *ValueHost, name string, pos int, ops ...any) {
	t.Helper()
	m, _, f := hostCall(t, s, name, pos, ops...)
	if f != vm.NoFault {
		t.Fatalf("%s%v: %v (%s)", name, ops, f, s.Err())
	}
	want := direct(name, pos > 0, ops...)
	switch w := want.(type) {
	case rt.Value:
		got, ok := s.Get(m.regs[0])
		if !ok {
			t.Fatalf("%s%v: r0 = 0x%x is no live handle", name, ops, m.regs[0])
		}
		if !sameValue(got, w) {
			t.Fatalf("%s%v = %v through the host, %v directly", name, ops, got, w)
		}
	case int64:
		if int64(m.regs[0]) != w {
			t.Fatalf("%s%v = %d through the host, %d directly", name, ops, int64(m.regs[0]), w)
		}
	case bool:
		if (m.regs[0] == 1) != w || m.regs[0] > 1 {
			t.Fatalf("%s%v = %d through the host, %v directly", name, ops, m.regs[0], w)
		}
	}
}

// sampleValues are operands of every kind and shape.
func sampleValues() []rt.Value {
	big := make([]rt.Value, 30)
	for i := range big {
		big[i] = rt.Int(int64(30 - i))
	}
	obj := rt.Object(rt.Field{Key: "a", Value: rt.Int(1)}, rt.Field{Key: "é", Value: rt.List(rt.String("x"), rt.Unit())}, rt.Field{Key: "n", Value: rt.Object(rt.Field{Key: "0", Value: rt.True})})
	var fields []rt.Field
	for i := 0; i < 20; i++ {
		fields = append(fields, rt.Field{Key: string(rune('a' + i)), Value: rt.Int(int64(i))})
	}
	return []rt.Value{
		rt.Unit(), rt.True, rt.False,
		rt.Number(0), rt.Number(math.Copysign(0, -1)), rt.Number(1.5), rt.Number(-7), rt.Number(1e308), rt.Number(5e-324), rt.Number(3),
		rt.String(""), rt.String("a"), rt.String("  héllo €𝄞 \n"), rt.String("$a and $n.0 and $é.0 $"), rt.String("a.b.0"), rt.String("é"), rt.String("[1,2,{\"x\":null}]"), rt.String("{bad"),
		rt.List(), rt.List(rt.Int(2), rt.String("b"), rt.Int(1)), rt.List(rt.String("z"), rt.String("y"), rt.String("é")), rt.List(big...),
		rt.Object(), obj, rt.Object(fields...),
		rt.Error("type", "bad"), rt.Error("arith", "division by zero"),
	}
}

// TestBuiltinTable checks that the host has a call and a cost for every
// builtin of the runtime.
func TestBuiltinTable(t *testing.T) {
	for _, f := range rt.Builtins {
		b, ok := builtinNamed(f.Name)
		if !ok || b.call == nil || b.pre == nil || b.post == nil {
			t.Errorf("builtin %s has no host call", f.Name)
			continue
		}
		if n := reflect.TypeOf(f.Func).NumIn(); n != len(b.params) {
			t.Errorf("builtin %s takes %d operands, its host call %d", f.Name, n, len(b.params))
		}
	}
	if len(costs) != len(rt.Builtins) {
		t.Errorf("%d costs for %d builtins", len(costs), len(rt.Builtins))
	}
}

// TestBuiltinsThroughHost calls every builtin through HCALL on every
// combination of sample operands and compares with the runtime function
// called as the Go target calls it, with and without a position.
func TestBuiltinsThroughHost(t *testing.T) {
	vals := sampleValues()
	ints := []int64{0, 1, 2, -1, 5, 1 << 40, math.MinInt64}
	s := newTestHost(t, 1<<30)
	for _, f := range rt.Builtins {
		ty := reflect.TypeOf(f.Func)
		var rec func(ops []any)
		rec = func(ops []any) {
			if len(ops) == ty.NumIn() {
				checkCall(t, s, f.Name, 0, ops...)
				checkCall(t, s, f.Name, 1, ops...)
				return
			}
			switch ty.In(len(ops)).Kind() {
			case reflect.Int64:
				for _, i := range ints {
					rec(append(ops, i))
				}
			case reflect.Bool:
				rec(append(ops, false))
				rec(append(ops, true))
			default:
				step := 1
				if ty.NumIn() == 3 {
					step = 3 // obj.set: a third of the cube is plenty
				}
				for i := len(ops) % step; i < len(vals); i += step {
					rec(append(ops, vals[i]))
				}
			}
		}
		rec(nil)
	}
}

// TestErrorPosition checks that a fallible builtin's error carries the
// position of its HCALL, as rt.ErrorAt gives it on the Go target.
func TestErrorPosition(t *testing.T) {
	s := newTestHost(t, 1<<20)
	m, _, f := hostCall(t, s, "num.div", 1, rt.Int(1), rt.Int(0))
	if f != vm.NoFault {
		t.Fatal(f)
	}
	v, _ := s.Get(m.regs[0])
	file, line, col, ok := errPosOf(v)
	if !ok || file != "prog.spell" || line != 5 || col != 11 || v.ErrKind() != "arith" {
		t.Fatalf("num.div(1, 0) at position 1 = %v at %s:%d:%d (%v)", v, file, line, col, ok)
	}
	m, _, _ = hostCall(t, s, "num.div", 0, rt.Int(1), rt.Int(0))
	v, _ = s.Get(m.regs[0])
	if _, _, _, ok := errPosOf(v); ok {
		t.Fatal("an error of a host call without a position has one")
	}
}

// TestConstants checks that the constants are the handles 1..K.
func TestConstants(t *testing.T) {
	s := newTestHost(t, 1<<20,
		agentabi.Constant{Kind: "unit"}, agentabi.Constant{Kind: "bool", Bool: true},
		agentabi.Constant{Kind: "number", Number: math.Copysign(0, -1)}, agentabi.Constant{Kind: "string", String: "héllo"})
	want := []rt.Value{rt.Unit(), rt.True, rt.Number(math.Copysign(0, -1)), rt.String("héllo")}
	for i, w := range want {
		v, ok := s.Get(agentabi.Handle(uint64(i + 1)))
		if !ok || !sameValue(v, w) {
			t.Errorf("handle %d = %v, %v; want %v", i+1, v, ok, w)
		}
	}
	if _, ok := s.Get(agentabi.Handle(5)); ok {
		t.Error("handle 5 names a value")
	}
	if h := mustPut(t, s, rt.Int(1)); h != agentabi.Handle(5) {
		t.Errorf("the first value put has handle 0x%x, not 5's", h)
	}
	// The constants stay, whatever a collection finds.
	s.collect(&fakeMachine{}, nil)
	if s.Live() != 4 {
		t.Errorf("%d values after collecting everything but the constants", s.Live())
	}
	for i := range want {
		if _, ok := s.Get(agentabi.Handle(uint64(i + 1))); !ok {
			t.Errorf("constant %d collected", i+1)
		}
	}
}

// TestNewValueHostErrors checks the programs a store refuses.
func TestNewValueHostErrors(t *testing.T) {
	for _, c := range []struct {
		meta agentabi.Metadata
		mem  uint64
		want string
	}{
		{agentabi.Metadata{Builtins: []string{"num.add", "num.pow"}}, 1 << 20, `"num.pow", is not a builtin`},
		{agentabi.Metadata{Constants: []agentabi.Constant{{Kind: "list"}}}, 1 << 20, `unknown kind "list"`},
		{agentabi.Metadata{Constants: []agentabi.Constant{{Kind: "string", String: strings.Repeat("x", 100)}}}, 100, "more than the 100 bytes"},
	} {
		_, err := NewValueHost(&c.meta, c.mem)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("NewValueHost: %v, want an error saying %s", err, c.want)
		}
	}
}

// TestHostFaults checks the host calls refused with HOST_FAULT, and that
// Err names the builtin and the operand.
func TestHostFaults(t *testing.T) {
	s := newTestHost(t, 1<<20, agentabi.Constant{Kind: "number", Number: 1})
	add := builtinIndex(t, "num.add")
	for _, c := range []struct {
		imm  uint32
		regs []uint64
		want string
	}{
		{agentabi.HostCallImm(len(rt.Builtins), 0), nil, "builtin 40, but the program names 40"},
		{agentabi.HostCallImm(add, 2), []uint64{agentabi.Handle(1), agentabi.Handle(1)}, "position 2, but the program has 1"},
		{agentabi.HostCallImm(add, 0), []uint64{agentabi.Handle(1), 0}, "num.add: operand 2 (r1 = 0x0) is no live value handle"},
		{agentabi.HostCallImm(add, 0), []uint64{1, agentabi.Handle(1)}, "num.add: operand 1 (r0 = 0x1) is no live value handle"},
		{agentabi.HostCallImm(add, 0), []uint64{agentabi.Handle(1), agentabi.Handle(2)}, "operand 2 (r1 = 0x5647000000000002) is no live value handle"},
		{agentabi.HostCallImm(add, 0), []uint64{agentabi.Handle(1), agentabi.HandleTag}, "operand 2 (r1 = 0x5647000000000000) is no live"},
		{agentabi.HostCallImm(builtinIndex(t, "value.bool"), 0), []uint64{2}, "value.bool: operand 1 (r0 = 0x2) is no bool"},
	} {
		m := &fakeMachine{}
		copy(m.regs[:], c.regs)
		_, f := s.call(m, c.imm)
		if f != vm.HostFault || !strings.Contains(s.Err(), c.want) {
			t.Errorf("HCALL 0x%x %x: %v %q; want HOST_FAULT saying %s", c.imm, c.regs, f, s.Err(), c.want)
		}
		if m.regs[0] != append(c.regs, 0)[0] {
			t.Errorf("HCALL 0x%x changed r0 when it faulted", c.imm)
		}
	}
}

// TestValueLimitStop checks that a builtin stopped by the runtime's value
// limit faults HOST_FAULT and hands the runtime's stop to the run loop.
func TestValueLimitStop(t *testing.T) {
	old := rt.ValueLimit()
	rt.SetValueLimit(1000)
	t.Cleanup(func() { rt.SetValueLimit(old) })
	s := newTestHost(t, 1<<20)
	big := rt.String(strings.Repeat("x", 600))
	_, _, f := hostCall(t, s, "str.concat", 0, big, big)
	if f != vm.HostFault || s.Stop() == nil {
		t.Fatalf("str.concat over the value limit: %v, stop %v", f, s.Stop())
	}
	if !strings.Contains(s.Err(), "str.concat: ") || !strings.Contains(s.Err(), "exceeds the largest value allowed") {
		t.Errorf("Err = %q", s.Err())
	}
	// The Go target's builtin panics with the same stop.
	func() {
		defer func() {
			if p := recover(); p == nil || reflect.TypeOf(p) != reflect.TypeOf(s.Stop()) {
				t.Errorf("the runtime's str.concat panicked with %v, the host recovered %v", p, s.Stop())
			}
		}()
		rt.StrConcat(big, big)
	}()
}

// TestMemoryBudget checks that a store over its memory collects first,
// then fails OUT_OF_MEMORY.
func TestMemoryBudget(t *testing.T) {
	s := newTestHost(t, 4096)
	m := &fakeMachine{mem: make([]byte, 256)}
	concat := agentabi.HostCallImm(builtinIndex(t, "str.concat"), 0)
	m.regs[0] = mustPut(t, s, rt.String("0123456789"))
	m.regs[1] = m.regs[0]
	// A string that doubles: garbage is collected on the way, then the
	// live string no longer fits.
	var fault vm.Fault
	for i := 0; i < 20 && fault == vm.NoFault; i++ {
		_, fault = s.call(m, concat)
		m.regs[1] = m.regs[0]
	}
	if fault != vm.OutOfMemory {
		t.Fatalf("doubling a string in 4096 bytes: %v", fault)
	}
	if s.Collections() == 0 {
		t.Error("no collection before OUT_OF_MEMORY")
	}
	if s.Bytes() > s.Limit() {
		t.Errorf("%d bytes charged, more than the limit %d", s.Bytes(), s.Limit())
	}
	if !strings.Contains(s.Err(), "more than the 4096 bytes") {
		t.Errorf("Err = %q", s.Err())
	}
	// A loop that makes garbage runs on forever in the same memory.
	s = newTestHost(t, 4096)
	m = &fakeMachine{mem: make([]byte, 256)}
	add := agentabi.HostCallImm(builtinIndex(t, "num.add"), 0)
	m.regs[0] = mustPut(t, s, rt.Int(0))
	one := mustPut(t, s, rt.Int(1))
	binary.LittleEndian.PutUint64(m.mem[8:], one) // kept by a memory word
	for i := 0; i < 10000; i++ {
		m.regs[1] = one
		if _, f := s.call(m, add); f != vm.NoFault {
			t.Fatalf("iteration %d: %v (%s)", i, f, s.Err())
		}
	}
	if v, _ := s.Get(m.regs[0]); v.Num() != 10000 {
		t.Fatalf("the sum is %v", v)
	}
	if s.Collections() == 0 || s.Live() > 4096/slotBytes {
		t.Errorf("%d collections, %d values live", s.Collections(), s.Live())
	}
}

// TestCollect checks that a collection frees the values nothing names
// and keeps those a register, an aligned memory word or a root names,
// and that the freed handles are reused lowest first.
func TestCollect(t *testing.T) {
	s := newTestHost(t, 1<<20, agentabi.Constant{Kind: "string", String: "k"})
	m := &fakeMachine{mem: make([]byte, 64)}
	var hs []uint64
	for i := 0; i < 8; i++ {
		hs = append(hs, mustPut(t, s, rt.Int(int64(i))))
	}
	// hs[0..7] are the indices 2..9.
	m.regs[200] = hs[1]
	binary.LittleEndian.PutUint64(m.mem[16:], hs[3])
	binary.LittleEndian.PutUint64(m.mem[33:], hs[4]) // unaligned: no root
	before := s.Bytes()
	s.collect(m, []uint64{hs[5], hs[6] + 100})
	kept := map[int]bool{1: true, 3: true, 5: true}
	for i, h := range hs {
		if _, ok := s.Get(h); ok != kept[i] {
			t.Errorf("value %d (handle 0x%x) live = %v after the collection", i, h, ok)
		}
	}
	if want := before - 5*slotBytes; s.Bytes() != want {
		t.Errorf("%d bytes after freeing 5 numbers from %d; want %d", s.Bytes(), before, want)
	}
	// Freed handles are reused lowest first: hs[0], hs[2], hs[4], ...
	for _, i := range []int{0, 2, 4, 6, 7} {
		if h := mustPut(t, s, rt.Int(100)); h != hs[i] {
			t.Errorf("new handle 0x%x, want hs[%d] = 0x%x", h, i, hs[i])
		}
	}
	if h := mustPut(t, s, rt.Int(100)); h != agentabi.Handle(10) {
		t.Errorf("new handle 0x%x after the free ones, want 10's", h)
	}
	// A store emptied shrinks to its constants.
	s.collect(&fakeMachine{}, nil)
	if s.Live() != 1 || len(s.vals) != 2 || s.Bytes() != s.sizeOf(rt.String("k")) {
		t.Errorf("%d live values, %d slots, %d bytes after collecting everything", s.Live(), len(s.vals), s.Bytes())
	}
	// A root function adds the host's roots.
	h := mustPut(t, s, rt.Int(7))
	s.extra = func() []uint64 { return []uint64{h} }
	s.collect(&fakeMachine{}, nil)
	if _, ok := s.Get(h); !ok {
		t.Error("a value the host's roots name was collected")
	}
}

// TestSizes checks the size estimates: incremental ones (list.append,
// obj.set) agree with measuring the result.
func TestSizes(t *testing.T) {
	s := newTestHost(t, 1<<30)
	fresh := func(v rt.Value) uint64 { clear(s.memo); return s.sizeOf(v) }
	str := rt.String("héllo")
	if got := fresh(str); got != slotBytes+6 {
		t.Errorf("size of %v = %d", str, got)
	}
	l := rt.List(rt.Int(1), str)
	if got, want := fresh(l), uint64(slotBytes+headerBytes+slotBytes+slotBytes+6); got != want {
		t.Errorf("size of %v = %d, want %d", l, got, want)
	}
	o := rt.Object(rt.Field{Key: "ab", Value: l})
	if got, want := fresh(o), uint64(slotBytes+headerBytes+fieldBytes+2)+fresh(l); got != want {
		t.Errorf("size of %v = %d, want %d", o, got, want)
	}
	// Built through host calls, sizes are those the values measure.
	m := &fakeMachine{}
	app := agentabi.HostCallImm(builtinIndex(t, "list.append"), 0)
	set := agentabi.HostCallImm(builtinIndex(t, "obj.set"), 0)
	list := mustPut(t, s, rt.List())
	obj := mustPut(t, s, rt.Object())
	for i := 0; i < 40; i++ {
		m.regs[0], m.regs[1] = list, mustPut(t, s, rt.List(rt.String(strings.Repeat("é", i))))
		if _, f := s.call(m, app); f != vm.NoFault {
			t.Fatal(f)
		}
		list = m.regs[0]
		m.regs[0], m.regs[1], m.regs[2] = obj, mustPut(t, s, rt.String(string(rune('a'+i%20)))), list
		if _, f := s.call(m, set); f != vm.NoFault {
			t.Fatal(f)
		}
		obj = m.regs[0]
		for _, h := range []uint64{list, obj} {
			i, _ := agentabi.Index(h)
			if got, want := s.vals[i].size, fresh(s.vals[i].v); got != want {
				t.Fatalf("step %d: handle 0x%x charged %d bytes, its value measures %d", i, h, got, want)
			}
		}
	}
	// A list nested 200,000 deep is measured without recursion.
	deep := rt.List()
	for i := 0; i < 200_000; i++ {
		deep = rt.List(deep)
	}
	if got, want := fresh(deep), uint64(200_001*(slotBytes+headerBytes)); got != want {
		t.Errorf("size of a list nested 200,000 deep = %d, want %d", got, want)
	}
}

// TestTicks checks that the costs grow with the sizes builtins touch, so
// that bounded ticks bound the host's work.
func TestTicks(t *testing.T) {
	s := newTestHost(t, 1<<40) // no collections
	cost := func(name string, ops ...any) uint64 {
		t.Helper()
		_, ticks, f := hostCall(t, s, name, 0, ops...)
		if f != vm.NoFault {
			t.Fatalf("%s: %v (%s)", name, f, s.Err())
		}
		return ticks
	}
	small, large := rt.String("ab"), rt.String(strings.Repeat("x", 1<<16))
	if c := cost("num.add", rt.Int(1), rt.Int(2)); c != 0 {
		t.Errorf("num.add costs %d extra ticks", c)
	}
	if c := cost("str.concat", large, large); c < 2*(1<<16)/copyBytesPerTick {
		t.Errorf("str.concat of 2×64 KiB costs %d ticks", c)
	}
	if c := cost("str.concat", small, small); c > 1 {
		t.Errorf("str.concat of small strings costs %d ticks", c)
	}
	items := make([]rt.Value, 10000)
	for i := range items {
		items[i] = rt.Int(int64(i))
	}
	list := rt.List(items...)
	if c := cost("json.encode", list); c < 10000 {
		t.Errorf("json.encode of 10,000 numbers costs %d ticks", c)
	}
	// list.append: in place on the latest version (amortized 1),
	// copying on an older one.
	m := &fakeMachine{}
	app := agentabi.HostCallImm(builtinIndex(t, "list.append"), 0)
	l := mustPut(t, s, list)
	x := mustPut(t, s, rt.Int(1))
	m.regs[0], m.regs[1] = l, x
	first, _ := s.call(m, app) // a list from outside: copied
	if first < 10000 {
		t.Errorf("the first append to a 10,000-element list costs %d ticks", first)
	}
	var total uint64
	for i := 0; i < 10000; i++ {
		m.regs[1] = x
		c, f := s.call(m, app)
		if f != vm.NoFault {
			t.Fatal(f)
		}
		total += c
	}
	if total > 10000+20000 { // one copy of the doubling
		t.Errorf("10,000 appends to the latest version cost %d ticks", total)
	}
	m.regs[0], m.regs[1] = l, x
	if c, _ := s.call(m, app); c < 10000 {
		t.Errorf("appending to an old version of 10,000 elements costs %d ticks", c)
	}
}

// run calls builtin name on the registers of m as they are and fails on
// a fault; it returns the ticks.
func run(t testing.TB, s *ValueHost, m *fakeMachine, name string) uint64 {
	t.Helper()
	ticks, f := s.call(m, agentabi.HostCallImm(builtinIndex(t, name), 0))
	if f != vm.NoFault {
		t.Fatalf("%s: %v (%s)", name, f, s.Err())
	}
	return ticks
}

// TestMemoryUnits checks the memory the store charges for values that
// share memory: the versions of a list appended to in place share one
// array, an element taken out keeps its container, an object updated
// keeps its big fields once.
func TestMemoryUnits(t *testing.T) {
	t.Run("append", func(t *testing.T) {
		// 100,000 appends: the array (cap ≤ 2^17 slots, 5 MiB) fits in
		// 8 MiB however many versions the collections find.
		s := newTestHost(t, 8<<20)
		m := &fakeMachine{mem: make([]byte, 1024)}
		m.regs[0] = mustPut(t, s, rt.List())
		x := mustPut(t, s, rt.String("element"))
		binary.LittleEndian.PutUint64(m.mem, x)
		for i := 0; i < 100_000; i++ {
			m.regs[1] = x
			run(t, s, m, "list.append")
		}
		if v, _ := s.Get(m.regs[0]); v.Len() != 100_000 {
			t.Fatalf("a list of %d", v.Len())
		}
		if s.Collections() > 2 {
			t.Errorf("%d collections for building one list", s.Collections())
		}
		s.collect(m, nil)
		if want := uint64(2*slotBytes + 7 + headerBytes + (1<<17)*slotBytes); s.Bytes() != want {
			t.Errorf("%d bytes for a list of 100,000 elements and its element, want %d", s.Bytes(), want)
		}
	})
	t.Run("object", func(t *testing.T) {
		// A state object whose big field stays while a counter changes:
		// the big list is charged once, whatever the versions.
		s := newTestHost(t, 4<<20)
		m := &fakeMachine{}
		items := make([]rt.Value, 20_000)
		for i := range items {
			items[i] = rt.String(strings.Repeat("x", 50))
		}
		big := rt.List(items...)
		m.regs[0] = mustPut(t, s, rt.Object(rt.Field{Key: "items", Value: big}))
		key := mustPut(t, s, rt.String("count"))
		for i := 0; i < 5000; i++ {
			m.regs[1], m.regs[2] = key, mustPut(t, s, rt.Int(int64(i)))
			run(t, s, m, "obj.set")
		}
		s.collect(m, nil)
		if s.Bytes() > s.sizeOf(big)+1024 {
			t.Errorf("%d bytes held for an object of %d bytes", s.Bytes(), s.sizeOf(big))
		}
		if s.Collections() > 4 {
			t.Errorf("%d collections", s.Collections())
		}
	})
	t.Run("element", func(t *testing.T) {
		// An element taken out of a list keeps the list's memory.
		s := newTestHost(t, 1<<30)
		m := &fakeMachine{}
		big := rt.List(rt.String(strings.Repeat("y", 100_000)), rt.Int(1))
		m.regs[0], m.regs[1] = mustPut(t, s, big), 0
		run(t, s, m, "list.get")
		s.collect(m, nil) // only the element's handle is left
		if s.Bytes() < 100_000 {
			t.Errorf("%d bytes held for an element of a list of 100,000 bytes", s.Bytes())
		}
		s.collect(&fakeMachine{}, nil)
		if s.Bytes() != 0 {
			t.Errorf("%d bytes held for nothing", s.Bytes())
		}
		// A substring keeps its string.
		m.regs[0], m.regs[1], m.regs[2] = mustPut(t, s, rt.String(strings.Repeat("z", 100_000))), 5, 6
		run(t, s, m, "str.slice")
		s.collect(m, nil)
		if s.Bytes() < 100_000 {
			t.Errorf("%d bytes held for a substring of a string of 100,000 bytes", s.Bytes())
		}
	})
	t.Run("nested", func(t *testing.T) {
		// Lists appended into a list stay charged after their handles
		// are gone; collected with it.
		s := newTestHost(t, 1<<30)
		m := &fakeMachine{}
		outer := mustPut(t, s, rt.List())
		for i := 0; i < 10; i++ {
			m.regs[0] = mustPut(t, s, rt.String(strings.Repeat("w", 1000)))
			m.regs[1] = mustPut(t, s, rt.String("!"))
			run(t, s, m, "str.concat")
			m.regs[1] = m.regs[0]
			m.regs[0] = outer
			run(t, s, m, "list.append")
			outer = m.regs[0]
		}
		s.collect(m, nil)
		if s.Bytes() < 10*1001 || s.Bytes() > 10*1001+4096 {
			t.Errorf("%d bytes held for a list of 10 strings of 1001 bytes", s.Bytes())
		}
	})
}

// TestDeterministic checks that two runs of the same calls get the same
// handles, ticks, bytes and collections, whether a value from outside
// shares memory with the program's values or is a copy (as a value the
// state store gave back is live and a parsed one on replay).
func TestDeterministic(t *testing.T) {
	type trace struct {
		handles []uint64
		ticks   []uint64
		bytes   []uint64
		colls   int
	}
	runOnce := func(shared bool) trace {
		var tr trace
		s := newTestHost(t, 512<<10)
		m := &fakeMachine{mem: make([]byte, 512)}
		s.Attach(nil, func() []uint64 { return []uint64{m.regs[10]} })
		s.attached = m // Attach takes a *vm.Machine
		m.regs[0] = mustPut(t, s, rt.List())
		for i := 0; i < 2000; i++ {
			m.regs[1] = mustPut(t, s, rt.Int(int64(i)))
			tr.ticks = append(tr.ticks, run(t, s, m, "list.append"))
			tr.handles = append(tr.handles, m.regs[0])
			if i%100 == 99 {
				// An effect gives the list back (live: the same memory;
				// replay: a copy); the program appends to both.
				v, _ := s.Get(m.regs[0])
				if !shared {
					v, _ = rt.ParseJSON(rt.AppendJSON(nil, v))
				}
				m.regs[10] = m.regs[0]
				m.regs[0] = mustPut(t, s, v)
				binary.LittleEndian.PutUint64(m.mem[8:], m.regs[0])
			}
			tr.bytes = append(tr.bytes, s.Bytes())
		}
		tr.colls = s.Collections()
		return tr
	}
	a, b := runOnce(true), runOnce(false)
	if !reflect.DeepEqual(a, b) {
		for i := range a.ticks {
			if a.ticks[i] != b.ticks[i] || a.handles[i] != b.handles[i] || a.bytes[i] != b.bytes[i] {
				t.Fatalf("call %d: handle 0x%x, %d ticks, %d bytes with shared memory; 0x%x, %d, %d with a copy", i, a.handles[i], a.ticks[i], a.bytes[i], b.handles[i], b.ticks[i], b.bytes[i])
			}
		}
		t.Fatalf("%d collections with shared memory, %d with a copy", a.colls, b.colls)
	}
	if a.colls == 0 {
		t.Error("no collection: the test tests less than it says")
	}
}

// TestTicksLeft checks that a call whose cost from its operands exceeds
// the ticks left is not made: it returns that cost, for OUT_OF_TICKS.
func TestTicksLeft(t *testing.T) {
	s := newTestHost(t, 1<<30)
	items := make([]rt.Value, 1000)
	for i := range items {
		items[i] = rt.String("abc")
	}
	m := &fakeMachine{ticks: 90, budget: 100}
	m.regs[0] = mustPut(t, s, rt.List(items...))
	before := m.regs[0]
	ticks, f := s.call(m, agentabi.HostCallImm(builtinIndex(t, "json.encode"), 0))
	if f != vm.NoFault || ticks <= 10 || m.regs[0] != before {
		t.Fatalf("json.encode of 1000 strings with 10 ticks left: %d ticks, %v, r0 0x%x", ticks, f, m.regs[0])
	}
	m.budget = 0
	if ticks2, _ := s.call(m, agentabi.HostCallImm(builtinIndex(t, "json.encode"), 0)); ticks2 < ticks || m.regs[0] == before {
		t.Fatalf("json.encode with ticks enough: %d ticks (%d before the call), r0 0x%x", ticks2, ticks, m.regs[0])
	}
}

// BenchmarkHostCall measures host calls of builtins, operands to result:
// an object lookup, a concatenation of short strings (each result a new
// value in the store, collected as the store fills), a number addition.
func BenchmarkHostCall(b *testing.B) {
	obj := rt.Object(rt.Field{Key: "name", Value: rt.String("genesis")}, rt.Field{Key: "n", Value: rt.Int(3)}, rt.Field{Key: "tags", Value: rt.List(rt.String("a"))})
	for _, c := range []struct {
		name string
		ops  []rt.Value
	}{
		{"obj.get", []rt.Value{obj, rt.String("tags")}},
		{"str.concat", []rt.Value{rt.String("hello, "), rt.String("world")}},
		{"num.add", []rt.Value{rt.Number(1.5), rt.Number(2)}},
	} {
		b.Run(c.name, func(b *testing.B) {
			s := newTestHost(b, 1<<20)
			m := &fakeMachine{mem: make([]byte, 4096)}
			var hs [3]uint64
			for i, v := range c.ops {
				hs[i] = mustPut(b, s, v)
				binary.LittleEndian.PutUint64(m.mem[8*i:], hs[i])
			}
			imm := agentabi.HostCallImm(builtinIndex(b, c.name), 0)
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				copy(m.regs[:], hs[:])
				if _, f := s.call(m, imm); f != vm.NoFault {
					b.Fatal(f, s.Err())
				}
			}
		})
	}
}

// TestFormatReferences checks that str.format pays for the lookups of
// its references: a reference of a million segments costs about a
// million times its bytes, one of a few segments nothing more.
func TestFormatReferences(t *testing.T) {
	// $name: 1·5 bytes, 0 ticks; $user.email.0: 3·13, 4; $5: 1·2, 0.
	if got := referenceTicks("Hello $name, $user.email.0 costs $5 $ $.x"); got != 4 {
		t.Errorf("the references of a usual template cost %d ticks, want 4", got)
	}
	long := "$" + strings.Repeat("a.", 100_000) + "a"
	if got, want := referenceTicks(long), uint64(100_001*len(long)/copyBytesPerTick); got != want {
		t.Errorf("a reference of 100,001 segments costs %d ticks, want %d", got, want)
	}
	s := newTestHost(t, 1<<30)
	m := &fakeMachine{budget: 1 << 30}
	m.regs[0] = mustPut(t, s, rt.String(long))
	m.regs[1] = mustPut(t, s, rt.Object(rt.Field{Key: "a", Value: rt.Object()}))
	before := m.regs[0]
	ticks, f := s.call(m, agentabi.HostCallImm(builtinIndex(t, "str.format"), 0))
	if f != vm.NoFault || ticks <= 1<<30 || m.regs[0] != before {
		t.Fatalf("str.format of a reference of 100,001 segments with 2^30 ticks: %d ticks, %v", ticks, f)
	}
	// A template that is no string is rendered, then its references
	// counted.
	m.regs[0] = mustPut(t, s, rt.List(rt.String(long)))
	if ticks, _ := s.call(m, agentabi.HostCallImm(builtinIndex(t, "str.format"), 0)); ticks <= 1<<30 {
		t.Fatalf("str.format of a list holding that reference: %d ticks", ticks)
	}
}

// TestRootsOfSavedStates checks that the register files Roots returns
// keep their values.
func TestRootsOfSavedStates(t *testing.T) {
	s := newTestHost(t, 1<<20)
	var saved [256]uint64
	saved[200] = mustPut(t, s, rt.String("outer"))
	gone := mustPut(t, s, rt.String("gone"))
	s.Roots = func() [][256]uint64 { return [][256]uint64{saved} }
	s.collect(&fakeMachine{}, nil)
	if _, ok := s.Get(saved[200]); !ok {
		t.Error("a value a saved register names was collected")
	}
	if _, ok := s.Get(gone); ok {
		t.Error("a value nothing names was kept")
	}
}

// TestCheck checks that Check runs at every host call and that its stop
// faults HOST_FAULT with Stop holding it.
func TestCheck(t *testing.T) {
	s := newTestHost(t, 1<<20)
	calls := 0
	s.Check = func() {
		calls++
		if calls == 2 {
			panic("cancelled")
		}
	}
	if _, _, f := hostCall(t, s, "num.add", 0, rt.Int(1), rt.Int(2)); f != vm.NoFault || calls != 1 {
		t.Fatalf("first call: %v, %d checks", f, calls)
	}
	if _, _, f := hostCall(t, s, "num.add", 0, rt.Int(1), rt.Int(2)); f != vm.HostFault || s.Stop() != "cancelled" || !strings.Contains(s.Err(), "num.add: cancelled") {
		t.Fatalf("second call: %v, stop %v, %q", f, s.Stop(), s.Err())
	}
}
