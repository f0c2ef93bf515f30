package host

import (
	"encoding/binary"
	"fmt"
	"unsafe"

	"github.com/genesis-toolchain/genesis/forge/agentabi"
	"github.com/genesis-toolchain/genesis/forge/vm"
	rt "github.com/genesis-toolchain/genesis/runtime"
)

// The value store of an agent run (docs/forge.md, "Agent programs: value
// builtins"). The dynamic values of an agent program live here, on the
// host; the sandbox holds handles (agentabi.Handle) to them. The builtins
// on values are host calls (HCALL) that read their operands from r0–r2,
// call the runtime's function, the very one the Go target's generated
// code calls, and return the result in r0, at a cost in ticks that grows
// with the bytes and elements they touch.
//
// Memory. Each handle is charged its slot, and the memory its value holds
// is charged once, in units: a unit is what one builtin allocated (a
// string's bytes, a list's or object's array of slots, the whole of a
// value that came from outside: a constant, an effect's result, a parsed
// JSON text), with the units its elements keep alive. A value that shares
// memory with another (an element taken out of a list, a substring, the
// versions of a list appended to in place) shares its unit. The units
// follow what the store did, not the runtime's pointers, so the charge is
// the same on every run of the same program and inputs. When a result
// would take the store over its memory, the store collects: it frees the
// handles no register, no aligned memory word and no root names and
// counts again the units the others keep alive; OUT_OF_MEMORY when it is
// still over.

// Size estimates (bytes) of the store's accounting: a value's slot (the
// size of a runtime.Value), the header of a list's, object's or error's
// payload, and an object field's key on top of its value.
const (
	slotBytes   = 40
	headerBytes = 64
	fieldBytes  = 16
)

// machine is what the host calls use of a vm.Machine. (An interface so
// that the store can be tested on its own.)
type machine interface {
	roots
	SetRegister(r uint8, v uint64)
	Ticks() uint64
	Budget() uint64
}

// roots is what a collection reads of a machine.
type roots interface {
	Register(r uint8) uint64
	Memory() []byte
}

// slot is one entry of the store.
type slot struct {
	v    rt.Value
	size uint64 // the value's size as a tree (sizeOf), for the costs of builtins
	u    *unit  // the memory the value holds; nil for none beyond its slot
	// own is set when v is a version of u's array (a list or object u's
	// lineage describes: see unit), so that appending to it may be in
	// place.
	own  bool
	live bool
}

// unit is memory charged once, whatever number of handles share it.
//
// A unit of a list or object is also its backing array's lineage, as
// the runtime grows it (appendList, objSet): n is the length of the
// longest version the program made, cap the array's length. Appending to
// the longest version with room left is in place; anything else copies.
// refs are the units the elements keep alive: by position (refs[i] for
// element i, nil for one that holds nothing) when pos is set, else as a
// set.
type unit struct {
	bytes  uint64
	refs   []*unit
	pos    bool
	n, cap uint64
	mark   uint32
	// owner is the store that made the unit. A branch's store (Branch)
	// shares the units of the store it started from, which it counts in
	// its base and never changes: it only marks, counts and grows its
	// own.
	owner *ValueHost
}

