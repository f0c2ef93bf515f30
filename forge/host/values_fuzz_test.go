package host

import (
	"encoding/binary"
	"math"
	"reflect"
	"testing"

	"github.com/genesis-toolchain/genesis/forge/agentabi"
	"github.com/genesis-toolchain/genesis/forge/vm"
	rt "github.com/genesis-toolchain/genesis/runtime"
)

// fuzzReader hands out the bytes of a fuzz input; zeros when it is used
// up, so every input is a program.
type fuzzReader struct{ b []byte }

func (r *fuzzReader) byte() byte {
	if len(r.b) == 0 {
		return 0
	}
	c := r.b[0]
	r.b = r.b[1:]
	return c
}

func (r *fuzzReader) u64() uint64 {
	var w [8]byte
	for i := range w {
		w[i] = r.byte()
	}
	return binary.LittleEndian.Uint64(w[:])
}

var (
	fuzzRunes   = []rune{'a', 'b', 'é', '€', '𝄞', ' ', '\n', '$', '.', '"', '\\', '0', '1', 'k', '\u00a0', '\x00'}
	fuzzNumbers = []float64{0, math.Copysign(0, -1), 1, -1, 0.5, 3, 1e308, -1e308, 5e-324, math.Inf(1), math.Inf(-1), 1 << 53, 9.2e18, -9.3e18, 12.75}
	fuzzStrings = []string{"", "a", "b", "k", "a.b", "0", "items", "é", "$a $b.0 $k.x", "[1,2]", "{\"a\":{\"b\":[true]}}", "  x  ", "nul", "-0"}
)

func (r *fuzzReader) string() string {
	if c := r.byte(); c < 128 {
		return fuzzStrings[int(c)%len(fuzzStrings)]
	}
	n := int(r.byte() % 12)
	rs := make([]rune, n)
	for i := range rs {
		rs[i] = fuzzRunes[int(r.byte())%len(fuzzRunes)]
	}
	return string(rs)
}

func (r *fuzzReader) number() float64 {
	if c := r.byte(); c < 200 {
		return fuzzNumbers[int(c)%len(fuzzNumbers)]
	}
	f := math.Float64frombits(r.u64())
	if math.IsNaN(f) {
		return 0
	}
	return f
}

func (r *fuzzReader) value(depth int) rt.Value {
	k := r.byte() % 7
	if depth > 3 && k >= 4 {
		k -= 3
	}
	switch k {
	case 0:
		return rt.Unit()
	case 1:
		return rt.Bool(r.byte()&1 == 1)
	case 2:
		return rt.Number(r.number())
	case 3:
		return rt.String(r.string())
	case 4:
		n := int(r.byte() % 6)
		es := make([]rt.Value, n)
		for i := range es {
			es[i] = r.value(depth + 1)
		}
		return rt.List(es...)
	case 5:
		n := int(r.byte() % 6)
		fs := make([]rt.Field, n)
		for i := range fs {
			fs[i] = rt.Field{Key: r.string(), Value: r.value(depth + 1)}
		}
		return rt.Object(fs...)
	}
	return rt.Error(r.string(), r.string())
}

func (r *fuzzReader) int() int64 {
	switch r.byte() % 4 {
	case 0:
		return int64(r.byte()%16) - 3
	case 1:
		return int64(r.u64())
	case 2:
		return int64(int8(r.byte()))
	}
	return []int64{math.MaxInt64, math.MinInt64, 1 << 40, -(1 << 40)}[r.byte()%4]
}

