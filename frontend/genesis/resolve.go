package genesis

import (
	"math/bits"

	"github.com/genesis-toolchain/genesis/diag"
)

// Program is a checked Genesis program: every file given to Check, their
// declarations resolved, and the tree annotated (see package doc).
type Program struct {
	Files   []*File
	Funcs   []*Func   // in declaration order, file by file
	Structs []*Struct // in declaration order
	Enums   []*Enum   // in declaration order
	Main    *Func     // the entry point, fn main() -> void
}

// Check resolves and type-checks files, which together form one program
// (§4 of DESIGN.md: several .gen files are one program). The files must
// have parsed without errors. When the list holds an error, the Program is
// nil. Check never panics, whatever the files hold.
func Check(files []*File) (*Program, diag.List) {
	c := &checker{
		types:  map[string]*TypeName{},
		values: map[string]Object{},
		prog:   &Program{Files: files},
	}
	file := ""
	if len(files) > 0 {
		file = files[0].Name
	}
	func() {
		defer c.recoverPhase(file)
		c.declare(files)
		c.resolveTypes()
		c.layoutAll()
		c.signatures()
		for _, f := range c.prog.Funcs {
			c.funcBody(f)
		}
		c.checkMain(file)
	}()
	diags := c.sortedDiags()
	if diags.HasErrors() {
		return nil, diags
	}
	return c.prog, diags
}

// checker holds the state of Check. Names live in two global namespaces,
// types (structs, enums, aliases, the predeclared types) and values
// (functions and enum variants), and in the nested scopes of a function
// body, which hold variables and shadow the values.
type checker struct {
	reporter
	types  map[string]*TypeName
	values map[string]Object
	prog   *Program

	aliases []*TypeName // in declaration order
	enums   []*EnumDecl

	// The function being checked.
	fn    *Func
	scope *scope
	loops int // how many loops enclose the statement being checked

	untyped map[Expr]bool // isUntyped's answers for operator expressions
}

// scope is one block's variables.
type scope struct {
	parent *scope
	vars   map[string]*Var
}

// aliasResolving marks an alias whose target is being resolved, to catch
// `type A = A;`.
var aliasResolving = &Basic{KindInvalid, "resolving"}

// ── Declarations ──

// declare enters every top-level name, reporting duplicates at the later
// declaration.
func (c *checker) declare(files []*File) {
	for _, b := range predeclared {
		c.types[b.name] = &TypeName{name: b.name, Type: b}
	}
	for _, f := range files {
		for _, d := range f.Decls {
			switch d := d.(type) {
			case *FuncDecl:
				fn := &Func{name: d.Name.Name, Decl: d}
				d.Obj = fn
				if c.declareValue(d.Name, fn) {
					c.prog.Funcs = append(c.prog.Funcs, fn)
				}
			case *StructDecl:
				st := &Struct{Name: d.Name.Name, Decl: d}
				d.Type = st
				if c.declareType(d.Name, &TypeName{name: st.Name, pos: d.Name.Pos(), Type: st, decl: d}) {
					c.prog.Structs = append(c.prog.Structs, st)
				}
			case *EnumDecl:
				en := &Enum{Name: d.Name.Name, Decl: d}
				d.Type = en
				if c.declareType(d.Name, &TypeName{name: en.Name, pos: d.Name.Pos(), Type: en, decl: d}) {
					c.prog.Enums = append(c.prog.Enums, en)
					c.enums = append(c.enums, d)
					c.declareVariants(d)
				}
			case *AliasDecl:
				tn := &TypeName{name: d.Name.Name, pos: d.Name.Pos(), decl: d}
				if c.declareType(d.Name, tn) {
					c.aliases = append(c.aliases, tn)
				}
			}
		}
	}
}

// declareVariants enters the variants of an enum, in source order with
// the other declarations so that a clash is reported at the later one.
// Variants are values: `Square(5)`, `Empty`. They share the namespace of
// functions, so two enums cannot both have a variant Empty.
func (c *checker) declareVariants(d *EnumDecl) {
	for i, vd := range d.Variants {
		v := &Variant{name: vd.Name.Name, pos: vd.Name.Pos(), Enum: d.Type, Index: i}
		d.Type.Variants = append(d.Type.Variants, v)
		c.declareValue(vd.Name, v)
	}
}

