// Package ir is the typed intermediate representation every language of the
// toolchain lowers to: Genesis (integers, memory, inline assembly) and the
// agent languages (dynamic values and effects).
//
// The IR is structured: a Func's body is a Region, a Region is a straight
// sequence of Instrs, and control flow is expressed by instructions that own
// regions (if, loop, block, switch) and by terminators that leave them
// (yield, break, continue, return, unreachable), as in WebAssembly or
// MLIR's scf dialect. Values are in SSA form: each Value is defined once,
// by an instruction result, a function parameter or a region parameter (the
// loop-carried values of a loop), and is visible in the rest of its region
// and in the regions nested there. Mutable locals that a frontend does not
// want to put in SSA form itself are Var locals, read with get and written
// with set; addressable memory is a Slot local.
//
// The op table (ops.go) is the single description of every operation: its
// printed form, its operand and result type rules and its semantics. The
// printer (print.go), the parser (parse.go) and the verifier (verify.go)
// all read it. docs/ir.md is the reference of the printed form.
package ir

import (
	"strings"
	"sync"
)

// Kind classifies a Type.
type Kind uint8

// The kinds of types.
const (
	KindInvalid Kind = iota
	KindBool         // true or false; 1 byte in memory
	KindI8           // sign-less 8-bit integer
	KindI16          // sign-less 16-bit integer
	KindI32          // sign-less 32-bit integer
	KindI64          // sign-less 64-bit integer
	KindPtr          // a byte address in linear memory; 8 bytes
	KindDyn          // a dynamic value of the agent languages (printed "dyn")
	KindFunc         // a reference to a function with a given signature
)

// Type is an IR type. Types are small values and compare with ==: function
// types are interned, so two function types with the same signature are
// equal. The zero Type is invalid.
type Type struct {
	kind Kind
	sig  *Signature
}

// Signature is the parameter and result types of a function type. A
// Signature obtained from a Type must not be modified.
type Signature struct {
	Params, Results []Type
}

// The non-function types.
var (
	Bool = Type{kind: KindBool}
	I8   = Type{kind: KindI8}
	I16  = Type{kind: KindI16}
	I32  = Type{kind: KindI32}
	I64  = Type{kind: KindI64}
	Ptr  = Type{kind: KindPtr}
	Dyn  = Type{kind: KindDyn} // printed "dyn"
)

var (
	funcTypesMu sync.Mutex
	funcTypes   = map[string]*Signature{}
)

// FuncType returns the type of references to functions taking params and
// returning results. The slices are copied.
func FuncType(params, results []Type) Type {
	t := Type{kind: KindFunc, sig: &Signature{
		Params:  append([]Type(nil), params...),
		Results: append([]Type(nil), results...),
	}}
	key := t.String()
	funcTypesMu.Lock()
	defer funcTypesMu.Unlock()
	if s, ok := funcTypes[key]; ok {
		return Type{kind: KindFunc, sig: s}
	}
	funcTypes[key] = t.sig
	return t
}

// Kind returns the kind of t.
func (t Type) Kind() Kind { return t.kind }

// Sig returns the signature of a function type, nil for other types.
func (t Type) Sig() *Signature { return t.sig }

// IsValid reports whether t is a type (not the zero Type).
func (t Type) IsValid() bool { return t.kind != KindInvalid }

// IsInt reports whether t is one of i8, i16, i32, i64.
func (t Type) IsInt() bool { return t.kind >= KindI8 && t.kind <= KindI64 }

// Bits returns the width of an integer type, 1 for bool, 64 for ptr and
// function references, 0 otherwise.
func (t Type) Bits() int {
	switch t.kind {
	case KindBool:
		return 1
	case KindI8:
		return 8
	case KindI16:
		return 16
	case KindI32:
		return 32
	case KindI64, KindPtr, KindFunc:
		return 64
	}
	return 0
}

// Size returns the number of bytes a value of type t occupies in linear
// memory, or 0 if t cannot be stored in memory (value).
func (t Type) Size() int64 {
	switch t.kind {
	case KindBool, KindI8:
		return 1
	case KindI16:
		return 2
	case KindI32:
		return 4
	case KindI64, KindPtr, KindFunc:
		return 8
	}
	return 0
}

// Storable reports whether values of type t can be loaded from and stored
// to linear memory: bool, the integers, ptr and function references.
func (t Type) Storable() bool { return t.Size() > 0 }

// String returns the printed form of t: bool, i8, i16, i32, i64, ptr,
// value, or fn(P, ...) -> (R, ...) (the arrow and results omitted when
// there are none).
func (t Type) String() string {
	switch t.kind {
	case KindBool:
		return "bool"
	case KindI8:
		return "i8"
	case KindI16:
		return "i16"
	case KindI32:
		return "i32"
	case KindI64:
		return "i64"
	case KindPtr:
		return "ptr"
	case KindDyn:
		return "dyn"
	case KindFunc:
		var b strings.Builder
		b.WriteString("fn(")
		writeTypes(&b, t.sig.Params)
		b.WriteByte(')')
		if len(t.sig.Results) > 0 {
			b.WriteString(" -> (")
			writeTypes(&b, t.sig.Results)
			b.WriteByte(')')
		}
		return b.String()
	}
	return "invalid"
}

func writeTypes(b *strings.Builder, ts []Type) {
	for i, t := range ts {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(t.String())
	}
}

// typesEqual reports whether two type lists are equal.
func typesEqual(a, b []Type) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// typeList formats a type list for messages: "()" or "(i64, bool)".
func typeList(ts []Type) string {
	var b strings.Builder
	b.WriteByte('(')
	writeTypes(&b, ts)
	b.WriteByte(')')
	return b.String()
}

// Normalize returns x truncated to the width of the integer or bool type t
// and sign-extended back to 64 bits: the canonical form in which constants
// are stored. Other types return x unchanged.
func Normalize(t Type, x int64) int64 {
	switch t.kind {
	case KindBool:
		return x & 1
	case KindI8:
		return int64(int8(x))
	case KindI16:
		return int64(int16(x))
	case KindI32:
		return int64(int32(x))
	}
	return x
}
