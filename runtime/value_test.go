package runtime

import (
	"math"
	"strings"
	"testing"
)

func mustJSON(t testing.TB, s string) Value {
	t.Helper()
	v, err := ParseJSON([]byte(s))
	if err != nil {
		t.Fatalf("ParseJSON(%q): %v", s, err)
	}
	return v
}

func TestValueConstructorsAndAccessors(t *testing.T) {
	var zero Value
	if !zero.IsUnit() || zero.Kind() != KindUnit {
		t.Errorf("the zero Value is %v, want unit", zero.Kind())
	}
	if b, ok := Bool(true).AsBool(); !b || !ok {
		t.Error("Bool(true).AsBool() is not (true, true)")
	}
	if n, ok := Int(-7).AsNumber(); n != -7 || !ok {
		t.Errorf("Int(-7).AsNumber() = %v, %v", n, ok)
	}
	if s, ok := String("héllo").AsString(); s != "héllo" || !ok {
		t.Errorf("AsString = %q, %v", s, ok)
	}
	if _, ok := Number(1).AsString(); ok {
		t.Error("a number is a string")
	}
	l := List(Int(1), String("a"))
	if l.Len() != 2 || l.Index(1).Str() != "a" || !l.Index(5).IsUnit() {
		t.Errorf("list accessors: len %d, [1] %v, [5] %v", l.Len(), l.Index(1), l.Index(5))
	}
	o := Object(Field{"b", Int(1)}, Field{"a", Int(2)}, Field{"b", Int(3)})
	if got := strings.Join(o.Keys(), ","); got != "b,a" {
		t.Errorf("keys %q, want b,a (a repeated key keeps its first place)", got)
	}
	if v, ok := o.Get("b"); !ok || v.Num() != 3 {
		t.Errorf(`Get("b") = %v, %v, want 3 (its last value)`, v, ok)
	}
	e := Error("timeout", "too slow")
	if !e.IsError() || e.ErrKind() != "timeout" || e.ErrMessage() != "too slow" {
		t.Errorf("error accessors: %q %q", e.ErrKind(), e.ErrMessage())
	}
	if got := e.String(); got != `{"$error":{"kind":"timeout","message":"too slow"}}` {
		t.Errorf("error rendering %s", got)
	}
}

func TestValueImmutability(t *testing.T) {
	// Appending to an old version of a list must not change a newer one
	// that shares its backing array, nor the old one.
	l0 := ListNew()
	l1 := ListAppend(l0, Int(1))
	l2 := ListAppend(l1, Int(2))
	l2b := ListAppend(l1, String("other")) // l1 is no longer the longest version: copies
	l3 := ListAppend(l2, Int(3))
	for _, c := range []struct {
		v    Value
		want string
	}{{l0, "[]"}, {l1, "[1]"}, {l2, "[1,2]"}, {l2b, `[1,"other"]`}, {l3, "[1,2,3]"}} {
		if got := c.v.String(); got != c.want {
			t.Errorf("list version %s, want %s", got, c.want)
		}
	}
	o1 := ObjSet(ObjNew(), String("a"), Int(1))
	o2 := ObjSet(o1, String("a"), Int(2))
	o3 := ObjSet(o2, String("b"), Int(3))
	if o1.String() != `{"a":1}` || o2.String() != `{"a":2}` || o3.String() != `{"a":2,"b":3}` {
		t.Errorf("objects changed: %s %s %s", o1, o2, o3)
	}
}

func TestLargeObjectLookup(t *testing.T) {
	o := ObjNew()
	for i := 0; i < 100; i++ {
		o = ObjSet(o, NumFromInt(int64(i)), NumFromInt(int64(i*i)))
	}
	if got := ObjGet(o, String("42")).Num(); got != 1764 {
		t.Errorf(`o["42"] = %v`, got)
	}
	o2 := ObjSet(o, String("42"), String("x"))
	if ObjGet(o2, String("42")).Str() != "x" || ObjGet(o, String("42")).Num() != 1764 {
		t.Error("updating a large object changed the old one or did not take")
	}
	if ObjHas(o, String("100")) || !ObjHas(o, String("99")) {
		t.Error("ObjHas on a large object")
	}
	if ObjKeys(o).Len() != 100 || ObjKeys(o).Index(0).Str() != "0" {
		t.Error("keys of a large object out of order")
	}
}

