package runtime_test

import (
	"math"
	"reflect"
	goruntime "runtime"
	"testing"

	"github.com/genesis-toolchain/genesis/ir"
	rt "github.com/genesis-toolchain/genesis/runtime"
)

// TestBuiltinTable checks that the runtime has exactly the IR's builtins,
// each a function of the declared signature (value → Value, i64 → int64,
// bool → bool), so the Go backend can call Builtins[i].GoName.
func TestBuiltinTable(t *testing.T) {
	irb := ir.Builtins()
	if len(irb) != len(rt.Builtins) {
		t.Fatalf("the IR has %d builtins, the runtime %d", len(irb), len(rt.Builtins))
	}
	goType := map[string]reflect.Type{
		"dyn":  reflect.TypeOf(rt.Value{}),
		"i64":  reflect.TypeOf(int64(0)),
		"bool": reflect.TypeOf(false),
	}
	for i, b := range irb {
		f := rt.Builtins[i]
		if f.Name != b.Name {
			t.Errorf("builtin %d: the IR has %s, the runtime %s", i, b.Name, f.Name)
			continue
		}
		ft := reflect.TypeOf(f.Func)
		if ft.NumIn() != len(b.Params) || ft.NumOut() != len(b.Results) {
			t.Errorf("%s: %s does not match %d params and %d results", b.Name, ft, len(b.Params), len(b.Results))
			continue
		}
		for j, p := range b.Params {
			if ft.In(j) != goType[p.String()] {
				t.Errorf("%s: param %d is %s, the IR says %s", b.Name, j, ft.In(j), p)
			}
		}
		for j, p := range b.Results {
			if ft.Out(j) != goType[p.String()] {
				t.Errorf("%s: result %d is %s, the IR says %s", b.Name, j, ft.Out(j), p)
			}
		}
		if fn := runtimeFuncName(f.Func); fn != f.GoName {
			t.Errorf("%s: GoName %s, but Func is %s", b.Name, f.GoName, fn)
		}
	}
}

func runtimeFuncName(f any) string {
	name := reflectFuncName(f)
	for i := len(name) - 1; i >= 0; i-- {
		if name[i] == '.' {
			return name[i+1:]
		}
	}
	return name
}

func reflectFuncName(f any) string {
	return goruntime.FuncForPC(reflect.ValueOf(f).Pointer()).Name()
}

func j(t *testing.T, s string) rt.Value {
	t.Helper()
	v, err := rt.ParseJSONExt([]byte(s))
	if err != nil {
		t.Fatalf("bad test JSON %s: %v", s, err)
	}
	return v
}

var (
	S   = rt.String
	N   = rt.Number
	err = rt.Error
)

