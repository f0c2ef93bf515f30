// Package proghash computes the program hash of an agent program: the
// value its effects' idempotency keys derive from (docs/runtime.md), the
// same on the go and forge targets so that a journal written by one
// target's run is valid for the other's (docs/decisions.md, "Agent
// programs in forgegen (issue 16)").
package proghash

import (
	"crypto/sha256"
	"encoding/hex"
	"path/filepath"

	"github.com/genesis-toolchain/genesis/diag"
	"github.com/genesis-toolchain/genesis/ir"
)

// Of returns the hex sha256 of the printed form of m (ir.Print), the
// module the backends compile (the optimized one), with every source
// position naming its file by its base name: the hash, like the
// program's identity, does not change when the source moves to another
// directory or is named by another path. m is left as it was.
func Of(m *ir.Module) string {
	// The printer prints positions as they are: shorten them for the
	// printing and put them back after.
	var saved []*diag.Pos
	var orig []string
	short := func(p *diag.Pos) {
		if p.File == "" {
			return
		}
		if b := filepath.Base(p.File); b != p.File {
			saved = append(saved, p)
			orig = append(orig, p.File)
			p.File = b
		}
	}
	for _, d := range m.Data {
		short(&d.Pos)
	}
	for _, f := range m.Funcs {
		short(&f.Pos)
		for _, l := range f.Locals {
			short(&l.Pos)
		}
		if f.Body != nil {
			ir.Walk(f.Body, func(in *ir.Instr) { short(&in.Pos) })
		}
	}
	text := ir.Print(m)
	for i, p := range saved {
		p.File = orig[i]
	}
	sum := sha256.Sum256([]byte(text))
	return hex.EncodeToString(sum[:])
}
