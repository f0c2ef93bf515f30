package journal

import (
	"bytes"
	"strings"
	"testing"
)

// FuzzRead checks that Read never panics, and that whatever it accepts it
// writes back to a journal that reads the same.
func FuzzRead(f *testing.F) {
	good := func() string {
		var buf bytes.Buffer
		j := sample()
		w, _ := NewWriter(&buf, j.Header)
		for _, d := range j.Deliveries {
			w.Deliver(d.Ticks, d.Ch, d.Data)
		}
		w.Finish(*j.End)
		return buf.String()
	}()
	f.Add(good)
	f.Add(strings.SplitAfter(good, "\n")[0])
	f.Add("")
	f.Add("{}\n")
	f.Fuzz(func(t *testing.T, text string) {
		j, err := Read(strings.NewReader(text))
		if err != nil {
			return
		}
		var buf bytes.Buffer
		w, err := NewWriter(&buf, j.Header)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range j.Deliveries {
			w.Deliver(d.Ticks, d.Ch, d.Data)
		}
		if j.End != nil {
			w.Finish(*j.End)
		}
		k, err := Read(&buf)
		if err != nil {
			t.Fatalf("re-reading: %v\n%s", err, buf.String())
		}
		if len(k.Deliveries) != len(j.Deliveries) || (k.End == nil) != (j.End == nil) || k.Header != j.Header {
			t.Fatalf("round trip changed the journal")
		}
	})
}
