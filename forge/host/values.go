package host

import (
	"encoding/binary"
	"fmt"
	"math/bits"
	"unsafe"

	"github.com/genesis-toolchain/genesis/forge/agentabi"
	"github.com/genesis-toolchain/genesis/forge/vm"
	rt "github.com/genesis-toolchain/genesis/runtime"
)

// The value store of an agent run (docs/forge.md, "Agent programs: value
// builtins"). The dynamic values of an agent program live here, on the
// host; the sandbox holds handles (agentabi.Handle) to them. Every value
// is charged a deterministic estimate of its size against the store's
// memory, and the values no register, no memory word and no root of the
// host names are collected when the store is full. The builtins on values
// are host calls (HCALL) that read their operands from r0–r2, call the
// runtime's function, the very one the Go target's generated code calls,
// and return the result in r0, with a cost in ticks proportional to the
// bytes and elements they touch.

// Size estimates (bytes) of the store's accounting: a value's slot (the
// size of a runtime.Value), the header of a list's, object's or error's
// payload, and an object field's key on top of its value.
const (
	slotBytes   = 40
	headerBytes = 64
	fieldBytes  = 16
)

// Tick rates of the builtins (docs/forge.md, "Agent programs: value
// builtins"): bytes copied or scanned per tick, bytes encoded, parsed,
// rendered or hashed per tick. An element of a list or field of an
// object copied costs one tick.
const (
	copyBytesPerTick   = 16
	encodeBytesPerTick = 4
)

// Tick rates of a collection: memory bytes scanned per tick, and a tick
// per handle swept and per scanBytesPerTick bytes of live values (whose
// sizes the next builtins may have to measure again).
const scanBytesPerTick = 64

// machine is what the host calls use of a vm.Machine: its registers and
// memory. (An interface so that the store can be tested on its own.)
type machine interface {
	Register(r uint8) uint64
	SetRegister(r uint8, v uint64)
	Memory() []byte
}

// roots is what a collection reads of a machine.
type roots interface {
	Register(r uint8) uint64
	Memory() []byte
}

// slot is one entry of the store.
type slot struct {
	v    rt.Value
	size uint64   // what the value is charged
	lin  *lineage // the list or object version chain it is the tip of, if any
	live bool
}

// lineage models a list's or large object's backing array as the runtime
// grows it (runtime appendList, objSet), for the cost of list.append and
// obj.set: n is the length of its longest version the program made, cap
// the array's length. Appending to the longest version with room left is
// done in place, anything else copies. The model follows only what this
// store did, so the cost is the same on every run of the same program and
// inputs, whatever values the effects share with the program.
type lineage struct{ n, cap uint64 }

// ValueHost is the value store of one agent run and the host calls of
// its builtins (a vm.HostCalls). It is not safe for concurrent use: a run
// runs its machine, and so its host calls, on one goroutine.
type ValueHost struct {
	meta   *agentabi.Metadata
	fns    []*builtin // by the program's builtin index
	vals   []slot     // by index; 0 is no value
	consts uint64     // the constants are indices 1..consts
	free   []uint64   // free indices, in decreasing order (the lowest is taken first)
	bytes  uint64     // charged now
	limit  uint64     // the most bytes the store may hold
	debt   uint64     // ticks of collections Put made outside a host call, charged at the next one

	// attached is the machine whose registers and memory are the roots
	// of the collections Put starts; extra adds the host's own roots.
	attached roots
	extra    func() []uint64

	// memo caches the sizes of lists and objects, by version (the
	// address of the backing array and the length): a version never
	// changes. It only saves time (the sizes are the same without it),
	// and it is emptied at each collection, so it keeps no garbage alive
	// for long.
	memo map[memoKey]uint64

	collections int
	err         string
	stop        any
}

type memoKey struct {
	p unsafe.Pointer
	n int
}

