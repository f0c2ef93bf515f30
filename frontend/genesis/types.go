package genesis

import (
	"fmt"
	"strings"

	"github.com/genesis-toolchain/genesis/diag"
)

// Types. A Type is one of *Basic, *Pointer, *Array, *Struct, *Enum or
// *FuncType. Basic types are the singletons below, structs and enums are
// one value per declaration (nominal), and the others are compared
// structurally by Identical. Aliases are not types: an alias denotes the
// type it names.
type Type interface {
	String() string
	typeNode()
}

// BasicKind tells the basic types apart.
type BasicKind uint8

const (
	KindInvalid BasicKind = iota // the type of what failed to check; never reported again
	KindU8
	KindU16
	KindU32
	KindU64
	KindI8
	KindI16
	KindI32
	KindI64
	KindBool
	KindVoid
	KindNever // the type of a block that always leaves by return, break or continue
)

// Basic is a primitive type (§4.1), or one of the checker's Invalid and
// Never.
type Basic struct {
	Kind BasicKind
	name string
}

// The basic types.
var (
	Invalid = &Basic{KindInvalid, "invalid"}
	U8      = &Basic{KindU8, "u8"}
	U16     = &Basic{KindU16, "u16"}
	U32     = &Basic{KindU32, "u32"}
	U64     = &Basic{KindU64, "u64"}
	I8      = &Basic{KindI8, "i8"}
	I16     = &Basic{KindI16, "i16"}
	I32     = &Basic{KindI32, "i32"}
	I64     = &Basic{KindI64, "i64"}
	Bool    = &Basic{KindBool, "bool"}
	Void    = &Basic{KindVoid, "void"}
	Never   = &Basic{KindNever, "never"}
)

// predeclared are the type names every program starts with.
var predeclared = []*Basic{U8, U16, U32, U64, I8, I16, I32, I64, Bool, Void}

// Pointer is `*Elem` or `*mut Elem`.
type Pointer struct {
	Elem Type
	Mut  bool
}

// Array is `[Elem; Len]`.
type Array struct {
	Elem Type
	Len  uint64
}

// Struct is a struct type, one per declaration.
type Struct struct {
	Name   string
	Decl   *StructDecl
	Fields []*Field
	layout layout
}

// Field is a field of a struct, with its byte offset.
type Field struct {
	Name   string
	Pos    diag.Pos
	Type   Type
	Index  int
	Offset uint64
}

// Enum is an enum type (a tagged union), one per declaration.
type Enum struct {
	Name     string
	Decl     *EnumDecl
	Variants []*Variant
	layout   layout
}

// FuncType is `*fn(Params) -> Result`, the type of a function pointer and
// of a function name used as a value.
type FuncType struct {
	Params []Type
	Result Type
}

func (*Basic) typeNode()    {}
func (*Pointer) typeNode()  {}
func (*Array) typeNode()    {}
func (*Struct) typeNode()   {}
func (*Enum) typeNode()     {}
func (*FuncType) typeNode() {}

func (t *Basic) String() string  { return t.name }
func (t *Struct) String() string { return t.Name }
func (t *Enum) String() string   { return t.Name }

func (t *Pointer) String() string {
	if t.Mut {
		return "*mut " + t.Elem.String()
	}
	return "*" + t.Elem.String()
}

func (t *Array) String() string { return fmt.Sprintf("[%s; %d]", t.Elem, t.Len) }

func (t *FuncType) String() string {
	var b strings.Builder
	b.WriteString("*fn(")
	for i, p := range t.Params {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(p.String())
	}
	b.WriteString(") -> ")
	b.WriteString(t.Result.String())
	return b.String()
}

// IsInteger reports whether t is one of the eight integer types.
func IsInteger(t Type) bool {
	b, ok := t.(*Basic)
	return ok && b.Kind >= KindU8 && b.Kind <= KindI64
}

// IsSigned reports whether t is a signed integer type.
func IsSigned(t Type) bool {
	b, ok := t.(*Basic)
	return ok && b.Kind >= KindI8 && b.Kind <= KindI64
}

// Bits is the width of an integer type, 0 for any other type.
func Bits(t Type) int {
	b, ok := t.(*Basic)
	if !ok {
		return 0
	}
	switch b.Kind {
	case KindU8, KindI8:
		return 8
	case KindU16, KindI16:
		return 16
	case KindU32, KindI32:
		return 32
	case KindU64, KindI64:
		return 64
	}
	return 0
}

func isBasic(t Type, k BasicKind) bool {
	b, ok := t.(*Basic)
	return ok && b.Kind == k
}

// isInvalid reports whether t is missing or Invalid: an error about it was
// already reported, so no other is.
func isInvalid(t Type) bool { return t == nil || t == Invalid }

// Identical reports whether two types are the same type.
func Identical(a, b Type) bool {
	if a == b {
		return true
	}
	switch a := a.(type) {
	case *Pointer:
		b, ok := b.(*Pointer)
		return ok && a.Mut == b.Mut && Identical(a.Elem, b.Elem)
	case *Array:
		b, ok := b.(*Array)
		return ok && a.Len == b.Len && Identical(a.Elem, b.Elem)
	case *FuncType:
		b, ok := b.(*FuncType)
		if !ok || len(a.Params) != len(b.Params) || !Identical(a.Result, b.Result) {
			return false
		}
		for i := range a.Params {
			if !Identical(a.Params[i], b.Params[i]) {
				return false
			}
		}
		return true
	}
	return false
}

