package ir

// Op is an operation code. OpInfo describes each one; the table opTable is
// the single source of the printed form, the type rules and the semantics
// of every op.
type Op uint8

// The operations, grouped as in docs/ir.md.
const (
	OpInvalid Op = iota

	// Constants and addresses.
	OpConst
	OpFuncRef
	OpAddrOf

	// Integer arithmetic and logic.
	OpAdd
	OpSub
	OpMul
	OpDivS
	OpDivU
	OpRemS
	OpRemU
	OpAnd
	OpOr
	OpXor
	OpShl
	OpShrU
	OpShrS
	OpNeg
	OpNot

	// Comparisons.
	OpEq
	OpNe
	OpLtS
	OpLtU
	OpLeS
	OpLeU
	OpGtS
	OpGtU
	OpGeS
	OpGeU

	// Conversions and pointers.
	OpSext
	OpZext
	OpTrunc
	OpIntToPtr
	OpPtrToInt
	OpPtrAdd

	// Memory and locals.
	OpLoad
	OpStore
	OpCopy
	OpGet
	OpSet

	// Calls.
	OpCall
	OpCallIndirect
	OpBuiltin

	// Structured control flow.
	OpIf
	OpLoop
	OpBlock
	OpSwitch
	OpYield
	OpBreak
	OpContinue
	OpReturn
	OpUnreachable

	// Effects.
	OpLLM
	OpJudge
	OpTool
	OpEmit
	OpStateGet
	OpStatePut
	OpWait
	OpStop
	OpTrace
	OpParallel
	OpParallelEach
	OpExport

	// Inline assembly.
	OpAsm

	numOps
)

// Form is the printed shape of an instruction, after "%r, ... = name".
// The printer and the parser both switch on it.
type Form uint8

const (
	FormArgs         Form = iota // name %a, %b, ...
	FormConst                    // const T literal
	FormFuncRef                  // func_ref @f T
	FormAddrOf                   // addr_of $slot | addr_of @data
	FormCast                     // name T %a
	FormLoad                     // load T %p, offset
	FormMem                      // name %a, %b, int          (store: value, ptr, offset; copy: dst, src, size)
	FormGet                      // get $var
	FormSet                      // set $var, %v
	FormCall                     // call @f(%a, ...) -> results
	FormCallIndirect             // call_indirect %f(%a, ...) -> results
	FormBuiltin                  // builtin name(%a, ...)
	FormIf                       // if %c -> results { ... } else { ... }
	FormLoop                     // loop ^L(%p: T = %init, ...) -> results { ... }
	FormBlock                    // block ^L -> results { ... }
	FormSwitch                   // switch %x -> results { case N, ...: ... default: ... }
	FormBranch                   // break ^L %a, ... | continue ^L %a, ...
	FormEffect                   // name "step" [%iter, ...] %a, ...
	FormParallel                 // parallel "step" [%iter, ...] %limit, %arg @f, @g, ...
	FormAsm                      // asm "text" in(rN = %a, ...) out(rN: T, ...)
)

// Constraint is a rule an operand's type must satisfy.
type Constraint uint8

const (
	CAny      Constraint = iota // any type
	CInt                        // i8, i16, i32 or i64
	CIntBool                    // an integer or bool
	CScalar                     // an integer, bool, ptr or function reference
	CIntPtr                     // an integer or ptr
	CSame                       // the type of operand 0
	CBool                       // bool
	CPtr                        // ptr
	CI64                        // i64
	CDyn                        // dyn
	CStorable                   // a type with a memory layout (Type.Storable)
)

// String describes the constraint for messages.
func (c Constraint) String() string {
	return [...]string{
		CAny: "any type", CInt: "an integer", CIntBool: "an integer or bool",
		CScalar: "an integer, bool, ptr or fn", CIntPtr: "an integer or ptr",
		CSame: "the type of operand 1", CBool: "bool", CPtr: "ptr", CI64: "i64",
		CDyn: "dyn", CStorable: "a storable type",
	}[c]
}

