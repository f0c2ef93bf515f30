package ir

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/genesis-toolchain/genesis/diag"
)

// ParseCode is the diagnostic code of errors in IR text.
const ParseCode = "I001"

// maxDepth bounds the nesting of regions, and of function types, the
// parser accepts (docs/ir.md "Limits"): it recurses per level, and every
// later stage walks regions recursively.
const maxDepth = 1000

// Parse reads a module in the printed form (docs/ir.md). It stops at the
// first error and returns it as a diagnostic positioned in file. Parse
// resolves value names in text order, so a value must be defined above its
// uses; it does not check types, dominance or labels: run Verify on the
// result.
func Parse(file string, src []byte) (m *Module, diags diag.List) {
	p := &parser{file: file, m: NewModule()}
	defer func() {
		if r := recover(); r != nil {
			b, ok := r.(bailout)
			if !ok {
				panic(r)
			}
			m, diags = nil, diag.List{b.d}
		}
	}()
	p.lex(src)
	p.module()
	return p.m, nil
}

type bailout struct{ d diag.Diagnostic }

type tokKind uint8

const (
	tEOF    tokKind = iota
	tNL             // end of line
	tIdent          // keywords, op names, types, builtin names, registers
	tNum            // a number, as written
	tString         // a quoted string, unquoted in text
	tValue          // %name
	tSym            // @name
	tLocal          // $name
	tLabel          // ^name
	tPos            // @line:col or @file:line:col
	tPunct          // ( ) { } [ ] , : = ->
)

type token struct {
	kind      tokKind
	text      string
	pos       diag.Pos
	line, col int  // tPos
	short     bool // tPos without a file
}

func (t token) String() string {
	switch t.kind {
	case tEOF:
		return "end of file"
	case tNL:
		return "end of line"
	case tString:
		return "string " + strconv.Quote(t.text)
	case tValue:
		return "value " + sigilName('%', t.text)
	case tSym:
		return "symbol " + sigilName('@', t.text)
	case tLocal:
		return "local " + sigilName('$', t.text)
	case tLabel:
		return "label " + sigilName('^', t.text)
	case tPos:
		return "position"
	case tNum:
		return "number " + t.text
	}
	return strconv.Quote(t.text)
}

type parser struct {
	file  string
	toks  []token
	i     int
	m     *Module
	f     *Func
	vals  map[string]*Value
	depth int
}

func (p *parser) failf(pos diag.Pos, format string, args ...any) {
	panic(bailout{diag.Diagnostic{Pos: pos, Severity: diag.Error, Code: ParseCode, Msg: fmt.Sprintf(format, args...)}})
}

