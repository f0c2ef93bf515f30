package forge

import (
	"fmt"
	"slices"
	"strings"
)

// asmWriter accumulates assembly text.
type asmWriter struct{ b strings.Builder }

func (w *asmWriter) line(s string) { w.b.WriteString(s); w.b.WriteByte('\n') }

func (w *asmWriter) label(name string) { w.line(quoteName(name) + ":") }

func (w *asmWriter) ins(format string, args ...any) { w.line("    " + fmt.Sprintf(format, args...)) }

func (w *asmWriter) comment(s string) { w.line("; " + s) }

func (w *asmWriter) String() string { return w.b.String() }

// finish rewrites the allocated code onto machine registers, adds the saves
// around calls and the epilogues, cleans up jumps and returns the
// function's assembly lines.
func (l *fnLower) finish(a *allocation) []string {
	phys := func(r reg) reg {
		if r.virtual() {
			return a.assign[r-firstVirtual]
		}
		return r
	}
	mapRegs := func(rs []reg) []reg {
		out := make([]reg, len(rs))
		for i, r := range rs {
			out[i] = phys(r)
		}
		return out
	}
	// Single-definition LIs can be redone after a call instead of saved.
	defs := make([]int, len(a.assign))
	remat := make([]*minst, len(a.assign))
	for _, in := range a.code {
		for _, d := range in.defs {
			if d.virtual() {
				defs[d-firstVirtual]++
				if in.op == mLI {
					remat[d-firstVirtual] = in
				}
			}
		}
	}

	var out []*minst
	add := func(in *minst) { out = append(out, in) }
	for i, in := range a.code {
		p := &minst{}
		*p = *in
		p.defs, p.uses = mapRegs(in.defs), mapRegs(in.uses)
		if !in.isCall() {
			switch in.op {
			case mEntry:
				continue
			case mRet:
				if l.frameSize > 0 {
					add(&minst{op: mLI, defs: []reg{rScratch0}, imm: l.frameSize})
					add(&minst{op: mALU, name: "ADD", defs: []reg{rFrame}, uses: []reg{rFrame, rScratch0}})
				}
			}
			add(p)
			continue
		}
		// Values live across the call in registers it may change.
		pos := int32(2 * i)
		var saved []reg
		var redo []*minst
		for v, r := range a.assign {
			if r < 0 || !in.clob.has(r) || !crosses(a.vsegs[v], pos) {
				continue
			}
			if defs[v] == 1 && remat[v] != nil {
				redo = append(redo, &minst{op: mLI, defs: []reg{r}, imm: remat[v].imm, sym: remat[v].sym})
			} else {
				saved = append(saved, r)
			}
		}
		for _, r := range saved {
			add(&minst{op: mPush, uses: []reg{r}})
		}
		switch in.op {
		case mCall:
			add(p)
		case mCallInd:
			add(&minst{op: mMove, defs: []reg{rScratch0}, uses: []reg{p.uses[0]}})
			add(&minst{op: mCall, sym: p.sym})
		case mAsm:
			for _, r := range in.reserved {
				add(&minst{op: mPush, uses: []reg{r}})
			}
			nres := len(in.resIn)
			for k, r := range in.resIn {
				add(&minst{op: mMove, defs: []reg{r}, uses: []reg{p.uses[len(p.uses)-nres+k]}})
			}
			add(&minst{op: mAsm, text: in.text})
			nout := len(in.resOut)
			for k, r := range in.resOut {
				add(&minst{op: mMove, defs: []reg{p.defs[len(p.defs)-nout+k]}, uses: []reg{r}})
			}
			for k := len(in.reserved) - 1; k >= 0; k-- {
				add(&minst{op: mPop, defs: []reg{in.reserved[k]}})
			}
		}
		for k := len(saved) - 1; k >= 0; k-- {
			add(&minst{op: mPop, defs: []reg{saved[k]}})
		}
		for _, r := range redo {
			add(r)
		}
	}
	out = peephole(out, l.f.Name)

	var w asmWriter
	w.label(l.f.Name)
	for _, in := range out {
		writeInst(&w, in)
	}
	return strings.Split(strings.TrimSuffix(w.String(), "\n"), "\n")
}

func writeInst(w *asmWriter, in *minst) {
	switch in.op {
	case mLabel:
		w.label(in.sym)
	case mMove:
		w.ins("OR %s, %s, %s", in.defs[0], in.uses[0], in.uses[0])
	case mLI:
		if in.sym != "" {
			w.ins("LI %s, %s", in.defs[0], quoteName(in.sym))
		} else {
			w.ins("LI %s, %d", in.defs[0], in.imm)
		}
	case mALU:
		w.ins("%s %s, %s, %s", in.name, in.defs[0], in.uses[0], in.uses[1])
	case mUnary:
		w.ins("%s %s, %s", in.name, in.defs[0], in.uses[0])
	case mLoad:
		w.ins("%s %s, %s, %d", in.name, in.defs[0], in.uses[0], in.imm)
	case mStore:
		w.ins("%s %s, %s, %d", in.name, in.uses[0], in.uses[1], in.imm)
	case mJmp:
		w.ins("JMP %s", quoteName(in.sym))
	case mJcc:
		if len(in.uses) == 1 {
			w.ins("%s %s, %s", in.name, in.uses[0], quoteName(in.sym))
		} else {
			w.ins("%s %s, %s, %s", in.name, in.uses[0], in.uses[1], quoteName(in.sym))
		}
	case mCall:
		w.ins("CALL %s", quoteName(in.sym))
	case mRet:
		w.ins("RET")
	case mFault:
		w.ins("FAULT %d", in.imm)
	case mPush:
		w.ins("PUSH %s", in.uses[0])
	case mPop:
		w.ins("POP %s", in.defs[0])
	case mAsm:
		w.comment("asm")
		for _, line := range strings.Split(in.text, "\n") {
			w.ins("%s", strings.TrimSpace(line))
		}
		w.comment("end asm")
	}
}

