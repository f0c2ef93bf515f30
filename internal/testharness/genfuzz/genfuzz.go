// Package genfuzz generates random well-typed Genesis programs for the
// differential test of the three targets (internal/testharness/difftest), and shrinks
// a program on which they disagree to a small reproducer.
//
// A program is a few functions and a main, over integer variables of
// mixed widths and signedness: assignments of random expressions (every
// arithmetic, bitwise, shift and comparison operator, casts), ifs,
// bounded loops, prints, and calls, each a statement assigning the
// callee's result to a variable. A function has parameters, locals,
// sometimes a local array (a frame on the shadow stack) and a result; it
// calls only functions defined before it, or itself when it is
// recursive: then its first parameter d counts the levels left, it
// returns at d == 0 and calls itself, once or twice, with d - 1. Most
// calls of a recursive function pass a small d; some pass 100000, deeper
// than the Forge Machine's stacks allow, so that the targets must fault
// at the same depth, after the same output. Main ends by printing every
// variable. Division and remainder by a value that may be zero are kept:
// the targets must then fault alike. A cost model bounds the work a
// program does (calls in loops, recursion), so every run is short.
//
// Each program also runs on machines of random sizes (Program.Limits):
// memory quotas from a few KiB to a few MiB and machine stacks from none
// to 512 KiB, odd sizes among them, so that the targets must agree on
// where the heap ends and the stacks run out, and on OUT_OF_MEMORY when
// the quota does not hold code, data and the stack.
//
// The statements form trees that Shrink prunes; it also removes the
// functions no call is left to.
package genfuzz

import (
	"fmt"
	"math"
	"math/rand"
	"strings"

	"github.com/genesis-toolchain/genesis/compiler"
	"github.com/genesis-toolchain/genesis/internal/testharness/difftest"
)

// The integer types of the variables.
var intTypes = []string{"i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64"}

func bits(t string) int {
	var n int
	fmt.Sscanf(t[1:], "%d", &n)
	return n
}

// Generation limits.
const (
	maxFuncs = 4
	// budget bounds the statements a program runs, as the cost model
	// estimates them.
	budget = 200_000
	// deepLevels is the d of the calls meant to outgrow the stacks: the
	// machine stack holds at most 8192 return addresses.
	deepLevels = 100_000
)

// Program is a generated program: its functions, and main's variables
// and statements.
type Program struct {
	Funcs []*Func
	Vars  []Var
	Stmts []*Stmt
	// Limits are the machines the program runs on besides forge exec's
	// default one.
	Limits []difftest.Limits
}

// randomLimits are n machines of random sizes: a stack of 0 to 512 KiB
// (log-uniform, a multiple of 8 but sometimes not), and a memory quota
// that much larger plus 1 KiB to 4 MiB (log-uniform, sometimes odd), so
// that code and data (a few KiB) sometimes do not fit.
func randomLimits(r *rand.Rand, n int) []difftest.Limits {
	logUniform := func(lo, hi float64) uint64 {
		return uint64(math.Exp(math.Log(lo) + r.Float64()*(math.Log(hi)-math.Log(lo))))
	}
	var out []difftest.Limits
	for i := 0; i < n; i++ {
		var stack uint64
		switch r.Intn(8) {
		case 0:
			stack = uint64(r.Intn(16)) // nothing, or too little for main's return address
		default:
			stack = logUniform(64, 512<<10)
			if r.Intn(4) > 0 {
				stack &^= 7
			}
		}
		memory := stack + logUniform(1<<10, 4<<20)
		if r.Intn(4) > 0 {
			memory &^= 7
		}
		out = append(out, difftest.Limits{Memory: memory, Stack: stack})
	}
	return out
}

// Var is a variable of the program and its initial value.
type Var struct {
	Name, Type string
	Init       int64
}

// Func is a generated function. Its locals start as Inits (expressions
// over the parameters); its body assigns them; it returns Ret.
type Func struct {
	Name   string
	Params []Var // Init unused
	Result string
	// Rec marks a recursive function: its first parameter d (u64, not
	// in Params) counts the levels left; at d == 0 it returns Base.
	Rec    bool
	Base   string
	Locals []Var
	Inits  []string
	// Array is the length of the local array a of u64, 0 for none.
	Array     int
	ArrayInit string
	Body      []*Stmt
	Ret       string
}