// lex splits src into tokens.
func (p *parser) lex(src []byte) {
	line, lineStart := 1, 0
	i := 0
	// colOff and col are the offset and column of the last position
	// asked on the line: positions come in increasing order, so each
	// counts only the runes since, not the line's again (quadratic in a
	// long line's length).
	colOff, col := 0, 1
	posAt := func(off int) diag.Pos {
		if colOff < lineStart || off < colOff {
			colOff, col = lineStart, 1
		}
		col += utf8.RuneCount(src[colOff:off])
		colOff = off
		return diag.Pos{File: p.file, Line: line, Col: col}
	}
	emit := func(k tokKind, text string, start int) *token {
		p.toks = append(p.toks, token{kind: k, text: text, pos: posAt(start)})
		return &p.toks[len(p.toks)-1]
	}
	isName := func(c byte, sym bool) bool {
		return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '.' ||
			sym && (c == '/' || c == '-')
	}
	digits := func(j int) (int, int) { // the decimal number at j and its end
		k := j
		n := 0
		for k < len(src) && src[k] >= '0' && src[k] <= '9' {
			if n < 1<<40 {
				n = n*10 + int(src[k]-'0')
			}
			k++
		}
		return n, k
	}
	// name reads a name after a sigil at i: an identifier-like run or a
	// quoted string.
	name := func(start int, sym bool) (string, int) {
		j := i
		if j < len(src) && src[j] == '"' {
			q, err := strconv.QuotedPrefix(string(src[j:]))
			if err != nil {
				p.failf(posAt(j), "malformed quoted name")
			}
			s, _ := strconv.Unquote(q)
			return s, j + len(q)
		}
		for j < len(src) && isName(src[j], sym) {
			j++
		}
		if j == i {
			p.failf(posAt(start), "a name must follow %q", src[start])
		}
		return string(src[i:j]), j
	}
	for i < len(src) {
		c := src[i]
		start := i
		switch {
		case c == '\n':
			emit(tNL, "\n", i)
			i++
			line, lineStart = line+1, i
		case c == ' ' || c == '\t' || c == '\r':
			i++
		case c == ';':
			for i < len(src) && src[i] != '\n' {
				i++
			}
		case c == '-' && i+1 < len(src) && src[i+1] == '>':
			emit(tPunct, "->", i)
			i += 2
		case c >= '0' && c <= '9' || c == '-' && i+1 < len(src) && src[i+1] >= '0' && src[i+1] <= '9':
			i++
			for i < len(src) && (isName(src[i], false) ||
				(src[i] == '+' || src[i] == '-') && (src[i-1] == 'e' || src[i-1] == 'E') && !strings.HasPrefix(string(src[start:i]), "0x")) {
				i++
			}
			emit(tNum, string(src[start:i]), start)
		case c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_':
			for i < len(src) && isName(src[i], false) {
				i++
			}
			emit(tIdent, string(src[start:i]), start)
		case c == '"':
			q, err := strconv.QuotedPrefix(string(src[i:]))
			if err != nil {
				p.failf(posAt(i), "malformed string")
			}
			s, _ := strconv.Unquote(q)
			emit(tString, s, i)
			i += len(q)
		case c == '%' || c == '$' || c == '^':
			i++
			s, j := name(start, false)
			kind := map[byte]tokKind{'%': tValue, '$': tLocal, '^': tLabel}[c]
			emit(kind, s, start)
			i = j
		case c == '@':
			i++
			if i < len(src) && src[i] >= '0' && src[i] <= '9' {
				l, j := digits(i)
				if j >= len(src) || src[j] != ':' || j+1 >= len(src) || src[j+1] < '0' || src[j+1] > '9' {
					p.failf(posAt(start), "malformed position (want @line:col or @file:line:col)")
				}
				col, k := digits(j + 1)
				t := emit(tPos, "", start)
				t.line, t.col, t.short = l, col, true
				i = k
				break
			}
			s, j := name(start, true)
			i = j
			if i+1 < len(src) && src[i] == ':' && src[i+1] >= '0' && src[i+1] <= '9' {
				l, j := digits(i + 1)
				if j >= len(src) || src[j] != ':' || j+1 >= len(src) || src[j+1] < '0' || src[j+1] > '9' {
					p.failf(posAt(start), "malformed position (want @line:col or @file:line:col)")
				}
				col, k := digits(j + 1)
				t := emit(tPos, s, start)
				t.line, t.col = l, col
				i = k
				break
			}
			emit(tSym, s, start)
		case strings.IndexByte("(){}[],:=", c) >= 0:
			emit(tPunct, string(c), i)
			i++
		default:
			r, _ := utf8.DecodeRune(src[i:])
			if r == utf8.RuneError {
				p.failf(posAt(i), "invalid UTF-8 byte 0x%02x", c)
			}
			p.failf(posAt(i), "unexpected character %q", r)
		}
	}
	emit(tEOF, "", len(src))
}

func (p *parser) peek() token { return p.toks[p.i] }

func (p *parser) next() token {
	t := p.toks[p.i]
	if t.kind != tEOF {
		p.i++
	}
	return t
}

func (p *parser) isPunct(s string) bool {
	t := p.peek()
	return t.kind == tPunct && t.text == s
}

func (p *parser) isIdent(s string) bool {
	t := p.peek()
	return t.kind == tIdent && t.text == s
}

func (p *parser) unexpected(want string) {
	t := p.peek()
	p.failf(t.pos, "unexpected %s, expected %s", t, want)
}

func (p *parser) punct(s string) token {
	if !p.isPunct(s) {
		p.unexpected(strconv.Quote(s))
	}
	return p.next()
}

func (p *parser) keyword(s string) {
	if !p.isIdent(s) {
		p.unexpected(strconv.Quote(s))
	}
	p.next()
}

func (p *parser) expect(k tokKind, want string) token {
	if p.peek().kind != k {
		p.unexpected(want)
	}
	return p.next()
}

