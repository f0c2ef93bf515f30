package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/genesis-toolchain/genesis/traceview"
	"github.com/urfave/cli/v2"
)

// traceCommand is `genesisc trace --html OUT.html [--journal FILE]
// RUN.trace`: the page of a run's trace (package traceview). A trace or
// journal that cannot be read is an error naming its line, exit 1; the
// page is written whole or not at all.
func traceCommand(stdout, stderr io.Writer) *cli.Command {
	return &cli.Command{
		Name:      "trace",
		Usage:     "show a run's trace (genesisc run --trace) as one HTML page",
		UsageText: "genesisc trace --html OUT.html [--journal FILE] [--max-steps N] [--max-payload SIZE] RUN.trace",
		Description: "Writes one self-contained HTML page (no network fetch: its style and script are\n" +
			"inline) showing the run: its program, status and totals; its steps on a timeline,\n" +
			"a lane per parallel branch, with status, duration, tokens and cost; errors and\n" +
			"the step a budget stopped at highlighted; the narration (genesisc run --narrate)\n" +
			"beside it; and, on a click, a step's reply and error. The trace has no prompts:\n" +
			"with --journal (the run's genesisc run --journal FILE) the page shows each\n" +
			"step's prompt or tool arguments too. --html - writes the page to standard output.\n" +
			"Limits (docs/trace-viewer.md): a line of at most 64MiB; the first --max-steps\n" +
			"steps (default 2000); --max-payload of each prompt or reply (default 16KiB) and\n" +
			"8MiB of them in all, past which each shows its first 256 bytes.",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "html", Usage: "write the page to `OUT.html` (- for standard output)"},
			&cli.StringFlag{Name: "journal", Usage: "the run's effect journal `FILE`, for prompts and tool arguments"},
			&cli.IntFlag{Name: "max-steps", Value: traceview.DefaultMaxSteps, Usage: "show at most `N` steps"},
			&cli.StringFlag{Name: "max-payload", Value: "16KiB", Usage: "show at most `SIZE` of each prompt, reply or error"},
		},
		Action: func(c *cli.Context) error { return traceHTML(c, stdout, stderr) },
	}
}

func traceHTML(c *cli.Context, stdout, stderr io.Writer) error {
	fail := func(code int, format string, a ...any) error {
		fmt.Fprintf(stderr, "genesisc trace: "+format+"\n", a...)
		return exitError{code}
	}
	out := c.String("html")
	switch {
	case out == "":
		return fail(exitUsage, "--html OUT.html is required (the page is the only output so far)")
	case c.NArg() != 1:
		return fail(exitUsage, "want one trace file, have %d", c.NArg())
	case c.Int("max-steps") <= 0:
		return fail(exitUsage, "--max-steps must be positive")
	}
	maxPayload, err := parseSize(c.String("max-payload"))
	if err != nil || maxPayload < 1 || maxPayload > 1<<30 {
		return fail(exitUsage, "--max-payload: %q is not a size from 1B to 1GiB", c.String("max-payload"))
	}
	name := c.Args().First()
	f, err := os.Open(name)
	if err != nil {
		return fail(exitDiag, "%v", err)
	}
	defer f.Close()
	opts := traceview.Options{TraceName: name, MaxSteps: c.Int("max-steps"), MaxPayload: int(maxPayload)}
	if j := c.String("journal"); j != "" {
		jf, err := os.Open(j)
		if err != nil {
			return fail(exitDiag, "%v", err)
		}
		defer jf.Close()
		opts.Journal, opts.JournalName = jf, j
	}
	v, err := traceview.Read(f, opts)
	if err != nil {
		return fail(exitDiag, "%v", err)
	}
	if out == "-" {
		if err := traceview.Render(stdout, v); err != nil {
			return fail(exitDiag, "writing the page: %v", err)
		}
		return nil
	}
	// Written beside OUT and renamed over it: a failure leaves no half
	// page, nor an older page that looks like this trace's.
	tmp, err := os.CreateTemp(filepath.Dir(out), "."+filepath.Base(out)+".*")
	if err != nil {
		return fail(exitDiag, "%v", err)
	}
	err = traceview.Render(tmp, v)
	err = errors.Join(err, tmp.Chmod(0o644), tmp.Close())
	if err == nil {
		err = os.Rename(tmp.Name(), out)
	}
	if err != nil {
		os.Remove(tmp.Name())
		return fail(exitDiag, "writing %s: %v", out, err)
	}
	return nil
}