// Stmt is a statement: an assignment, a print or a call (Text is the
// whole statement; Callee names the function a call calls), or an if or
// bounded loop (Text is its head) with a body.
type Stmt struct {
	Text   string
	Body   []*Stmt
	Else   []*Stmt
	If     bool   // an if; Text is its condition
	Loop   bool   // a loop; Text is its counter's name
	N      int    // the loop's iteration count
	Callee string // a call of this function
}

// gen is the state of one generation.
type gen struct {
	r     *rand.Rand
	loops int
	funcs []*Func
	costs []int // each function's cost, at the largest d its calls pass

	// The scope of the body being generated.
	vars []Var  // readable: parameters and variables
	muts []Var  // assignable
	self *Func  // the function being generated, nil in main
	arr  int    // the length of its array a, 0 for none
	mult int    // the times the statement runs per run of the body
	cost *int   // the body's running cost estimate
	deep bool   // a deep call was made: further statements may not run
	prec string // in a recursive function, "d - 1": its self-calls' first argument
}

// Generate returns a random program of roughly size statements in main
// from the seed.
func Generate(seed int64, size int) *Program {
	g := &gen{r: rand.New(rand.NewSource(seed))}
	p := &Program{}
	nf := g.r.Intn(maxFuncs + 1)
	for i := 0; i < nf; i++ {
		g.function(fmt.Sprintf("f%d", i))
	}
	p.Funcs = g.funcs
	n := 2 + g.r.Intn(5)
	for i := 0; i < n; i++ {
		t := intTypes[g.r.Intn(len(intTypes))]
		p.Vars = append(p.Vars, Var{Name: fmt.Sprintf("v%d", i), Type: t, Init: g.literal(t)})
	}
	cost := 0
	g.vars, g.muts, g.self, g.arr, g.mult, g.cost, g.deep = p.Vars, p.Vars, nil, 0, 1, &cost, false
	p.Stmts = g.stmts(size, 0)
	// From a source of their own, so that the programs stay those the
	// seed gave before machines were drawn.
	p.Limits = randomLimits(rand.New(rand.NewSource(seed^0x5eed)), limitsPerProgram)
	return p
}

// limitsPerProgram is the number of random machines each program runs on.
const limitsPerProgram = 3

// function generates a function and adds it to g.funcs.
func (g *gen) function(name string) {
	f := &Func{Name: name, Result: intTypes[g.r.Intn(len(intTypes))], Rec: g.r.Intn(2) == 0}
	var scope []Var
	if f.Rec {
		scope = append(scope, Var{Name: "d", Type: "u64"})
	}
	for i, n := 0, 1+g.r.Intn(3); i < n; i++ {
		v := Var{Name: fmt.Sprintf("p%d", i), Type: intTypes[g.r.Intn(len(intTypes))]}
		f.Params = append(f.Params, v)
		scope = append(scope, v)
	}
	g.vars, g.muts = scope, nil
	for i, n := 0, 1+g.r.Intn(3); i < n; i++ {
		l := Var{Name: fmt.Sprintf("l%d", i), Type: intTypes[g.r.Intn(len(intTypes))]}
		f.Locals = append(f.Locals, l)
		f.Inits = append(f.Inits, g.expr(l.Type, 1))
	}
	if g.r.Intn(3) == 0 {
		// Sizes from a few words to 16 KiB, so that deep recursion
		// sometimes runs out of frames before the machine stack.
		f.Array = []int{3, 16, 100, 2047}[g.r.Intn(4)]
		f.ArrayInit = g.expr("u64", 1)
	}
	g.vars = append(g.vars, f.Locals...)
	g.muts = f.Locals
	g.self, g.arr = f, f.Array
	cost := 0
	g.mult, g.cost, g.deep = 1, &cost, false
	if f.Rec {
		f.Base = g.expr(f.Result, 2)
		g.prec = "d - 1"
	}
	f.Body = g.stmts(1+g.r.Intn(5), 1)
	selfCalls := 0
	if f.Rec {
		// One or two calls of itself, at the top level of the body (not
		// in a loop, which would multiply the calls per level).
		for k, n := 0, 1+g.r.Intn(2); k < n; k++ {
			s := g.call(f, len(g.funcs))
			at := g.r.Intn(len(f.Body) + 1)
			f.Body = append(f.Body[:at], append([]*Stmt{s}, f.Body[at:]...)...)
			selfCalls++
		}
	}
	f.Ret = g.expr(f.Result, 3)
	if f.Array > 0 {
		f.Ret = fmt.Sprintf("(%s ^ (a[%s %% %d] as %s))", f.Ret, g.expr("u64", 1), f.Array, f.Result)
	}
	g.funcs = append(g.funcs, f)
	// The cost of a call: the body per level, times the levels (or
	// 2^levels for two calls a level) at the largest d of a bounded call.
	levels := maxLevels(selfCalls)
	c := cost + 1
	switch {
	case !f.Rec:
	case selfCalls == 1:
		c *= levels + 1
	default:
		c <<= levels + 1
	}
	g.costs = append(g.costs, c)
	g.self, g.prec = nil, ""
}