// maxReturnTail bounds the straight-line instructions before a RET that a
// jump to them is replaced by.
const maxReturnTail = 2

// returnTail returns the length of the tail at j, RET included, when it is
// at most maxReturnTail simple instructions then a RET; else 0.
func returnTail(code []*minst, j int) int {
	for k := j; k < len(code) && k <= j+maxReturnTail; k++ {
		switch code[k].op {
		case mRet:
			return k - j + 1
		case mMove, mLI, mALU, mUnary:
		default:
			return 0
		}
	}
	return 0
}

// peephole removes moves onto themselves, jumps to the next instruction,
// unreachable instructions and unused local labels, threads jumps to
// jumps, and turns "JZ x, L1; JMP L2; L1:" into "JNZ x, L2".
func peephole(code []*minst, fn string) []*minst {
	out := code[:0]
	for _, in := range code {
		if in.op == mMove && in.defs[0] == in.uses[0] {
			continue
		}
		out = append(out, in)
	}
	code = out
	rotations := 0 // bounded: duplicated tests could otherwise chase each other
	tails := false
	for changed := true; changed || !tails; {
		if !changed {
			tails = true
		}
		changed = false
		// Where each label leads: the first instruction after it.
		next := map[string]int{}
		for i, in := range code {
			if in.op == mLabel {
				j := i
				for j < len(code) && code[j].op == mLabel {
					j++
				}
				next[in.sym] = j
			}
		}
		for i := 0; i < len(code); i++ {
			in := code[i]
			if in.op == mJmp {
				j, ok := next[in.sym]
				// A jump to a return is the return.
				if ok && j < len(code) && code[j].op == mRet {
					code[i] = &minst{op: mRet}
					changed = true
					continue
				}
				// A jump to a short tail that returns (a result move, an
				// epilogue) is a copy of the tail. Only in the second
				// round, once loops are rotated and skips inverted (which
				// look for "Jcc; JMP").
				if ok && tails && j != i+1 {
					if n := returnTail(code, j); n > 0 {
						tail := make([]*minst, n)
						for k := range tail {
							c := *code[j+k]
							tail[k] = &c
						}
						code = slices.Insert(slices.Delete(code, i, i+1), i, tail...)
						changed = true
						break // positions moved: recompute next
					}
				}
				// A jump to a loop test ("Jcc body; JMP exit") is the test:
				// the back edge of a loop then costs no JMP (loop rotation).
				if ok && rotations < 64 && j+1 < len(code) && j != i+1 && code[j].op == mJcc && code[j+1].op == mJmp &&
					code[j].sym != in.sym && code[j+1].sym != in.sym {
					test, exit := *code[j], *code[j+1]
					code = slices.Insert(slices.Delete(code, i, i+1), i, &test, &exit)
					rotations++
					changed = true
					break // positions moved: recompute next
				}
			}
			if !in.branches() {
				continue
			}
			for hops := 0; hops < 8; hops++ {
				j, ok := next[in.sym]
				if !ok || j >= len(code) || code[j].op != mJmp || code[j].sym == in.sym {
					break
				}
				in.sym = code[j].sym
				changed = true
			}
		}
		// Jumps to the labels right after them; inverted skips.
		labelsAfter := func(i int, sym string) bool {
			for j := i + 1; j < len(code) && code[j].op == mLabel; j++ {
				if code[j].sym == sym {
					return true
				}
			}
			return false
		}
		for i := 0; i < len(code); i++ {
			in := code[i]
			if in.branches() && labelsAfter(i, in.sym) {
				code = append(code[:i], code[i+1:]...)
				i--
				changed = true
				continue
			}
			if in.op == mJcc && (in.name == "JZ" || in.name == "JNZ") && i+1 < len(code) &&
				code[i+1].op == mJmp && labelsAfter(i+1, in.sym) {
				inv := "JNZ"
				if in.name == "JNZ" {
					inv = "JZ"
				}
				code[i] = &minst{op: mJcc, name: inv, uses: in.uses, sym: code[i+1].sym}
				code = append(code[:i+1], code[i+2:]...)
				changed = true
			}
		}
		// Unreachable code and unused labels.
		used := map[string]bool{fn: true}
		for _, in := range code {
			if in.branches() {
				used[in.sym] = true
			}
		}
		out := code[:0]
		dead := false
		for _, in := range code {
			if in.op == mLabel {
				if !used[in.sym] {
					changed = true
					continue
				}
				dead = false
			}
			if dead {
				changed = true
				continue
			}
			out = append(out, in)
			if in.terminates() {
				dead = true
			}
		}
		code = out
	}
	return code
}
