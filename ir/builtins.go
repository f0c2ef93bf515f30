package ir

import "sort"

// Builtin is a runtime function on dynamic values, called by the builtin
// instruction. Builtins are deterministic and perform no effects; the
// effects of agent programs are instructions of their own. Values are
// immutable: operations that "modify" a list or object return a new one
// (the runtime may share structure or update in place when it can prove
// the old value dead).
type Builtin struct {
	Name            string
	Params, Results []Type
	Doc             string
	// Fallible marks the builtins that return an error value for operands
	// a program wrote (an operator on the wrong kinds, a division by zero,
	// an index out of range): the backends give such an error the source
	// position of the operation (runtime.ErrorAt), as step identities
	// name theirs.
	Fallible bool
}

func bi(name string, params []Type, result Type, doc string) Builtin {
	b := Builtin{Name: name, Params: params, Doc: doc}
	if result.IsValid() {
		b.Results = []Type{result}
	}
	return b
}

var (
	v1 = []Type{Dyn}
	v2 = []Type{Dyn, Dyn}
	v3 = []Type{Dyn, Dyn, Dyn}
)

// builtinTable declares every builtin, sorted by name.
var builtinTable = []Builtin{
	bi("error.is", v1, Bool, "error.is(v): whether v is an error value."),
	bi("error.kind", v1, Dyn, "error.kind(e): the kind string of error e (e.g. \"timeout\"); unit for a non-error."),
	bi("error.message", v1, Dyn, "error.message(e): the message string of error e; unit for a non-error."),
	bi("error.new", v2, Dyn, "error.new(kind, message): a new error value."),
	bi("json.canonical", v1, Dyn, "json.canonical(v): v's canonical encoding (docs/runtime.md) as a string: JSON with every object's keys sorted."),
	bi("json.encode", v1, Dyn, "json.encode(v): v as a JSON string (objects keep their key order)."),
	bi("json.parse", v1, Dyn, "json.parse(s): the value of JSON text s, or an error value (kind \"json\")."),
	bi("list.append", v2, Dyn, "list.append(l, v): l with v added at the end."),
	bi("list.get", []Type{Dyn, I64}, Dyn, "list.get(l, i): element i of list l (from 0), or an error value (kind \"index\") when out of range."),
	bi("list.len", v1, I64, "list.len(l): the number of elements of list l; 0 for a non-list."),
	bi("list.new", nil, Dyn, "list.new(): the empty list."),
	bi("list.sort_by", v2, Dyn, "list.sort_by(l, keys): the elements of list l ordered by the elements of list keys at the same index (value.compare), stably; an error value (kind \"type\") when they are not lists of one length."),
	bi("num.add", v2, Dyn, "num.add(a, b): a + b for numbers (float64); an error value (kind \"type\") otherwise."),
	bi("num.div", v2, Dyn, "num.div(a, b): a / b; an error value (kind \"arith\") when b is 0."),
	bi("num.from_int", []Type{I64}, Dyn, "num.from_int(i): the signed integer i as a number value."),
	bi("num.mod", v2, Dyn, "num.mod(a, b): the remainder of a / b with the sign of a; an error value when b is 0."),
	bi("num.mul", v2, Dyn, "num.mul(a, b): a × b."),
	bi("num.neg", v1, Dyn, "num.neg(a): -a."),
	bi("num.sub", v2, Dyn, "num.sub(a, b): a - b."),
	bi("num.to_int", v1, I64, "num.to_int(v): number v truncated toward zero and saturated to i64; 0 for a non-number."),
	bi("obj.get", v2, Dyn, "obj.get(o, k): the value at key k of object o; unit when absent."),
	bi("obj.has", v2, Bool, "obj.has(o, k): whether object o has key k."),
	bi("obj.keys", v1, Dyn, "obj.keys(o): the keys of object o, a list of strings in insertion order."),
	bi("obj.new", nil, Dyn, "obj.new(): the empty object."),
	bi("obj.set", v3, Dyn, "obj.set(o, k, v): o with key k set to v (a new key goes last; an existing key keeps its place)."),
	bi("path.get", v2, Dyn, "path.get(v, p): the value at dotted path p (a string like \"a.b.0\") in v; unit when absent."),
	bi("str.concat", v2, Dyn, "str.concat(a, b): the concatenation of the string renderings of a and b."),
	bi("str.format", v2, Dyn, "str.format(t, scope): template t with each $name and $name.path replaced by the string rendering of that path in object scope."),
	bi("str.index", v2, I64, "str.index(s, sub): the index, in code points, of the first occurrence of string sub in string s; -1 when there is none or either is not a string."),
	bi("str.len", v1, I64, "str.len(s): the number of Unicode code points of string s; 0 for a non-string."),
	bi("str.slice", []Type{Dyn, I64, I64}, Dyn, "str.slice(s, from, to): the code points of string s from index from up to index to (clamped to the string; empty when to <= from); a non-string gives the empty string."),
	bi("str.trim", v1, Dyn, "str.trim(s): string s without leading and trailing white space (Unicode White_Space); a non-string unchanged."),
	bi("value.bool", []Type{Bool}, Dyn, "value.bool(b): the bool b as a value."),
	bi("value.compare", v2, I64, "value.compare(a, b): -1, 0 or 1 as a orders before, with or after b (numbers numerically, strings by code points; other kinds by kind, then 0)."),
	bi("value.contains", v2, Bool, "value.contains(h, n): whether n is a substring of string h, an element of list h, or a key of object h."),
	bi("value.eq", v2, Bool, "value.eq(a, b): deep equality (object key order does not matter)."),
	bi("value.hash", v1, Dyn, "value.hash(v): the hex sha256 of v's canonical encoding (docs/runtime.md): equal values hash equally in every process."),
	bi("value.kind", v1, I64, "value.kind(v): 0 unit, 1 bool, 2 number, 3 string, 4 list, 5 object, 6 error."),
	bi("value.string", v1, Dyn, "value.string(v): v rendered as a string (a string as itself, anything else as JSON)."),
	bi("value.truthy", v1, Bool, "value.truthy(v): false for unit, false, 0, \"\", empty lists and objects and errors; true otherwise."),
}

// fallible lists the Fallible builtins.
var fallible = []string{
	"json.parse", "list.append", "list.get", "list.sort_by",
	"num.add", "num.div", "num.mod", "num.mul", "num.neg", "num.sub", "obj.set",
}

func init() {
	for _, name := range fallible {
		b, ok := LookupBuiltin(name)
		if !ok {
			panic("ir: fallible builtin " + name + " is not in builtinTable")
		}
		b.Fallible = true
	}
	if !sort.SliceIsSorted(builtinTable, func(i, j int) bool { return builtinTable[i].Name < builtinTable[j].Name }) {
		panic("ir: builtinTable is not sorted")
	}
}

// LookupBuiltin returns the builtin named name.
func LookupBuiltin(name string) (*Builtin, bool) {
	i := sort.Search(len(builtinTable), func(i int) bool { return builtinTable[i].Name >= name })
	if i < len(builtinTable) && builtinTable[i].Name == name {
		return &builtinTable[i], true
	}
	return nil, false
}

// Builtins returns every builtin, sorted by name. The result must not be
// modified.
func Builtins() []Builtin { return builtinTable }
