package grimoire

import (
	"strings"

	"github.com/antlr4-go/antlr/v4"

	"github.com/genesis-toolchain/genesis/diag"
	"github.com/genesis-toolchain/genesis/frontend/grimoire/parser"
	"github.com/genesis-toolchain/genesis/frontend/sllparse"
	"github.com/genesis-toolchain/genesis/frontend/source"
)

// ParseFile parses one spell, in either syntax. It always returns a Spell;
// when the list holds errors, the Spell may have holes (see ast.go) and is
// only good for tooling. ParseFile never panics, whatever src holds, and
// may be called from several goroutines at once. filename is only used
// in positions.
func ParseFile(filename string, src []byte) (*Spell, diag.List) {
	if len(src) >= chunkedParseMin {
		if s, ds, ok := parseChunked(filename, src); ok {
			return s, ds
		}
	}
	return parseWhole(filename, src)
}

// parseWhole parses a spell in one piece: its tokens and its parse tree
// whole, then the AST. It reports every error, with recovery.
func parseWhole(filename string, src []byte) (*Spell, diag.List) {
	b := &builder{file: filename, errLines: map[int]bool{}}
	s := &Spell{File: filename, SpellPos: diag.Pos{File: filename, Line: 1, Col: 1}}
	func() {
		defer b.recoverPhase(filename)
		b.checkUTF8(src)
		input := antlr.NewInputStream(string(src))
		lexer := parser.NewGrimoireLexer(input)
		lexer.RemoveErrorListeners()
		lexer.AddErrorListener(b)
		indented := newTokenSource(lexer, input, b.indentError)
		tokens := antlr.NewCommonTokenStream(indented, antlr.TokenDefaultChannel)
		tokens.Fill()
		if d := source.TooDeep(tokens.GetAllTokens(), depthClass); d != nil {
			if d.Chain {
				b.reporter.errorf(b.pos(d.Tok), CodeSyntax, "expression longer than %d operators; split it", MaxChain)
			} else {
				b.reporter.errorf(b.pos(d.Tok), CodeSyntax, "nesting deeper than %d levels (brackets, indented blocks, prefix operators, ?:); split the expression or the block", MaxNesting)
			}
			return
		}
		b.spell(s, parseSpell(tokens, b))
		b.misplacedWith(s)
	}()
	return s, b.sorted()
}

// parseSpell parses the tokens in two stages (package sllparse): SLL, and
// only if that gives up, again with full LL prediction and error recovery
// (errors.go's recovery), reporting to errs.
func parseSpell(tokens *antlr.CommonTokenStream, errs antlr.ErrorListener) parser.ISpellContext {
	p := parser.NewGrimoireParser(tokens)
	if tree, ok := sllparse.Try(p, p.Spell); ok {
		return tree
	}
	tokens.Seek(0)
	p = parser.NewGrimoireParser(tokens)
	p.RemoveErrorListeners()
	p.AddErrorListener(errs)
	p.SetErrorHandler(newRecovery())
	return p.Spell()
}

// A builder turns the parse tree of a spell into the AST, and reports
// syntax errors as the error listener of the lexer and parser. Every
// getter of the parse tree may return nil after error recovery: the
// builder then leaves the piece out, since the error is already reported.
type builder struct {
	*antlr.DefaultErrorListener
	reporter
	file string
	// errLines are the lines with a syntax error, syntaxErrors how many
	// there are: one error per line is reported, and none of the
	// builder's about a line that has a syntax error (it would be about
	// what error recovery made of the line).
	errLines     map[int]bool
	syntaxErrors int
}

// errorf reports a problem the builder finds, unless its line has a
// syntax error.
func (b *builder) errorf(pos diag.Pos, code, format string, args ...any) {
	if b.errLines[pos.Line] {
		return
	}
	b.reporter.errorf(pos, code, format, args...)
}

// checkUTF8 reports the first invalid UTF-8 sequence: ANTLR would read it
// as U+FFFD, and a string would silently hold other bytes than the file.
func (b *builder) checkUTF8(src []byte) {
	source.InvalidUTF8(src, func(line, col int, c byte) bool {
		b.reporter.errorf(diag.Pos{File: b.file, Line: line, Col: col}, CodeLexical, "invalid UTF-8 byte 0x%02x", c)
		return false
	})
}

// indentError reports an inconsistent dedent found by the token source.
func (b *builder) indentError(t antlr.Token, msg string) {
	if !b.errLines[t.GetLine()] {
		b.errLines[t.GetLine()] = true
		b.syntaxErrors++
		b.reporter.errorf(b.pos(t), CodeIndent, "%s", msg)
	}
}

// pos is the position of a token. ANTLR's column, like diag.Pos's, counts
// code points, but from 0.
func (b *builder) pos(t antlr.Token) diag.Pos { return source.TokenPos(b.file, t) }

// tpos is the position of a terminal node, or of nothing.
func (b *builder) tpos(n antlr.TerminalNode) diag.Pos { return source.TerminalPos(b.file, n) }

// cpos is where a rule context starts.
func (b *builder) cpos(c antlr.ParserRuleContext) diag.Pos { return source.ContextPos(b.file, c) }

// ── Names ──

