// Package link links Forge programs: it resolves a program's imports
// against the programs they name and produces one self-contained program
// (requirements-FORGE.md §9.4).
//
// A program imports symbols from a dependency named by the sha256 of the
// dependency's FRGP file; its references to them are relocations (see the
// header of forge/bytecode/frgp.go) holding 0 until link time. Link lays
// the programs out one after the other, the main program first and the
// dependencies in the canonical import order (by hash):
//
//	code = main.code ++ dep1.code ++ dep2.code ++ ...
//	data = main.data ++ dep1.data ++ dep2.data ++ ...   (each padded to 8 bytes)
//
// and rebases every address accordingly. In the linked program the data
// starts after all the code, so every data address moves, the main
// program's included. Jump and call targets inside a dependency move by
// its code offset; every absolute-address relocation (an LI word or a
// data word) is recomputed from its symbol's new address; references to
// imported symbols are patched with the address of the definition.
//
// Dependencies may import from each other (transitively, to any depth):
// every program reachable through imports from the main one must be among
// the given dependencies, and every given dependency must be reachable.
// Each is linked once, however many programs import it.
//
// The result has no imports. It keeps its relocations, rebased (a jump
// relocation becomes an ordinary jump, which a linker rebases by opcode),
// and every symbol of every program, so it can itself be linked into
// another program. It is canonical and verified.
package link

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/genesis-toolchain/genesis/forge/bytecode"
)

// Object is a program to link and the name it is known by (a file name),
// which errors use.
type Object struct {
	Name    string
	Program *bytecode.Program
}

// unit is one program placed in the linked layout.
type unit struct {
	Object
	hash     [32]byte
	codeOff  uint64 // where its code starts in the linked code
	dataOff  uint64 // where its data starts in the linked data section
	defs     map[string]uint64
	imported map[string]*unit // imported name -> the unit defining it
}