// Accepts reports whether t satisfies c, given the type of operand 0.
func (c Constraint) Accepts(t, first Type) bool {
	switch c {
	case CAny:
		return t.IsValid()
	case CInt:
		return t.IsInt()
	case CIntBool:
		return t.IsInt() || t == Bool
	case CScalar:
		return t.Storable()
	case CIntPtr:
		return t.IsInt() || t == Ptr
	case CSame:
		return t == first
	case CBool:
		return t == Bool
	case CPtr:
		return t == Ptr
	case CI64:
		return t == I64
	case CDyn:
		return t == Dyn
	case CStorable:
		return t.Storable()
	}
	return false
}

// ResultRule says how an instruction's result types follow from its
// operands and attributes.
type ResultRule uint8

const (
	RNone     ResultRule = iota // no results
	RSame                       // one result, the type of operand 0
	RBool                       // one bool
	RType                       // one result of the Type attribute
	RPtr                        // one ptr
	RI64                        // one i64
	RDyn                        // one dyn
	RVar                        // one result, the type of the var named by Local
	RBuiltin                    // the builtin's results
	RExplicit                   // printed after "->" (calls, structured ops) or by out bindings (asm)
)

// Flags are properties of an op.
type Flags uint8

const (
	// Terminator ops end a region: control does not reach the next
	// instruction.
	Terminator Flags = 1 << iota
	// Effect ops are the observable steps of an agent program; they carry
	// a step name and iteration counters.
	Effect
	// Pure ops have no side effect and cannot fault: an unused one can be
	// removed and equal ones merged.
	Pure
	// Commutative binary ops give the same result with operands swapped.
	Commutative
)

// OpInfo describes an op.
type OpInfo struct {
	Name     string
	Form     Form
	Args     []Constraint // the operands' types; nil with Variadic
	Variadic bool         // operands are not fixed; the verifier checks them
	// Regions is the number of regions the op owns: 0, or -1 when it
	// depends on the instruction (switch).
	Regions int
	Result  ResultRule
	Flags   Flags
	Doc     string
}

var (
	binInt  = []Constraint{CInt, CSame}
	binLog  = []Constraint{CIntBool, CSame}
	cmpEq   = []Constraint{CScalar, CSame}
	cmpOrd  = []Constraint{CIntPtr, CSame}
	unInt   = []Constraint{CInt}
	valArgs = func(n int) []Constraint {
		c := make([]Constraint, n)
		for i := range c {
			c[i] = CDyn
		}
		return c
	}
)

