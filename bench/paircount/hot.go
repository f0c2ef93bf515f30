package main

import (
	"fmt"
	"io"
	"regexp"
	"strings"

	bc "github.com/genesis-toolchain/genesis/forge/bytecode"
)

// hot writes, for every program whose name matches re, the instructions it
// executed at least share of its most executed instruction's count, in
// code order, with their counts and how often a branch was taken: the
// hot loops, as the interpreter ran them, to read beside genesisc's
// --emit asm. A gap in the listing is code that ran less.
func hot(w io.Writer, progs []*program, re *regexp.Regexp, share float64) {
	for _, p := range progs {
		if !re.MatchString(p.name) {
			continue
		}
		var most uint64
		for _, n := range p.exec {
			most = max(most, n)
		}
		fmt.Fprintf(w, "%s: %d instructions executed\n", p.name, p.total)
		limit := uint64(share * float64(most))
		gap := false
		for i, in := range p.insts {
			n := p.exec[i]
			if n == 0 || n < limit {
				gap = true
				continue
			}
			if gap {
				fmt.Fprintln(w, "    ...")
				gap = false
			}
			taken := ""
			if bc.Lookup(in.Op).Branch && in.Op != bc.JMP && in.Op != bc.CALL && in.Op != bc.RET {
				taken = fmt.Sprintf("  taken %.0f %%", 100*float64(p.taken[i])/float64(n))
			}
			fmt.Fprintf(w, "  %5d %12d %6.2f %%  %s%s\n", i, n, 100*float64(n)/float64(p.total), format(in), taken)
		}
	}
}

// format writes one instruction as its mnemonic and the fields its format
// uses (transfer targets as byte addresses).
func format(in bc.Inst) string {
	info := bc.Lookup(in.Op)
	a, b, c, imm := info.Format.Uses()
	var ops []string
	if a {
		ops = append(ops, fmt.Sprintf("r%d", in.A))
	}
	if b {
		ops = append(ops, fmt.Sprintf("r%d", in.B))
	}
	if c {
		ops = append(ops, fmt.Sprintf("r%d", in.C))
	}
	if imm {
		ops = append(ops, fmt.Sprintf("%d", int64(in.Imm)))
	}
	return fmt.Sprintf("%-7s%s", info.Name, strings.Join(ops, ", "))
}
