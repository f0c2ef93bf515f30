package traceview

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
)

// FuzzRead: any trace and journal bytes give a page or an *InputError,
// never a panic, and a page renders.
func FuzzRead(f *testing.F) {
	tr, j := sample(f)
	f.Add(tr, j)
	f.Add([]byte(hostileTrace), []byte{})
	f.Add([]byte(`{"event":"run_started","t":0}`+"\n"+`{"event":"step_completed","t":0,"step":"a/1 > b/x/2 > c","kind":"parallel"}`), []byte{})
	f.Add([]byte(`{"event":"run_started","t":0}`+"\n"+`{"event":"run_completed","t":0,"status":"failed","error":{"kind":"k","message":"m","step":"/0 > x"}}`), []byte(`{"format":"genesis-journal"}`))
	f.Fuzz(func(t *testing.T, trace, journal []byte) {
		opts := Options{MaxSteps: 5, MaxPayload: 16, MaxNarration: 7}
		if len(journal) > 0 {
			opts.Journal = bytes.NewReader(journal)
		}
		v, err := Read(bytes.NewReader(trace), opts)
		if err != nil {
			var ie *InputError
			if !errors.As(err, &ie) {
				t.Fatalf("an error that is not an InputError: %v", err)
			}
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("a multi-line error: %q", err)
			}
			return
		}
		if err := Render(io.Discard, v); err != nil {
			t.Fatal(err)
		}
	})
}
