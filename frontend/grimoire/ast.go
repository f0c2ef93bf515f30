package grimoire

import (
	"math/big"

	"github.com/genesis-toolchain/genesis/diag"
)

// The abstract syntax tree. ParseFile builds it from the ANTLR parse tree,
// so that no later phase sees a parse tree or knows which of the two
// syntaxes a spell was written in: a spell in the indentation syntax and
// the same spell in the brace syntax give equal trees (up to positions).
//
// Every node has a position (Pos). Fields that are optional in the
// language are nil when absent. CheckSpell annotates the tree in place: every
// Ident in an expression gets its Ref, every UnitLit its Value, every
// action and `do` statement its target; it changes nothing else.
//
// Where error recovery left a hole, ParseFile leaves the piece out (a nil
// expression, a missing statement); CheckSpell reports nothing about a hole,
// since the syntax error already did.

// A Node is any node of the tree.
type Node interface {
	// Pos is where the node starts; for a binary or ternary expression,
	// where its operator is (the column a diagnostic about it points at).
	Pos() diag.Pos
}

// Spell is one parsed .spell file: `spell Name` and its sections,
// imports, blocks and triggers. A section absent from the file leaves its
// field nil (its slice empty); a section written twice is reported by
// CheckSpell, its entries appended to the first.
type Spell struct {
	SpellPos    diag.Pos
	File        string // the file name given to ParseFile
	Name        *Ident
	Version     *Entry // `version: "1.0.0"`; nil when absent
	Description *Entry // nil when absent
	Assets      *Section[*Asset]
	Params      *Section[*Param]
	Limits      *Section[*Limit]
	Venues      *Section[*Venue]
	State       *Section[*StateVar]
	Skills      *Section[*Skill]
	Advisors    *Section[*Advisor]
	Guards      *Section[*Guard]
	Imports     []*Import
	Blocks      []*Block
	Triggers    []*Trigger

	// Dups are the headers of sections written a second time, for CheckSpell
	// to report.
	Dups []*Ident
}

func (s *Spell) Pos() diag.Pos { return s.SpellPos }

// Section is one section of a spell: its header (the section's name as
// written, e.g. `params`) and its items in source order.
type Section[T Node] struct {
	Header *Ident
	Items  []T
}

func (s *Section[T]) Pos() diag.Pos { return s.Header.Pos() }

// Asset is a token symbol of the `assets` section, written in its list
// form (`assets: [USDC, ETH]`) or with metadata (`USDC: decimals: 6`).
type Asset struct {
	Name     *Ident
	Chain    Expr     // chain id; nil when not given
	Address  Expr     // token address; nil when not given
	Decimals Expr     // nil when not given
	Extra    []*Entry // metadata of other keys, as written
}

func (a *Asset) Pos() diag.Pos { return a.Name.Pos() }

// Param is one parameter of the `params` section. An untyped parameter
// (`amount: 100`) has only Default. A typed one is written as a mapping
// with `type` or `default` (`amount: type: amount, asset: USDC,
// default: 1.5 USDC`); any other mapping is an object value.
type Param struct {
	Name    *Ident
	Typed   bool
	Type    *Ident // amount, bps, duration, number, bool, string, address, asset; nil when not given
	Asset   *Ident // the asset of an amount; nil when not given
	Default Expr   // the value; nil for a typed parameter without default
	Min     Expr
	Max     Expr
	Extra   []*Entry // entries of other keys in a typed parameter
}

func (p *Param) Pos() diag.Pos { return p.Name.Pos() }

// Limit is one entry of the `limits` section; expressions read it as
// `limits.name` or `limit_name`.
type Limit struct {
	Name  *Ident
	Value Expr
}

func (l *Limit) Pos() diag.Pos { return l.Name.Pos() }

// Venue is one alias of the `venues` section: `dex: @uniswap_v3`, or a
// group, `lending: [@aave_v3, @morpho_blue]`.
type Venue struct {
	Name     *Ident
	Adapters []*VenueRef
	Group    bool // written as a list
}

func (v *Venue) Pos() diag.Pos { return v.Name.Pos() }

