package main

import (
	"fmt"
	"io"
	"sort"
	"strings"

	bc "github.com/genesis-toolchain/genesis/forge/bytecode"
	"github.com/genesis-toolchain/genesis/forge/vm"
)

// seq is an instruction sequence: a pair, a triple or a fused form.
type seq []bc.Opcode

func (s seq) String() string {
	parts := make([]string, len(s))
	for i, op := range s {
		parts[i] = op.String()
	}
	return strings.Join(parts, " ")
}

func (s seq) key() string { return s.String() }

// opens reports whether in may start or continue a fused sequence: it
// neither transfers control nor ends a metering run (SEND, HCALL), so the
// next instruction always follows it.
func opens(op bc.Opcode) bool {
	return !bc.Lookup(op).EndsRun()
}

// seqCount is one sequence's counts.
type seqCount struct {
	s       seq
	static  int
	dyn     map[string]float64 // group → mean share of executed instructions
	anyProg int                // programs in which it is executed at least 0.5 % of the time
}

// sequences counts the executed pairs (n = 2) or triples (n = 3).
func sequences(progs []*program, n int) []*seqCount {
	byKey := map[string]*seqCount{}
	var order []string
	sizes := groupSizes(progs)
	for _, p := range progs {
		local := map[string]uint64{}
		var keys []string
		for i := range p.insts {
			s, ok := window(p.insts, i, n)
			if !ok {
				continue
			}
			k := s.key()
			c := byKey[k]
			if c == nil {
				c = &seqCount{s: s, dyn: map[string]float64{}}
				byKey[k] = c
				order = append(order, k)
			}
			c.static++
			if p.exec[i] > 0 {
				if _, seen := local[k]; !seen {
					keys = append(keys, k)
				}
				local[k] += p.exec[i]
			}
		}
		if p.total == 0 {
			continue
		}
		for _, k := range keys {
			share := float64(local[k]) / float64(p.total)
			byKey[k].dyn[p.group] += share / float64(sizes[p.group])
			if share >= 0.005 {
				byKey[k].anyProg++
			}
		}
	}
	out := make([]*seqCount, 0, len(order))
	for _, k := range order {
		out = append(out, byKey[k])
	}
	sort.SliceStable(out, func(i, j int) bool {
		a, b := score(out[i].dyn), score(out[j].dyn)
		if a != b {
			return a > b
		}
		return out[i].s.key() < out[j].s.key()
	})
	return out
}

// score ranks a sequence: the mean of its group shares, so that it counts
// what pays across the corpus, not on one group.
func score(dyn map[string]float64) float64 {
	var s float64
	for _, g := range groups {
		s += dyn[g]
	}
	return s / float64(len(groups))
}

// window returns the n instructions from i if they can form one fused
// sequence: all but the last open (see opens).
func window(insts []bc.Inst, i, n int) (seq, bool) {
	var s seq
	for k := 0; k < n; k++ {
		if i+k >= len(insts) {
			return nil, false
		}
		op := insts[i+k].Op
		if k < n-1 && !opens(op) {
			return nil, false
		}
		s = append(s, op)
	}
	return s, true
}

func groupSizes(progs []*program) map[string]int {
	sizes := map[string]int{}
	for _, p := range progs {
		if p.total > 0 {
			sizes[p.group]++
		}
	}
	return sizes
}

// saved is the share of dispatches a set of fused forms saves on p, and
// the share each of them saves, under the interpreter's fusion rule
// (vm.fuse): slots are matched in address order, the first pattern of the
// list that matches a slot fuses it, and a fused slot runs its whole
// sequence in one dispatch and continues after it, so a slot inside a
// sequence is dispatched only when entered by a jump.
func saved(p *program, set []seq) (total float64, each []float64) {
	each = make([]float64, len(set))
	if p.total == 0 {
		return 0, each
	}
	// covered[t]: executions of slot t run by a fused slot before it.
	covered := make([]uint64, len(p.insts)+8)
	var disp uint64
	for i := range p.insts {
		d := p.exec[i] - min(covered[i], p.exec[i])
		disp += d
		for j, s := range set {
			if w, ok := window(p.insts, i, len(s)); ok && w.key() == s.key() {
				for k := 1; k < len(s); k++ {
					covered[i+k] += d
				}
				each[j] += float64(d*uint64(len(s)-1)) / float64(p.total)
				break
			}
		}
	}
	return 1 - float64(disp)/float64(p.total), each
}

