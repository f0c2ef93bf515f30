package forgegen_test

import (
	"fmt"
	"testing"

	"github.com/genesis-toolchain/genesis/backend/forgegen"
	"github.com/genesis-toolchain/genesis/forge/vm"
	"github.com/genesis-toolchain/genesis/ir"
)

// The three speed programs of the issue, in IR as a frontend emits them.
const speedIR = `
func @count(%n: i64) -> i64 {
  %zero = const i64 0
  %one = const i64 1
  %seven = const i64 7
  %r = loop ^L(%i: i64 = %zero, %sum: i64 = %zero) -> i64 {
    %done = ge.s %i, %n
    if %done {
      break ^L %sum
    }
    %sq = mul %i, %i
    %m = rem.s %sq, %seven
    %s1 = add %sum, %m
    %i1 = add %i, %one
    continue ^L %i1, %s1
  }
  return %r
}

func @fib(%n: i64) -> i64 {
  %two = const i64 2
  %small = lt.s %n, %two
  if %small {
    return %n
  }
  %one = const i64 1
  %a = sub %n, %one
  %fa = call @fib(%a) -> i64
  %b = sub %n, %two
  %fb = call @fib(%b) -> i64
  %r = add %fa, %fb
  return %r
}

func @sieve(%n: i64) -> i64 {
  %base = const ptr 0x100000
  %zero = const i64 0
  %one = const i64 1
  %two = const i64 2
  %t = const i8 1
  loop ^O(%i: i64 = %two) {
    %ii = mul %i, %i
    %fin = ge.s %ii, %n
    if %fin {
      break ^O
    }
    %pi = ptradd %base, %i
    %c = load i8 %pi, 0
    %comp = ne %c, %t
    %i1 = add %i, %one
    if %comp {
      loop ^M(%j: i64 = %ii) {
        %pj = ptradd %base, %j
        store %t, %pj, 0
        %j1 = add %j, %i
        %more = lt.s %j1, %n
        if %more {
          continue ^M %j1
        }
        break ^M
      }
    }
    continue ^O %i1
  }
  %cnt = loop ^C(%k: i64 = %two, %acc: i64 = %zero) -> i64 {
    %end = ge.s %k, %n
    if %end {
      break ^C %acc
    }
    %pk = ptradd %base, %k
    %v = load i8 %pk, 0
    %prime = ne %v, %t
    %inc = zext i64 %prime
    %acc1 = add %acc, %inc
    %k1 = add %k, %one
    continue ^C %k1, %acc1
  }
  return %cnt
}
`

// speedTicks runs fn(n) and returns its result and the ticks used.
func speedTicks(t *testing.T, fn string, n int64) (int64, uint64) {
	t.Helper()
	src := speedIR + fmt.Sprintf("\nfunc @main() -> i64 {\n  %%n = const i64 %d\n  %%r = call @%s(%%n) -> i64\n  return %%r\n}\n", n, fn)
	m, diags := ir.Parse("speed.ir", []byte(src))
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	if diags := ir.Verify(m); len(diags) > 0 {
		t.Fatal(diags)
	}
	_, p, diags := forgegen.Build(m, "speed.fasm")
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	img, err := vm.NewImage(p)
	if err != nil {
		t.Fatal(err)
	}
	mach := vm.New(img, vm.Config{Ticks: 1 << 40, Memory: 16 << 20, Stack: 64 << 10}, nil)
	if mach.Run() != vm.Halted {
		t.Fatalf("%s(%d): %v %v", fn, n, mach.State(), mach.Fault())
	}
	return int64(mach.Register(0)), mach.Ticks()
}

// TestSpeedCounts measures the ticks of the speed programs per
// unit of work, by difference between two sizes, and pins them so a
// change to instruction selection or allocation that costs more shows.
// docs/backend-forge.md lists the instructions behind these numbers.
func TestSpeedCounts(t *testing.T) {
	// Counting loop: ticks per iteration.
	_, t1 := speedTicks(t, "count", 1000)
	_, t2 := speedTicks(t, "count", 2000)
	perIter := float64(t2-t1) / 1000
	t.Logf("count: %.2f ticks per iteration", perIter)
	if perIter > 7 {
		t.Errorf("count: %.2f ticks per iteration, want at most 7", perIter)
	}
	// fib: ticks per call (fib(n) makes 2·fib(n+1) − 1 calls).
	f20, a := speedTicks(t, "fib", 20)
	f25, b := speedTicks(t, "fib", 25)
	if f20 != 6765 || f25 != 75025 {
		t.Fatalf("fib: %d %d", f20, f25)
	}
	calls := func(n int) float64 {
		x, y := 0, 1
		for range n + 1 {
			x, y = y, x+y
		}
		return float64(2*x - 1)
	}
	perCall := float64(b-a) / (calls(25) - calls(20))
	t.Logf("fib: %.2f ticks per call", perCall)
	if perCall > 14 {
		t.Errorf("fib: %.2f ticks per call, want at most 14", perCall)
	}
	// Sieve: ticks per byte of the sieve (marking and counting).
	p1, s1 := speedTicks(t, "sieve", 100000)
	p2, s2 := speedTicks(t, "sieve", 200000)
	if p1 != 9592 || p2 != 17984 {
		t.Fatalf("sieve: %d %d primes", p1, p2)
	}
	perByte := float64(s2-s1) / 100000
	t.Logf("sieve: %.2f ticks per byte", perByte)
	if perByte > 25 {
		t.Errorf("sieve: %.2f ticks per byte, want at most 25", perByte)
	}
}