// StateScope says how long a state variable lives.
type StateScope uint8

const (
	Persistent StateScope = iota // kept across runs
	Ephemeral                    // reset to its initial value every run
)

func (s StateScope) String() string {
	if s == Ephemeral {
		return "ephemeral"
	}
	return "persistent"
}

// StateVar is one variable of the `state` section.
type StateVar struct {
	Scope StateScope
	Name  *Ident
	Init  Expr
}

func (v *StateVar) Pos() diag.Pos { return v.Name.Pos() }

// Skill is one entry of the `skills` section.
type Skill struct {
	Name        *Ident
	Type        *Ident   // swap, yield, lending, staking, bridge; nil when not given
	Adapters    []*Ident // venue aliases (or adapters named in venues)
	Defaults    []*Arg   // default_constraints, in source order
	DefaultsPos diag.Pos // where default_constraints is; zero when absent
	Extra       []*Entry
}

func (s *Skill) Pos() diag.Pos { return s.Name.Pos() }

// Advisor is one entry of the `advisors` section. The list fields hold
// words: a name, a dotted name or a string (`web.search`, "web-search").
type Advisor struct {
	Name         *Ident
	Model        Expr
	SystemPrompt Expr
	Skills       []*Word
	AllowedTools []*Word
	MCP          []*Word
	Timeout      Expr
	Fallback     Expr
	MaxPerRun    Expr // rate_limit.max_per_run
	MaxPerHour   Expr // rate_limit.max_per_hour
	Extra        []*Entry
}

func (a *Advisor) Pos() diag.Pos { return a.Name.Pos() }

// Word is one item of a list of identifiers (an advisor's skills, tools
// and MCP servers), as text: `web.search`, `company-kb` or a string.
type Word struct {
	WordPos diag.Pos
	Text    string
}

func (w *Word) Pos() diag.Pos { return w.WordPos }

// Guard is one pre-condition of the `guards` section: `id: <expr>`, with
// optional metadata `with severity="warn", message="..."`.
type Guard struct {
	Name  *Ident
	Check Expr
	Meta  []*Arg
}

func (g *Guard) Pos() diag.Pos { return g.Name.Pos() }

// Import is `import "path" [as alias]`. Check sets Spell to the imported
// file's tree; Alias, when absent, is the file's stem (CheckSpell uses
// Namespace).
type Import struct {
	ImportPos diag.Pos
	Path      *StringLit
	Alias     *Ident // nil when not given
	Spell     *Spell // set by Check; nil when the file was not loaded
}

func (i *Import) Pos() diag.Pos { return i.ImportPos }

// Block is `block name(params): body`, invoked by `do name(args)`.
type Block struct {
	BlockPos diag.Pos
	Name     *Ident
	Params   []*Ident
	Body     []Stmt
}

func (b *Block) Pos() diag.Pos { return b.BlockPos }

// TriggerKind says when a trigger's body runs.
type TriggerKind uint8

const (
	Manual    TriggerKind = iota // on manual
	Hourly                       // on hourly
	Daily                        // on daily
	Cron                         // on "<cron>"
	Condition                    // on condition <expr> [every <duration>]
	Event                        // on event "<name>" [where <expr>]
)

var triggerNames = [...]string{"manual", "hourly", "daily", "cron", "condition", "event"}

func (k TriggerKind) String() string { return triggerNames[k] }

// Trigger is `on <trigger>: body`.
type Trigger struct {
	OnPos diag.Pos
	Kind  TriggerKind
	Cron  *StringLit // Cron
	Cond  Expr       // Condition
	Every Expr       // Condition's polling interval; nil when not given
	Event *StringLit // Event
	Where Expr       // Event's filter; nil when not given
	Body  []Stmt
}

func (t *Trigger) Pos() diag.Pos { return t.OnPos }

// ── Statements ──

// A Stmt is a statement of a trigger, block or compound statement.
type Stmt interface {
	Node
	stmtNode()
}

// AssignStmt is `name = expr`.
type AssignStmt struct {
	Target *Ident
	Value  Expr
}