// name makes an Ident of a name; nil if it is missing.
func (b *builder) name(c parser.INameContext) *Ident {
	if c == nil {
		return nil
	}
	return b.identOf(c)
}

// anyName makes an Ident of a name or keyword; nil if it is missing.
func (b *builder) anyName(c parser.IAnyNameContext) *Ident {
	if c == nil {
		return nil
	}
	return b.identOf(c)
}

// word makes an Ident of a keyword written as a value.
func (b *builder) word(c parser.IWordContext) *Ident {
	if c == nil {
		return nil
	}
	return b.identOf(c)
}

// identOf makes an Ident of the one token a name rule matched (name,
// anyName, word, possibly nested). After error recovery the rule may also
// hold a skipped token, which is not part of the name; nil if it matched
// none.
func (b *builder) identOf(c antlr.Tree) *Ident {
	for _, ch := range c.GetChildren() {
		switch ch := ch.(type) {
		case antlr.ErrorNode:
		case antlr.TerminalNode:
			if t := ch.GetSymbol(); t.GetTokenType() != antlr.TokenEOF {
				return &Ident{NamePos: b.pos(t), Name: t.GetText()}
			}
		default:
			if id := b.identOf(ch); id != nil {
				return id
			}
		}
	}
	return nil
}

// stringLit makes a StringLit of a STRING token, reporting bad escapes.
func (b *builder) stringLit(n antlr.TerminalNode) *StringLit {
	if n == nil || n.GetSymbol().GetTokenType() != parser.GrimoireLexerSTRING {
		return nil
	}
	t := n.GetSymbol()
	v, bad := decodeString(t.GetText())
	for _, e := range bad {
		p := b.pos(t)
		if e.line == 0 {
			p.Col += e.col
		} else {
			p.Line, p.Col = p.Line+e.line, e.col
		}
		b.errorf(p, CodeLexical, "unknown escape sequence %s; the escapes are \\n \\t \\r \\\\ \\\" \\'", e.text)
	}
	return &StringLit{LitPos: b.pos(t), Value: v}
}

// ── Spell and sections ──

func (b *builder) spell(s *Spell, c parser.ISpellContext) {
	if c == nil {
		return
	}
	if n := b.name(c.Name()); n != nil {
		s.SpellPos = b.tpos(c.SPELL())
		s.Name = n
	}
	body := c.SpellBody()
	if body == nil || body.Items() == nil {
		return
	}
	for _, it := range body.Items().AllItem() {
		switch {
		case it.ImportDecl() != nil:
			if imp := b.importDecl(it.ImportDecl()); imp != nil {
				s.Imports = append(s.Imports, imp)
			}
		case it.BlockDecl() != nil:
			if blk := b.blockDecl(it.BlockDecl()); blk != nil {
				s.Blocks = append(s.Blocks, blk)
			}
		case it.Trigger() != nil:
			if t := b.trigger(it.Trigger()); t != nil {
				s.Triggers = append(s.Triggers, t)
			}
		case it.Entry() != nil:
			if e := b.entry(it.Entry()); e != nil {
				b.section(s, e)
			}
		}
	}
}

func (b *builder) importDecl(c parser.IImportDeclContext) *Import {
	path := b.stringLit(c.STRING())
	if path == nil {
		return nil
	}
	imp := &Import{ImportPos: b.tpos(c.IMPORT()), Path: path}
	if c.AS() != nil {
		imp.Alias = b.name(c.Name())
	}
	return imp
}

func (b *builder) blockDecl(c parser.IBlockDeclContext) *Block {
	name := b.name(c.GetBlockName())
	if name == nil {
		return nil
	}
	blk := &Block{BlockPos: b.tpos(c.BLOCK()), Name: name, Body: b.suite(c.Suite())}
	for _, p := range c.GetParams() {
		if id := b.name(p); id != nil {
			blk.Params = append(blk.Params, id)
		}
	}
	return blk
}

// sectionNames are the sections of a spell, as the message about an
// unknown one lists them.
const sectionNames = "version, description, assets, params, limits, venues, state, skills, advisors and guards"

// section files a top-level entry into its section.
func (b *builder) section(s *Spell, e *Entry) {
	key := e.Key
	switch key.Name {
	case "version", "description":
		ref := &s.Version
		if key.Name == "description" {
			ref = &s.Description
		}
		if *ref != nil {
			s.Dups = append(s.Dups, key)
			return
		}
		*ref = e
	case "assets":
		s.Assets = sectionOf(s, s.Assets, key, b.assets(e))
	case "params":
		s.Params = sectionOf(s, s.Params, key, b.params(e))
	case "limits":
		s.Limits = sectionOf(s, s.Limits, key, b.limits(e))
	case "venues":
		s.Venues = sectionOf(s, s.Venues, key, b.venues(e))
	case "state":
		s.State = sectionOf(s, s.State, key, b.state(e))
	case "skills":
		s.Skills = sectionOf(s, s.Skills, key, b.skills(e))
	case "advisors":
		s.Advisors = sectionOf(s, s.Advisors, key, b.advisors(e))
	case "guards":
		s.Guards = sectionOf(s, s.Guards, key, b.guards(e))
	default:
		b.errorf(key.Pos(), CodeUnknownWord, "unknown section %s; the sections are %s", quote(key.Name), sectionNames)
	}
}

