// Package opt is the optimizer: a fixed, ordered table of passes over an
// ir.Module, in the style of Go's cmd/compile/internal/ssa. Each pass
// lives in a file of its own and takes a verified module to a verified
// module with the same observable behaviour: the same results, the same
// faults (a division by zero still faults), and the same effects, memory
// operations, calls and asm blocks in the same order.
//
// docs/opt.md describes every pass and the reasons for the order.
package opt

import (
	"fmt"
	"sync"
	"testing"

	"github.com/genesis-toolchain/genesis/internal/parallel"
	"github.com/genesis-toolchain/genesis/ir"
)

// Pass is one entry of the pass table.
type Pass struct {
	// Name identifies the pass, e.g. in --dump-after=NAME and in the
	// message of an internal error. A pass that runs twice has a distinct
	// name for each run ("late-constfold").
	Name string
	// Func rewrites the module in place.
	Func func(m *ir.Module)
	// Doc says what the pass does, in one sentence.
	Doc string
	// Required passes run at every level, -O0 included: what they do is
	// part of compiling, not of optimizing. Their Level is 0.
	Required bool
	// Level is the lowest optimization level (-O1, -O2) that runs an
	// optional pass.
	Level int
}

// passes is the pipeline, in order. The comment on each entry says what
// it needs from the passes before it; passOrder states the same as data,
// checked when the package starts.
var passes = [...]Pass{
	// deadfuncs comes first so that no pass spends time on a function
	// the program never calls (a Genesis prelude is mostly such), and is
	// required: the backends compile only what the program can reach.
	{Name: "deadfuncs", Func: deadfuncs, Required: true,
		Doc: "removes the functions that main does not reach through calls, function references, parallel branches or asm CALLs"},
	// mem2reg comes first among the optimizations: every other pass
	// reasons about SSA values, and get/set of a var hide the values
	// that flow through it.
	{Name: "mem2reg", Func: mem2reg, Level: 1,
		Doc: "promotes every var to SSA values: loop parameters, region results and the values set"},
	// copyprop follows mem2reg, which adds a loop parameter or region
	// result for every var set inside a loop or region; most of them
	// only carry a value through, and replacing them lets constfold see
	// the constants behind them.
	{Name: "copyprop", Func: copyprop, Level: 1,
		Doc: "replaces loop parameters and region results that always receive the same value by that value"},
	// constfold needs the constants copyprop exposed; it deletes the
	// untaken arm of constant ifs and switches, which creates work for
	// simplify and deadcode.
	{Name: "constfold", Func: constfold, Level: 1,
		Doc: "evaluates integer operations on constants, applies algebraic identities, and resolves if and switch on constants"},
	// simplify runs after constfold, whose resolved branches leave blocks
	// that no longer break and loops that no longer continue, and before
	// deadcode, since its rewrites leave operands unused.
	{Name: "simplify", Func: simplify, Level: 1,
		Doc: "simplifies structured control flow: blocks without breaks, loops without continues, identical or empty arms, unreachable code"},
	// deadcode ends the first round, removing everything the passes
	// before it left unused, so that inline measures callees at their
	// optimized size.
	{Name: "deadcode", Func: deadcode, Level: 1,
		Doc: "removes unused pure instructions, unused region results and loop parameters, empty structured ops and unused slots"},
	// inline runs on cleaned-up functions (sizes are meaningful, bodies
	// are in SSA form) and before the late round, which folds each
	// inlined body with the constants of its call site.
	{Name: "inline", Func: inline, Level: 2,
		Doc: "replaces calls to small non-recursive functions without effects by a copy of their body"},
	// The late round repeats the first after inlining, in the same order
	// for the same reasons.
	{Name: "late-copyprop", Func: copyprop, Level: 2,
		Doc: "copyprop again, on inlined bodies"},
	{Name: "late-constfold", Func: constfold, Level: 2,
		Doc: "constfold again, with the call sites' constants"},
	{Name: "late-simplify", Func: simplify, Level: 2,
		Doc: "simplify again: inlined bodies are blocks whose return became a break"},
	// strength needs the constants constfold found (inlined call sites'
	// included) and leaves the constants it replaced to deadcode.
	{Name: "strength", Func: strength, Level: 2,
		Doc: "replaces multiplications, divisions and remainders by constants with shifts, masks and magic multiplications where the Forge tick costs say they are cheaper"},
	// looprotate works on the loops simplify left (a loop without
	// continue is a block by then) and before deadcode, which removes
	// the loop parameters rotation leaves unused.
	{Name: "looprotate", Func: looprotate, Level: 2,
		Doc: "turns loops tested at the top into a guard and a loop tested at the bottom, one jump per iteration (a <= or >= of two variables versioned on the bound's extreme value)"},
	// jumpthread follows looprotate, which copies a loop's test (a && b
	// included) before the loop and to its bottom, so that both copies
	// are threaded; threading first would leave an exit test that
	// rotation does not take (an if whose else arm breaks).
	{Name: "jumpthread", Func: jumpthread, Level: 2,
		Doc: "threads the arms of an if that yields a bool (a && b, a || b) straight to the arms of the if that tests it"},
	// ivsimplify follows looprotate, which moves the continues it adds
	// an operand to, and strength, whose shifts it reads as the linear
	// offsets they are; deadcode then removes the offsets it replaced.
	{Name: "ivsimplify", Func: ivsimplify, Level: 2,
		Doc: "steps addresses that are linear in a loop's induction variable as pointer loop parameters"},
	// licm and gvn (issue 17) work on the cleaned-up, inlined functions,
	// after rotation (a rotated loop's body runs at least once under its
	// guard, which lets licm hoist what may fault) and the stepping of
	// addresses (whose strides and duplicate shifts they gather and
	// merge): licm first, since what it moves out of nested loops meets, before
	// the outer loop, the copies gvn then merges (i*n of an inner loop
	// and of its parent); both before late-deadcode, so that the module
	// leaving the pipeline is swept after every rewrite.
	{Name: "licm", Func: licm, Level: 2,
		Doc: "hoists loop-invariant computations out of loops: pure ops from anywhere, and loads, divisions and builtins only when certain to run first"},
	{Name: "gvn", Func: gvn, Level: 2,
		Doc: "merges instructions that compute what a dominating one computed: pure ops, divisions, builtins, and loads with no write between"},
	{Name: "late-deadcode", Func: deadcode, Level: 2,
		Doc: "deadcode again, so the result holds nothing unused"},
	// late-deadfuncs ends the pipeline: inline leaves callees with no
	// call left, and constfold and simplify delete calls in arms that
	// never run.
	{Name: "late-deadfuncs", Func: deadfuncs, Level: 1,
		Doc: "deadfuncs again, last: inlined callees and functions called only from deleted code go"},
}