func (c *checker) declareType(name *Ident, tn *TypeName) bool {
	if old, ok := c.types[name.Name]; ok {
		c.redeclared(name, old)
		return false
	}
	c.types[name.Name] = tn
	return true
}

func (c *checker) declareValue(name *Ident, obj Object) bool {
	if old, ok := c.values[name.Name]; ok {
		c.redeclared(name, old)
		return false
	}
	c.values[name.Name] = obj
	return true
}

// redeclared reports a second declaration of a name.
func (c *checker) redeclared(name *Ident, old Object) {
	if old.Pos().Line == 0 {
		c.errorf(name.Pos(), CodeSymbol, "%s is a predeclared type and cannot be redeclared", name.Name)
		return
	}
	c.errorf(name.Pos(), CodeSymbol, "%s redeclared; the other declaration is at %s", name.Name, old.Pos())
}

// ── Types ──

// resolveTypes resolves aliases, struct fields and variant payloads.
func (c *checker) resolveTypes() {
	for _, tn := range c.aliases {
		c.resolveAlias(tn)
	}
	for _, st := range c.prog.Structs {
		seen := map[string]*Field{}
		for i, fd := range st.Decl.Fields {
			f := &Field{Name: fd.Name.Name, Pos: fd.Name.Pos(), Type: c.resolveType(fd.Type), Index: i}
			if old, ok := seen[f.Name]; ok {
				c.errorf(f.Pos, CodeSymbol, "field %s redeclared in struct %s; the other declaration is at %s", f.Name, st.Name, old.Pos)
				continue
			}
			seen[f.Name] = f
			st.Fields = append(st.Fields, f)
		}
	}
	for _, d := range c.enums {
		for i, vd := range d.Variants {
			v := d.Type.Variants[i]
			for j, te := range vd.Payload {
				v.Payload = append(v.Payload, &Field{Name: "", Pos: te.Pos(), Type: c.resolveType(te), Index: j})
			}
		}
	}
}

func (c *checker) resolveAlias(tn *TypeName) Type {
	switch tn.Type {
	case nil:
		tn.Type = aliasResolving
		t := c.resolveType(tn.decl.(*AliasDecl).Target)
		if tn.Type == Invalid { // a cycle through this alias was reported
			return Invalid
		}
		tn.Type = t
	case aliasResolving:
		c.errorf(tn.pos, CodeType, "invalid recursive type alias %s", tn.name)
		tn.Type = Invalid
	}
	return tn.Type
}

// resolveType returns the type a type expression denotes, and records it.
func (c *checker) resolveType(te TypeExpr) Type {
	t := c.resolveType1(te)
	te.setResolved(t)
	return t
}

func (c *checker) resolveType1(te TypeExpr) Type {
	switch te := te.(type) {
	case *NamedType:
		if te.Name == "" {
			return Invalid // a syntax error
		}
		tn, ok := c.types[te.Name]
		if !ok {
			if _, isValue := c.values[te.Name]; isValue {
				c.errorf(te.Pos(), CodeType, "%s is not a type", te.Name)
			} else {
				c.errorf(te.Pos(), CodeSymbol, "undefined type %s", te.Name)
			}
			return Invalid
		}
		if tn.Type == nil || tn.Type == aliasResolving {
			return c.resolveAlias(tn)
		}
		return tn.Type
	case *PointerType:
		elem := c.resolveType(te.Elem)
		if isInvalid(elem) {
			return Invalid
		}
		return &Pointer{Elem: elem, Mut: te.Mut}
	case *ArrayType:
		elem := c.resolveType(te.Elem)
		if isInvalid(elem) {
			return Invalid
		}
		return &Array{Elem: elem, Len: te.Len}
	case *FuncTypeExpr:
		ft := &FuncType{Result: c.resolveType(te.Result)}
		ok := !isInvalid(ft.Result)
		for _, p := range te.Params {
			pt := c.resolveType(p)
			ok = ok && !isInvalid(pt)
			ft.Params = append(ft.Params, pt)
		}
		if !ok {
			return Invalid
		}
		return ft
	}
	return Invalid
}

// maxSize bounds the size of a type: far above any Forge memory quota,
// and far below where size arithmetic would overflow.
const maxSize = 1 << 48

// layoutAll computes the layout of every struct and enum, reporting types
// that contain themselves (a struct or enum may refer to itself only
// through a pointer).
func (c *checker) layoutAll() {
	for _, st := range c.prog.Structs {
		c.layout(st)
	}
	for _, en := range c.prog.Enums {
		c.layout(en)
	}
}

