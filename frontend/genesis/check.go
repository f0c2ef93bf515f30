package genesis

import (
	"strconv"

	"github.com/genesis-toolchain/genesis/diag"
)

// Type checking of function bodies.
//
// Expressions are checked with an expected type, a hint that flows from
// the context down (a let's declared type, a parameter's type, the other
// operand of an arithmetic operator). The hint only decides the type of
// integer literals (§4.3 has no implicit conversion, so a literal must
// take its type from somewhere; docs/genesis.md "Integer literals"); the
// caller then checks the result with assignable.

// funcBody checks the body of fn.
func (c *checker) funcBody(fn *Func) {
	c.fn, c.loops = fn, 0
	c.scope = &scope{vars: map[string]*Var{}}
	for _, p := range fn.Params {
		c.scope.vars[p.name] = p
	}
	body := fn.Decl.Body
	t := c.block(body, fn.Type.Result, false)
	switch {
	case isInvalid(t) || isInvalid(fn.Type.Result):
	case t == Void && fn.Type.Result != Void:
		c.errorf(body.End, CodeType, "missing return at the end of %s, which returns %s", fn.name, fn.Type.Result)
	case !assignable(t, fn.Type.Result):
		c.errorf(body.Tail.Pos(), CodeType, "%s returns %s, but its body's value is %s", fn.name, fn.Type.Result, t)
	}
	c.fn, c.scope = nil, nil
}

// record sets the type of e and returns it.
func record(e Expr, t Type) Type {
	e.setType(t)
	return t
}

// ── Scopes ──

func (c *checker) push() { c.scope = &scope{parent: c.scope, vars: map[string]*Var{}} }
func (c *checker) pop()  { c.scope = c.scope.parent }

// declareVar adds a local variable to the innermost scope. A name may
// shadow one of an enclosing block but not one of the same block.
func (c *checker) declareVar(id *Ident, t Type, mut bool) *Var {
	v := &Var{name: id.Name, pos: id.Pos(), Type: t, Mut: mut, Func: c.fn}
	id.Obj = v
	id.setType(t)
	if old, ok := c.scope.vars[id.Name]; ok {
		c.errorf(id.Pos(), CodeSymbol, "%s redeclared in this block; the other declaration is at %s", id.Name, old.pos)
	}
	c.scope.vars[id.Name] = v
	c.fn.Locals = append(c.fn.Locals, v)
	return v
}

// lookup finds what a name refers to: a variable, else a function or a
// variant, else a type name; nil if nothing.
func (c *checker) lookup(name string) Object {
	for s := c.scope; s != nil; s = s.parent {
		if v, ok := s.vars[name]; ok {
			return v
		}
	}
	if obj, ok := c.values[name]; ok {
		return obj
	}
	if tn, ok := c.types[name]; ok {
		return tn
	}
	return nil
}

// ── Statements ──

// block checks a block in a new scope and returns its type: the tail's,
// Never if a statement always leaves it, or else void. With discard (a
// block whose value is thrown away, as a loop body) the tail's value may
// have any type.
func (c *checker) block(b *BlockExpr, want Type, discard bool) Type {
	c.push()
	defer c.pop()
	diverges := false
	for _, s := range b.Stmts {
		if c.stmt(s) {
			diverges = true
		}
	}
	t := Type(Void)
	switch {
	case b.Tail != nil:
		if discard {
			want = nil
		}
		t = c.expr(b.Tail, want)
		if discard && t != Never {
			t = Void
		}
	case diverges:
		t = Never
	}
	return record(b, t)
}