// maxLevels is the largest d a bounded call passes to a function that
// calls itself selfCalls times a level.
func maxLevels(selfCalls int) int {
	if selfCalls > 1 {
		return 8
	}
	return 40
}

func (g *gen) stmts(n, depth int) []*Stmt {
	var out []*Stmt
	for i := 0; i < n && !g.deep; i++ {
		out = append(out, g.stmt(depth))
	}
	return out
}

func (g *gen) stmt(depth int) *Stmt {
	if depth < 2 {
		switch g.r.Intn(10) {
		case 0, 1:
			return &Stmt{If: true, Text: g.cond(), Body: g.stmts(1+g.r.Intn(3), depth+1), Else: g.stmts(g.r.Intn(2), depth+1)}
		case 2:
			g.loops++
			s := &Stmt{Text: fmt.Sprintf("k%d", g.loops), Loop: true, N: 1 + g.r.Intn(5)}
			mult := g.mult
			g.mult *= s.N
			s.Body = g.stmts(1+g.r.Intn(3), depth+1)
			g.mult = mult
			return s
		}
	}
	*g.cost += g.mult
	switch k := g.r.Intn(12); {
	case k < 3 && len(g.funcs) > 0:
		// A call of a function defined before this one, if the budget
		// allows it.
		callee := g.r.Intn(len(g.funcs))
		if *g.cost+g.mult*g.costs[callee] <= budget {
			return g.call(g.funcs[callee], callee)
		}
	case k == 3:
		v := g.vars[g.r.Intn(len(g.vars))]
		return &Stmt{Text: fmt.Sprintf("put_i64(%s as i64); nl();", v.Name)}
	case k == 4 && g.arr > 0:
		return &Stmt{Text: fmt.Sprintf("a[%s %% %d] = %s;", g.expr("u64", 2), g.arr, g.expr("u64", 2))}
	}
	if len(g.muts) == 0 {
		v := g.vars[g.r.Intn(len(g.vars))]
		return &Stmt{Text: fmt.Sprintf("put_i64(%s as i64); nl();", v.Name)}
	}
	v := g.muts[g.r.Intn(len(g.muts))]
	return &Stmt{Text: fmt.Sprintf("%s = %s;", v.Name, g.expr(v.Type, 3))}
}

// call is a statement calling f (g.funcs[index], or the function being
// generated when index is len(g.funcs)) and assigning its result to a
// variable of the scope, or printing it when no variable is assignable.
func (g *gen) call(f *Func, index int) *Stmt {
	var args []string
	switch {
	case f == g.self:
		args = append(args, g.prec)
	case f.Rec:
		selfCalls := 0
		for _, s := range f.Body {
			if s.Callee == f.Name {
				selfCalls++
			}
		}
		// Deep calls only where nothing multiplies them, and only of a
		// function that calls itself once: it then runs out of stack
		// after at most 8192 levels (two calls a level could branch for
		// long without going deep).
		levels := g.r.Intn(maxLevels(selfCalls) + 1)
		if g.mult == 1 && selfCalls == 1 && g.r.Intn(4) == 0 {
			levels = deepLevels
			g.deep = true // the run very likely ends here
		} else {
			*g.cost += g.mult * g.costs[index] // (the costs assume the largest d)
		}
		args = append(args, fmt.Sprint(levels))
	default:
		*g.cost += g.mult * g.costs[index]
	}
	for _, p := range f.Params {
		args = append(args, g.expr(p.Type, 2))
	}
	call := fmt.Sprintf("%s(%s)", f.Name, strings.Join(args, ", "))
	if len(g.muts) == 0 {
		return &Stmt{Text: fmt.Sprintf("put_i64(%s as i64); nl();", call), Callee: f.Name}
	}
	v := g.muts[g.r.Intn(len(g.muts))]
	return &Stmt{Text: fmt.Sprintf("%s = (%s as %s);", v.Name, call, v.Type), Callee: f.Name}
}

