package runtime

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// One Go function per IR builtin (ir/builtins.go, docs/ir.md "Builtins"):
// the builtin a.b_c is the function AB C, i.e. num.from_int → NumFromInt,
// with JSON spelled JSON (json.encode → JSONEncode). IR `dyn` is Value,
// i64 is int64 and bool is bool. Builtins never perform effects and never
// panic: a wrong kind of operand gives the error value the table
// documents, or kind "type" where it documents none.

// BuiltinFunc names the Go function of one IR builtin.
type BuiltinFunc struct {
	Name   string // the IR name, e.g. "num.add"
	GoName string // the function of this package, e.g. "NumAdd"
	Func   any    // the function itself
}

// Builtins lists every builtin, sorted by IR name (the table the Go
// backend reads; a test checks it against the IR's table).
var Builtins = []BuiltinFunc{
	{"error.is", "ErrorIs", ErrorIs},
	{"error.kind", "ErrorKind", ErrorKind},
	{"error.message", "ErrorMessage", ErrorMessage},
	{"error.new", "ErrorNew", ErrorNew},
	{"json.canonical", "JSONCanonical", JSONCanonical},
	{"json.encode", "JSONEncode", JSONEncode},
	{"json.parse", "JSONParse", JSONParse},
	{"list.append", "ListAppend", ListAppend},
	{"list.get", "ListGet", ListGet},
	{"list.len", "ListLen", ListLen},
	{"list.new", "ListNew", ListNew},
	{"list.sort_by", "ListSortBy", ListSortBy},
	{"num.add", "NumAdd", NumAdd},
	{"num.div", "NumDiv", NumDiv},
	{"num.from_int", "NumFromInt", NumFromInt},
	{"num.mod", "NumMod", NumMod},
	{"num.mul", "NumMul", NumMul},
	{"num.neg", "NumNeg", NumNeg},
	{"num.sub", "NumSub", NumSub},
	{"num.to_int", "NumToInt", NumToInt},
	{"obj.get", "ObjGet", ObjGet},
	{"obj.has", "ObjHas", ObjHas},
	{"obj.keys", "ObjKeys", ObjKeys},
	{"obj.new", "ObjNew", ObjNew},
	{"obj.set", "ObjSet", ObjSet},
	{"path.get", "PathGet", PathGet},
	{"str.concat", "StrConcat", StrConcat},
	{"str.format", "StrFormat", StrFormat},
	{"str.index", "StrIndex", StrIndex},
	{"str.len", "StrLen", StrLen},
	{"str.slice", "StrSlice", StrSlice},
	{"str.trim", "StrTrim", StrTrim},
	{"value.bool", "ValueBool", ValueBool},
	{"value.compare", "ValueCompare", ValueCompare},
	{"value.contains", "ValueContains", ValueContains},
	{"value.eq", "ValueEq", ValueEq},
	{"value.hash", "ValueHash", ValueHash},
	{"value.kind", "ValueKind", ValueKind},
	{"value.string", "ValueString", ValueString},
	{"value.truthy", "ValueTruthy", ValueTruthy},
}

// typeError is the error (kind "type") of an operation given operands
// of the wrong kinds, in the words of the program that wrote it, not of
// the builtin that does it: what names the operation as the user wrote
// it and what it needs ("+ needs two numbers"), and the message goes on
// with the kinds it got (", not a string and a number").
func typeError(what string, vs ...Value) Value {
	var b strings.Builder
	b.WriteString(what)
	b.WriteString(", not ")
	for i, v := range vs {
		if i > 0 {
			b.WriteString(" and ")
		}
		b.WriteString(aKind(v))
	}
	return Error("type", b.String())
}

// aKind names v's kind with an article, as a message says it ("a
// number", "an object", "no value" for unit); an error names its kind
// and message too.
func aKind(v Value) string {
	switch v.k {
	case KindUnit:
		return "no value"
	case KindObject:
		return "an object"
	case KindError:
		return "an error (" + v.s + ": " + v.h.msg + ")"
	}
	return "a " + v.k.String()
}

// items says "3 items", "1 item".
func items(n uint64) string {
	if n == 1 {
		return "1 item"
	}
	return strconv.FormatUint(n, 10) + " items"
}

// keyString is the key an object builtin uses for k: a string as
// itself, anything else rendered as value.string does.
func keyString(k Value) string {
	if k.k == KindString {
		return k.s
	}
	return k.String()
}