// stmt checks a statement and reports whether it always leaves its block
// (return, break, continue, or an expression that does).
func (c *checker) stmt(s Stmt) bool {
	switch s := s.(type) {
	case *LetStmt:
		t := c.resolveType(s.Type)
		vt := c.assign(s.Value, t, "the value of "+s.Name.Name)
		s.Var = c.declareVar(s.Name, t, s.Mut)
		return vt == Never
	case *AssignStmt:
		t := c.place(s.Target, true, s.EqPos)
		return c.assign(s.Value, t, "the assigned value") == Never
	case *ExprStmt:
		var t Type
		switch x := s.X.(type) {
		case *IfExpr:
			t = c.ifExpr(x, nil, true)
		case *MatchExpr:
			t = c.matchExpr(x, nil, true)
		default:
			t = c.expr(x, nil)
		}
		return t == Never
	case *WhileStmt:
		c.assign(s.Cond, Bool, "a while condition")
		c.loops++
		c.block(s.Body, nil, true)
		c.loops--
		// A loop may run zero times, and a break leaves it: it never
		// counts as leaving the block (docs/genesis.md).
		return false
	case *ReturnStmt:
		res := c.fn.Type.Result
		switch {
		case s.Value != nil:
			c.assign(s.Value, res, "the returned value")
		case res != Void && !isInvalid(res):
			c.errorf(s.ReturnPos, CodeType, "return without a value in %s, which returns %s", c.fn.name, res)
		}
		return true
	case *BranchStmt:
		if c.loops == 0 {
			word := "break"
			if s.Continue {
				word = "continue"
			}
			c.errorf(s.KwPos, CodeType, "%s outside a loop", word)
		}
		return true
	case *AsmStmt:
		c.asm(s)
	}
	return false
}

// assign checks e, expecting type t, and reports a value that cannot be
// used as a t. what names the value for the message. It returns e's type.
func (c *checker) assign(e Expr, t Type, what string) Type {
	et := c.expr(e, t)
	if !isInvalid(et) && !isInvalid(t) && !assignable(et, t) {
		c.errorf(e.Pos(), CodeType, "mismatched types: %s must be %s, found %s", what, t, et)
	}
	return et
}

// place checks an expression used as a place: the target of an
// assignment (assigning true) or of &. It returns the place's type, and
// for an assignment reports a place that is not mutable.
func (c *checker) place(e Expr, assigning bool, at diag.Pos) Type {
	t := c.expr(e, nil)
	if isInvalid(t) {
		return Invalid
	}
	if !isPlace(e) {
		c.errorf(e.Pos(), CodeType, "cannot assign to %s", describeExpr(e))
		return Invalid
	}
	if assigning {
		if ok, why := mutable(e); !ok {
			c.errorf(e.Pos(), CodeType, "cannot assign to %s", why)
		}
	}
	return t
}

// isPlace reports whether e denotes a memory location: a variable, *p,
// a[i], s.f or p->f. Only places can be assigned and have their address
// taken.
func isPlace(e Expr) bool {
	switch e := e.(type) {
	case *Ident:
		_, ok := e.Obj.(*Var)
		return ok
	case *UnaryExpr:
		return e.Op == OpDeref
	case *IndexExpr:
		if _, ok := e.X.Type().(*Pointer); ok {
			return true
		}
		return isPlace(e.X)
	case *FieldExpr:
		return e.Arrow || isPlace(e.X)
	}
	return false
}

// mutable reports whether the place e may be written (§5.2: only mut
// variables, and through *mut pointers), and if not, why, for a message.
func mutable(e Expr) (bool, string) {
	switch e := e.(type) {
	case *Ident:
		v := e.Obj.(*Var)
		switch {
		case v.Mut:
			return true, ""
		case v.Param:
			return false, "parameter " + v.name + ": parameters are immutable; copy it into a let mut"
		}
		return false, v.name + ", which is not declared mut"
	case *UnaryExpr:
		return ptrMutable(e.X)
	case *IndexExpr:
		if _, ok := e.X.Type().(*Pointer); ok {
			return ptrMutable(e.X)
		}
		return mutable(e.X)
	case *FieldExpr:
		if e.Arrow {
			return ptrMutable(e.X)
		}
		return mutable(e.X)
	}
	return false, describeExpr(e)
}

func ptrMutable(p Expr) (bool, string) {
	if pt, ok := p.Type().(*Pointer); ok && pt.Mut {
		return true, ""
	}
	return false, "memory through " + p.Type().String() + ", which is not a *mut pointer"
}

// placeRoot is the variable a place is part of, if any: x in x, x[i],
// x.f (not through a pointer).
func placeRoot(e Expr) *Var {
	switch e := e.(type) {
	case *Ident:
		v, _ := e.Obj.(*Var)
		return v
	case *IndexExpr:
		if _, ok := e.X.Type().(*Array); ok {
			return placeRoot(e.X)
		}
	case *FieldExpr:
		if !e.Arrow {
			return placeRoot(e.X)
		}
	}
	return nil
}

// ── Expressions ──

