package inputlimits

import (
	"fmt"
	"strings"
	"testing"
)

// TestMeasure checks that a megabyte the phase returns counts as
// allocated and live, and one it drops as allocated only. (The rest of
// the heap may shrink a little meanwhile: Live is a difference.)
func TestMeasure(t *testing.T) {
	const mb = 1 << 20
	kept := Measure(func() any { return make([]byte, mb) })
	if kept.Objects < 1 || kept.Bytes < mb || kept.Live < mb/2 {
		t.Errorf("kept: %+v, want at least 1 object, %d bytes allocated, half as many live", kept, mb)
	}
	dropped := Measure(func() any { _ = make([]byte, mb); return nil })
	if dropped.Bytes < mb || dropped.Live >= mb/2 {
		t.Errorf("dropped: %+v, want at least %d bytes allocated, under half as many live", dropped, mb)
	}
}

// recorder is a testing.TB that keeps the errors reported to it.
type recorder struct {
	testing.TB
	errs []string
}

func (r *recorder) Helper()             {}
func (r *recorder) Logf(string, ...any) {}
func (r *recorder) Errorf(format string, a ...any) {
	r.errs = append(r.errs, fmt.Sprintf(format, a...))
}

// expect fails t, naming the case, unless r got one error for each of
// want, in order, containing it.
func (r *recorder) expect(t *testing.T, name string, want []string) {
	t.Helper()
	if len(r.errs) != len(want) {
		t.Errorf("%s: errors %q, want %q", name, r.errs, want)
		return
	}
	for i, w := range want {
		if !strings.Contains(r.errs[i], w) {
			t.Errorf("%s: error %q, want %q", name, r.errs[i], w)
		}
	}
}

// TestBounds checks what PerByte and Linear let pass and what they
// report.
func TestBounds(t *testing.T) {
	for _, c := range []struct {
		name  string
		check func(tb testing.TB)
		want  []string // substrings of the errors, in order
	}{
		{"within", func(tb testing.TB) { PerByte(tb, Usage{Bytes: 400, Live: 40}, 1, 400, 40) }, nil},
		{"allocated", func(tb testing.TB) { PerByte(tb, Usage{Bytes: 801, Live: 40}, 2, 400, 40) }, []string{"allocated 801 bytes for 2 of input, more than 400 per byte"}},
		{"live", func(tb testing.TB) { PerByte(tb, Usage{Bytes: 10, Live: 81}, 2, 400, 40) }, []string{"81 bytes live for 2 of input, more than 40 per byte"}},
		{"live unbounded", func(tb testing.TB) { PerByte(tb, Usage{Bytes: 10, Live: 1 << 40}, 2, 400, 0) }, nil},
		{"linear", func(tb testing.TB) { Linear(tb, "objects", 100, 450, 4, 1.125) }, nil},
		{"superlinear", func(tb testing.TB) { Linear(tb, "objects", 100, 451, 4, 1.125) }, []string{"4.0x the input allocates 4.5x the objects (100, then 451), want at most 4.50x"}},
		{"grows", func(tb testing.TB) {
			Grows(tb, Usage{Objects: 10, Bytes: 100}, Usage{Objects: 20, Bytes: 200}, 2, 1.25)
		}, nil},
		{"grows bytes", func(tb testing.TB) {
			Grows(tb, Usage{Objects: 10, Bytes: 100}, Usage{Objects: 20, Bytes: 300}, 2, 1.25)
		}, []string{"the bytes (100, then 300)"}},
		{"grows objects", func(tb testing.TB) {
			Grows(tb, Usage{Objects: 10, Bytes: 100}, Usage{Objects: 30, Bytes: 200}, 2, 1.25)
		}, []string{"the objects (10, then 30)"}},
	} {
		r := &recorder{TB: t}
		c.check(r)
		r.expect(t, c.name, c.want)
	}
}

// TestLarge checks Large on a phase that keeps 8 bytes per byte of
// input, and on one that allocates with the square of it.
func TestLarge(t *testing.T) {
	gen := func(size int) []byte { return make([]byte, size) }
	linear := func(src []byte) any { return make([]byte, 8*len(src)) }
	quadratic := func(src []byte) any { return make([]byte, len(src)*len(src)/64) }
	for _, c := range []struct {
		name              string
		phase             func([]byte) any
		maxAlloc, maxLive uint64
		want              []string
	}{
		{"linear", linear, 20, 20, nil},
		{"allocated", linear, 4, 20, []string{"more than 4 per byte"}},
		{"live", linear, 20, 4, []string{"live for 16384 of input, more than 4 per byte"}},
		// The ratio is about 16, not exactly: a stray allocation of the
		// runtime may fall in the small measurement.
		{"quadratic", quadratic, 1000, 1000, []string{"4.0x the input allocates "}},
	} {
		r := &recorder{TB: t}
		Large(r, gen, 16<<10, c.phase, c.maxAlloc, c.maxLive)
		r.expect(t, c.name, c.want)
	}
}