// literal is a random value of type t, favouring edge cases.
func (g *gen) literal(t string) int64 {
	b := bits(t)
	switch g.r.Intn(6) {
	case 0:
		return 0
	case 1:
		return 1
	case 2:
		if t[0] == 'i' {
			return -1
		}
		return int64(uint64(1)<<(b-1)) - 1 // the largest signed value of the width
	case 3:
		return int64(g.r.Intn(10))
	}
	if t[0] == 'u' {
		if b == 64 {
			return int64(g.r.Uint64() >> 1)
		}
		return g.r.Int63n(int64(1) << b)
	}
	if b == 64 {
		return g.r.Int63() - g.r.Int63()
	}
	return g.r.Int63n(int64(1)<<b) - int64(1)<<(b-1)
}

func lit(x int64) string {
	if x < 0 {
		return fmt.Sprintf("(%d)", x)
	}
	return fmt.Sprintf("%d", x)
}

// expr is a random expression of type t over the variables of the
// scope, of at most depth levels.
func (g *gen) expr(t string, depth int) string {
	if depth == 0 || g.r.Intn(4) == 0 {
		var same []Var
		for _, v := range g.vars {
			if v.Type == t {
				same = append(same, v)
			}
		}
		if len(same) > 0 && g.r.Intn(3) > 0 {
			return same[g.r.Intn(len(same))].Name
		}
		if len(g.vars) > 0 && g.r.Intn(2) == 0 {
			v := g.vars[g.r.Intn(len(g.vars))]
			return fmt.Sprintf("(%s as %s)", v.Name, t)
		}
		x := g.literal(t)
		if x < 0 {
			return fmt.Sprintf("(%s as %s)", lit(x), t)
		}
		return fmt.Sprintf("(%d as %s)", x, t)
	}
	a, b := g.expr(t, depth-1), g.expr(t, depth-1)
	div := g.r.Intn(10)
	if (div == 2 || div == 3) && g.r.Intn(32) > 0 {
		// Most divisors are made nonzero, or nearly every program would
		// end at its first division by zero.
		b = fmt.Sprintf("(%s | (1 as %s))", b, t)
	}
	switch div {
	case 0:
		return fmt.Sprintf("(%s << (%s as u64))", a, b)
	case 1:
		return fmt.Sprintf("(%s >> (%s as u64))", a, b)
	case 2:
		return fmt.Sprintf("(%s / %s)", a, b)
	case 3:
		return fmt.Sprintf("(%s %% %s)", a, b)
	}
	op := []string{"+", "-", "*", "&", "|", "^"}[g.r.Intn(6)]
	return fmt.Sprintf("(%s %s %s)", a, op, b)
}

func (g *gen) cond() string {
	t := intTypes[g.r.Intn(len(intTypes))]
	op := []string{"==", "!=", "<", "<=", ">", ">="}[g.r.Intn(6)]
	return fmt.Sprintf("%s %s %s", g.expr(t, 2), op, g.expr(t, 2))
}

// Source is the program's main.gen.
func (p *Program) Source() string {
	var b strings.Builder
	for _, f := range p.Funcs {
		var params []string
		if f.Rec {
			params = append(params, "d: u64")
		}
		for _, v := range f.Params {
			params = append(params, v.Name+": "+v.Type)
		}
		fmt.Fprintf(&b, "fn %s(%s) -> %s {\n", f.Name, strings.Join(params, ", "), f.Result)
		for i, l := range f.Locals {
			fmt.Fprintf(&b, "  let mut %s: %s = %s;\n", l.Name, l.Type, f.Inits[i])
		}
		if f.Array > 0 {
			fmt.Fprintf(&b, "  let mut a: [u64; %d] = [%s; %d];\n", f.Array, f.ArrayInit, f.Array)
		}
		if f.Rec {
			fmt.Fprintf(&b, "  if d == 0 { return %s; };\n", f.Base)
		}
		writeStmts(&b, f.Body, 1)
		fmt.Fprintf(&b, "  %s\n}\n\n", f.Ret)
	}
	b.WriteString("fn main() -> void {\n")
	for _, v := range p.Vars {
		init := fmt.Sprintf("(%s as %s)", lit(v.Init), v.Type)
		fmt.Fprintf(&b, "  let mut %s: %s = %s;\n", v.Name, v.Type, init)
	}
	writeStmts(&b, p.Stmts, 1)
	for _, v := range p.Vars {
		if v.Type[0] == 'u' {
			fmt.Fprintf(&b, "  put_u64(%s as u64); nl();\n", v.Name)
		} else {
			fmt.Fprintf(&b, "  put_i64(%s as i64); nl();\n", v.Name)
		}
	}
	b.WriteString("}\n")
	return b.String()
}

