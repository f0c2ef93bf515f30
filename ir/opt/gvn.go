package opt

import (
	"math"

	"github.com/genesis-toolchain/genesis/diag"
	"github.com/genesis-toolchain/genesis/ir"
)

// gvn is global value numbering over structured dominance: an
// instruction that computes what an instruction already executed on
// every path to it computed is deleted, and its result replaced by that
// instruction's. The IR's regions give the dominator tree directly: an
// instruction dominates the rest of its region and every region nested
// there, so one walk in program order with a scoped table of available
// expressions (entries made inside a region are forgotten when the walk
// leaves it) finds every redundancy the structure exposes.
//
// Two instructions are the same expression when they have the same op,
// attributes (type, literal, offset, symbol, local) and operands, the
// operands of a commutative op taken in either order. The expressions
// are:
//
//   - pure ops: constants, addresses (addr_of, func_ref, ptradd), integer
//     arithmetic, comparisons and casts, so that c[i*n+j] read and then
//     written computes its address once;
//   - division and remainder: the later one of two equal divisions only
//     runs when the earlier did not fault, and then computes its value;
//   - builtins, which are deterministic and perform no effects. A
//     builtin with a dyn result may return an error value, which on the
//     Go target names the position of the call (backend/golang
//     fallible), so two such calls are one expression only when they
//     also share their position; builtins with an i64 or bool result
//     carry no position and merge across positions;
//   - loads, while no instruction that may write memory intervenes:
//     a store, copy, call, indirect call, effect or asm block, or an op
//     whose regions hold one. Memory has a version that each of them
//     advances; a load's expression includes the version it reads. A
//     loop body that writes memory starts at a fresh version (its later
//     iterations follow its writes); an if, switch or block arm starts at
//     the version before it. Load forwarding from stores is not done.
//
// Loop parameters and the results of structured ops are never merged
// with each other (that would need congruence over the loop's
// back-edges; copyprop removes the trivial ones).
func gvn(m *ir.Module) {
	forEachFunc(m, numberValues)
}

// exprKey identifies an expression without a string attribute: the
// common case, kept free of strings so that hashing it is cheap.
// Operands beyond maxKeyArgs make an instruction ineligible (no eligible
// op has more).
type exprKey struct {
	op    ir.Op
	lkind ir.LitKind
	typ   ir.Type // the type attribute: const, casts, load, func_ref
	n     int64   // an integer literal; a load's offset
	bits  uint64  // a number literal's bits (0.0 and -0.0 differ); a load's memory version
	args  [maxKeyArgs]*ir.Value
}

// strKey is an expression with a string attribute: a string constant, a
// symbol (func_ref, addr_of of data, a builtin's name) or a slot, and for
// a builtin that may return an error value, its position.
type strKey struct {
	exprKey
	str string
	pos diag.Pos
}

const maxKeyArgs = 3

type numberer struct {
	subst map[*ir.Value]*ir.Value
	table map[exprKey]*ir.Value
	strs  map[strKey]*ir.Value
	// log and strLog list the keys added to the tables, innermost region
	// last, so that leaving a region forgets what it added.
	log    []exprKey
	strLog []strKey
	// writes caches, per structured op, whether its regions may write
	// memory.
	writes map[*ir.Instr]bool
	// memNext is the next fresh memory version.
	memNext int
}

func numberValues(f *ir.Func) {
	n := &numberer{
		subst:  map[*ir.Value]*ir.Value{},
		table:  map[exprKey]*ir.Value{},
		strs:   map[strKey]*ir.Value{},
		writes: map[*ir.Instr]bool{},
	}
	n.region(f.Body, n.fresh())
}

func (n *numberer) fresh() int {
	n.memNext++
	return n.memNext
}

