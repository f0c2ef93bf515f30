package opt

import (
	"math"
	"sync"

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
//     the version before it. A store makes the value it wrote available
//     as the load of its type, address and offset in the version it
//     begins (load forwarding: s->count = s->count + 1 and a read of
//     s->count after it load once).
//
// Calls have a version of their own, kept the same way: an expression
// computed before a call is not reused after it, since its value would
// then live across the call, which the Forge backend pays for with a
// save and a restore; the instruction after the call is kept and reused
// from there on. Constants and function references, which the backend
// loads again after a call, merge across calls.
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
	table map[exprKey]avail
	strs  map[strKey]avail
	// log and strLog record every change to the tables, innermost
	// region last, so that leaving a region restores what it changed.
	log    []undo[exprKey]
	strLog []undo[strKey]
	// effects caches, per structured op, whether its regions may write
	// memory and whether they call.
	effects map[*ir.Instr]effect
	// next is the next fresh memory or call version.
	next int
}

// avail is an available expression: the value computing it, and the
// call version where it was computed.
type avail struct {
	v     *ir.Value
	calls int
}

// undo is one change to a table: key k held prev (had) before.
type undo[K comparable] struct {
	k    K
	prev avail
	had  bool
}

// state is where the walk stands: the memory version (advanced by every
// instruction that may write memory) and the call version (advanced by
// every call).
type state struct {
	mem, calls int
}

// effect says what a structured op's regions may do.
type effect uint8

const (
	fxWrites effect = 1 << iota
	fxCalls
)

func numberValues(f *ir.Func) {
	n := numberers.Get().(*numberer)
	n.region(f.Body, state{n.fresh(), n.fresh()})
	// The tables are empty again (region undoes its changes); the maps
	// keep their room for the next function.
	clear(n.subst)
	clear(n.effects)
	numberers.Put(n)
}

// numberers recycles numberers, so that the maps of one function's
// numbering serve the next without growing again from nothing.
var numberers = sync.Pool{New: func() any {
	return &numberer{
		subst:   map[*ir.Value]*ir.Value{},
		table:   map[exprKey]avail{},
		strs:    map[strKey]avail{},
		effects: map[*ir.Instr]effect{},
	}
}}

func (n *numberer) fresh() int {
	n.next++
	return n.next
}

// region numbers the instructions of r, which starts in state st,
// deleting the redundant ones. The changes it makes to the tables are
// undone before it returns.
func (n *numberer) region(r *ir.Region, st state) {
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
		if n.redundant(in, st) {
			continue
		}
		fx := n.effect(in)
		switch in.Op {
		case ir.OpIf, ir.OpSwitch, ir.OpBlock:
			for _, sub := range in.Regions {
				n.region(sub, st)
			}
		case ir.OpLoop:
			// A later iteration follows the body's writes and calls.
			inner := st
			if fx&fxWrites != 0 {
				inner.mem = n.fresh()
			}
			if fx&fxCalls != 0 {
				inner.calls = n.fresh()
			}
			n.region(in.Regions[0], inner)
		}
		if fx&fxWrites != 0 {
			st.mem = n.fresh()
		}
		if fx&fxCalls != 0 {
			st.calls = n.fresh()
		}
		if in.Op == ir.OpStore {
			n.forward(in, st)
		}
		keep = append(keep, in)
	}
	clear(r.Instrs[len(keep):])
	r.Instrs = keep
	for i := len(n.log) - 1; i >= logged; i-- {
		if u := n.log[i]; u.had {
			n.table[u.k] = u.prev
		} else {
			delete(n.table, u.k)
		}
	}
	for i := len(n.strLog) - 1; i >= strLogged; i-- {
		if u := n.strLog[i]; u.had {
			n.strs[u.k] = u.prev
		} else {
			delete(n.strs, u.k)
		}
	}
	n.log, n.strLog = n.log[:logged], n.strLog[:strLogged]
}

// forward makes the value a store wrote available as the load of the
// same type, address and offset in the memory version the store began
// (st, the state after it): such a load, with no write between, reads
// what the store wrote, in the same canonical form (a narrow integer as
// its type's value, a bool as 0 or 1).
func (n *numberer) forward(store *ir.Instr, st state) {
	v := store.Args[0]
	k := exprKey{op: ir.OpLoad, typ: v.Type, n: store.Int, bits: uint64(st.mem)}
	k.args[0] = store.Args[1]
	prev, had := n.table[k]
	n.table[k] = avail{v, st.calls}
	n.log = append(n.log, undo[exprKey]{k, prev, had})
}

// redundant reports whether in computes an expression already available,
// and then maps its result to that expression's value; otherwise it
// makes in's expression, if GVN merges it, available.
func (n *numberer) redundant(in *ir.Instr, st state) bool {
	if len(in.Results) != 1 || len(in.Args) > maxKeyArgs || len(in.Regions) > 0 {
		return false
	}
	k := exprKey{op: in.Op, typ: in.Type}
	str, pos, hasStr := "", diag.Pos{}, false
	switch in.Op {
	case ir.OpLoad:
		k.n, k.bits = in.Int, uint64(st.mem)
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
	// A constant or function reference is loaded again where needed; any
	// other value reused after a call lives across it, and the Forge
	// backend saves and restores such a value around the call (a PUSH
	// and a POP), which costs more than computing a cheap expression
	// again. So an expression computed before a call is not reused
	// after it: the later one is kept, and becomes the one to reuse.
	anyCalls := in.Op == ir.OpConst || in.Op == ir.OpFuncRef
	now := avail{in.Results[0], st.calls}
	if hasStr {
		return lookup(n.strs, &n.strLog, strKey{k, str, pos}, now, anyCalls, n.subst)
	}
	return lookup(n.table, &n.log, k, now, anyCalls, n.subst)
}

// lookup finds k in table: when it is available (computed in the call
// version of now, or anyCalls), it maps now's value to it and reports
// true; otherwise it makes now the value of k, logging the change.
func lookup[K comparable](table map[K]avail, log *[]undo[K], k K, now avail, anyCalls bool, subst map[*ir.Value]*ir.Value) bool {
	prev, had := table[k]
	if had && (prev.calls == now.calls || anyCalls) {
		subst[now.v] = prev.v
		return true
	}
	table[k] = now
	*log = append(*log, undo[K]{k, prev, had})
	return false
}

// effect reports what in may do that gvn cares about: write memory (a
// store, copy, call, effect or asm block) and call, in itself or in its
// regions.
func (n *numberer) effect(in *ir.Instr) effect {
	if len(in.Regions) == 0 {
		var fx effect
		if writesMemory(in) {
			fx |= fxWrites
		}
		if in.Op == ir.OpCall || in.Op == ir.OpCallIndirect {
			fx |= fxCalls
		}
		return fx
	}
	if fx, ok := n.effects[in]; ok {
		return fx
	}
	var fx effect
	for _, sub := range in.Regions {
		for _, x := range sub.Instrs {
			fx |= n.effect(x)
		}
	}
	n.effects[in] = fx
	return fx
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