// expr checks e with the expected type want (nil if none) and returns
// its type, which it also records in e.
func (c *checker) expr(e Expr, want Type) Type {
	switch e := e.(type) {
	case *BadExpr:
		return record(e, Invalid)
	case *IntLit:
		return record(e, c.intLit(e, want, nil))
	case *ByteLit:
		return record(e, U8)
	case *BoolLit:
		return record(e, Bool)
	case *StringLit:
		// A string literal is a pointer to its bytes, in read-only data
		// and followed by a NUL (docs/genesis.md).
		return record(e, &Pointer{Elem: U8})
	case *Ident:
		return record(e, c.ident(e))
	case *UnaryExpr:
		return record(e, c.unary(e, want))
	case *BinaryExpr:
		return record(e, c.binary(e, want))
	case *CastExpr:
		return record(e, c.cast(e))
	case *CallExpr:
		return record(e, c.call(e))
	case *IndexExpr:
		return record(e, c.index(e))
	case *FieldExpr:
		return record(e, c.field(e))
	case *ArrayLit:
		var elemWant Type
		if at, ok := want.(*Array); ok {
			elemWant = at.Elem
		}
		et := c.expr(e.Elem, elemWant)
		if isInvalid(et) {
			return record(e, Invalid)
		}
		if elemWant != nil && assignable(et, elemWant) {
			et = elemWant
		}
		return record(e, &Array{Elem: et, Len: e.Len})
	case *StructLit:
		return record(e, c.structLit(e))
	case *BlockExpr:
		return c.block(e, want, false)
	case *IfExpr:
		return c.ifExpr(e, want, false)
	case *MatchExpr:
		return c.matchExpr(e, want, false)
	}
	return Invalid
}

// ident checks a name used as a value.
func (c *checker) ident(e *Ident) Type {
	obj := c.lookup(e.Name)
	e.Obj = obj
	switch obj := obj.(type) {
	case nil:
		c.errorf(e.Pos(), CodeSymbol, "undefined: %s", e.Name)
	case *Var:
		return obj.Type
	case *Func:
		// A function name used as a value is a function pointer (§6).
		return obj.Type
	case *Variant:
		if len(obj.Payload) > 0 {
			c.errorf(e.Pos(), CodeType, "variant %s of %s carries %s: build it with %s(...)", obj.name, obj.Enum.Name, plural(len(obj.Payload), "value"), obj.name)
			return Invalid
		}
		return obj.Enum
	case *TypeName:
		c.errorf(e.Pos(), CodeType, "%s is a type, not a value", e.Name)
	}
	return Invalid
}

// ── Integer literals ──

// isUntyped reports whether e is an integer literal, or an operator
// expression made only of integer literals (-1, 1 << 4): its type comes
// from the context. The answer for an operator expression is kept:
// operands asks it at every level of a chain like 1 + 1 + ... + 1, which
// would otherwise walk the chain below each level again (quadratic time).
func (c *checker) isUntyped(e Expr) bool {
	switch e.(type) {
	case *IntLit:
		return true
	case *UnaryExpr, *BinaryExpr:
	default:
		return false
	}
	if u, ok := c.untyped[e]; ok {
		return u
	}
	u := false
	switch e := e.(type) {
	case *UnaryExpr:
		u = (e.Op == OpNeg || e.Op == OpCompl) && c.isUntyped(e.X)
	case *BinaryExpr:
		switch e.Op {
		case OpShl, OpShr:
			u = c.isUntyped(e.X)
		case OpAdd, OpSub, OpMul, OpDiv, OpRem, OpAnd, OpOr, OpXor:
			u = c.isUntyped(e.X) && c.isUntyped(e.Y)
		}
	}
	if c.untyped == nil {
		c.untyped = map[Expr]bool{}
	}
	c.untyped[e] = u
	return u
}

// intLit types an integer literal: the expected type if that is an integer
// type, else u64. The value must fit the type; minus is the unary minus
// the literal is the operand of, if any: the literal is then negative
// (-128 is an i8) and starts at the minus sign.
func (c *checker) intLit(e *IntLit, want Type, minus *UnaryExpr) Type {
	t := Type(U64)
	if IsInteger(want) {
		t = want
	}
	if !fits(e.Value, minus != nil, t) {
		text, at := e.Text, e.Pos()
		if minus != nil {
			text, at = "-"+text, minus.Pos()
		}
		c.errorf(at, CodeType, "integer literal %s does not fit in %s", text, t)
	}
	return record(e, t)
}

