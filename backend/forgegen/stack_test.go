package forgegen_test

import (
	"testing"

	"github.com/genesis-toolchain/genesis/backend/forgegen"
	"github.com/genesis-toolchain/genesis/forge/asm"
	"github.com/genesis-toolchain/genesis/ir"
)

// TestStackUse checks the figures BuildStack reports against the code
// the backend emits for a recursion: count keeps n live across its call
// to itself, so the call pushes it (8 bytes before the CALL, 16 with the
// return address), and the store into its slot comes after that PUSH
// was popped; main's call pushes nothing; only count has a frame.
func TestStackUse(t *testing.T) {
	const src = `func @count(%n: i64) -> i64 {
  slot $cell: 8 align 8
  %zero = const i64 0
  %done = eq %n, %zero
  if %done {
    return %zero
  }
  %one = const i64 1
  %m = sub %n, %one
  %r = call @count(%m) -> i64
  %p = addr_of $cell
  store %r, %p, 0
  %s = add %r, %n
  return %s
}

func @main() -> i64 {
  %k = const i64 5
  %r = call @count(%k) -> i64
  return %r
}
`
	m, diags := ir.Parse("count.ir", []byte(src))
	if diags.HasErrors() {
		t.Fatal(diags.Error())
	}
	if diags := ir.Verify(m); diags.HasErrors() {
		t.Fatal(diags.Error())
	}
	p, stack, diags := forgegen.BuildStack(m, "count.s.fasm")
	if diags.HasErrors() {
		t.Fatal(diags.Error())
	}
	find := func(fn string, op ir.Op) *ir.Instr {
		var found *ir.Instr
		ir.Walk(m.Func(fn).Body, func(in *ir.Instr) {
			if in.Op == op {
				found = in
			}
		})
		return found
	}
	count, main := stack.Funcs["count"], stack.Funcs["main"]
	for name, fs := range stack.Funcs {
		if fs.Inexact != "" {
			t.Errorf("%s: %s", name, fs.Inexact)
		}
	}
	if count.Frame != 16 || main.Frame != 0 || count.Entry != 0 {
		t.Errorf("frames %d and %d, entry %d; want 16, 0 and 0", count.Frame, main.Frame, count.Entry)
	}
	if got, want := count.Instrs[find("count", ir.OpCall)], (forgegen.InstrStack{Need: 16, Depth: 8}); got != want {
		t.Errorf("count's call: %+v, want %+v", got, want)
	}
	if got, want := count.Instrs[find("count", ir.OpStore)], (forgegen.InstrStack{}); got != want {
		t.Errorf("count's store: %+v, want %+v", got, want)
	}
	if got, want := main.Instrs[find("main", ir.OpCall)], (forgegen.InstrStack{Need: 8}); got != want {
		t.Errorf("main's call: %+v, want %+v", got, want)
	}
	if t.Failed() {
		t.Log(asm.Disassemble(p))
	}
}