// ActionStmt is a venue action, `venue.action(args)`, with its optional
// result binding, skill and constraints:
// `out = venue.action(args) using skill with key=value, ...`.
type ActionStmt struct {
	Target *Ident // the binding; nil when the result is dropped
	Venue  *Ident // a venue alias, an adapter named in venues, or a skill
	Action *Ident
	Args   []*Arg
	Using  *Ident // nil when not given
	With   []*Arg // constraints, in source order

	// Set by Check: the venue the action runs on, when the spell names
	// one (nil when the venue is picked from Skill's adapters at run
	// time), and the skill whose defaults apply (the `using` one, or the
	// one Venue named).
	VenueDecl *Venue
	SkillDecl *Skill
}

// AdviseStmt is `name = advise advisor: "prompt"` with its output schema,
// timeout and fallback (and, from the brace syntax's later dialect,
// context, within and on_violation).
type AdviseStmt struct {
	Target      *Ident
	AdvisePos   diag.Pos
	Advisor     *Ident
	Prompt      *StringLit
	Output      *Schema // nil when not given (Check reports it)
	Timeout     Expr
	Fallback    Expr
	Context     []*Entry // values the advisor sees; nil when not given
	Within      *Ident
	OnViolation *Ident
	Extra       []*Entry
}

// Schema is an advisory output schema: `type: enum, values: [...]`, or
// the short form `field: string`.
type Schema struct {
	TypePos   diag.Pos
	Type      string // boolean, number, enum, string, object, array
	Values    []Expr // enum
	Min, Max  Expr   // number
	MinLength Expr   // string
	MaxLength Expr   // string
	Pattern   Expr   // string
	Fields    []*SchemaField
	Items     *Schema
	Extra     []*Entry
}

func (s *Schema) Pos() diag.Pos { return s.TypePos }

// SchemaField is one field of an object schema.
type SchemaField struct {
	Name   *Ident
	Schema *Schema
}

func (f *SchemaField) Pos() diag.Pos { return f.Name.Pos() }

// PipelineStmt is `[name =] source | stage: body | stage: body ...`.
type PipelineStmt struct {
	Target *Ident // nil when the result is dropped
	Source Expr
	Stages []*Stage
}

// Stage is one stage of a pipeline: its operation (filter, map, pmap,
// reduce, where, take, skip, sort), the operation's argument (reduce's
// initial value, take's and skip's count), sort's key and order, and the
// body run for each element with `item` and `index` (and reduce's `acc`)
// bound.
type Stage struct {
	PipePos diag.Pos
	Op      *Ident
	Arg     Expr   // nil when not given
	By      Expr   // sort's key; nil when not given
	Order   *Ident // sort's order, asc or desc; nil when not given
	Body    []Stmt
}

func (s *Stage) Pos() diag.Pos { return s.PipePos }

// IfStmt is `if cond: ... elif cond: ... else: ...`.
type IfStmt struct {
	IfPos   diag.Pos
	Cond    Expr
	Then    []Stmt
	Elifs   []*Elif
	ElsePos diag.Pos // zero when there is no else
	Else    []Stmt
}

// Elif is one `elif cond: ...` of an IfStmt.
type Elif struct {
	ElifPos diag.Pos
	Cond    Expr
	Body    []Stmt
}

func (e *Elif) Pos() diag.Pos { return e.ElifPos }

// ForStmt is `for var in iter: body`.
type ForStmt struct {
	ForPos diag.Pos
	Var    *Ident
	Iter   Expr
	Body   []Stmt
}

// RepeatStmt is `repeat count: body`.
type RepeatStmt struct {
	RepeatPos diag.Pos
	Count     Expr
	Body      []Stmt
}

// LoopStmt is `loop until cond max n: body`. The condition is evaluated
// after each run of the body; Max bounds the runs.
type LoopStmt struct {
	LoopPos diag.Pos
	Until   Expr
	Max     Expr // nil when not given (Check reports it)
	Body    []Stmt
}

// TryStmt is `try: ... catch e: ... finally: ...`.
type TryStmt struct {
	TryPos     diag.Pos
	Body       []Stmt
	Catches    []*Catch
	FinallyPos diag.Pos // zero when there is no finally
	Finally    []Stmt
}

