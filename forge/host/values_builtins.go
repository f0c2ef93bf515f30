package host

import (
	"math/bits"

	rt "github.com/genesis-toolchain/genesis/runtime"
)

// Tick rates of the builtins (docs/forge.md, "Agent programs: value
// builtins"): bytes copied or scanned per tick (as many as SEND and RECV
// move, bytecode.BytesPerTick), bytes encoded, rendered, hashed or
// decoded per tick. An element of a list or field of an object copied
// costs one tick; a byte of JSON parsed one tick, and the value it gives
// a tick per parsedBytesPerTick bytes of its size (its allocations).
const (
	copyBytesPerTick   = 8
	encodeBytesPerTick = 2
	parsedBytesPerTick = 2
)

// scanBytesPerTick is the rate of a collection: a tick per 64 bytes of
// machine memory scanned and per 64 bytes of live values counted, and
// one per handle swept.
const scanBytesPerTick = 64

// bigObject is the number of fields from which the runtime grows an
// object in place, as a list (runtime indexThreshold, objSet).
const bigObject = 12

// Operand and result encodings of a builtin.
type kind uint8

const (
	kDyn kind = iota
	kInt
	kBool
)

// args are a host call's operands: the values (with their tree sizes,
// units and whether they own their unit's lineage), integers and bools,
// by position.
type args struct {
	v    [3]rt.Value
	size [3]uint64
	u    [3]*unit
	own  [3]bool
	i    [3]int64
	b    [3]bool
}

// result is a host call's result, with the tree size (when sized) and
// the memory of a value when its builtin's post knows them.
type result struct {
	v     rt.Value
	i     int64
	b     bool
	size  uint64
	sized bool
	alloc alloc
}