// ErrorIs is error.is(v): whether v is an error value.
func ErrorIs(v Value) bool { return v.k == KindError }

// ErrorKind is error.kind(e): the kind string of error e; unit for a
// non-error.
func ErrorKind(e Value) Value {
	if e.k != KindError {
		return Value{}
	}
	return String(e.s)
}

// ErrorMessage is error.message(e): the message string of error e; unit
// for a non-error.
func ErrorMessage(e Value) Value {
	if e.k != KindError {
		return Value{}
	}
	return String(e.h.msg)
}

// ErrorNew is error.new(kind, message): a new error value. Operands that
// are not strings are rendered as value.string does.
func ErrorNew(kind, message Value) Value { return Error(keyString(kind), keyString(message)) }

// JSONEncode is json.encode(v): v as a JSON string, objects in their key
// order (see AppendJSON).
func JSONEncode(v Value) Value {
	return String(string(encodeLimited("a JSON text", "encoding a value as JSON", v, false)))
}

// JSONCanonical is json.canonical(v): v's canonical encoding (Canonical)
// as a string, the stable rendering of a value for a prompt.
func JSONCanonical(v Value) Value {
	return String(string(encodeLimited("a JSON text", "encoding a value as canonical JSON", v, true)))
}

// JSONParse is json.parse(s): the value of JSON text s, or an error value
// of kind "json" (also when s is not a string).
func JSONParse(s Value) Value {
	if s.k != KindString {
		return Error("json", "only a string can be parsed as JSON, not "+aKind(s))
	}
	v, err := ParseJSON([]byte(s.s))
	if err != nil {
		return Error("json", err.Error())
	}
	return v
}

// ListAppend is list.append(l, v): l with v added at the end; an error
// (kind "type") when l is not a list. Appending to the latest version of
// a list takes amortized constant time.
func ListAppend(l, v Value) Value {
	if l.k != KindList {
		return typeError("only a list can be appended to", l)
	}
	if lim := valueLimit.Load(); lim > 0 && int64(l.u+1)*valueSlotBytes > lim {
		valueTooLarge("a list of " + items(l.u+1) + " (" +
			strconv.FormatUint((l.u+1)*valueSlotBytes, 10) + " bytes, appending to a list)")
	}
	return appendList(l, v)
}

// ListGet is list.get(l, i): element i of list l (from 0), or an error of
// kind "index" when out of range ("type" when l is not a list).
func ListGet(l Value, i int64) Value {
	if l.k != KindList {
		return typeError("only a list can be indexed by number", l)
	}
	if i < 0 || i >= int64(l.u) {
		if l.u == 0 {
			return Error("index", "index "+strconv.FormatInt(i, 10)+" out of range for an empty list")
		}
		return Error("index", "index "+strconv.FormatInt(i, 10)+" out of range for a list of "+items(l.u))
	}
	return l.h.items[i]
}

// ListLen is list.len(l): the number of elements of list l; 0 for a
// non-list.
func ListLen(l Value) int64 {
	if l.k != KindList {
		return 0
	}
	return int64(l.u)
}

// ListNew is list.new(): the empty list.
func ListNew() Value { return emptyList }

// ListSortBy is list.sort_by(l, keys): the elements of l ordered by the
// keys at the same index (ValueCompare), stably, so equal keys keep
// their order (Grimoire's `sort by`). It is an error of kind "type" when
// l or keys is not a list, or their lengths differ.
func ListSortBy(l, keys Value) Value {
	if l.k != KindList || keys.k != KindList {
		return typeError("sorting needs a list (and its list of keys)", l, keys)
	}
	if l.Len() != keys.Len() {
		return Error("type", fmt.Sprintf("sorting a list of %s by %d keys: one key is needed for each item", items(uint64(l.Len())), keys.Len()))
	}
	idx := make([]int, l.Len())
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return ValueCompare(keys.Index(idx[a]), keys.Index(idx[b])) < 0 })
	out := make([]Value, len(idx))
	for i, j := range idx {
		out[i] = l.Index(j)
	}
	return List(out...)
}

func numbers(op string, a, b Value) (float64, float64, Value, bool) {
	if a.k != KindNumber || b.k != KindNumber {
		return 0, 0, typeError(op+" needs two numbers", a, b), false
	}
	return math.Float64frombits(a.u), math.Float64frombits(b.u), Value{}, true
}

