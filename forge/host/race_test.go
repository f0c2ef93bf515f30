//go:build race

package host

// raceEnabled: the race detector distorts timings (TestProofOverhead).
const raceEnabled = true
