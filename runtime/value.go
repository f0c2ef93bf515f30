// Package runtime is linked into every Go program genesisc generates from
// an agent language (nano-vm programs, execution plans, VVM, Grimoire) and
// serves the Forge host. It holds the dynamic Value of the IR with one Go
// function per IR builtin, and the effects behind one Host: LLM
// completions and judgements, tool calls, emitted events, persistent
// state and waits, with budgets, retries, parallel branches,
// suspend/resume, a JSON Lines trace and a journal for resume and replay.
//
// It imports nothing of the compiler or the machine. docs/runtime.md is
// its reference.
package runtime

import (
	"math"
	"sync"
	"sync/atomic"
)

// Kind is the kind of a Value. The numbers are those of the builtin
// value.kind.
type Kind uint8

// The kinds of values.
const (
	KindUnit Kind = iota
	KindBool
	KindNumber
	KindString
	KindList
	KindObject
	KindError
)

var kindNames = [...]string{"unit", "bool", "number", "string", "list", "object", "error"}

// String returns the kind's name: unit, bool, number, string, list,
// object or error.
func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return "invalid"
}

// Value is an immutable dynamic value: unit, bool, number (float64),
// string, list, object with ordered keys, or error (kind and message).
// The zero Value is unit. Values are small structs passed by value; kind
// checks, numbers, bools and strings never allocate. Lists and objects
// share their elements: operations that "modify" one return a new value
// and leave the old one as it was.
type Value struct {
	h *heap  // list, object or error payload
	s string // string; error kind
	u uint64 // number bits; bool 0/1; list or object length
	k Kind
}

// heap is the payload of a list, an object or an error.
type heap struct {
	// items are the elements of a list, or the values of an object's
	// fields. A list's backing array is shared by its versions: a version
	// of length n sees items[:n]; claimed is the number of slots some
	// version has filled, so appending to the longest version fills the
	// next slot in place and appending to a shorter one copies.
	items   []Value
	keys    []string // an object's keys, parallel to items
	claimed atomic.Int64
	msg     string  // an error's message
	at      *errPos // where an error was made, when known (ErrorAt)

	// The key index of a large object: key to slot, for every slot some
	// version claimed (a version of length n ignores slots from n on).
	// Built on the first lookup, extended by in-place appends; imu
	// guards it and the claiming of object slots.
	imu   sync.RWMutex
	index map[string]int32
}

// Field is one key and value of an object.
type Field struct {
	Key   string
	Value Value
}

// Unit returns the unit value (the zero Value).
func Unit() Value { return Value{} }

// Bool returns b as a value.
func Bool(b bool) Value {
	if b {
		return Value{k: KindBool, u: 1}
	}
	return Value{k: KindBool}
}

// True and False are the bool values.
var (
	True  = Value{k: KindBool, u: 1}
	False = Value{k: KindBool}
)

// Number returns the number f.
func Number(f float64) Value { return Value{k: KindNumber, u: math.Float64bits(f)} }

// Int returns the integer i as a number.
func Int(i int64) Value { return Number(float64(i)) }

// String returns the string s.
func String(s string) Value { return Value{k: KindString, s: s} }

// List returns a list of the given elements. The list keeps the slice:
// the caller must not modify it afterwards.
func List(elems ...Value) Value {
	h := &heap{items: elems[:len(elems):len(elems)]}
	h.claimed.Store(int64(len(elems)))
	return Value{k: KindList, h: h, u: uint64(len(elems))}
}

// Object returns an object of the given fields, in order. A key given
// twice keeps its first place and its last value.
func Object(fields ...Field) Value {
	keys := make([]string, 0, len(fields))
	vals := make([]Value, 0, len(fields))
	for _, f := range fields {
		if i := indexOf(keys, f.Key); i >= 0 {
			vals[i] = f.Value
			continue
		}
		keys = append(keys, f.Key)
		vals = append(vals, f.Value)
	}
	return newObject(keys, vals)
}

func indexOf(keys []string, k string) int {
	for i, x := range keys {
		if x == k {
			return i
		}
	}
	return -1
}

// newObject makes an object of parallel keys and values (distinct keys),
// which it keeps.
func newObject(keys []string, vals []Value) Value {
	if len(keys) == 0 {
		return emptyObject
	}
	return Value{k: KindObject, h: &heap{keys: keys, items: vals}, u: uint64(len(keys))}
}

var (
	emptyObject = Value{k: KindObject, h: &heap{}}
	emptyList   = Value{k: KindList, h: &heap{}}
)

