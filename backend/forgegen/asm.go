package forgegen

import (
	"regexp"
	"strings"

	"github.com/genesis-toolchain/genesis/diag"
	"github.com/genesis-toolchain/genesis/forge/asm"
	"github.com/genesis-toolchain/genesis/ir"
)

var (
	asmComment  = regexp.MustCompile(`(;|//).*`)
	asmString   = regexp.MustCompile(`"(\\.|[^"\\])*"`)
	asmRegister = regexp.MustCompile(`\b[rR]([0-9]{1,3})\b`)
	asmCall     = regexp.MustCompile(`(?i)\bCALL\b`)
)

// asmCode returns the text of an asm block without comments and strings.
func asmCode(text string) string {
	var b strings.Builder
	for _, line := range strings.Split(text, "\n") {
		line = asmString.ReplaceAllString(line, `""`)
		b.WriteString(asmComment.ReplaceAllString(line, ""))
		b.WriteByte('\n')
	}
	return b.String()
}

// asmRegisters returns the registers the text of an asm block names.
func asmRegisters(text string) []reg {
	var rs []reg
	for _, m := range asmRegister.FindAllStringSubmatch(asmCode(text), -1) {
		n := 0
		for _, c := range m[1] {
			n = n*10 + int(c-'0')
		}
		if n < 256 {
			rs = append(rs, reg(n))
		}
	}
	return rs
}

// lowerAsm lowers an inline asm block: inputs are moved into their
// registers, the text is emitted as it is, outputs are moved out. Values
// that live across the block avoid the registers the text names; the
// allocator saves them with PUSH/POP when they cannot (see emit). Text
// that CALLs is assumed to change every register.
func (l *fnLower) lowerAsm(in *ir.Instr) {
	text := in.Str
	// The text is checked on its own; names it uses may be defined by the
	// rest of the program (a CALL of a function).
	check := asm.New("asm")
	check.Source("asm", []byte(text+"\nHALT\n"))
	_, diags := check.Program()
	for _, d := range diags {
		if d.Severity == diag.Error && d.Code != "A005" {
			l.errorf(in.Pos, codeAsm, "invalid inline assembly: %s", d.Msg)
			return
		}
	}
	nin := len(in.Args)
	a := &minst{op: mAsm, text: text}
	var reserved regSet
	note := func(r reg) {
		if r < numAllocatable {
			a.clob.add(r)
		} else if r >= rShadowLimit {
			reserved.add(r)
		}
	}
	for _, r := range asmRegisters(text) {
		note(r)
	}
	for _, r := range in.Regs {
		note(reg(r))
	}
	if asmCall.MatchString(asmCode(text)) {
		a.clob = allAllocatable
		reserved.add(rShadowLimit)
		reserved.add(rFrame)
	}
	for r := rShadowLimit; r <= rReserved; r++ {
		if reserved.has(r) {
			a.reserved = append(a.reserved, r)
		}
	}
	srcs := l.args(in.Args)
	var resUses []reg
	for i, r := range in.Regs[:nin] {
		if reg(r) >= rShadowLimit {
			resUses = append(resUses, srcs[i])
			a.resIn = append(a.resIn, reg(r))
			continue
		}
		l.move(reg(r), srcs[i])
		a.uses = append(a.uses, reg(r))
	}
	a.uses = append(a.uses, resUses...)
	// An out register holds 64 arbitrary bits; a result of a narrower
	// type is brought to its canonical form afterwards (docs/ir.md: the
	// low bits, sign-extended; for a bool, nonzero is true).
	type outResult struct {
		dst, src reg
		t        ir.Type
	}
	var outs []outResult
	var resDefs []reg
	for i, r := range in.Regs[nin:] {
		res := in.Results[i]
		dst := l.def(res)
		src := reg(r)
		if reg(r) >= rShadowLimit {
			src = dst
			if needsCanonical(res.Type) {
				src = l.newV()
			}
			resDefs = append(resDefs, src)
			a.resOut = append(a.resOut, reg(r))
		} else {
			a.defs = append(a.defs, reg(r))
		}
		outs = append(outs, outResult{dst, src, res.Type})
	}
	a.defs = append(a.defs, resDefs...)
	l.emit(a)
	for _, o := range outs {
		switch {
		case o.t == ir.Bool:
			// (x | -x) >> 63: 1 for every nonzero x.
			l.emit(&minst{op: mUnary, name: "NEG", defs: []reg{o.dst}, uses: []reg{o.src}})
			l.alu("OR", o.dst, o.dst, o.src)
			l.li(rScratch0, 63)
			l.alu("SHR", o.dst, o.dst, rScratch0)
		case needsCanonical(o.t):
			l.normalize(o.dst, o.src, o.t)
		default:
			l.move(o.dst, o.src)
		}
	}
}

// needsCanonical reports whether a register holding any 64 bits must be
// brought to the canonical form of t.
func needsCanonical(t ir.Type) bool { return t == ir.Bool || t.IsInt() && t.Bits() < 64 }
