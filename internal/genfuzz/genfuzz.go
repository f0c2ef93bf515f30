// Package genfuzz generates random well-typed Genesis programs for the
// differential test of the three targets (internal/difftest), and shrinks
// a program on which they disagree to a small reproducer.
//
// A program is a main function over a few integer variables of mixed
// widths and signedness: assignments of random expressions (every
// arithmetic, bitwise, shift and comparison operator, casts), ifs and
// bounded loops, and at the end the value of every variable printed.
// Division and remainder by a value that may be zero are kept: the
// targets must then fault alike. The statements form a tree that Shrink
// prunes.
package genfuzz

import (
	"fmt"
	"math/rand"
	"strings"

	"github.com/genesis-toolchain/genesis/compiler"
	"github.com/genesis-toolchain/genesis/internal/difftest"
)

// The integer types of the variables.
var intTypes = []string{"i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64"}

func bits(t string) int {
	var n int
	fmt.Sscanf(t[1:], "%d", &n)
	return n
}

// Program is a generated program: its variables and statements.
type Program struct {
	Vars  []Var
	Stmts []*Stmt
}

// Var is a variable of the program and its initial value.
type Var struct {
	Name, Type string
	Init       int64
}

// Stmt is a statement: an assignment (Text), or an if or bounded loop
// (Text is its head) with a body.
type Stmt struct {
	Text string
	Body []*Stmt
	Else []*Stmt
	If   bool // an if; Text is its condition
	Loop bool // a loop; Text is its counter's name
	N    int  // the loop's iteration count
}

// gen is the state of one generation.
type gen struct {
	r     *rand.Rand
	vars  []Var
	loops int
}

// Generate returns a random program of roughly size statements from the
// seed.
func Generate(seed int64, size int) *Program {
	g := &gen{r: rand.New(rand.NewSource(seed))}
	n := 2 + g.r.Intn(5)
	for i := 0; i < n; i++ {
		t := intTypes[g.r.Intn(len(intTypes))]
		g.vars = append(g.vars, Var{Name: fmt.Sprintf("v%d", i), Type: t, Init: g.literal(t)})
	}
	p := &Program{Vars: g.vars}
	p.Stmts = g.stmts(size, 0)
	return p
}

func (g *gen) stmts(n, depth int) []*Stmt {
	var out []*Stmt
	for i := 0; i < n; i++ {
		out = append(out, g.stmt(depth))
	}
	return out
}

func (g *gen) stmt(depth int) *Stmt {
	if depth < 2 {
		switch g.r.Intn(8) {
		case 0:
			return &Stmt{If: true, Text: g.cond(), Body: g.stmts(1+g.r.Intn(3), depth+1), Else: g.stmts(g.r.Intn(2), depth+1)}
		case 1:
			g.loops++
			return &Stmt{Text: fmt.Sprintf("k%d", g.loops), Loop: true, N: 1 + g.r.Intn(5), Body: g.stmts(1+g.r.Intn(3), depth+1)}
		}
	}
	v := g.vars[g.r.Intn(len(g.vars))]
	return &Stmt{Text: fmt.Sprintf("%s = %s;", v.Name, g.expr(v.Type, 3))}
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

// expr is a random expression of type t, of at most depth levels.
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
		if g.r.Intn(2) == 0 {
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
	if (div == 2 || div == 3) && g.r.Intn(16) > 0 {
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
// followed by the output library.
func (p *Program) Reproducer() string { return p.Source() + "\n" + printGen }

// Sources is the program as compiler input: main.gen and print.gen.
func (p *Program) Sources() []compiler.Source {
	return []compiler.Source{{Name: "main.gen", Data: []byte(p.Source())}, {Name: "print.gen", Data: []byte(printGen)}}
}

// Size counts the program's statements.
func (p *Program) Size() int { return count(p.Stmts) }

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
	out := make([]string, len(progs))
	want := make([]difftest.Outcome, len(progs))
	difftest.Parallel(len(progs), func(i int) {
		var err error
		if want[i], err = difftest.Forge(dps[i], 2); err != nil {
			out[i] = "forge: " + err.Error()
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
			got, err := difftest.Run(t.bin, difftest.Arg(i))
			if err != nil {
				msgs = append(msgs, fmt.Sprintf("%s: %v", t.name, err))
			} else if got != want[i] {
				msgs = append(msgs, fmt.Sprintf("%s %s; forge %s", t.name, got, want[i]))
			}
		}
		out[i] = strings.Join(msgs, "\n")
	})
	return out, nil
}

// Shrink removes statements from p, one at a time, as long as the
// targets still disagree on it (fails reports whether they do), and
// returns the smallest program found.
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

// candidates are p with one statement removed, or one if or loop
// replaced by its body, largest removals first.
func candidates(p *Program) []*Program {
	var out []*Program
	var walk func(ss []*Stmt, rebuild func([]*Stmt) *Program)
	walk = func(ss []*Stmt, rebuild func([]*Stmt) *Program) {
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
				walk(s.Body, func(body []*Stmt) *Program {
					c := *s
					c.Body = body
					with := append(append(append([]*Stmt(nil), ss[:i]...), &c), ss[i+1:]...)
					return rebuild(with)
				})
				walk(s.Else, func(els []*Stmt) *Program {
					c := *s
					c.Else = els
					with := append(append(append([]*Stmt(nil), ss[:i]...), &c), ss[i+1:]...)
					return rebuild(with)
				})
			}
		}
	}
	walk(p.Stmts, func(ss []*Stmt) *Program { return &Program{Vars: p.Vars, Stmts: ss} })
	return out
}
