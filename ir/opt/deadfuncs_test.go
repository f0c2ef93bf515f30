package opt

import (
	"strings"
	"testing"

	"github.com/genesis-toolchain/genesis/ir"
)

// TestDeadfuncs checks which functions the program reaches: through
// calls, func_ref, parallel branches and asm CALLs, transitively; the
// others go, the kept ones stay in order, and a module without main
// keeps everything.
func TestDeadfuncs(t *testing.T) {
	for _, c := range []struct {
		name string
		src  string
		want string // the functions kept, in order
	}{
		{"call chain", `
func @c() {
  return
}
func @dead() {
  call @c()
  return
}
func @b() {
  call @c()
  return
}
func @main() {
  call @b()
  return
}
`, "c b main"},
		{"recursion alone is not reached", `
func @even(%n: i64) -> i64 {
  %r = call @odd(%n) -> i64
  return %r
}
func @odd(%n: i64) -> i64 {
  %r = call @even(%n) -> i64
  return %r
}
func @main() {
  return
}
`, "main"},
		{"func_ref", `
func @target() -> i64 {
  %c = const i64 1
  return %c
}
func @other() -> i64 {
  %c = const i64 2
  return %c
}
func @main() -> i64 {
  %f = func_ref @target fn() -> (i64)
  %r = call_indirect %f() -> i64
  return %r
}
`, "target main"},
		{"parallel branches", `
func @a(%x: dyn) -> dyn {
  return %x
}
func @w(%x: dyn, %y: dyn) -> dyn {
  return %y
}
func @e(%x: dyn) -> dyn {
  return %x
}
func @unused(%x: dyn) -> dyn {
  return %x
}
func @main(%in: dyn) -> dyn {
  %n = const i64 0
  %p = parallel "p" %n, %in @a, @w(0)
  %q = parallel.each "q" %n, %p @e
  return %q
}
`, "a w e main"},
		{"asm CALL", `
func @helper() {
  return
}
func @helper2() {
  return
}
func @main() {
  asm "CALL helper"
  return
}
`, "helper main"},
		{"no main", `
func @f() {
  return
}
func @g() {
  return
}
`, "f g"},
	} {
		t.Run(c.name, func(t *testing.T) {
			m, ds := ir.Parse(c.name+".ir", []byte(c.src))
			if ds.HasErrors() {
				t.Fatal(ds.Error())
			}
			if ds := ir.Verify(m); ds.HasErrors() {
				t.Fatal(ds.Error())
			}
			deadfuncs(m)
			var names []string
			for _, f := range m.Funcs {
				names = append(names, f.Name)
			}
			if got := strings.Join(names, " "); got != c.want {
				t.Errorf("kept %q, want %q", got, c.want)
			}
			if ds := ir.Verify(m); ds.HasErrors() {
				t.Errorf("the module does not verify after deadfuncs: %s", ds.Error())
			}
		})
	}
}
