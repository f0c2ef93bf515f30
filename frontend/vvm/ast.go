package vvm

import (
	"github.com/genesis-toolchain/genesis/diag"
)

// The syntax tree. ParseFile builds it; Check fills in the fields marked
// "set by Check" (the resolution the lowering reads) and never changes
// anything else. Every node has the position of its first character;
// nodes with several keywords keep the position of each, for
// diagnostics. A statement list is a []Stmt: blocks open no scope.

// Node is any node of the tree.
type Node interface {
	Pos() diag.Pos
}

// Stmt is a statement.
type Stmt interface {
	Node
	stmtNode()
}

// Expr is an expression.
type Expr interface {
	Node
	exprNode()
}

// Pattern is the pattern of a match case.
type Pattern interface {
	Node
	patternNode()
}

// File is one parsed source file.
type File struct {
	Name  string // as given to ParseFile; the File of every position in it
	Src   []byte
	Stmts []Stmt
}

// Ident is a name where it is declared or used. Set by Check: Sym, the
// symbol it denotes (nil where no symbol applies: an error, or a
// declaration that binds nothing, such as a parallel branch name).
type Ident struct {
	NamePos diag.Pos
	Name    string
	Sym     *Symbol
}

// KwArg is a keyword argument `name=value`: an agent configuration key,
// a call option, a parallel or constrain option, or a keyword argument of
// a function call.
type KwArg struct {
	NamePos diag.Pos
	Name    string
	Value   Expr
}

// ── Statements ──

// SkillImport is `import "skill" from "source"` (spec.md §11.2).
type SkillImport struct {
	ImportPos     diag.Pos
	Skill, Source *StringLit
}

// ImportKind is what a module import brings in.
type ImportKind uint8

const (
	ImportValue  ImportKind = iota // from "m" import name [as alias]
	ImportAgent                    // from "m" import @agent [as alias] (spec.md 0.0.4)
	ImportModule                   // from "m" import * as alias (spec-newer.md §11.6)
)

// ImportStmt is `from "path" import …`. Set by Check: Module, the module
// the path resolves to (nil when it cannot be loaded), and Local.Sym.
type ImportStmt struct {
	FromPos diag.Pos
	Path    *StringLit
	Kind    ImportKind
	Name    *Ident // the exported name; nil for ImportModule
	Alias   *Ident // nil when there is no `as`; never nil for ImportModule
	Module  *Module
}

// Local is the name the import binds in the importing module: the alias,
// else the imported name.
func (s *ImportStmt) Local() *Ident {
	if s.Alias != nil {
		return s.Alias
	}
	return s.Name
}

// ExportStmt exports one name. `export x` has Name and Value the same
// Ident; `export pack(k=v, x)` (a decision of docs/vvm.md) makes one
// ExportStmt per argument, Name k with Value v, and Name x with Value x.
// Agent is set for `export @a` (spec.md 0.0.4), whose Name is the agent.
// Set by Check: Value.Sym.
type ExportStmt struct {
	ExportPos diag.Pos
	Agent     bool
	Name      *Ident
	Value     *Ident
}

// AgentStmt is `agent name(key=value, …)`. Its configuration values are
// literals, lists, objects and perm(…) calls of literals (E041).
type AgentStmt struct {
	AgentPos diag.Pos
	Name     *Ident
	Config   []*KwArg
}

// InputStmt is an input declaration (spec-newer.md §11.5): `input x:
// "doc"`, `input x: "doc" = default` or `input x = default`. Doc is nil
// when there is no description, Default nil for a required input.
type InputStmt struct {
	InputPos diag.Pos
	Name     *Ident
	Doc      *StringLit
	Default  Expr
}

// FuncDecl is `def name(params): body`. A def directly in a module is
// Hoisted: bound before the module's first statement runs (spec.md
// §11.1). A def anywhere else (in a def, or in a block: a decision of
// docs/vvm.md) binds its name when the statement runs, like an
// assignment. Set by Check: Scope, the function's scope (parameters
// first, then every other local in order of first binding), and
// Captures, the locals of enclosing functions that the body (or a
// function nested in it) refers to, in order of first reference.
type FuncDecl struct {
	DefPos   diag.Pos
	Name     *Ident
	Params   []*Ident
	Body     []Stmt
	Hoisted  bool
	Scope    *Scope
	Captures []*Symbol
}