// previous is the interpreter's list before issue 15.8 (strided fill and
// early returns aside), kept to compare with.
var previous = []seq{
	{bc.LI, bc.SUB, bc.CALL},
	{bc.PUSH, bc.LI, bc.SUB, bc.CALL},
	{bc.POP, bc.PUSH, bc.LI, bc.SUB, bc.CALL},
	{bc.LI, bc.ADD}, {bc.LI, bc.SUB}, {bc.LI, bc.JLT}, {bc.LI, bc.JLTS},
	{bc.ADD, bc.ADD, bc.JLT}, {bc.ADD, bc.ADD, bc.JLTS},
	{bc.ADD, bc.JLT}, {bc.ADD, bc.JLTS}, {bc.ADD, bc.JMP},
	{bc.MUL, bc.MOD}, {bc.MUL, bc.MODS},
	{bc.STORE, bc.ADD, bc.JLT},
	{bc.LOAD, bc.JZ}, {bc.LOAD, bc.JNZ},
	{bc.POP, bc.PUSH}, {bc.POP, bc.ADD, bc.RET},
}

func current() []seq {
	var out []seq
	for _, s := range vm.Superinstructions() {
		out = append(out, seq(s))
	}
	return out
}

func report(w io.Writer, progs []*program) {
	sizes := groupSizes(progs)
	fmt.Fprintf(w, "# Instruction pairs and triples over the corpus\n\n")
	fmt.Fprintf(w, "Written by `go run ./bench/paircount -o docs/paircount.md` (see\n")
	fmt.Fprintf(w, "bench/paircount/main.go for the corpus and the method; docs/bench.md,\n")
	fmt.Fprintf(w, "\"Fusions chosen from corpora\", for the decisions taken from it).\n")
	fmt.Fprintf(w, "Shares are means over a group's programs, each program weighing the same.\n\n")
	fmt.Fprintf(w, "| group | programs | instructions executed | static instructions |\n|---|---:|---:|---:|\n")
	for _, g := range groups {
		var exec uint64
		var static int
		for _, p := range progs {
			if p.group == g {
				exec += p.total
				static += len(p.insts)
			}
		}
		fmt.Fprintf(w, "| %s | %d | %d | %d |\n", g, sizes[g], exec, static)
	}
	for _, n := range []int{2, 3} {
		name := map[int]string{2: "pairs", 3: "triples"}[n]
		fmt.Fprintf(w, "\n## Executed %s, top 30 by the mean of the group shares\n\n", name)
		fmt.Fprintf(w, "A %s's share is the share of executed instructions that start it; `progs` counts\nthe programs where that share is at least 0.5 %%; `static` counts its occurrences in the code.\n\n", strings.TrimSuffix(name, "s"))
		fmt.Fprintf(w, "| sequence | bench | conformance | programs | mean | progs | static |\n|---|---:|---:|---:|---:|---:|---:|\n")
		for i, c := range sequences(progs, n) {
			if i == 30 {
				break
			}
			fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %d | %d |\n", c.s, pct(c.dyn["bench"]), pct(c.dyn["conformance"]), pct(c.dyn["programs"]), pct(score(c.dyn)), c.anyProg, c.static)
		}
	}
	for _, set := range []struct {
		title string
		list  []seq
	}{{"before issue 15.8", previous}, {"the interpreter now (vm.Superinstructions)", current()}} {
		fmt.Fprintf(w, "\n## Dispatches saved: %s\n\n", set.title)
		fmt.Fprintf(w, "The share of dispatches each fused form saves (the set applied as the\ninterpreter applies it, longest patterns first), per group, and on the\nprogram where it saves most. The strided fill and the early returns,\nformed from STORE ADD JLT and LI JLT/JLTS, are not counted beyond those.\n\n")
		fmt.Fprintf(w, "| fused form | bench | conformance | programs | mean | best program |\n|---|---:|---:|---:|---:|---|\n")
		per := make([]map[string]float64, len(set.list))
		best := make([]float64, len(set.list))
		bestName := make([]string, len(set.list))
		totals := map[string]float64{}
		for i := range per {
			per[i] = map[string]float64{}
		}
		for _, p := range progs {
			if p.total == 0 {
				continue
			}
			t, each := saved(p, set.list)
			totals[p.group] += t / float64(sizes[p.group])
			for i, e := range each {
				per[i][p.group] += e / float64(sizes[p.group])
				if e > best[i] {
					best[i], bestName[i] = e, p.name
				}
			}
		}
		for i, s := range set.list {
			fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %s %s |\n", s, pct(per[i]["bench"]), pct(per[i]["conformance"]), pct(per[i]["programs"]), pct(score(per[i])), pct(best[i]), bestName[i])
		}
		fmt.Fprintf(w, "| **all** | %s | %s | %s | %s | |\n", pct(totals["bench"]), pct(totals["conformance"]), pct(totals["programs"]), pct(score(totals)))
	}
	fmt.Fprintf(w, "\n## Per program: dispatches saved by each set\n\n| program | group | instructions | before | now |\n|---|---|---:|---:|---:|\n")
	for _, p := range progs {
		if p.group == "conformance" {
			continue
		}
		b, _ := saved(p, previous)
		c, _ := saved(p, current())
		fmt.Fprintf(w, "| %s | %s | %d | %s | %s |\n", p.name, p.group, p.total, pct(b), pct(c))
	}
}

func pct(f float64) string { return fmt.Sprintf("%.2f %%", 100*f) }