// Error returns an error value of the given kind and message.
func Error(kind, message string) Value {
	return Value{k: KindError, s: kind, h: &heap{msg: message}}
}

// errPos is the source position of the operation that made an error.
type errPos struct {
	file      string
	line, col int
}

// ErrorAt returns v with the source position of the operation that made
// it, when v is an error that has none yet, and v unchanged otherwise.
// Generated code wraps the builtins that can fail (an operator, an
// index) in it, so that a run that stops on their error names where the
// program wrote the operation ("failed @ prog.spell:5:11"), not where the
// error ended the run. The position is no part of the error's value: it
// is neither encoded nor compared.
func ErrorAt(v Value, file string, line, col int) Value {
	if v.k != KindError || v.h.at != nil {
		return v
	}
	return Value{k: KindError, s: v.s, h: &heap{msg: v.h.msg, at: &errPos{file, line, col}}}
}

// Kind returns v's kind.
func (v Value) Kind() Kind { return v.k }

// IsUnit reports whether v is unit.
func (v Value) IsUnit() bool { return v.k == KindUnit }

// IsError reports whether v is an error value.
func (v Value) IsError() bool { return v.k == KindError }

// AsBool returns v's bool and whether v is a bool.
func (v Value) AsBool() (bool, bool) { return v.u != 0, v.k == KindBool }

// AsNumber returns v's number and whether v is a number.
func (v Value) AsNumber() (float64, bool) {
	if v.k != KindNumber {
		return 0, false
	}
	return math.Float64frombits(v.u), true
}

// AsString returns v's string and whether v is a string.
func (v Value) AsString() (string, bool) {
	if v.k != KindString {
		return "", false
	}
	return v.s, true
}

// Str returns v's string, or "" when v is not a string.
func (v Value) Str() string {
	if v.k != KindString {
		return ""
	}
	return v.s
}

// Num returns v's number, or 0 when v is not a number.
func (v Value) Num() float64 {
	if v.k != KindNumber {
		return 0
	}
	return math.Float64frombits(v.u)
}

// Len returns the number of elements of a list or fields of an object,
// the number of bytes of a string, and 0 otherwise.
func (v Value) Len() int {
	switch v.k {
	case KindList, KindObject:
		return int(v.u)
	case KindString:
		return len(v.s)
	}
	return 0
}

// Index returns element i of a list (unit when out of range or not a list).
func (v Value) Index(i int) Value {
	if v.k != KindList || i < 0 || i >= int(v.u) {
		return Value{}
	}
	return v.h.items[i]
}

// Elems returns the elements of a list (nil otherwise). The slice is
// shared: the caller must not modify it.
func (v Value) Elems() []Value {
	if v.k != KindList || v.u == 0 {
		return nil
	}
	return v.h.items[:v.u:v.u]
}

// Keys returns the keys of an object in order (nil otherwise). The slice
// is shared: the caller must not modify it.
func (v Value) Keys() []string {
	if v.k != KindObject || v.u == 0 {
		return nil
	}
	return v.h.keys[:v.u:v.u]
}

// Field returns the key and value of field i of an object.
func (v Value) Field(i int) (string, Value) {
	if v.k != KindObject || i < 0 || i >= int(v.u) {
		return "", Value{}
	}
	return v.h.keys[i], v.h.items[i]
}

// Fields returns a copy of an object's fields in order.
func (v Value) Fields() []Field {
	n := v.Len()
	if v.k != KindObject || n == 0 {
		return nil
	}
	fs := make([]Field, n)
	for i := range fs {
		fs[i] = Field{v.h.keys[i], v.h.items[i]}
	}
	return fs
}

// indexThreshold is the size from which an object's key lookups go
// through a map built on the first lookup.
const indexThreshold = 12

// lookup returns the index of key k in object v, or -1.
func (v Value) lookup(k string) int {
	n := int(v.u)
	if n < indexThreshold {
		keys := v.h.keys[:n]
		for i := range keys {
			if keys[i] == k {
				return i
			}
		}
		return -1
	}
	h := v.h
	h.imu.RLock()
	m := h.index
	i, ok := m[k]
	h.imu.RUnlock()
	if m == nil {
		h.imu.Lock()
		if h.index == nil {
			c := int(h.claimed.Load())
			if c < n {
				c = n // a heap made whole, without claims
			}
			h.index = make(map[string]int32, c)
			for j, key := range h.keys[:c] {
				if _, dup := h.index[key]; !dup {
					h.index[key] = int32(j)
				}
			}
		}
		i, ok = h.index[k]
		h.imu.Unlock()
	}
	if ok && int(i) < n {
		return int(i)
	}
	return -1
}

