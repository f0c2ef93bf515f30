package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/genesis-toolchain/genesis/compiler"
	"github.com/genesis-toolchain/genesis/distributed"
	"github.com/genesis-toolchain/genesis/forge/bytecode"
	"github.com/genesis-toolchain/genesis/ir/opt"
	"github.com/genesis-toolchain/genesis/runtime"
)

// workerCommand is `genesisc worker`: a process that executes the runs
// of its programs from the engine's queues (docs/distributed.md).
func workerCommand(stdout, stderr io.Writer) *cli.Command {
	return &cli.Command{
		Name:  "worker",
		Usage: "execute queued runs of agent programs, with other workers, from a Postgres (or SQLite) database",
		UsageText: "genesisc worker --db postgres://…|sqlite:PATH [--concurrency N] [--poll DURATION] [--dead-after DURATION] [--drain DURATION]\n" +
			"    [--llm mock:FILE|openai:URL [--models FILE] [--model NAME]] [--tools SPEC]... [--state FILE] [--real-clock] [--max-* LIMIT]... PROGRAM...",
		Description: "Serves the runs that genesisc submit queues for the PROGRAMs (agent program sources,\n" +
			".frgp files compiled for the Forge Machine, or directories holding a package that\n" +
			"genesisc build --target go generated), each run a DBOS workflow whose steps\n" +
			"are the run's journaled effects: a run whose worker dies is continued by another from\n" +
			"its last completed step (after --dead-after without a heartbeat, default 5s). Each\n" +
			"program is identified by its program hash: a worker takes the runs of the hashes\n" +
			"it serves only, so name a program's files as the submitter does. Runs of sources\n" +
			"and .frgp files execute in the worker on the Forge Machine, as genesisc run --target\n" +
			"forge; a Go package is built once at start (a Go toolchain is needed: go in PATH, or\n" +
			"$GENESIS_GO) and each execution of its runs is a child process of it, with the\n" +
			"provider and limit flags given here (MCP servers start per child). SIGINT or SIGTERM stops taking\n" +
			"runs, waits --drain (default 30s) for those in progress, and leaves the rest to\n" +
			"the other workers.",
		Flags: append([]cli.Flag{
			&cli.StringFlag{Name: "db", Usage: "the engine's database `URL`: postgres://USER@HOST:PORT/DB or sqlite:PATH"},
			&cli.IntFlag{Name: "concurrency", Value: distributed.DefaultConcurrency, Usage: "run at most `N` runs of each program at once"},
			&cli.DurationFlag{Name: "poll", Value: distributed.DefaultPoll, Usage: "look for queued runs every `DURATION` when idle"},
			&cli.DurationFlag{Name: "dead-after", Value: distributed.DefaultDeadAfter, Usage: "recover the runs of a worker silent for `DURATION`"},
			&cli.DurationFlag{Name: "drain", Value: 30 * time.Second, Usage: "on SIGINT or SIGTERM, wait `DURATION` for the runs in progress"},
			&cli.StringFlag{Name: "llm", Usage: "the LLM provider: mock:FILE or openai:URL"},
			&cli.StringFlag{Name: "models", Usage: "the model alias `FILE` (docs/runtime.md, Model names)"},
			&cli.StringFlag{Name: "model", Usage: "every LLM call uses the provider model `NAME`"},
			&cli.StringSliceFlag{Name: "tools", Usage: "a tool provider, repeatable: mock:FILE, exec:CMD, mcp:COMMAND ARGS… or mcp+http(s)://HOST:PORT/PATH"},
			&cli.StringFlag{Name: "state", Usage: "keep the persistent state in the SQLite database `FILE`"},
			&cli.BoolFlag{Name: "real-clock", Usage: "run on the real clock"},
		}, limitFlags()...),
		Action: func(c *cli.Context) error { return runWorker(c, stdout, stderr) },
	}
}