// TestBuiltinsValue checks every builtin that returns a value, by the JSON
// encoding of its result (errors as {"$error": …}).
func TestBuiltinsValue(t *testing.T) {
	obj := `{"name":"Ada","user":{"tags":["x","y"],"age":36},"n":null}`
	for _, c := range []struct {
		name string
		got  func() rt.Value
		want string
	}{
		{"error.kind", func() rt.Value { return rt.ErrorKind(err("timeout", "slow")) }, `"timeout"`},
		{"error.kind non-error", func() rt.Value { return rt.ErrorKind(S("x")) }, `null`},
		{"error.message", func() rt.Value { return rt.ErrorMessage(err("timeout", "slow")) }, `"slow"`},
		{"error.message non-error", func() rt.Value { return rt.ErrorMessage(N(1)) }, `null`},
		{"error.new", func() rt.Value { return rt.ErrorNew(S("k"), S("m")) }, `{"$error":{"kind":"k","message":"m"}}`},
		{"error.new non-strings", func() rt.Value { return rt.ErrorNew(N(4), j(t, `[1]`)) }, `{"$error":{"kind":"4","message":"[1]"}}`},
		{"json.encode", func() rt.Value { return rt.JSONEncode(j(t, `{"b":[1,2.5,"<&>"],"a":null}`)) }, `"{\"b\":[1,2.5,\"<&>\"],\"a\":null}"`},
		{"json.encode string", func() rt.Value { return rt.JSONEncode(S("hi")) }, `"\"hi\""`},
		{"json.parse", func() rt.Value { return rt.JSONParse(S(` {"z":1,"a":[true]} `)) }, `{"z":1,"a":[true]}`},
		{"json.parse bad", func() rt.Value { return rt.ErrorKind(rt.JSONParse(S(`{"a":`))) }, `"json"`},
		{"json.parse non-string", func() rt.Value { return rt.ErrorKind(rt.JSONParse(N(1))) }, `"json"`},
		{"list.append", func() rt.Value { return rt.ListAppend(j(t, `[1]`), S("x")) }, `[1,"x"]`},
		{"list.append non-list", func() rt.Value { return rt.ErrorKind(rt.ListAppend(S("x"), N(1))) }, `"type"`},
		{"list.get", func() rt.Value { return rt.ListGet(j(t, `[1,2,3]`), 2) }, `3`},
		{"list.get out of range", func() rt.Value { return rt.ErrorKind(rt.ListGet(j(t, `[1]`), 1)) }, `"index"`},
		{"list.get negative", func() rt.Value { return rt.ErrorKind(rt.ListGet(j(t, `[1]`), -1)) }, `"index"`},
		{"list.get non-list", func() rt.Value { return rt.ErrorKind(rt.ListGet(j(t, `{}`), 0)) }, `"type"`},
		{"list.new", func() rt.Value { return rt.ListNew() }, `[]`},
		{"list.sort_by", func() rt.Value { return rt.ListSortBy(j(t, `["a","b","c","d"]`), j(t, `[2,1,2,0]`)) }, `["d","b","a","c"]`},
		{"list.sort_by length", func() rt.Value { return rt.ErrorKind(rt.ListSortBy(j(t, `[1]`), j(t, `[]`))) }, `"type"`},
		{"num.add", func() rt.Value { return rt.NumAdd(N(1.5), N(2)) }, `3.5`},
		{"num.add type", func() rt.Value { return rt.ErrorKind(rt.NumAdd(N(1), S("2"))) }, `"type"`},
		{"num.sub", func() rt.Value { return rt.NumSub(N(1), N(3)) }, `-2`},
		{"num.sub type", func() rt.Value { return rt.ErrorKind(rt.NumSub(rt.Unit(), N(3))) }, `"type"`},
		{"num.mul", func() rt.Value { return rt.NumMul(N(-4), N(2.5)) }, `-10`},
		{"num.mul type", func() rt.Value { return rt.ErrorKind(rt.NumMul(rt.True, N(3))) }, `"type"`},
		{"num.div", func() rt.Value { return rt.NumDiv(N(7), N(2)) }, `3.5`},
		{"num.div by zero", func() rt.Value { return rt.ErrorKind(rt.NumDiv(N(7), N(0))) }, `"arith"`},
		{"num.div type", func() rt.Value { return rt.ErrorKind(rt.NumDiv(N(7), S("x"))) }, `"type"`},
		{"num.mod", func() rt.Value { return rt.NumMod(N(-7), N(3)) }, `-1`},
		{"num.mod sign of a", func() rt.Value { return rt.NumMod(N(7), N(-3)) }, `1`},
		{"num.mod fraction", func() rt.Value { return rt.NumMod(N(5.5), N(2)) }, `1.5`},
		{"num.mod by zero", func() rt.Value { return rt.ErrorKind(rt.NumMod(N(7), N(0))) }, `"arith"`},
		{"num.neg", func() rt.Value { return rt.NumNeg(N(3)) }, `-3`},
		{"num.neg type", func() rt.Value { return rt.ErrorKind(rt.NumNeg(S("3"))) }, `"type"`},
		{"num.from_int", func() rt.Value { return rt.NumFromInt(-9007199254740993) }, `-9007199254740992`},
		{"obj.get", func() rt.Value { return rt.ObjGet(j(t, obj), S("name")) }, `"Ada"`},
		{"obj.get absent", func() rt.Value { return rt.ObjGet(j(t, obj), S("zzz")) }, `null`},
		{"obj.get non-object", func() rt.Value { return rt.ObjGet(j(t, `[1]`), S("0")) }, `null`},
		{"obj.keys", func() rt.Value { return rt.ObjKeys(j(t, `{"z":1,"a":2,"m":3}`)) }, `["z","a","m"]`},
		{"obj.keys non-object", func() rt.Value { return rt.ObjKeys(N(1)) }, `[]`},
		{"obj.new", func() rt.Value { return rt.ObjNew() }, `{}`},
		{"obj.set new key last", func() rt.Value { return rt.ObjSet(j(t, `{"b":1,"a":2}`), S("c"), N(3)) }, `{"b":1,"a":2,"c":3}`},
		{"obj.set keeps place", func() rt.Value { return rt.ObjSet(j(t, `{"b":1,"a":2}`), S("b"), N(9)) }, `{"b":9,"a":2}`},
		{"obj.set non-object", func() rt.Value { return rt.ErrorKind(rt.ObjSet(j(t, `[]`), S("b"), N(9))) }, `"type"`},
		{"path.get", func() rt.Value { return rt.PathGet(j(t, obj), S("user.tags.1")) }, `"y"`},
		{"path.get number", func() rt.Value { return rt.PathGet(j(t, obj), S("user.age")) }, `36`},
		{"path.get absent", func() rt.Value { return rt.PathGet(j(t, obj), S("user.tags.7")) }, `null`},
		{"path.get through a string", func() rt.Value { return rt.PathGet(j(t, obj), S("name.x")) }, `null`},
		{"path.get bad index", func() rt.Value { return rt.PathGet(j(t, obj), S("user.tags.01")) }, `null`},
		{"path.get empty path", func() rt.Value { return rt.PathGet(j(t, `[1]`), S("")) }, `[1]`},
		{"str.concat", func() rt.Value { return rt.StrConcat(S("a"), S("b")) }, `"ab"`},
		{"str.concat renders", func() rt.Value { return rt.StrConcat(N(1.5), j(t, `{"x":[true]}`)) }, `"1.5{\"x\":[true]}"`},
		{"str.format", func() rt.Value { return rt.StrFormat(S("Hi $name, tag $user.tags.0."), j(t, obj)) }, `"Hi Ada, tag x."`},
		{"str.format renders JSON", func() rt.Value { return rt.StrFormat(S("$user.tags / $n"), j(t, obj)) }, `"[\"x\",\"y\"] / null"`},
		{"str.format unresolved stays", func() rt.Value { return rt.StrFormat(S("costs $5 or $nope, $ alone"), j(t, obj)) }, `"costs $5 or $nope, $ alone"`},
		{"str.format longest present prefix", func() rt.Value { return rt.StrFormat(S("$name.txt"), j(t, obj)) }, `"Ada.txt"`},
		{"str.format non-object scope", func() rt.Value { return rt.StrFormat(S("$name"), S("x")) }, `"$name"`},
		{"str.format no refs", func() rt.Value { return rt.StrFormat(S("plain"), j(t, obj)) }, `"plain"`},
		{"str.trim", func() rt.Value { return rt.StrTrim(S(" \t yes\n\u00a0")) }, `"yes"`},
		{"str.trim inner space stays", func() rt.Value { return rt.StrTrim(S(" a b ")) }, `"a b"`},
		{"str.trim non-string", func() rt.Value { return rt.StrTrim(N(1)) }, `1`},
		{"str.index", func() rt.Value { return rt.NumFromInt(rt.StrIndex(S("héllo wörld"), S("wö"))) }, `6`},
		{"str.index absent", func() rt.Value { return rt.NumFromInt(rt.StrIndex(S("abc"), S("x"))) }, `-1`},
		{"str.index non-string", func() rt.Value { return rt.NumFromInt(rt.StrIndex(N(1), S("1"))) }, `-1`},
		{"str.slice", func() rt.Value { return rt.StrSlice(S("héllo wörld"), 6, 11) }, `"wörld"`},
		{"str.slice ascii", func() rt.Value { return rt.StrSlice(S("hello"), 1, 3) }, `"el"`},
		{"str.slice clamped", func() rt.Value { return rt.StrSlice(S("abc"), -5, 99) }, `"abc"`},
		{"str.slice empty", func() rt.Value { return rt.StrSlice(S("abc"), 2, 1) }, `""`},
		{"value.hash", func() rt.Value { return rt.ValueHash(j(t, `{"b":[1,"x",null],"a":true}`)) }, `"a144dac9657f9c4b949d89c845477e0004415445d58f2ef674a44a8fc0ac0dec"`},
		{"value.hash key order", func() rt.Value { return rt.ValueHash(j(t, `{"a":true,"b":[1.0,"x",null]}`)) }, `"a144dac9657f9c4b949d89c845477e0004415445d58f2ef674a44a8fc0ac0dec"`},
		{"value.bool", func() rt.Value { return rt.ValueBool(true) }, `true`},
		{"value.string string", func() rt.Value { return rt.ValueString(S("x")) }, `"x"`},
		{"value.string other", func() rt.Value { return rt.ValueString(j(t, `{"a":[1,null]}`)) }, `"{\"a\":[1,null]}"`},
		{"value.string unit", func() rt.Value { return rt.ValueString(rt.Unit()) }, `"null"`},
	} {
		if got := string(rt.EncodeJSON(c.got())); got != c.want {
			t.Errorf("%s = %s, want %s", c.name, got, c.want)
		}
	}
}