// Get returns the value at key k of an object, and whether it is there.
func (v Value) Get(k string) (Value, bool) {
	if v.k != KindObject {
		return Value{}, false
	}
	if i := v.lookup(k); i >= 0 {
		return v.h.items[i], true
	}
	return Value{}, false
}

// With returns the object v with key k set to x (v itself when v is not
// an object: use ObjSet for the builtin's error).
func (v Value) With(k string, x Value) Value {
	if v.k != KindObject {
		return v
	}
	return objSet(v, k, x)
}

// ErrKind returns the kind of an error value ("" otherwise).
func (v Value) ErrKind() string {
	if v.k != KindError {
		return ""
	}
	return v.s
}

// ErrMessage returns the message of an error value ("" otherwise).
func (v Value) ErrMessage() string {
	if v.k != KindError {
		return ""
	}
	return v.h.msg
}

// Truthy is the builtin value.truthy.
func (v Value) Truthy() bool { return ValueTruthy(v) }

// String renders v as the builtin value.string does: a string as itself,
// anything else as JSON.
func (v Value) String() string {
	if v.k == KindString {
		return v.s
	}
	return string(AppendJSON(nil, v))
}

// Equal is the builtin value.eq.
func (v Value) Equal(w Value) bool { return ValueEq(v, w) }

// appendList returns l with x appended, filling l's backing array in
// place when l is its longest version and there is room.
func appendList(l Value, x Value) Value {
	n := int64(l.u)
	h := l.h
	if n < int64(len(h.items)) && h.claimed.CompareAndSwap(n, n+1) {
		h.items[n] = x
		return Value{k: KindList, h: h, u: uint64(n + 1)}
	}
	c := 2 * n
	if c < 4 {
		c = 4
	}
	items := make([]Value, c)
	copy(items, h.items[:n])
	items[n] = x
	nh := &heap{items: items}
	nh.claimed.Store(n + 1)
	return Value{k: KindList, h: nh, u: uint64(n + 1)}
}

// Small objects are one allocation: the heap and its arrays together.
type (
	obj2 struct {
		h heap
		k [2]string
		v [2]Value
	}
	obj4 struct {
		h heap
		k [4]string
		v [4]Value
	}
)

// newObjHeap returns the heap of an object of n fields, keys and values
// zero.
func newObjHeap(n int) *heap {
	switch {
	case n <= 2:
		x := &obj2{}
		x.h.keys, x.h.items = x.k[:n], x.v[:n]
		return &x.h
	case n <= 4:
		x := &obj4{}
		x.h.keys, x.h.items = x.k[:n], x.v[:n]
		return &x.h
	}
	return &heap{keys: make([]string, n), items: make([]Value, n)}
}

// objSet returns object o with key k set to x: a new key goes last, an
// existing key keeps its place.
func objSet(o Value, k string, x Value) Value {
	n := int(o.u)
	i := -1
	if n > 0 {
		i = o.lookup(k)
	}
	if i < 0 && n >= indexThreshold {
		// A large object grows like a list: the longest version of a
		// backing array appends in place (amortized O(1), so building an
		// object key by key is linear), the others copy.
		h := o.h
		h.imu.Lock()
		if n < len(h.keys) && h.claimed.CompareAndSwap(int64(n), int64(n+1)) {
			h.keys[n], h.items[n] = k, x
			if h.index != nil {
				if _, dup := h.index[k]; !dup {
					h.index[k] = int32(n)
				}
			}
			h.imu.Unlock()
			return Value{k: KindObject, h: h, u: uint64(n + 1)}
		}
		h.imu.Unlock()
		nh := &heap{keys: make([]string, 2*n), items: make([]Value, 2*n)}
		copy(nh.keys, h.keys[:n])
		copy(nh.items, h.items[:n])
		nh.keys[n], nh.items[n] = k, x
		nh.claimed.Store(int64(n + 1))
		return Value{k: KindObject, h: nh, u: uint64(n + 1)}
	}
	if i < 0 {
		nh := newObjHeap(n + 1)
		copy(nh.keys, o.h.keys[:n])
		copy(nh.items, o.h.items[:n])
		nh.keys[n], nh.items[n] = k, x
		nh.claimed.Store(int64(n + 1))
		return Value{k: KindObject, h: nh, u: uint64(n + 1)}
	}
	nh := newObjHeap(n)
	copy(nh.keys, o.h.keys[:n])
	copy(nh.items, o.h.items[:n])
	nh.items[i] = x
	nh.claimed.Store(int64(n))
	return Value{k: KindObject, h: nh, u: uint64(n)}
}