// ValueHost is the value store of one agent run and the host calls of
// its builtins (a vm.HostCalls). It is not safe for concurrent use: a
// machine, and so its host calls, runs on one goroutine; the branches of
// a parallel block, which run at once, have stores of their own
// (Branch).
type ValueHost struct {
	// Roots, when set, returns the register files of the machine states
	// the host saved (vm.Saved.Registers) while it runs a nested call on
	// the same machine: their words are roots of every collection, as
	// the machine's registers are. (The agent host runs parallel
	// branches on machines of their own, with stores of their own, and
	// sets none.)
	Roots func() [][256]uint64
	// Check, when set, is called at every host call before the builtin
	// runs: where the run loop checks cancellation and the run's limits
	// (the Go target does at loop iterations, runtime.Run.Tick). A
	// panic in it, a runtime stop, is recovered like a builtin's: the
	// call faults HOST_FAULT and Stop holds it.
	Check func()

	meta   *agentabi.Metadata
	fns    []*builtin // by the program's builtin index
	vals   []slot     // by index; 0 is no value
	consts uint64     // the constants are indices 1..consts
	// initial and initialBytes are vals and bytes with the constants
	// loaded, which Reset restores.
	initial      []slot
	initialBytes uint64
	free         []uint64 // free indices, in decreasing order (the lowest is taken first)
	bytes        uint64   // charged now
	limit        uint64   // the most bytes the store may hold
	debt         uint64   // ticks of collections Put made outside a host call, charged at the next one
	// branch is set on the store of a parallel branch (Branch), whose
	// base is the bytes of the store it started from, counted in bytes
	// with its constants and units.
	branch bool
	base   uint64
	epoch  uint32 // of the latest collection's marks

	// attached is the machine whose registers and memory are the roots
	// of the collections Put starts (Attach, else the machine of the
	// latest host call); extra adds the host's own roots.
	attached roots
	extra    func() []uint64

	// memo caches the tree sizes of lists and objects by version (the
	// address of the backing array and the length): a version never
	// changes. It only saves time (sizes are the same without it), and
	// it is emptied at each collection, so that it keeps no garbage
	// alive for long.
	memo map[memoKey]uint64

	collections int
	err         string
	stop        any

	// left is the ticks the machine has left for the call being made
	// (for a pre that must not do work the ticks cannot pay).
	left uint64

	// a and r are the operands and result of the host call being made,
	// kept here so that a call allocates nothing of its own (they keep
	// the latest call's values reachable for Go until the next).
	a args
	r result
}

// memoMin is the smallest tree size the memo keeps: a smaller value is
// measured again (a few dozen elements at most), which keeps the memo to
// about an entry per memoMin bytes of values.
const memoMin = 4096

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
	if len(meta.Positions) >= agentabi.MaxPositions {
		return nil, fmt.Errorf("the program has %d positions, more than %d", len(meta.Positions), agentabi.MaxPositions-1)
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
		if _, f := s.Put(v); f != vm.NoFault {
			return nil, fmt.Errorf("the program's %d constants need more than the %d bytes of memory its values may use", len(meta.Constants), s.limit)
		}
	}
	s.consts = uint64(len(meta.Constants))
	s.initial = append([]slot(nil), s.vals...)
	s.initialBytes = s.bytes
	return s, nil
}

// Reset returns the store to its state after NewValueHost (the constants
// and nothing else, no machine attached, no Roots or Check), keeping its
// allocations: for a host that runs a program many times (forge exec
// --repeat). The handles, costs and collections of the next run are those
// of a new store's.
func (s *ValueHost) Reset() {
	clear(s.vals)
	s.vals = append(s.vals[:0], s.initial...)
	s.free = s.free[:0]
	s.bytes, s.debt, s.collections = s.initialBytes, 0, 0 // epoch goes on: the constants keep their marks
	s.attached, s.extra, s.Roots, s.Check = nil, nil, nil, nil
	s.err, s.stop, s.left = "", nil, 0
	clear(s.memo)
	s.a, s.r = args{}, result{}
}

// Attach sets the machine whose registers and memory are the roots of
// the collections that Put starts when the store is full (HostCall
// collects with the machine it is given, and a store with no machine
// attached takes the machine of its latest host call), and extra, when
// not nil, the function that returns the host's own roots besides Roots:
// the handles it holds outside the machine (the operands of an effect it
// is servicing). Every collection uses extra and Roots. Without a
// machine, Put does not collect: it fails with OUT_OF_MEMORY when the
// store is full. A run loop attaches its machine as soon as it creates
// it, so that the collections an effect's result starts do not depend
// on whether a host call came first.
func (s *ValueHost) Attach(m *vm.Machine, extra func() []uint64) {
	if m == nil {
		s.attached = nil
	} else {
		s.attached = m
	}
	s.extra = extra
}

// Err returns what the latest host call or Put that failed refused (the
// builtin, the operand and why, or the memory it needed), for the run's
// error message; "" when none has.
func (s *ValueHost) Err() string { return s.err }

// Stop returns the panic of the latest host call that stopped the run
// from inside a runtime builtin (a value over runtime.ValueLimit: the
// runtime's stop of status budget_exceeded, kind "limit.memory"), and
// nil when none has. The host call faulted HOST_FAULT instead of letting
// the panic unwind the machine; the run loop re-panics it where
// runtime.Run recovers it, so that the run ends as the Go target's does.
func (s *ValueHost) Stop() any { return s.stop }