// FuzzBuiltins drives each builtin with random operands (numbers with
// -0, infinities, huge and tiny ones but no NaN, strings of multi-byte
// UTF-8, nested lists and objects, errors) through HCALL, with and
// without a position, and compares the result with the runtime function
// called as the Go target calls it: of one kind, value.eq, the same
// JSON, the same error position. Two stores given the same calls give
// the same handles and ticks.
func FuzzBuiltins(f *testing.F) {
	f.Add([]byte{12, 1, 2, 0, 2, 2})                            // num.add(0, 3)
	f.Add([]byte{26, 0, 3, 200, 5, 1, 2, 3, 4, 5, 3, 0, 1})     // str.concat
	f.Add([]byte{24, 1, 5, 2, 0, 1, 1, 3, 1, 3, 2, 2, 2, 3})    // obj.set
	f.Add([]byte{7, 1, 4, 3, 2, 1, 3, 5, 6, 4, 1, 2, 2})        // list.append
	f.Add([]byte{27, 0, 3, 8, 5, 3, 0, 3, 1, 2, 3})             // str.format
	f.Add([]byte{11, 1, 4, 3, 3, 0, 3, 1, 3, 2, 4, 3, 2, 1, 2}) // list.sort_by
	f.Add([]byte{6, 1, 3, 9})                                   // json.parse
	f.Add([]byte{30, 0, 3, 200, 9, 2, 3, 4, 5, 6, 7, 8, 9, 10, 0, 1, 0, 7})
	f.Fuzz(func(t *testing.T, data []byte) {
		r := &fuzzReader{b: data}
		bf := rt.Builtins[int(r.byte())%len(rt.Builtins)]
		pos := int(r.byte() & 1)
		ty := reflect.TypeOf(bf.Func)
		ops := make([]any, ty.NumIn())
		for i := range ops {
			switch ty.In(i).Kind() {
			case reflect.Int64:
				ops[i] = r.int()
			case reflect.Bool:
				ops[i] = r.byte()&1 == 1
			default:
				ops[i] = r.value(0)
			}
		}
		var handles, ticks [2]uint64
		for k := range handles {
			s := newTestHost(t, 1<<30)
			m, tk, fault := hostCall(t, s, bf.Name, pos, ops...)
			if fault != vm.NoFault {
				t.Fatalf("%s%v: %v (%s)", bf.Name, ops, fault, s.Err())
			}
			handles[k], ticks[k] = m.regs[0], tk
			if k == 1 {
				break
			}
			want := direct(bf.Name, pos > 0, ops...)
			switch w := want.(type) {
			case rt.Value:
				got, ok := s.Get(m.regs[0])
				if !ok {
					t.Fatalf("%s%v: r0 = 0x%x is no live handle", bf.Name, ops, m.regs[0])
				}
				if !sameValue(got, w) {
					t.Fatalf("%s%v = %v through the host, %v directly", bf.Name, ops, got, w)
				}
				if _, ok := agentabi.Index(m.regs[0]); !ok {
					t.Fatalf("r0 0x%x is no handle", m.regs[0])
				}
			case int64:
				if int64(m.regs[0]) != w {
					t.Fatalf("%s%v = %d through the host, %d directly", bf.Name, ops, int64(m.regs[0]), w)
				}
			case bool:
				if m.regs[0] > 1 || (m.regs[0] == 1) != w {
					t.Fatalf("%s%v = %d through the host, %v directly", bf.Name, ops, m.regs[0], w)
				}
			}
			if s.Bytes() > s.Limit() {
				t.Fatalf("%d bytes charged over the limit", s.Bytes())
			}
		}
		if handles[0] != handles[1] || ticks[0] != ticks[1] {
			t.Fatalf("%s%v: handle 0x%x, %d ticks, then 0x%x, %d ticks", bf.Name, ops, handles[0], ticks[0], handles[1], ticks[1])
		}
	})
}

// storeStep is what one step of FuzzStore observed.
type storeStep struct {
	r0, ticks, bytes uint64
	fault            vm.Fault
}