// fits reports whether the integer v, negated if neg, is a value of the
// integer type t.
func fits(v uint64, neg bool, t Type) bool {
	n := Bits(t)
	if IsSigned(t) {
		if neg {
			return v <= 1<<(n-1)
		}
		return v <= 1<<(n-1)-1
	}
	if neg {
		return v == 0
	}
	return n == 64 || v < 1<<n
}

// ── Operators ──

func (c *checker) unary(e *UnaryExpr, want Type) Type {
	switch e.Op {
	case OpNeg:
		var t Type
		if lit, ok := e.X.(*IntLit); ok {
			t = c.intLit(lit, want, e)
		} else {
			t = c.expr(e.X, want)
		}
		if isInvalid(t) {
			return Invalid
		}
		if !IsInteger(t) {
			c.errorf(e.Pos(), CodeType, "operator - needs an integer operand, found %s", t)
			return Invalid
		}
		return t
	case OpCompl:
		t := c.expr(e.X, want)
		if isInvalid(t) {
			return Invalid
		}
		if !IsInteger(t) {
			c.errorf(e.Pos(), CodeType, "operator ~ needs an integer operand, found %s (! is the logical not)", t)
			return Invalid
		}
		return t
	case OpNot:
		t := c.expr(e.X, Bool)
		if isInvalid(t) {
			return Invalid
		}
		if t != Bool {
			c.errorf(e.Pos(), CodeType, "operator ! needs a bool operand, found %s (~ is the bitwise complement)", t)
			return Invalid
		}
		return Bool
	case OpDeref:
		var pwant Type
		if want != nil && !isInvalid(want) {
			pwant = &Pointer{Elem: want}
		}
		t := c.expr(e.X, pwant)
		if isInvalid(t) {
			return Invalid
		}
		p, ok := t.(*Pointer)
		if !ok {
			c.errorf(e.Pos(), CodeType, "cannot dereference %s, which is not a pointer", t)
			return Invalid
		}
		return p.Elem
	case OpAddr:
		if id, ok := e.X.(*Ident); ok {
			if fn, ok := c.lookup(id.Name).(*Func); ok {
				c.errorf(e.Pos(), CodeType, "cannot take the address of function %s: its name is already a function pointer", fn.name)
				return Invalid
			}
		}
		t := c.expr(e.X, nil)
		if isInvalid(t) {
			return Invalid
		}
		if !isPlace(e.X) {
			c.errorf(e.Pos(), CodeType, "cannot take the address of %s", describeExpr(e.X))
			return Invalid
		}
		if v := placeRoot(e.X); v != nil {
			v.Addr = true
		}
		// &x is a *mut T where x could be assigned, else a *T.
		mut, _ := mutable(e.X)
		return &Pointer{Elem: t, Mut: mut}
	}
	return Invalid
}

// operands checks the operands of a binary operator that needs them of
// one type, the typed one first so that a literal takes its type.
func (c *checker) operands(e *BinaryExpr, want Type) (tx, ty Type) {
	if c.isUntyped(e.X) && !c.isUntyped(e.Y) {
		ty = c.expr(e.Y, want)
		tx = c.expr(e.X, intHint(ty))
		return tx, ty
	}
	tx = c.expr(e.X, want)
	ty = c.expr(e.Y, intHint(tx))
	return tx, ty
}

// intHint is what a literal operand next to an operand of type t should
// be: t if it is an integer, u64 beside a pointer (p + 8).
func intHint(t Type) Type {
	if _, ok := t.(*Pointer); ok {
		return U64
	}
	return t
}