// Order is one ordering constraint of the pass table: pass Before must
// come before pass After.
type Order struct {
	Before, After string
}

// passOrder is every ordering the passes rely on, as data: init checks
// it against the table, so that moving a pass to a place where what it
// needs has not run yet fails at start-up, naming both passes, and not
// as a miscompilation. The reason for each is the comment on the later
// pass's entry in passes.
var passOrder = [...]Order{
	// Nothing optimizes a function the program never calls.
	{"deadfuncs", "mem2reg"},
	// Every pass but deadfuncs reasons about SSA values.
	{"mem2reg", "copyprop"},
	{"mem2reg", "constfold"},
	{"mem2reg", "simplify"},
	{"mem2reg", "deadcode"},
	{"mem2reg", "inline"},
	// constfold folds the constants copyprop exposes.
	{"copyprop", "constfold"},
	// simplify cleans up after the branches constfold resolved; deadcode
	// after both.
	{"constfold", "simplify"},
	{"simplify", "deadcode"},
	// inline measures callees at their optimized size.
	{"deadcode", "inline"},
	// The late round works on inlined bodies, in the first round's order.
	{"inline", "late-copyprop"},
	{"late-copyprop", "late-constfold"},
	{"late-constfold", "late-simplify"},
	{"late-simplify", "late-deadcode"},
	// strength reduces by the constants constfold found; deadcode
	// removes those it left unused. looprotate rotates simplified loops.
	{"late-constfold", "strength"},
	{"strength", "late-deadcode"},
	{"late-simplify", "looprotate"},
	{"looprotate", "late-deadcode"},
	{"looprotate", "ivsimplify"},
	{"late-simplify", "jumpthread"},
	{"looprotate", "jumpthread"},
	{"jumpthread", "late-deadcode"},
	{"strength", "ivsimplify"},
	{"ivsimplify", "late-deadcode"},
	// licm and gvn work on inlined, simplified bodies; gvn merges what
	// licm gathered before loops; late-deadcode sweeps after them.
	{"late-simplify", "licm"},
	{"ivsimplify", "licm"},
	{"looprotate", "licm"},
	{"licm", "gvn"},
	{"gvn", "late-deadcode"},
	// Calls disappear by inlining and with the code constfold and
	// simplify delete: functions become unreachable only then.
	{"inline", "late-deadfuncs"},
	{"constfold", "late-deadfuncs"},
	{"simplify", "late-deadfuncs"},
	{"late-constfold", "late-deadfuncs"},
	{"late-simplify", "late-deadfuncs"},
}