// runStore runs the program of a FuzzStore input on a new store: a
// memory limit, then steps that put a value in a variable (registers
// r16–r31) or call a builtin on variables and integers, the result going
// to a variable. It checks each result against the runtime function and
// the store's invariants, and returns what it observed.
func runStore(t *testing.T, data []byte) []storeStep {
	r := &fuzzReader{b: data}
	limit := 2048 + uint64(r.byte())*256
	s := newTestHost(t, limit, agentabi.Constant{Kind: "string", String: "k"})
	m := &fakeMachine{mem: make([]byte, 64)}
	s.attached = m
	for i := 16; i < 32; i++ {
		m.regs[i] = agentabi.Handle(1)
	}
	var steps []storeStep
	for len(r.b) > 0 && len(steps) < 200 {
		op := r.byte()
		dst := 16 + int(r.byte()%16)
		if op%8 == 0 {
			h, f := s.Put(r.value(0))
			steps = append(steps, storeStep{h, 0, s.Bytes(), f})
			if f != vm.NoFault {
				break
			}
			m.regs[dst] = h
			continue
		}
		bf := rt.Builtins[int(op)%len(rt.Builtins)]
		pos := int(r.byte() & 1)
		ty := reflect.TypeOf(bf.Func)
		ops := make([]any, ty.NumIn())
		for i := range ops {
			switch ty.In(i).Kind() {
			case reflect.Int64:
				x := r.int()
				ops[i], m.regs[i] = x, uint64(x)
			case reflect.Bool:
				x := r.byte() & 1
				ops[i], m.regs[i] = x == 1, uint64(x)
			default:
				h := m.regs[16+int(r.byte()%16)]
				v, ok := s.Get(h)
				if !ok {
					t.Fatalf("variable 0x%x is no live handle", h)
				}
				ops[i], m.regs[i] = v, h
			}
		}
		ticks, f := s.call(m, agentabi.HostCallImm(builtinIndex(t, bf.Name), pos))
		steps = append(steps, storeStep{m.regs[0], ticks, s.Bytes(), f})
		if f == vm.OutOfMemory {
			break
		}
		if f != vm.NoFault {
			t.Fatalf("%s%v: %v (%s)", bf.Name, ops, f, s.Err())
		}
		switch w := direct(bf.Name, pos > 0, ops...).(type) {
		case rt.Value:
			got, ok := s.Get(m.regs[0])
			if !ok || !sameValue(got, w) {
				t.Fatalf("%s%v = %v (%v) through the host, %v directly", bf.Name, ops, got, ok, w)
			}
			m.regs[dst] = m.regs[0]
		case int64:
			if int64(m.regs[0]) != w {
				t.Fatalf("%s%v = %d through the host, %d directly", bf.Name, ops, int64(m.regs[0]), w)
			}
		case bool:
			if m.regs[0] > 1 || (m.regs[0] == 1) != w {
				t.Fatalf("%s%v = %d through the host, %v directly", bf.Name, ops, m.regs[0], w)
			}
		}
		if s.Bytes() > s.Limit() {
			t.Fatalf("%d bytes charged, over the limit %d", s.Bytes(), s.Limit())
		}
	}
	// Counting again with every handle a root finds the bytes charged.
	var all []uint64
	for i := 1; i < len(s.vals); i++ {
		if s.vals[i].live {
			all = append(all, agentabi.Handle(uint64(i)))
		}
	}
	before, live := s.Bytes(), s.Live()
	s.collect(nil, all)
	if s.Bytes() != before || s.Live() != live {
		t.Fatalf("%d bytes and %d values charged; %d and %d counted again", before, live, s.Bytes(), s.Live())
	}
	return steps
}

// FuzzStore runs random programs of puts and builtin calls on a small
// store: results agree with the runtime, the store stays within its
// memory, its count of bytes is what counting again finds, and two runs
// of a program observe the same handles, ticks, bytes and faults.
func FuzzStore(f *testing.F) {
	f.Add([]byte{0, 0, 1, 3, 4, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16})
	f.Add([]byte{1, 8, 2, 4, 3, 1, 7, 0, 0, 1, 0, 7, 0, 0, 1, 0, 7, 0, 0, 1, 0, 7, 0, 0, 1, 0})
	f.Add([]byte{2, 16, 3, 4, 4, 2, 1, 2, 24, 3, 1, 3, 3, 3, 24, 3, 1, 3, 3, 3, 26, 5, 0, 5, 5})
	f.Fuzz(func(t *testing.T, data []byte) {
		a, b := runStore(t, data), runStore(t, data)
		if !reflect.DeepEqual(a, b) {
			t.Fatalf("two runs of one program observed\n%v\n%v", a, b)
		}
	})
}