// sectionOf returns the section sec with items appended, making it when
// it is nil; a second header is recorded in s.Dups.
func sectionOf[T Node](s *Spell, sec *Section[T], header *Ident, items []T) *Section[T] {
	if sec == nil {
		return &Section[T]{Header: header, Items: items}
	}
	s.Dups = append(s.Dups, header)
	sec.Items = append(sec.Items, items...)
	return sec
}

// mapping returns the entries of e's value, which must be a mapping (an
// indented block of entries or an object literal); what names the value
// in the message when it is not.
func (b *builder) mapping(e *Entry, what string) []*Entry {
	return b.mappingOf(e.Value, what)
}

func (b *builder) mappingOf(x Expr, what string) []*Entry {
	switch x := x.(type) {
	case *ObjectLit:
		return x.Entries
	case nil:
		return nil
	}
	b.errorf(x.Pos(), CodeMisplaced, "%s must be a mapping of name: value entries", what)
	return nil
}

func (b *builder) assets(e *Entry) []*Asset {
	var out []*Asset
	if l, ok := e.Value.(*ListLit); ok {
		for _, x := range l.Elems {
			if id := b.nameOf(x, "an asset"); id != nil {
				out = append(out, &Asset{Name: id})
			}
		}
		return out
	}
	for _, ae := range b.mapping(e, "assets (a list of symbols or a mapping)") {
		a := &Asset{Name: ae.Key}
		for _, f := range b.mapping(ae, "the metadata of asset "+quote(ae.Key.Name)) {
			switch f.Key.Name {
			case "chain":
				a.Chain = f.Value
			case "address":
				a.Address = f.Value
			case "decimals":
				a.Decimals = f.Value
			default:
				a.Extra = append(a.Extra, f)
			}
		}
		out = append(out, a)
	}
	return out
}

// nameOf returns x as a name: an identifier, or a string naming one;
// what says what the name is for the message when x is neither.
func (b *builder) nameOf(x Expr, what string) *Ident {
	switch x := x.(type) {
	case *Ident:
		return x
	case *StringLit:
		return &Ident{NamePos: x.LitPos, Name: x.Value}
	case nil:
		return nil
	}
	b.errorf(x.Pos(), CodeMisplaced, "%s must be a name", what)
	return nil
}

func (b *builder) params(e *Entry) []*Param {
	var out []*Param
	for _, pe := range b.mapping(e, "params") {
		p := &Param{Name: pe.Key, Default: pe.Value}
		if o, ok := pe.Value.(*ObjectLit); ok && typedParam(o) {
			p.Typed, p.Default = true, nil
			for _, f := range o.Entries {
				switch f.Key.Name {
				case "type":
					p.Type = b.nameOf(f.Value, "a parameter's type")
				case "asset":
					p.Asset = b.nameOf(f.Value, "a parameter's asset")
				case "default":
					p.Default = f.Value
				case "min":
					p.Min = f.Value
				case "max":
					p.Max = f.Value
				default:
					p.Extra = append(p.Extra, f)
				}
			}
		}
		out = append(out, p)
	}
	return out
}

// typedParam reports whether a parameter's mapping declares a typed
// parameter (it has a type or a default) rather than being an object
// value.
func typedParam(o *ObjectLit) bool {
	for _, e := range o.Entries {
		if e.Key.Name == "type" || e.Key.Name == "default" {
			return true
		}
	}
	return false
}

func (b *builder) limits(e *Entry) []*Limit {
	var out []*Limit
	for _, le := range b.mapping(e, "limits") {
		out = append(out, &Limit{Name: le.Key, Value: le.Value})
	}
	return out
}

func (b *builder) venues(e *Entry) []*Venue {
	var out []*Venue
	for _, ve := range b.mapping(e, "venues") {
		v := &Venue{Name: ve.Key}
		switch x := ve.Value.(type) {
		case *VenueRef:
			v.Adapters = []*VenueRef{x}
		case *ListLit:
			v.Group = true
			for _, el := range x.Elems {
				if r, ok := el.(*VenueRef); ok {
					v.Adapters = append(v.Adapters, r)
				} else {
					b.errorf(el.Pos(), CodeMisplaced, "a venue group lists adapters, @name")
				}
			}
		case nil:
		default:
			b.errorf(x.Pos(), CodeMisplaced, "a venue is an adapter, @name, or a list of them")
		}
		out = append(out, v)
	}
	return out
}

func (b *builder) state(e *Entry) []*StateVar {
	var out []*StateVar
	for _, se := range b.mapping(e, "state") {
		var scope StateScope
		switch se.Key.Name {
		case "persistent":
			scope = Persistent
		case "ephemeral":
			scope = Ephemeral
		default:
			b.errorf(se.Key.Pos(), CodeUnknownWord, "unknown state scope %s; the scopes are persistent and ephemeral", quote(se.Key.Name))
			continue
		}
		for _, ve := range b.mapping(se, "state."+se.Key.Name) {
			out = append(out, &StateVar{Scope: scope, Name: ve.Key, Init: ve.Value})
		}
	}
	return out
}

