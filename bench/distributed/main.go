// Command distributed measures distributed runs (issue 19,
// docs/distributed.md): runs per second and the engine's cost per effect
// with 1, 2 and 3 workers against one Postgres on this machine, and
// against the same runs in one process (what genesisc run --target
// forge does, less the process start).
//
//	go run ./bench/distributed [-runs 60] [-steps 10] [-concurrency 8]
//
// It starts a private Postgres cluster (internal/pgtest: Debian's
// postgresql, which make bench installs when missing), a fresh database
// per measurement, and the workers in this process (each its own DBOS
// executor with its own connections, as separate processes would have).
// The program has -steps tool steps whose tool is a Go function that
// answers at once, so that the figures are the engine's: each effect is
// one step written to Postgres (synchronous_commit off, fsync off: the
// cluster is a throwaway; a real one with fsync pays a disk flush per
// step).
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/genesis-toolchain/genesis/compiler"
	"github.com/genesis-toolchain/genesis/distributed"
	"github.com/genesis-toolchain/genesis/internal/pgtest"
	"github.com/genesis-toolchain/genesis/ir/opt"
	"github.com/genesis-toolchain/genesis/runtime"
)

func main() {
	runs := flag.Int("runs", 60, "runs per measurement")
	steps := flag.Int("steps", 10, "tool steps per run")
	conc := flag.Int("concurrency", 8, "runs a worker executes at once")
	flag.Parse()
	if *runs < 1 || *steps < 1 || *conc < 1 {
		fatalf("-runs, -steps and -concurrency must be at least 1")
	}
	var b strings.Builder
	b.WriteString(`{"steps": [`)
	for i := 1; i <= *steps; i++ {
		if i > 1 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, "\n  {\"id\": \"s%d\", \"type\": \"tool\", \"tool\": \"echo\", \"args\": {\"i\": %d, \"n\": \"$n\"}}", i, i)
	}
	b.WriteString("\n]}\n")
	out, diags := compiler.Build([]compiler.Source{{Name: "bench.json", Data: []byte(b.String())}}, compiler.Options{Target: "forge", OptLevel: opt.MaxLevel})
	if diags.HasErrors() {
		fatalf("compiling the program: %v", diags)
	}
	prog, err := distributed.LoadProgram(out.Program)
	if err != nil {
		fatalf("%v", err)
	}
	host := func() *runtime.Host {
		h := runtime.NewHost(runtime.Config{})
		h.RegisterTool("echo", func(ctx context.Context, args runtime.Value) (runtime.Value, error) { return args, nil })
		return h
	}
	input := func(i int) runtime.Value {
		return runtime.Object(runtime.Field{Key: "n", Value: runtime.Number(float64(i))})
	}

	// In one process: the run with an in-memory journal (the effects
	// recorded, as genesisc run --journal does, without the fsync).
	h := host()
	local := func(journal bool) time.Duration {
		n := *runs * 5
		start := time.Now()
		for i := 0; i < n; i++ {
			o := runtime.RunOptions{Program: prog.Name, ProgramHash: prog.Hash, Input: input(i)}
			if journal {
				o.Journal = runtime.NewJournal(prog.Name)
			}
			res, err := prog.Execute(h, o)
			if err != nil || res.Status != runtime.StatusSuccess {
				fatalf("local run: %v %v", res, err)
			}
		}
		return time.Since(start) / time.Duration(n)
	}
	local(false) // warm up
	local(true)
	plain, journaled := local(false), local(true)

	pg, err := pgtest.StartServer()
	if err != nil {
		fatalf("starting Postgres: %v", err)
	}
	defer pg.Stop()

	fmt.Printf("distributed runs: %d runs of %d tool steps, workers running %d runs at once each, Postgres %s\n\n", *runs, *steps, *conc, pg.URL)
	fmt.Printf("%-28s %10s %12s %14s\n", "", "runs/s", "ms per run", "µs per effect")
	perEffect := func(d time.Duration) float64 { return float64(d.Microseconds()) / float64(*steps) }
	fmt.Printf("%-28s %10.0f %12.3f %14.1f\n", "one process, no journal", 1/plain.Seconds(), ms(plain), perEffect(plain))
	fmt.Printf("%-28s %10.0f %12.3f %14.1f\n", "one process, journal", 1/journaled.Seconds(), ms(journaled), perEffect(journaled))

	var single time.Duration
	var singleGap float64
	var lastID string
	for k := 1; k <= 3; k++ {
		db := "bench" + strconv.Itoa(k)
		if err := pg.CreateDB(db); err != nil {
			fatalf("%v", err)
		}
		url := pg.DBURL(db)
		ctx := context.Background()
		var ws []*distributed.Worker
		for i := 0; i < k; i++ {
			w, err := distributed.StartWorker(ctx, distributed.WorkerConfig{DB: url, Programs: []*distributed.Program{prog}, Host: host(),
				Concurrency: *conc, Poll: 20 * time.Millisecond, Log: io.Discard})
			if err != nil {
				fatalf("starting worker %d: %v", i, err)
			}
			ws = append(ws, w)
		}
		cl, err := distributed.Open(ctx, url, io.Discard)
		if err != nil {
			fatalf("%v", err)
		}
		if k == 1 {
			// The latency of one run alone: queued, taken, its steps
			// written, its result read.
			best := time.Duration(1 << 62)
			for i := 0; i < 5; i++ {
				start := time.Now()
				id, err := cl.Submit(prog.Name, prog.Hash, input(i))
				if err != nil {
					fatalf("%v", err)
				}
				lastID = id
				if _, err := cl.Wait(ctx, id, time.Millisecond); err != nil {
					fatalf("%v", err)
				}
				best = min(best, time.Since(start))
			}
			single = best
			singleGap = stepGap(cl, []string{lastID})
		}
		before := total(ws)
		ids := make([]string, *runs)
		start := time.Now()
		for i := range ids {
			if ids[i], err = cl.Submit(prog.Name, prog.Hash, input(i)); err != nil {
				fatalf("%v", err)
			}
		}
		for total(ws)-before < int64(*runs) {
			time.Sleep(time.Millisecond)
		}
		wall := time.Since(start)
		for _, id := range ids {
			r, err := cl.Status(id)
			if err != nil || r.State != "success" {
				fatalf("run %s: %v %v", id, r, err)
			}
		}
		per := wall / time.Duration(*runs)
		fmt.Printf("%-28s %10.0f %12.3f %14.1f\n", fmt.Sprintf("%d worker(s), %d runs", k, *runs), 1/per.Seconds(), ms(per), stepGap(cl, ids))
		cl.Close()
		for _, w := range ws {
			w.Stop(10 * time.Second)
		}
	}
	fmt.Printf("\none run alone on 1 worker: %.1f ms from submit to result (the queue's polling included), %.0f µs per effect; %.3f ms in one process\n",
		ms(single), singleGap, ms(journaled))
	fmt.Println("µs per effect on the workers: the mean time between two consecutive steps of a run, as the engine recorded them")
}

// stepGap returns the mean time in µs between two consecutive journal
// steps of the runs: what an effect costs a run on the engine (its
// tool answers at once).
func stepGap(cl *distributed.Client, ids []string) float64 {
	var sum time.Duration
	n := 0
	for _, id := range ids {
		ts, err := cl.StepTimes(id)
		if err != nil {
			fatalf("%v", err)
		}
		if len(ts) > 1 {
			sum += ts[len(ts)-1].Sub(ts[0])
			n += len(ts) - 1
		}
	}
	if n == 0 {
		return 0
	}
	return float64(sum.Microseconds()) / float64(n)
}

func total(ws []*distributed.Worker) int64 {
	var n int64
	for _, w := range ws {
		n += w.Runs.Load()
	}
	return n
}

func ms(d time.Duration) float64 { return float64(d.Nanoseconds()) / 1e6 }

func fatalf(format string, a ...any) {
	fmt.Fprintf(os.Stderr, "bench/distributed: "+format+"\n", a...)
	os.Exit(1)
}
