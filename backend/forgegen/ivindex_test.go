package forgegen_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/genesis-toolchain/genesis/backend/forgegen"
	"github.com/genesis-toolchain/genesis/compiler"
	"github.com/genesis-toolchain/genesis/forge/host"
	"github.com/genesis-toolchain/genesis/forge/vm"
	"github.com/genesis-toolchain/genesis/internal/filetest"
)

// TestIndexedLoopsSameRuns compiles the integer benchmark suite and the
// conformance cases about loops and faults in them twice, with and
// without the indexing of loops' stepped pointers (planLoop), and
// requires each pair of runs to print the same and end the same way
// (the same fault included); indexing must also save ticks where the
// suite's loops carry several pointers: at least a quarter of lcs's and
// some of matmul's and quicksort's, and never cost any.
func TestIndexedLoopsSameRuns(t *testing.T) {
	type prog struct {
		name  string
		srcs  []compiler.Source
		stdin []byte
	}
	var progs []prog
	root := filepath.Join("..", "..")
	printSrc, err := os.ReadFile(filepath.Join(root, "bench", "genesis", "print.gen"))
	if err != nil {
		t.Fatal(err)
	}
	benches, err := filepath.Glob(filepath.Join(root, "bench", "corpus", "*.gen"))
	if err != nil || len(benches) < 12 {
		t.Fatalf("the benchmark suite: %d programs, %v", len(benches), err)
	}
	for _, b := range benches {
		src, err := os.ReadFile(b)
		if err != nil {
			t.Fatal(err)
		}
		progs = append(progs, prog{name: strings.TrimSuffix(filepath.Base(b), ".gen"),
			srcs: []compiler.Source{{Name: filepath.Base(b), Data: src}, {Name: "print.gen", Data: printSrc}}})
	}
	cases, err := filepath.Glob(filepath.Join(root, "tests", "genesis", "run", "*.txtar"))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range cases {
		base := filepath.Base(p)
		if !strings.HasPrefix(base, "opt_") && !strings.HasPrefix(base, "native_") && !strings.Contains(base, "loop") && !strings.Contains(base, "fault") {
			continue
		}
		c, err := filetest.Load(p)
		if err != nil {
			t.Fatal(err)
		}
		if !c.Has("run") || !c.On("forge") {
			continue
		}
		var srcs []compiler.Source
		for _, f := range c.Sources(".gen") {
			srcs = append(srcs, compiler.Source{Name: f.Name, Data: f.Data})
		}
		if len(srcs) == 0 {
			continue
		}
		stdin, _ := c.File("in/stdin")
		progs = append(progs, prog{name: base, srcs: srcs, stdin: []byte(stdin)})
	}
	run := func(p prog, on bool) (out string, res *host.Result) {
		t.Helper()
		was := forgegen.SetIndexLoops(on)
		defer forgegen.SetIndexLoops(was)
		built, diags := compiler.Build(p.srcs, compiler.Options{OptLevel: 2})
		if diags.HasErrors() {
			t.Fatalf("%s: %s", p.name, diags.Error())
		}
		img, err := vm.NewImage(built.Program)
		if err != nil {
			t.Fatalf("%s: %v", p.name, err)
		}
		var stdout strings.Builder
		res, err = host.Run(img, host.Options{
			Limits: host.Limits{Ticks: 1 << 32, Memory: 16 << 20, Stack: 64 << 10},
			Input:  host.NewStdin(bytes.NewReader(p.stdin)),
			Stdout: &stdout,
		})
		if err != nil {
			t.Fatalf("%s: %v", p.name, err)
		}
		return stdout.String(), res
	}
	saved := map[string]float64{}
	for _, p := range progs {
		outOff, off := run(p, false)
		outOn, on := run(p, true)
		if outOn != outOff || on.State != off.State || on.Fault != off.Fault || on.UserCode != off.UserCode {
			t.Errorf("%s: indexed loops print %q and end %v %v; without, %q and %v %v",
				p.name, outOn, on.State, on.Fault, outOff, off.State, off.Fault)
			continue
		}
		if on.State == vm.Halted && on.Ticks > off.Ticks {
			t.Errorf("%s: indexed loops use %d ticks, %d without", p.name, on.Ticks, off.Ticks)
		}
		saved[p.name] = 1 - float64(on.Ticks)/float64(off.Ticks)
	}
	for name, least := range map[string]float64{"lcs": 0.25, "matmul": 0.05, "quicksort": 0.05} {
		if saved[name] < least {
			t.Errorf("%s: indexed loops save %.1f%% of the ticks, want at least %.0f%%", name, 100*saved[name], 100*least)
		}
	}
}