// NumAdd is num.add(a, b): a + b for numbers; an error (kind "type")
// otherwise.
func NumAdd(a, b Value) Value {
	if a.k == KindNumber && b.k == KindNumber {
		return Number(math.Float64frombits(a.u) + math.Float64frombits(b.u))
	}
	return typeError("+ needs two numbers", a, b)
}

// NumSub is num.sub(a, b): a - b.
func NumSub(a, b Value) Value {
	if a.k == KindNumber && b.k == KindNumber {
		return Number(math.Float64frombits(a.u) - math.Float64frombits(b.u))
	}
	return typeError("- needs two numbers", a, b)
}

// NumMul is num.mul(a, b): a × b.
func NumMul(a, b Value) Value {
	if a.k == KindNumber && b.k == KindNumber {
		return Number(math.Float64frombits(a.u) * math.Float64frombits(b.u))
	}
	return typeError("* needs two numbers", a, b)
}

// NumDiv is num.div(a, b): a / b; an error of kind "arith" when b is 0.
func NumDiv(a, b Value) Value {
	x, y, e, ok := numbers("/", a, b)
	if !ok {
		return e
	}
	if y == 0 {
		return Error("arith", "division by zero")
	}
	return Number(x / y)
}

// NumMod is num.mod(a, b): the remainder of a / b with the sign of a; an
// error of kind "arith" when b is 0.
func NumMod(a, b Value) Value {
	x, y, e, ok := numbers("%", a, b)
	if !ok {
		return e
	}
	if y == 0 {
		return Error("arith", "modulo by zero (the right operand of % is 0)")
	}
	return Number(math.Mod(x, y))
}

// NumNeg is num.neg(a): -a.
func NumNeg(a Value) Value {
	if a.k == KindNumber {
		return Number(-math.Float64frombits(a.u))
	}
	return typeError("unary - needs a number", a)
}

// NumFromInt is num.from_int(i): the signed integer i as a number.
func NumFromInt(i int64) Value { return Number(float64(i)) }

// NumToInt is num.to_int(v): number v truncated toward zero and saturated
// to int64; 0 for a non-number or NaN.
func NumToInt(v Value) int64 {
	if v.k != KindNumber {
		return 0
	}
	f := math.Float64frombits(v.u)
	switch {
	case f != f:
		return 0
	case f >= 9223372036854775807:
		return math.MaxInt64
	case f <= -9223372036854775808:
		return math.MinInt64
	}
	return int64(f)
}

// ObjGet is obj.get(o, k): the value at key k of object o; unit when
// absent or when o is not an object.
func ObjGet(o, k Value) Value {
	if o.k != KindObject {
		return Value{}
	}
	v, _ := o.Get(keyString(k))
	return v
}

// ObjHas is obj.has(o, k): whether object o has key k.
func ObjHas(o, k Value) bool {
	if o.k != KindObject {
		return false
	}
	return o.lookup(keyString(k)) >= 0
}

// ObjKeys is obj.keys(o): the keys of object o, a list of strings in
// insertion order; the empty list for a non-object.
func ObjKeys(o Value) Value {
	if o.k != KindObject || o.u == 0 {
		return emptyList
	}
	items := make([]Value, o.u)
	for i, k := range o.h.keys[:o.u] {
		items[i] = String(k)
	}
	return List(items...)
}

// ObjNew is obj.new(): the empty object.
func ObjNew() Value { return emptyObject }

// ObjSet is obj.set(o, k, v): o with key k set to v (a new key goes last;
// an existing key keeps its place); an error (kind "type") when o is not
// an object.
func ObjSet(o, k, v Value) Value {
	if o.k != KindObject {
		return typeError("only an object has fields to set", o)
	}
	return objSet(o, keyString(k), v)
}

// PathGet is path.get(v, p): the value at dotted path p (a string like
// "a.b.0") in v; unit when absent. Each segment is an object key, or the
// decimal index of a list element. The empty path is v itself.
func PathGet(v, p Value) Value {
	if p.k != KindString {
		return Value{}
	}
	x, _ := pathLookup(v, p.s)
	return x
}

