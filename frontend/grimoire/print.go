package grimoire

import (
	"strconv"
	"strings"
)

// The AST printer writes a spell as S-expressions, one form per node, for
// golden tests and debugging. Operators are prefix, so the output shows
// exactly how an expression was grouped: `a + b * c` prints as
// (+ a (* b c)). Positions and the syntax the spell was written in are
// not printed, so the same spell in both syntaxes prints the same. Of
// what CheckSpell sets, only the values of unit amounts are printed:
// (unit 1.5 USDC 1500000).
// Sections print in a fixed order (version, description, assets, params,
// limits, venues, state, skills, advisors, guards, imports, blocks,
// triggers), items in source order; nothing is printed from a map, so the
// output is deterministic.

// Sprint returns the printed form of s.
func Sprint(s *Spell) string {
	var b strings.Builder
	render(&b, printSpell(s), 0)
	b.WriteByte('\n')
	return b.String()
}

// sx is an S-expression: an atom or a list.
type sx struct {
	text   string
	list   []*sx
	isList bool
	breaks bool // always printed one element per line
}

func atom(s string) *sx { return &sx{text: s} }

// list makes a list of head and the elements that are not nil.
func list(head string, elems ...*sx) *sx {
	return (&sx{isList: true, list: []*sx{atom(head)}}).add(elems...)
}

// blist is a list printed one element per line: a spell, a section, a
// statement with a body.
func blist(head string, elems ...*sx) *sx {
	s := list(head, elems...)
	s.breaks = true
	return s
}

// add appends the elements that are not nil.
func (s *sx) add(elems ...*sx) *sx {
	for _, e := range elems {
		if e != nil {
			s.list = append(s.list, e)
		}
	}
	return s
}

// maxWidth is the width past which a list is broken over lines.
const maxWidth = 100

// render writes s at the given indentation: on one line if nothing in it
// must break and it fits, else its head and leading atoms on the first
// line and each other element on a line of its own, indented.
func render(b *strings.Builder, s *sx, indent int) {
	if !s.isList {
		b.WriteString(s.text)
		return
	}
	if flat, ok := inline(s); ok && 2*indent+len(flat) <= maxWidth {
		b.WriteString(flat)
		return
	}
	b.WriteByte('(')
	i := 0
	for ; i < len(s.list) && !s.list[i].isList; i++ {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(s.list[i].text)
	}
	for ; i < len(s.list); i++ {
		b.WriteByte('\n')
		b.WriteString(strings.Repeat("  ", indent+1))
		render(b, s.list[i], indent+1)
	}
	b.WriteByte(')')
}

// inline is s on one line; false if something in it must break.
func inline(s *sx) (string, bool) {
	if !s.isList {
		return s.text, true
	}
	if s.breaks {
		return "", false
	}
	parts := make([]string, len(s.list))
	for i, e := range s.list {
		p, ok := inline(e)
		if !ok {
			return "", false
		}
		parts[i] = p
	}
	return "(" + strings.Join(parts, " ") + ")", true
}

func printSpell(s *Spell) *sx {
	name := "?"
	if s.Name != nil {
		name = s.Name.Name
	}
	out := blist("spell", atom(name))
	if s.Version != nil {
		out.add(list("version", printExpr(s.Version.Value)))
	}
	if s.Description != nil {
		out.add(list("description", printExpr(s.Description.Value)))
	}
	out.add(
		printSection(s.Assets, printAsset),
		printSection(s.Params, printParam),
		printSection(s.Limits, func(l *Limit) *sx { return list(l.Name.Name, printExpr(l.Value)) }),
		printSection(s.Venues, printVenue),
		printSection(s.State, func(v *StateVar) *sx { return list(v.Scope.String(), atom(v.Name.Name), printExpr(v.Init)) }),
		printSection(s.Skills, printSkill),
		printSection(s.Advisors, printAdvisor),
		printSection(s.Guards, printGuard),
	)
	for _, imp := range s.Imports {
		i := list("import", atom(strconv.Quote(imp.Path.Value)))
		if imp.Alias != nil {
			i.add(atom("as"), atom(imp.Alias.Name))
		}
		out.add(i)
	}
	for _, blk := range s.Blocks {
		params := list("params")
		for _, p := range blk.Params {
			params.add(atom(p.Name))
		}
		out.add(blist("block", atom(blk.Name.Name), params).add(printStmts(blk.Body)...))
	}
	for _, t := range s.Triggers {
		out.add(printTrigger(t))
	}
	return out
}