func init() {
	if err := checkTable(passes[:], passOrder[:]); err != nil {
		panic(err)
	}
}

// checkTable returns an error naming the first pass (and for an
// ordering constraint, both passes) of table that breaks the table's
// rules: unique non-empty names, a function and a doc for every pass,
// required passes at level 0 and optional ones in 1..MaxLevel, and every
// constraint of order naming two passes of the table, in that order.
func checkTable(table []Pass, order []Order) error {
	index := make(map[string]int, len(table))
	for i, p := range table {
		switch {
		case p.Name == "":
			return fmt.Errorf("opt: pass %d has no name", i)
		case p.Func == nil || p.Doc == "":
			return fmt.Errorf("opt: pass %q has no function or no doc", p.Name)
		case p.Required && p.Level != 0:
			return fmt.Errorf("opt: required pass %q has level %d: required passes run at every level", p.Name, p.Level)
		case !p.Required && (p.Level < 1 || p.Level > MaxLevel):
			return fmt.Errorf("opt: pass %q has level %d, not 1..%d", p.Name, p.Level, MaxLevel)
		}
		if _, dup := index[p.Name]; dup {
			return fmt.Errorf("opt: pass %q appears twice", p.Name)
		}
		index[p.Name] = i
	}
	for _, o := range order {
		i, ok := index[o.Before]
		if !ok {
			return fmt.Errorf("opt: ordering constraint %q before %q: no pass %q", o.Before, o.After, o.Before)
		}
		j, ok := index[o.After]
		if !ok {
			return fmt.Errorf("opt: ordering constraint %q before %q: no pass %q", o.Before, o.After, o.After)
		}
		if i >= j {
			return fmt.Errorf("opt: passes %q and %q are out of order: %q must run before %q", o.Before, o.After, o.Before, o.After)
		}
	}
	return nil
}

// Passes returns the pass table, in order.
func Passes() []Pass { return append([]Pass(nil), passes[:]...) }

// Constraints returns the ordering constraints of the pass table.
func Constraints() []Order { return append([]Order(nil), passOrder[:]...) }

// Lookup returns the pass named name. Drivers use it to validate
// --dump-after.
func Lookup(name string) (Pass, bool) {
	for _, p := range passes {
		if p.Name == name {
			return p, true
		}
	}
	return Pass{}, false
}

// Runs reports whether pass p runs at optimization level level.
func (p Pass) Runs(level int) bool { return p.Required || p.Level <= level }