func writeStmts(b *strings.Builder, ss []*Stmt, depth int) {
	ind := strings.Repeat("  ", depth)
	for _, s := range ss {
		switch {
		case s.Loop:
			fmt.Fprintf(b, "%slet mut %s: i64 = 0;\n%swhile %s < %d {\n", ind, s.Text, ind, s.Text, s.N)
			writeStmts(b, s.Body, depth+1)
			fmt.Fprintf(b, "%s  %s = %s + 1;\n%s};\n", ind, s.Text, s.Text, ind)
		case s.If:
			fmt.Fprintf(b, "%sif %s {\n", ind, s.Text)
			writeStmts(b, s.Body, depth+1)
			if len(s.Else) > 0 {
				fmt.Fprintf(b, "%s} else {\n", ind)
				writeStmts(b, s.Else, depth+1)
			}
			fmt.Fprintf(b, "%s};\n", ind)
		default:
			fmt.Fprintf(b, "%s%s\n", ind, s.Text)
		}
	}
}

// Reproducer is the program as one self-contained file: main.gen
// followed by the output library, after a comment listing the machines
// it runs on (forge exec's --memory and --stack).
func (p *Program) Reproducer() string {
	var b strings.Builder
	for _, l := range p.Limits {
		fmt.Fprintf(&b, "// also run with --memory %d --stack %d\n", l.Memory, l.Stack)
	}
	return b.String() + p.Source() + "\n" + printGen
}

// Sources is the program as compiler input: main.gen and print.gen.
func (p *Program) Sources() []compiler.Source {
	return []compiler.Source{{Name: "main.gen", Data: []byte(p.Source())}, {Name: "print.gen", Data: []byte(printGen)}}
}

// Size counts the program's statements and functions.
func (p *Program) Size() int {
	n := count(p.Stmts)
	for _, f := range p.Funcs {
		n += 1 + count(f.Body)
	}
	return n
}

func count(ss []*Stmt) int {
	n := 0
	for _, s := range ss {
		n += 1 + count(s.Body) + count(s.Else)
	}
	return n
}

// Check builds the programs on all three targets (native only when llc
// and cc are installed) in dir and returns, for each, a description of
// how the targets disagree, or "" when they agree. A program that does
// not compile for Forge is reported as such (the generator must only make
// valid programs).
func Check(progs []*Program, dir string) ([]string, error) {
	dps := make([]difftest.Program, len(progs))
	for i, p := range progs {
		dps[i] = difftest.Program{Name: fmt.Sprintf("gen%d", i), Sources: p.Sources()}
	}
	// The machines of program i: the default one, then its own.
	machines := func(i int) []difftest.Limits { return append([]difftest.Limits{{}}, progs[i].Limits...) }
	out := make([]string, len(progs))
	want := make([][]difftest.Outcome, len(progs))
	difftest.Parallel(len(progs), func(i int) {
		img, err := difftest.CompileForge(dps[i], 2)
		if err != nil {
			out[i] = "forge: " + err.Error()
			return
		}
		for _, lim := range machines(i) {
			o, err := difftest.RunForge(img, nil, lim)
			if err != nil {
				out[i] = fmt.Sprintf("forge (%s): %v", lim, err)
				return
			}
			want[i] = append(want[i], o)
		}
	})
	type target struct {
		name string
		bin  string
		errs []error
	}
	var targets []target
	if difftest.NativeAvailable() == nil {
		bin, errs, err := difftest.BuildNative(dps, dir+"/native", 2)
		if err != nil {
			return nil, err
		}
		targets = append(targets, target{"native", bin, errs})
	}
	bin, errs, err := difftest.BuildGo(dps, dir+"/go", 2)
	if err != nil {
		return nil, err
	}
	targets = append(targets, target{"go", bin, errs})
	difftest.Parallel(len(progs), func(i int) {
		if out[i] != "" {
			return
		}
		var msgs []string
		for _, t := range targets {
			if t.errs[i] != nil {
				msgs = append(msgs, fmt.Sprintf("%s: %v", t.name, t.errs[i]))
				continue
			}
			for k, lim := range machines(i) {
				got, err := difftest.Run(t.bin, nil, append([]string{difftest.Arg(i)}, lim.Args()...)...)
				if err != nil {
					msgs = append(msgs, fmt.Sprintf("%s (%s): %v", t.name, lim, err))
				} else if got != want[i][k] {
					msgs = append(msgs, fmt.Sprintf("%s %s; forge %s (%s)", t.name, got, want[i][k], lim))
				}
			}
		}
		out[i] = strings.Join(msgs, "\n")
	})
	return out, nil
}