// ReturnStmt is `return [value]`; Value is nil for a bare return.
type ReturnStmt struct {
	ReturnPos diag.Pos
	Value     Expr
}

// RaiseStmt is `raise ["message"]`; Msg is nil for a bare raise.
type RaiseStmt struct {
	RaisePos diag.Pos
	Msg      *StringLit
}

// PassStmt is `pass`.
type PassStmt struct{ PassPos diag.Pos }

// BreakStmt is `break`.
type BreakStmt struct{ BreakPos diag.Pos }

// ContinueStmt is `continue`.
type ContinueStmt struct{ ContinuePos diag.Pos }

// AssignStmt is `name = value`.
type AssignStmt struct {
	Target *Ident
	EqPos  diag.Pos
	Value  Expr
}

// ExprStmt is an expression evaluated for its effect, usually an agent
// call.
type ExprStmt struct {
	X Expr
}

// IfStmt is `if cond: … elif cond: … else: …`. Else is nil when there
// is no else clause.
type IfStmt struct {
	IfPos   diag.Pos
	Cond    Expr
	Then    []Stmt
	Elifs   []*ElifClause
	ElsePos diag.Pos
	Else    []Stmt
}

// ElifClause is one `elif cond: body` of an IfStmt.
type ElifClause struct {
	ElifPos diag.Pos
	Cond    Expr
	Body    []Stmt
}

// WhileStmt is `while cond: body`.
type WhileStmt struct {
	WhilePos diag.Pos
	Cond     Expr
	Body     []Stmt
}

// ForStmt is `for var in iter: body`.
type ForStmt struct {
	ForPos diag.Pos
	Var    *Ident
	Iter   Expr
	Body   []Stmt
}

// MatchStmt is `match subject:` with its cases; each case runs with
// it = subject (spec.md §7).
type MatchStmt struct {
	MatchPos diag.Pos
	Subject  Expr
	Cases    []*CaseClause
}

// CaseClause is one `case pattern: body`.
type CaseClause struct {
	CasePos diag.Pos
	Pattern Pattern
	Body    []Stmt
}

// ChooseStmt is `choose subject by ?`criterion` as var:` with its
// options (spec.md §10): the chosen label is bound to As, and the
// options run with it = subject.
type ChooseStmt struct {
	ChoosePos diag.Pos
	Subject   Expr
	Criterion *Template
	As        *Ident
	Options   []*OptionClause
}

// OptionClause is one `option "label": body`.
type OptionClause struct {
	OptionPos diag.Pos
	Label     *StringLit
	Body      []Stmt
}

// ConstrainStmt is `constrain target(options): require …` (spec.md §9):
// it rebinds Target, a local of the scope it is in.
type ConstrainStmt struct {
	ConstrainPos diag.Pos
	Target       *Ident
	Options      []*KwArg
	Requires     []*RequireClause
}

// RequireClause is one `require ?`criterion“, judged with it = the
// constrained value.
type RequireClause struct {
	RequirePos diag.Pos
	Criterion  *Template
}

// WithInputStmt is `with input value: body`, which runs body with
// it = value.
type WithInputStmt struct {
	WithPos diag.Pos
	Input   Expr
	Body    []Stmt
}

// TryStmt is `try: … except as e: … finally: …`. Except or Finally is
// nil when absent, never both (E082).
type TryStmt struct {
	TryPos  diag.Pos
	Body    []Stmt
	Except  *ExceptClause
	Finally *FinallyClause
}

// ExceptClause is `except as var: body`.
type ExceptClause struct {
	ExceptPos diag.Pos
	Var       *Ident
	Body      []Stmt
}

// FinallyClause is `finally: body`.
type FinallyClause struct {
	FinallyPos diag.Pos
	Body       []Stmt
}

// ParallelStmt is `parallel(join=…, count=…, on_fail=…) as var:` with
// its named branches (spec-newer.md §12.5). Join and OnFail hold the
// options with their defaults filled in ("all", "fail-fast"); Count is
// 0 when not given. A branch's name is a field of the result object
// bound to As, not a variable.
type ParallelStmt struct {
	ParallelPos diag.Pos
	Options     []*KwArg
	Join        string
	Count       int
	OnFail      string
	As          *Ident
	Branches    []*AssignStmt
}