func (b *builder) skills(e *Entry) []*Skill {
	var out []*Skill
	for _, se := range b.mapping(e, "skills") {
		sk := &Skill{Name: se.Key}
		for _, f := range b.mapping(se, "skill "+quote(se.Key.Name)) {
			switch f.Key.Name {
			case "type":
				sk.Type = b.nameOf(f.Value, "a skill's type")
			case "adapters":
				for _, x := range listOrOne(f.Value) {
					if r, ok := x.(*VenueRef); ok {
						sk.Adapters = append(sk.Adapters, &Ident{NamePos: r.AtPos, Name: r.Name})
					} else if id := b.nameOf(x, "an adapter"); id != nil {
						sk.Adapters = append(sk.Adapters, id)
					}
				}
			case "default_constraints":
				sk.DefaultsPos = f.Key.Pos()
				for _, c := range b.mapping(f, "default_constraints") {
					sk.Defaults = append(sk.Defaults, &Arg{Name: c.Key, Value: c.Value})
				}
			default:
				sk.Extra = append(sk.Extra, f)
			}
		}
		out = append(out, sk)
	}
	return out
}

// listOrOne is the elements of a list, or x alone.
func listOrOne(x Expr) []Expr {
	switch x := x.(type) {
	case *ListLit:
		return x.Elems
	case nil:
		return nil
	}
	return []Expr{x}
}

func (b *builder) advisors(e *Entry) []*Advisor {
	var out []*Advisor
	for _, ae := range b.mapping(e, "advisors") {
		a := &Advisor{Name: ae.Key}
		for _, f := range b.mapping(ae, "advisor "+quote(ae.Key.Name)) {
			switch f.Key.Name {
			case "model":
				a.Model = f.Value
			case "system_prompt", "system":
				a.SystemPrompt = f.Value
			case "skills":
				a.Skills = b.words(f.Value)
			case "allowed_tools":
				a.AllowedTools = b.words(f.Value)
			case "mcp":
				a.MCP = b.words(f.Value)
			case "timeout":
				a.Timeout = f.Value
			case "fallback":
				a.Fallback = f.Value
			case "rate_limit":
				for _, r := range b.mapping(f, "rate_limit") {
					switch r.Key.Name {
					case "max_per_run":
						a.MaxPerRun = r.Value
					case "max_per_hour":
						a.MaxPerHour = r.Value
					default:
						a.Extra = append(a.Extra, r)
					}
				}
			default:
				a.Extra = append(a.Extra, f)
			}
		}
		out = append(out, a)
	}
	return out
}

// words converts a list of tool, skill or server ids. An id may be
// written bare, as the specification's examples do: `web.search` reads as
// a member expression and `company-kb` as a subtraction, and both are
// taken back as the text they were written as.
func (b *builder) words(x Expr) []*Word {
	var out []*Word
	for _, el := range listOrOne(x) {
		if text, ok := wordText(el); ok {
			out = append(out, &Word{WordPos: el.Pos(), Text: text})
		} else {
			b.errorf(el.Pos(), CodeMisplaced, "expected an identifier or a string")
		}
	}
	return out
}

// wordText is the text of an id written as a name, a dotted name, names
// joined by '-', or a string.
func wordText(x Expr) (string, bool) {
	switch x := x.(type) {
	case *Ident:
		return x.Name, true
	case *StringLit:
		return x.Value, true
	case *MemberExpr:
		if l, ok := wordText(x.X); ok {
			return l + "." + x.Name.Name, true
		}
	case *BinaryExpr:
		if x.Op != "-" {
			return "", false
		}
		l, okl := wordText(x.X)
		r, okr := wordText(x.Y)
		return l + "-" + r, okl && okr
	}
	return "", false
}

func (b *builder) guards(e *Entry) []*Guard {
	var out []*Guard
	for _, ge := range b.mapping(e, "guards") {
		out = append(out, &Guard{Name: ge.Key, Check: ge.Value, Meta: ge.With})
		ge.With = nil
	}
	return out
}

// ── Triggers ──

// triggerKinds are the trigger words after `on`.
var triggerKinds = map[string]TriggerKind{"manual": Manual, "hourly": Hourly, "daily": Daily, "condition": Condition, "event": Event}

func (b *builder) trigger(c parser.ITriggerContext) *Trigger {
	t := &Trigger{OnPos: b.tpos(c.ON())}
	switch spec := c.TriggerSpec().(type) {
	case *parser.CronTriggerContext:
		t.Kind = Cron
		t.Cron = b.stringLit(spec.STRING())
		if t.Cron == nil {
			return nil
		}
	case *parser.NamedTriggerContext:
		name := b.name(spec.Name())
		if name == nil {
			return nil
		}
		kind, ok := triggerKinds[name.Name]
		if !ok {
			b.errorf(name.Pos(), CodeUnknownWord, "unknown trigger %s; the triggers are manual, hourly, daily, \"<cron>\", condition <expr> and event \"<name>\"", quote(name.Name))
			return nil
		}
		t.Kind = kind
		cond, every, where := b.expr(spec.GetCond()), b.expr(spec.GetEvery()), b.expr(spec.GetWhere())
		switch kind {
		case Condition:
			if cond == nil && spec.GetCond() == nil {
				b.errorf(name.Pos(), CodeMissing, "on condition needs a condition: on condition <expr> [every <duration>]:")
			}
			t.Cond, t.Every = cond, every
			b.misplaced(where, "where belongs to event triggers")
		case Event:
			switch x := cond.(type) {
			case *StringLit:
				t.Event = x
			case nil:
				if spec.GetCond() == nil {
					b.errorf(name.Pos(), CodeMissing, "on event needs the event's name: on event \"<name>\" [where <expr>]:")
				}
			default:
				b.errorf(x.Pos(), CodeMisplaced, "an event's name is a string: on event \"<name>\"")
			}
			t.Where = where
			b.misplaced(every, "every belongs to condition triggers")
		default:
			b.misplaced(cond, "on "+name.Name+" takes no condition")
			b.misplaced(every, "every belongs to condition triggers")
			b.misplaced(where, "where belongs to event triggers")
		}
	default:
		return nil
	}
	t.Body = b.block(c.Block())
	return t
}

