package genesis

import (
	"github.com/genesis-toolchain/genesis/diag"
	"github.com/genesis-toolchain/genesis/forge/bytecode"
)

// The abstract syntax tree. Parse builds it from the ANTLR parse tree, so
// that no later phase sees a parse tree; Check annotates it in place:
// every Expr gets its Type, every Ident its Object, every TypeExpr the
// Type it denotes. The tree is what lowering to IR reads.
//
// Where error recovery left a hole, the tree holds a *BadExpr (or no
// statement at all); Check never reports anything about a bad node, since
// the syntax error already did.

// A Node is any node of the tree.
type Node interface {
	// Pos is where the node starts, or for an operator expression, where
	// its operator is (the column a diagnostic about it points at).
	Pos() diag.Pos
}

// File is one parsed source file.
type File struct {
	Name  string
	Src   []byte
	Decls []Decl
}

// A Decl is a top-level item: *FuncDecl, *StructDecl, *EnumDecl or
// *AliasDecl.
type Decl interface {
	Node
	declNode()
}

// FuncDecl is `fn Name(params) -> Result { body }`.
type FuncDecl struct {
	FnPos  diag.Pos
	Name   *Ident
	Params []*Param
	Result TypeExpr
	Body   *BlockExpr
	Obj    *Func // set by Check
}

// Param is one parameter of a function.
type Param struct {
	Name *Ident
	Type TypeExpr
}

// StructDecl is `struct Name { field: T, ... }`.
type StructDecl struct {
	StructPos diag.Pos
	Name      *Ident
	Fields    []*FieldDecl
	Type      *Struct // set by Check
}

// FieldDecl is one field of a struct.
type FieldDecl struct {
	Name *Ident
	Type TypeExpr
}

// EnumDecl is `enum Name { Variant, Variant(T, ...), ... }`.
type EnumDecl struct {
	EnumPos  diag.Pos
	Name     *Ident
	Variants []*VariantDecl
	Type     *Enum // set by Check
}

// VariantDecl is one variant of an enum, with its payload types.
type VariantDecl struct {
	Name    *Ident
	Payload []TypeExpr
}

// AliasDecl is `type Name = T;`.
type AliasDecl struct {
	TypePos diag.Pos
	Name    *Ident
	Target  TypeExpr
}

func (d *FuncDecl) Pos() diag.Pos   { return d.FnPos }
func (d *StructDecl) Pos() diag.Pos { return d.StructPos }
func (d *EnumDecl) Pos() diag.Pos   { return d.EnumPos }
func (d *AliasDecl) Pos() diag.Pos  { return d.TypePos }

func (*FuncDecl) declNode()   {}
func (*StructDecl) declNode() {}
func (*EnumDecl) declNode()   {}
func (*AliasDecl) declNode()  {}

// ── Types ──

// A TypeExpr is a type as written: *NamedType, *PointerType, *ArrayType
// or *FuncTypeExpr. Check sets the Type each denotes.
type TypeExpr interface {
	Node
	// Resolved is the type the expression denotes, once checked; nil
	// before Check, Invalid if it denotes none.
	Resolved() Type
	setResolved(Type)
}

type typeExprBase struct {
	pos diag.Pos
	typ Type
}

func (t *typeExprBase) Pos() diag.Pos        { return t.pos }
func (t *typeExprBase) Resolved() Type       { return t.typ }
func (t *typeExprBase) setResolved(typ Type) { t.typ = typ }

// NamedType is a type name: a primitive type (u8, ..., bool, void), a
// struct, an enum or an alias.
type NamedType struct {
	typeExprBase
	Name string
}

// PointerType is `*T` or `*mut T`.
type PointerType struct {
	typeExprBase
	Mut  bool
	Elem TypeExpr
}

// ArrayType is `[T; N]`.
type ArrayType struct {
	typeExprBase
	Elem TypeExpr
	Len  uint64
}

// FuncTypeExpr is `*fn(T, ...) -> R`, a function pointer type.
type FuncTypeExpr struct {
	typeExprBase
	Params []TypeExpr
	Result TypeExpr
}

// ── Statements ──

// A Stmt is a statement of a block.
type Stmt interface {
	Node
	stmtNode()
}

// LetStmt is `let [mut] Name: T = Value;`.
type LetStmt struct {
	LetPos diag.Pos
	Mut    bool
	Name   *Ident
	Type   TypeExpr
	Value  Expr
	Var    *Var // set by Check
}

// AssignStmt is `Target = Value;`.
type AssignStmt struct {
	Target Expr
	EqPos  diag.Pos
	Value  Expr
}