// opTable is indexed by Op.
var opTable = [numOps]OpInfo{
	OpConst: {Name: "const", Form: FormConst, Result: RType, Flags: Pure,
		Doc: "const T lit: the constant lit of type T. Integers are stored normalized (truncated to the width, sign-extended); bool is true or false; ptr is an address; value is unit, true, false, a number or a string."},
	OpFuncRef: {Name: "func_ref", Form: FormFuncRef, Result: RType, Flags: Pure,
		Doc: "func_ref @f T: a reference to function @f, whose type must be T. Backends without indirect jumps represent it as an index into a dispatch table."},
	OpAddrOf: {Name: "addr_of", Form: FormAddrOf, Result: RPtr, Flags: Pure,
		Doc: "addr_of $slot | addr_of @data: the address of a stack slot of the function or of a read-only data object."},

	OpAdd: {Name: "add", Form: FormArgs, Args: binInt, Result: RSame, Flags: Pure | Commutative,
		Doc: "add a, b: a + b, wrapping modulo 2^N (N the width of the type)."},
	OpSub: {Name: "sub", Form: FormArgs, Args: binInt, Result: RSame, Flags: Pure,
		Doc: "sub a, b: a - b, wrapping."},
	OpMul: {Name: "mul", Form: FormArgs, Args: binInt, Result: RSame, Flags: Pure | Commutative,
		Doc: "mul a, b: a * b, wrapping (the low N bits of the product)."},
	OpDivS: {Name: "div.s", Form: FormArgs, Args: binInt, Result: RSame,
		Doc: "div.s a, b: signed division truncating toward zero; MIN / -1 wraps to MIN; b = 0 faults DIVIDE_BY_ZERO."},
	OpDivU: {Name: "div.u", Form: FormArgs, Args: binInt, Result: RSame,
		Doc: "div.u a, b: unsigned division; b = 0 faults DIVIDE_BY_ZERO."},
	OpRemS: {Name: "rem.s", Form: FormArgs, Args: binInt, Result: RSame,
		Doc: "rem.s a, b: signed remainder, with the sign of a; MIN rem.s -1 is 0; b = 0 faults DIVIDE_BY_ZERO."},
	OpRemU: {Name: "rem.u", Form: FormArgs, Args: binInt, Result: RSame,
		Doc: "rem.u a, b: unsigned remainder; b = 0 faults DIVIDE_BY_ZERO."},
	OpAnd: {Name: "and", Form: FormArgs, Args: binLog, Result: RSame, Flags: Pure | Commutative,
		Doc: "and a, b: bitwise and of integers, logical and (not short-circuit) of bools."},
	OpOr: {Name: "or", Form: FormArgs, Args: binLog, Result: RSame, Flags: Pure | Commutative,
		Doc: "or a, b: bitwise or of integers, logical or (not short-circuit) of bools."},
	OpXor: {Name: "xor", Form: FormArgs, Args: binLog, Result: RSame, Flags: Pure | Commutative,
		Doc: "xor a, b: bitwise exclusive or of integers or bools."},
	OpShl: {Name: "shl", Form: FormArgs, Args: binInt, Result: RSame, Flags: Pure,
		Doc: "shl a, b: a shifted left by b mod 64 (b read unsigned), truncated to the width: shifting an i8 by 8..63 gives 0."},
	OpShrU: {Name: "shr.u", Form: FormArgs, Args: binInt, Result: RSame, Flags: Pure,
		Doc: "shr.u a, b: a zero-extended to 64 bits, shifted right logically by b mod 64, truncated."},
	OpShrS: {Name: "shr.s", Form: FormArgs, Args: binInt, Result: RSame, Flags: Pure,
		Doc: "shr.s a, b: a sign-extended to 64 bits, shifted right arithmetically by b mod 64, truncated."},
	OpNeg: {Name: "neg", Form: FormArgs, Args: unInt, Result: RSame, Flags: Pure,
		Doc: "neg a: 0 - a, wrapping."},
	OpNot: {Name: "not", Form: FormArgs, Args: []Constraint{CIntBool}, Result: RSame, Flags: Pure,
		Doc: "not a: the bitwise complement of an integer, the negation of a bool."},

	OpEq: {Name: "eq", Form: FormArgs, Args: cmpEq, Result: RBool, Flags: Pure | Commutative,
		Doc: "eq a, b: a = b, for integers, bool, ptr and function references."},
	OpNe: {Name: "ne", Form: FormArgs, Args: cmpEq, Result: RBool, Flags: Pure | Commutative,
		Doc: "ne a, b: a ≠ b."},
	OpLtS: {Name: "lt.s", Form: FormArgs, Args: cmpOrd, Result: RBool, Flags: Pure,
		Doc: "lt.s a, b: a < b, signed."},
	OpLtU: {Name: "lt.u", Form: FormArgs, Args: cmpOrd, Result: RBool, Flags: Pure,
		Doc: "lt.u a, b: a < b, unsigned."},
	OpLeS: {Name: "le.s", Form: FormArgs, Args: cmpOrd, Result: RBool, Flags: Pure,
		Doc: "le.s a, b: a ≤ b, signed."},
	OpLeU: {Name: "le.u", Form: FormArgs, Args: cmpOrd, Result: RBool, Flags: Pure,
		Doc: "le.u a, b: a ≤ b, unsigned."},
	OpGtS: {Name: "gt.s", Form: FormArgs, Args: cmpOrd, Result: RBool, Flags: Pure,
		Doc: "gt.s a, b: a > b, signed."},
	OpGtU: {Name: "gt.u", Form: FormArgs, Args: cmpOrd, Result: RBool, Flags: Pure,
		Doc: "gt.u a, b: a > b, unsigned."},
	OpGeS: {Name: "ge.s", Form: FormArgs, Args: cmpOrd, Result: RBool, Flags: Pure,
		Doc: "ge.s a, b: a ≥ b, signed."},
	OpGeU: {Name: "ge.u", Form: FormArgs, Args: cmpOrd, Result: RBool, Flags: Pure,
		Doc: "ge.u a, b: a ≥ b, unsigned."},

	OpSext: {Name: "sext", Form: FormCast, Args: unInt, Result: RType, Flags: Pure,
		Doc: "sext T a: a sign-extended to the wider integer type T."},
	OpZext: {Name: "zext", Form: FormCast, Args: []Constraint{CIntBool}, Result: RType, Flags: Pure,
		Doc: "zext T a: a (an integer or bool) zero-extended to the wider integer type T; true is 1."},
	OpTrunc: {Name: "trunc", Form: FormCast, Args: unInt, Result: RType, Flags: Pure,
		Doc: "trunc T a: the low bits of a, as the narrower integer type T, or as bool (the lowest bit)."},
	OpIntToPtr: {Name: "inttoptr", Form: FormArgs, Args: []Constraint{CI64}, Result: RPtr, Flags: Pure,
		Doc: "inttoptr a: the i64 a as an address."},
	OpPtrToInt: {Name: "ptrtoint", Form: FormArgs, Args: []Constraint{CPtr}, Result: RI64, Flags: Pure,
		Doc: "ptrtoint p: the address p as an i64."},
	OpPtrAdd: {Name: "ptradd", Form: FormArgs, Args: []Constraint{CPtr, CI64}, Result: RPtr, Flags: Pure,
		Doc: "ptradd p, n: the address p + n bytes, wrapping modulo 2^64."},

	OpLoad: {Name: "load", Form: FormLoad, Args: []Constraint{CPtr}, Result: RType,
		Doc: "load T p, off: the value of storable type T at address p + off (off a signed 32-bit byte offset), little-endian; a bool is true when its byte is nonzero. A bad address faults."},
	OpStore: {Name: "store", Form: FormMem, Args: []Constraint{CStorable, CPtr},
		Doc: "store v, p, off: writes v at address p + off, little-endian, in v's type's size (a bool as 0 or 1). A read-only or bad address faults."},
	OpCopy: {Name: "copy", Form: FormMem, Args: []Constraint{CPtr, CPtr},
		Doc: "copy dst, src, n: copies n bytes (a constant ≥ 0) from src to dst, as if through a temporary buffer (the ranges may overlap)."},
	OpGet: {Name: "get", Form: FormGet, Result: RVar,
		Doc: "get $v: the current value of var $v."},
	OpSet: {Name: "set", Form: FormSet, Args: []Constraint{CAny},
		Doc: "set $v, x: assigns x, of the var's type, to var $v."},

	OpCall: {Name: "call", Form: FormCall, Variadic: true, Result: RExplicit,
		Doc: "call @f(args) -> results: calls function @f; the arguments and the printed results match @f's signature."},
	OpCallIndirect: {Name: "call_indirect", Form: FormCallIndirect, Variadic: true, Result: RExplicit,
		Doc: "call_indirect %f(args) -> results: calls the function referenced by %f, whose fn type the arguments and results match."},
	OpBuiltin: {Name: "builtin", Form: FormBuiltin, Variadic: true, Result: RBuiltin,
		Doc: "builtin name(args): calls a runtime builtin of the table in builtins.go, with its declared signature; builtins operate on dynamic values and never perform effects."},

	OpIf: {Name: "if", Form: FormIf, Args: []Constraint{CBool}, Regions: 2, Result: RExplicit,
		Doc: "if c -> results { then } else { else }: runs then when c is true, else otherwise; the region that runs yields the results."},
	OpLoop: {Name: "loop", Form: FormLoop, Variadic: true, Regions: 1, Result: RExplicit,
		Doc: "loop ^L(%p: T = init, ...) -> results { body }: runs body with its parameters bound to the inits; continue ^L rebinds them and runs body again; break ^L leaves the loop with the results. The body must end in a terminator."},
	OpBlock: {Name: "block", Form: FormBlock, Regions: 1, Result: RExplicit,
		Doc: "block ^L -> results { body }: runs body; yield, or break ^L from any depth, leaves it with the results."},
	OpSwitch: {Name: "switch", Form: FormSwitch, Args: unInt, Regions: -1, Result: RExplicit,
		Doc: "switch x -> results { case N, ...: ... default: ... }: runs the first case region listing x (case values are distinct, normalized to x's type), or the default region; it yields the results."},
	OpYield: {Name: "yield", Form: FormArgs, Variadic: true, Flags: Terminator,
		Doc: "yield args: leaves the enclosing if, switch or block region with the results of the instruction owning it. A region of an op without results may end without it."},
	OpBreak: {Name: "break", Form: FormBranch, Variadic: true, Flags: Terminator,
		Doc: "break ^L args: leaves the enclosing loop or block labelled ^L with args as its results."},
	OpContinue: {Name: "continue", Form: FormBranch, Variadic: true, Flags: Terminator,
		Doc: "continue ^L args: starts the next iteration of the enclosing loop ^L with args as its parameters."},
	OpReturn: {Name: "return", Form: FormArgs, Variadic: true, Flags: Terminator,
		Doc: "return args: returns from the function with args as its results. A function without results may end without it."},
	OpUnreachable: {Name: "unreachable", Form: FormArgs, Args: []Constraint{}, Flags: Terminator,
		Doc: "unreachable: control never gets here; reaching it is a fault (Forge: FAULT 0)."},

	OpLLM: {Name: "llm", Form: FormEffect, Args: valArgs(2), Result: RDyn, Flags: Effect,
		Doc: "llm \"step\" [iters] prompt, options: an LLM completion of the prompt (a string value) with options (an object: model, schema, temperature, retries, timeout, …); the completion, or an error value."},
	OpJudge: {Name: "judge", Form: FormEffect, Args: valArgs(2), Result: RDyn, Flags: Effect,
		Doc: "judge \"step\" [iters] question, options: a boolean judgement by a model; a bool value or an error value."},
	OpTool: {Name: "tool", Form: FormEffect, Args: valArgs(2), Result: RDyn, Flags: Effect,
		Doc: "tool \"step\" [iters] name, args: calls the tool name (a string value) with args (an object); its reply, or an error value."},
	OpEmit: {Name: "emit", Form: FormEffect, Args: valArgs(2), Flags: Effect,
		Doc: "emit \"step\" [iters] name, payload: emits the event name with payload."},
	OpStateGet: {Name: "state.get", Form: FormEffect, Args: valArgs(1), Result: RDyn, Flags: Effect,
		Doc: "state.get \"step\" [iters] key: the persistent state's value at key, unit when absent."},
	OpStatePut: {Name: "state.put", Form: FormEffect, Args: valArgs(2), Flags: Effect,
		Doc: "state.put \"step\" [iters] key, v: sets the persistent state at key to v."},
	OpWait: {Name: "wait", Form: FormEffect, Args: valArgs(1), Result: RDyn, Flags: Effect,
		Doc: "wait \"step\" [iters] request: suspends until the request (a duration, or a pending tool's resume) is satisfied; the resume payload."},
	OpStop: {Name: "stop", Form: FormEffect, Args: valArgs(2), Flags: Effect | Terminator,
		Doc: "stop \"step\" [iters] status, error: ends the run with status (a string value: \"failed\", \"budget_exceeded\", \"stalled\" or \"suspended\") and error (an error value, or unit) at this step; control does not return."},
	OpParallel: {Name: "parallel", Form: FormParallel, Args: []Constraint{CI64, CDyn}, Result: RDyn, Flags: Effect,
		Doc: "parallel \"step\" [iters] limit, arg @f, @g, ...: calls each branch function (fn(value) -> value) with arg, at most limit at once (limit <= 0: no bound); the list of their results, in branch order. Each branch's effects have identities of their own under the block's; the trace and the result do not depend on timing."},
	OpParallelEach: {Name: "parallel.each", Form: FormParallel, Args: []Constraint{CI64, CDyn}, Result: RDyn, Flags: Effect,
		Doc: "parallel.each \"step\" [iters] limit, items @f: calls the branch function f (fn(value) -> value) on each element of the list items, at most limit at once (limit <= 0: no bound); the list of their results, in the items' order. Branch i is the block's branch i, as for parallel."},
	OpExport: {Name: "export", Form: FormEffect, Args: valArgs(2), Flags: Effect,
		Doc: "export \"step\" [iters] name, v: sets the run result's export name (a string value) to v; it asks nothing of the world, so journals do not record it."},
	OpTrace: {Name: "trace", Form: FormEffect, Args: valArgs(2), Flags: Effect,
		Doc: "trace \"step\" [iters] event, payload: records an event of a step that performs no other effect (event a string value: \"completed\", \"skipped\" or \"failed\"; payload its output or reason) in the run's trace; it asks nothing of the world, so journals do not record it."},

	OpAsm: {Name: "asm", Form: FormAsm, Variadic: true, Result: RExplicit,
		Doc: "asm \"text\" in(rN = %a, ...) out(rN: T, ...): Forge assembly text run with each in register holding its operand; each out register's content afterwards is a result: for a narrow integer type its low bits, sign-extended, for bool whether it is nonzero. Registers not bound are saved and restored around the block."},
}

