package ir

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/genesis-toolchain/genesis/diag"
)

// Print returns the printed form of m: its data objects, then its
// functions, separated by blank lines. The form is deterministic and Parse
// reads it back to a module that prints identically. docs/ir.md gives its
// grammar.
func Print(m *Module) string {
	var p printer
	return p.module(m)
}

// ProgramHash returns the hex sha256 of m's printed form with every
// source position naming its file by its base name: the hash of an
// agent program that its effects' idempotency keys derive from
// (docs/runtime.md), computed from the optimized module by the compiler
// for the forge and go targets alike, so that their runs' keys and
// journals agree. The base names make it the same wherever the source
// lies and whatever path named it, as the program's identity is.
func ProgramHash(m *Module) string {
	p := printer{baseFiles: true}
	sum := sha256.Sum256([]byte(p.module(m)))
	return hex.EncodeToString(sum[:])
}

// module prints m.
func (p *printer) module(m *Module) string {
	for i, d := range m.Data {
		if i > 0 {
			p.b.WriteByte('\n')
		}
		p.data(d)
	}
	for i, f := range m.Funcs {
		if i > 0 || len(m.Data) > 0 {
			p.b.WriteByte('\n')
		}
		p.fn(f)
	}
	return p.b.String()
}

// String returns the printed form of m.
func (m *Module) String() string { return Print(m) }

// String returns the printed form of f.
func (f *Func) String() string {
	var p printer
	p.fn(f)
	return p.b.String()
}

// FormatInstr returns the first line of in's printed form (without its
// position and regions), naming values as the printer of f does. Messages
// use it to name an instruction.
func FormatInstr(f *Func, in *Instr) string {
	p := printer{f: f, names: nameValues(f)}
	p.header(in)
	return strings.TrimSuffix(p.b.String(), " {")
}

type printer struct {
	b     strings.Builder
	f     *Func
	names map[*Value]string
	depth int
	// baseFiles prints the base names of positions' files (ProgramHash).
	baseFiles bool
}

func (p *printer) printf(format string, args ...any) { fmt.Fprintf(&p.b, format, args...) }

func (p *printer) indent() {
	for range p.depth {
		p.b.WriteString("  ")
	}
}

func (p *printer) data(d *Data) {
	p.printf("data %s = %s", sigilName('@', d.Name), strconv.Quote(string(d.Bytes)))
	if d.Align > 1 {
		p.printf(" align %d", d.Align)
	}
	p.pos(d.Pos, false)
	p.b.WriteByte('\n')
}

func (p *printer) fn(f *Func) {
	p.f, p.names = f, nameValues(f)
	p.printf("func %s(", sigilName('@', f.Name))
	for i, v := range f.Params {
		if i > 0 {
			p.b.WriteString(", ")
		}
		p.printf("%s: %s", p.val(v), v.Type)
	}
	p.b.WriteByte(')')
	p.results(f.Results)
	p.pos(f.Pos, false)
	p.b.WriteString(" {\n")
	p.depth++
	for _, l := range f.Locals {
		p.indent()
		if l.Kind == Var {
			p.printf("var %s: %s", sigilName('$', l.Name), l.Type)
		} else {
			p.printf("slot %s: %d", sigilName('$', l.Name), l.Size)
			if l.Align > 1 {
				p.printf(" align %d", l.Align)
			}
		}
		p.pos(l.Pos, true)
		p.b.WriteByte('\n')
	}
	if f.Body != nil {
		p.region(f.Body)
	}
	p.depth--
	p.b.WriteString("}\n")
}

func (p *printer) region(r *Region) {
	for _, in := range r.Instrs {
		p.instr(in)
	}
}

func (p *printer) instr(in *Instr) {
	p.indent()
	p.header(in)
	p.b.WriteByte('\n')
	if len(in.Regions) == 0 {
		return
	}
	p.depth++
	switch in.Op {
	case OpIf:
		p.region(in.Regions[0])
		if len(in.Regions) > 1 && len(in.Regions[1].Instrs) > 0 {
			p.depth--
			p.indent()
			p.b.WriteString("} else {\n")
			p.depth++
			p.region(in.Regions[1])
		}
	case OpSwitch:
		p.depth--
		for i, r := range in.Regions {
			p.indent()
			if i < len(in.Regions)-1 && i < len(in.Cases) {
				p.b.WriteString("case ")
				for j, c := range in.Cases[i] {
					if j > 0 {
						p.b.WriteString(", ")
					}
					p.printf("%d", c)
				}
				p.b.WriteString(":\n")
			} else {
				p.b.WriteString("default:\n")
			}
			p.depth++
			p.region(r)
			p.depth--
		}
		p.depth++
	default:
		for _, r := range in.Regions {
			p.region(r)
		}
	}
	p.depth--
	p.indent()
	p.b.WriteString("}\n")
}

