package forgegen_test

import (
	"strings"
	"testing"

	"github.com/genesis-toolchain/genesis/backend/forgegen"
	"github.com/genesis-toolchain/genesis/ir"
)

// TestUnsupportedOncePerCause checks that a construct the backend cannot
// compile is reported once per cause, at its first use in the source
// (a use with a source line before one without, whatever the order the
// functions compile in), with the count of its uses, rather than once
// per instruction.
func TestUnsupportedOncePerCause(t *testing.T) {
	const src = `func @helper(%a: i64) -> i64 {
  slot $s: 64 align 32
  return %a
}

func @g(%a: i64) -> i64 @t.vvm:7:1 {
  slot $s: 64 align 32 @7:20
  %b = call @helper(%a) -> i64 @8:3
  %c = call @helper(%b) -> i64 @9:3
  return %c @10:3
}

func @main() -> i64 @t.vvm:2:1 {
  slot $s: 64 align 32 @2:20
  %u = const i64 1 @3:3
  %v = call @g(%u) -> i64 @4:3
  return %v @5:3
}
`
	m, diags := ir.Parse("t.ir", []byte(src))
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	if ds := ir.Verify(m); ds.HasErrors() {
		t.Fatal(ds)
	}
	_, ds := forgegen.Compile(m)
	byCause := map[string]int{}
	for _, d := range ds {
		if d.Code != "0x0802" {
			continue
		}
		cause := d.Msg[strings.Index(d.Msg, ": ")+2:]
		if i := strings.Index(cause, " (reported once"); i >= 0 {
			cause = cause[:i]
		}
		byCause[cause]++
	}
	for cause, n := range byCause {
		if n != 1 {
			t.Errorf("%q reported %d times", cause, n)
		}
	}
	var dyn string
	for _, d := range ds {
		if strings.Contains(d.Msg, "alignment 32") {
			dyn = d.Error()
		}
	}
	// The first use with a line is main's slot, at 2:20; the helper's
	// has no position at all.
	if want := "t.vvm:2:20: error[0x0802]: in function @main: slot $s: alignment 32 is above the supported 16"; !strings.HasPrefix(dyn, want) {
		t.Errorf("got\n%s\nwant it to start with\n%s", dyn, want)
	}
	if !strings.Contains(dyn, "(reported once: ") {
		t.Errorf("the count of uses is missing: %s", dyn)
	}
	if len(ds) > 5 {
		t.Errorf("%d diagnostics:\n%s", len(ds), ds.Error())
	}
}
