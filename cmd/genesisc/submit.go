package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"text/tabwriter"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/genesis-toolchain/genesis/distributed"
	"github.com/genesis-toolchain/genesis/runtime"
)

// The commands that talk to the workers' database: submit, status, runs
// and resume (docs/distributed.md). None runs a program.

var dbFlag = &cli.StringFlag{Name: "db", Usage: "the engine's database `URL`: postgres://USER@HOST:PORT/DB or sqlite:PATH"}

// openClient opens the database of --db.
func openClient(c *cli.Context, stderr io.Writer) (*distributed.Client, error) {
	url := c.String("db")
	if err := distributed.CheckURL(url); err != nil {
		fmt.Fprintf(stderr, "genesisc %s: --db: %v\n", c.Command.Name, err)
		return nil, exitError{exitUsage}
	}
	cl, err := distributed.Open(c.Context, url, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "genesisc %s: %v\n", c.Command.Name, err)
		return nil, exitError{exitDiag}
	}
	return cl, nil
}

// submitCommand is `genesisc submit`: queue a run for the workers.
func submitCommand(stdout, stderr io.Writer) *cli.Command {
	return &cli.Command{
		Name:      "submit",
		Usage:     "queue a run of an agent program for the workers (genesisc worker) and print its id",
		UsageText: "genesisc submit --db URL [--input KEY=VALUE]... [--trigger KIND] [--event NAME [--event-payload JSON]] [--param KEY=VALUE]... [--mode simulate|cast] [--yes] [--wait [--result FILE] [--trace FILE]] PROGRAM",
		Description: "Compiles PROGRAM (or reads the .frgp file, or the constants of a Go package that\n" +
			"genesisc build --target go generated) for its program hash, queues a run of\n" +
			"it with the input, and prints the run's id. With --wait it waits for the run to\n" +
			"end (or suspend) and writes its result as genesisc status does; the exit status\n" +
			"is then genesisc run's: 0 success, 3 suspended, 1 another status.",
		Flags: []cli.Flag{
			dbFlag,
			&cli.StringSliceFlag{Name: "input", Usage: "an input field `KEY=VALUE` (repeatable; VALUE is JSON or a string)"},
			&cli.StringFlag{Name: "trigger", Usage: "the trigger `KIND` to run (Grimoire)"},
			&cli.StringFlag{Name: "event", Usage: "the event `NAME` that fired (Grimoire)"},
			&cli.StringFlag{Name: "event-payload", Usage: "the event's payload `JSON` (Grimoire)"},
			&cli.StringSliceFlag{Name: "param", Usage: "a parameter override `KEY=VALUE` (repeatable; Grimoire)"},
			&cli.StringFlag{Name: "mode", Usage: "simulate or cast (Grimoire)"},
			&cli.BoolFlag{Name: "yes", Usage: "confirm every side effect in advance (Grimoire cast mode)"},
			&cli.BoolFlag{Name: "wait", Usage: "wait for the run to end"},
			&cli.StringFlag{Name: "result", Usage: "with --wait: write the result JSON to `FILE` (default: standard output)"},
			&cli.StringFlag{Name: "trace", Usage: "with --wait: write the run's trace to `FILE`"},
		},
		Action: func(c *cli.Context) error {
			if c.NArg() != 1 {
				fmt.Fprintln(stderr, "genesisc submit: want exactly one PROGRAM")
				return exitError{exitUsage}
			}
			if (c.IsSet("result") || c.IsSet("trace")) && !c.Bool("wait") {
				fmt.Fprintln(stderr, "genesisc submit: --result and --trace need --wait")
				return exitError{exitUsage}
			}
			var fields []runtime.Field
			for _, in := range c.StringSlice("input") {
				k, v, ok := cutInput(in)
				if !ok {
					fmt.Fprintf(stderr, "genesisc submit: --input %q: want KEY=VALUE\n", in)
					return exitError{exitUsage}
				}
				fields = append(fields, runtime.Field{Key: k, Value: v})
			}
			more, err := grimoireInput(c)
			if err != nil {
				fmt.Fprintf(stderr, "genesisc submit: %v\n", err)
				return exitError{exitUsage}
			}
			fields = append(fields, more...)
			if err := distributed.CheckURL(c.String("db")); err != nil {
				fmt.Fprintf(stderr, "genesisc submit: --db: %v\n", err)
				return exitError{exitUsage}
			}
			p, err := submittedProgram(c.Args().First(), stderr)
			if err != nil {
				return err
			}
			cl, err := openClient(c, stderr)
			if err != nil {
				return err
			}
			defer cl.Close()
			id, err := cl.Submit(p.Name, p.Hash, runtime.Object(fields...))
			if err != nil {
				fmt.Fprintf(stderr, "genesisc submit: %v\n", err)
				return exitError{exitDiag}
			}
			if n, err := distributed.LiveWorkers(c.Context, c.String("db"), p.Hash); err == nil && n == 0 {
				// The run waits for one; a program named otherwise than
				// by the workers has another hash (docs/distributed.md).
				fmt.Fprintf(stderr, "genesisc submit: no live worker serves %s (program hash %s) now: the run waits in its queue until one does (genesisc worker --db … %s, the program named as here)\n",
					p.Name, p.Hash, c.Args().First())
			}
			if !c.Bool("wait") {
				fmt.Fprintln(stdout, id)
				return nil
			}
			fmt.Fprintln(stderr, id)
			r, err := cl.Wait(context.Background(), id, 100*time.Millisecond)
			if err != nil {
				fmt.Fprintf(stderr, "genesisc submit: %v\n", err)
				return exitError{exitDiag}
			}
			return writeRun(c, r, stdout, stderr)
		},
	}
}