// ── Patterns ──

// WildcardPattern is `case _`.
type WildcardPattern struct{ UnderscorePos diag.Pos }

// ErrorPattern is `error(_)`, `error(kind="…")` or `error(name)`, which
// matches any error value and binds it to Bind (a decision of
// docs/vvm.md). Kind and Bind are nil for error(_).
type ErrorPattern struct {
	ErrorPos diag.Pos
	Kind     *StringLit
	Bind     *Ident
}

// PredPattern is `case ?`criterion“, judged with it = the subject.
type PredPattern struct {
	QPos      diag.Pos
	Criterion *Template
}

// ── Expressions ──

// BadExpr stands for an expression that did not parse; the error is
// reported. Check never sees one: a file with syntax errors is not
// resolved.
type BadExpr struct{ BadPos diag.Pos }

// ItExpr is `it`, the implicit input (spec.md §4).
type ItExpr struct{ ItPos diag.Pos }

// UnitLit is `()`.
type UnitLit struct{ Lparen diag.Pos }

// BoolLit is `true` or `false`.
type BoolLit struct {
	ValuePos diag.Pos
	Value    bool
}

// NumberLit is a number: Text as written, Value its value, Int whether
// it has no fraction.
type NumberLit struct {
	ValuePos diag.Pos
	Text     string
	Value    float64
	Int      bool
}

// StringLit is a string literal, with Value its escapes decoded.
type StringLit struct {
	ValuePos diag.Pos
	Value    string
}

// ListLit is `[a, b, …]`.
type ListLit struct {
	Lbrack diag.Pos
	Elems  []Expr
}

// ObjectLit is `{key: value, …}`, its fields in source order.
type ObjectLit struct {
	Lbrace diag.Pos
	Fields []*Field
}

// Field is one `key: value` of an ObjectLit; Key is the key's spelling
// (an identifier key is a string key, spec.md §3.1.2).
type Field struct {
	KeyPos diag.Pos
	Key    string
	Value  Expr
}

// Op is a unary or binary operator.
type Op uint8

const (
	OpOr Op = iota
	OpAnd
	OpNot
	OpEq
	OpNe
	OpLt
	OpLe
	OpGt
	OpGe
	OpAdd
	OpSub
)

var opNames = [...]string{"or", "and", "not", "==", "!=", "<", "<=", ">", ">=", "+", "-"}

func (o Op) String() string { return opNames[o] }

// UnaryExpr is `not x`, the one unary operator.
type UnaryExpr struct {
	OpPos diag.Pos
	Op    Op
	X     Expr
}

// BinaryExpr is `x op y`; `and` and `or` short-circuit.
type BinaryExpr struct {
	X     Expr
	OpPos diag.Pos
	Op    Op
	Y     Expr
}

// CallExpr is `f(args, key=value)`: a call of a def, a lambda or
// function value, a standard-library function or a module imported with
// `* as` (spec-newer.md §11.6). Set by Check: Fun.Sym, and Func, the def
// the call runs when that is known statically: Fun names a def (of this
// module, an enclosing def, or imported) and nothing else binds the name.
type CallExpr struct {
	Fun    *Ident
	Lparen diag.Pos
	Args   []Expr
	Kwargs []*KwArg
	Func   *FuncDecl
}

// AgentCall is `@agent `template`(input, option=value, …)` (spec.md
// §3.4). Input is nil when the call has no positional argument: the
// call's input is then `it`.
type AgentCall struct {
	Agent    *AgentRef
	Template *Template
	Lparen   diag.Pos
	Input    Expr
	Options  []*KwArg
}

// AgentRef is the agent of an AgentCall: `@name`, `@name.with(…)` or an
// inline `@{key=value, …}`. Name is nil for an inline agent, whose
// configuration is Inline. With holds the overrides of .with(…), HasWith
// telling `.with()` from no .with. Set by Check: Name.Sym, an agent symbol
// (SymAgent) for a declared or imported agent, or the symbol of a
// variable or parameter that holds an agent value (a decision of
// docs/vvm.md).
type AgentRef struct {
	At      diag.Pos
	Name    *Ident
	Inline  []*KwArg
	With    []*KwArg
	HasWith bool
}