// ExprStmt is an expression used as a statement: `expr;`, and the `if`
// statement (an *IfExpr whose Else may be nil) with or without its
// optional ';'. The value, if any, is discarded.
type ExprStmt struct {
	X    Expr
	semi bool // written with a ';': an if statement is then not a block's tail
}

// WhileStmt is `while Cond { Body }`.
type WhileStmt struct {
	WhilePos diag.Pos
	Cond     Expr
	Body     *BlockExpr
}

// ReturnStmt is `return [Value];`.
type ReturnStmt struct {
	ReturnPos diag.Pos
	Value     Expr // nil in `return;`
}

// BranchStmt is `break;` or `continue;`.
type BranchStmt struct {
	KwPos    diag.Pos
	Continue bool
}

// AsmStmt is `asm (bindings) { instructions };` (§7).
type AsmStmt struct {
	AsmPos   diag.Pos
	Bindings []*AsmBinding
	Insts    []*AsmInst
}

// AsmBinding is `in rN = Value` (Out false) or `out Value = rN` (Out
// true, Value the lvalue).
type AsmBinding struct {
	WordPos diag.Pos // of `in` or `out`
	Out     bool
	Reg     uint8
	RegPos  diag.Pos
	Value   Expr
}

// AsmInst is one Forge instruction of an asm block. Info is the opcode
// table's entry, set by Parse when the mnemonic is known.
type AsmInst struct {
	MnemonicPos diag.Pos
	Mnemonic    string
	Info        *bytecode.Info
	Operands    []*AsmOperand
}

// AsmOperandKind tells what an asm operand is.
type AsmOperandKind uint8

const (
	AsmReg  AsmOperandKind = iota // a register r0..r255: Reg
	AsmImm                        // an integer: Imm (two's complement if negative)
	AsmName                       // a name: Name, a function (its address)
)

// AsmOperand is one operand of an asm instruction.
type AsmOperand struct {
	OpPos diag.Pos
	Kind  AsmOperandKind
	Reg   uint8
	Imm   uint64
	Name  *Ident
}

func (s *LetStmt) Pos() diag.Pos    { return s.LetPos }
func (s *AssignStmt) Pos() diag.Pos { return s.Target.Pos() }
func (s *ExprStmt) Pos() diag.Pos   { return s.X.Pos() }
func (s *WhileStmt) Pos() diag.Pos  { return s.WhilePos }
func (s *ReturnStmt) Pos() diag.Pos { return s.ReturnPos }
func (s *BranchStmt) Pos() diag.Pos { return s.KwPos }
func (s *AsmStmt) Pos() diag.Pos    { return s.AsmPos }

func (*LetStmt) stmtNode()    {}
func (*AssignStmt) stmtNode() {}
func (*ExprStmt) stmtNode()   {}
func (*WhileStmt) stmtNode()  {}
func (*ReturnStmt) stmtNode() {}
func (*BranchStmt) stmtNode() {}
func (*AsmStmt) stmtNode()    {}

// ── Expressions ──

// An Expr is an expression. Check sets its type.
type Expr interface {
	Node
	// Type is the expression's type once checked: nil before Check,
	// Invalid where checking failed.
	Type() Type
	setType(Type)
}

type exprBase struct {
	pos diag.Pos
	typ Type
}

func (e *exprBase) Pos() diag.Pos    { return e.pos }
func (e *exprBase) Type() Type       { return e.typ }
func (e *exprBase) setType(typ Type) { e.typ = typ }

// BadExpr stands where error recovery left no expression.
type BadExpr struct{ exprBase }

// IntLit is an integer literal; Value is what it denotes (it may not fit
// the type Check gives it, which Check reports).
type IntLit struct {
	exprBase
	Text  string
	Value uint64
}

// ByteLit is a byte literal `0yHH`, of type u8.
type ByteLit struct {
	exprBase
	Value uint8
}

// BoolLit is `true` or `false`.
type BoolLit struct {
	exprBase
	Value bool
}

// StringLit is a string literal; Value holds its bytes with escapes
// decoded, without the NUL that follows them in memory.
type StringLit struct {
	exprBase
	Value []byte
}

// Ident is a name used in an expression (or naming a declaration). Check
// sets Obj to what a use refers to.
type Ident struct {
	exprBase
	Name string
	Obj  Object
}

// UnaryExpr is `Op X`: one of ! - * & ~.
type UnaryExpr struct {
	exprBase
	Op Op
	X  Expr
}

// BinaryExpr is `X Op Y`; its position is the operator's.
type BinaryExpr struct {
	exprBase
	Op   Op
	X, Y Expr
}

// CastExpr is `X as T`; its position is the `as`.
type CastExpr struct {
	exprBase
	X  Expr
	To TypeExpr
}