// cutInput parses an --input KEY=VALUE as genesisc run's program does:
// VALUE is JSON, or else a string.
func cutInput(s string) (string, runtime.Value, bool) {
	for i := 0; i < len(s); i++ {
		if s[i] == '=' {
			if i == 0 {
				return "", runtime.Value{}, false
			}
			v, err := runtime.ParseJSON([]byte(s[i+1:]))
			if err != nil {
				v = runtime.String(s[i+1:])
			}
			return s[:i], v, true
		}
	}
	return "", runtime.Value{}, false
}

// grimoireInput returns the input fields of the Grimoire flags, as the
// compiled program's own flags make them (runtime.Main): trigger, event,
// event_payload, params, mode, yes.
func grimoireInput(c *cli.Context) ([]runtime.Field, error) {
	var fields []runtime.Field
	if s := c.String("trigger"); s != "" {
		fields = append(fields, runtime.Field{Key: "trigger", Value: runtime.String(s)})
	}
	if s := c.String("event"); s != "" {
		fields = append(fields, runtime.Field{Key: "event", Value: runtime.String(s)})
	}
	if s := c.String("event-payload"); s != "" {
		v, err := runtime.ParseJSON([]byte(s))
		if err != nil {
			return nil, fmt.Errorf("--event-payload: %v", err)
		}
		fields = append(fields, runtime.Field{Key: "event_payload", Value: v})
	}
	var params []runtime.Field
	for _, p := range c.StringSlice("param") {
		k, v, ok := cutInput(p)
		if !ok {
			return nil, fmt.Errorf("--param %q: want KEY=VALUE", p)
		}
		params = append(params, runtime.Field{Key: k, Value: v})
	}
	if len(params) > 0 {
		fields = append(fields, runtime.Field{Key: "params", Value: runtime.Object(params...)})
	}
	if m := c.String("mode"); m != "" {
		if m != "simulate" && m != "cast" {
			return nil, fmt.Errorf("--mode must be simulate or cast")
		}
		fields = append(fields, runtime.Field{Key: "mode", Value: runtime.String(m)})
	}
	if c.Bool("yes") {
		fields = append(fields, runtime.Field{Key: "yes", Value: runtime.True})
	}
	return fields, nil
}

