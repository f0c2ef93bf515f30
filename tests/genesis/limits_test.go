package genesis_test

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/genesis-toolchain/genesis/compiler"
	"github.com/genesis-toolchain/genesis/forge/vm"
	"github.com/genesis-toolchain/genesis/internal/testharness/difftest"
)

// limitsPrint is the output routine of the limit programs.
const limitsPrint = `
fn put_u64(n: u64) -> void {
  let mut buf: [u8; 21] = [0y00; 21];
  let mut i: u64 = 20;
  let mut v: u64 = n;
  buf[20] = 10;
  while true {
    i = i - 1;
    buf[i] = (v % 10 + 48) as u8;
    v = v / 10;
    if v == 0 { break; };
  };
  while i < 21 {
    asm (in r0 = &buf[i]) { SEND 0, r0, 1 };
    i = i + 1;
  };
}
`

// limitsPrograms are the programs TestLimits runs on machines of every
// size around the smallest that holds them: examples/factorial.gen
// (frames on the shadow stack, no deep recursion), a deep recursion on
// the machine stack under a function with a frame (the overlap issue 13
// found with --stack 128K), and a recursion whose every level has a
// frame.
var limitsPrograms = []struct {
	name, src, want string
	stack           uint64 // the stack of the machines that find the smallest quota
}{
	{"factorial", "", "3628800", difftest.DefaultStack},
	{"deep", `
fn sum(n: u64) -> u64 {
  if n == 0 { return 0; };
  n + sum(n - 1)
}

fn main() -> void {
  let a: [u64; 4] = [7; 4];
  let r: u64 = sum(6000);
  put_u64(r + a[0] + a[3]);
}
` + limitsPrint, "18003014\n", 128 << 10},
	{"frames", `
fn deep(n: u64) -> u64 {
  let a: [u64; 30] = [n; 30];
  if n == 0 { return a[5]; };
  a[n % 30] + deep(n - 1)
}

fn main() -> void {
  put_u64(deep(200));
}
` + limitsPrint, "20100\n", difftest.DefaultStack},
}

// cleanFaults are the ways a run on a machine too small for the program
// may end: the quota does not hold code, data and the stack, the machine
// stack or the shadow stack of frames runs out. Never a wrong answer, and
// never INVALID_ADDRESS.
var cleanFaults = map[string]bool{"OUT_OF_MEMORY": true, "STACK_OVERFLOW": true, "USER_FAULT code=2": true}