// NewValueHost returns the value store of a run of the agent program
// meta describes, holding at most memory bytes of values (the run's
// memory quota minus the machine's): it resolves meta.Builtins against
// the runtime's builtins (a name the runtime does not know is an error
// naming it) and loads meta.Constants as the handles 1 to K.
func NewValueHost(meta *agentabi.Metadata, memory uint64) (*ValueHost, error) {
	s := &ValueHost{meta: meta, limit: memory, vals: make([]slot, 1, 1+len(meta.Constants)+64), memo: map[memoKey]uint64{}}
	if len(meta.Builtins) > agentabi.MaxBuiltins {
		return nil, fmt.Errorf("the program names %d builtins, more than %d", len(meta.Builtins), agentabi.MaxBuiltins)
	}
	for i, name := range meta.Builtins {
		b, ok := builtinNamed(name)
		if !ok {
			return nil, fmt.Errorf("builtin %d of the program, %q, is not a builtin of this runtime", i, name)
		}
		s.fns = append(s.fns, b)
	}
	for i, c := range meta.Constants {
		var v rt.Value
		switch c.Kind {
		case "unit":
		case "bool":
			v = rt.Bool(c.Bool)
		case "number":
			v = rt.Number(c.Number)
		case "string":
			v = rt.String(c.String)
		default:
			return nil, fmt.Errorf("constant %d of the program is of unknown kind %q", i+1, c.Kind)
		}
		size := s.sizeOf(v)
		if s.bytes+size > s.limit {
			return nil, fmt.Errorf("the program's %d constants need more than the %d bytes of memory its values may use", len(meta.Constants), s.limit)
		}
		s.bytes += size
		s.vals = append(s.vals, slot{v: v, size: size, live: true})
	}
	s.consts = uint64(len(meta.Constants))
	return s, nil
}

// Attach sets the machine whose registers and memory are the roots of
// the collections that Put starts when the store is full (HostCall
// collects with the machine it is given), and extra, when not nil, the
// function that returns the host's own roots: the handles it holds
// outside the machine (the registers of outer frames it saved while it
// runs a parallel branch, the operands of an effect it is servicing).
// HostCall uses extra too. Without an attached machine, Put does not
// collect: it fails with OUT_OF_MEMORY when the store is full.
func (s *ValueHost) Attach(m *vm.Machine, extra func() []uint64) {
	if m == nil {
		s.attached = nil
	} else {
		s.attached = m
	}
	s.extra = extra
}

// Err returns what the latest host call that faulted refused (the
// builtin, the operand and why), for the run's error message; "" when
// none has.
func (s *ValueHost) Err() string { return s.err }

// Stop returns the panic of the latest host call that stopped the run
// from inside a runtime builtin (a value over runtime.ValueLimit: the
// runtime's stop of status budget_exceeded, kind "limit.memory"), and
// nil when none has. The host call faulted HOST_FAULT instead of letting
// it unwind the machine; the run loop re-panics it where runtime.Run
// recovers it, so that the run ends as the Go target's does.
func (s *ValueHost) Stop() any { return s.stop }

// Bytes returns the bytes charged now for the values of the store.
func (s *ValueHost) Bytes() uint64 { return s.bytes }

// Limit returns the most bytes the store may hold.
func (s *ValueHost) Limit() uint64 { return s.limit }

// Live returns the number of values in the store (the constants
// included).
func (s *ValueHost) Live() int { return len(s.vals) - 1 - len(s.free) }

// Collections returns how many collections the store has made.
func (s *ValueHost) Collections() int { return s.collections }

// Get returns the value handle h names, and false when h names no live
// value.
func (s *ValueHost) Get(h uint64) (rt.Value, bool) {
	i, ok := agentabi.Index(h)
	if !ok || i >= uint64(len(s.vals)) || !s.vals[i].live {
		return rt.Value{}, false
	}
	return s.vals[i].v, true
}