// SemPred is a semantic predicate `?`criterion`(input)` (spec.md §6);
// Input is nil when there is none: the predicate then judges `it`.
type SemPred struct {
	QPos      diag.Pos
	Criterion *Template
	Input     Expr
}

// MemberExpr is `x.name` (spec-newer.md §3.1.4).
type MemberExpr struct {
	X       Expr
	Dot     diag.Pos
	Name    string
	NamePos diag.Pos
}

// IndexExpr is `x[index]`.
type IndexExpr struct {
	X      Expr
	Lbrack diag.Pos
	Index  Expr
}

// WithExpr is `x.with(key=value, …)` where x is not `@`-prefixed: it
// derives an agent value from the agent value x (a decision of
// docs/vvm.md; `@a.with(…)` in a call is an AgentRef).
type WithExpr struct {
	X    Expr
	Dot  diag.Pos
	Args []*KwArg
}

// LambdaExpr is `x => body` or `(x, y) => body` (a decision of
// docs/vvm.md). Set by Check: Scope and Captures, as for FuncDecl.
type LambdaExpr struct {
	ParamsPos diag.Pos
	Params    []*Ident
	Arrow     diag.Pos
	Body      Expr
	Scope     *Scope
	Captures  []*Symbol
}

// ── Templates ──

// Template is a backtick template literal (spec.md §5), parsed into
// parts: literal text (escapes `{{`, `}}` and \` resolved) and
// placeholders. Open is the position of the opening backtick, Raw the
// text between the backticks as written.
type Template struct {
	Open  diag.Pos
	Raw   string
	Parts []*TemplatePart
}

// PartKind is the kind of a TemplatePart.
type PartKind uint8

const (
	TextPart  PartKind = iota // literal text
	InputPart                 // {}: the template's primary input
	NamePart                  // {name} or {name.member…}
)

// TemplatePart is one part of a Template. At is where its text or its
// '{' starts. A NamePart's Name is the placeholder's name (resolved by
// Check like any name) and Path the members after it: {a.b.c} is Name a,
// Path [b c] (member placeholders are a decision of docs/vvm.md).
type TemplatePart struct {
	Kind PartKind
	At   diag.Pos
	Text string
	Name *Ident
	Path []string
}

// ── Positions ──