// TestBuiltinsScalar checks the builtins that return i64 or bool.
func TestBuiltinsScalar(t *testing.T) {
	obj := j(t, `{"a":1,"b":[1,"2",{"c":null}]}`)
	for _, c := range []struct {
		name      string
		got, want any
	}{
		{"error.is", rt.ErrorIs(err("k", "m")), true},
		{"error.is non-error", rt.ErrorIs(rt.Unit()), false},
		{"list.len", rt.ListLen(j(t, `[1,2,3]`)), int64(3)},
		{"list.len non-list", rt.ListLen(S("abc")), int64(0)},
		{"num.to_int", rt.NumToInt(N(-3.9)), int64(-3)},
		{"num.to_int positive", rt.NumToInt(N(3.9)), int64(3)},
		{"num.to_int saturates", rt.NumToInt(N(1e300)), int64(math.MaxInt64)},
		{"num.to_int saturates low", rt.NumToInt(N(-1e300)), int64(math.MinInt64)},
		{"num.to_int NaN", rt.NumToInt(N(math.NaN())), int64(0)},
		{"num.to_int non-number", rt.NumToInt(S("5")), int64(0)},
		{"obj.has", rt.ObjHas(obj, S("a")), true},
		{"obj.has absent", rt.ObjHas(obj, S("z")), false},
		{"obj.has non-object", rt.ObjHas(S("a"), S("a")), false},
		{"str.len", rt.StrLen(S("héllo😀")), int64(6)},
		{"str.len non-string", rt.StrLen(N(12)), int64(0)},
		{"value.compare numbers", rt.ValueCompare(N(2), N(10)), int64(-1)},
		{"value.compare equal", rt.ValueCompare(N(2), N(2)), int64(0)},
		{"value.compare strings", rt.ValueCompare(S("b"), S("abc")), int64(1)},
		{"value.compare code points", rt.ValueCompare(S("é"), S("z")), int64(1)},
		{"value.compare kinds", rt.ValueCompare(S("a"), N(5)), int64(1)},
		{"value.compare unit first", rt.ValueCompare(rt.Unit(), rt.False), int64(-1)},
		{"value.compare same other kind", rt.ValueCompare(j(t, `[2]`), j(t, `[1]`)), int64(0)},
		{"value.compare NaN", rt.ValueCompare(N(math.NaN()), N(1)), int64(0)},
		{"value.contains substring", rt.ValueContains(S("refund approved"), S("approved")), true},
		{"value.contains not substring", rt.ValueContains(S("refund"), S("x")), false},
		{"value.contains non-string needle", rt.ValueContains(S("a1"), N(1)), false},
		{"value.contains element", rt.ValueContains(j(t, `[1,{"a":[2]}]`), j(t, `{"a":[2]}`)), true},
		{"value.contains not element", rt.ValueContains(j(t, `[1,2]`), S("1")), false},
		{"value.contains key", rt.ValueContains(obj, S("b")), true},
		{"value.contains not key", rt.ValueContains(obj, S("c")), false},
		{"value.contains non-container", rt.ValueContains(N(12), N(1)), false},
		{"value.eq deep, key order ignored", rt.ValueEq(j(t, `{"a":[1,{"x":null}],"b":"s"}`), j(t, `{"b":"s","a":[1,{"x":null}]}`)), true},
		{"value.eq different", rt.ValueEq(j(t, `{"a":[1,2]}`), j(t, `{"a":[1,3]}`)), false},
		{"value.eq kinds", rt.ValueEq(N(1), S("1")), false},
		{"value.eq errors", rt.ValueEq(err("k", "m"), err("k", "m")), true},
		{"value.eq error messages", rt.ValueEq(err("k", "m"), err("k", "n")), false},
		{"value.eq extra key", rt.ValueEq(j(t, `{"a":1}`), j(t, `{"a":1,"b":2}`)), false},
		{"value.eq NaN", rt.ValueEq(N(math.NaN()), N(math.NaN())), false},
		{"value.eq unit", rt.ValueEq(rt.Unit(), rt.Unit()), true},
		{"value.kind unit", rt.ValueKind(rt.Unit()), int64(0)},
		{"value.kind bool", rt.ValueKind(rt.False), int64(1)},
		{"value.kind number", rt.ValueKind(N(0)), int64(2)},
		{"value.kind string", rt.ValueKind(S("")), int64(3)},
		{"value.kind list", rt.ValueKind(rt.ListNew()), int64(4)},
		{"value.kind object", rt.ValueKind(rt.ObjNew()), int64(5)},
		{"value.kind error", rt.ValueKind(err("k", "")), int64(6)},
		{"value.truthy unit", rt.ValueTruthy(rt.Unit()), false},
		{"value.truthy false", rt.ValueTruthy(rt.False), false},
		{"value.truthy 0", rt.ValueTruthy(N(0)), false},
		{"value.truthy -0", rt.ValueTruthy(N(math.Copysign(0, -1))), false},
		{"value.truthy empty string", rt.ValueTruthy(S("")), false},
		{"value.truthy empty list", rt.ValueTruthy(rt.ListNew()), false},
		{"value.truthy empty object", rt.ValueTruthy(rt.ObjNew()), false},
		{"value.truthy error", rt.ValueTruthy(err("k", "m")), false},
		{"value.truthy true", rt.ValueTruthy(rt.True), true},
		{"value.truthy number", rt.ValueTruthy(N(-0.5)), true},
		{"value.truthy NaN", rt.ValueTruthy(N(math.NaN())), true},
		{"value.truthy string", rt.ValueTruthy(S("false")), true},
		{"value.truthy list", rt.ValueTruthy(j(t, `[null]`)), true},
		{"value.truthy object", rt.ValueTruthy(j(t, `{"a":null}`)), true},
	} {
		if c.got != c.want {
			t.Errorf("%s = %v, want %v", c.name, c.got, c.want)
		}
	}
}

