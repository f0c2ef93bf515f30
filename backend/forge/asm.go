package forge

import (
	"regexp"
	"strings"

	"github.com/genesis-toolchain/genesis/frontend/diag"
	"github.com/genesis-toolchain/genesis/frontend/fasm"
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
	_, diags := fasm.Assemble("asm", []byte(text+"\nHALT\n"))
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
	var outMoves [][2]reg
	var resDefs []reg
	for i, r := range in.Regs[nin:] {
		if reg(r) >= rShadowLimit {
			resDefs = append(resDefs, l.def(in.Results[i]))
			a.resOut = append(a.resOut, reg(r))
			continue
		}
		a.defs = append(a.defs, reg(r))
		outMoves = append(outMoves, [2]reg{l.def(in.Results[i]), reg(r)})
	}
	a.defs = append(a.defs, resDefs...)
	l.emit(a)
	for _, m := range outMoves {
		l.move(m[0], m[1])
	}
}