// printSection prints a section: its name and its items, one per line;
// nothing when the section is absent.
func printSection[T Node](sec *Section[T], item func(T) *sx) *sx {
	if sec == nil {
		return nil
	}
	out := blist(sec.Header.Name)
	if len(sec.Items) == 0 {
		out.breaks = false
	}
	for _, it := range sec.Items {
		out.add(item(it))
	}
	return out
}

// field prints `(name value)` when x is present.
func field(name string, x Expr) *sx {
	if isNil(x) {
		return nil
	}
	return list(name, printExpr(x))
}

// identField prints `(name id)` when id is present.
func identField(name string, id *Ident) *sx {
	if id == nil {
		return nil
	}
	return list(name, atom(id.Name))
}

// printEntries prints entries as `(key value)` forms under head; nothing
// when there are none.
func printEntries(head string, es []*Entry) *sx {
	if len(es) == 0 {
		return nil
	}
	out := list(head)
	for _, e := range es {
		out.add(printEntry(e))
	}
	return out
}

func printEntry(e *Entry) *sx {
	out := list(keyText(e.Key.Name), printExpr(e.Value))
	if len(e.With) > 0 {
		out.add(printArgs("with", e.With))
	}
	return out
}

// keyText is a key as printed: bare when it is an identifier, else
// quoted.
func keyText(k string) string {
	if isIdent(k) {
		return k
	}
	return strconv.Quote(k)
}

func isIdent(s string) bool {
	if s == "" {
		return false
	}
	for i, r := range s {
		letter := r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z'
		if !letter && (i == 0 || r < '0' || r > '9') {
			return false
		}
	}
	return true
}

func printAsset(a *Asset) *sx {
	return list("asset", atom(a.Name.Name)).add(
		field("chain", a.Chain), field("address", a.Address), field("decimals", a.Decimals),
		printEntries("extra", a.Extra))
}

func printParam(p *Param) *sx {
	if !p.Typed {
		return list("param", atom(p.Name.Name), printExpr(p.Default))
	}
	return list("param", atom(p.Name.Name), atom("typed")).add(
		identField("type", p.Type), identField("asset", p.Asset), field("default", p.Default),
		field("min", p.Min), field("max", p.Max), printEntries("extra", p.Extra))
}

func printVenue(v *Venue) *sx {
	out := list("venue", atom(v.Name.Name))
	if v.Group {
		g := list("group")
		for _, a := range v.Adapters {
			g.add(atom("@" + a.Name))
		}
		return out.add(g)
	}
	for _, a := range v.Adapters {
		out.add(atom("@" + a.Name))
	}
	return out
}

func printSkill(s *Skill) *sx {
	out := list("skill", atom(s.Name.Name)).add(identField("type", s.Type))
	if len(s.Adapters) > 0 {
		as := list("adapters")
		for _, a := range s.Adapters {
			as.add(atom(a.Name))
		}
		out.add(as)
	}
	if len(s.Defaults) > 0 {
		out.add(printArgs("default_constraints", s.Defaults))
	}
	return out.add(printEntries("extra", s.Extra))
}

func printAdvisor(a *Advisor) *sx {
	ws := func(name string, w []*Word) *sx {
		if len(w) == 0 {
			return nil
		}
		out := list(name)
		for _, x := range w {
			out.add(atom(strconv.Quote(x.Text)))
		}
		return out
	}
	return list("advisor", atom(a.Name.Name)).add(
		field("model", a.Model), field("system_prompt", a.SystemPrompt),
		ws("skills", a.Skills), ws("allowed_tools", a.AllowedTools), ws("mcp", a.MCP),
		field("timeout", a.Timeout), field("fallback", a.Fallback),
		field("max_per_run", a.MaxPerRun), field("max_per_hour", a.MaxPerHour),
		printEntries("extra", a.Extra))
}

func printGuard(g *Guard) *sx {
	out := list("guard", atom(g.Name.Name), printExpr(g.Check))
	if len(g.Meta) > 0 {
		out.add(printArgs("with", g.Meta))
	}
	return out
}

