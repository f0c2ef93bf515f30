package genfuzz

import (
	"strings"
	"testing"

	"github.com/genesis-toolchain/genesis/internal/difftest"
)

// TestGenerateValid checks that generated programs are deterministic and
// compile and run on the Forge Machine, and that some print and some
// fault, so the differential test sees both.
func TestGenerateValid(t *testing.T) {
	var halts, faults int
	for seed := int64(0); seed < 30; seed++ {
		p := Generate(seed, 12)
		if p.Source() != Generate(seed, 12).Source() {
			t.Fatalf("seed %d: two generations differ", seed)
		}
		o, err := difftest.Forge(difftest.Program{Name: "gen", Sources: p.Sources()}, 2)
		if err != nil {
			t.Fatalf("seed %d: %v\n%s", seed, err, p.Source())
		}
		if o.Fault == "" {
			halts++
		} else {
			faults++
		}
	}
	if halts == 0 || faults == 0 {
		t.Errorf("%d programs halted and %d faulted: want some of each", halts, faults)
	}
	t.Logf("%d halted, %d faulted", halts, faults)
}

// TestShrink shrinks a program against a predicate that holds while one
// particular assignment is left: the result is that assignment alone.
func TestShrink(t *testing.T) {
	p := Generate(7, 12)
	var target string
	var find func([]*Stmt)
	find = func(ss []*Stmt) {
		for _, s := range ss {
			if !s.If && !s.Loop {
				target = s.Text
			}
			find(s.Body)
			find(s.Else)
		}
	}
	find(p.Stmts)
	small := Shrink(p, func(q *Program) bool { return strings.Contains(q.Source(), target) })
	if small.Size() != 1 || !strings.Contains(small.Source(), target) {
		t.Errorf("shrunk to %d statements, want 1:\n%s", small.Size(), small.Source())
	}
}