func runWorker(c *cli.Context, stdout, stderr io.Writer) error {
	if c.NArg() == 0 {
		fmt.Fprintln(stderr, "genesisc worker: no PROGRAM to serve")
		return exitError{exitUsage}
	}
	if err := distributed.CheckURL(c.String("db")); err != nil {
		fmt.Fprintf(stderr, "genesisc worker: --db: %v\n", err)
		return exitError{exitUsage}
	}
	switch {
	case c.Int("concurrency") < 1:
		fmt.Fprintln(stderr, "genesisc worker: --concurrency must be at least 1")
		return exitError{exitUsage}
	case c.Duration("poll") <= 0:
		fmt.Fprintln(stderr, "genesisc worker: --poll must be a positive duration")
		return exitError{exitUsage}
	case c.Duration("dead-after") < 2*distributed.DefaultHeartbeat:
		// Below two heartbeats, live workers would take each other for dead.
		fmt.Fprintf(stderr, "genesisc worker: --dead-after must be at least %v (two heartbeats)\n", 2*distributed.DefaultHeartbeat)
		return exitError{exitUsage}
	case c.Duration("drain") < 0:
		fmt.Fprintln(stderr, "genesisc worker: --drain must not be negative")
		return exitError{exitUsage}
	}
	if err := checkProviders(c, stderr); err != nil {
		return err
	}
	flags, err := hostFlags(c, stderr)
	if err != nil {
		return err
	}
	tmp, err := os.MkdirTemp("", "genesis-worker-")
	if err != nil {
		fmt.Fprintf(stderr, "genesisc worker: %v\n", err)
		return exitError{exitDiag}
	}
	defer os.RemoveAll(tmp)
	var progs []*distributed.Program
	inProcess := false
	for _, name := range c.Args().Slice() {
		p, err := loadWorkerProgram(name, flags, tmp, stderr)
		if err != nil {
			return err
		}
		progs = append(progs, p)
		inProcess = inProcess || p.InProcess()
	}
	// The worker's own host serves the programs it runs in its process;
	// a compiled Go program's children make theirs from the same flags.
	var h *runtime.Host
	if inProcess {
		var closeHost func()
		h, closeHost, err = workerHost(flags.host, stderr)
		if err != nil {
			return err
		}
		defer closeHost()
	} else {
		h = runtime.NewHost(runtime.Config{Limits: flags.host.Limits})
		if flags.host.State != "" {
			// Opened by each child; a file that cannot be is said now
			// rather than by every run.
			s, err := runtime.OpenSQLiteStore(flags.host.State)
			if err != nil {
				fmt.Fprintf(stderr, "genesisc worker: --state: %v\n", err)
				return exitError{exitDiag}
			}
			s.Close()
		}
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	w, err := distributed.StartWorker(ctx, distributed.WorkerConfig{
		DB: c.String("db"), Programs: progs, Host: h, Concurrency: c.Int("concurrency"),
		Poll: c.Duration("poll"), DeadAfter: c.Duration("dead-after"), Log: stderr,
	})
	if err != nil {
		fmt.Fprintf(stderr, "genesisc worker: %v\n", err)
		return exitError{exitDiag}
	}
	for _, p := range progs {
		fmt.Fprintf(stdout, "genesisc worker %s: serving %s (program hash %s, queue %s)\n", w.ExecutorID(), p.Name, p.Hash, distributed.QueueName(p.Hash))
	}
	<-ctx.Done()
	stop()
	fmt.Fprintf(stdout, "genesisc worker %s: stopping (%d runs in progress)\n", w.ExecutorID(), w.Active())
	w.Stop(c.Duration("drain"))
	return nil
}

// loadWorkerProgram loads a program a worker serves: a .frgp file or an
// agent program's source, run in the worker's process on the Forge
// Machine, or the directory of a package genesisc build --target go
// generated, built into tmp and run in a child process per execution
// with the worker's flags.
func loadWorkerProgram(name string, flags workerFlags, tmp string, stderr io.Writer) (*distributed.Program, error) {
	fi, err := os.Stat(name)
	if err != nil || !fi.IsDir() {
		return loadDistProgram(name, stderr)
	}
	gp, err := readGoPackage(name)
	if err != nil {
		fmt.Fprintf(stderr, "genesisc worker: %v\n", err)
		return nil, exitError{exitUsage}
	}
	bin, err := buildGoPackage(gp, tmp, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "genesisc worker: %v\n", err)
		return nil, exitError{exitDiag}
	}
	p, err := distributed.NewProcessProgram(distributed.ProcessConfig{
		Name: gp.program, Hash: gp.hash, Binary: bin, Args: childArgs(flags), Stderr: stderr,
	})
	if err != nil {
		fmt.Fprintf(stderr, "genesisc worker: %s: %v\n", name, err)
		return nil, exitError{exitDiag}
	}
	return p, nil
}

// loadDistProgram loads a program for the engine: a .frgp file, or an
// agent program's source compiled for the Forge Machine.
func loadDistProgram(name string, stderr io.Writer) (*distributed.Program, error) {
	var code *bytecode.Program
	if strings.EqualFold(filepath.Ext(name), ".frgp") {
		b, err := os.ReadFile(name)
		if err != nil {
			fmt.Fprintf(stderr, "genesisc: %v\n", err)
			return nil, exitError{exitDiag}
		}
		if code, err = bytecode.Decode(b); err != nil {
			fmt.Fprintf(stderr, "genesisc: %s: %v\n", name, err)
			return nil, exitError{exitDiag}
		}
	} else {
		out, err := compileFiles([]string{name}, compiler.Options{Target: "forge", OptLevel: opt.MaxLevel}, stderr)
		if err != nil {
			return nil, err
		}
		code = out.Program
	}
	p, err := distributed.LoadProgram(code)
	if err != nil {
		fmt.Fprintf(stderr, "genesisc: %s: not an agent program: %v\n", name, err)
		return nil, exitError{exitDiag}
	}
	return p, nil
}

// workerFlags are a worker's host flags, and its limit flags as given
// (for its programs' child processes).
type workerFlags struct {
	host   runtime.HostFlags
	limits map[string]string
}

// hostFlags are the host settings of a worker's flags: the providers
// and limits genesisc run gives a program (runtime.HostFromFlags).
func hostFlags(c *cli.Context, stderr io.Writer) (workerFlags, error) {
	set := map[string]string{}
	for _, name := range limitFlagNames {
		if c.IsSet(name) {
			set[name] = c.String(name)
		}
	}
	lim, err := runtime.LimitsFromFlags(set)
	if err != nil {
		fmt.Fprintf(stderr, "genesisc worker: %v\n", err)
		return workerFlags{}, exitError{exitUsage}
	}
	return workerFlags{host: runtime.HostFlags{LLM: c.String("llm"), Models: c.String("models"), Model: c.String("model"),
		Tools: c.StringSlice("tools"), State: c.String("state"), RealClock: c.Bool("real-clock"), Limits: lim}, limits: set}, nil
}

// workerHost is the host of the runs a worker executes in its own
// process, made from its flags as runtime.Main makes a program's.
func workerHost(f runtime.HostFlags, stderr io.Writer) (*runtime.Host, func(), error) {
	h, closeHost, err := runtime.HostFromFlags(f)
	if err != nil {
		fmt.Fprintf(stderr, "genesisc worker: %v\n", err)
		if runtime.IsUsage(err) {
			return nil, nil, exitError{exitUsage}
		}
		return nil, nil, exitError{exitDiag}
	}
	return h, closeHost, nil
}