// layout computes a type's size and alignment, visiting the structs and
// enums it holds by value first.
func (c *checker) layout(t Type) (size, align uint64) {
	switch t := t.(type) {
	case *Array:
		s, a := c.layout(t.Elem)
		hi, lo := bits.Mul64(s, t.Len)
		if hi != 0 || lo > maxSize {
			return maxSize + 1, a
		}
		return lo, a
	case *Struct:
		if !c.enter(&t.layout, t.Name, t.Decl.Name.Pos()) {
			// Laid out already (or a cycle, reported and given size 0).
			return t.layout.size, t.layout.align
		}
		off, al := uint64(0), uint64(1)
		for _, f := range t.Fields {
			s, a := c.layout(f.Type)
			off = alignUp(off, a)
			f.Offset = off
			off += s
			al = max(al, a)
		}
		c.leave(&t.layout, t.Name, t.Decl.Name.Pos(), alignUp(off, al), al)
		return t.layout.size, t.layout.align
	case *Enum:
		if !c.enter(&t.layout, t.Name, t.Decl.Name.Pos()) {
			// Laid out already (or a cycle, reported and given size 0).
			return t.layout.size, t.layout.align
		}
		tag := uint64(1)
		switch n := len(t.Variants); {
		case n > 1<<16:
			tag = 4
		case n > 1<<8:
			tag = 2
		}
		al := tag
		for _, v := range t.Variants {
			for _, f := range v.Payload {
				_, a := c.layout(f.Type)
				al = max(al, a)
			}
		}
		payload := alignUp(tag, al)
		end := tag
		for _, v := range t.Variants {
			off := payload
			for _, f := range v.Payload {
				s, a := c.layout(f.Type)
				off = alignUp(off, a)
				f.Offset = off
				off += s
			}
			end = max(end, off)
		}
		t.layout.tagSize, t.layout.payloadOff = tag, payload
		c.leave(&t.layout, t.Name, t.Decl.Name.Pos(), alignUp(end, al), al)
		return t.layout.size, t.layout.align
	}
	return sizeAlign(t)
}

// enter starts the layout of a struct or enum; false if it is done (or
// being done: a cycle, reported here).
func (c *checker) enter(l *layout, name string, pos diag.Pos) bool {
	switch l.state {
	case 1:
		c.errorf(pos, CodeType, "invalid recursive type %s: it contains itself (use a pointer)", name)
		l.state, l.size, l.align = 2, 0, 1
		return false
	case 2:
		return false
	}
	l.state = 1
	return true
}

func (c *checker) leave(l *layout, name string, pos diag.Pos, size, align uint64) {
	if l.state == 2 { // a cycle was reported meanwhile
		return
	}
	if size > maxSize {
		c.errorf(pos, CodeType, "type %s is too large", name)
		size = 0
	}
	l.state, l.size, l.align = 2, size, align
}

// signatures resolves every function's parameter and result types.
func (c *checker) signatures() {
	for _, fn := range c.prog.Funcs {
		d := fn.Decl
		fn.Type = &FuncType{Result: c.resolveType(d.Result)}
		seen := map[string]bool{}
		for _, p := range d.Params {
			t := c.resolveType(p.Type)
			fn.Type.Params = append(fn.Type.Params, t)
			v := &Var{name: p.Name.Name, pos: p.Name.Pos(), Type: t, Param: true, Func: fn}
			p.Name.Obj = v
			p.Name.setType(t)
			if seen[v.name] {
				c.errorf(v.pos, CodeSymbol, "parameter %s redeclared", v.name)
			}
			seen[v.name] = true
			fn.Params = append(fn.Params, v)
		}
	}
}

// checkMain checks the entry point, fn main() -> void.
func (c *checker) checkMain(file string) {
	obj, ok := c.values["main"]
	fn, isFunc := obj.(*Func)
	if !ok || !isFunc {
		c.errorf(diag.Pos{File: file}, CodeSymbol, "no fn main() -> void: a program needs an entry point")
		return
	}
	if len(fn.Params) != 0 || fn.Type.Result != Void {
		c.errorf(fn.Decl.Name.Pos(), CodeType, "main must be declared fn main() -> void")
		return
	}
	c.prog.Main = fn
}