// Catch is one `catch` clause: the error it handles (nil Error: every
// error, `catch *` or `catch`), its retry policy, its action (skip, halt,
// revert) and its statements, which run with `error` bound.
type Catch struct {
	CatchPos diag.Pos
	Error    *Ident
	Retry    *Retry
	Action   *Ident
	Body     []Stmt
	Extra    []*Entry
}

func (c *Catch) Pos() diag.Pos { return c.CatchPos }

// Retry is a catch clause's `retry:` policy.
type Retry struct {
	RetryPos    diag.Pos
	MaxAttempts Expr
	Backoff     *Ident // none, linear, exponential
	BackoffBase Expr
	MaxBackoff  Expr
	Extra       []*Entry
}

func (r *Retry) Pos() diag.Pos { return r.RetryPos }

// ParallelStmt is `parallel join=… on_fail=…: branches`.
type ParallelStmt struct {
	ParallelPos diag.Pos
	Join        *Ident // all, any, first, best, majority; nil: all
	OnFail      *Ident // abort, continue; nil: abort
	Metric      Expr   // best's metric
	Order       *Ident // best's order, max or min
	Count       Expr   // any's count
	Branches    []*Branch
}

// Branch is one named branch of a ParallelStmt.
type Branch struct {
	Name *Ident
	Body []Stmt
}

func (b *Branch) Pos() diag.Pos { return b.Name.Pos() }

// AtomicStmt is `atomic [mode]: body`; Mode (revert, skip, halt) is nil
// for the default, revert.
type AtomicStmt struct {
	AtomicPos diag.Pos
	Mode      *Ident
	Body      []Stmt
}

// EmitStmt is `emit event(key=value, ...)`.
type EmitStmt struct {
	EmitPos diag.Pos
	Event   *Ident
	Args    []*Arg
}

// HaltStmt is `halt ["reason"]`.
type HaltStmt struct {
	HaltPos diag.Pos
	Reason  *StringLit // nil when not given
}

// WaitStmt is `wait duration`.
type WaitStmt struct {
	WaitPos  diag.Pos
	Duration Expr
}

// PassStmt is `pass`.
type PassStmt struct {
	PassPos diag.Pos
}

// DoStmt is `do name(args)` or `do alias.name(args)`.
type DoStmt struct {
	DoPos diag.Pos
	Path  []*Ident // the block's name, after the import alias if any
	Args  []*Arg
	Block *Block // set by Check; nil when the block is unknown or its import was not loaded
}

func (s *AssignStmt) Pos() diag.Pos   { return s.Target.Pos() }
func (s *ActionStmt) Pos() diag.Pos   { return startOf(s.Target, s.Venue) }
func (s *AdviseStmt) Pos() diag.Pos   { return s.Target.Pos() }
func (s *PipelineStmt) Pos() diag.Pos { return startOf(s.Target, s.Source) }
func (s *IfStmt) Pos() diag.Pos       { return s.IfPos }
func (s *ForStmt) Pos() diag.Pos      { return s.ForPos }
func (s *RepeatStmt) Pos() diag.Pos   { return s.RepeatPos }
func (s *LoopStmt) Pos() diag.Pos     { return s.LoopPos }
func (s *TryStmt) Pos() diag.Pos      { return s.TryPos }
func (s *ParallelStmt) Pos() diag.Pos { return s.ParallelPos }
func (s *AtomicStmt) Pos() diag.Pos   { return s.AtomicPos }
func (s *EmitStmt) Pos() diag.Pos     { return s.EmitPos }
func (s *HaltStmt) Pos() diag.Pos     { return s.HaltPos }
func (s *WaitStmt) Pos() diag.Pos     { return s.WaitPos }
func (s *PassStmt) Pos() diag.Pos     { return s.PassPos }
func (s *DoStmt) Pos() diag.Pos       { return s.DoPos }