func (c *checker) binary(e *BinaryExpr, want Type) Type {
	switch e.Op {
	case OpAndAnd, OpOrOr:
		tx, ty := c.expr(e.X, Bool), c.expr(e.Y, Bool)
		if isInvalid(tx) || isInvalid(ty) {
			return Invalid
		}
		if tx != Bool || ty != Bool {
			c.errorf(e.Pos(), CodeType, "operator %s needs bool operands, found %s and %s", e.Op, tx, ty)
			return Invalid
		}
		return Bool
	case OpShl, OpShr:
		tx := c.expr(e.X, want)
		ty := c.expr(e.Y, nil)
		if isInvalid(tx) || isInvalid(ty) {
			return Invalid
		}
		if !IsInteger(tx) || !IsInteger(ty) {
			c.errorf(e.Pos(), CodeType, "operator %s needs integer operands, found %s and %s", e.Op, tx, ty)
			return Invalid
		}
		return tx
	}
	if e.Op.IsComparison() {
		tx, ty := c.operands(e, nil)
		if isInvalid(tx) || isInvalid(ty) {
			return Invalid
		}
		if !sameOperandTypes(tx, ty) {
			c.errorf(e.Pos(), CodeType, "mismatched types %s and %s for %s", tx, ty, e.Op)
			return Invalid
		}
		ok := comparable(tx)
		if e.Op != OpEq && e.Op != OpNe {
			ok = ordered(tx)
		}
		if !ok {
			c.errorf(e.Pos(), CodeType, "operator %s does not apply to %s", e.Op, tx)
			return Invalid
		}
		return Bool
	}
	// Arithmetic and bitwise operators.
	tx, ty := c.operands(e, want)
	if isInvalid(tx) || isInvalid(ty) {
		return Invalid
	}
	if p, ok := tx.(*Pointer); ok && (e.Op == OpAdd || e.Op == OpSub) {
		// Pointer arithmetic counts bytes (docs/genesis.md).
		if ty != U64 {
			c.errorf(e.Pos(), CodeType, "pointer arithmetic needs a u64 offset, found %s", ty)
			return Invalid
		}
		return p
	}
	if !IsInteger(tx) || !Identical(tx, ty) {
		if IsInteger(tx) && IsInteger(ty) {
			c.errorf(e.Pos(), CodeType, "mismatched types %s and %s for %s (convert one with as)", tx, ty, e.Op)
		} else {
			c.errorf(e.Pos(), CodeType, "operator %s does not apply to %s and %s", e.Op, tx, ty)
		}
		return Invalid
	}
	return tx
}

// sameOperandTypes: a comparison needs one type, but a *mut T compares
// with a *T.
func sameOperandTypes(a, b Type) bool {
	return assignable(a, b) || assignable(b, a)
}

// cast checks `x as T`: between integer types (truncating or extending,
// §4.4), bool to integer, integer to and from pointer, pointer to pointer,
// and any type to itself.
func (c *checker) cast(e *CastExpr) Type {
	to := c.resolveType(e.To)
	var hint Type
	if IsInteger(to) {
		hint = to
	}
	from := c.expr(e.X, hint)
	if isInvalid(from) || isInvalid(to) {
		return Invalid
	}
	_, fromPtr := from.(*Pointer)
	_, toPtr := to.(*Pointer)
	switch {
	case Identical(from, to),
		IsInteger(from) && IsInteger(to),
		from == Bool && IsInteger(to),
		IsInteger(from) && toPtr,
		fromPtr && IsInteger(to),
		fromPtr && toPtr:
		return to
	}
	c.errorf(e.Pos(), CodeType, "cannot cast %s to %s", from, to)
	return Invalid
}

// call checks a call of a function, of a function pointer, or of a
// variant's constructor.
func (c *checker) call(e *CallExpr) Type {
	if id, ok := e.Fun.(*Ident); ok {
		if v, ok := c.lookup(id.Name).(*Variant); ok {
			id.Obj = v
			record(id, v.Enum)
			if len(v.Payload) == 0 {
				c.errorf(e.Pos(), CodeType, "variant %s of %s carries no value: write %s without parentheses", v.name, v.Enum.Name, v.name)
				c.argsAlone(e)
				return Invalid
			}
			if !c.args(e, v.PayloadTypes()) {
				return Invalid
			}
			return v.Enum
		}
	}
	t := c.expr(e.Fun, nil)
	if isInvalid(t) {
		c.argsAlone(e)
		return Invalid
	}
	ft, ok := t.(*FuncType)
	if !ok {
		c.errorf(e.Pos(), CodeType, "cannot call %s, which is not a function", t)
		c.argsAlone(e)
		return Invalid
	}
	c.args(e, ft.Params)
	return ft.Result
}

// args checks a call's arguments against params, which may be empty;
// false if their number is wrong.
func (c *checker) args(e *CallExpr, params []Type) bool {
	if len(e.Args) != len(params) {
		c.errorf(e.Pos(), CodeType, "wrong number of arguments: %d given, %d expected", len(e.Args), len(params))
		c.argsAlone(e)
		return false
	}
	for i, a := range e.Args {
		c.assign(a, params[i], "argument "+strconv.Itoa(i+1))
	}
	return true
}

