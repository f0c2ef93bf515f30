package genesis_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/genesis-toolchain/genesis/compiler"
	"github.com/genesis-toolchain/genesis/internal/filetest"
	"github.com/genesis-toolchain/genesis/internal/testharness/difftest"
)

// TestDifferential runs every run case and stack case at -O2 on each
// target its header names besides the Forge Machine ("target forge native
// go"), and requires it to print the same and end the same way as on the
// Forge Machine (issue 7). The expected output is TestRun's and
// TestStack's business; here the Forge run is the reference. Native is
// skipped, with a message, where llc or cc is missing.
func TestDifferential(t *testing.T) {
	if testing.Short() {
		t.Skip("builds every case natively and in Go: seconds")
	}
	paths := append(filetest.Files(t, "run/*.txtar"), filetest.Files(t, "stack/*.txtar")...)
	var progs []difftest.Program
	var on [][]string // the targets of each program, besides forge
	for _, p := range paths {
		c, err := filetest.Load(p)
		if err != nil {
			t.Fatal(err)
		}
		if !c.Has("run") {
			continue
		}
		for _, tg := range c.Targets {
			if !slices.Contains(targets, tg) {
				t.Fatalf("%s: target %s: no such target (known: %s)", p, tg, strings.Join(targets, ", "))
			}
		}
		if !c.On("forge") {
			t.Errorf("%s: a run case names the forge target, the reference of the others", p)
			continue
		}
		var srcs []compiler.Source
		for _, f := range c.Sources(".gen") {
			srcs = append(srcs, compiler.Source{Name: f.Name, Data: f.Data})
		}
		stdin, _ := c.File("in/stdin")
		lim, err := caseLimits(c)
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		progs = append(progs, difftest.Program{Name: p, Sources: srcs, Stdin: []byte(stdin), Limits: lim})
		on = append(on, c.Targets)
		switch c.Name {
		case "lang_asm_stdin", "lang_asm_poll_echo", "lang_asm_poll_upper":
			// More input than one message holds: forge exec delivers
			// it in 64 KiB messages, at each RECV or POLL that finds
			// none queued, which the targets must too.
			var big strings.Builder
			for n := 0; big.Len() < 200<<10; n++ {
				fmt.Fprintf(&big, "line %d of the big input\n", n)
			}
			progs = append(progs, difftest.Program{Name: p + " (200 KiB of input)", Sources: srcs, Stdin: []byte(big.String())})
			on = append(on, c.Targets)
		}
	}
	const level = 2
	start := time.Now()
	lap := func(what string) {
		t.Logf("%s: %v", what, time.Since(start).Round(time.Millisecond))
		start = time.Now()
	}
	want := make([]difftest.Outcome, len(progs))
	wantErr := make([]error, len(progs))
	difftest.Parallel(len(progs), func(i int) { want[i], wantErr[i] = difftest.Forge(progs[i], level) })
	lap("forge")

	// result is one target's runs: got[i] and errs[i] are progs[idx[i]]'s.
	type result struct {
		target string
		idx    []int
		got    []difftest.Outcome
		errs   []error
	}
	var results []result
	for _, target := range targets[1:] {
		var r result
		r.target = target
		var sub []difftest.Program
		for i, p := range progs {
			if slices.Contains(on[i], target) {
				r.idx = append(r.idx, i)
				sub = append(sub, p)
			}
		}
		if len(sub) == 0 {
			continue
		}
		var bin string
		var err error
		switch target {
		case "native":
			if err := difftest.NativeAvailable(); err != nil {
				// Reported as a skipped subtest; the other targets are
				// still compared.
				t.Run("native", func(t *testing.T) { t.Skipf("native target skipped: %v", err) })
				continue
			}
			bin, r.errs, err = difftest.BuildNative(sub, t.TempDir(), level)
		case "go":
			bin, r.errs, err = difftest.BuildGo(sub, t.TempDir(), level)
		default:
			t.Fatalf("target %s: TestDifferential cannot build for it", target)
		}
		if err != nil {
			t.Fatal(err)
		}
		lap(target + " build")
		r.got = make([]difftest.Outcome, len(sub))
		difftest.Parallel(len(sub), func(j int) {
			if r.errs[j] == nil {
				r.got[j], r.errs[j] = difftest.Run(bin, sub[j].Stdin, append([]string{difftest.Arg(j)}, sub[j].Args()...)...)
			}
		})
		results = append(results, r)
		lap(target + " runs")
	}

	agree := 0
	bad := make([]bool, len(progs))
	for i, p := range progs {
		if wantErr[i] != nil {
			t.Errorf("%s: forge: %v", p.Name, wantErr[i])
			bad[i] = true
		}
	}
	for _, r := range results {
		for j, i := range r.idx {
			if bad[i] && wantErr[i] != nil {
				continue
			}
			switch {
			case r.errs[j] != nil:
				t.Errorf("%s: %s: %v", progs[i].Name, r.target, r.errs[j])
				bad[i] = true
			case r.got[j] != want[i]:
				t.Errorf("%s: %s %s; forge %s", progs[i].Name, r.target, r.got[j], want[i])
				bad[i] = true
			}
		}
	}
	runs := 0
	for i := range progs {
		if !bad[i] {
			agree++
		}
	}
	names := []string{"forge"}
	for _, r := range results {
		names = append(names, r.target)
		runs += len(r.idx)
	}
	t.Logf("%d of %d run cases agree on %s (%d runs beside the Forge Machine's)", agree, len(progs), strings.Join(names, ", "), runs)
}