// writeRun writes what status says of a run: its summary on standard
// output, or its result JSON there (or in --result FILE) once it ended,
// and its trace in --trace FILE; the exit status is genesisc run's.
func writeRun(c *cli.Context, r *distributed.Run, stdout, stderr io.Writer) error {
	if r.Result == nil {
		if c.IsSet("result") || c.IsSet("trace") {
			fmt.Fprintf(stderr, "genesisc %s: run %s has no result yet: it is %s\n", c.Command.Name, r.ID, describeState(r))
		}
		if c.Command.Name == "status" || r.State == "suspended" {
			printRun(stdout, r)
		}
		switch r.State {
		case "suspended":
			return exitError{3}
		case "queued", "running":
			return nil
		}
		return exitError{exitDiag}
	}
	out := append([]byte(r.ResultJSON), '\n')
	if path := c.String("trace"); path != "" {
		if err := os.WriteFile(path, []byte(r.Trace), 0o644); err != nil {
			fmt.Fprintf(stderr, "genesisc %s: %v\n", c.Command.Name, err)
			return exitError{exitDiag}
		}
	}
	if path := c.String("result"); path != "" {
		if err := os.WriteFile(path, out, 0o644); err != nil {
			fmt.Fprintf(stderr, "genesisc %s: %v\n", c.Command.Name, err)
			return exitError{exitDiag}
		}
		if c.Command.Name == "status" {
			printRun(stdout, r)
		}
	} else if c.Command.Name == "status" {
		printRun(stdout, r)
	} else {
		stdout.Write(out)
	}
	switch r.Result.Status {
	case runtime.StatusSuccess:
		return nil
	case runtime.StatusSuspended:
		return exitError{3}
	}
	return exitError{exitDiag}
}

func describeState(r *distributed.Run) string {
	if r.State == "suspended" {
		return "suspended at " + r.Awaiting + " (genesisc resume delivers its payload)"
	}
	return r.State
}

// printRun prints a run's summary, one field a line.
func printRun(w io.Writer, r *distributed.Run) {
	tw := tabwriter.NewWriter(w, 0, 8, 2, ' ', 0)
	fmt.Fprintf(tw, "run\t%s\n", r.ID)
	fmt.Fprintf(tw, "program\t%s (hash %s)\n", r.Program, r.Hash)
	fmt.Fprintf(tw, "status\t%s\n", describeState(r))
	if r.Result != nil && r.Result.Error != nil {
		fmt.Fprintf(tw, "error\t%s\n", r.Result.Error)
	} else if r.Error != "" {
		fmt.Fprintf(tw, "error\t%s\n", r.Error)
	}
	if r.Executor != "" {
		fmt.Fprintf(tw, "worker\t%s\n", r.Executor)
	}
	fmt.Fprintf(tw, "tokens\t%d\n", r.Usage.Tokens())
	fmt.Fprintf(tw, "cost\t%s\n", strconv.FormatFloat(r.Usage.Cost, 'f', -1, 64))
	tw.Flush()
}

// statusCommand is `genesisc status RUN_ID`.
func statusCommand(stdout, stderr io.Writer) *cli.Command {
	return &cli.Command{
		Name:      "status",
		Usage:     "say where a submitted run is, and write its result once it ended",
		UsageText: "genesisc status --db URL [--result FILE] [--trace FILE] RUN_ID",
		Description: "Prints the run's status (queued, running, suspended, or the result's status once\n" +
			"it ended), program, worker, tokens and cost. --result writes the result JSON and\n" +
			"--trace the trace of an ended run. Exit status: 0 for a run that succeeded or is\n" +
			"queued or running, 3 suspended, 1 any other end.",
		Flags: []cli.Flag{
			dbFlag,
			&cli.StringFlag{Name: "result", Usage: "write the result JSON to `FILE`"},
			&cli.StringFlag{Name: "trace", Usage: "write the run's trace to `FILE`"},
		},
		Action: func(c *cli.Context) error {
			if c.NArg() != 1 {
				fmt.Fprintln(stderr, "genesisc status: want exactly one RUN_ID")
				return exitError{exitUsage}
			}
			cl, err := openClient(c, stderr)
			if err != nil {
				return err
			}
			defer cl.Close()
			r, err := cl.Status(c.Args().First())
			if err != nil {
				fmt.Fprintf(stderr, "genesisc status: %v\n", err)
				return exitError{exitDiag}
			}
			return writeRun(c, r, stdout, stderr)
		},
	}
}

