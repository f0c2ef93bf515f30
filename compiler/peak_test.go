package compiler

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"syscall"
	"testing"

	"github.com/genesis-toolchain/genesis/internal/inputlimits"
)

// peakChildEnv names the file a child of TestCheckPeak checks.
const peakChildEnv = "GENESIS_CHECK_PEAK_FILE"

// peakRSSSlack is what the resident memory of a check may exceed its
// heap limit by: the collector's own data, goroutine stacks and pages
// the runtime has not yet returned, which the soft limit counts but
// unevenly, and a few MB of measuring noise.
const peakRSSSlack = 24 << 20

// TestCheckPeak runs Check as genesisc check does (GOGC 400, the soft
// heap limit CheckHeapLimit gives) in a child process on 2 MB of
// ordinary code of each language, and bounds the child's peak resident
// memory, less that of the same child checking a few bytes, by the
// heap limit the docs state ("Limits"): 64 MiB plus CheckHeapLimit's
// figure per byte. This is the memory a user sees, at the true peak of
// the check wherever it falls (the parse of a spell, the decoding of a
// JSON document), not what the check holds at one point.
func TestCheckPeak(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a check of 2 MB in a child process per language")
	}
	dir := t.TempDir()
	for _, c := range []struct {
		name string
		gen  func(size int) []byte
		size int
	}{
		{"x.gen", inputlimits.GenesisProgram, 2 << 20},
		{"x.vvm", inputlimits.VVMProgram, 2 << 20},
		{"x.spell", inputlimits.SpellProgram, 2 << 20},
		{"x.json", inputlimits.NanoVMProgram, 2 << 20},
		// JSON is YAML in the flow style; a YAML document holds at most
		// 100,000 values (jsontree), some 2 MB of this program.
		{"x.yaml", inputlimits.NanoVMProgram, 1 << 20},
	} {
		t.Run(c.name, func(t *testing.T) {
			small, big := filepath.Join(dir, "small"+c.name), filepath.Join(dir, c.name)
			if err := os.WriteFile(small, c.gen(512), 0o644); err != nil {
				t.Fatal(err)
			}
			src := c.gen(c.size)
			if err := os.WriteFile(big, src, 0o644); err != nil {
				t.Fatal(err)
			}
			base, peak := peakRSS(t, small), peakRSS(t, big)
			limit := CheckHeapLimit([]Source{{Name: c.name, Data: src}})
			n := int64(len(src))
			t.Logf("%d bytes: peak resident memory %d, %d above a check of a few bytes (%.1f bytes a byte above the 64 MiB base); heap limit %d", n, peak, peak-base, float64(peak-base-heapLimitBase)/float64(n), limit)
			if peak-base > limit+peakRSSSlack {
				t.Errorf("a check of %d bytes of %s peaked at %d bytes of resident memory above a check of a few bytes, more than its heap limit %d (64 MiB plus %d a byte) and %d MiB", n, c.name, peak-base, limit, (limit-heapLimitBase)/n, peakRSSSlack>>20)
			}
		})
	}
}

// peakRSS runs TestCheckPeakChild on file in a child process and returns
// its peak resident memory in bytes.
func peakRSS(t *testing.T, file string) int64 {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestCheckPeakChild$", "-test.count=1")
	cmd.Env = append(os.Environ(), peakChildEnv+"="+file, "GOGC=", "GOMEMLIMIT=")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("the check of %s in a child process: %v\n%s", file, err, out)
	}
	ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	if !ok {
		t.Skip("no resource usage of a child process on this system")
	}
	return ru.Maxrss << 10 // kilobytes on Linux
}

// TestCheckPeakChild is the child of TestCheckPeak: it checks the file
// its environment names as genesisc check does, renders the report, and
// fails on an error.
func TestCheckPeakChild(t *testing.T) {
	file := os.Getenv(peakChildEnv)
	if file == "" {
		t.Skip("run by TestCheckPeak")
	}
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	srcs := []Source{{Name: file, Data: data}}
	debug.SetGCPercent(400) // as cmd/genesisc
	debug.SetMemoryLimit(CheckHeapLimit(srcs))
	ds := Check(srcs)
	if ds.HasErrors() {
		t.Fatal(ds)
	}
	// genesisc check renders the report (warnings, here) under the limit.
	if ds.Render(DiagSources(srcs, ds)) == "" && len(ds) > 0 {
		t.Fatal("an empty report of warnings")
	}
}