func (p *parser) endLine() {
	if k := p.peek().kind; k != tNL && k != tEOF {
		p.unexpected("end of line")
	}
	p.next()
}

func (p *parser) skipNL() {
	for p.peek().kind == tNL {
		p.next()
	}
}

func (p *parser) module() {
	for {
		p.skipNL()
		switch {
		case p.peek().kind == tEOF:
			return
		case p.isIdent("data"):
			p.data()
		case p.isIdent("func"):
			p.fn()
		default:
			p.unexpected(`"data" or "func"`)
		}
	}
}

// data: data @name = "bytes" [align N] [pos]
func (p *parser) data() {
	p.next()
	d := &Data{Name: p.expect(tSym, "a symbol").text}
	p.punct("=")
	d.Bytes = []byte(p.expect(tString, "a string").text)
	if p.isIdent("align") {
		p.next()
		d.Align = p.size("an alignment")
	}
	d.Pos = p.optPos()
	p.endLine()
	p.m.Data = append(p.m.Data, d)
}

// size reads a non-negative decimal number below 2^32.
func (p *parser) size(what string) int64 {
	t := p.expect(tNum, what)
	n, err := strconv.ParseUint(t.text, 10, 32)
	if err != nil {
		p.failf(t.pos, "malformed %s %s (want a decimal number below 2^32)", what, t.text)
	}
	return int64(n)
}

func (p *parser) optPos() diag.Pos {
	if p.peek().kind != tPos {
		return diag.Pos{}
	}
	t := p.next()
	file := t.text
	if t.short && p.f != nil {
		file = p.f.Pos.File
	}
	return diag.Pos{File: file, Line: t.line, Col: t.col}
}

// fn: func @name(%p: T, ...) [-> results] [pos] { body }
func (p *parser) fn() {
	p.next()
	f := &Func{Name: p.expect(tSym, "a symbol").text, Body: &Region{}}
	p.f, p.vals = f, map[string]*Value{}
	p.punct("(")
	for !p.isPunct(")") {
		if len(f.Params) > 0 {
			p.punct(",")
		}
		t := p.expect(tValue, "a parameter")
		p.punct(":")
		f.Params = append(f.Params, p.define(t.text, p.typ()))
	}
	p.next()
	f.Results = p.optResults()
	f.Pos = p.optPos()
	p.punct("{")
	p.endLine()
	p.region(f.Body, true)
	p.punct("}")
	p.endLine()
	p.m.Funcs = append(p.m.Funcs, f)
	p.f = nil
}

func (p *parser) define(name string, t Type) *Value {
	v := p.f.NewValue(t)
	v.Name = name
	p.vals[name] = v
	return v
}

func (p *parser) use() *Value {
	t := p.expect(tValue, "a value")
	v, ok := p.vals[t.text]
	if !ok {
		p.failf(t.pos, "undefined value %s", sigilName('%', t.text))
	}
	return v
}

// values reads a possibly empty comma-separated list of values.
func (p *parser) values() []*Value {
	var vs []*Value
	if p.peek().kind != tValue {
		return nil
	}
	for {
		vs = append(vs, p.use())
		if !p.isPunct(",") {
			return vs
		}
		p.next()
	}
}

// typ: bool | i8 | i16 | i32 | i64 | ptr | value | fn(T, ...) [-> (T, ...)]
func (p *parser) typ() Type {
	t := p.expect(tIdent, "a type")
	switch t.text {
	case "bool":
		return Bool
	case "i8":
		return I8
	case "i16":
		return I16
	case "i32":
		return I32
	case "i64":
		return I64
	case "ptr":
		return Ptr
	case "dyn":
		return Dyn
	case "fn":
		p.depth++
		if p.depth > maxDepth {
			p.failf(t.pos, "types nested deeper than %d", maxDepth)
		}
		defer func() { p.depth-- }()
		params := p.typeList()
		var results []Type
		if p.isPunct("->") {
			p.next()
			results = p.typeList()
		}
		return FuncType(params, results)
	}
	p.failf(t.pos, "unknown type %s", t.text)
	return Type{}
}

// typeList: ( [T {, T}] )
func (p *parser) typeList() []Type {
	p.punct("(")
	var ts []Type
	for !p.isPunct(")") {
		if len(ts) > 0 {
			p.punct(",")
		}
		ts = append(ts, p.typ())
	}
	p.next()
	return ts
}

