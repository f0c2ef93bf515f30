// Command genesisc is the Genesis toolchain's ahead-of-time compiler.
package main

import (
	"os"
	"runtime/debug"
)

func main() {
	// A compilation allocates parse trees, IR and assembly that mostly
	// live until the end of the run: collecting at the default 100 %
	// growth spends about a third of the CPU time of a large build in
	// the collector for little memory back (docs/bench.md, compile speed).
	debug.SetGCPercent(400)
	os.Exit(run(os.Args, os.Stdout, os.Stderr))
}
