package genesis

import (
	"fmt"
	"strconv"
	"strings"
)

// The AST printer writes a file as S-expressions, one form per node, for
// golden tests and debugging. Operators are prefix, so the output shows
// exactly how an expression was grouped: `a & b == c` prints as
// (== (& a b) c). With types, every expression is followed by
// :its-type, and every name that resolves to a declaration other than a
// variable says what it is (fn, variant).

// Sprint returns the printed form of f. With types set, expressions carry
// the types Check gave them.
func Sprint(f *File, types bool) string {
	p := &printer{types: types}
	var b strings.Builder
	p.render(&b, p.file(f), 0)
	b.WriteByte('\n')
	return b.String()
}

type printer struct {
	types bool
}

// sx is an S-expression: an atom (text only) or a list, followed by an
// optional suffix (the type).
type sx struct {
	text   string
	list   []*sx
	isList bool
	breaks bool // printed one element per line
	suffix string
}

func atom(s string) *sx { return &sx{text: s} }

func list(head string, elems ...*sx) *sx {
	return &sx{isList: true, list: append([]*sx{atom(head)}, elems...)}
}

func blist(head string, elems ...*sx) *sx {
	s := list(head, elems...)
	s.breaks = true
	return s
}

// breaking reports whether s or anything in it prints on several lines.
func (s *sx) breaking() bool {
	if s.breaks {
		return true
	}
	for _, e := range s.list {
		if e.breaking() {
			return true
		}
	}
	return false
}

// render writes s: inline if nothing in it breaks, else its head and
// leading atoms on the first line and each other element on a line of
// its own, indented.
func (p *printer) render(b *strings.Builder, s *sx, indent int) {
	if !s.isList {
		b.WriteString(s.text)
		b.WriteString(s.suffix)
		return
	}
	b.WriteByte('(')
	if !s.breaking() {
		for i, e := range s.list {
			if i > 0 {
				b.WriteByte(' ')
			}
			p.render(b, e, indent)
		}
	} else {
		i := 0
		for ; i < len(s.list) && !s.list[i].isList; i++ {
			if i > 0 {
				b.WriteByte(' ')
			}
			p.render(b, s.list[i], indent)
		}
		for ; i < len(s.list); i++ {
			b.WriteByte('\n')
			b.WriteString(strings.Repeat("  ", indent+1))
			p.render(b, s.list[i], indent+1)
		}
	}
	b.WriteByte(')')
	b.WriteString(s.suffix)
}

func (p *printer) file(f *File) *sx {
	s := blist("file", atom(strconv.Quote(f.Name)))
	for _, d := range f.Decls {
		s.list = append(s.list, p.decl(d))
	}
	return s
}

func (p *printer) decl(d Decl) *sx {
	switch d := d.(type) {
	case *FuncDecl:
		params := list("params")
		for _, pa := range d.Params {
			params.list = append(params.list, list(pa.Name.Name, p.typ(pa.Type)))
		}
		return blist("fn", atom(d.Name.Name), params, p.typ(d.Result), p.expr(d.Body))
	case *StructDecl:
		s := blist("struct", atom(d.Name.Name))
		for _, f := range d.Fields {
			s.list = append(s.list, list(f.Name.Name, p.typ(f.Type)))
		}
		return s
	case *EnumDecl:
		s := blist("enum", atom(d.Name.Name))
		for _, v := range d.Variants {
			if len(v.Payload) == 0 {
				s.list = append(s.list, atom(v.Name.Name))
				continue
			}
			vs := list(v.Name.Name)
			for _, t := range v.Payload {
				vs.list = append(vs.list, p.typ(t))
			}
			s.list = append(s.list, vs)
		}
		return s
	case *AliasDecl:
		return list("type", atom(d.Name.Name), p.typ(d.Target))
	}
	return atom("?decl")
}

// typ prints a type as written.
func (p *printer) typ(t TypeExpr) *sx {
	switch t := t.(type) {
	case *NamedType:
		if t.Name == "" {
			return atom("?type")
		}
		return atom(t.Name)
	case *PointerType:
		if t.Mut {
			return list("*mut", p.typ(t.Elem))
		}
		return list("*", p.typ(t.Elem))
	case *ArrayType:
		return list("array", p.typ(t.Elem), atom(strconv.FormatUint(t.Len, 10)))
	case *FuncTypeExpr:
		s := list("*fn")
		for _, pt := range t.Params {
			s.list = append(s.list, p.typ(pt))
		}
		s.list = append(s.list, atom("->"), p.typ(t.Result))
		return s
	}
	return atom("?type")
}

