package golden

import "testing"

func TestCheckSectionName(t *testing.T) {
	for _, ok := range []string{"main.gen", "prog.json", "lib/x.vvm", "in/stdin", "out/ir.O2", "out/ir.after-constfold", "out/journal"} {
		if err := CheckSectionName(ok); err != nil {
			t.Errorf("%s: %v", ok, err)
		}
	}
	// The names the suites used before they were unified.
	for _, bad := range []string{"out/O2", "out/after-inline", "out/print", "out/diagnostics", "in/config.txt", "out/ir.after-", "stdin", "config"} {
		if err := CheckSectionName(bad); err == nil {
			t.Errorf("%s: accepted", bad)
		}
	}
}