// header prints an instruction's first line: results, op, operands,
// position, and " {" when it owns regions.
func (p *printer) header(in *Instr) {
	if len(in.Results) > 0 {
		p.vals(in.Results)
		p.b.WriteString(" = ")
	}
	p.b.WriteString(in.Op.String())
	switch in.Info().Form {
	case FormArgs:
		if len(in.Args) > 0 {
			p.b.WriteByte(' ')
			p.vals(in.Args)
		}
	case FormConst:
		p.printf(" %s %s", in.Type, literal(in.Type, in.Lit))
	case FormFuncRef:
		p.printf(" %s %s", sigilName('@', in.Sym), in.Type)
	case FormAddrOf:
		if in.Local != "" {
			p.printf(" %s", sigilName('$', in.Local))
		} else {
			p.printf(" %s", sigilName('@', in.Sym))
		}
	case FormCast:
		p.printf(" %s ", in.Type)
		p.vals(in.Args)
	case FormLoad:
		p.printf(" %s ", in.Type)
		p.vals(in.Args)
		p.printf(", %d", in.Int)
	case FormMem:
		p.b.WriteByte(' ')
		p.vals(in.Args)
		p.printf(", %d", in.Int)
	case FormGet:
		p.printf(" %s", sigilName('$', in.Local))
	case FormSet:
		p.printf(" %s, ", sigilName('$', in.Local))
		p.vals(in.Args)
	case FormCall:
		p.printf(" %s(", sigilName('@', in.Sym))
		p.vals(in.Args)
		p.b.WriteByte(')')
		p.resultTypes(in)
	case FormCallIndirect:
		p.b.WriteByte(' ')
		if len(in.Args) > 0 {
			p.b.WriteString(p.val(in.Args[0]))
		}
		p.b.WriteByte('(')
		if len(in.Args) > 1 {
			p.vals(in.Args[1:])
		}
		p.b.WriteByte(')')
		p.resultTypes(in)
	case FormBuiltin:
		p.printf(" %s(", in.Sym)
		p.vals(in.Args)
		p.b.WriteByte(')')
	case FormIf, FormSwitch:
		p.b.WriteByte(' ')
		p.vals(in.Args)
		p.resultTypes(in)
	case FormLoop:
		p.printf(" %s", sigilName('^', in.Label))
		if len(in.Regions) > 0 && len(in.Regions[0].Params) > 0 {
			p.b.WriteByte('(')
			for i, v := range in.Regions[0].Params {
				if i > 0 {
					p.b.WriteString(", ")
				}
				p.printf("%s: %s = ", p.val(v), v.Type)
				if i < len(in.Args) {
					p.b.WriteString(p.val(in.Args[i]))
				}
			}
			p.b.WriteByte(')')
		}
		p.resultTypes(in)
	case FormBlock:
		p.printf(" %s", sigilName('^', in.Label))
		p.resultTypes(in)
	case FormBranch:
		p.printf(" %s", sigilName('^', in.Label))
		if len(in.Args) > 0 {
			p.b.WriteByte(' ')
			p.vals(in.Args)
		}
	case FormEffect, FormParallel:
		p.printf(" %s", strconv.Quote(in.Str))
		n := min(max(in.Iters, 0), len(in.Args))
		if n > 0 {
			p.b.WriteString(" [")
			p.vals(in.Args[len(in.Args)-n:])
			p.b.WriteByte(']')
		}
		if len(in.Args) > n {
			p.b.WriteByte(' ')
			p.vals(in.Args[:len(in.Args)-n])
		}
		for i, f := range in.Syms {
			if i > 0 {
				p.b.WriteByte(',')
			}
			p.printf(" %s", sigilName('@', f))
			if i < len(in.Waits) && len(in.Waits[i]) > 0 {
				p.b.WriteByte('(')
				for k, w := range in.Waits[i] {
					if k > 0 {
						p.b.WriteString(", ")
					}
					p.b.WriteString(strconv.Itoa(w))
				}
				p.b.WriteByte(')')
			}
		}
	case FormAsm:
		p.printf(" %s", strconv.Quote(in.Str))
		if len(in.Args) > 0 {
			p.b.WriteString(" in(")
			for i, v := range in.Args {
				if i > 0 {
					p.b.WriteString(", ")
				}
				p.printf("r%d = %s", reg(in.Regs, i), p.val(v))
			}
			p.b.WriteByte(')')
		}
		if len(in.Results) > 0 {
			p.b.WriteString(" out(")
			for i, v := range in.Results {
				if i > 0 {
					p.b.WriteString(", ")
				}
				p.printf("r%d: %s", reg(in.Regs, len(in.Args)+i), v.Type)
			}
			p.b.WriteByte(')')
		}
	}
	p.pos(in.Pos, true)
	if len(in.Regions) > 0 {
		p.b.WriteString(" {")
	}
}