// Put stores v and returns its handle: the lowest free index. When the
// store would go over its memory it first collects (with the attached
// machine's roots); OUT_OF_MEMORY when it is still over.
func (s *ValueHost) Put(v rt.Value) (uint64, vm.Fault) {
	before := s.collections
	h, f := s.put(v, s.sizeOf(v), nil, s.attached)
	if s.collections != before {
		s.debt += s.collectTicks(s.attached)
	}
	return h, f
}

// put stores v of the given size and lineage, collecting with m's roots
// (none when m is nil) when the store is full.
func (s *ValueHost) put(v rt.Value, size uint64, lin *lineage, m roots) (uint64, vm.Fault) {
	if s.bytes+size > s.limit || s.bytes+size < s.bytes {
		if m != nil {
			s.collect(m, nil)
		}
		if s.bytes+size > s.limit || s.bytes+size < s.bytes {
			s.err = fmt.Sprintf("the values of the run need more than the %d bytes of memory they may use (%d bytes held, a value of %d bytes more)", s.limit, s.bytes, size)
			return 0, vm.OutOfMemory
		}
	}
	var i uint64
	if n := len(s.free); n > 0 {
		i, s.free = s.free[n-1], s.free[:n-1]
	} else {
		i = uint64(len(s.vals))
		if i > agentabi.MaxIndex {
			s.err = "the run has more values than handles can name"
			return 0, vm.OutOfMemory
		}
		s.vals = append(s.vals, slot{})
	}
	s.vals[i] = slot{v: v, size: size, lin: lin, live: true}
	s.bytes += size
	return agentabi.Handle(i), vm.NoFault
}

// Collect frees every value that no register of m, no 8-byte-aligned
// word of m's memory and none of roots names: a word names the value of
// index i when it equals its handle (the collection is conservative: an
// integer equal to a live handle keeps its value). The constants are
// never freed. Freed indices are reused lowest first, so a program run
// again on the same inputs gets the same handles.
func (s *ValueHost) Collect(m *vm.Machine, roots ...uint64) {
	s.collect(m, roots)
}

// collect is Collect on any machine view (nil: no machine roots).
func (s *ValueHost) collect(m roots, extra []uint64) {
	s.collections++
	n := uint64(len(s.vals))
	marked := make([]uint64, (n+63)/64)
	mark := func(w uint64) {
		if w&agentabi.HandleMask != agentabi.HandleTag {
			return
		}
		if i := w &^ agentabi.HandleMask; i < n {
			marked[i/64] |= 1 << (i % 64)
		}
	}
	if m != nil {
		for r := 0; r < 256; r++ {
			mark(m.Register(uint8(r)))
		}
		mem := m.Memory()
		for a := 0; a+8 <= len(mem); a += 8 {
			if w := binary.LittleEndian.Uint64(mem[a:]); w&agentabi.HandleMask == agentabi.HandleTag {
				mark(w)
			}
		}
	}
	for _, w := range extra {
		mark(w)
	}
	if s.extra != nil {
		for _, w := range s.extra() {
			mark(w)
		}
	}
	s.free = s.free[:0]
	for i := n - 1; i > s.consts; i-- {
		sl := &s.vals[i]
		if sl.live && marked[i/64]&(1<<(i%64)) == 0 {
			s.bytes -= sl.size
			*sl = slot{}
		}
		if !sl.live {
			s.free = append(s.free, i)
		}
	}
	// Trailing free indices shrink the table, so that a store that
	// emptied does not keep scanning its old high-water mark.
	for len(s.free) > 0 && s.free[0] == uint64(len(s.vals))-1 {
		s.free = s.free[1:]
		s.vals = s.vals[:len(s.vals)-1]
	}
	clear(s.memo)
}

// collectTicks is what a collection with m's roots costs: its memory
// scanned, its handles swept, its live values measured again.
func (s *ValueHost) collectTicks(m roots) uint64 {
	t := uint64(len(s.vals)) + s.bytes/scanBytesPerTick
	if m != nil {
		t += uint64(len(m.Memory()))/scanBytesPerTick + 256/8
	}
	return t
}