// Bytes returns the bytes charged now for the values of the store.
func (s *ValueHost) Bytes() uint64 { return s.bytes }

// Limit returns the most bytes the store may hold.
func (s *ValueHost) Limit() uint64 { return s.limit }

// Live returns the number of values in the store (the constants
// included), collected or not.
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

// Put stores v, a value from outside the program (an effect's result,
// the run's input), and returns its handle: the lowest free index. Its
// memory is one new unit. When the store would go over its memory it
// first collects (with the attached machine's roots, whose cost in
// ticks the next host call pays); OUT_OF_MEMORY when it is still over.
func (s *ValueHost) Put(v rt.Value) (uint64, vm.Fault) {
	size := s.sizeOf(v)
	var a alloc
	if holdsMemory(v) {
		a = alloc{u: &unit{bytes: size - slotBytes}, fresh: true}
	}
	before := s.collections
	h, f := s.put(v, size, a, s.attached)
	if s.collections != before {
		s.debt = sat(s.debt, s.collectTicks(s.attached))
	}
	return h, f
}

// alloc is the memory a new value holds: its unit, and what it adds to
// the store: a fresh unit all its bytes, a version appended in place
// (grow) the slot it adds to its unit's array (delta) and the unit of the
// element (ref); nil for a value holding nothing beyond its slot. own
// is slot.own.
type alloc struct {
	u     *unit
	fresh bool
	grow  bool
	delta uint64
	ref   *unit
	own   bool
}

// need is the bytes a stores on top of the value's slot.
func (a *alloc) need() uint64 {
	switch {
	case a.fresh:
		return a.u.bytes
	case a.grow:
		return a.delta
	}
	return 0
}