// optResults: [-> T | -> (T, ...)]
func (p *parser) optResults() []Type {
	if !p.isPunct("->") {
		return nil
	}
	p.next()
	if p.isPunct("(") {
		return p.typeList()
	}
	return []Type{p.typ()}
}

// region reads instructions up to a "}", "case" or "default" (left for
// the caller). The function body also holds the local declarations.
func (p *parser) region(r *Region, top bool) {
	p.depth++
	if p.depth > maxDepth {
		p.failf(p.peek().pos, "regions nested deeper than %d", maxDepth)
	}
	defer func() { p.depth-- }()
	for {
		p.skipNL()
		t := p.peek()
		switch {
		case t.kind == tEOF, p.isPunct("}"), p.isIdent("case"), p.isIdent("default"):
			return
		case top && (p.isIdent("var") || p.isIdent("slot")):
			p.local()
		default:
			p.instr(r)
		}
	}
}

// local: var $name: T [pos] | slot $name: N [align N] [pos]
func (p *parser) local() {
	kw := p.next().text
	l := &Local{Name: p.expect(tLocal, "a local").text}
	p.punct(":")
	if kw == "var" {
		l.Kind, l.Type = Var, p.typ()
	} else {
		l.Kind, l.Size = Slot, p.size("a size")
		l.Align = 1
		if p.isIdent("align") {
			p.next()
			l.Align = p.size("an alignment")
		}
	}
	l.Pos = p.optPos()
	p.endLine()
	p.f.Locals = append(p.f.Locals, l)
}