// fail records a host call's refusal and returns HOST_FAULT.
func (s *ValueHost) fail(format string, args ...any) (uint64, vm.Fault) {
	s.err = fmt.Sprintf(format, args...)
	return 0, hostFault
}

// hostFault is vm.HostFault (HOST_FAULT, 0x0B), until the machine has it.
const hostFault vm.Fault = 0x0B

// HostCall services HCALL imm on m (vm.HostCalls): the builtin and the
// source position the immediate names (agentabi.SplitHostCallImm), its
// operands in r0–r2 (a dyn operand a handle, an i64 the integer, a bool
// 0 or 1), its result in r0 in the same encoding. It returns the ticks
// the call costs beyond HCALL's own (see "Agent programs: value builtins"
// in docs/forge.md, and the collections it made); HOST_FAULT, with Err
// saying why, for an immediate naming no builtin or position, an operand
// that is no live handle or no bool, or a runtime stop (Stop);
// OUT_OF_MEMORY when the result does not fit in the store even after a
// collection.
func (s *ValueHost) HostCall(m *vm.Machine, imm uint32) (uint64, vm.Fault) {
	// The assertion bridges the time until the machine has SetRegister
	// (issue 16, helper A): then it always holds.
	var x any = m
	mm, ok := x.(machine)
	if !ok {
		return s.fail("HCALL 0x%x: this machine cannot take a host call's result", imm)
	}
	return s.call(mm, imm)
}

// call is HostCall on any machine view.
func (s *ValueHost) call(m machine, imm uint32) (ticks uint64, f vm.Fault) {
	bi, pi := agentabi.SplitHostCallImm(imm)
	if bi >= len(s.fns) {
		return s.fail("HCALL 0x%x: builtin %d, but the program names %d builtins", imm, bi, len(s.fns))
	}
	if pi > len(s.meta.Positions) {
		return s.fail("HCALL 0x%x: position %d, but the program has %d positions", imm, pi, len(s.meta.Positions))
	}
	b := s.fns[bi]
	var a args
	for k, p := range b.params {
		w := m.Register(uint8(k))
		switch p {
		case kDyn:
			i, ok := agentabi.Index(w)
			if !ok || i >= uint64(len(s.vals)) || !s.vals[i].live {
				return s.fail("%s: operand %d (r%d = 0x%x) is no live value handle", b.name, k+1, k, w)
			}
			a.v[k], a.size[k], a.lin[k] = s.vals[i].v, s.vals[i].size, s.vals[i].lin
		case kInt:
			a.i[k] = int64(w)
		case kBool:
			if w > 1 {
				return s.fail("%s: operand %d (r%d = 0x%x) is no bool (0 or 1)", b.name, k+1, k, w)
			}
			a.b[k] = w == 1
		}
	}
	var r result
	if stop := s.invoke(b, &a, &r); stop != nil {
		s.stop = stop
		return s.fail("%s: %v", b.name, stop)
	}
	ticks = b.cost(s, &a, &r)
	switch b.result {
	case kInt:
		m.SetRegister(0, uint64(r.i))
	case kBool:
		w := uint64(0)
		if r.b {
			w = 1
		}
		m.SetRegister(0, w)
	case kDyn:
		if pi > 0 && r.v.IsError() {
			p := s.meta.Positions[pi-1]
			r.v = rt.ErrorAt(r.v, p.File, p.Line, p.Col)
		}
		size := r.size
		if !r.sized {
			size = s.sizeOf(r.v)
		}
		before := s.collections
		h, f := s.put(r.v, size, r.lin, m)
		if s.collections != before {
			ticks = sat(ticks, s.collectTicks(m))
		}
		if f != vm.NoFault {
			return ticks, f
		}
		m.SetRegister(0, h)
	}
	ticks, s.debt = sat(ticks, s.debt), 0
	return ticks, vm.NoFault
}

