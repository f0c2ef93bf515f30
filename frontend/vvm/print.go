package vvm

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/genesis-toolchain/genesis/diag"
)

// The AST printer writes a file as S-expressions, one form per node, for
// golden tests and debugging. Operators are prefix, so the output shows
// exactly how an expression was grouped: `a or b and c` prints as
// (or a (and b c)). Every statement, clause and placeholder carries its
// position, as @line:col after its head. The output depends only on the
// tree: it is the same on every run.
//
// Once Check has resolved the file, every name says what it denotes after
// a colon: var (a module variable), local, param, capture (a local of an
// enclosing function), input, def, import, module, agent or builtin; a
// call whose def is known statically adds =>line:col of the def; and a
// def or lambda lists its locals and captures.

// Sprint returns the printed form of f.
func Sprint(f *File) string {
	p := &printer{file: f.Name}
	var b strings.Builder
	p.render(&b, p.fileForm(f), 0)
	b.WriteByte('\n')
	return b.String()
}

type printer struct {
	file  string
	owner Node // the function being printed; nil at module scope
}

// sx is an S-expression: an atom (text only) or a list.
type sx struct {
	text   string
	list   []*sx
	isList bool
	breaks bool // printed one element per line
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

// add appends elements to a list.
func (s *sx) add(elems ...*sx) *sx {
	s.list = append(s.list, elems...)
	return s
}

// maxLine is the width beyond which a list prints one element per line.
const maxLine = 100

// flat returns s printed on one line.
func (s *sx) flat() string {
	if !s.isList {
		return s.text
	}
	parts := make([]string, len(s.list))
	for i, e := range s.list {
		parts[i] = e.flat()
	}
	return "(" + strings.Join(parts, " ") + ")"
}

// breaking reports whether s prints on several lines: it is marked so,
// something in it does, or it is too long for one line.
func (s *sx) breaking(indent int) bool {
	if !s.isList {
		return false
	}
	if s.breaks {
		return true
	}
	for _, e := range s.list {
		if e.breaking(indent + 1) {
			return true
		}
	}
	hasList := false
	for _, e := range s.list[1:] {
		hasList = hasList || e.isList
	}
	return hasList && 2*indent+len(s.flat()) > maxLine
}

// render writes s: inline if it does not break, else its head and
// leading atoms on the first line and each other element on a line of
// its own, indented.
func (p *printer) render(b *strings.Builder, s *sx, indent int) {
	if !s.isList {
		b.WriteString(s.text)
		return
	}
	b.WriteByte('(')
	if !s.breaking(indent) {
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
}

// at is a head with a position: head@line:col, with the file when it is
// another than the one printed.
func (p *printer) at(head string, pos diag.Pos) string {
	return head + "@" + p.pos(pos)
}

func (p *printer) pos(pos diag.Pos) string {
	if pos.File != p.file {
		return fmt.Sprintf("%s:%d:%d", pos.File, pos.Line, pos.Col)
	}
	return fmt.Sprintf("%d:%d", pos.Line, pos.Col)
}

func (p *printer) fileForm(f *File) *sx {
	s := blist("file", atom(strconv.Quote(f.Name)))
	return s.add(p.stmts(f.Stmts)...)
}

func (p *printer) stmts(list []Stmt) []*sx {
	out := make([]*sx, 0, len(list))
	for _, s := range list {
		out = append(out, p.stmt(s))
	}
	return out
}

// body is a statement list as one form.
func (p *printer) body(head string, pos diag.Pos, list []Stmt) *sx {
	return blist(p.at(head, pos), p.stmts(list)...)
}

func (p *printer) stmt(s Stmt) *sx {
	switch s := s.(type) {
	case *SkillImport:
		return list(p.at("skill-import", s.ImportPos), p.str(s.Skill), p.str(s.Source))
	case *ImportStmt:
		switch s.Kind {
		case ImportModule:
			return list(p.at("import-module", s.FromPos), p.str(s.Path), list("as", p.ident(s.Alias)))
		case ImportAgent:
			if s.Alias == nil {
				return list(p.at("import-agent", s.FromPos), p.str(s.Path), p.ident(s.Name))
			}
			return list(p.at("import-agent", s.FromPos), p.str(s.Path), atom(s.Name.Name), list("as", p.ident(s.Alias)))
		}
		if s.Alias == nil {
			return list(p.at("import", s.FromPos), p.str(s.Path), p.ident(s.Name))
		}
		return list(p.at("import", s.FromPos), p.str(s.Path), atom(s.Name.Name), list("as", p.ident(s.Alias)))
	case *ExportStmt:
		if s.Agent {
			return list(p.at("export-agent", s.ExportPos), p.ident(s.Name))
		}
		if s.Value != s.Name {
			return list(p.at("export", s.ExportPos), atom(s.Name.Name), p.ident(s.Value))
		}
		return list(p.at("export", s.ExportPos), p.ident(s.Name))
	case *AgentStmt:
		return list(p.at("agent", s.AgentPos), p.ident(s.Name)).add(p.kwargs(s.Config)...)
	case *InputStmt:
		f := list(p.at("input", s.InputPos), p.ident(s.Name))
		if s.Doc != nil {
			f.add(list("doc", p.str(s.Doc)))
		}
		if s.Default != nil {
			f.add(list("default", p.expr(s.Default)))
		}
		return f
	case *FuncDecl:
		return p.funcDecl(s)
	case *ReturnStmt:
		f := list(p.at("return", s.ReturnPos))
		if s.Value != nil {
			f.add(p.expr(s.Value))
		}
		return f
	case *RaiseStmt:
		f := list(p.at("raise", s.RaisePos))
		if s.Msg != nil {
			f.add(p.str(s.Msg))
		}
		return f
	case *PassStmt:
		return list(p.at("pass", s.PassPos))
	case *BreakStmt:
		return list(p.at("break", s.BreakPos))
	case *ContinueStmt:
		return list(p.at("continue", s.ContinuePos))
	case *AssignStmt:
		return list(p.at("assign", s.Pos()), p.ident(s.Target), p.expr(s.Value))
	case *ExprStmt:
		return list(p.at("expr", s.Pos()), p.expr(s.X))
	case *IfStmt:
		f := blist(p.at("if", s.IfPos), p.expr(s.Cond), blist("then", p.stmts(s.Then)...))
		for _, e := range s.Elifs {
			f.add(blist(p.at("elif", e.ElifPos), p.expr(e.Cond)).add(p.stmts(e.Body)...))
		}
		if s.Else != nil {
			f.add(p.body("else", s.ElsePos, s.Else))
		}
		return f
	case *WhileStmt:
		return blist(p.at("while", s.WhilePos), p.expr(s.Cond)).add(p.stmts(s.Body)...)
	case *ForStmt:
		return blist(p.at("for", s.ForPos), p.ident(s.Var), p.expr(s.Iter)).add(p.stmts(s.Body)...)
	case *MatchStmt:
		f := blist(p.at("match", s.MatchPos), p.expr(s.Subject))
		for _, c := range s.Cases {
			f.add(blist(p.at("case", c.CasePos), p.pattern(c.Pattern)).add(p.stmts(c.Body)...))
		}
		return f
	case *ChooseStmt:
		f := blist(p.at("choose", s.ChoosePos), p.expr(s.Subject), list("by", p.template(s.Criterion)), list("as", p.ident(s.As)))
		for _, o := range s.Options {
			f.add(blist(p.at("option", o.OptionPos), p.str(o.Label)).add(p.stmts(o.Body)...))
		}
		return f
	case *ConstrainStmt:
		f := blist(p.at("constrain", s.ConstrainPos), p.ident(s.Target)).add(p.kwargs(s.Options)...)
		for _, r := range s.Requires {
			f.add(list(p.at("require", r.RequirePos), p.template(r.Criterion)))
		}
		return f
	case *WithInputStmt:
		return blist(p.at("with-input", s.WithPos), p.expr(s.Input)).add(p.stmts(s.Body)...)
	case *TryStmt:
		f := blist(p.at("try", s.TryPos), blist("body", p.stmts(s.Body)...))
		if e := s.Except; e != nil {
			x := blist(p.at("except", e.ExceptPos))
			if e.Var != nil {
				x.add(list("as", p.ident(e.Var)))
			}
			f.add(x.add(p.stmts(e.Body)...))
		}
		if fin := s.Finally; fin != nil {
			f.add(p.body("finally", fin.FinallyPos, fin.Body))
		}
		return f
	case *ParallelStmt:
		f := blist(p.at("parallel", s.ParallelPos), list("join", atom(strconv.Quote(s.Join))))
		if s.Count != 0 {
			f.add(list("count", atom(strconv.Itoa(s.Count))))
		}
		f.add(list("on_fail", atom(strconv.Quote(s.OnFail))), list("as", p.ident(s.As)))
		for _, b := range s.Branches {
			f.add(list(p.at("branch", b.Pos()), atom(b.Target.Name), p.expr(b.Value)))
		}
		return f
	}
	return atom(fmt.Sprintf("?%T", s))
}

func (p *printer) funcDecl(s *FuncDecl) *sx {
	head := "def"
	if s.Hoisted {
		head = "def-hoisted"
	}
	f := blist(p.at(head, s.DefPos), p.ident(s.Name), p.params(s.Params))
	outer := p.owner
	p.owner = s
	f.add(p.scopeForms(s.Scope, s.Captures)...)
	f.add(p.stmts(s.Body)...)
	p.owner = outer
	return f
}

func (p *printer) params(params []*Ident) *sx {
	f := list("params")
	for _, id := range params {
		f.add(atom(id.Name))
	}
	return f
}

// scopeForms lists a resolved function's locals (beyond its parameters)
// and captures.
func (p *printer) scopeForms(sc *Scope, captures []*Symbol) []*sx {
	if sc == nil {
		return nil
	}
	var out []*sx
	locals := list("locals")
	for _, sym := range sc.Syms {
		if sym.Kind != SymParam {
			locals.add(atom(sym.Name))
		}
	}
	if len(locals.list) > 1 {
		out = append(out, locals)
	}
	if len(captures) > 0 {
		c := list("captures")
		for _, sym := range captures {
			c.add(atom(sym.Name))
		}
		out = append(out, c)
	}
	return out
}

func (p *printer) pattern(pat Pattern) *sx {
	switch pat := pat.(type) {
	case *WildcardPattern:
		return atom("_")
	case *ErrorPattern:
		switch {
		case pat.Kind != nil:
			return list("error", list("kind", p.str(pat.Kind)))
		case pat.Bind != nil:
			return list("error", list("bind", p.ident(pat.Bind)))
		}
		return list("error", atom("_"))
	case *PredPattern:
		return list("pred", p.template(pat.Criterion))
	}
	return atom(fmt.Sprintf("?%T", pat))
}

func (p *printer) kwargs(kws []*KwArg) []*sx {
	out := make([]*sx, 0, len(kws))
	for _, kw := range kws {
		out = append(out, list(kw.Name, p.expr(kw.Value)))
	}
	return out
}

func (p *printer) str(s *StringLit) *sx {
	if s == nil {
		return atom("?")
	}
	return atom(strconv.Quote(s.Value))
}

// ident prints a name, with what it denotes once resolved.
func (p *printer) ident(id *Ident) *sx {
	if id == nil {
		return atom("?")
	}
	if id.Sym == nil {
		return atom(id.Name)
	}
	return atom(id.Name + ":" + p.kind(id.Sym))
}

// kind names what sym is, seen from the function being printed. A def
// that is also assigned is a variable.
func (p *printer) kind(sym *Symbol) string {
	variable := sym.Kind == SymVar || sym.Kind == SymFunc && sym.Reassigned
	switch {
	case variable && sym.Scope.Owner == nil:
		return "var"
	case variable && sym.Scope.Owner == p.owner:
		return "local"
	case (variable || sym.Kind == SymParam || sym.Kind == SymFunc) && sym.Scope.Owner != nil && sym.Scope.Owner != p.owner:
		return "capture"
	}
	return sym.Kind.String()
}

func (p *printer) expr(e Expr) *sx {
	switch e := e.(type) {
	case *BadExpr:
		return atom("BAD")
	case *Ident:
		return p.ident(e)
	case *ItExpr:
		return atom("it")
	case *UnitLit:
		return atom("()")
	case *BoolLit:
		return atom(strconv.FormatBool(e.Value))
	case *NumberLit:
		return atom(e.Text)
	case *StringLit:
		return p.str(e)
	case *ListLit:
		f := list("list")
		for _, x := range e.Elems {
			f.add(p.expr(x))
		}
		return f
	case *ObjectLit:
		f := list("object")
		for _, fl := range e.Fields {
			key := fl.Key
			if !isIdent(key) {
				key = strconv.Quote(key)
			}
			f.add(list(key, p.expr(fl.Value)))
		}
		return f
	case *UnaryExpr:
		return list(e.Op.String(), p.expr(e.X))
	case *BinaryExpr:
		return list(e.Op.String(), p.expr(e.X), p.expr(e.Y))
	case *CallExpr:
		fun := p.ident(e.Fun)
		if e.Func != nil {
			fun.text += "=>" + p.pos(e.Func.DefPos)
		}
		f := list("call", fun)
		for _, a := range e.Args {
			f.add(p.expr(a))
		}
		return f.add(p.kwargs(e.Kwargs)...)
	case *AgentCall:
		f := list("agent-call", p.agentRef(e.Agent), p.template(e.Template))
		if e.Input != nil {
			f.add(list("input", p.expr(e.Input)))
		}
		return f.add(p.kwargs(e.Options)...)
	case *SemPred:
		f := list("pred", p.template(e.Criterion))
		if e.Input != nil {
			f.add(list("input", p.expr(e.Input)))
		}
		return f
	case *MemberExpr:
		return list(".", p.expr(e.X), atom(e.Name))
	case *IndexExpr:
		return list("index", p.expr(e.X), p.expr(e.Index))
	case *WithExpr:
		return list("with", p.expr(e.X)).add(p.kwargs(e.Args)...)
	case *LambdaExpr:
		f := list("lambda", p.params(e.Params))
		outer := p.owner
		p.owner = e
		f.add(p.scopeForms(e.Scope, e.Captures)...)
		f.add(p.expr(e.Body))
		p.owner = outer
		return f
	}
	return atom(fmt.Sprintf("?%T", e))
}

func (p *printer) agentRef(r *AgentRef) *sx {
	if r.Name == nil {
		return list("@inline").add(p.kwargs(r.Inline)...)
	}
	name := p.ident(r.Name)
	name.text = "@" + name.text
	if !r.HasWith {
		return name
	}
	return list(name.text, list("with").add(p.kwargs(r.With)...))
}

// template prints a template part by part: literal text quoted, {} as
// (input), {a.b} as (name a.b), each with its position.
func (p *printer) template(t *Template) *sx {
	if t == nil {
		return atom("?")
	}
	f := list("template")
	for _, part := range t.Parts {
		switch part.Kind {
		case TextPart:
			f.add(atom(strconv.Quote(part.Text)))
		case InputPart:
			f.add(list(p.at("input", part.At)))
		case NamePart:
			n := list(p.at("name", part.At), p.ident(part.Name))
			for _, m := range part.Path {
				n.add(atom("." + m))
			}
			f.add(n)
		}
	}
	return f
}