// argsAlone checks a call's arguments without parameters to check them
// against, after an error about the callee.
func (c *checker) argsAlone(e *CallExpr) {
	for _, a := range e.Args {
		c.expr(a, nil)
	}
}

func (c *checker) index(e *IndexExpr) Type {
	t := c.expr(e.X, nil)
	it := c.expr(e.Index, U64)
	if isInvalid(t) || isInvalid(it) {
		return Invalid
	}
	if !IsInteger(it) {
		c.errorf(e.Index.Pos(), CodeType, "an index must be an integer, found %s", it)
		return Invalid
	}
	switch t := t.(type) {
	case *Array:
		if lit, ok := e.Index.(*IntLit); ok && lit.Value >= t.Len {
			c.errorf(e.Index.Pos(), CodeType, "index %s out of range for %s", lit.Text, t)
		}
		return t.Elem
	case *Pointer:
		return t.Elem
	}
	c.errorf(e.Pos(), CodeType, "cannot index %s, which is neither an array nor a pointer", t)
	return Invalid
}

func (c *checker) field(e *FieldExpr) Type {
	t := c.expr(e.X, nil)
	if isInvalid(t) {
		return Invalid
	}
	if e.Arrow {
		p, ok := t.(*Pointer)
		if !ok {
			c.errorf(e.Pos(), CodeType, "-> needs a pointer to a struct, found %s", t)
			return Invalid
		}
		t = p.Elem
	}
	st, ok := t.(*Struct)
	if !ok {
		if _, isPtr := t.(*Pointer); isPtr && !e.Arrow {
			c.errorf(e.Pos(), CodeType, "%s is a pointer: use -> to reach field %s", t, e.Name.Name)
		} else {
			c.errorf(e.Pos(), CodeType, "%s is not a struct and has no field %s", t, e.Name.Name)
		}
		return Invalid
	}
	for _, f := range st.Fields {
		if f.Name == e.Name.Name {
			e.Field = f
			record(e.Name, f.Type)
			return f.Type
		}
	}
	c.errorf(e.Name.Pos(), CodeSymbol, "struct %s has no field %s", st.Name, e.Name.Name)
	return Invalid
}

func (c *checker) structLit(e *StructLit) Type {
	tn, ok := c.types[e.Name.Name]
	var st *Struct
	if ok {
		if tn.Type == nil {
			c.resolveAlias(tn)
		}
		st, _ = tn.Type.(*Struct)
	}
	if st == nil {
		if ok {
			c.errorf(e.Name.Pos(), CodeType, "%s is not a struct", e.Name.Name)
		} else {
			c.errorf(e.Name.Pos(), CodeSymbol, "undefined struct %s", e.Name.Name)
		}
		for _, fi := range e.Fields {
			c.expr(fi.Value, nil)
		}
		return Invalid
	}
	set := map[string]bool{}
	for _, fi := range e.Fields {
		var f *Field
		for _, g := range st.Fields {
			if g.Name == fi.Name.Name {
				f = g
			}
		}
		if f == nil {
			c.errorf(fi.Name.Pos(), CodeSymbol, "struct %s has no field %s", st.Name, fi.Name.Name)
			c.expr(fi.Value, nil)
			continue
		}
		if set[f.Name] {
			c.errorf(fi.Name.Pos(), CodeSymbol, "field %s given twice", f.Name)
		}
		set[f.Name] = true
		fi.Field = f
		record(fi.Name, f.Type)
		c.assign(fi.Value, f.Type, "field "+f.Name)
	}
	for _, f := range st.Fields {
		if !set[f.Name] {
			c.errorf(e.Pos(), CodeType, "missing field %s in %s literal", f.Name, st.Name)
		}
	}
	return st
}

// ── If and match ──

// ifExpr checks an if. As an expression (stmt false) both branches must
// have one type, the if's; as a statement their values are discarded.
func (c *checker) ifExpr(e *IfExpr, want Type, stmt bool) Type {
	c.assign(e.Cond, Bool, "an if condition")
	if stmt {
		want = nil
	}
	tt := c.block(e.Then, want, stmt)
	if e.Else == nil {
		return record(e, Void)
	}
	var et Type
	switch x := e.Else.(type) {
	case *BlockExpr:
		et = c.block(x, want, stmt)
	case *IfExpr:
		et = c.ifExpr(x, want, stmt)
	default:
		et = c.expr(x, want)
	}
	if stmt {
		if tt == Never && et == Never {
			return record(e, Never)
		}
		return record(e, Void)
	}
	return record(e, c.unify(tt, et, e.Else.Pos(), "the else branch", "the if branch"))
}