// invoke calls the builtin's runtime function and returns the panic of a
// runtime stop (a value over the value limit), nil otherwise.
func (s *ValueHost) invoke(b *builtin, a *args, r *result) (stop any) {
	defer func() { stop = recover() }()
	b.call(a, r)
	return nil
}

// sat is a+b, saturated.
func sat(a, b uint64) uint64 {
	if c := a + b; c >= a {
		return c
	}
	return 1<<64 - 1
}

// sizeOf returns the bytes value v is charged: its slot, and for a
// string its bytes, for an error its kind and message, for a list or an
// object a header and each element (an object's with its key), counted
// as a tree (a value held twice counts twice). It saturates.
func (s *ValueHost) sizeOf(v rt.Value) uint64 {
	switch v.Kind() {
	case rt.KindString:
		return slotBytes + uint64(v.Len())
	case rt.KindError:
		return slotBytes + headerBytes + uint64(len(v.ErrKind())+len(v.ErrMessage()))
	case rt.KindList, rt.KindObject:
		return s.composite(v)
	}
	return slotBytes
}

// composite is sizeOf for a list or an object, without recursion (a
// value may nest a million deep), through the memo.
func (s *ValueHost) composite(v rt.Value) uint64 {
	type frame struct {
		v    rt.Value
		key  memoKey
		i    int
		size uint64
	}
	var stack []frame
	push := func(v rt.Value) (uint64, bool) {
		n := v.Len()
		if n == 0 {
			return slotBytes + headerBytes, true
		}
		var k memoKey
		if v.Kind() == rt.KindList {
			k = memoKey{unsafe.Pointer(&v.Elems()[0]), n}
		} else {
			k = memoKey{unsafe.Pointer(&v.Keys()[0]), n}
		}
		if sz, ok := s.memo[k]; ok {
			return sz, true
		}
		stack = append(stack, frame{v: v, key: k, size: slotBytes + headerBytes})
		return 0, false
	}
	if sz, done := push(v); done {
		return sz
	}
	var last uint64
	for {
		f := &stack[len(stack)-1]
		if f.i == f.v.Len() {
			last = f.size
			s.memo[f.key] = last
			stack = stack[:len(stack)-1]
			if len(stack) == 0 {
				return last
			}
			g := &stack[len(stack)-1]
			g.size = sat(g.size, last)
			g.i++
			continue
		}
		var e rt.Value
		if f.v.Kind() == rt.KindList {
			e = f.v.Index(f.i)
		} else {
			var key string
			key, e = f.v.Field(f.i)
			f.size = sat(f.size, fieldBytes+uint64(len(key)))
		}
		switch e.Kind() {
		case rt.KindList, rt.KindObject:
			if sz, done := push(e); done {
				f.size = sat(f.size, sz)
				f.i++
			}
			// else: the pushed frame adds its size when it is done
		default:
			f.size = sat(f.size, s.sizeOf(e))
			f.i++
		}
	}
}

// Operand and result encodings of a builtin.
type kind uint8

const (
	kDyn kind = iota
	kInt
	kBool
)

// args are a host call's operands: the values (with their charged sizes
// and lineages), integers and bools, by position.
type args struct {
	v    [3]rt.Value
	size [3]uint64
	lin  [3]*lineage
	i    [3]int64
	b    [3]bool
}

// result is a host call's result, with the size and lineage of a value
// when its cost function knows them (sized).
type result struct {
	v     rt.Value
	i     int64
	b     bool
	size  uint64
	sized bool
	lin   *lineage
}

// builtin is one builtin as a host call: its runtime function adapted
// to args and result, and its cost.
type builtin struct {
	name   string
	params []kind
	result kind
	call   func(*args, *result)
	cost   func(*ValueHost, *args, *result) uint64
}

// builtinNamed returns the host call of the runtime builtin name.
func builtinNamed(name string) (*builtin, bool) {
	for i := range hostBuiltins {
		if hostBuiltins[i].name == name {
			return &hostBuiltins[i], true
		}
	}
	return nil, false
}