// CallExpr is `Fun(Args)`: a call of a function or function pointer, or
// the construction of an enum variant. Its position is the '('.
type CallExpr struct {
	exprBase
	Fun  Expr
	Args []Expr
}

// IndexExpr is `X[Index]`, on an array or a pointer; its position is the
// '['.
type IndexExpr struct {
	exprBase
	X, Index Expr
}

// FieldExpr is `X.Name`, or `X->Name` (Arrow) for `(*X).Name`. Its
// position is the '.' or '->'. Check sets Field.
type FieldExpr struct {
	exprBase
	X     Expr
	Arrow bool
	Name  *Ident
	Field *Field
}

// ArrayLit is `[Elem; Len]`, Len copies of Elem.
type ArrayLit struct {
	exprBase
	Elem Expr
	Len  uint64
}

// StructLit is `Name { field: value, ... }`.
type StructLit struct {
	exprBase
	Name   *Ident
	Fields []*FieldInit
}

// FieldInit is one `field: value` of a struct literal. Check sets Field.
type FieldInit struct {
	Name  *Ident
	Value Expr
	Field *Field
}

// BlockExpr is `{ stmts; tail }`; its value is Tail's, or void without
// one.
type BlockExpr struct {
	exprBase
	Stmts []Stmt
	Tail  Expr // nil if the block ends with a statement
	End   diag.Pos
}

// IfExpr is `if Cond Then else Else`, where Else is a *BlockExpr, an
// *IfExpr, or nil (only in an if statement).
type IfExpr struct {
	exprBase
	Cond Expr
	Then *BlockExpr
	Else Expr
}

// MatchExpr is `match X { arms }`.
type MatchExpr struct {
	exprBase
	X    Expr
	Arms []*MatchArm
}

// MatchArm is `Pattern => Body`.
type MatchArm struct {
	Pattern Pattern
	Body    Expr
}

// ── Patterns ──

// A Pattern is a match pattern: *WildcardPattern, *IntPattern,
// *BoolPattern or *VariantPattern.
type Pattern interface {
	Node
	patternNode()
}

// WildcardPattern is `_`.
type WildcardPattern struct{ At diag.Pos }

// IntPattern is an integer or byte literal, possibly negative.
type IntPattern struct {
	At    diag.Pos
	Text  string
	Neg   bool
	Value uint64 // the magnitude
}

// BoolPattern is `true` or `false`.
type BoolPattern struct {
	At    diag.Pos
	Value bool
}

// VariantPattern is `Variant` or `Variant(a, b, _)`. Check sets Variant,
// and the Obj (a *Var) of each binding that is not `_`.
type VariantPattern struct {
	Name     *Ident
	Bindings []*Ident // `_` has the name "_"
	Variant  *Variant
}

func (p *WildcardPattern) Pos() diag.Pos { return p.At }
func (p *IntPattern) Pos() diag.Pos      { return p.At }
func (p *BoolPattern) Pos() diag.Pos     { return p.At }
func (p *VariantPattern) Pos() diag.Pos  { return p.Name.Pos() }

func (*WildcardPattern) patternNode() {}
func (*IntPattern) patternNode()      {}
func (*BoolPattern) patternNode()     {}
func (*VariantPattern) patternNode()  {}

// Op is an operator.
type Op uint8

// The operators, unary and binary.
const (
	OpNone  Op = iota
	OpNot      // !x
	OpNeg      // -x
	OpDeref    // *x
	OpAddr     // &x
	OpCompl    // ~x
	OpMul
	OpDiv
	OpRem
	OpAdd
	OpSub
	OpShl
	OpShr
	OpAnd
	OpXor
	OpOr
	OpEq
	OpNe
	OpLt
	OpGt
	OpLe
	OpGe
	OpAndAnd
	OpOrOr
)

var opNames = [...]string{
	OpNone: "?", OpNot: "!", OpNeg: "-", OpDeref: "*", OpAddr: "&", OpCompl: "~",
	OpMul: "*", OpDiv: "/", OpRem: "%", OpAdd: "+", OpSub: "-", OpShl: "<<", OpShr: ">>",
	OpAnd: "&", OpXor: "^", OpOr: "|", OpEq: "==", OpNe: "!=", OpLt: "<", OpGt: ">",
	OpLe: "<=", OpGe: ">=", OpAndAnd: "&&", OpOrOr: "||",
}

func (op Op) String() string {
	if int(op) < len(opNames) {
		return opNames[op]
	}
	return "?"
}

// IsComparison reports whether op is one of == != < > <= >=.
func (op Op) IsComparison() bool { return op >= OpEq && op <= OpGe }