// region numbers the instructions of r, which starts at memory version
// mem, deleting the redundant ones. Entries it adds to the tables are
// removed before it returns.
func (n *numberer) region(r *ir.Region, mem int) {
	logged, strLogged := len(n.log), len(n.strLog)
	keep := r.Instrs[:0]
	for _, in := range r.Instrs {
		if len(n.subst) > 0 {
			for i, a := range in.Args {
				if w, ok := n.subst[a]; ok {
					in.Args[i] = w
				}
			}
		}
		if n.redundant(in, mem) {
			continue
		}
		switch in.Op {
		case ir.OpIf, ir.OpSwitch, ir.OpBlock:
			for _, sub := range in.Regions {
				n.region(sub, mem)
			}
		case ir.OpLoop:
			inner := mem
			if n.mayWrite(in) {
				inner = n.fresh()
			}
			n.region(in.Regions[0], inner)
		}
		if n.mayWrite(in) {
			mem = n.fresh()
		}
		keep = append(keep, in)
	}
	clear(r.Instrs[len(keep):])
	r.Instrs = keep
	for _, k := range n.log[logged:] {
		delete(n.table, k)
	}
	for _, k := range n.strLog[strLogged:] {
		delete(n.strs, k)
	}
	n.log, n.strLog = n.log[:logged], n.strLog[:strLogged]
}

// redundant reports whether in computes an expression already available,
// and then maps its result to that expression's value; otherwise it
// makes in's expression, if GVN merges it, available.
func (n *numberer) redundant(in *ir.Instr, mem int) bool {
	if len(in.Results) != 1 || len(in.Args) > maxKeyArgs || len(in.Regions) > 0 {
		return false
	}
	k := exprKey{op: in.Op, typ: in.Type}
	str, pos, hasStr := "", diag.Pos{}, false
	switch in.Op {
	case ir.OpLoad:
		k.n, k.bits = in.Int, uint64(mem)
	case ir.OpDivS, ir.OpDivU, ir.OpRemS, ir.OpRemU:
	case ir.OpBuiltin:
		str, hasStr = in.Sym, true
		if in.Results[0].Type == ir.Dyn {
			pos = in.Pos
		}
	case ir.OpConst:
		k.lkind, k.n, k.bits = in.Lit.Kind, in.Lit.Int, math.Float64bits(in.Lit.Num)
		str, hasStr = in.Lit.Str, in.Lit.Str != ""
	case ir.OpFuncRef:
		str, hasStr = in.Sym, true
	case ir.OpAddrOf:
		str, hasStr = in.Sym, true
		if in.Local != "" { // a slot, whose name may be a symbol's too
			str, k.n = in.Local, 1
		}
	default:
		if in.Info().Flags&ir.Pure == 0 {
			return false
		}
	}
	copy(k.args[:], in.Args)
	if in.Info().Flags&ir.Commutative != 0 && len(in.Args) == 2 && in.Args[1].ID < in.Args[0].ID {
		k.args[0], k.args[1] = in.Args[1], in.Args[0]
	}
	res := in.Results[0]
	if hasStr {
		sk := strKey{k, str, pos}
		if v, seen := n.strs[sk]; seen {
			n.subst[res] = v
			return true
		}
		n.strs[sk] = res
		n.strLog = append(n.strLog, sk)
		return false
	}
	if v, seen := n.table[k]; seen {
		n.subst[res] = v
		return true
	}
	n.table[k] = res
	n.log = append(n.log, k)
	return false
}

// mayWrite reports whether in may write memory: a store, copy, call,
// effect or asm block, or a structured op holding one.
func (n *numberer) mayWrite(in *ir.Instr) bool {
	if len(in.Regions) == 0 {
		return writesMemory(in)
	}
	if w, ok := n.writes[in]; ok {
		return w
	}
	w := false
	for _, sub := range in.Regions {
		for _, x := range sub.Instrs {
			if n.mayWrite(x) {
				w = true
			}
		}
	}
	n.writes[in] = w
	return w
}

// writesMemory reports whether in, leaving its regions aside, may write
// memory or do what no load may be moved or merged across.
func writesMemory(in *ir.Instr) bool {
	switch in.Op {
	case ir.OpStore, ir.OpCopy, ir.OpCall, ir.OpCallIndirect, ir.OpAsm:
		return true
	}
	return in.Op.IsEffect()
}
