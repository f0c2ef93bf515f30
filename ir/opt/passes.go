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
	"github.com/genesis-toolchain/genesis/internal/par"
	"github.com/genesis-toolchain/genesis/ir"
)

// Pass is one entry of the pass table.
type Pass struct {
	// Name identifies the pass, e.g. in --dump-after=NAME. A pass that
	// runs twice has a distinct name for each run ("late-constfold").
	Name string
	// Func rewrites the module in place.
	Func func(m *ir.Module)
	// Doc says what the pass does, in one sentence.
	Doc string
	// Level is the lowest optimization level (-O1, -O2) that runs the
	// pass. No pass is mandatory: every backend accepts the IR as
	// frontends build it, so -O0 runs nothing.
	Level int
}

// passes is the pipeline, in order. The comment on each entry says why it
// sits where it does.
var passes = [...]Pass{
	// mem2reg comes first: every other pass reasons about SSA values, and
	// get/set of a var hide the values that flow through it.
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
	{Name: "late-deadcode", Func: deadcode, Level: 2,
		Doc: "deadcode again, last, so the result holds nothing unused"},
}

// Passes returns the pass table, in order.
func Passes() []Pass { return append([]Pass(nil), passes[:]...) }

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

// MaxLevel is the highest optimization level; Run treats higher levels
// as MaxLevel.
const MaxLevel = 2

// Hooks lets a caller observe and shape the pipeline.
type Hooks struct {
	// AfterPass, if not nil, is called after each pass that runs, with
	// the module as that pass left it. A driver implements
	// --dump-after=NAME with it; tests verify the module after every pass.
	AfterPass func(p Pass, m *ir.Module)
}

// Run optimizes m in place by running, in table order, every pass whose
// Level is at most level (-O0 runs nothing, -O2 everything). m must
// verify; it verifies afterwards. hooks may be nil.
//
// The pipeline is the same for every target: the native and Go targets
// reproduce the Forge program's use of the stacks instruction by
// instruction (docs/decisions.md, N4), so they compile the module Forge
// compiles.
func Run(m *ir.Module, level int, hooks *Hooks) {
	for _, p := range passes {
		if p.Level > level {
			continue
		}
		p.Func(m)
		if hooks != nil && hooks.AfterPass != nil {
			hooks.AfterPass(p, m)
		}
	}
}

// forEachFunc calls fn on every function of m, concurrently when there
// are enough of them to pay for it. The function passes (all but inline)
// read and write nothing outside the function they are given, so the
// result does not depend on scheduling.
func forEachFunc(m *ir.Module, fn func(f *ir.Func)) {
	par.Do(len(m.Funcs), len(m.Funcs)/minFuncsPerWorker, func(i int) { fn(m.Funcs[i]) })
}

// minFuncsPerWorker keeps small modules on one goroutine.
const minFuncsPerWorker = 16