// pathLookup follows a dotted path and says whether it is present.
func pathLookup(v Value, p string) (Value, bool) {
	if p == "" {
		return v, true
	}
	for {
		seg := p
		rest := ""
		more := false
		if i := strings.IndexByte(p, '.'); i >= 0 {
			seg, rest, more = p[:i], p[i+1:], true
		}
		switch v.k {
		case KindObject:
			i := v.lookup(seg)
			if i < 0 {
				return Value{}, false
			}
			v = v.h.items[i]
		case KindList:
			n, ok := listIndex(seg)
			if !ok || n >= int(v.u) {
				return Value{}, false
			}
			v = v.h.items[n]
		default:
			return Value{}, false
		}
		if !more {
			return v, true
		}
		p = rest
	}
}

// listIndex parses a path segment as a list index: decimal digits, no
// sign, no leading zero.
func listIndex(s string) (int, bool) {
	if s == "" || len(s) > 18 || (len(s) > 1 && s[0] == '0') {
		return 0, false
	}
	n := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int(c-'0')
	}
	return n, true
}

// StrConcat is str.concat(a, b): the concatenation of the string
// renderings of a and b.
func StrConcat(a, b Value) Value {
	if a.k == KindString && b.k == KindString {
		checkValueLen(len(a.s)+len(b.s), "joining strings")
		return String(a.s + b.s)
	}
	as, bs := renderLimited("joining strings", a), renderLimited("joining strings", b)
	checkValueLen(len(as)+len(bs), "joining strings")
	return String(as + bs)
}

// renderLimited is v.String() under the value limit, for doing
// ("joining strings").
func renderLimited(doing string, v Value) string {
	if v.k == KindString {
		return v.s
	}
	return string(encodeLimited("a string", doing, v, false))
}