func (*AssignStmt) stmtNode()   {}
func (*ActionStmt) stmtNode()   {}
func (*AdviseStmt) stmtNode()   {}
func (*PipelineStmt) stmtNode() {}
func (*IfStmt) stmtNode()       {}
func (*ForStmt) stmtNode()      {}
func (*RepeatStmt) stmtNode()   {}
func (*LoopStmt) stmtNode()     {}
func (*TryStmt) stmtNode()      {}
func (*ParallelStmt) stmtNode() {}
func (*AtomicStmt) stmtNode()   {}
func (*EmitStmt) stmtNode()     {}
func (*HaltStmt) stmtNode()     {}
func (*WaitStmt) stmtNode()     {}
func (*PassStmt) stmtNode()     {}
func (*DoStmt) stmtNode()       {}

// startOf is the position of the first of target (when not nil) and
// rest: a statement with an optional binding starts at the binding.
func startOf(target *Ident, rest Node) diag.Pos {
	if target != nil {
		return target.Pos()
	}
	if rest == nil {
		return diag.Pos{}
	}
	return rest.Pos()
}

// ── Expressions ──

// An Expr is an expression.
type Expr interface {
	Node
	exprNode()
}

// RefKind says what a name in an expression refers to; CheckSpell sets it.
type RefKind uint8

const (
	RefNone     RefKind = iota // not resolved: before Check, undefined, a function's name, a skill as a venue
	RefLocal                   // a variable of the trigger or block: assigned, a loop variable, a block parameter, a binding
	RefState                   // a state variable (Decl: *StateVar)
	RefParams                  // `params`, the parameters object
	RefLimits                  // `limits`, the limits object
	RefLimit                   // `limit_<name>` (Decl: *Limit)
	RefStateNS                 // `state`, the state object (state.persistent.x)
	RefAssets                  // `assets`, the list of asset symbols
	RefAsset                   // an asset symbol (Decl: *Asset, nil when undeclared)
	RefVenue                   // a venue alias or an adapter named in venues (Decl: *Venue)
	RefEvent                   // the payload of an event trigger
	RefIterator                // item, index or acc in a pipeline stage, error in a catch clause
)

var refNames = [...]string{"none", "local", "state", "params", "limits", "limit", "state-ns", "assets", "asset", "venue", "event", "iterator"}

func (k RefKind) String() string { return refNames[k] }

// Ident is a name: in an expression, or naming something (a section, a
// key, a declaration). CheckSpell sets Ref and Decl on names in expressions.
type Ident struct {
	NamePos diag.Pos
	Name    string
	Ref     RefKind
	Decl    Node // the declaration, for RefState, RefLimit, RefAsset, RefVenue; else nil
}

// NumberKind says how a number literal was written.
type NumberKind uint8

const (
	Plain    NumberKind = iota // 100, 0.5
	Percent                    // 50% (Value 0.5)
	Duration                   // 5m (Value 300, in seconds)
)

// NumberLit is a number: Raw as written, Value exact (a percentage
// divided by 100, a duration in seconds).
type NumberLit struct {
	LitPos diag.Pos
	Kind   NumberKind
	Raw    string
	Value  *big.Rat
}

// UnitLit is an amount with a unit: `1.5 USDC` (an asset with declared
// decimals) or `50 bps`. CheckSpell sets Value: the amount in the asset's
// smallest unit (1500000), or for bps the number of basis points.
type UnitLit struct {
	LitPos diag.Pos
	Raw    string   // the number as written
	Amount *big.Rat // the number
	Unit   *Ident
	Value  *big.Rat // set by Check; nil before, or when the unit is bad
}

// StringLit is a quoted string; Value is decoded.
type StringLit struct {
	LitPos diag.Pos
	Value  string
}

// BoolLit is true or false.
type BoolLit struct {
	LitPos diag.Pos
	Value  bool
}

// AddressLit is a hex literal, `0x` and 40 hex digits for an address;
// CheckSpell reports other lengths.
type AddressLit struct {
	LitPos diag.Pos
	Value  string // as written, 0x included
}

// VenueRef is an adapter reference, `@name`.
type VenueRef struct {
	AtPos diag.Pos
	Name  string // without the @
}