// put stores v with its tree size and memory, collecting with m's roots
// (none when m is nil) when the store is full.
func (s *ValueHost) put(v rt.Value, size uint64, a alloc, m roots) (uint64, vm.Fault) {
	need := sat(slotBytes, a.need())
	if sat(s.bytes, need) > s.limit {
		if m != nil {
			s.collect(m, nil)
		}
		if sat(s.bytes, need) > s.limit {
			s.err = fmt.Sprintf("the values of the run need more than the %d bytes of memory they may use (%d bytes held, %d more for a %s)", s.limit, s.bytes, need, v.Kind())
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
	if a.fresh {
		a.u.owner = s
	}
	if a.grow {
		a.u.bytes += a.delta
		a.u.n++
		if a.u.pos {
			a.u.refs = append(a.u.refs, a.ref)
		} else if a.ref != nil {
			a.u.refs = append(a.u.refs, a.ref)
		}
	}
	s.vals[i] = slot{v: v, size: size, u: a.u, own: a.own, live: true}
	s.bytes += need
	return agentabi.Handle(i), vm.NoFault
}

// Collect frees every value that no register of m, no 8-byte-aligned
// word of m's memory, none of words, of Roots and of the roots Attach
// set names: a word names the value of index i when it equals its
// handle (the collection is conservative: an integer equal to a live
// handle keeps its value). The constants are never freed. Freed indices are reused
// lowest first, so that a program run again on the same inputs gets the
// same handles. The bytes charged are then those of the values left.
// The next host call pays for the collection.
func (s *ValueHost) Collect(m *vm.Machine, words ...uint64) {
	var r roots
	if m != nil {
		r = m
	}
	s.collect(r, words)
	s.debt = sat(s.debt, s.collectTicks(r))
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
	if s.Roots != nil {
		for _, regs := range s.Roots() {
			for _, w := range regs {
				mark(w)
			}
		}
	}
	for i := uint64(1); i <= s.consts && i < n; i++ {
		marked[i/64] |= 1 << (i % 64)
	}
	// Sweep the handles, then count the units the live ones keep.
	s.free = s.free[:0]
	s.epoch++
	// A branch's store counts what it started from as its base, and its
	// own slots and units on top (Branch).
	bytes := s.base
	var stack []*unit
	for i := n - 1; i >= 1; i-- {
		sl := &s.vals[i]
		if sl.live && marked[i/64]&(1<<(i%64)) == 0 {
			*sl = slot{}
		}
		if !sl.live {
			s.free = append(s.free, i)
			continue
		}
		if !s.branch || i > s.consts {
			bytes += slotBytes
		}
		if sl.u != nil && sl.u.owner == s && sl.u.mark != s.epoch {
			sl.u.mark = s.epoch
			stack = append(stack, sl.u)
		}
		for len(stack) > 0 {
			u := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			bytes = sat(bytes, u.bytes)
			for _, r := range u.refs {
				if r != nil && r.owner == s && r.mark != s.epoch {
					r.mark = s.epoch
					stack = append(stack, r)
				}
			}
		}
	}
	s.bytes = bytes
	// Trailing free indices shrink the table, so that a store that
	// emptied does not keep sweeping its old high-water mark.
	for len(s.free) > 0 && s.free[0] == uint64(len(s.vals))-1 {
		s.free = s.free[1:]
		s.vals = s.vals[:len(s.vals)-1]
	}
	clear(s.memo)
}

// collectTicks is what a collection with m's roots costs: its memory
// scanned, its handles swept, the units of its live values counted.
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
	return 0, vm.HostFault
}

// HostCall services HCALL imm on m (vm.HostCalls): the builtin and the
// source position the immediate names (agentabi.SplitHostCallImm), its
// operands in r0–r2 (a dyn operand a handle, an i64 the integer, a bool
// 0 or 1), its result in r0 in the same encoding; an error result of a
// call with a position carries it (rt.ErrorAt), as on the Go target. It
// returns the ticks the call costs beyond HCALL's own (see "Agent
// programs: value builtins" in docs/forge.md; collections included), and:
// HOST_FAULT, with Err saying why, for an immediate naming no builtin or
// position, an operand that is no live handle or no bool, or a runtime
// stop (Stop); OUT_OF_MEMORY when the result does not fit in the store
// even after a collection. A call whose cost from its operands alone
// exceeds the ticks left is not made: it returns that cost, and the
// machine faults OUT_OF_TICKS as it would have after the call.
func (s *ValueHost) HostCall(m *vm.Machine, imm uint32) (uint64, vm.Fault) {
	if s.attached == nil {
		s.attached = m
	}
	return s.call(m, imm)
}

// call is HostCall on any machine view.
func (s *ValueHost) call(m machine, imm uint32) (uint64, vm.Fault) {
	bi, pi := agentabi.SplitHostCallImm(imm)
	if bi >= len(s.fns) {
		return s.fail("HCALL 0x%x: builtin %d, but the program names %d builtins", imm, bi, len(s.fns))
	}
	if pi > len(s.meta.Positions) {
		return s.fail("HCALL 0x%x: position %d, but the program has %d positions", imm, pi, len(s.meta.Positions))
	}
	b := s.fns[bi]
	// Only what a call reads is set: the operands of its params, and the
	// result's description, which its post may set.
	a, r := &s.a, &s.r
	r.sized, r.alloc = false, alloc{}
	for k, p := range b.params {
		w := m.Register(uint8(k))
		switch p {
		case kDyn:
			i, ok := agentabi.Index(w)
			if !ok || i >= uint64(len(s.vals)) || !s.vals[i].live {
				return s.fail("%s: operand %d (r%d = 0x%x) is no live value handle", b.name, k+1, k, w)
			}
			sl := &s.vals[i]
			a.v[k], a.size[k], a.u[k], a.own[k] = sl.v, sl.size, sl.u, sl.own
		case kInt:
			a.i[k] = int64(w)
		case kBool:
			if w > 1 {
				return s.fail("%s: operand %d (r%d = 0x%x) is no bool (0 or 1)", b.name, k+1, k, w)
			}
			a.b[k] = w == 1
		}
	}
	s.left = m.Budget() - min(m.Ticks(), m.Budget())
	ticks := b.pre(s, a)
	if ticks > s.left {
		return ticks, vm.NoFault // the machine faults OUT_OF_TICKS
	}
	ticks = sat(ticks, s.debt)
	s.debt = 0
	if stop := s.invoke(b, a, r); stop != nil {
		s.stop = stop
		_, f := s.fail("%s: %v", b.name, stop)
		return ticks, f
	}
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
		ticks = sat(ticks, b.post(s, a, r))
		if pi > 0 && r.v.IsError() {
			p := s.meta.Positions[pi-1]
			r.v, r.alloc = rt.ErrorAt(r.v, p.File, p.Line, p.Col), alloc{}
		}
		size := r.size
		if !r.sized {
			size = s.sizeOf(r.v)
		}
		if r.alloc.u == nil {
			r.alloc = s.defaultAlloc(b, a, r.v, size)
		}
		before := s.collections
		h, f := s.put(r.v, size, r.alloc, m)
		if s.collections != before {
			ticks = sat(ticks, s.collectTicks(m))
		}
		if f != vm.NoFault {
			return ticks, f
		}
		m.SetRegister(0, h)
	}
	return ticks, vm.NoFault
}