// misplaced reports x, when there is one, as misplaced with msg; it
// returns nil.
func (b *builder) misplaced(x Expr, msg string) Expr {
	if x != nil {
		b.errorf(x.Pos(), CodeMisplaced, "%s", msg)
	}
	return nil
}

// ── Entries ──

func (b *builder) entry(c parser.IEntryContext) *Entry {
	if c == nil {
		return nil
	}
	key := b.key(c.Key())
	if key == nil {
		return nil
	}
	e := &Entry{Key: key}
	switch v := c.EntryValue().(type) {
	case *parser.MappingValueContext:
		e.Value = &ObjectLit{LbracePos: b.tpos(v.INDENT()), Entries: b.entries(v.Entries())}
	case *parser.ExprValueContext:
		e.Value = b.expr(v.Expression())
		e.With = b.withClause(v.WithClause())
	case *parser.WordValueContext:
		if w := b.word(v.Word()); w != nil {
			e.Value = w
		}
	}
	if e.Value == nil {
		return nil
	}
	return e
}

func (b *builder) key(c parser.IKeyContext) *Ident {
	if c == nil {
		return nil
	}
	if s := c.STRING(); s != nil {
		if lit := b.stringLit(s); lit != nil {
			return &Ident{NamePos: lit.LitPos, Name: lit.Value}
		}
		return nil
	}
	return b.name(c.Name())
}

func (b *builder) entries(c parser.IEntriesContext) []*Entry {
	if c == nil {
		return nil
	}
	var out []*Entry
	for _, ec := range c.AllEntry() {
		if e := b.entry(ec); e != nil {
			out = append(out, e)
		}
	}
	return out
}

func (b *builder) objectLit(c parser.IObjectLitContext) *ObjectLit {
	o := &ObjectLit{LbracePos: b.tpos(c.LBRACE())}
	for _, ec := range c.AllEntry() {
		if e := b.entry(ec); e != nil {
			o.Entries = append(o.Entries, e)
		}
	}
	return o
}

// misplacedWith reports every entry left with `with` metadata: only
// guards take it, and b.guards moved theirs into the Guards.
func (b *builder) misplacedWith(s *Spell) {
	Inspect(s, func(n Node) bool {
		if e, ok := n.(*Entry); ok && len(e.With) > 0 {
			b.errorf(e.With[0].Pos(), CodeMisplaced, "with metadata belongs to guards")
		}
		return true
	})
}

func (b *builder) withClause(c parser.IWithClauseContext) []*Arg {
	if c == nil {
		return nil
	}
	var out []*Arg
	for _, wc := range c.AllWithArg() {
		name := b.anyName(wc.AnyName())
		value := b.expr(wc.Expression())
		if name != nil && value != nil {
			out = append(out, &Arg{Name: name, Value: value})
		}
	}
	return out
}

// ── Statements ──

func (b *builder) suite(c parser.ISuiteContext) []Stmt {
	if c == nil {
		return nil
	}
	if c.Block() != nil {
		return b.block(c.Block())
	}
	return b.braceBlock(c.BraceBlock())
}

func (b *builder) block(c parser.IBlockContext) []Stmt {
	if c == nil {
		return nil
	}
	if c.BraceBlock() != nil {
		return b.braceBlock(c.BraceBlock())
	}
	return b.statements(c.Statements())
}

func (b *builder) braceBlock(c parser.IBraceBlockContext) []Stmt {
	if c == nil {
		return nil
	}
	return b.statements(c.Statements())
}

func (b *builder) statements(c parser.IStatementsContext) []Stmt {
	if c == nil {
		return nil
	}
	var out []Stmt
	for _, sc := range c.AllStatement() {
		if s := b.stmt(sc); s != nil {
			out = append(out, s)
		}
	}
	return out
}