// Advisory is an inline advisory prompt, `**prompt** [via advisor]`, a
// boolean decision.
type Advisory struct {
	LitPos diag.Pos
	Prompt string // its words, separated by single spaces
	Via    *Ident // nil when not given
}

// ListLit is `[a, b, ...]`.
type ListLit struct {
	LbrackPos diag.Pos
	Elems     []Expr
}

// ObjectLit is `{key: value, ...}`; an indented mapping is one too.
type ObjectLit struct {
	LbracePos diag.Pos
	Entries   []*Entry
}

// Entry is `key: value` of an object or mapping. A keyword written as a
// value (`action: halt`) is an *Ident. With is the `with` metadata a
// guard may have; nil elsewhere.
type Entry struct {
	Key   *Ident // a string key is an Ident named by the string
	Value Expr
	With  []*Arg
}

func (e *Entry) Pos() diag.Pos { return e.Key.Pos() }

// UnaryExpr is `-x`, `+x` or `not x`.
type UnaryExpr struct {
	OpPos diag.Pos
	Op    string
	X     Expr
}

// BinaryExpr is `x op y` for the arithmetic, comparison and logical
// operators (`and`, `or`).
type BinaryExpr struct {
	OpPos diag.Pos
	Op    string
	X, Y  Expr
}

// CondExpr is `cond ? then : else`.
type CondExpr struct {
	QuestionPos diag.Pos
	Cond        Expr
	Then, Else  Expr
}

// MemberExpr is `x.name`.
type MemberExpr struct {
	X    Expr
	Name *Ident
}

// IndexExpr is `x[index]`.
type IndexExpr struct {
	X     Expr
	Index Expr
}

// CallExpr is a call of a built-in function, `name(args)`. A call of
// `venue.action(...)` is an ActionStmt, never a CallExpr.
type CallExpr struct {
	Fun  *Ident
	Args []*Arg
}

// Arg is an argument, `value` or `name=value`: of a call, an action, an
// emit, a `do`, a `with` clause or a guard's metadata.
type Arg struct {
	Name  *Ident // nil for a positional argument
	Value Expr
}

func (a *Arg) Pos() diag.Pos { return startOf(a.Name, a.Value) }

func (x *Ident) Pos() diag.Pos      { return x.NamePos }
func (x *NumberLit) Pos() diag.Pos  { return x.LitPos }
func (x *UnitLit) Pos() diag.Pos    { return x.LitPos }
func (x *StringLit) Pos() diag.Pos  { return x.LitPos }
func (x *BoolLit) Pos() diag.Pos    { return x.LitPos }
func (x *AddressLit) Pos() diag.Pos { return x.LitPos }
func (x *VenueRef) Pos() diag.Pos   { return x.AtPos }
func (x *Advisory) Pos() diag.Pos   { return x.LitPos }
func (x *ListLit) Pos() diag.Pos    { return x.LbrackPos }
func (x *ObjectLit) Pos() diag.Pos  { return x.LbracePos }
func (x *UnaryExpr) Pos() diag.Pos  { return x.OpPos }
func (x *BinaryExpr) Pos() diag.Pos { return x.OpPos }
func (x *CondExpr) Pos() diag.Pos   { return x.QuestionPos }
func (x *MemberExpr) Pos() diag.Pos { return x.X.Pos() }
func (x *IndexExpr) Pos() diag.Pos  { return x.X.Pos() }
func (x *CallExpr) Pos() diag.Pos   { return x.Fun.Pos() }

func (*Ident) exprNode()      {}
func (*NumberLit) exprNode()  {}
func (*UnitLit) exprNode()    {}
func (*StringLit) exprNode()  {}
func (*BoolLit) exprNode()    {}
func (*AddressLit) exprNode() {}
func (*VenueRef) exprNode()   {}
func (*Advisory) exprNode()   {}
func (*ListLit) exprNode()    {}
func (*ObjectLit) exprNode()  {}
func (*UnaryExpr) exprNode()  {}
func (*BinaryExpr) exprNode() {}
func (*CondExpr) exprNode()   {}
func (*MemberExpr) exprNode() {}
func (*IndexExpr) exprNode()  {}
func (*CallExpr) exprNode()   {}
