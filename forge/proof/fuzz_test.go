package proof

import (
	"bytes"
	"testing"
)

// FuzzParse checks that Parse never panics and that a proof it accepts
// prints back to a file that parses to the same proof.
func FuzzParse(f *testing.F) {
	f.Add([]byte(`{}`))
	f.Add([]byte(`{"version": 1}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := Parse(data)
		if err != nil {
			return
		}
		p.VerifySignature() // must not panic either
		q, err := Parse(p.JSON())
		if err != nil {
			t.Fatalf("re-parsing: %v\n%s", err, p.JSON())
		}
		if !bytes.Equal(q.Message(), p.Message()) || !bytes.Equal(q.Signature, p.Signature) {
			t.Fatal("round trip changed the proof")
		}
	})
}