// TestBuiltinsNoAllocKindChecks pins that kind checks and scalar builtins
// do not allocate.
func TestBuiltinsNoAllocKindChecks(t *testing.T) {
	v := j(t, `{"a":[1,2,3],"b":"text"}`)
	s, n := S("hello"), N(2)
	allocs := testing.AllocsPerRun(100, func() {
		_ = rt.ErrorIs(v)
		_ = rt.ValueKind(v)
		_ = rt.ValueTruthy(s)
		_ = rt.ObjHas(v, S("a"))
		_ = rt.ObjGet(v, S("b"))
		_ = rt.ListLen(rt.ObjGet(v, S("a")))
		_ = rt.NumAdd(n, n)
		_ = rt.ValueEq(v, v)
		_ = rt.ValueCompare(s, s)
		_ = rt.StrLen(s)
		_ = rt.PathGet(v, S("a.1"))
	})
	if allocs != 0 {
		t.Errorf("%v allocations per run, want 0", allocs)
	}
}

// TestBuiltinErrorsSpeakTheUsersWords checks the messages of the errors
// builtins return: they name the operation as the program wrote it (the
// operator, indexing, sorting), never the builtin that does it
// (num.div, list.get), which the user never wrote.
func TestBuiltinErrorsSpeakTheUsersWords(t *testing.T) {
	msg := func(v rt.Value) string {
		if !v.IsError() {
			t.Fatalf("%s is not an error", v)
		}
		return rt.ErrorMessage(v).Str()
	}
	for _, c := range []struct {
		got  rt.Value
		want string
	}{
		{rt.NumDiv(N(7), N(0)), "division by zero"},
		{rt.NumMod(N(7), N(0)), "modulo by zero (the right operand of % is 0)"},
		{rt.ListGet(j(t, `[1,2,3]`), 5), "index 5 out of range for a list of 3 items"},
		{rt.ListGet(j(t, `[1]`), -1), "index -1 out of range for a list of 1 item"},
		{rt.ListGet(j(t, `[]`), 0), "index 0 out of range for an empty list"},
		{rt.ListGet(j(t, `{}`), 0), "only a list can be indexed by number, not an object"},
		{rt.NumAdd(N(1), S("2")), "+ needs two numbers, not a number and a string"},
		{rt.NumSub(rt.Unit(), N(3)), "- needs two numbers, not no value and a number"},
		{rt.NumMul(rt.True, N(3)), "* needs two numbers, not a bool and a number"},
		{rt.NumDiv(N(7), S("x")), "/ needs two numbers, not a number and a string"},
		{rt.NumMod(j(t, `[1]`), N(2)), "% needs two numbers, not a list and a number"},
		{rt.NumNeg(S("3")), "unary - needs a number, not a string"},
		{rt.NumAdd(rt.NumDiv(N(1), N(0)), N(1)), "+ needs two numbers, not an error (arith: division by zero) and a number"},
		{rt.ListAppend(S("x"), N(1)), "only a list can be appended to, not a string"},
		{rt.ListSortBy(N(1), j(t, `[]`)), "sorting needs a list (and its list of keys), not a number and a list"},
		{rt.ListSortBy(j(t, `[1]`), j(t, `[]`)), "sorting a list of 1 item by 0 keys: one key is needed for each item"},
		{rt.ObjSet(j(t, `[]`), S("k"), N(1)), "only an object has fields to set, not a list"},
		{rt.JSONParse(N(1)), "only a string can be parsed as JSON, not a number"},
	} {
		if got := msg(c.got); got != c.want {
			t.Errorf("message %q, want %q", got, c.want)
		}
	}
}
