package runtime

import (
	"strconv"
	"testing"
)

// TestObjectGrowth builds a large object key by key, as an agent program
// records step outputs, and checks that versions stay independent: the
// longest version appends in place, a shorter one copies, and neither
// sees the other's keys.
func TestObjectGrowth(t *testing.T) {
	o := ObjNew()
	var versions []Value
	for i := 0; i < 100; i++ {
		o = ObjSet(o, String("k"+strconv.Itoa(i)), Number(float64(i)))
		versions = append(versions, o)
	}
	short := versions[49] // 50 keys
	branch := ObjSet(short, String("other"), Bool(true))
	long := ObjSet(o, String("k100"), Number(100))
	if ObjHas(short, String("k50")) || ObjHas(short, String("other")) {
		t.Error("the 50-key version sees a later key")
	}
	if !ObjHas(branch, String("other")) || ObjHas(branch, String("k50")) || ListLen(ObjKeys(branch)) != 51 {
		t.Errorf("the branch is wrong: %s", EncodeJSON(branch))
	}
	if ObjHas(long, String("other")) || !ObjHas(long, String("k99")) || ListLen(ObjKeys(long)) != 101 {
		t.Errorf("the long version is wrong")
	}
	for i, v := range versions {
		if n := ListLen(ObjKeys(v)); n != int64(i+1) {
			t.Fatalf("version %d has %d keys", i, n)
		}
		if got := ObjGet(v, String("k"+strconv.Itoa(i))); !ValueEq(got, Number(float64(i))) {
			t.Fatalf("version %d: k%d = %s", i, i, EncodeJSON(got))
		}
	}
	// Replacing a key leaves the other versions alone.
	r := ObjSet(versions[99], String("k5"), String("five"))
	if !ValueEq(ObjGet(versions[99], String("k5")), Number(5)) || !ValueEq(ObjGet(r, String("k5")), String("five")) {
		t.Error("replacing a key changed another version")
	}
}

// TestObjectAppendAmortized checks that appending to the longest version
// of a large object allocates nothing on average: building an object key
// by key is linear, not quadratic.
func TestObjectAppendAmortized(t *testing.T) {
	keys := make([]Value, 4096)
	for i := range keys {
		keys[i] = String("key" + strconv.Itoa(i))
	}
	allocs := testing.AllocsPerRun(10, func() {
		o := ObjNew()
		for _, k := range keys {
			o = ObjSet(o, k, Unit())
		}
	})
	if perKey := allocs / float64(len(keys)); perKey > 0.1 {
		t.Errorf("%.2f allocations per key appended, want amortized O(1) (≈ 0)", perKey)
	}
}