// hostBuiltins are the runtime's builtins (runtime.Builtins, in its
// order) as host calls.
var hostBuiltins = func() []builtin {
	bs := make([]builtin, len(rt.Builtins))
	for i, f := range rt.Builtins {
		b := &bs[i]
		b.name = f.Name
		b.params, b.result, b.call = adapt(f.Func)
		b.cost = costs[f.Name]
		if b.call == nil || b.cost == nil {
			// Caught by TestBuiltinTable; a builtin without either stays
			// unresolvable (NewValueHost refuses a program naming it).
			b.name = "\x00" + f.Name
		}
	}
	return bs
}()

// adapt returns the operand and result encodings of a runtime builtin
// function and its call on args and result (nil call: a signature no
// builtin has).
func adapt(fn any) ([]kind, kind, func(*args, *result)) {
	d, i, b := kDyn, kInt, kBool
	switch f := fn.(type) {
	case func() rt.Value:
		return nil, d, func(a *args, r *result) { r.v = f() }
	case func(rt.Value) rt.Value:
		return []kind{d}, d, func(a *args, r *result) { r.v = f(a.v[0]) }
	case func(rt.Value, rt.Value) rt.Value:
		return []kind{d, d}, d, func(a *args, r *result) { r.v = f(a.v[0], a.v[1]) }
	case func(rt.Value, rt.Value, rt.Value) rt.Value:
		return []kind{d, d, d}, d, func(a *args, r *result) { r.v = f(a.v[0], a.v[1], a.v[2]) }
	case func(rt.Value, int64) rt.Value:
		return []kind{d, i}, d, func(a *args, r *result) { r.v = f(a.v[0], a.i[1]) }
	case func(rt.Value, int64, int64) rt.Value:
		return []kind{d, i, i}, d, func(a *args, r *result) { r.v = f(a.v[0], a.i[1], a.i[2]) }
	case func(int64) rt.Value:
		return []kind{i}, d, func(a *args, r *result) { r.v = f(a.i[0]) }
	case func(bool) rt.Value:
		return []kind{b}, d, func(a *args, r *result) { r.v = f(a.b[0]) }
	case func(rt.Value) int64:
		return []kind{d}, i, func(a *args, r *result) { r.i = f(a.v[0]) }
	case func(rt.Value, rt.Value) int64:
		return []kind{d, d}, i, func(a *args, r *result) { r.i = f(a.v[0], a.v[1]) }
	case func(rt.Value) bool:
		return []kind{d}, b, func(a *args, r *result) { r.b = f(a.v[0]) }
	case func(rt.Value, rt.Value) bool:
		return []kind{d, d}, b, func(a *args, r *result) { r.b = f(a.v[0], a.v[1]) }
	}
	return nil, 0, nil
}

// Cost helpers: ticks for n bytes copied or scanned, for n bytes
// encoded, parsed, rendered or hashed.
func copyTicks(n uint64) uint64   { return n / copyBytesPerTick }
func encodeTicks(n uint64) uint64 { return n / encodeBytesPerTick }

// weight is what a traversal of v touches: nothing for unit, bools and
// numbers, a string's bytes, an error's kind and message, a list's or
// object's charged size (size, known from its handle).
func weight(v rt.Value, size uint64) uint64 {
	switch v.Kind() {
	case rt.KindString:
		return uint64(v.Len())
	case rt.KindError:
		return uint64(len(v.ErrKind()) + len(v.ErrMessage()))
	case rt.KindList, rt.KindObject:
		return size
	}
	return 0
}

// text is what rendering operand v as text costs: nothing for a string
// (itself), its encoding otherwise (estimated by its size).
func text(v rt.Value, size uint64) uint64 {
	if v.Kind() == rt.KindString {
		return 0
	}
	return encodeTicks(size)
}