func (p *printer) stmt(s Stmt) *sx {
	switch s := s.(type) {
	case *LetStmt:
		head := "let"
		if s.Mut {
			head = "let-mut"
		}
		return list(head, atom(s.Name.Name), p.typ(s.Type), p.expr(s.Value))
	case *AssignStmt:
		return list("=", p.expr(s.Target), p.expr(s.Value))
	case *ExprStmt:
		return p.expr(s.X)
	case *WhileStmt:
		return list("while", p.expr(s.Cond), p.expr(s.Body))
	case *ReturnStmt:
		if s.Value == nil {
			return list("return")
		}
		return list("return", p.expr(s.Value))
	case *BranchStmt:
		if s.Continue {
			return list("continue")
		}
		return list("break")
	case *AsmStmt:
		a := blist("asm")
		for _, bd := range s.Bindings {
			reg := atom("r" + strconv.Itoa(int(bd.Reg)))
			if bd.Out {
				a.list = append(a.list, list("out", p.expr(bd.Value), reg))
			} else {
				a.list = append(a.list, list("in", reg, p.expr(bd.Value)))
			}
		}
		for _, in := range s.Insts {
			is := list(in.Mnemonic)
			for _, op := range in.Operands {
				switch op.Kind {
				case AsmReg:
					is.list = append(is.list, atom("r"+strconv.Itoa(int(op.Reg))))
				case AsmImm:
					is.list = append(is.list, atom(strconv.FormatInt(int64(op.Imm), 10)))
				case AsmName:
					is.list = append(is.list, p.expr(op.Name))
				}
			}
			a.list = append(a.list, is)
		}
		return a
	}
	return atom("?stmt")
}

func (p *printer) expr(e Expr) *sx {
	s := p.expr1(e)
	if p.types && e.Type() != nil {
		s.suffix = ":" + e.Type().String()
	}
	return s
}

func (p *printer) expr1(e Expr) *sx {
	switch e := e.(type) {
	case *BadExpr:
		return atom("?bad")
	case *IntLit:
		return atom(e.Text)
	case *ByteLit:
		return atom(fmt.Sprintf("0y%02X", e.Value))
	case *BoolLit:
		return atom(strconv.FormatBool(e.Value))
	case *StringLit:
		return atom(strconv.Quote(string(e.Value)))
	case *Ident:
		if p.types {
			switch e.Obj.(type) {
			case *Func:
				return atom("fn:" + e.Name)
			case *Variant:
				return atom("variant:" + e.Name)
			}
		}
		return atom(e.Name)
	case *UnaryExpr:
		op := e.Op.String()
		if e.Op == OpNeg {
			op = "neg"
		} else if e.Op == OpDeref {
			op = "deref"
		}
		return list(op, p.expr(e.X))
	case *BinaryExpr:
		return list(e.Op.String(), p.expr(e.X), p.expr(e.Y))
	case *CastExpr:
		return list("as", p.expr(e.X), p.typ(e.To))
	case *CallExpr:
		s := list("call", p.expr(e.Fun))
		for _, a := range e.Args {
			s.list = append(s.list, p.expr(a))
		}
		return s
	case *IndexExpr:
		return list("index", p.expr(e.X), p.expr(e.Index))
	case *FieldExpr:
		if e.Arrow {
			return list("->", p.expr(e.X), atom(e.Name.Name))
		}
		return list(".", p.expr(e.X), atom(e.Name.Name))
	case *ArrayLit:
		return list("array-of", p.expr(e.Elem), atom(strconv.FormatUint(e.Len, 10)))
	case *StructLit:
		s := list("struct-lit", atom(e.Name.Name))
		for _, f := range e.Fields {
			s.list = append(s.list, list(f.Name.Name, p.expr(f.Value)))
		}
		return s
	case *BlockExpr:
		s := blist("block")
		for _, st := range e.Stmts {
			s.list = append(s.list, p.stmt(st))
		}
		if e.Tail != nil {
			s.list = append(s.list, list("tail", p.expr(e.Tail)))
		}
		return s
	case *IfExpr:
		s := list("if", p.expr(e.Cond), p.expr(e.Then))
		if e.Else != nil {
			s.list = append(s.list, p.expr(e.Else))
		}
		return s
	case *MatchExpr:
		s := blist("match", p.expr(e.X))
		for _, arm := range e.Arms {
			s.list = append(s.list, list("=>", p.pattern(arm.Pattern), p.expr(arm.Body)))
		}
		return s
	}
	return atom("?expr")
}

func (p *printer) pattern(pat Pattern) *sx {
	switch pat := pat.(type) {
	case *WildcardPattern:
		return atom("_")
	case *IntPattern:
		return atom(pat.Text)
	case *BoolPattern:
		return atom(strconv.FormatBool(pat.Value))
	case *VariantPattern:
		if len(pat.Bindings) == 0 {
			return atom(pat.Name.Name)
		}
		s := list(pat.Name.Name)
		for _, b := range pat.Bindings {
			s.list = append(s.list, p.expr(b))
		}
		return s
	}
	return atom("?pattern")
}