// MaxLevel is the highest optimization level; Run treats higher levels
// as MaxLevel.
const MaxLevel = 2

// Hooks lets a caller observe and check the pipeline.
type Hooks struct {
	// AfterPass, if not nil, is called after each pass that runs, with
	// the module as that pass left it (before VerifyEach checks it, so
	// that --dump-after shows a module that does not verify). A driver
	// implements --dump-after=NAME with it.
	AfterPass func(p Pass, m *ir.Module)
	// VerifyEach runs ir.Verify after every pass: a module that does not
	// verify stops the pipeline with an InternalError naming the pass.
	// It is on in every test binary whatever its value (testing.Testing),
	// so that every test that optimizes checks every pass.
	VerifyEach bool
}

// InternalError is a bug of the optimizer: a pass panicked, or left a
// module that does not verify. Pass names the pass.
type InternalError struct {
	Pass string
	Msg  string
}

func (e *InternalError) Error() string {
	return fmt.Sprintf("internal compiler error in pass %q: %s", e.Pass, e.Msg)
}

// Run optimizes m in place by running, in table order, the required
// passes and every pass whose Level is at most level (-O0 runs only the
// required passes, -O2 everything). m must verify; it verifies
// afterwards. hooks may be nil. The error, an *InternalError, reports a
// bug of the optimizer: a pass that panicked, or with VerifyEach (always
// in tests) a pass after which the module does not verify; m is then in
// an unspecified state.
//
// The pipeline is the same for every target: the native and Go targets
// reproduce the Forge program's use of the stacks instruction by
// instruction (docs/decisions.md, N4), so they compile the module Forge
// compiles.
func Run(m *ir.Module, level int, hooks *Hooks) error {
	return run(passes[:], m, level, hooks)
}

// run is Run on any table, so that tests can run one with a broken pass.
func run(table []Pass, m *ir.Module, level int, hooks *Hooks) error {
	if hooks == nil {
		hooks = &Hooks{}
	}
	verify := hooks.VerifyEach || testing.Testing()
	for _, p := range table {
		if !p.Runs(level) {
			continue
		}
		if err := runPass(p, m); err != nil {
			return err
		}
		if hooks.AfterPass != nil {
			hooks.AfterPass(p, m)
		}
		if verify {
			if ds := ir.Verify(m); len(ds) > 0 {
				return &InternalError{Pass: p.Name, Msg: "the module does not verify after it: " + ds.Error()}
			}
		}
	}
	return nil
}

// runPass runs p on m, turning a panic of the pass (on any goroutine
// forEachFunc started) into an InternalError that names it.
func runPass(p Pass, m *ir.Module) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = &InternalError{Pass: p.Name, Msg: fmt.Sprint(r)}
		}
	}()
	p.Func(m)
	return nil
}

// forEachFunc calls fn on every function of m, concurrently when there
// are enough of them to pay for it. The function passes (all but inline)
// read and write nothing outside the function they are given, so the
// result does not depend on scheduling.
//
// A panic of fn on a worker goroutine is not lost with that goroutine:
// the first one is raised again on the caller's, once every call has
// returned, so that Run reports it as the pass's internal error.
func forEachFunc(m *ir.Module, fn func(f *ir.Func)) {
	var (
		mu       sync.Mutex
		panicked bool
		first    any
	)
	parallel.Do(len(m.Funcs), len(m.Funcs)/minFuncsPerWorker, func(i int) {
		defer func() {
			if r := recover(); r != nil {
				mu.Lock()
				if !panicked {
					panicked, first = true, fmt.Sprintf("function @%s: %v", m.Funcs[i].Name, r)
				}
				mu.Unlock()
			}
		}()
		fn(m.Funcs[i])
	})
	if panicked {
		panic(first)
	}
}

// minFuncsPerWorker keeps small modules on one goroutine.
const minFuncsPerWorker = 16