func isNameByte(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// StrFormat is str.format(t, scope): template t with each $name and
// $name.path replaced by the string rendering of that path in object
// scope. A name and each path segment are runs of letters, digits and
// '_'. The longest prefix of the path that is present in scope is
// replaced, and the rest of the text stays ("$file.txt" with file
// "notes" gives "notes.txt"); a reference whose name is absent stays as
// it is ("costs $5" stays, as nano-vm leaves unresolved references). A t
// that is not a string is rendered first.
func StrFormat(t, scope Value) Value {
	s := renderLimited("filling in a template", t)
	i := strings.IndexByte(s, '$')
	if i < 0 {
		if t.k == KindString {
			return t
		}
		return String(s)
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	for i >= 0 {
		b.WriteString(s[:i])
		s = s[i:] // s[0] == '$'
		// Collect the name and its dotted segments.
		j := 1
		for j < len(s) && isNameByte(s[j]) {
			j++
		}
		if j == 1 {
			b.WriteByte('$')
			s = s[1:]
			i = strings.IndexByte(s, '$')
			continue
		}
		var endsBuf [8]int
		ends := append(endsBuf[:0], j) // candidate ends: after the name, after each segment
		for j < len(s) && s[j] == '.' {
			k := j + 1
			for k < len(s) && isNameByte(s[k]) {
				k++
			}
			if k == j+1 {
				break
			}
			j = k
			ends = append(ends, j)
		}
		done := false
		for e := len(ends) - 1; e >= 0 && scope.k == KindObject; e-- {
			if v, ok := pathLookup(scope, s[1:ends[e]]); ok {
				part := renderLimited("filling in a template", v)
				checkValueLen(b.Len()+len(part), "filling in a template")
				b.WriteString(part)
				s = s[ends[e]:]
				done = true
				break
			}
		}
		if !done {
			b.WriteString(s[:ends[0]])
			s = s[ends[0]:]
		}
		i = strings.IndexByte(s, '$')
	}
	b.WriteString(s)
	return String(b.String())
}

// StrLen is str.len(s): the number of Unicode code points of string s; 0
// for a non-string.
func StrLen(s Value) int64 {
	if s.k != KindString {
		return 0
	}
	return int64(utf8.RuneCountInString(s.s))
}

// StrIndex is str.index(s, sub): the index, in code points, of the first
// occurrence of sub in s; -1 when there is none or either is not a
// string.
func StrIndex(s, sub Value) int64 {
	if s.k != KindString || sub.k != KindString {
		return -1
	}
	i := strings.Index(s.s, sub.s)
	if i < 0 {
		return -1
	}
	return int64(utf8.RuneCountInString(s.s[:i]))
}

// StrSlice is str.slice(s, from, to): the code points of s from index
// from up to index to, both clamped to the string; empty when to <= from
// or s is not a string.
func StrSlice(s Value, from, to int64) Value {
	if s.k != KindString {
		return String("")
	}
	n := int64(utf8.RuneCountInString(s.s))
	from, to = max(0, min(from, n)), max(0, min(to, n))
	if to <= from {
		return String("")
	}
	if n == int64(len(s.s)) { // ASCII: code points are bytes
		return String(s.s[from:to])
	}
	r := []rune(s.s)
	return String(string(r[from:to]))
}

// StrTrim is str.trim(s): string s without leading and trailing white
// space (Unicode White_Space); a non-string unchanged.
func StrTrim(s Value) Value {
	if s.k != KindString {
		return s
	}
	t := strings.TrimFunc(s.s, unicode.IsSpace)
	if len(t) == len(s.s) {
		return s
	}
	return String(t)
}

// ValueHash is value.hash(v): the hex sha256 of v's canonical encoding
// (Hash): equal values hash equally in every process.
func ValueHash(v Value) Value {
	sum := sha256.Sum256(encodeLimited("a canonical encoding", "hashing a value", v, true))
	return String(hex.EncodeToString(sum[:]))
}

// ValueBool is value.bool(b): the bool b as a value.
func ValueBool(b bool) Value { return Bool(b) }

// ValueCompare is value.compare(a, b): -1, 0 or 1 as a orders before,
// with or after b: numbers numerically (NaN with anything is 0), strings
// by code points, values of different kinds by kind, other values of one
// kind 0.
func ValueCompare(a, b Value) int64 {
	if a.k != b.k {
		if a.k < b.k {
			return -1
		}
		return 1
	}
	switch a.k {
	case KindNumber:
		x, y := math.Float64frombits(a.u), math.Float64frombits(b.u)
		switch {
		case x < y:
			return -1
		case x > y:
			return 1
		}
	case KindString:
		// Byte order of UTF-8 is code point order.
		return int64(strings.Compare(a.s, b.s))
	}
	return 0
}

// ValueContains is value.contains(h, n): whether n is a substring of
// string h (n a string), an element of list h (value.eq), or a key of
// object h (n a string).
func ValueContains(h, n Value) bool {
	switch h.k {
	case KindString:
		return n.k == KindString && strings.Contains(h.s, n.s)
	case KindList:
		for _, x := range h.h.items[:h.u] {
			if ValueEq(x, n) {
				return true
			}
		}
	case KindObject:
		return n.k == KindString && h.lookup(n.s) >= 0
	}
	return false
}

// ValueEq is value.eq(a, b): deep equality; object key order does not
// matter; numbers compare as float64 (NaN is not equal to itself); errors
// are equal when their kinds and messages are.
func ValueEq(a, b Value) bool {
	if a.k != b.k {
		return false
	}
	switch a.k {
	case KindUnit:
		return true
	case KindBool:
		return a.u == b.u
	case KindNumber:
		return math.Float64frombits(a.u) == math.Float64frombits(b.u)
	case KindString:
		return a.s == b.s
	case KindError:
		return a.s == b.s && a.h.msg == b.h.msg
	case KindList:
		if a.u != b.u {
			return false
		}
		if a.h == b.h {
			return true
		}
		for i, x := range a.h.items[:a.u] {
			if !ValueEq(x, b.h.items[i]) {
				return false
			}
		}
		return true
	case KindObject:
		if a.u != b.u {
			return false
		}
		if a.h == b.h {
			return true
		}
		for i, k := range a.h.keys[:a.u] {
			j := b.lookup(k)
			if j < 0 || !ValueEq(a.h.items[i], b.h.items[j]) {
				return false
			}
		}
		return true
	}
	return false
}

// ValueKind is value.kind(v): 0 unit, 1 bool, 2 number, 3 string, 4 list,
// 5 object, 6 error.
func ValueKind(v Value) int64 { return int64(v.k) }

// ValueString is value.string(v): v rendered as a string (a string as
// itself, anything else as JSON).
func ValueString(v Value) Value {
	if v.k == KindString {
		return v
	}
	return String(string(encodeLimited("a string", "converting a value to text", v, false)))
}

// ValueTruthy is value.truthy(v): false for unit, false, 0, "", empty
// lists and objects and errors; true otherwise (NaN included).
func ValueTruthy(v Value) bool {
	switch v.k {
	case KindBool:
		return v.u != 0
	case KindNumber:
		return math.Float64frombits(v.u) != 0
	case KindString:
		return v.s != ""
	case KindList, KindObject:
		return v.u != 0
	}
	return false
}
