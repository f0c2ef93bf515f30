package main

import (
	"github.com/urfave/cli/v2"

	"github.com/genesis-toolchain/genesis/runtime"
)

// limitFlagNames are genesisc run's limit flags, passed as they are to
// the compiled program, whose runtime.Main reads and checks them.
var limitFlagNames = []string{"max-steps", "max-tokens", "max-cost", "max-wall", "max-memory", "max-trace"}

// limitFlags declares them, their defaults those of runtime.DefaultLimits.
func limitFlags() []cli.Flag {
	d := runtime.DefaultLimits()
	return []cli.Flag{
		&cli.StringFlag{Name: "max-steps", DefaultText: itoa(int64(d.Steps)), Usage: "stop the run after `N` steps (0: no limit)"},
		&cli.StringFlag{Name: "max-tokens", DefaultText: itoa(int64(d.Tokens)), Usage: "stop the run once it has used `N` LLM tokens (0: no limit)"},
		&cli.StringFlag{Name: "max-cost", DefaultText: ftoa(d.Cost), Usage: "stop the run once its LLM calls cost `USD` (0: no limit)"},
		&cli.StringFlag{Name: "max-wall", DefaultText: d.Wall.String(), Usage: "stop the run after this `DURATION` of real time (0: no limit)"},
		&cli.StringFlag{Name: "max-memory", DefaultText: sizeText(d.Memory), Usage: "stop the run when its live heap reaches `SIZE` (bytes, KiB, MiB, GiB; 0: no limit); a value may take a quarter of it"},
		&cli.StringFlag{Name: "max-trace", DefaultText: sizeText(d.Trace), Usage: "stop the run when its trace reaches `SIZE` (0: no limit)"},
	}
}