func (b *builder) stmt(c parser.IStatementContext) Stmt {
	switch {
	case c.IfStmt() != nil:
		return b.ifStmt(c.IfStmt())
	case c.ForStmt() != nil:
		f := c.ForStmt()
		v := b.name(f.Name())
		if v == nil {
			return nil
		}
		return &ForStmt{ForPos: b.tpos(f.FOR()), Var: v, Iter: b.expr(f.Expression()), Body: b.suite(f.Suite())}
	case c.RepeatStmt() != nil:
		r := c.RepeatStmt()
		return &RepeatStmt{RepeatPos: b.tpos(r.REPEAT()), Count: b.expr(r.Expression()), Body: b.suite(r.Suite())}
	case c.LoopStmt() != nil:
		l := c.LoopStmt()
		return &LoopStmt{LoopPos: b.tpos(l.LOOP()), Until: b.expr(l.GetUntil()), Max: b.expr(l.GetMax()), Body: b.suite(l.Suite())}
	case c.TryStmt() != nil:
		return b.tryStmt(c.TryStmt())
	case c.ParallelStmt() != nil:
		return b.parallelStmt(c.ParallelStmt())
	case c.AtomicStmt() != nil:
		return b.atomicStmt(c.AtomicStmt())
	case c.EmitStmt() != nil:
		return b.emitStmt(c.EmitStmt())
	case c.HaltStmt() != nil:
		h := c.HaltStmt()
		return &HaltStmt{HaltPos: b.tpos(h.HALT()), Reason: b.stringLit(h.STRING())}
	case c.WaitStmt() != nil:
		w := c.WaitStmt()
		return &WaitStmt{WaitPos: b.tpos(w.WAIT()), Duration: b.expr(w.Expression())}
	case c.PassStmt() != nil:
		return &PassStmt{PassPos: b.tpos(c.PassStmt().PASS())}
	case c.DoStmt() != nil:
		return b.doStmt(c.DoStmt())
	case c.AssignStmt() != nil:
		return b.assignStmt(c.AssignStmt())
	case c.ExprStmt() != nil:
		e := c.ExprStmt()
		return b.valueStmt(nil, b.top(e.Expression()), e.Pipeline(), e.AllActionClause())
	}
	return nil
}

func (b *builder) ifStmt(c parser.IIfStmtContext) Stmt {
	s := &IfStmt{IfPos: b.tpos(c.IF()), Cond: b.expr(c.Expression()), Then: b.suite(c.Suite())}
	for _, ec := range c.AllElifClause() {
		s.Elifs = append(s.Elifs, &Elif{ElifPos: b.tpos(ec.ELIF()), Cond: b.expr(ec.Expression()), Body: b.suite(ec.Suite())})
	}
	if ec := c.ElseClause(); ec != nil {
		s.ElsePos = b.tpos(ec.ELSE())
		s.Else = b.suite(ec.Suite())
	}
	return s
}

func (b *builder) tryStmt(c parser.ITryStmtContext) Stmt {
	s := &TryStmt{TryPos: b.tpos(c.TRY()), Body: b.suite(c.Suite())}
	for _, cc := range c.AllCatchClause() {
		s.Catches = append(s.Catches, b.catchClause(cc))
	}
	if fc := c.FinallyClause(); fc != nil {
		s.FinallyPos = b.tpos(fc.FINALLY())
		s.Finally = b.suite(fc.Suite())
	}
	return s
}

// catchActions are the values of a catch clause's `action:`.
var catchActions = vocab("skip", "halt", "revert")

func (b *builder) catchClause(c parser.ICatchClauseContext) *Catch {
	k := &Catch{CatchPos: b.tpos(c.CATCH())}
	if c.STAR() == nil {
		k.Error = b.name(c.Name())
	}
	body := c.CatchBody()
	if body == nil || body.CatchItems() == nil {
		return k
	}
	for _, it := range body.CatchItems().AllCatchItem() {
		if it.Statement() != nil {
			if s := b.stmt(it.Statement()); s != nil {
				k.Body = append(k.Body, s)
			}
			continue
		}
		e := b.entry(it.Entry())
		if e == nil {
			continue
		}
		switch e.Key.Name {
		case "retry":
			if k.Retry != nil {
				b.errorf(e.Key.Pos(), CodeDuplicate, "a second retry policy for this catch")
			}
			k.Retry = b.retry(e)
		case "action":
			if k.Action != nil {
				b.errorf(e.Key.Pos(), CodeDuplicate, "a second action for this catch")
			}
			k.Action = b.choice(e.Value, "catch action", catchActions)
		default:
			k.Extra = append(k.Extra, e)
		}
	}
	return k
}

// backoffs are the values of a retry policy's `backoff:`.
var backoffs = vocab("none", "linear", "exponential")

func (b *builder) retry(e *Entry) *Retry {
	r := &Retry{RetryPos: e.Key.Pos()}
	for _, f := range b.mapping(e, "retry") {
		switch f.Key.Name {
		case "max_attempts":
			r.MaxAttempts = f.Value
		case "backoff":
			r.Backoff = b.choice(f.Value, "backoff", backoffs)
		case "backoff_base":
			r.BackoffBase = f.Value
		case "max_backoff":
			r.MaxBackoff = f.Value
		default:
			r.Extra = append(r.Extra, f)
		}
	}
	return r
}

// joins, failModes and bestOrders are the values of parallel's options.
var (
	joins      = vocab("all", "any", "first", "best", "majority")
	failModes  = vocab("abort", "continue")
	bestOrders = vocab("max", "min")
)

