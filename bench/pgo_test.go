package main

import (
	"strconv"
	"testing"
)

// profileSizes are the sizes BenchmarkSuiteForge runs the integer suite's
// programs at: about a tenth of the benchmark's work, so that each
// iteration takes 0.05–0.3 s on the Forge Machine and the profile
// (make pgo) sees each program's steady state, not its start.
var profileSizes = map[string]uint64{
	"fannkuch": 9, "nsieve": 8, "matmul": 200, "collatz": 1000000,
	"hashtable": 1000000, "quicksort": 300000, "strings": 30000,
	"heapsort": 300000, "lcs": 3000, "dijkstra": 300, "nqueens": 10,
	"hash": 300000,
}

// BenchmarkSuiteForge runs each program of the integer suite (issue 17),
// compiled by genesisc at -O2, on a fresh machine per iteration, with its
// size on standard input as forge exec gets it. make pgo profiles it with
// BenchmarkForge: the interpreter's profile (cmd/forge/default.pgo) then
// weighs the suite's programs and the older benchmarks alike, one
// benchmark time each, rather than three hand-written loops alone
// (docs/decisions.md, "Forge speed, fourth step").
func BenchmarkSuiteForge(b *testing.B) {
	for _, p := range suite {
		size, ok := profileSizes[p.name]
		if !ok {
			b.Fatalf("%s: no profile size", p.name)
		}
		img := genesisImage(b, "corpus", p.name)
		stdin := []byte(strconv.FormatUint(size, 10) + "\n")
		b.Run(p.name, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				if _, err := runWithInput(img, stdin); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestProfileSizes keeps profileSizes in step with the suite.
func TestProfileSizes(t *testing.T) {
	for _, p := range suite {
		if _, ok := profileSizes[p.name]; !ok {
			t.Errorf("the suite's program %s has no size in profileSizes", p.name)
		}
	}
	if len(profileSizes) != len(suite) {
		t.Errorf("profileSizes has %d programs, the suite %d", len(profileSizes), len(suite))
	}
}