// builtin is one builtin as a host call: its runtime function adapted to
// args and result, and its cost: pre from the operands (paid before the
// call is made, so that a call the ticks left cannot pay is not made),
// post from the result. extracts marks the builtins whose result is an
// element of their first operand.
type builtin struct {
	name     string
	params   []kind
	result   kind
	call     func(*args, *result)
	pre      func(*ValueHost, *args) uint64
	post     func(*ValueHost, *args, *result) uint64
	extracts bool
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
		c, ok := costs[f.Name]
		if b.call == nil || !ok {
			// Caught by TestBuiltinTable; such a builtin stays
			// unresolvable (NewValueHost refuses a program naming it).
			b.name = "\x00" + f.Name
			continue
		}
		b.pre, b.post, b.extracts = c.pre, c.post, c.extracts
		if b.pre == nil {
			b.pre = noPre
		}
		if b.post == nil {
			b.post = noPost
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
// object's tree size (size, known from its handle).
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

// text is what taking operand v as text costs: a string's bytes copied,
// anything else's rendering (estimated by its tree size).
func text(v rt.Value, size uint64) uint64 {
	if v.Kind() == rt.KindString {
		return copyTicks(uint64(v.Len()))
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
func madeError(_ *ValueHost, _ *args, r *result) uint64 {
	if r.v.IsError() {
		return made(r)
	}
	return 0
}

func noPre(*ValueHost, *args) uint64           { return 0 }
func noPost(*ValueHost, *args, *result) uint64 { return 0 }
func madePost(_ *ValueHost, _ *args, r *result) uint64 {
	return made(r)
}

// log2 is ⌈log2(n+1)⌉.
func log2(n uint64) uint64 { return uint64(bits.Len64(n)) }

// cost is a builtin's cost and whether it extracts.
type cost struct {
	pre      func(*ValueHost, *args) uint64
	post     func(*ValueHost, *args, *result) uint64
	extracts bool
}

// costs are the ticks of each builtin beyond HCALL's 2, by name, from
// the sizes of its operands and result: the table of docs/forge.md,
// "Agent programs: value builtins". (A map read by name only: no
// iteration.)
var costs = map[string]cost{
	"error.is":      {},
	"error.kind":    {},
	"error.message": {},
	"error.new": {pre: func(_ *ValueHost, a *args) uint64 {
		return text(a.v[0], a.size[0]) + text(a.v[1], a.size[1])
	}},
	"json.canonical": {pre: encodesPre, post: madePost},
	"json.encode":    {pre: encodesPre, post: madePost},
	"json.parse": {pre: func(_ *ValueHost, a *args) uint64 {
		return weight(a.v[0], 0)
	}, post: func(s *ValueHost, _ *args, r *result) uint64 {
		r.size, r.sized = s.sizeOf(r.v), true
		return r.size / parsedBytesPerTick
	}},
	"list.append": {pre: appendPre, post: appendPost},
	"list.get":    {post: madeError, extracts: true},
	"list.len":    {},
	"list.new":    {},
	"list.sort_by": {pre: func(_ *ValueHost, a *args) uint64 {
		if a.v[0].Kind() != rt.KindList || a.v[1].Kind() != rt.KindList {
			return 0
		}
		n := uint64(a.v[0].Len())
		lg := log2(n)
		return n*(lg+1) + copyTicks(weight(a.v[1], a.size[1]))*lg
	}, post: func(_ *ValueHost, a *args, r *result) uint64 {
		if r.v.Kind() == rt.KindList && r.v.Len() > 0 {
			n := uint64(r.v.Len())
			r.size, r.sized = a.size[0], true
			r.alloc = alloc{u: &unit{bytes: headerBytes + n*slotBytes, refs: refsOf(a.u[0]), n: n, cap: n}, fresh: true, own: true}
		}
		return made(r)
	}},
	"num.add":      {post: madePost},
	"num.div":      {post: madePost},
	"num.from_int": {},
	"num.mod":      {post: madePost},
	"num.mul":      {post: madePost},
	"num.neg":      {post: madePost},
	"num.sub":      {post: madePost},
	"num.to_int":   {},
	"obj.get":      {pre: keyPre, extracts: true},
	"obj.has":      {pre: keyPre},
	"obj.keys": {pre: func(_ *ValueHost, a *args) uint64 {
		if a.v[0].Kind() != rt.KindObject {
			return 0
		}
		return uint64(a.v[0].Len())
	}, post: func(_ *ValueHost, a *args, r *result) uint64 {
		if n := uint64(r.v.Len()); n > 0 {
			r.alloc = alloc{u: &unit{bytes: headerBytes + n*slotBytes, refs: refsOf(a.u[0]), n: n, cap: n}, fresh: true, own: true}
		}
		return 0
	}},
	"obj.new":  {},
	"obj.set":  {pre: setPre, post: setPost},
	"path.get": {pre: func(_ *ValueHost, a *args) uint64 { return encodeTicks(weight(a.v[1], 0)) }, extracts: true},
	"str.concat": {pre: func(_ *ValueHost, a *args) uint64 {
		return text(a.v[0], a.size[0]) + text(a.v[1], a.size[1])
	}, post: func(_ *ValueHost, a *args, r *result) uint64 {
		if a.v[0].Kind() == rt.KindString && a.v[1].Kind() == rt.KindString {
			return 0 // the copy is the operands', paid before
		}
		return made(r)
	}},
	"str.format": {pre: formatPre, post: func(_ *ValueHost, _ *args, r *result) uint64 {
		return encodeTicks(uint64(r.v.Len()))
	}},
	"str.index": {pre: func(_ *ValueHost, a *args) uint64 {
		return copyTicks(weight(a.v[0], 0) + weight(a.v[1], 0))
	}},
	"str.len": {pre: func(_ *ValueHost, a *args) uint64 { return copyTicks(weight(a.v[0], 0)) }},
	"str.slice": {pre: func(_ *ValueHost, a *args) uint64 {
		if a.v[0].Kind() != rt.KindString {
			return 0
		}
		return encodeTicks(uint64(a.v[0].Len()))
	}, post: madePost},
	"str.trim": {pre: func(_ *ValueHost, a *args) uint64 {
		if a.v[0].Kind() != rt.KindString {
			return 0
		}
		return copyTicks(uint64(a.v[0].Len()))
	}, post: func(_ *ValueHost, a *args, r *result) uint64 {
		r.size, r.sized = a.size[0], a.v[0].Kind() != rt.KindString
		return 0
	}},
	"value.bool": {},
	"value.compare": {pre: func(_ *ValueHost, a *args) uint64 {
		if a.v[0].Kind() != rt.KindString || a.v[1].Kind() != rt.KindString {
			return 0
		}
		return copyTicks(uint64(min(a.v[0].Len(), a.v[1].Len())))
	}},
	"value.contains": {pre: func(_ *ValueHost, a *args) uint64 {
		switch h := a.v[0]; h.Kind() {
		case rt.KindString:
			return copyTicks(weight(h, 0) + weight(a.v[1], 0))
		case rt.KindList:
			return copyTicks(a.size[0])
		}
		return copyTicks(weight(a.v[1], 0))
	}},
	"value.eq": {pre: func(_ *ValueHost, a *args) uint64 {
		return copyTicks(min(weight(a.v[0], a.size[0]), weight(a.v[1], a.size[1])))
	}},
	"value.hash": {pre: encodesPre, post: madePost},
	"value.kind": {},
	"value.string": {pre: func(_ *ValueHost, a *args) uint64 {
		if a.v[0].Kind() == rt.KindString {
			return 0
		}
		return encodeTicks(a.size[0])
	}, post: func(_ *ValueHost, a *args, r *result) uint64 {
		if a.v[0].Kind() == rt.KindString {
			r.size, r.sized = a.size[0], true
			return 0
		}
		return made(r)
	}},
	"value.truthy": {},
}

// formatPre is str.format's cost before the call: the template taken as
// text, and its references looked up. The runtime tries each prefix of a
// reference's path, longest first, from the scope's root: a reference of
// k segments and b bytes may cost k lookups of up to b bytes each, so it
// costs C(k·b) (nothing for the usual references of a few segments,
// everything for "$a.a.a…" of a million). A template that is no string
// is rendered first, as the runtime renders it, when the ticks left pay
// for that.
func formatPre(s *ValueHost, a *args) uint64 {
	t := a.v[0]
	if t.Kind() != rt.KindString {
		pre := encodeTicks(a.size[0])
		if pre > s.left {
			return pre
		}
		return pre + referenceTicks(t.String())
	}
	return encodeTicks(uint64(t.Len())) + referenceTicks(t.Str())
}

// referenceTicks is C(k·b) summed over the references of template t
// (runtime StrFormat's syntax: '$', a name, then '.' and a name, repeated;
// a name is letters, digits and '_').
func referenceTicks(t string) uint64 {
	var ticks uint64
	for i := 0; i < len(t); i++ {
		if t[i] != '$' {
			continue
		}
		j := i + 1
		for j < len(t) && isNameByte(t[j]) {
			j++
		}
		if j == i+1 {
			continue
		}
		k := uint64(1)
		for j < len(t) && t[j] == '.' {
			e := j + 1
			for e < len(t) && isNameByte(t[e]) {
				e++
			}
			if e == j+1 {
				break
			}
			j = e
			k++
		}
		ticks = sat(ticks, copyTicks(k*uint64(j-i)))
		i = j - 1
	}
	return ticks
}

func isNameByte(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// encodesPre is the cost of encoding operand 1 (json.encode,
// json.canonical, value.hash), estimated by its tree size.
func encodesPre(_ *ValueHost, a *args) uint64 { return encodeTicks(a.size[0]) }

// keyPre is the cost of operand 2 as an object key: its bytes hashed or
// compared, rendered first when it is no string.
func keyPre(_ *ValueHost, a *args) uint64 {
	if k := a.v[1]; k.Kind() == rt.KindString {
		return copyTicks(uint64(k.Len()))
	}
	return encodeTicks(a.size[1])
}

// inPlace reports whether the runtime grows operand 1, a list or object
// of n elements, in place: it is the longest version of its array, and
// the array has room (see unit).
func inPlace(a *args, n uint64) bool {
	u := a.u[0]
	return a.own[0] && u != nil && u.n == n && n < u.cap
}

// appendPre is list.append's cost: a tick per element copied when the
// list is not appended to in place.
func appendPre(_ *ValueHost, a *args) uint64 {
	if a.v[0].Kind() != rt.KindList {
		return 0
	}
	if n := uint64(a.v[0].Len()); !inPlace(a, n) {
		return n
	}
	return 0
}

// appendPost describes list.append's result: the version appended in
// place on its operand's array, or a new array of twice the length
// (runtime appendList).
func appendPost(_ *ValueHost, a *args, r *result) uint64 {
	if r.v.Kind() != rt.KindList {
		return made(r)
	}
	n := uint64(a.v[0].Len())
	r.size, r.sized = sat(a.size[0], a.size[1]), true
	if inPlace(a, n) {
		r.alloc = alloc{u: a.u[0], grow: true, ref: a.u[1], own: true}
		return 0
	}
	c := max(4, 2*n)
	u := &unit{bytes: headerBytes + c*slotBytes, n: n + 1, cap: c}
	u.refs, u.pos = prefixRefs(a.v[0], a.u[0], a.own[0], int(n))
	if u.pos {
		u.refs = append(u.refs, a.u[1])
	} else if a.u[1] != nil {
		u.refs = append(u.refs, a.u[1])
	}
	r.alloc = alloc{u: u, fresh: true, own: true}
	return 0
}

// prefixRefs returns the refs of a copy of the first n elements of v,
// whose memory is u (own: v is a version of u's array). An object's refs
// are by position (obj.set replaces one): u's own, or u for each field
// that holds memory (u keeps it). A list's are a set: u's, when v owns u
// and u has no more refs than the copy has elements (a copy costs n
// ticks, so it may copy n refs), else u itself, which keeps them all.
func prefixRefs(v rt.Value, u *unit, own bool, n int) ([]*unit, bool) {
	if v.Kind() == rt.KindList {
		switch {
		case u == nil:
			return nil, false
		case own && !u.pos && len(u.refs) <= n:
			return append(make([]*unit, 0, len(u.refs)+1), u.refs...), false
		}
		return []*unit{u}, false
	}
	if own && u != nil && u.pos && len(u.refs) >= n {
		return append(make([]*unit, 0, n+1), u.refs[:n]...), true
	}
	refs := make([]*unit, n, n+1)
	if u == nil {
		return refs, true
	}
	for i := range refs {
		if _, e := v.Field(i); holdsMemory(e) {
			refs[i] = u
		}
	}
	return refs, true
}

// holdsMemory reports whether v holds memory beyond its slot.
func holdsMemory(v rt.Value) bool {
	switch v.Kind() {
	case rt.KindString, rt.KindList, rt.KindObject:
		return v.Len() > 0
	case rt.KindError:
		return true
	}
	return false
}

// refsOf returns the refs of a value that keeps u alive.
func refsOf(u *unit) []*unit {
	if u == nil {
		return nil
	}
	return []*unit{u}
}

// setPre is obj.set's cost: its key, and a tick per field copied when
// the object is not grown in place (a key it has, a small object, or
// not the longest version of its array).
func setPre(_ *ValueHost, a *args) uint64 {
	t := keyPre(nil, a)
	o := a.v[0]
	if o.Kind() != rt.KindObject {
		return t
	}
	n := uint64(o.Len())
	if n >= bigObject && inPlace(a, n) && !rt.ObjHas(o, a.v[1]) {
		return t
	}
	return t + n
}

// setPost describes obj.set's result (runtime objSet): a copy with the
// field replaced, a copy with a new field, or, for an object of
// bigObject fields or more, the new field added in place on its
// operand's array or a copy of twice the length.
func setPost(s *ValueHost, a *args, r *result) uint64 {
	o := a.v[0]
	if r.v.Kind() != rt.KindObject || o.Kind() != rt.KindObject {
		return made(r)
	}
	n := uint64(o.Len())
	keyBytes := func(v rt.Value) uint64 {
		var t uint64
		for _, k := range v.Keys() {
			t += uint64(len(k))
		}
		return t
	}
	if uint64(r.v.Len()) == n {
		// A key it has: a copy with the new value.
		k := r.v.Keys()
		i := 0
		key := keyOf(a.v[1])
		for i < len(k) && k[i] != key {
			i++
		}
		if i == len(k) {
			return 0 // cannot be (objSet replaced a key); measured as a new value
		}
		_, old := o.Field(i)
		r.size, r.sized = sat(a.size[0]-min(a.size[0], s.sizeOf(old)), a.size[2]), true
		u := &unit{bytes: headerBytes + n*(slotBytes+fieldBytes) + keyBytes(r.v), n: n, cap: n}
		u.refs, u.pos = prefixRefs(o, a.u[0], a.own[0], int(n))
		if u.pos {
			u.refs[i] = a.u[2]
		} else if a.u[2] != nil {
			u.refs = append(u.refs, a.u[2])
		}
		r.alloc = alloc{u: u, fresh: true, own: true}
		return 0
	}
	key, _ := r.v.Field(int(n))
	r.size, r.sized = sat(sat(a.size[0], a.size[2]), fieldBytes+uint64(len(key))), true
	if n >= bigObject && inPlace(a, n) {
		r.alloc = alloc{u: a.u[0], grow: true, delta: uint64(len(key)), ref: a.u[2], own: true}
		return 0
	}
	c := n + 1
	if n >= bigObject {
		c = 2 * n
	}
	u := &unit{bytes: headerBytes + c*(slotBytes+fieldBytes) + keyBytes(r.v), n: n + 1, cap: c}
	u.refs, u.pos = prefixRefs(o, a.u[0], a.own[0], int(n))
	if u.pos {
		u.refs = append(u.refs, a.u[2])
	} else if a.u[2] != nil {
		u.refs = append(u.refs, a.u[2])
	}
	r.alloc = alloc{u: u, fresh: true, own: true}
	return 0
}

// keyOf is the key an object builtin uses for k (runtime keyString): a
// string as itself, anything else rendered.
func keyOf(k rt.Value) string {
	if s, ok := k.AsString(); ok {
		return s
	}
	return k.String()
}