func (b *builder) parallelStmt(c parser.IParallelStmtContext) Stmt {
	s := &ParallelStmt{ParallelPos: b.tpos(c.PARALLEL())}
	seen := map[string]bool{}
	for _, oc := range c.AllOption() {
		name := b.name(oc.Name())
		value := b.expr(oc.Expression())
		if name == nil || value == nil {
			continue
		}
		if seen[name.Name] {
			b.errorf(name.Pos(), CodeDuplicate, "option %s given twice", name.Name)
			continue
		}
		seen[name.Name] = true
		switch name.Name {
		case "join":
			s.Join = b.choice(value, "join", joins)
		case "on_fail":
			s.OnFail = b.choice(value, "on_fail", failModes)
		case "metric":
			s.Metric = value
		case "order":
			s.Order = b.choice(value, "order", bestOrders)
		case "count":
			s.Count = value
		default:
			b.errorf(name.Pos(), CodeUnknownWord, "unknown parallel option %s; the options are join, on_fail, metric, order and count", quote(name.Name))
		}
	}
	if body := c.ParallelBody(); body != nil && body.Branches() != nil {
		for _, bc := range body.Branches().AllBranch() {
			if name := b.name(bc.Name()); name != nil {
				s.Branches = append(s.Branches, &Branch{Name: name, Body: b.suite(bc.Suite())})
			}
		}
	}
	return s
}

// atomicModes are the failure modes of an atomic block.
var atomicModes = vocab("revert", "skip", "halt")

func (b *builder) atomicStmt(c parser.IAtomicStmtContext) Stmt {
	s := &AtomicStmt{AtomicPos: b.tpos(c.ATOMIC()), Body: b.suite(c.Suite())}
	switch {
	case c.HALT() != nil:
		s.Mode = &Ident{NamePos: b.tpos(c.HALT()), Name: "halt"}
	case c.GetFailureMode() != nil:
		s.Mode = b.choice(identExpr(b.name(c.GetFailureMode())), "atomic failure mode", atomicModes)
	}
	return s
}

func (b *builder) emitStmt(c parser.IEmitStmtContext) Stmt {
	event := b.name(c.Name())
	if event == nil {
		return nil
	}
	s := &EmitStmt{EmitPos: b.tpos(c.EMIT()), Event: event}
	for _, a := range b.args(c.Args()) {
		if a.Name == nil {
			b.errorf(a.Pos(), CodeMisplaced, "an event's data is written name=value")
			continue
		}
		s.Args = append(s.Args, a)
	}
	return s
}

func (b *builder) doStmt(c parser.IDoStmtContext) Stmt {
	s := &DoStmt{DoPos: b.tpos(c.DO())}
	for _, p := range c.GetPath() {
		id := b.name(p)
		if id == nil {
			return nil
		}
		s.Path = append(s.Path, id)
	}
	if len(s.Path) == 0 {
		return nil
	}
	for _, a := range b.args(c.Args()) {
		if a.Name != nil {
			b.errorf(a.Pos(), CodeMisplaced, "a block's arguments are positional")
			continue
		}
		s.Args = append(s.Args, a)
	}
	return s
}

func (b *builder) assignStmt(c parser.IAssignStmtContext) Stmt {
	target := b.name(c.Name())
	if target == nil {
		return nil
	}
	if ac := c.Advise(); ac != nil {
		return b.advise(target, ac)
	}
	return b.valueStmt(target, b.top(c.Expression()), c.Pipeline(), c.AllActionClause())
}

// valueStmt makes the statement of an expression, bound to target or not:
// a venue action with its clauses, a pipeline, or (bound only) an
// assignment.
func (b *builder) valueStmt(target *Ident, x Expr, pc parser.IPipelineContext, clauses []parser.IActionClauseContext) Stmt {
	if pc != nil {
		s := &PipelineStmt{Target: target, Source: b.operand(x), Stages: b.pipeline(pc)}
		if s.Source == nil && target == nil {
			return nil
		}
		return s
	}
	if a, ok := x.(*actionCall); ok {
		s := &ActionStmt{Target: target, Venue: a.venue, Action: a.action, Args: a.args}
		for _, cc := range clauses {
			if cc.USING() != nil {
				if s.Using != nil {
					b.errorf(b.tpos(cc.USING()), CodeDuplicate, "a second using clause")
				}
				s.Using = b.name(cc.Name())
			} else {
				if s.With != nil {
					b.errorf(b.cpos(cc), CodeDuplicate, "a second with clause")
				}
				s.With = append(s.With, b.withClause(cc.WithClause())...)
			}
		}
		return s
	}
	for _, cc := range clauses {
		b.errorf(b.cpos(cc), CodeMisplaced, "using and with apply to venue actions, venue.action(...)")
	}
	if target == nil {
		if x != nil {
			b.errorf(x.Pos(), CodeMisplaced, "this expression does nothing: a statement that is an expression must be a venue action, venue.action(...), or a pipeline")
		}
		return nil
	}
	return &AssignStmt{Target: target, Value: x}
}

// stageOps are the operations of a pipeline's stages.
var stageOps = vocab("filter", "map", "pmap", "reduce", "where", "take", "skip", "sort")

// sortOrders are the orders of a sort stage.
var sortOrders = vocab("asc", "desc")