func reg(regs []int, i int) int {
	if i < len(regs) {
		return regs[i]
	}
	return -1
}

// resultTypes prints an instruction's explicit result types.
func (p *printer) resultTypes(in *Instr) {
	ts := make([]Type, len(in.Results))
	for i, v := range in.Results {
		ts[i] = v.Type
	}
	p.results(ts)
}

// results prints " -> T", " -> (T, U)", or nothing for no types.
func (p *printer) results(ts []Type) {
	switch len(ts) {
	case 0:
	case 1:
		p.printf(" -> %s", ts[0])
	default:
		p.printf(" -> %s", typeList(ts))
	}
}

func (p *printer) vals(vs []*Value) {
	for i, v := range vs {
		if i > 0 {
			p.b.WriteString(", ")
		}
		p.b.WriteString(p.val(v))
	}
}

func (p *printer) val(v *Value) string {
	if v == nil {
		return "%<nil>"
	}
	if n, ok := p.names[v]; ok {
		return sigilName('%', n)
	}
	if v.Name != "" {
		return sigilName('%', v.Name)
	}
	return fmt.Sprintf("%%<%d>", v.ID) // a value not defined in the function
}

// pos prints a position suffix: " @file:line:col", or " @line:col" for an
// instruction or local in its function's file. The zero position prints
// nothing.
func (p *printer) pos(pos diag.Pos, short bool) {
	if pos == (diag.Pos{}) {
		return
	}
	if short && p.f != nil && pos.File == p.f.Pos.File {
		p.printf(" @%d:%d", pos.Line, pos.Col)
		return
	}
	file := pos.File
	if p.baseFiles && file != "" {
		file = filepath.Base(file)
	}
	p.printf(" %s:%d:%d", sigilName('@', file), pos.Line, pos.Col)
}

// nameValues gives every value defined in f a printed name: its own Name,
// or the smallest number not used as a name, in definition order.
func nameValues(f *Func) map[*Value]string {
	var defs []*Value
	var walk func(r *Region)
	walk = func(r *Region) {
		defs = append(defs, r.Params...)
		for _, in := range r.Instrs {
			for _, reg := range in.Regions {
				walk(reg)
			}
			defs = append(defs, in.Results...)
		}
	}
	defs = append(defs, f.Params...)
	if f.Body != nil {
		walk(f.Body)
	}
	used := map[string]bool{}
	for _, v := range defs {
		if v.Name != "" {
			used[v.Name] = true
		}
	}
	names := make(map[*Value]string, len(defs))
	n := 0
	for _, v := range defs {
		if v.Name != "" {
			names[v] = v.Name
			continue
		}
		for used[strconv.Itoa(n)] {
			n++
		}
		names[v] = strconv.Itoa(n)
		n++
	}
	return names
}

// literal formats a constant of type t.
func literal(t Type, l Literal) string {
	switch {
	case t == Bool:
		return strconv.FormatBool(l.Int != 0)
	case t == Ptr:
		return "0x" + strconv.FormatUint(uint64(l.Int), 16)
	case t == Dyn:
		switch l.Kind {
		case LitUnit:
			return "unit"
		case LitBool:
			return strconv.FormatBool(l.Int != 0)
		case LitNumber:
			if math.IsInf(l.Num, 0) || math.IsNaN(l.Num) {
				return strconv.FormatFloat(l.Num, 'g', -1, 64) // rejected by the verifier and the parser
			}
			s := strconv.FormatFloat(l.Num, 'g', -1, 64)
			if !strings.ContainsAny(s, ".en") {
				s += ".0" // a number literal is never an integer literal
			}
			return s
		case LitString:
			return strconv.Quote(l.Str)
		}
		return "?"
	}
	return strconv.FormatInt(l.Int, 10)
}

// isIdent reports whether s can be printed after a sigil unquoted:
// letters, digits, '_' and '.', not starting with a digit for symbols
// and files (whose "@" also starts positions).
func isIdent(sigil byte, s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c == '_', c == '.':
		case c >= '0' && c <= '9':
			if i == 0 && sigil == '@' {
				return false
			}
		case (c == '/' || c == '-') && sigil == '@':
		default:
			return false
		}
	}
	return true
}

// sigilName formats a name after its sigil (% value, @ symbol or file,
// $ local, ^ label), quoted when it is not an identifier.
func sigilName(sigil byte, name string) string {
	if isIdent(sigil, name) {
		return string(sigil) + name
	}
	return string(sigil) + strconv.Quote(name)
}
