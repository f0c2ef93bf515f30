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

// Grows logs small and large, what the work cost on two inputs, the
// second scale times as large, and fails t when large allocated more
// than factor*scale times the objects or the bytes of small (Linear).
func Grows(t testing.TB, small, large Usage, scale, factor float64) {
	t.Helper()
	t.Logf("%d objects, %d bytes allocated; %.1fx the input: %d objects, %d bytes", small.Objects, small.Bytes, scale, large.Objects, large.Bytes)
	Linear(t, "objects", small.Objects, large.Objects, scale, factor)
	Linear(t, "bytes", small.Bytes, large.Bytes, scale, factor)
}

// A Scaled is an input that Gen makes n large (n levels deep, n terms
// long), to be measured at N and at 4N.
type Scaled struct {
	Name string
	Gen  func(n int) string
	N    int
}

// LinearWork checks, for each case in a subtest of its own, that
// compile on Gen(4N) allocates at most 4.5 times the objects it does on
// Gen(N); compile fails its test on an error. It compiles Gen(4N) once
// before measuring: ANTLR caches its predictions process-wide, in DFA
// states made when a nest that deep is first parsed, so that both counts
// are then the steady work.
func LinearWork(t *testing.T, cases []Scaled, compile func(t *testing.T, src string)) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.Name, func(t *testing.T) {
			objects := func(src string) uint64 {
				return Measure(func() any { compile(t, src); return nil }).Objects
			}
			compile(t, c.Gen(4*c.N))
			small := objects(c.Gen(c.N))
			large := objects(c.Gen(4 * c.N))
			Linear(t, "objects", small, large, 4, 1.125)
		})
	}
}

// Large measures phase on gen(size), an input of about size bytes,
// against maxAlloc and maxLive bytes per byte of it (PerByte), and
// checks that it grows linearly: on an input a quarter as large, phase
// allocates at most 15% less per byte. phase fails its test on an error
// and returns what it made, which counts as live.
func Large(t testing.TB, gen func(size int) []byte, size int, phase func(src []byte) any, maxAlloc, maxLive uint64) {
	t.Helper()
	large := gen(size)
	use := Measure(func() any { return phase(large) })
	PerByte(t, use, len(large), maxAlloc, maxLive)
	small := gen(len(large) / 4)
	smallUse := Measure(func() any { return phase(small) })
	Linear(t, "bytes", smallUse.Bytes, use.Bytes, float64(len(large))/float64(len(small)), 1.15)
}
