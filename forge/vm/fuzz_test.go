package vm_test

import (
	"testing"

	"github.com/genesis-toolchain/genesis/forge/vm"
)

// FuzzExec decodes arbitrary bytes into a valid program (decodeFuzz), runs
// it with a small budget and memory on vm.Machine and on the reference
// interpreter, and requires that nothing panics, the budget holds, memory
// keeps its size and the two agree on every observable. The seed corpus
// is in testdata/fuzz/FuzzExec.
func FuzzExec(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte("\x40\x00\x10\x00\x05" + "\x1c\x09\x00\x07" + "\x00\x0a\x01\x00" + "\x1d\x00\x00\x00"))
	f.Fuzz(func(t *testing.T, data []byte) {
		tc := decodeFuzz(data)
		img, err := vm.NewImage(tc.prog)
		if err != nil {
			t.Fatalf("decodeFuzz made an invalid program: %v\n%s", err, disasm(tc))
		}
		if _, err := differential(img, tc, tc.cfg.Ticks); err != nil {
			t.Fatalf("%v\n%s", err, disasm(tc))
		}
	})
}