// Shrink makes p smaller, one step at a time, as long as the targets
// still disagree on it (fails reports whether they do), and returns the
// smallest program found. A step removes a statement (a call among
// them), replaces an if or loop by one of its bodies, or removes a
// function no call is left to.
func Shrink(p *Program, fails func(*Program) bool) *Program {
	for changed := true; changed; {
		changed = false
		for _, cand := range candidates(p) {
			if fails(cand) {
				p, changed = cand, true
				break
			}
		}
	}
	return p
}

// candidates are p made smaller by one step, largest removals first:
// functions without callers, then statements of main and of each
// function.
func candidates(p *Program) []*Program {
	var out []*Program
	called := map[string]bool{}
	var mark func(ss []*Stmt)
	mark = func(ss []*Stmt) {
		for _, s := range ss {
			if s.Callee != "" {
				called[s.Callee] = true
			}
			mark(s.Body)
			mark(s.Else)
		}
	}
	mark(p.Stmts)
	for _, f := range p.Funcs {
		for _, s := range f.Body { // a function's calls of itself do not keep it
			if s.Callee != f.Name {
				mark([]*Stmt{s})
			}
		}
	}
	for i, f := range p.Funcs {
		if !called[f.Name] {
			c := *p
			c.Funcs = append(append([]*Func(nil), p.Funcs[:i]...), p.Funcs[i+1:]...)
			out = append(out, &c)
		}
	}
	out = append(out, stmtCandidates(p.Stmts, func(ss []*Stmt) *Program {
		c := *p
		c.Stmts = ss
		return &c
	})...)
	for i, f := range p.Funcs {
		out = append(out, stmtCandidates(f.Body, func(ss []*Stmt) *Program {
			nf := *f
			nf.Body = ss
			c := *p
			c.Funcs = append([]*Func(nil), p.Funcs...)
			c.Funcs[i] = &nf
			return &c
		})...)
	}
	return out
}

// stmtCandidates are the statement list ss with one statement removed,
// or one if or loop replaced by its body, each rebuilt into a program.
func stmtCandidates(ss []*Stmt, rebuild func([]*Stmt) *Program) []*Program {
	var out []*Program
	for i, s := range ss {
		rest := append(append([]*Stmt(nil), ss[:i]...), ss[i+1:]...)
		out = append(out, rebuild(rest))
		if s.If || s.Loop {
			flat := append(append(append([]*Stmt(nil), ss[:i]...), s.Body...), ss[i+1:]...)
			out = append(out, rebuild(flat))
			if len(s.Else) > 0 {
				flat := append(append(append([]*Stmt(nil), ss[:i]...), s.Else...), ss[i+1:]...)
				out = append(out, rebuild(flat))
			}
			i, s := i, s
			out = append(out, stmtCandidates(s.Body, func(body []*Stmt) *Program {
				c := *s
				c.Body = body
				with := append(append(append([]*Stmt(nil), ss[:i]...), &c), ss[i+1:]...)
				return rebuild(with)
			})...)
			out = append(out, stmtCandidates(s.Else, func(els []*Stmt) *Program {
				c := *s
				c.Else = els
				with := append(append(append([]*Stmt(nil), ss[:i]...), &c), ss[i+1:]...)
				return rebuild(with)
			})...)
		}
	}
	return out
}