func printTrigger(t *Trigger) *sx {
	out := blist("on", atom(t.Kind.String()))
	switch t.Kind {
	case Cron:
		out.add(printExpr(t.Cron))
	case Condition:
		out.add(printExpr(t.Cond), field("every", t.Every))
	case Event:
		out.add(printExpr(t.Event), field("where", t.Where))
	}
	return out.add(printStmts(t.Body)...)
}

// printArgs prints arguments under head: `name=value` as (name value), a
// positional one as its value.
func printArgs(head string, args []*Arg) *sx {
	return list(head, argForms(args)...)
}

func argForms(args []*Arg) []*sx {
	out := make([]*sx, len(args))
	for i, a := range args {
		if a.Name != nil {
			out[i] = list(keyText(a.Name.Name), printExpr(a.Value))
		} else {
			out[i] = printExpr(a.Value)
		}
	}
	return out
}

// body prints a statement list under head, one statement per line.
func body(head string, ss []Stmt) *sx {
	return blist(head).add(printStmts(ss)...)
}

func printStmts(ss []Stmt) []*sx {
	out := make([]*sx, len(ss))
	for i, s := range ss {
		out[i] = printStmt(s)
	}
	return out
}

func printStmt(s Stmt) *sx {
	switch s := s.(type) {
	case *AssignStmt:
		return list("=", atom(s.Target.Name), printExpr(s.Value))
	case *ActionStmt:
		out := list("action", atom(s.Venue.Name+"."+s.Action.Name), printArgs("args", s.Args))
		out.add(identField("bind", s.Target), identField("using", s.Using))
		if len(s.With) > 0 {
			out.add(printArgs("with", s.With))
		}
		return out
	case *AdviseStmt:
		return blist("advise", atom(s.Target.Name), atom(s.Advisor.Name), printExpr(s.Prompt)).add(
			printSchema("output", s.Output), field("timeout", s.Timeout), field("fallback", s.Fallback),
			printEntries("context", s.Context), identField("within", s.Within),
			identField("on_violation", s.OnViolation), printEntries("extra", s.Extra))
	case *PipelineStmt:
		out := blist("pipeline").add(identField("bind", s.Target), printExpr(s.Source))
		for _, st := range s.Stages {
			out.add(blist("stage", atom(st.Op.Name)).add(
				field("arg", st.Arg), field("by", st.By), identField("order", st.Order)).add(printStmts(st.Body)...))
		}
		return out
	case *IfStmt:
		out := blist("if", printExpr(s.Cond), body("then", s.Then))
		for _, e := range s.Elifs {
			out.add(blist("elif", printExpr(e.Cond)).add(printStmts(e.Body)...))
		}
		if s.ElsePos.Line != 0 {
			out.add(body("else", s.Else))
		}
		return out
	case *ForStmt:
		return blist("for", atom(s.Var.Name), printExpr(s.Iter)).add(printStmts(s.Body)...)
	case *RepeatStmt:
		return blist("repeat", printExpr(s.Count)).add(printStmts(s.Body)...)
	case *LoopStmt:
		return blist("loop-until", printExpr(s.Until), field("max", s.Max)).add(printStmts(s.Body)...)
	case *TryStmt:
		out := blist("try", body("body", s.Body))
		for _, c := range s.Catches {
			e := atom("*")
			if c.Error != nil {
				e = atom(c.Error.Name)
			}
			cc := blist("catch", e)
			if r := c.Retry; r != nil {
				cc.add(list("retry").add(field("max_attempts", r.MaxAttempts), identField("backoff", r.Backoff),
					field("backoff_base", r.BackoffBase), field("max_backoff", r.MaxBackoff), printEntries("extra", r.Extra)))
			}
			cc.add(identField("action", c.Action), printEntries("extra", c.Extra))
			out.add(cc.add(printStmts(c.Body)...))
		}
		if s.FinallyPos.Line != 0 {
			out.add(body("finally", s.Finally))
		}
		return out
	case *ParallelStmt:
		out := blist("parallel").add(identField("join", s.Join), identField("on_fail", s.OnFail),
			field("metric", s.Metric), identField("order", s.Order), field("count", s.Count))
		for _, br := range s.Branches {
			out.add(body(br.Name.Name, br.Body))
		}
		return out
	case *AtomicStmt:
		out := blist("atomic")
		if s.Mode != nil {
			out.add(atom(s.Mode.Name))
		}
		return out.add(printStmts(s.Body)...)
	case *EmitStmt:
		return list("emit", atom(s.Event.Name)).add(argForms(s.Args)...)
	case *HaltStmt:
		if s.Reason == nil {
			return list("halt")
		}
		return list("halt", printExpr(s.Reason))
	case *WaitStmt:
		return list("wait", printExpr(s.Duration))
	case *PassStmt:
		return list("pass")
	case *DoStmt:
		path := make([]string, len(s.Path))
		for i, p := range s.Path {
			path[i] = p.Name
		}
		return list("do", atom(strings.Join(path, "."))).add(argForms(s.Args)...)
	}
	return atom("?stmt")
}