// instr reads one instruction, with its regions, and appends it to r.
func (p *parser) instr(r *Region) {
	var names []token
	if p.peek().kind == tValue {
		for {
			names = append(names, p.next())
			if !p.isPunct(",") {
				break
			}
			p.next()
		}
		p.punct("=")
	}
	opTok := p.expect(tIdent, "an instruction")
	op, ok := LookupOp(opTok.text)
	if !ok {
		p.failf(opTok.pos, "unknown instruction %s", opTok.text)
	}
	in := &Instr{Op: op, Parent: r}
	var explicit []Type
	switch op.Info().Form {
	case FormArgs:
		in.Args = p.values()
	case FormConst:
		in.Type = p.typ()
		in.Lit = p.literal(in.Type)
	case FormFuncRef:
		in.Sym = p.expect(tSym, "a function").text
		in.Type = p.typ()
	case FormAddrOf:
		switch t := p.next(); t.kind {
		case tLocal:
			in.Local = t.text
		case tSym:
			in.Sym = t.text
		default:
			p.i--
			p.unexpected("a slot or a data symbol")
		}
	case FormCast:
		in.Type = p.typ()
		in.Args = []*Value{p.use()}
	case FormLoad:
		in.Type = p.typ()
		in.Args = []*Value{p.use()}
		p.punct(",")
		in.Int = p.offset()
	case FormMem:
		in.Args = []*Value{p.use()}
		p.punct(",")
		in.Args = append(in.Args, p.use())
		p.punct(",")
		in.Int = p.offset()
	case FormGet:
		in.Local = p.expect(tLocal, "a var").text
	case FormSet:
		in.Local = p.expect(tLocal, "a var").text
		p.punct(",")
		in.Args = []*Value{p.use()}
	case FormCall, FormCallIndirect:
		if op == OpCall {
			in.Sym = p.expect(tSym, "a function").text
		} else {
			in.Args = []*Value{p.use()}
		}
		p.punct("(")
		in.Args = append(in.Args, p.values()...)
		p.punct(")")
		explicit = p.optResults()
	case FormBuiltin:
		t := p.expect(tIdent, "a builtin")
		if _, ok := LookupBuiltin(t.text); !ok {
			p.failf(t.pos, "unknown builtin %s", t.text)
		}
		in.Sym = t.text
		p.punct("(")
		in.Args = p.values()
		p.punct(")")
	case FormIf, FormSwitch:
		in.Args = []*Value{p.use()}
		explicit = p.optResults()
	case FormLoop:
		in.Label = p.expect(tLabel, "a label").text
		in.Regions = []*Region{{Parent: in}}
		if p.isPunct("(") {
			p.next()
			var params []token
			var types []Type
			for !p.isPunct(")") {
				if len(params) > 0 {
					p.punct(",")
				}
				params = append(params, p.expect(tValue, "a loop parameter"))
				p.punct(":")
				types = append(types, p.typ())
				p.punct("=")
				in.Args = append(in.Args, p.use())
			}
			p.next()
			for i, t := range params {
				in.Regions[0].Params = append(in.Regions[0].Params, p.define(t.text, types[i]))
			}
		}
		explicit = p.optResults()
	case FormBlock:
		in.Label = p.expect(tLabel, "a label").text
		explicit = p.optResults()
	case FormBranch:
		in.Label = p.expect(tLabel, "a label").text
		in.Args = p.values()
	case FormEffect, FormParallel:
		in.Str = p.expect(tString, "a step name").text
		var iters []*Value
		if p.isPunct("[") {
			p.next()
			iters = p.values()
			p.punct("]")
		}
		in.Args = append(p.values(), iters...)
		in.Iters = len(iters)
		if op == OpParallel || op == OpParallelEach {
			for p.peek().kind == tSym {
				in.Syms = append(in.Syms, p.next().text)
				if p.isPunct("(") {
					// The branches this one waits for: @f(0, 1).
					p.next()
					var w []int
					for !p.isPunct(")") {
						if len(w) > 0 {
							p.punct(",")
						}
						w = append(w, int(p.size("a branch index")))
					}
					p.next()
					if in.Waits == nil {
						in.Waits = make([][]int, len(in.Syms)-1, len(in.Syms))
					}
					for len(in.Waits) < len(in.Syms)-1 {
						in.Waits = append(in.Waits, nil)
					}
					in.Waits = append(in.Waits, w)
				}
				if !p.isPunct(",") {
					break
				}
				p.next()
			}
		}
	case FormAsm:
		in.Str = p.expect(tString, "assembly text").text
		if p.isIdent("in") {
			p.next()
			p.punct("(")
			for !p.isPunct(")") {
				if len(in.Args) > 0 {
					p.punct(",")
				}
				in.Regs = append(in.Regs, p.register())
				p.punct("=")
				in.Args = append(in.Args, p.use())
			}
			p.next()
		}
		if p.isIdent("out") {
			p.next()
			p.punct("(")
			for !p.isPunct(")") {
				if len(explicit) > 0 {
					p.punct(",")
				}
				in.Regs = append(in.Regs, p.register())
				p.punct(":")
				explicit = append(explicit, p.typ())
			}
			p.next()
		}
	}
	in.Pos = p.optPos()

	types := explicit
	if op.Info().Result != RExplicit {
		var ok bool
		if types, ok = inferResults(p.f, in); !ok {
			if op == OpGet {
				p.failf(opTok.pos, "undefined var %s", sigilName('$', in.Local))
			}
			p.failf(opTok.pos, "cannot infer the results of %s", op)
		}
	}
	if len(names) != len(types) {
		p.failf(opTok.pos, "%s defines %s, not %d", op, plural(len(types), "result"), len(names))
	}

	switch op.Info().Form {
	case FormIf:
		in.Regions = []*Region{{Parent: in}, {Parent: in}}
		p.openRegion()
		p.region(in.Regions[0], false)
		p.punct("}")
		if p.isIdent("else") {
			p.next()
			p.openRegion()
			p.region(in.Regions[1], false)
			p.punct("}")
		}
	case FormLoop, FormBlock:
		if in.Regions == nil {
			in.Regions = []*Region{{Parent: in}}
		}
		p.openRegion()
		p.region(in.Regions[0], false)
		p.punct("}")
	case FormSwitch:
		p.openRegion()
		p.cases(in)
		p.punct("}")
	}
	p.endLine()
	for i, t := range names {
		v := p.define(t.text, types[i])
		v.Def = in
		in.Results = append(in.Results, v)
	}
	r.Instrs = append(r.Instrs, in)
}

// openRegion reads the "{" and end of line that open a region.
func (p *parser) openRegion() {
	p.punct("{")
	p.endLine()
}