// made is what a result costs to build: the bytes of a new string or
// error copied.
func made(r *result) uint64 {
	switch r.v.Kind() {
	case rt.KindString:
		return copyTicks(uint64(r.v.Len()))
	case rt.KindError:
		return copyTicks(uint64(len(r.v.ErrKind()) + len(r.v.ErrMessage())))
	}
	return 0
}

// madeError is what an error result costs to build (a result that is an
// element of an operand is no copy).
func madeError(r *result) uint64 {
	if r.v.IsError() {
		return made(r)
	}
	return 0
}

// log2 is ⌈log2(n+1)⌉.
func log2(n uint64) uint64 { return uint64(bits.Len64(n)) }

// costs are the ticks of each builtin beyond HCALL's 2, by name, from
// the sizes of its operands and result: the table of docs/forge.md,
// "Agent programs: value builtins".
var costs = map[string]func(*ValueHost, *args, *result) uint64{
	"error.is":      zero,
	"error.kind":    zero,
	"error.message": zero,
	"error.new": func(_ *ValueHost, a *args, r *result) uint64 {
		return text(a.v[0], a.size[0]) + text(a.v[1], a.size[1]) + made(r)
	},
	"json.canonical": encodes,
	"json.encode":    encodes,
	"json.parse": func(_ *ValueHost, a *args, r *result) uint64 {
		return encodeTicks(uint64(a.v[0].Len())) + made(r)
	},
	"list.append": func(_ *ValueHost, a *args, r *result) uint64 {
		l := a.v[0]
		if l.Kind() != rt.KindList || r.v.Kind() != rt.KindList {
			return made(r)
		}
		n := uint64(l.Len())
		r.size, r.sized = sat(a.size[0], a.size[1]), true
		if lin := a.lin[0]; lin != nil && lin.n == n && n < lin.cap {
			lin.n = n + 1
			r.lin = lin
			return 0
		}
		r.lin = &lineage{n: n + 1, cap: max(4, 2*n)}
		return n
	},
	"list.get": func(_ *ValueHost, a *args, r *result) uint64 { return madeError(r) },
	"list.len": zero,
	"list.new": zero,
	"list.sort_by": func(_ *ValueHost, a *args, r *result) uint64 {
		if r.v.Kind() != rt.KindList {
			return made(r)
		}
		n := uint64(a.v[0].Len())
		lg := log2(n)
		r.size, r.sized = a.size[0], true
		return n*(lg+1) + copyTicks(weight(a.v[1], a.size[1]))*lg
	},
	"num.add":      resultOnly,
	"num.div":      resultOnly,
	"num.from_int": zero,
	"num.mod":      resultOnly,
	"num.mul":      resultOnly,
	"num.neg":      resultOnly,
	"num.sub":      resultOnly,
	"num.to_int":   zero,
	"obj.get":      keyed,
	"obj.has":      keyed,
	"obj.keys": func(_ *ValueHost, a *args, r *result) uint64 {
		return uint64(a.v[0].Len())
	},
	"obj.new": zero,
	"obj.set": func(s *ValueHost, a *args, r *result) uint64 {
		o := a.v[0]
		t := keyTicks(a)
		if o.Kind() != rt.KindObject || r.v.Kind() != rt.KindObject {
			return t + made(r)
		}
		n := uint64(o.Len())
		key, _ := r.v.Field(int(n)) // the new key, when there is one
		if uint64(r.v.Len()) == n {
			// An existing key: the object is copied with the new value.
			old, _ := o.Get(keyOf(a.v[1]))
			r.size, r.sized = sat(a.size[0]-min(a.size[0], s.sizeOf(old)), a.size[2]), true
			r.lin = &lineage{n: n, cap: n}
			return t + n
		}
		r.size, r.sized = sat(sat(a.size[0], a.size[2]), fieldBytes+uint64(len(key))), true
		if n < 12 {
			// A small object is copied (runtime objSet).
			r.lin = &lineage{n: n + 1, cap: n + 1}
			return t + n
		}
		if lin := a.lin[0]; lin != nil && lin.n == n && n < lin.cap {
			lin.n = n + 1
			r.lin = lin
			return t
		}
		r.lin = &lineage{n: n + 1, cap: 2 * n}
		return t + n
	},
	"path.get": func(_ *ValueHost, a *args, r *result) uint64 {
		return encodeTicks(weight(a.v[1], 0))
	},
	"str.concat": func(_ *ValueHost, a *args, r *result) uint64 {
		return text(a.v[0], a.size[0]) + text(a.v[1], a.size[1]) + made(r)
	},
	"str.format": func(_ *ValueHost, a *args, r *result) uint64 {
		t := a.v[0]
		n := uint64(t.Len())
		if t.Kind() != rt.KindString {
			n = a.size[0]
		}
		return encodeTicks(n) + encodeTicks(uint64(r.v.Len()))
	},
	"str.index": func(_ *ValueHost, a *args, r *result) uint64 {
		return copyTicks(weight(a.v[0], 0) + weight(a.v[1], 0))
	},
	"str.len": func(_ *ValueHost, a *args, r *result) uint64 { return copyTicks(weight(a.v[0], 0)) },
	"str.slice": func(_ *ValueHost, a *args, r *result) uint64 {
		if a.v[0].Kind() != rt.KindString {
			return 0
		}
		return encodeTicks(uint64(a.v[0].Len())) + made(r)
	},
	"str.trim": func(_ *ValueHost, a *args, r *result) uint64 {
		if a.v[0].Kind() != rt.KindString {
			r.size, r.sized = a.size[0], true
			return 0
		}
		return copyTicks(uint64(a.v[0].Len())) + made(r)
	},
	"value.bool": zero,
	"value.compare": func(_ *ValueHost, a *args, r *result) uint64 {
		if a.v[0].Kind() != rt.KindString || a.v[1].Kind() != rt.KindString {
			return 0
		}
		return copyTicks(uint64(min(a.v[0].Len(), a.v[1].Len())))
	},
	"value.contains": func(_ *ValueHost, a *args, r *result) uint64 {
		h := a.v[0]
		switch h.Kind() {
		case rt.KindString:
			return copyTicks(weight(h, 0) + weight(a.v[1], 0))
		case rt.KindList:
			return copyTicks(a.size[0])
		}
		return copyTicks(weight(a.v[1], 0))
	},
	"value.eq": func(_ *ValueHost, a *args, r *result) uint64 {
		return copyTicks(min(weight(a.v[0], a.size[0]), weight(a.v[1], a.size[1])))
	},
	"value.hash": encodes,
	"value.kind": zero,
	"value.string": func(_ *ValueHost, a *args, r *result) uint64 {
		if a.v[0].Kind() == rt.KindString {
			r.size, r.sized = a.size[0], true
			return 0
		}
		return encodeTicks(a.size[0]) + made(r)
	},
	"value.truthy": zero,
}

func zero(*ValueHost, *args, *result) uint64 { return 0 }

// resultOnly costs the result it builds (an error's message).
func resultOnly(_ *ValueHost, _ *args, r *result) uint64 { return made(r) }

// encodes costs the encoding of its operand and the string it builds.
func encodes(_ *ValueHost, a *args, r *result) uint64 {
	return encodeTicks(a.size[0]) + made(r)
}

// keyed costs an object lookup: the key's bytes (hashed or compared),
// rendered first when it is no string.
func keyed(_ *ValueHost, a *args, r *result) uint64 { return keyTicks(a) }

// keyTicks is the cost of operand 2 as an object key.
func keyTicks(a *args) uint64 {
	k := a.v[1]
	if k.Kind() == rt.KindString {
		return copyTicks(uint64(k.Len()))
	}
	return encodeTicks(a.size[1])
}

// keyOf is the key an object builtin uses for k (runtime keyString): a
// string as itself, anything else rendered.
func keyOf(k rt.Value) string {
	if s, ok := k.AsString(); ok {
		return s
	}
	return k.String()
}
