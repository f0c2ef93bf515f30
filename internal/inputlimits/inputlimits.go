// Package inputlimits measures what a frontend costs on large input, for
// the tests that hold each frontend to the limits its docs state
// ("Limits"): the heap bytes it allocates, and keeps live, per byte of
// input, and work that grows linearly with the input. It counts
// allocations (runtime.MemStats), never time, so the tests are
// deterministic on a loaded machine: a quadratic phase shows as counts
// out of proportion.
package inputlimits

import (
	"runtime"
	"testing"
)

// A Usage is what one run of a phase cost the heap.
type Usage struct {
	Objects uint64 // heap objects allocated
	Bytes   uint64 // heap bytes allocated, freed since or not
	Live    uint64 // growth of the live heap, what the phase returned kept alive
}

// Measure runs phase and returns what it cost. It collects garbage
// before, so that earlier work does not count, and after, with what
// phase returned still reachable, so that Live is what the result
// holds. phase may fail its test.
func Measure(phase func() any) Usage {
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	result := phase()
	runtime.GC()
	runtime.ReadMemStats(&after)
	runtime.KeepAlive(result)
	return Usage{
		Objects: after.Mallocs - before.Mallocs,
		Bytes:   after.TotalAlloc - before.TotalAlloc,
		Live:    after.HeapAlloc - min(after.HeapAlloc, before.HeapAlloc),
	}
}

// PerByte logs u for an input of n bytes and fails t when it allocated
// more than maxAlloc bytes per byte of it, or kept more than maxLive
// live (0: Live is not bounded).
func PerByte(t testing.TB, u Usage, n int, maxAlloc, maxLive uint64) {
	t.Helper()
	size := uint64(n)
	t.Logf("%d bytes: %d allocated (%.0f per byte), %d live (%.0f per byte)",
		n, u.Bytes, float64(u.Bytes)/float64(n), u.Live, float64(u.Live)/float64(n))
	if u.Bytes > maxAlloc*size {
		t.Errorf("allocated %d bytes for %d of input, more than %d per byte", u.Bytes, n, maxAlloc)
	}
	if maxLive > 0 && u.Live > maxLive*size {
		t.Errorf("%d bytes live for %d of input, more than %d per byte", u.Live, n, maxLive)
	}
}

// Linear fails t when large, a count (what: "objects", "bytes") of the
// work on an input scale times as large as that of small, is more than
// factor*scale times small: factor is the slack of a linear phase
// (fixed costs, a map grown once more), well below what a quadratic one
// takes.
func Linear(t testing.TB, what string, small, large uint64, scale, factor float64) {
	t.Helper()
	if r := float64(large) / float64(small); r > factor*scale {
		t.Errorf("%.1fx the input allocates %.1fx the %s (%d, then %d), want at most %.2fx",
			scale, r, what, small, large, factor*scale)
	}
}