var opByName = func() map[string]Op {
	m := make(map[string]Op, numOps)
	for op := OpInvalid + 1; op < numOps; op++ {
		m[opTable[op].Name] = op
	}
	return m
}()

// Info returns the op table entry of op. Invalid ops have an entry with an
// empty name.
func (op Op) Info() *OpInfo {
	if op >= numOps {
		return &opTable[OpInvalid]
	}
	return &opTable[op]
}

// String returns the op's printed name.
func (op Op) String() string {
	if n := op.Info().Name; n != "" {
		return n
	}
	return "invalid"
}

// LookupOp returns the op with the printed name.
func LookupOp(name string) (Op, bool) {
	op, ok := opByName[name]
	return op, ok
}

// Ops returns every valid op, in table order.
func Ops() []Op {
	ops := make([]Op, 0, numOps-1)
	for op := OpInvalid + 1; op < numOps; op++ {
		ops = append(ops, op)
	}
	return ops
}

// IsTerminator reports whether the op ends a region.
func (op Op) IsTerminator() bool { return op.Info().Flags&Terminator != 0 }

// IsEffect reports whether the op is an effect.
func (op Op) IsEffect() bool { return op.Info().Flags&Effect != 0 }

// inferResults returns the result types an instruction's op rule gives,
// from its operands and attributes, and false for RExplicit (the results
// are whatever the instruction declares) or when they cannot be inferred
// (a missing operand or local, an unknown builtin).
func inferResults(f *Func, in *Instr) ([]Type, bool) {
	info := in.Info()
	switch info.Result {
	case RNone:
		return nil, true
	case RSame:
		if len(in.Args) == 0 {
			return nil, false
		}
		return []Type{in.Args[0].Type}, true
	case RBool:
		return []Type{Bool}, true
	case RType:
		return []Type{in.Type}, true
	case RPtr:
		return []Type{Ptr}, true
	case RI64:
		return []Type{I64}, true
	case RDyn:
		return []Type{Dyn}, true
	case RVar:
		if l := f.Local(in.Local); l != nil && l.Kind == Var {
			return []Type{l.Type}, true
		}
	case RBuiltin:
		if b, ok := LookupBuiltin(in.Sym); ok {
			return b.Results, true
		}
	}
	return nil, false
}
