package main

import (
	"runtime/debug"
	"testing"
)

// TestWithHeapLimit checks that a build runs under the lower of its heap
// limit and the process's, and that the process's limit is back after.
func TestWithHeapLimit(t *testing.T) {
	orig := debug.SetMemoryLimit(-1)
	defer debug.SetMemoryLimit(orig)
	const process = 1 << 41 // far above what the test uses
	debug.SetMemoryLimit(process)
	for _, c := range []struct {
		name         string
		limit, while int64
	}{
		{"a lower limit applies", 1 << 40, 1 << 40},
		{"no limit", 0, process},
		{"a higher limit does not apply", process + 1, process},
	} {
		var during int64
		withHeapLimit(c.limit, func() { during = debug.SetMemoryLimit(-1) })
		if during != c.while {
			t.Errorf("%s: limit during the build = %d, want %d", c.name, during, c.while)
		}
		if after := debug.SetMemoryLimit(-1); after != process {
			t.Errorf("%s: limit after the build = %d, want the previous %d", c.name, after, process)
		}
	}
}