func (s *SkillImport) Pos() diag.Pos     { return s.ImportPos }
func (s *ImportStmt) Pos() diag.Pos      { return s.FromPos }
func (s *ExportStmt) Pos() diag.Pos      { return s.ExportPos }
func (s *AgentStmt) Pos() diag.Pos       { return s.AgentPos }
func (s *InputStmt) Pos() diag.Pos       { return s.InputPos }
func (s *FuncDecl) Pos() diag.Pos        { return s.DefPos }
func (s *ReturnStmt) Pos() diag.Pos      { return s.ReturnPos }
func (s *RaiseStmt) Pos() diag.Pos       { return s.RaisePos }
func (s *PassStmt) Pos() diag.Pos        { return s.PassPos }
func (s *BreakStmt) Pos() diag.Pos       { return s.BreakPos }
func (s *ContinueStmt) Pos() diag.Pos    { return s.ContinuePos }
func (s *AssignStmt) Pos() diag.Pos      { return s.Target.NamePos }
func (s *ExprStmt) Pos() diag.Pos        { return s.X.Pos() }
func (s *IfStmt) Pos() diag.Pos          { return s.IfPos }
func (s *WhileStmt) Pos() diag.Pos       { return s.WhilePos }
func (s *ForStmt) Pos() diag.Pos         { return s.ForPos }
func (s *MatchStmt) Pos() diag.Pos       { return s.MatchPos }
func (s *ChooseStmt) Pos() diag.Pos      { return s.ChoosePos }
func (s *ConstrainStmt) Pos() diag.Pos   { return s.ConstrainPos }
func (s *WithInputStmt) Pos() diag.Pos   { return s.WithPos }
func (s *TryStmt) Pos() diag.Pos         { return s.TryPos }
func (s *ParallelStmt) Pos() diag.Pos    { return s.ParallelPos }
func (c *ElifClause) Pos() diag.Pos      { return c.ElifPos }
func (c *CaseClause) Pos() diag.Pos      { return c.CasePos }
func (c *OptionClause) Pos() diag.Pos    { return c.OptionPos }
func (c *RequireClause) Pos() diag.Pos   { return c.RequirePos }
func (c *ExceptClause) Pos() diag.Pos    { return c.ExceptPos }
func (c *FinallyClause) Pos() diag.Pos   { return c.FinallyPos }
func (k *KwArg) Pos() diag.Pos           { return k.NamePos }
func (f *Field) Pos() diag.Pos           { return f.KeyPos }
func (t *Template) Pos() diag.Pos        { return t.Open }
func (p *TemplatePart) Pos() diag.Pos    { return p.At }
func (p *WildcardPattern) Pos() diag.Pos { return p.UnderscorePos }
func (p *ErrorPattern) Pos() diag.Pos    { return p.ErrorPos }
func (p *PredPattern) Pos() diag.Pos     { return p.QPos }
func (e *BadExpr) Pos() diag.Pos         { return e.BadPos }
func (e *Ident) Pos() diag.Pos           { return e.NamePos }
func (e *ItExpr) Pos() diag.Pos          { return e.ItPos }
func (e *UnitLit) Pos() diag.Pos         { return e.Lparen }
func (e *BoolLit) Pos() diag.Pos         { return e.ValuePos }
func (e *NumberLit) Pos() diag.Pos       { return e.ValuePos }
func (e *StringLit) Pos() diag.Pos       { return e.ValuePos }
func (e *ListLit) Pos() diag.Pos         { return e.Lbrack }
func (e *ObjectLit) Pos() diag.Pos       { return e.Lbrace }
func (e *UnaryExpr) Pos() diag.Pos       { return e.OpPos }
func (e *BinaryExpr) Pos() diag.Pos      { return e.X.Pos() }
func (e *CallExpr) Pos() diag.Pos        { return e.Fun.NamePos }
func (e *AgentCall) Pos() diag.Pos       { return e.Agent.At }
func (e *SemPred) Pos() diag.Pos         { return e.QPos }
func (e *MemberExpr) Pos() diag.Pos      { return e.X.Pos() }
func (e *IndexExpr) Pos() diag.Pos       { return e.X.Pos() }
func (e *WithExpr) Pos() diag.Pos        { return e.X.Pos() }
func (e *LambdaExpr) Pos() diag.Pos      { return e.ParamsPos }

func (*SkillImport) stmtNode()   {}
func (*ImportStmt) stmtNode()    {}
func (*ExportStmt) stmtNode()    {}
func (*AgentStmt) stmtNode()     {}
func (*InputStmt) stmtNode()     {}
func (*FuncDecl) stmtNode()      {}
func (*ReturnStmt) stmtNode()    {}
func (*RaiseStmt) stmtNode()     {}
func (*PassStmt) stmtNode()      {}
func (*BreakStmt) stmtNode()     {}
func (*ContinueStmt) stmtNode()  {}
func (*AssignStmt) stmtNode()    {}
func (*ExprStmt) stmtNode()      {}
func (*IfStmt) stmtNode()        {}
func (*WhileStmt) stmtNode()     {}
func (*ForStmt) stmtNode()       {}
func (*MatchStmt) stmtNode()     {}
func (*ChooseStmt) stmtNode()    {}
func (*ConstrainStmt) stmtNode() {}
func (*WithInputStmt) stmtNode() {}
func (*TryStmt) stmtNode()       {}
func (*ParallelStmt) stmtNode()  {}

func (*WildcardPattern) patternNode() {}
func (*ErrorPattern) patternNode()    {}
func (*PredPattern) patternNode()     {}

func (*BadExpr) exprNode()    {}
func (*Ident) exprNode()      {}
func (*ItExpr) exprNode()     {}
func (*UnitLit) exprNode()    {}
func (*BoolLit) exprNode()    {}
func (*NumberLit) exprNode()  {}
func (*StringLit) exprNode()  {}
func (*ListLit) exprNode()    {}
func (*ObjectLit) exprNode()  {}
func (*UnaryExpr) exprNode()  {}
func (*BinaryExpr) exprNode() {}
func (*CallExpr) exprNode()   {}
func (*AgentCall) exprNode()  {}
func (*SemPred) exprNode()    {}
func (*MemberExpr) exprNode() {}
func (*IndexExpr) exprNode()  {}
func (*WithExpr) exprNode()   {}
func (*LambdaExpr) exprNode() {}