func printSchema(head string, s *Schema) *sx {
	if s == nil {
		return nil
	}
	t := s.Type
	if t == "" {
		t = "?"
	}
	out := list(head, atom(t))
	if len(s.Values) > 0 {
		vs := list("values")
		for _, v := range s.Values {
			vs.add(printExpr(v))
		}
		out.add(vs)
	}
	out.add(field("min", s.Min), field("max", s.Max), field("min_length", s.MinLength),
		field("max_length", s.MaxLength), field("pattern", s.Pattern))
	if len(s.Fields) > 0 {
		fs := blist("fields")
		for _, f := range s.Fields {
			fs.add(printSchema(f.Name.Name, f.Schema))
		}
		out.add(fs)
	}
	out.add(printSchema("items", s.Items), printEntries("extra", s.Extra))
	return out
}

// printExpr prints an expression; "?" for a hole.
func printExpr(x Expr) *sx {
	if isNil(x) {
		return atom("?")
	}
	switch x := x.(type) {
	case *Ident:
		return atom(x.Name)
	case *NumberLit:
		switch x.Kind {
		case Percent:
			return list("percent", atom(x.Raw), atom(decimal(x.Value)))
		case Duration:
			return list("duration", atom(x.Raw), atom(decimal(x.Value)))
		}
		return atom(decimal(x.Value))
	case *UnitLit:
		u := list("unit", atom(decimal(x.Amount)), atom(x.Unit.Name))
		if x.Value != nil {
			u.add(atom(decimal(x.Value))) // the value Check converted it to
		}
		return u
	case *StringLit:
		return atom(strconv.Quote(x.Value))
	case *BoolLit:
		return atom(strconv.FormatBool(x.Value))
	case *AddressLit:
		return atom(x.Value)
	case *VenueRef:
		return atom("@" + x.Name)
	case *Advisory:
		out := list("advisory", atom(strconv.Quote(x.Prompt)))
		if x.Via != nil {
			out.add(atom("via"), atom(x.Via.Name))
		}
		return out
	case *ListLit:
		out := list("list")
		for _, e := range x.Elems {
			out.add(printExpr(e))
		}
		return out
	case *ObjectLit:
		out := list("object")
		for _, e := range x.Entries {
			out.add(printEntry(e))
		}
		return out
	case *UnaryExpr:
		return list(x.Op, printExpr(x.X))
	case *BinaryExpr:
		return list(x.Op, printExpr(x.X), printExpr(x.Y))
	case *CondExpr:
		return list("?", printExpr(x.Cond), printExpr(x.Then), printExpr(x.Else))
	case *MemberExpr:
		if path, ok := dotted(x); ok {
			return atom(path)
		}
		return list(".", printExpr(x.X), atom(x.Name.Name))
	case *IndexExpr:
		return list("index", printExpr(x.X), printExpr(x.Index))
	case *CallExpr:
		return list("call", atom(x.Fun.Name)).add(argForms(x.Args)...)
	}
	return atom("?expr")
}

// dotted is a member chain on a name as one dotted atom, `a.b.c`; false
// for any other member expression.
func dotted(x Expr) (string, bool) {
	switch x := x.(type) {
	case *Ident:
		return x.Name, true
	case *MemberExpr:
		if l, ok := dotted(x.X); ok {
			return l + "." + x.Name.Name, true
		}
	}
	return "", false
}