// assignable reports whether a value of type v may be used where type t is
// expected. Genesis has no implicit conversion (§4.3) but one: a `*mut T`
// is also a `*T`, since it only gives up a permission (docs/genesis.md).
// Never, the type of what does not finish, goes anywhere.
func assignable(v, t Type) bool {
	if Identical(v, t) || v == Never {
		return true
	}
	if vp, ok := v.(*Pointer); ok {
		if tp, ok := t.(*Pointer); ok && vp.Mut && !tp.Mut {
			return Identical(vp.Elem, tp.Elem)
		}
	}
	return false
}

// comparable reports whether == and != apply to values of type t.
func comparable(t Type) bool {
	switch t := t.(type) {
	case *Basic:
		return IsInteger(t) || t == Bool
	case *Pointer, *FuncType:
		return true
	}
	return false
}

// ordered reports whether < > <= >= apply to values of type t.
func ordered(t Type) bool {
	if _, ok := t.(*Pointer); ok {
		return true
	}
	return IsInteger(t)
}

// ── Layout ──

// layout is the size and alignment of a struct or enum, computed once all
// declarations are resolved (docs/genesis.md, "Memory layout").
type layout struct {
	state       uint8 // 0 not computed, 1 in progress (a cycle if met again), 2 done
	size, align uint64
	tagSize     uint64 // enums: the size of the tag at offset 0
	payloadOff  uint64 // enums: where every variant's payload starts
}

// Sizeof is the size in bytes of a value of type t: what `p + 1` on a
// `*t` would skip if Genesis scaled, and what `p[i]` does scale by.
func Sizeof(t Type) uint64 {
	size, _ := sizeAlign(t)
	return size
}

// Alignof is the alignment in bytes of a value of type t.
func Alignof(t Type) uint64 {
	_, align := sizeAlign(t)
	return align
}

func sizeAlign(t Type) (size, align uint64) {
	switch t := t.(type) {
	case *Basic:
		switch t.Kind {
		case KindVoid, KindNever, KindInvalid:
			return 0, 1
		case KindBool:
			return 1, 1
		}
		n := uint64(Bits(t) / 8)
		return n, n
	case *Pointer, *FuncType:
		return 8, 8
	case *Array:
		s, a := sizeAlign(t.Elem)
		return s * t.Len, a
	case *Struct:
		return t.layout.size, t.layout.align
	case *Enum:
		return t.layout.size, t.layout.align
	}
	return 0, 1
}

func alignUp(n, a uint64) uint64 {
	if a <= 1 {
		return n
	}
	return (n + a - 1) / a * a
}

// VariantLayout gives where an enum stores its tag and payload: the tag,
// of TagSize bytes, at offset 0, and every variant's payload fields from
// PayloadOffset on, laid out as a struct's would be.
func (e *Enum) VariantLayout() (tagSize, payloadOffset uint64) {
	return e.layout.tagSize, e.layout.payloadOff
}

// ── Objects ──

// An Object is what a name refers to: *Var, *Func, *Variant or *TypeName.
type Object interface {
	Name() string
	Pos() diag.Pos // where it is declared; Line 0 if predeclared
	objectNode()
}

// Var is a local variable, a parameter, or a variable bound by a match
// pattern.
type Var struct {
	name  string
	pos   diag.Pos
	Type  Type
	Mut   bool
	Param bool
	Addr  bool // its address is taken (&x somewhere): it must live in memory
	Func  *Func
}

// Func is a function.
type Func struct {
	name string
	Decl *FuncDecl
	Type *FuncType
	// Params are the parameters, in order.
	Params []*Var
	// Locals are every other variable of the body (lets and pattern
	// bindings), in the order they are declared.
	Locals []*Var
}

// Variant is a variant of an enum, with its payload's field layout.
type Variant struct {
	name    string
	pos     diag.Pos
	Enum    *Enum
	Index   int // the tag value
	Payload []*Field
}

// TypeName is a type declaration: a struct, an enum, an alias or a
// predeclared type.
type TypeName struct {
	name string
	pos  diag.Pos
	Type Type // nil while an alias is being resolved
	decl Decl // nil if predeclared
}

func (o *Var) Name() string      { return o.name }
func (o *Func) Name() string     { return o.name }
func (o *Variant) Name() string  { return o.name }
func (o *TypeName) Name() string { return o.name }

func (o *Var) Pos() diag.Pos      { return o.pos }
func (o *Func) Pos() diag.Pos     { return o.Decl.Name.Pos() }
func (o *Variant) Pos() diag.Pos  { return o.pos }
func (o *TypeName) Pos() diag.Pos { return o.pos }

func (*Var) objectNode()      {}
func (*Func) objectNode()     {}
func (*Variant) objectNode()  {}
func (*TypeName) objectNode() {}

// PayloadTypes are the types of a variant's payload, in order.
func (v *Variant) PayloadTypes() []Type {
	ts := make([]Type, len(v.Payload))
	for i, f := range v.Payload {
		ts[i] = f.Type
	}
	return ts
}
