package vm_test

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"

	bc "github.com/genesis-toolchain/genesis/forge/bytecode"
	"github.com/genesis-toolchain/genesis/forge/vm"
)

// fullBudget caps the first run of each generated program; programs that
// loop longer end in OUT_OF_TICKS, which is as good a place to stop as any.
const fullBudget = 3000

// budgets lists the budgets a program whose full run used ticks is tried
// with: every one from 0 to ticks+1 for small runs, so a run is cut at
// each instruction boundary (inside fused sequences too); for longer runs
// the first and last 64 and a random sample between.
func budgets(r *rand.Rand, ticks uint64) []uint64 {
	var bs []uint64
	if ticks <= 160 {
		for b := uint64(0); b <= ticks+1; b++ {
			bs = append(bs, b)
		}
		return bs
	}
	for b := uint64(0); b < 64; b++ {
		bs = append(bs, b, ticks+1-b)
	}
	for range 32 {
		bs = append(bs, 64+r.Uint64N(ticks-127))
	}
	return bs
}

// TestMatchesReference runs thousands of random programs on vm.Machine and
// on the reference interpreter, each with many budgets, and requires them
// to agree on every observable.
func TestMatchesReference(t *testing.T) {
	programs := uint64(3000)
	if testing.Short() {
		programs = 300
	}
	const shards = 4
	var mu sync.Mutex
	seen := map[string]int{} // how runs ended, to check the generator's reach
	t.Run("shards", func(t *testing.T) {
		for shard := range uint64(shards) {
			t.Run(fmt.Sprint(shard), func(t *testing.T) {
				t.Parallel()
				local := map[string]int{}
				for seed := shard; seed < programs; seed += shards {
					checkProgram(t, seed, local)
				}
				mu.Lock()
				defer mu.Unlock()
				for k, v := range local {
					seen[k] += v
				}
			})
		}
	})
	if t.Failed() {
		return
	}
	t.Logf("outcomes: %v", seen)
	// The generator must reach every way a run can end, and emit every
	// fused sequence, or this test proves less than it claims.
	want := []string{"HALTED", "BLOCKED", "READY", "resumed", "LI;JLT->RET", "LI;JLTS->RET", "OUT_OF_TICKS for the bytes moved", "OUT_OF_TICKS for the host's ticks", "nested"}
	for _, seq := range vm.Superinstructions() {
		want = append(want, seqName(seq))
	}
	for _, f := range vm.Faults() {
		if f != vm.InvalidInstruction { // verified programs cannot reach it
			want = append(want, f.String())
		}
	}
	for _, w := range want {
		if seen[w] == 0 {
			t.Errorf("no generated run ended or contained %s", w)
		}
	}
}

// checkProgram generates the program of seed and runs it differentially
// with its full budget and every budget of budgets.
func checkProgram(t *testing.T, seed uint64, seen map[string]int) {
	r := rand.New(rand.NewPCG(seed, 0xf0f0))
	tc := generate(r)
	img, err := vm.NewImage(tc.prog)
	if err != nil {
		t.Fatalf("seed %d: generated an invalid program: %v\n%s", seed, err, disasm(tc))
	}
	full, err := differential(img, tc, fullBudget)
	if err != nil {
		t.Fatalf("seed %d: %v\n%s", seed, err, disasm(tc))
	}
	seen[outcomeName(full)]++
	seen["full "+outcomeName(full)]++
	seen["full ticks"] += int(full.ticks)
	if full.yields > 0 {
		seen["READY"]++
	}
	if full.stops > full.yields+1 {
		seen["resumed"]++
	}
	if full.nested > 0 {
		seen["nested"]++
	}
	for _, b := range budgets(r, full.ticks) {
		o, err := differential(img, tc, b)
		if err != nil {
			t.Fatalf("seed %d: %v\n%s", seed, err, disasm(tc))
		}
		seen[outcomeName(o)]++
	}
	countPatterns(tc.prog.Code, seen)
}

func outcomeName(o outcome) string {
	if o.bytes {
		return "OUT_OF_TICKS for the bytes moved"
	}
	if o.hostTicks {
		return "OUT_OF_TICKS for the host's ticks"
	}
	if o.state == vm.Faulted {
		return o.fault.String()
	}
	return o.state.String()
}

// countPatterns counts the canonical sequences the interpreter fuses.
func countPatterns(code []byte, seen map[string]int) {
	insts, offs, err := bc.Insts(code)
	if err != nil {
		return
	}
	opAt := map[uint64]bc.Opcode{}
	for i, in := range insts {
		opAt[uint64(offs[i])] = in.Op
	}
	for i := 0; i+1 < len(insts); i++ {
		if insts[i].Op == bc.LI && (insts[i+1].Op == bc.JLT || insts[i+1].Op == bc.JLTS) && opAt[insts[i+1].Imm] == bc.RET {
			seen["LI;"+insts[i+1].Op.String()+"->RET"]++
		}
	}
	for _, seq := range vm.Superinstructions() {
	at:
		for i := 0; i+len(seq) <= len(insts); i++ {
			for k, op := range seq {
				if insts[i+k].Op != op {
					continue at
				}
			}
			seen[seqName(seq)]++
		}
	}
}

func seqName(seq []bc.Opcode) string {
	var names []string
	for _, op := range seq {
		names = append(names, op.String())
	}
	return strings.Join(names, ";")
}