func (b *builder) pipeline(c parser.IPipelineContext) []*Stage {
	var out []*Stage
	for _, sc := range c.AllStage() {
		op := b.choice(identExpr(b.name(sc.GetOp())), "pipeline stage", stageOps)
		if op == nil {
			continue
		}
		st := &Stage{PipePos: b.tpos(sc.PIPE()), Op: op, Arg: b.expr(sc.GetOperand()), By: b.expr(sc.GetBy()), Body: b.suite(sc.Suite())}
		if sc.GetOrder() != nil {
			st.Order = b.choice(identExpr(b.name(sc.GetOrder())), "sort order", sortOrders)
		}
		if op.Name != "reduce" && op.Name != "take" && op.Name != "skip" {
			st.Arg = b.misplaced(st.Arg, op.Name+" takes no argument")
		}
		if op.Name != "sort" {
			st.By = b.misplaced(st.By, "by belongs to sort")
			if st.Order != nil {
				b.errorf(st.Order.Pos(), CodeMisplaced, "order belongs to sort")
				st.Order = nil
			}
		}
		out = append(out, st)
	}
	return out
}

// schemaTypes are the types of an advisory output schema.
var schemaTypes = vocab("boolean", "number", "enum", "string", "object", "array")

// violationPolicies are the values of an advise's on_violation.
var violationPolicies = vocab("reject", "clamp")

func (b *builder) advise(target *Ident, c parser.IAdviseContext) Stmt {
	s := &AdviseStmt{Target: target, AdvisePos: b.tpos(c.ADVISE()), Advisor: b.name(c.Name()), Prompt: b.stringLit(c.STRING())}
	if s.Advisor == nil || s.Prompt == nil {
		return nil
	}
	var entries []*Entry
	if c.Entries() != nil {
		entries = b.entries(c.Entries())
	} else if c.ObjectLit() != nil {
		entries = b.objectLit(c.ObjectLit()).Entries
	}
	for _, e := range entries {
		switch e.Key.Name {
		case "output":
			s.Output = b.schema(e.Value)
		case "timeout":
			s.Timeout = e.Value
		case "fallback":
			s.Fallback = e.Value
		case "context":
			s.Context = b.mapping(e, "an advise's context")
		case "within":
			s.Within = b.nameOf(e.Value, "within")
		case "on_violation":
			s.OnViolation = b.choice(e.Value, "on_violation", violationPolicies)
		default:
			s.Extra = append(s.Extra, e)
		}
	}
	return s
}

// schema converts an output schema: a mapping with a type, or the short
// form, the type alone (`amount: number`).
func (b *builder) schema(x Expr) *Schema {
	if x == nil {
		return nil
	}
	o, ok := x.(*ObjectLit)
	if !ok {
		t := b.choice(x, "output type", schemaTypes)
		if t == nil {
			return nil
		}
		return &Schema{TypePos: t.Pos(), Type: t.Name}
	}
	s := &Schema{TypePos: o.Pos()}
	for _, e := range o.Entries {
		switch e.Key.Name {
		case "type":
			if t := b.choice(e.Value, "output type", schemaTypes); t != nil {
				s.TypePos, s.Type = t.Pos(), t.Name
			}
		case "values":
			if l, ok := e.Value.(*ListLit); ok {
				s.Values = l.Elems
			} else {
				b.errorf(e.Value.Pos(), CodeMisplaced, "an enum's values are a list")
			}
		case "min":
			s.Min = e.Value
		case "max":
			s.Max = e.Value
		case "min_length":
			s.MinLength = e.Value
		case "max_length":
			s.MaxLength = e.Value
		case "pattern":
			s.Pattern = e.Value
		case "fields":
			for _, f := range b.mapping(e, "an object's fields") {
				if fs := b.schema(f.Value); fs != nil {
					s.Fields = append(s.Fields, &SchemaField{Name: f.Key, Schema: fs})
				}
			}
		case "items":
			s.Items = b.schema(e.Value)
		default:
			s.Extra = append(s.Extra, e)
		}
	}
	return s
}

// identExpr is id as an Expr: nil (not a nil *Ident) when id is nil.
func identExpr(id *Ident) Expr {
	if id == nil {
		return nil
	}
	return id
}

// vocab makes a vocabulary: the set of words a choice may be.
func vocab(ws ...string) []string { return ws }

// choice returns x as one of the words of a vocabulary (a name or a
// string holding one); what names the choice in the message when it is
// not. A nil x gives nil silently.
func (b *builder) choice(x Expr, what string, vocabulary []string) *Ident {
	var id *Ident
	switch x := x.(type) {
	case nil:
		return nil
	case *Ident:
		id = x
	case *StringLit:
		id = &Ident{NamePos: x.LitPos, Name: x.Value}
	default:
		b.errorf(x.Pos(), CodeMisplaced, "%s must be one of %s", what, orList(vocabulary))
		return nil
	}
	for _, w := range vocabulary {
		if id.Name == w {
			return id
		}
	}
	b.errorf(id.Pos(), CodeUnknownWord, "unknown %s %s; it is one of %s", what, quote(id.Name), orList(vocabulary))
	return nil
}

// orList writes words as "a, b or c".
func orList(ws []string) string {
	if len(ws) == 1 {
		return ws[0]
	}
	return strings.Join(ws[:len(ws)-1], ", ") + " or " + ws[len(ws)-1]
}
