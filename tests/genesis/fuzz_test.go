package genesis_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/genesis-toolchain/genesis/internal/testharness/genfuzz"
)

// TestRandomPrograms runs random well-typed Genesis programs
// (internal/testharness/genfuzz), each on forge exec's default machine and on three
// of random memory quotas and stack sizes, on the three targets, and
// requires them to agree. CI
// runs a few from a fixed seed; `make fuzz` sets GENESIS_FUZZ_N (and
// GENESIS_FUZZ_SEED) for a longer run. A disagreement is shrunk to a
// small program, saved as fuzz/repro_SEED.gen (with the output routines,
// so it compiles on its own) for a conformance case to be made of it.
func TestRandomPrograms(t *testing.T) {
	if testing.Short() {
		t.Skip("builds programs natively and in Go: seconds")
	}
	n, seed := 12, int64(1)
	if s := os.Getenv("GENESIS_FUZZ_N"); s != "" {
		n, _ = strconv.Atoi(s)
	}
	if s := os.Getenv("GENESIS_FUZZ_SEED"); s != "" {
		seed, _ = strconv.ParseInt(s, 10, 64)
	}
	progs := make([]*genfuzz.Program, n)
	for i := range progs {
		progs[i] = genfuzz.Generate(seed+int64(i), 12)
	}
	res, err := genfuzz.Check(progs, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for i, msg := range res {
		if msg == "" {
			continue
		}
		small := genfuzz.Shrink(progs[i], func(p *genfuzz.Program) bool {
			r, err := genfuzz.Check([]*genfuzz.Program{p}, t.TempDir())
			return err == nil && r[0] != "" && !strings.HasPrefix(r[0], "forge")
		})
		path := filepath.Join("fuzz", fmt.Sprintf("repro_%d.gen", seed+int64(i)))
		if err := os.MkdirAll("fuzz", 0o755); err != nil {
			t.Error(err)
		}
		if err := os.WriteFile(path, []byte(small.Reproducer()), 0o644); err != nil {
			t.Error(err)
		}
		t.Errorf("seed %d: the targets disagree: %s\nshrunk to %d statements, saved in %s:\n%s",
			seed+int64(i), msg, small.Size(), path, small.Source())
	}
	t.Logf("%d random programs from seed %d", n, seed)
}