// TestLimits runs compiled programs on machines of many sizes (issue 13:
// no fixed memory map in compiled code) on the three targets. On the
// Forge Machine it finds, by bisection, the smallest memory quota (with
// the default stack) and the smallest stack (with the default quota)
// under which each program prints its answer; then it requires every
// target to print the answer there and on larger machines, to fail
// cleanly (cleanFaults) one byte below, and to agree with Forge
// everywhere, down to machines that hold nothing.
func TestLimits(t *testing.T) {
	if testing.Short() {
		t.Skip("builds programs natively and in Go: seconds")
	}
	progs := make([]difftest.Program, len(limitsPrograms))
	imgs := make([]*vm.Image, len(limitsPrograms))
	for i, lp := range limitsPrograms {
		src := lp.src
		if lp.name == "factorial" {
			b, err := os.ReadFile("../../examples/factorial.gen")
			if err != nil {
				t.Fatal(err)
			}
			src = string(b)
		}
		progs[i] = difftest.Program{Name: lp.name, Sources: []compiler.Source{{Name: lp.name + ".gen", Data: []byte(src)}}}
		var err error
		if imgs[i], err = difftest.CompileForge(progs[i], 2); err != nil {
			t.Fatalf("%s: %v", lp.name, err)
		}
	}
	forge := func(i int, lim difftest.Limits) difftest.Outcome {
		o, err := difftest.RunForge(imgs[i], nil, lim)
		if err != nil {
			t.Fatalf("%s (%s): forge: %v", progs[i].Name, lim, err)
		}
		return o
	}
	// smallest returns the least n in [lo, hi] with ok(n), ok(hi) being
	// true: the machines hold the program from some size on.
	smallest := func(lo, hi uint64, ok func(uint64) bool) uint64 {
		for lo < hi {
			mid := lo + (hi-lo)/2
			if ok(mid) {
				hi = mid
			} else {
				lo = mid + 1
			}
		}
		return hi
	}

	// The machines of each program, and what Forge does on them.
	type run struct {
		lim  difftest.Limits
		want difftest.Outcome
	}
	runs := make([][]run, len(progs))
	for i, lp := range limitsPrograms {
		answer := difftest.Outcome{Stdout: lp.want}
		stack := lp.stack
		if got := forge(i, difftest.Limits{Stack: stack}); got != answer {
			t.Fatalf("%s: forge exec's default quota and a stack of %d bytes: %s, want %s", lp.name, stack, got, answer)
		}
		minMem := smallest(1, difftest.DefaultMemory, func(m uint64) bool {
			return forge(i, difftest.Limits{Memory: m, Stack: stack}) == answer
		})
		minStack := smallest(1, difftest.DefaultMemory/2, func(s uint64) bool {
			return forge(i, difftest.Limits{Stack: s}) == answer
		})
		need, _ := vm.Need(imgs[i], stack)
		t.Logf("%s: code and data %d bytes; the smallest quota with a %d-byte stack is %d, the smallest stack %d",
			lp.name, imgs[i].HeapStart(), stack, minMem, minStack)
		if minMem > 1<<20 {
			t.Errorf("%s: needs a quota of %d bytes, more than 1 MiB", lp.name, minMem)
		}
		lims := []difftest.Limits{
			{Memory: minMem, Stack: stack}, {Memory: minMem + 1, Stack: stack}, {Memory: minMem + 4096 + 7, Stack: stack},
			{Memory: 1 << 20, Stack: stack}, {Memory: 64 << 20, Stack: stack},
			{Stack: minStack}, {Stack: minStack + 8}, {Stack: 128 << 10}, {Stack: 1 << 20}, {Memory: 1 << 20, Stack: 128 << 10},
		}
		for _, lim := range lims {
			if got := forge(i, lim); got != answer {
				t.Errorf("%s (%s): forge %s, want %s", lp.name, lim, got, answer)
			}
		}
		if need >= minMem {
			t.Fatalf("%s: runs in a quota of %d bytes, which leaves no heap: it has no frames to test", lp.name, minMem)
		}
		small := []difftest.Limits{
			{Memory: minMem - 1, Stack: stack}, {Memory: need, Stack: stack}, {Memory: need - 1, Stack: stack},
			{Memory: minMem / 2, Stack: stack}, {Memory: 1, Stack: 8},
			{Stack: max(minStack, 2) - 1}, {Stack: minStack / 2}, {Stack: 8}, {Stack: 5}, // (a stack of 0 is the default)
			{Memory: need + minStack, Stack: max(minStack, 2) - 1},
		}
		for _, lim := range small {
			got := forge(i, lim)
			if got.Fault == "" || !cleanFaults[got.Fault] {
				t.Errorf("%s (%s): forge %s, want a clean fault (%v)", lp.name, lim, got, cleanFaults)
			}
			if lim.Memory != 0 && lim.Memory < need && got.Fault != "OUT_OF_MEMORY" {
				t.Errorf("%s (%s): forge %s: the quota does not hold code, data and the stack (%d bytes)", lp.name, lim, got, need)
			}
		}
		if got := forge(i, difftest.Limits{Stack: max(minStack, 2) - 1}); lp.name == "deep" && got.Fault != "STACK_OVERFLOW" {
			t.Errorf("%s: a stack one byte too small: forge %s, want STACK_OVERFLOW", lp.name, got)
		}
		for _, lim := range append(lims, small...) {
			runs[i] = append(runs[i], run{lim, forge(i, lim)})
		}
	}

	dir := t.TempDir()
	type target struct{ name, bin string }
	var targets []target
	if err := difftest.NativeAvailable(); err != nil {
		t.Run("native", func(t *testing.T) { t.Skipf("native target skipped: %v", err) })
	} else {
		bin, errs, err := difftest.BuildNative(progs, filepath.Join(dir, "native"), 2)
		if err != nil {
			t.Fatal(err)
		}
		if err := errors.Join(errs...); err != nil {
			t.Fatal(err)
		}
		targets = append(targets, target{"native", bin})
	}
	bin, errs, err := difftest.BuildGo(progs, filepath.Join(dir, "go"), 2)
	if err != nil {
		t.Fatal(err)
	}
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	targets = append(targets, target{"go", bin})
	for _, tg := range targets {
		for i := range progs {
			for _, r := range runs[i] {
				got, err := difftest.Run(tg.bin, nil, append([]string{difftest.Arg(i)}, r.lim.Args()...)...)
				if err != nil {
					t.Errorf("%s (%s): %s: %v", progs[i].Name, r.lim, tg.name, err)
				} else if got != r.want {
					t.Errorf("%s (%s): %s %s; forge %s", progs[i].Name, r.lim, tg.name, got, r.want)
				}
			}
			// OUT_OF_MEMORY says what the program needs, as forge exec does.
			need, _ := vm.Need(imgs[i], difftest.DefaultStack) // the stack of a machine given only --memory
			cmd := exec.Command(tg.bin, difftest.Arg(i), "--memory", fmt.Sprint(need-1))
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			_ = cmd.Run()
			want := fmt.Sprintf("code and data take %d bytes and the stack %d: the memory quota (%d) must be at least %d",
				imgs[i].HeapStart(), difftest.DefaultStack, need-1, need)
			if !strings.Contains(stderr.String(), want) || cmd.ProcessState.ExitCode() != 3 {
				t.Errorf("%s: %s with --memory %d: exit status %d, %q; want 3 and %q", progs[i].Name, tg.name, need-1,
					cmd.ProcessState.ExitCode(), stderr.String(), want)
			}
			// A wrong command line is exit status 2, as for forge exec.
			for _, args := range [][]string{{"--memory"}, {"--stack", "12Q"}, {"--frobnicate", "1"}, {"--memory", "5G"}} {
				cmd := exec.Command(tg.bin, append([]string{difftest.Arg(i)}, args...)...)
				if err := cmd.Run(); cmd.ProcessState.ExitCode() != 2 {
					t.Errorf("%s: %s %v: %v, want exit status 2", progs[i].Name, tg.name, args, err)
				}
			}
		}
	}
}