// cases reads a switch's case regions and its default region.
func (p *parser) cases(in *Instr) {
	x := in.Args[0].Type
	for {
		p.skipNL()
		switch {
		case p.isIdent("case"):
			p.next()
			var vals []int64
			for {
				if len(vals) > 0 {
					p.punct(",")
				}
				vals = append(vals, p.intLit(x))
				if !p.isPunct(",") {
					break
				}
			}
			p.punct(":")
			p.endLine()
			r := &Region{Parent: in}
			p.region(r, false)
			in.Cases = append(in.Cases, vals)
			in.Regions = append(in.Regions, r)
		case p.isIdent("default"):
			p.next()
			p.punct(":")
			p.endLine()
			r := &Region{Parent: in}
			p.region(r, false)
			in.Regions = append(in.Regions, r)
			p.skipNL()
			return
		default:
			p.unexpected(`"case" or "default"`)
		}
	}
}

// register reads rN, 0 ≤ N ≤ 255.
func (p *parser) register() int {
	t := p.expect(tIdent, "a register")
	if len(t.text) >= 2 && t.text[0] == 'r' && t.text[1] != '+' {
		if n, err := strconv.ParseUint(t.text[1:], 10, 8); err == nil && (t.text[1] != '0' || len(t.text) == 2) {
			return int(n)
		}
	}
	p.failf(t.pos, "malformed register %s (want r0 to r255)", t.text)
	return 0
}

// offset reads a signed byte offset.
func (p *parser) offset() int64 {
	t := p.expect(tNum, "an offset")
	n, err := strconv.ParseInt(t.text, 10, 64)
	if err != nil {
		p.failf(t.pos, "malformed offset %s (want a decimal integer)", t.text)
	}
	return n
}

// intLit reads an integer literal for type t (an integer, bool or ptr
// type): decimal or 0x hexadecimal, optionally negative, fitting in t's
// width as a signed or an unsigned number. It returns it normalized.
func (p *parser) intLit(t Type) int64 {
	tok := p.expect(tNum, "an integer")
	s, neg := tok.text, false
	if strings.HasPrefix(s, "-") {
		s, neg = s[1:], true
	}
	base := 10
	if strings.HasPrefix(s, "0x") {
		s, base = s[2:], 16
	}
	u, err := strconv.ParseUint(s, base, 64)
	if err != nil || s == "" || s[0] == '+' || base == 10 && len(s) > 1 && s[0] == '0' || strings.Contains(s, "_") {
		p.failf(tok.pos, "malformed integer %s", tok.text)
	}
	bits := t.Bits()
	if !t.IsInt() && t != Ptr {
		bits = 64
	}
	if neg && u > 1<<(bits-1) || !neg && bits < 64 && u >= 1<<bits {
		p.failf(tok.pos, "integer %s out of range for %s", tok.text, t)
	}
	x := int64(u)
	if neg {
		x = -x
	}
	return Normalize(t, x)
}

// literal reads the literal of a const of type t.
func (p *parser) literal(t Type) Literal {
	tok := p.peek()
	switch {
	case t == Bool || t == Dyn && tok.kind == tIdent && (tok.text == "true" || tok.text == "false"):
		id := p.expect(tIdent, "true or false")
		l := Literal{Kind: LitInt}
		if t == Dyn {
			l.Kind = LitBool
		}
		switch id.text {
		case "true":
			l.Int = 1
		case "false":
		default:
			p.failf(id.pos, "unexpected %s, expected true or false", id)
		}
		return l
	case t == Dyn:
		switch tok.kind {
		case tIdent:
			if tok.text == "unit" {
				p.next()
				return Literal{Kind: LitUnit}
			}
		case tString:
			p.next()
			return Literal{Kind: LitString, Str: tok.text}
		case tNum:
			p.next()
			x, err := strconv.ParseFloat(tok.text, 64)
			if err != nil || math.IsInf(x, 0) || math.IsNaN(x) || strings.ContainsAny(tok.text, "_xXpPiInN") {
				p.failf(tok.pos, "malformed number %s", tok.text)
			}
			return Literal{Kind: LitNumber, Num: x}
		}
		p.unexpected("unit, true, false, a number or a string")
	case t.IsInt() || t == Ptr:
		return Literal{Kind: LitInt, Int: p.intLit(t)}
	}
	p.failf(tok.pos, "no constants of type %s", t)
	return Literal{}
}

// plural formats n things.
func plural(n int, thing string) string {
	if n == 1 {
		return "1 " + thing
	}
	return fmt.Sprintf("%d %ss", n, thing)
}