func TestJSONEncode(t *testing.T) {
	for _, c := range []struct {
		v    Value
		want string
	}{
		{Value{}, "null"},
		{True, "true"},
		{Number(0), "0"},
		{Number(math.Copysign(0, -1)), "0"},
		{Number(1.5), "1.5"},
		{Number(-42), "-42"},
		{Number(1e21), "1e+21"},
		{Number(1e20), "100000000000000000000"},
		{Number(1e-7), "1e-7"},
		{Number(0.000001), "0.000001"},
		{NumAdd(Number(0.1), Number(0.2)), "0.30000000000000004"},
		{Number(123456789012345680), "123456789012345680"},
		{Number(math.Inf(1)), "null"},
		{Number(math.NaN()), "null"},
		{String("a\"b\\c\n\t\x01<>&é😀"), `"a\"b\\c\n\t\u0001<>&é😀"`},
		{String("bad\xffutf8"), "\"bad\uFFFDutf8\""},
		{List(), "[]"},
		{Object(Field{"z", Int(1)}, Field{"a", List(True, Value{})}), `{"z":1,"a":[true,null]}`},
		{Error("k", "m"), `{"$error":{"kind":"k","message":"m"}}`},
	} {
		if got := string(EncodeJSON(c.v)); got != c.want {
			t.Errorf("EncodeJSON = %s, want %s", got, c.want)
		}
	}
}

func TestCanonical(t *testing.T) {
	a := mustJSON(t, `{"b": 1, "a": {"y": [1, 2.50], "x": "\u00e9"}, "\ud83d\ude00": 0, "\uffff": 1}`)
	b := mustJSON(t, `{"\uffff":1, "a": {"x": "é", "y": [1, 2.5]}, "b": 1.0, "😀": 0}`)
	// RFC 8785 orders keys by UTF-16 code units: U+1F600 (D83D DE00)
	// comes before U+FFFF.
	want := `{"a":{"x":"é","y":[1,2.5]},"b":1,"😀":0,"` + "\uffff" + `":1}`
	if got := string(Canonical(a)); got != want {
		t.Errorf("Canonical = %s\nwant %s", got, want)
	}
	if Hash(a) != Hash(b) {
		t.Error("equal values hash differently")
	}
	// The hash is fixed across processes and versions (computed
	// independently: Python's json.dumps(sort_keys=True,
	// separators=(",", ":"), ensure_ascii=False) and hashlib.sha256).
	if got, want := Hash(mustJSON(t, `{"b":[1,"x",null],"a":true}`)), "a144dac9657f9c4b949d89c845477e0004415445d58f2ef674a44a8fc0ac0dec"; got != want {
		t.Errorf("Hash = %s, want %s", got, want)
	}
}

func TestParseJSON(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{`  {"a":[1,-0.5e2,"x\u0041\n"],"b":{}}  `, `{"a":[1,-50,"xA\n"],"b":{}}`},
		{`"\ud83d\ude00 \ud800 x"`, "\"😀 \uFFFD x\""},
		{`{"k":1,"j":2,"k":3}`, `{"k":3,"j":2}`},
		{`[]`, `[]`},
		{`null`, `null`},
		{`12345678901234567890`, `12345678901234567000`},
		{`{"$error":{"kind":"x","message":"y"}}`, `{"$error":{"kind":"x","message":"y"}}`},
	} {
		v, err := ParseJSON([]byte(c.in))
		if err != nil {
			t.Errorf("ParseJSON(%s): %v", c.in, err)
			continue
		}
		if got := string(EncodeJSON(v)); got != c.want {
			t.Errorf("ParseJSON(%s) = %s, want %s", c.in, got, c.want)
		}
	}
	if v := mustJSON(t, `{"$error":{"kind":"x","message":"y"}}`); v.IsError() {
		t.Error("ParseJSON decoded $error: only ParseJSONExt does")
	}
	if v, err := ParseJSONExt([]byte(`[{"$error":{"kind":"x","message":"y"}}]`)); err != nil || !v.Index(0).IsError() {
		t.Errorf("ParseJSONExt did not decode a nested $error: %v %v", v, err)
	}
	for _, bad := range []string{``, ` `, `{`, `[1,]`, `{"a" 1}`, `{"a":1,}`, `01`, `1.`, `.5`, `-`, `1e`, `+1`,
		`"abc`, "\"a\x01\"", `"\x"`, `"\u12"`, `tru`, `nul`, `[1] 2`, `{1:2}`, `1e400`, `NaN`, `'a'`} {
		if _, err := ParseJSON([]byte(bad)); err == nil {
			t.Errorf("ParseJSON(%q) succeeded", bad)
		}
	}
	deep := strings.Repeat("[", maxDepth+1) + strings.Repeat("]", maxDepth+1)
	if _, err := ParseJSON([]byte(deep)); err == nil {
		t.Error("ParseJSON accepted nesting beyond maxDepth")
	}
}
