package inputlimits

import (
	"fmt"
	"strings"
	"testing"
)

// TestMeasure checks that a megabyte the phase returns counts as
// allocated and live, and one it drops as allocated only.
func TestMeasure(t *testing.T) {
	const mb = 1 << 20
	kept := Measure(func() any { return make([]byte, mb) })
	if kept.Objects < 1 || kept.Bytes < mb || kept.Live < mb {
		t.Errorf("kept: %+v, want at least 1 object, %d bytes allocated and live", kept, mb)
	}
	dropped := Measure(func() any { _ = make([]byte, mb); return nil })
	if dropped.Bytes < mb || dropped.Live >= mb {
		t.Errorf("dropped: %+v, want at least %d bytes allocated, fewer live", dropped, mb)
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
	} {
		r := &recorder{TB: t}
		c.check(r)
		if len(r.errs) != len(c.want) {
			t.Errorf("%s: errors %q, want %q", c.name, r.errs, c.want)
			continue
		}
		for i, w := range c.want {
			if !strings.Contains(r.errs[i], w) {
				t.Errorf("%s: error %q, want %q", c.name, r.errs[i], w)
			}
		}
	}
}
