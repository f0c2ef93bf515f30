package genfuzz

import (
	"fmt"
	"strings"
	"testing"

	"github.com/genesis-toolchain/genesis/internal/testharness/difftest"
)

// TestGenerateValid checks that generated programs are deterministic and
// compile and run on the Forge Machine, that some print and some fault,
// so the differential test sees both, and that they have functions,
// calls and recursion, some of it deep enough to fault on the stacks.
func TestGenerateValid(t *testing.T) {
	var halts, faults, stackFaults, funcs, recursive, calls int
	for seed := int64(0); seed < 30; seed++ {
		p := Generate(seed, 12)
		if p.Source() != Generate(seed, 12).Source() {
			t.Fatalf("seed %d: two generations differ", seed)
		}
		o, err := difftest.Forge(difftest.Program{Name: "gen", Sources: p.Sources()}, 2)
		if err != nil {
			t.Fatalf("seed %d: %v\n%s", seed, err, p.Source())
		}
		switch o.Fault {
		case "":
			halts++
		case "STACK_OVERFLOW", "USER_FAULT code=2":
			stackFaults++
			fallthrough
		default:
			faults++
		}
		funcs += len(p.Funcs)
		for _, f := range p.Funcs {
			if f.Rec {
				recursive++
			}
		}
		calls += strings.Count(p.Source(), "(f")
	}
	if halts == 0 || faults == 0 || stackFaults == 0 {
		t.Errorf("%d programs halted and %d faulted, %d of them on a stack: want some of each", halts, faults, stackFaults)
	}
	if funcs == 0 || recursive == 0 || calls == 0 {
		t.Errorf("%d functions, %d recursive, %d calls: want some of each", funcs, recursive, calls)
	}
	t.Logf("%d halted, %d faulted (%d on a stack); %d functions, %d recursive", halts, faults, stackFaults, funcs, recursive)
}

// TestRandomLimits checks that the random machines programs run on are
// deterministic and make a mix on the Forge Machine: some runs that fit
// and halt, some whose quota does not hold the program (OUT_OF_MEMORY),
// some that run out of a stack.
func TestRandomLimits(t *testing.T) {
	ends := map[string]int{}
	for seed := int64(0); seed < 30; seed++ {
		p := Generate(seed, 12)
		if fmt.Sprint(p.Limits) != fmt.Sprint(Generate(seed, 12).Limits) || len(p.Limits) == 0 {
			t.Fatalf("seed %d: machines %v and %v", seed, p.Limits, Generate(seed, 12).Limits)
		}
		img, err := difftest.CompileForge(difftest.Program{Name: "gen", Sources: p.Sources()}, 2)
		if err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		def, err := difftest.RunForge(img, nil, difftest.Limits{})
		if err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		for _, lim := range p.Limits {
			o, err := difftest.RunForge(img, nil, lim)
			if err != nil {
				t.Fatalf("seed %d, %s: %v", seed, lim, err)
			}
			switch o.Fault {
			case "", "OUT_OF_MEMORY", "STACK_OVERFLOW", "USER_FAULT code=2":
				ends[o.Fault]++
			case "INVALID_ADDRESS":
				if def.Fault == o.Fault {
					ends["other"]++
					break
				}
				t.Errorf("seed %d, %s: INVALID_ADDRESS: the program's stacks left the machine's bounds\n%s", seed, lim, p.Source())
			default:
				ends["other"]++
			}
		}
	}
	for _, end := range []string{"", "OUT_OF_MEMORY", "STACK_OVERFLOW"} {
		if ends[end] == 0 {
			t.Errorf("no run ended %q: %v", end, ends)
		}
	}
	t.Logf("ends of the runs on random machines: %v", ends)
}

// TestShrink shrinks a program against a predicate that holds while one
// particular assignment of main is left: the result is that assignment
// alone, every function gone with the calls to it.
func TestShrink(t *testing.T) {
	p := Generate(7, 12)
	if len(p.Funcs) == 0 {
		t.Fatal("seed 7 has no function: pick a seed that has")
	}
	var target string
	for _, s := range p.Stmts {
		if !s.If && !s.Loop && s.Callee == "" {
			target = s.Text
		}
	}
	small := Shrink(p, func(q *Program) bool { return strings.Contains(q.Source(), target) })
	if small.Size() != 1 || len(small.Funcs) != 0 || !strings.Contains(small.Source(), target) {
		t.Errorf("shrunk to %d statements and %d functions, want 1 and 0:\n%s", small.Size(), len(small.Funcs), small.Source())
	}
}

// TestShrinkFunction: a predicate that needs a function keeps it, with
// its body emptied, and removes everything else, calls to it included.
func TestShrinkFunction(t *testing.T) {
	p := Generate(7, 12)
	f := p.Funcs[len(p.Funcs)-1]
	head := "fn " + f.Name + "("
	small := Shrink(p, func(q *Program) bool { return strings.Contains(q.Source(), head) })
	if len(small.Funcs) != 1 || small.Funcs[0].Name != f.Name || small.Size() != 1 {
		t.Errorf("shrunk to %d statements and functions, want %s alone:\n%s", small.Size(), f.Name, small.Source())
	}
}