// Link links main with its dependencies deps (in any order) and returns
// the linked program. The programs need not have been verified: Link
// verifies them first. Errors name the offending file and symbol: an
// import no given file satisfies, an imported symbol its dependency does
// not define, a dependency nobody imports, a file given twice, a symbol
// defined by two programs, or a result too large for the format.
func Link(main Object, deps []Object) (*bytecode.Program, error) {
	if err := main.Program.Verify(); err != nil {
		return nil, fmt.Errorf("%s: %v", main.Name, err)
	}
	root := newUnit(main)
	given := make([]*unit, len(deps))
	byHash := make(map[[32]byte]*unit, len(deps))
	for i, d := range deps {
		if err := d.Program.Verify(); err != nil {
			return nil, fmt.Errorf("%s: %v", d.Name, err)
		}
		u := newUnit(d)
		if u.hash == root.hash {
			return nil, fmt.Errorf("%s is the main program %s again", d.Name, main.Name)
		}
		if prev, dup := byHash[u.hash]; dup {
			if prev.Name == d.Name {
				return nil, fmt.Errorf("%s is given twice", d.Name)
			}
			return nil, fmt.Errorf("%s and %s are the same program", prev.Name, d.Name)
		}
		byHash[u.hash] = u
		given[i] = u
	}

	// Resolve imports, breadth first from the main program. The order of
	// the walk only affects which error is reported first; the layout is
	// by hash.
	reached := map[[32]byte]bool{}
	queue := []*unit{root}
	for len(queue) > 0 {
		u := queue[0]
		queue = queue[1:]
		for _, im := range u.Program.Imports {
			dep := byHash[im.From]
			if dep == nil {
				return nil, fmt.Errorf("%s imports %s from program %x, which is none of the given files",
					u.Name, strings.Join(im.Symbols, ", "), im.From)
			}
			for _, s := range im.Symbols {
				if _, ok := dep.defs[s]; !ok {
					return nil, fmt.Errorf("%s does not define %q, which %s imports from it", dep.Name, s, u.Name)
				}
				u.imported[s] = dep
			}
			if !reached[dep.hash] {
				reached[dep.hash] = true
				queue = append(queue, dep)
			}
		}
	}
	for _, u := range given {
		if !reached[u.hash] {
			return nil, fmt.Errorf("%s is not imported by %s or any of its dependencies", u.Name, main.Name)
		}
	}
	units := append([]*unit(nil), given...)
	sort.Slice(units, func(i, j int) bool { return bytes.Compare(units[i].hash[:], units[j].hash[:]) < 0 })
	units = append([]*unit{root}, units...)

	// Layout.
	var codeLen, dataLen uint64
	for _, u := range units {
		dataLen = (dataLen + 7) &^ 7
		u.codeOff, u.dataOff = codeLen, dataLen
		codeLen += uint64(len(u.Program.Code))
		dataLen += uint64(len(u.Program.Data))
	}
	if codeLen > bytecode.MaxCode {
		return nil, fmt.Errorf("the linked code would be %d bytes, more than the %d an FRGP program can hold", codeLen, uint64(bytecode.MaxCode))
	}
	if dataLen > math.MaxUint32 {
		return nil, fmt.Errorf("the linked data would be %d bytes, more than an FRGP program can hold", dataLen)
	}

	out := &bytecode.Program{
		Entry:    main.Program.Entry,
		Code:     make([]byte, 0, codeLen),
		Data:     make([]byte, 0, dataLen),
		Metadata: bytes.Clone(main.Program.Metadata),
	}
	// addr maps an address of u to its address in the linked program:
	// code addresses move by u's code offset, data addresses (from the
	// end of u's code on) to the linked data section.
	addr := func(u *unit, a uint64) uint64 {
		n := uint64(len(u.Program.Code))
		if a < n {
			return u.codeOff + a
		}
		return codeLen + u.dataOff + (a - n)
	}
	// resolve returns the linked address of a symbol u refers to.
	resolve := func(u *unit, name string) uint64 {
		if dep := u.imported[name]; dep != nil {
			return addr(dep, dep.defs[name])
		}
		return addr(u, u.defs[name])
	}

	owner := map[string]*unit{}
	for _, u := range units {
		for _, s := range u.Program.Symbols {
			if prev := owner[s.Name]; prev != nil {
				return nil, fmt.Errorf("symbol %q is defined both in %s and in %s", s.Name, prev.Name, u.Name)
			}
			owner[s.Name] = u
			out.Symbols = append(out.Symbols, bytecode.Symbol{Name: s.Name, Addr: addr(u, s.Addr)})
		}

		code := append(out.Code, u.Program.Code...)
		seg := code[u.codeOff:]
		for len(out.Data) < int(u.dataOff) {
			out.Data = append(out.Data, 0)
		}
		out.Data = append(out.Data, u.Program.Data...)
		data := out.Data[u.dataOff:]

		// Imported jump targets, by offset; the rest move with the code.
		targets := map[uint32]string{}
		for _, r := range u.Program.Relocs {
			if r.Section == bytecode.SectionCode && r.Kind == bytecode.RelocTarget {
				targets[r.Offset] = r.Symbol
			}
		}
		insts, offs, err := bytecode.Insts(u.Program.Code)
		if err != nil {
			return nil, fmt.Errorf("%s: %v", u.Name, err)
		}
		for i, in := range insts {
			if !bytecode.IsTransfer(in.Op) {
				continue
			}
			t := u.codeOff + in.Imm
			if name, ok := targets[uint32(offs[i])]; ok {
				t = resolve(u, name)
			}
			binary.LittleEndian.PutUint32(seg[offs[i]+4:], uint32(t))
		}
		for _, r := range u.Program.Relocs {
			switch {
			case r.Section == bytecode.SectionCode && r.Kind == bytecode.RelocAbs64:
				binary.LittleEndian.PutUint64(seg[r.Offset+8:], resolve(u, r.Symbol))
				out.Relocs = append(out.Relocs, bytecode.Reloc{Section: r.Section, Kind: r.Kind, Offset: uint32(u.codeOff) + r.Offset, Symbol: r.Symbol})
			case r.Section == bytecode.SectionData && r.Kind == bytecode.RelocAbs64:
				binary.LittleEndian.PutUint64(data[r.Offset:], resolve(u, r.Symbol))
				out.Relocs = append(out.Relocs, bytecode.Reloc{Section: r.Section, Kind: r.Kind, Offset: uint32(u.dataOff) + r.Offset, Symbol: r.Symbol})
			}
			// A jump relocation was applied above; in the linked program
			// the jump targets a defined symbol and needs no relocation.
		}
		out.Code = code
	}
	out.Canonicalize()
	if err := out.Verify(); err != nil {
		// Every input verified, so this is a bug in the linker.
		return nil, fmt.Errorf("internal error: the linked program does not verify: %v", err)
	}
	return out, nil
}

func newUnit(o Object) *unit {
	u := &unit{Object: o, hash: o.Program.Hash(), defs: map[string]uint64{}, imported: map[string]*unit{}}
	for _, s := range o.Program.Symbols {
		u.defs[s.Name] = s.Addr
	}
	return u
}