// runsCommand is `genesisc runs`: every run, oldest first.
func runsCommand(stdout, stderr io.Writer) *cli.Command {
	return &cli.Command{
		Name:      "runs",
		Usage:     "list the submitted runs with their status, tokens and cost",
		UsageText: "genesisc runs --db URL",
		Flags:     []cli.Flag{dbFlag},
		Action: func(c *cli.Context) error {
			if c.NArg() != 0 {
				fmt.Fprintln(stderr, "genesisc runs: takes no arguments")
				return exitError{exitUsage}
			}
			cl, err := openClient(c, stderr)
			if err != nil {
				return err
			}
			defer cl.Close()
			runs, err := cl.List()
			if err != nil {
				fmt.Fprintf(stderr, "genesisc runs: %v\n", err)
				return exitError{exitDiag}
			}
			tw := tabwriter.NewWriter(stdout, 0, 8, 2, ' ', 0)
			fmt.Fprintln(tw, "RUN\tSTATUS\tPROGRAM\tTOKENS\tCOST\tCREATED")
			for _, r := range runs {
				fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\t%s\n", r.ID, r.State, r.Program, r.Usage.Tokens(),
					strconv.FormatFloat(r.Usage.Cost, 'f', -1, 64), r.Created.UTC().Format(time.RFC3339))
			}
			return tw.Flush()
		},
	}
}

// resumeCommand is `genesisc resume RUN_ID --payload JSON`.
func resumeCommand(stdout, stderr io.Writer) *cli.Command {
	return &cli.Command{
		Name:      "resume",
		Usage:     "deliver the payload a suspended submitted run waits for",
		UsageText: "genesisc resume --db URL --payload JSON [--source WEBHOOK|OPERATOR|TIMER] RUN_ID",
		Description: "Sends the run the resumption {\"payload\": JSON, \"source\": SOURCE}, durably: the\n" +
			"worker running it continues it (a run not suspended yet takes it when it\n" +
			"suspends). A local run's journal is resumed with genesisc run --resume instead.",
		Flags: []cli.Flag{
			dbFlag,
			&cli.StringFlag{Name: "payload", Usage: "the `JSON` the suspended step resumes with"},
			&cli.StringFlag{Name: "source", Value: "WEBHOOK", Usage: "WEBHOOK, OPERATOR or TIMER"},
		},
		Action: func(c *cli.Context) error {
			if c.NArg() != 1 {
				fmt.Fprintln(stderr, "genesisc resume: want exactly one RUN_ID")
				return exitError{exitUsage}
			}
			if !c.IsSet("payload") {
				fmt.Fprintln(stderr, "genesisc resume: --payload JSON is required")
				return exitError{exitUsage}
			}
			v, err := runtime.ParseJSON([]byte(c.String("payload")))
			if err != nil {
				fmt.Fprintf(stderr, "genesisc resume: --payload: %v\n", err)
				return exitError{exitUsage}
			}
			switch s := c.String("source"); s {
			case "WEBHOOK", "OPERATOR", "TIMER":
			default:
				fmt.Fprintf(stderr, "genesisc resume: --source: want WEBHOOK, OPERATOR or TIMER, not %q\n", s)
				return exitError{exitUsage}
			}
			cl, err := openClient(c, stderr)
			if err != nil {
				return err
			}
			defer cl.Close()
			if err := cl.Resume(c.Args().First(), v, c.String("source")); err != nil {
				fmt.Fprintf(stderr, "genesisc resume: %v\n", err)
				if errors.Is(err, distributed.ErrNoRun) {
					return exitError{exitDiag}
				}
				return exitError{exitDiag}
			}
			fmt.Fprintf(stdout, "genesisc resume: sent to run %s\n", c.Args().First())
			return nil
		},
	}
}

// submittedProgram returns the name and hash of the program a run is
// submitted for: a source or .frgp file (loadDistProgram), or a
// generated Go package's directory, whose constants say them (nothing
// is built).
func submittedProgram(name string, stderr io.Writer) (*distributed.Program, error) {
	if fi, err := os.Stat(name); err != nil || !fi.IsDir() {
		return loadDistProgram(name, stderr)
	}
	gp, err := readGoPackage(name)
	if err != nil {
		fmt.Fprintf(stderr, "genesisc submit: %v\n", err)
		return nil, exitError{exitUsage}
	}
	return &distributed.Program{Name: gp.program, Hash: gp.hash}, nil
}