// unify is the type of a value that is either an a or a b (if/else
// branches, match arms); it reports a mismatch at pos.
func (c *checker) unify(a, b Type, pos diag.Pos, bWhat, aWhat string) Type {
	switch {
	case isInvalid(a) || isInvalid(b):
		return Invalid
	case a == Never:
		return b
	case b == Never || Identical(a, b):
		return a
	case assignable(a, b):
		return b
	case assignable(b, a):
		return a
	}
	c.errorf(pos, CodeType, "mismatched types: %s is %s, but %s is %s", bWhat, b, aWhat, a)
	return Invalid
}

// matchExpr checks a match. Every match needs a `_` arm (§5.1), even if
// its other arms cover every value.
func (c *checker) matchExpr(e *MatchExpr, want Type, stmt bool) Type {
	st := c.expr(e.X, nil)
	if stmt {
		want = nil
	}
	var result Type
	wildcard := false
	for i, arm := range e.Arms {
		c.push()
		if _, ok := arm.Pattern.(*WildcardPattern); ok {
			wildcard = true
		} else {
			c.pattern(arm.Pattern, st)
		}
		t := c.expr(arm.Body, want)
		c.pop()
		switch {
		case stmt:
			if i == 0 || (result == Never && t == Never) {
				result = t
			} else {
				result = Void
			}
		case i == 0:
			result = t
		default:
			result = c.unify(result, t, arm.Body.Pos(), "this arm", "the first arm")
		}
	}
	if !wildcard {
		c.errorf(e.Pos(), CodeMatch, "non-exhaustive match: a match needs a _ arm")
	}
	if stmt && result != Never {
		result = Void
	}
	if result == nil {
		result = Invalid
	}
	return record(e, result)
}

// pattern checks a pattern against the scrutinee's type and declares the
// variables it binds.
func (c *checker) pattern(p Pattern, st Type) {
	if isInvalid(st) {
		if vp, ok := p.(*VariantPattern); ok {
			for _, b := range vp.Bindings {
				if b.Name != "_" {
					c.declareVar(b, Invalid, false)
				}
			}
		}
		return
	}
	switch p := p.(type) {
	case *IntPattern:
		if !IsInteger(st) {
			c.errorf(p.At, CodeType, "integer pattern %s cannot match a %s", p.Text, st)
		} else if !fits(p.Value, p.Neg, st) {
			c.errorf(p.At, CodeType, "pattern %s does not fit in %s", p.Text, st)
		}
	case *BoolPattern:
		if st != Bool {
			c.errorf(p.At, CodeType, "bool pattern cannot match a %s", st)
		}
	case *VariantPattern:
		en, ok := st.(*Enum)
		var v *Variant
		if ok {
			for _, w := range en.Variants {
				if w.name == p.Name.Name {
					v = w
				}
			}
		}
		switch {
		case v != nil:
		case !ok:
			c.errorf(p.Name.Pos(), CodeType, "variant pattern %s cannot match a %s", p.Name.Name, st)
		default:
			if other, isVariant := c.values[p.Name.Name].(*Variant); isVariant {
				c.errorf(p.Name.Pos(), CodeType, "%s is a variant of %s, not of %s", p.Name.Name, other.Enum.Name, en.Name)
			} else {
				c.errorf(p.Name.Pos(), CodeSymbol, "enum %s has no variant %s", en.Name, p.Name.Name)
			}
		}
		p.Variant = v
		p.Name.Obj = v
		if v != nil && len(p.Bindings) != len(v.Payload) {
			c.errorf(p.Name.Pos(), CodeType, "variant %s carries %s, the pattern binds %d", v.name, plural(len(v.Payload), "value"), len(p.Bindings))
			v = nil
		}
		for i, b := range p.Bindings {
			t := Type(Invalid)
			if v != nil {
				t = v.Payload[i].Type
			}
			if b.Name == "_" {
				record(b, t)
				continue
			}
			c.declareVar(b, t, false)
		}
	}
}