// defaultAlloc is the memory of a result its builtin did not describe:
// the unit of the operand it shares memory with (an element, a substring,
// the operand itself), or a new unit of all its bytes.
func (s *ValueHost) defaultAlloc(b *builtin, a *args, v rt.Value, size uint64) alloc {
	switch v.Kind() {
	case rt.KindUnit, rt.KindBool, rt.KindNumber:
		return alloc{}
	case rt.KindString:
		if v.Len() == 0 {
			return alloc{}
		}
		p := uintptr(unsafe.Pointer(unsafe.StringData(v.Str())))
		for k, kd := range b.params {
			if kd != kDyn {
				continue
			}
			for _, o := range stringsOf(a.v[k]) {
				if q := uintptr(unsafe.Pointer(unsafe.StringData(o))); len(o) > 0 && p >= q && p < q+uintptr(len(o)) {
					return alloc{u: a.u[k]}
				}
			}
		}
	case rt.KindList, rt.KindObject:
		if v.Len() == 0 {
			return alloc{}
		}
		for k, kd := range b.params {
			if kd == kDyn && a.v[k].Kind() == v.Kind() && a.v[k].Len() == v.Len() && identity(a.v[k]) == identity(v) {
				return alloc{u: a.u[k], own: a.own[k]}
			}
		}
	}
	if b.extracts {
		// An element of operand 1 (list.get, obj.get, path.get).
		return alloc{u: a.u[0]}
	}
	return alloc{u: &unit{bytes: size - min(size, slotBytes)}, fresh: true}
}

// stringsOf returns the strings a value holds itself: a string's, an
// error's kind and message.
func stringsOf(v rt.Value) []string {
	switch v.Kind() {
	case rt.KindString:
		return []string{v.Str()}
	case rt.KindError:
		return []string{v.ErrKind(), v.ErrMessage()}
	}
	return nil
}

// identity returns the address of a non-empty list's or object's
// backing array.
func identity(v rt.Value) unsafe.Pointer {
	if v.Kind() == rt.KindList {
		return unsafe.Pointer(&v.Elems()[0])
	}
	return unsafe.Pointer(&v.Keys()[0])
}

// invoke calls Check and the builtin's runtime function and returns the
// panic of a runtime stop (a value over the value limit, a limit Check
// found), nil otherwise.
func (s *ValueHost) invoke(b *builtin, a *args, r *result) (stop any) {
	defer func() { stop = recover() }()
	if s.Check != nil {
		s.Check()
	}
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

// sizeOf returns value v's size as a tree: its slot, and for a string
// its bytes, for an error its kind and message, for a list or an object
// a header and each element (an object's with its key), a value held
// twice counted twice. It saturates. The costs of the builtins that
// traverse a value (json.encode, value.eq, …) grow with it.
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
		k := memoKey{identity(v), n}
		if sz, ok := s.memo[k]; ok {
			return sz, true
		}
		stack = append(stack, frame{v: v, key: k, size: slotBytes + headerBytes})
		return 0, false
	}
	if sz, done := push(v); done {
		return sz
	}
	for {
		f := &stack[len(stack)-1]
		if f.i == f.v.Len() {
			size := f.size
			if size >= memoMin {
				if s.memo == nil {
					s.memo = map[memoKey]uint64{}
				}
				s.memo[f.key] = size
			}
			stack = stack[:len(stack)-1]
			if len(stack) == 0 {
				return size
			}
			g := &stack[len(stack)-1]
			g.size = sat(g.size, size)
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
			// else: the frame pushed adds its size when it is done.
		default:
			f.size = sat(f.size, s.sizeOf(e))
			f.i++
		}
	}
}
