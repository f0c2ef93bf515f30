package grimoire

import (
	"fmt"
	"math/big"
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/genesis-toolchain/genesis/diag"
)

// CheckSpell checks a parsed spell and annotates it in place (ast.go says
// what it sets): declarations are unique and well-formed, every name
// resolves, every venue, skill, advisor and block exists, unit amounts
// convert exactly. It returns the diagnostics in source order; the spell
// is good for lowering when none is an error.
//
// Blocks of imported spells are found through Import.Spell, which Check
// sets; when it is nil (CheckSpell called on ParseFile's result alone), `do`
// into the import is accepted unchecked. CheckSpell does not check the
// imported spells themselves: Check does. CheckSpell must not be given a spell
// whose parse reported errors, but does not fail on one.
func CheckSpell(s *Spell) diag.List {
	return check(s, false)
}

// check is CheckSpell; a library spell (one that is imported) needs no
// trigger, even when it has no blocks.
func check(s *Spell, library bool) diag.List {
	c := &checker{spell: s}
	func() {
		defer c.recoverPhase(s.File)
		c.declarations()
		// A spell without triggers is a library of blocks (to import),
		// if it has blocks; else it can never run.
		if !library && len(s.Triggers) == 0 && len(s.Blocks) == 0 && s.Name != nil {
			c.errorf(s.Name.Pos(), CodeMissing, "spell %s has no trigger; it needs at least one, such as on manual:", s.Name.Name)
		}
		c.bodies()
	}()
	return c.sorted()
}

// A checker holds one spell's declarations, by name. The maps are only
// looked up; anything printed from them is sorted first.
type checker struct {
	reporter
	spell    *Spell
	assets   map[string]*Asset
	params   map[string]*Param
	limits   map[string]*Limit
	venues   map[string]*Venue // by alias
	adapters map[string]*Venue // by adapter name: the first alias of it
	state    map[string]*StateVar
	skills   map[string]*Skill
	advisors map[string]*Advisor
	blocks   map[string]*Block
	imports  map[string]*Import // by namespace
	// undeclared holds the undeclared assets already reported (G105 is
	// one warning per asset, at its first use).
	undeclared map[string]bool
}

// undeclaredAsset reports the undeclared asset name at pos, the first
// time only.
func (c *checker) undeclaredAsset(pos diag.Pos, name string) {
	if c.undeclared[name] {
		return
	}
	if c.undeclared == nil {
		c.undeclared = map[string]bool{}
	}
	c.undeclared[name] = true
	c.warnf(pos, CodeUnknownAsset, "asset %s is not declared in assets", name)
}

// ── Declarations ──

func (c *checker) declarations() {
	s := c.spell
	for _, d := range s.Dups {
		c.errorf(d.Pos(), CodeDuplicate, "section %s is written a second time; the first is at %s (their entries are taken together)",
			d.Name, at(s.header(d.Name).Pos()))
	}
	for _, e := range []*Entry{s.Version, s.Description} {
		if e == nil {
			continue
		}
		if _, ok := e.Value.(*StringLit); !ok {
			c.errorf(e.Value.Pos(), CodeBadValue, "%s must be a string", e.Key.Name)
		}
	}
	c.assets = declare(c, items(s.Assets), "asset", func(a *Asset) *Ident { return a.Name })
	c.params = declare(c, items(s.Params), "param", func(p *Param) *Ident { return p.Name })
	c.limits = declare(c, items(s.Limits), "limit", func(l *Limit) *Ident { return l.Name })
	c.venues = declare(c, items(s.Venues), "venue", func(v *Venue) *Ident { return v.Name })
	c.state = declare(c, items(s.State), "state variable", func(v *StateVar) *Ident { return v.Name })
	c.skills = declare(c, items(s.Skills), "skill", func(k *Skill) *Ident { return k.Name })
	c.advisors = declare(c, items(s.Advisors), "advisor", func(a *Advisor) *Ident { return a.Name })
	c.blocks = declare(c, s.Blocks, "block", func(b *Block) *Ident { return b.Name })
	c.adapters = map[string]*Venue{}
	for _, v := range items(s.Venues) {
		seen := map[string]bool{}
		for _, a := range v.Adapters {
			if seen[a.Name] {
				c.errorf(a.Pos(), CodeDuplicate, "adapter @%s is in venue %s twice", a.Name, v.Name.Name)
			}
			seen[a.Name] = true
			if c.adapters[a.Name] == nil {
				c.adapters[a.Name] = v
			}
		}
	}
	c.imports = map[string]*Import{}
	for _, imp := range s.Imports {
		ns := imp.Namespace()
		if first := c.imports[ns]; first != nil {
			c.errorf(imp.Pos(), CodeDuplicate, "import namespace %s is taken by the import at %s", ns, at(first.Pos()))
			continue
		}
		c.imports[ns] = imp
	}

	global := newScope()
	for _, a := range items(s.Assets) {
		c.asset(a, global)
	}
	for _, p := range items(s.Params) {
		c.param(p, global)
	}
	for _, l := range items(s.Limits) {
		c.expr(l.Value, global)
	}
	for _, v := range items(s.State) {
		c.expr(v.Init, global)
	}
	for _, k := range items(s.Skills) {
		c.skill(k)
	}
	for _, a := range items(s.Advisors) {
		c.advisor(a, global)
	}
	for _, g := range items(s.Guards) {
		c.guard(g, global)
	}
	declare(c, items(s.Guards), "guard", func(g *Guard) *Ident { return g.Name })
	c.triggers()
}

// header is the header of the section named name, which the spell has.
func (s *Spell) header(name string) *Ident {
	var h *Ident
	switch name {
	case "version":
		h = s.Version.Key
	case "description":
		h = s.Description.Key
	case "assets":
		h = s.Assets.Header
	case "params":
		h = s.Params.Header
	case "limits":
		h = s.Limits.Header
	case "venues":
		h = s.Venues.Header
	case "state":
		h = s.State.Header
	case "skills":
		h = s.Skills.Header
	case "advisors":
		h = s.Advisors.Header
	case "guards":
		h = s.Guards.Header
	}
	return h
}

// items is the items of a section, none when it is absent.
func items[T Node](s *Section[T]) []T {
	if s == nil {
		return nil
	}
	return s.Items
}

// declare maps declarations by name, reporting a name declared twice.
func declare[T Node](c *checker, ds []T, what string, name func(T) *Ident) map[string]T {
	m := map[string]T{}
	for _, d := range ds {
		n := name(d)
		if first, ok := m[n.Name]; ok {
			c.errorf(n.Pos(), CodeDuplicate, "%s %s is defined twice; the first is at %s", what, n.Name, at(first.Pos()))
			continue
		}
		m[n.Name] = d
	}
	return m
}

// at writes a position of the same file as a message shows it.
func at(p diag.Pos) string { return fmt.Sprintf("%d:%d", p.Line, p.Col) }

// Namespace is the name `do` reaches the import's blocks by: its alias,
// or the stem of its file name.
func (i *Import) Namespace() string {
	if i.Alias != nil {
		return i.Alias.Name
	}
	base := path.Base(i.Path.Value)
	return strings.TrimSuffix(base, path.Ext(base))
}

func (c *checker) asset(a *Asset, sc *scope) {
	if a.Chain != nil {
		c.expr(a.Chain, sc)
		if isLiteral(a.Chain) {
			if n, ok := intValue(a.Chain); !ok || n.Sign() < 0 {
				c.errorf(a.Chain.Pos(), CodeBadValue, "an asset's chain is a chain id, a non-negative integer")
			}
		}
	}
	if a.Address != nil {
		switch x := a.Address.(type) {
		case *AddressLit:
			c.expr(x, sc)
		case *StringLit:
			if !addressPattern.MatchString(x.Value) {
				c.errorf(x.Pos(), CodeBadValue, "%q is not an address: 0x and 40 hex digits", x.Value)
			}
		default:
			c.errorf(x.Pos(), CodeBadValue, "an asset's address is 0x and 40 hex digits, or a string holding one")
		}
	}
	if a.Decimals != nil {
		if n, ok := intValue(a.Decimals); !ok || n.Sign() < 0 || n.Cmp(big.NewInt(255)) > 0 {
			c.errorf(a.Decimals.Pos(), CodeBadValue, "decimals must be an integer from 0 to 255")
		}
	}
	c.extra(a.Extra, "asset metadata", "chain, address and decimals")
}

var addressPattern = regexp.MustCompile(`^0x[0-9a-fA-F]{40}$`)

// paramTypes are the types of a typed parameter.
var paramTypes = vocab("number", "bool", "string", "address", "asset", "amount", "bps", "duration")

func (c *checker) param(p *Param, sc *scope) {
	if u, ok := p.Default.(*UnitLit); ok && p.Typed && p.Type != nil && p.Type.Name == "amount" &&
		p.Asset != nil && u.Unit.Name != "bps" && u.Unit.Name != p.Asset.Name {
		c.errorf(u.Unit.Pos(), CodeBadUnit, "the default of %s is in %s, but the parameter is an amount of %s", p.Name.Name, u.Unit.Name, p.Asset.Name)
	} else {
		c.expr(p.Default, sc)
	}
	c.expr(p.Min, sc)
	c.expr(p.Max, sc)
	if !p.Typed {
		return
	}
	c.extra(p.Extra, "parameter field", "type, asset, default, min and max")
	if p.Type == nil {
		c.errorf(p.Name.Pos(), CodeMissing, "typed parameter %s has no type; the types are %s", p.Name.Name, orList(paramTypes))
		return
	}
	if !slices.Contains(paramTypes, p.Type.Name) {
		c.errorf(p.Type.Pos(), CodeUnknownWord, "unknown parameter type %s; it is one of %s", quote(p.Type.Name), orList(paramTypes))
		return
	}
	if p.Asset != nil {
		if p.Type.Name != "amount" {
			c.errorf(p.Asset.Pos(), CodeMisplaced, "only an amount parameter has an asset")
		} else if c.assets[p.Asset.Name] == nil {
			c.undeclaredAsset(p.Asset.Pos(), p.Asset.Name)
		}
	}
	switch d := p.Default.(type) {
	case nil:
	case *UnitLit:
		switch {
		case p.Type.Name == "amount" && d.Unit.Name != "bps":
			if p.Asset == nil {
				c.errorf(p.Name.Pos(), CodeMissing, "amount parameter %s has no asset", p.Name.Name)
			}
		case p.Type.Name == "bps" && d.Unit.Name == "bps":
		default:
			c.errorf(d.Pos(), CodeBadValue, "the default of a %s parameter cannot be %s %s", p.Type.Name, decimal(d.Amount), d.Unit.Name)
		}
	case *NumberLit:
		if !(d.Kind == Plain && slices.Contains(vocab("number", "amount", "bps", "duration"), p.Type.Name) ||
			d.Kind == Duration && p.Type.Name == "duration" || d.Kind == Percent && p.Type.Name == "number") {
			c.errorf(d.Pos(), CodeBadValue, "the default of a %s parameter cannot be %s", p.Type.Name, d.Raw)
		}
	case *BoolLit:
		if p.Type.Name != "bool" {
			c.errorf(d.Pos(), CodeBadValue, "the default of a %s parameter cannot be a boolean", p.Type.Name)
		}
	case *StringLit:
		if !slices.Contains(vocab("string", "address", "asset"), p.Type.Name) {
			c.errorf(d.Pos(), CodeBadValue, "the default of a %s parameter cannot be a string", p.Type.Name)
		}
	}
}

// skillTypes are the types of a skill.
var skillTypes = vocab("swap", "yield", "lending", "staking", "bridge")

func (c *checker) skill(k *Skill) {
	switch {
	case k.Type == nil:
		c.errorf(k.Name.Pos(), CodeMissing, "skill %s has no type; it is one of %s", k.Name.Name, orList(skillTypes))
	case !slices.Contains(skillTypes, k.Type.Name):
		c.errorf(k.Type.Pos(), CodeUnknownWord, "unknown skill type %s; it is one of %s", quote(k.Type.Name), orList(skillTypes))
	}
	for _, a := range k.Adapters {
		if c.venues[a.Name] == nil && c.adapters[a.Name] == nil {
			c.errorf(a.Pos(), CodeUnknownVenue, "skill %s lists %s, which is no venue%s", k.Name.Name, a.Name, c.suggestVenue(a.Name))
		}
	}
	c.constraints(k.Defaults, newScope())
	c.extra(k.Extra, "skill field", "type, adapters and default_constraints")
}

func (c *checker) advisor(a *Advisor, sc *scope) {
	switch m := a.Model.(type) {
	case nil, *StringLit, *Ident:
	default:
		c.errorf(m.Pos(), CodeBadValue, "an advisor's model is a string, such as \"anthropic:sonnet\"")
	}
	if a.SystemPrompt != nil {
		if _, ok := a.SystemPrompt.(*StringLit); !ok {
			c.errorf(a.SystemPrompt.Pos(), CodeBadValue, "system_prompt must be a string")
		}
	}
	c.positive(a.Timeout, "an advisor's timeout", false, sc)
	if a.Fallback != nil {
		if _, ok := a.Fallback.(*BoolLit); !ok {
			c.errorf(a.Fallback.Pos(), CodeBadValue, "an advisor's fallback is true or false")
		}
	}
	c.positive(a.MaxPerRun, "max_per_run", true, sc)
	c.positive(a.MaxPerHour, "max_per_hour", true, sc)
	c.extra(a.Extra, "advisor field", "model, system_prompt, skills, allowed_tools, mcp, timeout, fallback and rate_limit")
}

// guardSeverities are the severities of a guard.
var guardSeverities = vocab("warn", "revert", "halt", "pause")

func (c *checker) guard(g *Guard, sc *scope) {
	c.expr(g.Check, sc)
	seen := map[string]bool{}
	for _, m := range g.Meta {
		c.expr(m.Value, sc)
		if seen[m.Name.Name] {
			c.errorf(m.Name.Pos(), CodeDuplicate, "guard metadata %s is given twice", m.Name.Name)
		}
		seen[m.Name.Name] = true
		switch m.Name.Name {
		case "severity":
			if w, ok := wordValue(m.Value); !ok || !slices.Contains(guardSeverities, w) {
				c.errorf(m.Value.Pos(), CodeBadValue, "a guard's severity is one of %s", orList(guardSeverities))
			}
		case "message":
			if _, ok := m.Value.(*StringLit); !ok {
				c.errorf(m.Value.Pos(), CodeBadValue, "a guard's message is a string")
			}
		case "fallback":
			if _, ok := m.Value.(*BoolLit); !ok {
				c.errorf(m.Value.Pos(), CodeBadValue, "a guard's fallback is true or false")
			}
		default:
			c.warnf(m.Name.Pos(), CodeUnknownKey, "unknown guard metadata %s; it is severity, message or fallback", quote(m.Name.Name))
		}
	}
}

// wordValue is x as a word: a name, or a string.
func wordValue(x Expr) (string, bool) {
	switch x := x.(type) {
	case *Ident:
		return x.Name, true
	case *StringLit:
		return x.Value, true
	}
	return "", false
}

// extra warns about entries of keys the language does not define (they
// are kept, and mean nothing); known lists the keys it does.
func (c *checker) extra(es []*Entry, what, known string) {
	for _, e := range es {
		c.warnf(e.Key.Pos(), CodeUnknownKey, "unknown %s %s; the known ones are %s", what, quote(e.Key.Name), known)
		c.expr(e.Value, newScope())
	}
}

// positive checks an optional number that, when it is a literal, must be
// positive, or with integer, a non-negative integer (a rate limit, a
// length, a backoff in milliseconds).
func (c *checker) positive(x Expr, what string, integer bool, sc *scope) {
	if x == nil {
		return
	}
	c.expr(x, sc)
	if !isLiteral(x) {
		return
	}
	v, ok := numValue(x)
	switch {
	case !ok:
		c.errorf(x.Pos(), CodeBadValue, "%s must be a number", what)
	case integer && (!v.IsInt() || v.Sign() < 0):
		c.errorf(x.Pos(), CodeBadValue, "%s must be a non-negative integer", what)
	case !integer && v.Sign() <= 0:
		c.errorf(x.Pos(), CodeBadValue, "%s must be positive", what)
	}
}

// count checks a count that must be a positive integer when it is a
// literal (repeat's, loop's max, retry's attempts).
func (c *checker) count(x Expr, what string, sc *scope) {
	if x == nil {
		return
	}
	c.expr(x, sc)
	if !isLiteral(x) {
		return
	}
	if v, ok := numValue(x); !ok || !v.IsInt() || v.Sign() <= 0 {
		c.errorf(x.Pos(), CodeBadValue, "%s must be a positive integer", what)
	}
}

// duration checks a duration in seconds: a literal must be a plain number
// or a duration (5m), not negative.
func (c *checker) duration(x Expr, what string, sc *scope) {
	if x == nil {
		return
	}
	c.expr(x, sc)
	if !isLiteral(x) {
		return
	}
	if n, ok := x.(*NumberLit); !ok || n.Kind == Percent || n.Value.Sign() < 0 {
		c.errorf(x.Pos(), CodeBadValue, "%s is a duration: seconds, or a number with s, m, h or d", what)
	}
}

// ── Triggers ──

func (c *checker) triggers() {
	first := map[string]*Trigger{}
	for _, t := range c.spell.Triggers {
		key := t.Kind.String()
		switch t.Kind {
		case Cron:
			key += " " + t.Cron.Value
			if n := len(strings.Fields(t.Cron.Value)); n < 5 || n > 6 {
				c.errorf(t.Cron.Pos(), CodeBadValue, "a cron schedule has 5 fields (minute hour day month weekday), or 6 with seconds; this one has %d", n)
			}
		case Event:
			if t.Event == nil {
				continue
			}
			key += " " + t.Event.Value
			if t.Where != nil {
				continue // filters make two handlers of one event distinct
			}
		case Condition:
			continue
		}
		if f := first[key]; f != nil {
			c.errorf(t.Pos(), CodeDuplicate, "a second on %s trigger; the first is at %s, and a run executes one trigger", strings.TrimPrefix(key, "cron "), at(f.Pos()))
			continue
		}
		first[key] = t
	}
}

// ── Bodies ──

// scope is where names of a trigger's or block's body are defined. A body
// is one scope, as in Python: a name assigned anywhere before a use (in
// the text) is defined there, whatever the branch it was assigned in. A
// pipeline stage has a scope of its own (its item, index and acc, and what
// it assigns); a catch clause and a loop's body have transparent ones:
// their own bindings (error, index) stay in them, what they assign goes
// to the body.
type scope struct {
	parent      *scope
	names       map[string]RefKind
	transparent bool
	// caught counts the try bodies with a catch clause the scope is in:
	// an undefined name there raises an error the clause handles.
	caught int
	// event names the event trigger's payload in its where and body.
	event map[string]bool
}

// newScope makes the scope of a body, or of the declarations.
func newScope() *scope {
	return &scope{names: map[string]RefKind{}}
}

// child makes a scope inside sc.
func (sc *scope) child(transparent bool) *scope {
	return &scope{parent: sc, names: map[string]RefKind{}, transparent: transparent, caught: sc.caught, event: sc.event}
}

// define defines a variable (in the nearest scope that is not
// transparent).
func (sc *scope) define(name string, kind RefKind) {
	for sc.transparent && sc.parent != nil {
		sc = sc.parent
	}
	sc.names[name] = kind
}

func (sc *scope) lookup(name string) (RefKind, bool) {
	for ; sc != nil; sc = sc.parent {
		if k, ok := sc.names[name]; ok {
			return k, true
		}
	}
	return RefNone, false
}

// all is every name defined in sc and its parents, sorted.
func (sc *scope) all() []string {
	var out []string
	for ; sc != nil; sc = sc.parent {
		for n := range sc.names {
			out = append(out, n)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

func (c *checker) bodies() {
	for _, blk := range c.spell.Blocks {
		sc := newScope()
		seen := map[string]bool{}
		for _, p := range blk.Params {
			if seen[p.Name] {
				c.errorf(p.Pos(), CodeDuplicate, "block %s has two parameters named %s", blk.Name.Name, p.Name)
			}
			seen[p.Name] = true
			sc.define(p.Name, RefLocal)
		}
		c.stmts(blk.Body, sc)
	}
	for _, t := range c.spell.Triggers {
		sc := newScope()
		switch t.Kind {
		case Condition:
			c.expr(t.Cond, sc)
			c.duration(t.Every, "every", sc)
		case Event:
			sc.event = map[string]bool{"event": true}
			if t.Event != nil {
				// "base.block" is also `block`, as the specification's
				// example reads it: where block.number % 100 == 0.
				name := t.Event.Value
				if i := strings.LastIndexByte(name, '.'); i >= 0 {
					name = name[i+1:]
				}
				if isIdent(name) {
					sc.event[name] = true
				}
			}
			c.expr(t.Where, sc)
		}
		c.stmts(t.Body, sc)
	}
}

// loopScope is the scope of a loop's body: `index`, the number of the
// run from 0, is defined in it (the specification: "loop index is
// available via the index variable"); what the body assigns is defined
// after the loop too.
func loopScope(sc *scope) *scope {
	body := sc.child(true)
	body.names["index"] = RefIterator
	return body
}

func (c *checker) stmts(ss []Stmt, sc *scope) {
	for _, s := range ss {
		c.stmt(s, sc)
	}
}

func (c *checker) stmt(s Stmt, sc *scope) {
	switch s := s.(type) {
	case *AssignStmt:
		c.expr(s.Value, sc)
		c.bind(s.Target, sc)
	case *ActionStmt:
		c.action(s, sc)
		c.bind(s.Target, sc)
	case *AdviseStmt:
		c.advise(s, sc)
		c.bind(s.Target, sc)
	case *PipelineStmt:
		c.expr(s.Source, sc)
		for _, st := range s.Stages {
			inner := sc.child(false)
			inner.define("item", RefIterator)
			inner.define("index", RefIterator)
			switch st.Op.Name {
			case "reduce":
				inner.define("acc", RefIterator)
				if st.Arg == nil {
					c.errorf(st.Op.Pos(), CodeMissing, "reduce needs an initial value: reduce(0)")
				}
				c.expr(st.Arg, sc)
			case "take", "skip":
				if st.Arg == nil {
					c.errorf(st.Op.Pos(), CodeMissing, "%s needs a count: %s 3", st.Op.Name, st.Op.Name)
				}
				c.count(st.Arg, st.Op.Name+"'s count", sc)
			}
			c.expr(st.By, inner)
			c.stmts(st.Body, inner)
		}
		c.bind(s.Target, sc)
	case *IfStmt:
		c.expr(s.Cond, sc)
		c.stmts(s.Then, sc)
		for _, e := range s.Elifs {
			c.expr(e.Cond, sc)
			c.stmts(e.Body, sc)
		}
		c.stmts(s.Else, sc)
	case *ForStmt:
		c.expr(s.Iter, sc)
		c.bind(s.Var, sc)
		c.stmts(s.Body, loopScope(sc))
	case *RepeatStmt:
		c.count(s.Count, "repeat's count", sc)
		c.stmts(s.Body, loopScope(sc))
	case *LoopStmt:
		// The condition is tested after each run of the body, so what
		// the body assigns is defined in it.
		body := loopScope(sc)
		c.stmts(s.Body, body)
		c.expr(s.Until, body)
		if s.Max == nil {
			c.errorf(s.Pos(), CodeMissing, "loop until needs a bound: loop until <cond> max <n>:")
		}
		c.count(s.Max, "max", sc)
	case *TryStmt:
		body := sc
		if len(s.Catches) > 0 {
			body = sc.child(true)
			body.caught++
		}
		c.stmts(s.Body, body)
		for _, k := range s.Catches {
			c.catch(k, sc)
		}
		c.stmts(s.Finally, sc)
	case *ParallelStmt:
		c.parallel(s, sc)
	case *AtomicStmt:
		c.stmts(s.Body, sc)
	case *EmitStmt:
		c.args(s.Args, "event data", sc)
	case *WaitStmt:
		c.duration(s.Duration, "wait", sc)
	case *DoStmt:
		c.do(s, sc)
	case *HaltStmt, *PassStmt:
	}
}

// bind defines the variable a statement assigns. A state variable stays
// one; a name that is not a variable cannot be assigned.
func (c *checker) bind(target *Ident, sc *scope) {
	if target == nil {
		return
	}
	name := target.Name
	if v := c.state[name]; v != nil {
		if _, local := sc.lookup(name); !local {
			target.Ref, target.Decl = RefState, v
			return
		}
	}
	what := ""
	switch {
	case name == "params" || name == "limits" || name == "state" || name == "assets":
		what = "the " + name + " of the spell"
	case c.assets[name] != nil:
		what = "an asset"
	case c.venues[name] != nil || c.adapters[name] != nil:
		what = "a venue"
	case strings.HasPrefix(name, "limit_") && c.limits[strings.TrimPrefix(name, "limit_")] != nil:
		what = "a limit"
	}
	if what != "" {
		c.errorf(target.Pos(), CodeAssignDecl, "cannot assign to %s: it is %s", name, what)
		return
	}
	target.Ref = RefLocal
	sc.define(name, RefLocal)
}

// constraintKeys are the keys of an action's `with` constraints and a
// skill's default_constraints, each with the key it means: `slippage` is
// `max_slippage`, and min_out and max_in (used by spells in the wild)
// are min_output and max_input.
var constraintKeys = map[string]string{
	"slippage": "max_slippage", "max_slippage": "max_slippage",
	"deadline": "deadline", "min_output": "min_output", "min_out": "min_output",
	"max_input": "max_input", "max_in": "max_input", "max_price_impact": "max_price_impact",
	"min_liquidity": "min_liquidity", "require_quote": "require_quote",
	"require_simulation": "require_simulation", "max_gas": "max_gas",
}

const constraintList = "slippage (max_slippage), deadline, min_output, max_input, max_price_impact, min_liquidity, require_quote, require_simulation and max_gas"

// constraints checks `key=value` constraints: known keys, each once.
func (c *checker) constraints(args []*Arg, sc *scope) {
	seen := map[string]*Ident{}
	for _, a := range args {
		c.expr(a.Value, sc)
		key, ok := constraintKeys[a.Name.Name]
		if !ok {
			c.warnf(a.Name.Pos(), CodeUnknownKey, "unknown constraint %s; the constraints are %s", quote(a.Name.Name), constraintList)
			key = a.Name.Name
		}
		if first := seen[key]; first != nil {
			c.errorf(a.Name.Pos(), CodeDuplicate, "constraint %s is given twice (first as %s at %s)", key, first.Name, at(first.Pos()))
			continue
		}
		seen[key] = a.Name
	}
}

func (c *checker) action(s *ActionStmt, sc *scope) {
	for _, a := range s.Args {
		c.expr(a.Value, sc)
	}
	c.constraints(s.With, sc)
	if s.Using != nil {
		if k := c.skills[s.Using.Name]; k != nil {
			s.SkillDecl = k
		} else {
			c.errorf(s.Using.Pos(), CodeUnknownSkill, "unknown skill %s%s", s.Using.Name, suggest(s.Using.Name, sortedKeys(c.skills)))
		}
	}
	name := s.Venue.Name
	if k := c.skills[name]; k != nil {
		// The specification: an action on a skill's name runs on the
		// first of the skill's adapters that is a venue, with a
		// validator warning.
		if s.SkillDecl == nil {
			s.SkillDecl = k
		}
		s.Venue.Ref = RefNone
		for _, a := range k.Adapters {
			if v := c.venueNamed(a.Name); v != nil {
				c.warnf(s.Venue.Pos(), CodeAutoVenue, "%s is a skill: the action runs on its first adapter that is a venue, %s", name, a.Name)
				return
			}
		}
		c.errorf(s.Venue.Pos(), CodeUnknownVenue, "%s is a skill none of whose adapters is a venue", name)
		return
	}
	if v := c.venueNamed(name); v != nil {
		s.VenueDecl = v
		s.Venue.Ref, s.Venue.Decl = RefVenue, v
		return
	}
	c.errorf(s.Venue.Pos(), CodeUnknownVenue, "unknown venue %s: it is no venue alias, adapter in venues, or skill%s", name, c.suggestVenue(name))
}

// venueNamed is the venue an action names: by alias, or by an adapter
// the venues section names.
func (c *checker) venueNamed(name string) *Venue {
	if v := c.venues[name]; v != nil {
		return v
	}
	return c.adapters[name]
}

func (c *checker) suggestVenue(name string) string {
	names := append(sortedKeys(c.venues), sortedKeys(c.adapters)...)
	names = append(names, sortedKeys(c.skills)...)
	return suggest(name, names)
}

func (c *checker) advise(s *AdviseStmt, sc *scope) {
	if c.advisors[s.Advisor.Name] == nil {
		c.errorf(s.Advisor.Pos(), CodeUnknownAdv, "unknown advisor %s%s", s.Advisor.Name, c.suggestAdvisor(s.Advisor.Name))
	}
	if strings.TrimSpace(s.Prompt.Value) == "" {
		c.errorf(s.Prompt.Pos(), CodeMissing, "an advise needs a prompt")
	}
	var missing []string
	for _, part := range []struct {
		absent bool
		name   string
	}{{s.Output == nil, "output"}, {s.Timeout == nil, "timeout"}, {s.Fallback == nil, "fallback"}} {
		if part.absent {
			missing = append(missing, part.name)
		}
	}
	if len(missing) > 0 {
		c.errorf(s.AdvisePos, CodeMissing, "advise lacks %s: an advise needs output (its schema), timeout and fallback", strings.ReplaceAll(orList(missing), " or ", " and "))
	}
	c.schema(s.Output)
	c.positive(s.Timeout, "an advise's timeout", false, sc)
	c.expr(s.Fallback, sc)
	if s.Output != nil && s.Fallback != nil {
		c.fallbackFits(s.Fallback, s.Output)
	}
	c.entries(s.Context, "context", sc)
	c.extra(s.Extra, "advise field", "output, timeout, fallback, context, within and on_violation")
}

// fallbackFits reports a literal fallback that the coercion of fallbacks
// (lower_effects.go, coerce) cannot make valid: a string shorter than
// min_length (after the cut to max_length) or not matching the pattern,
// in the fallback or in a field or item of it. The fallback is what an
// advise gives when nothing else fits the schema, so it must fit.
func (c *checker) fallbackFits(fb Expr, s *Schema) {
	switch s.Type {
	case "string":
		str, ok := fb.(*StringLit)
		if !ok {
			return
		}
		text := str.Value
		if n, ok := numValue(s.MaxLength); ok && n.IsInt() && n.Sign() >= 0 && n.Num().IsInt64() && int64(utf8.RuneCountInString(text)) > n.Num().Int64() {
			text = string([]rune(text)[:n.Num().Int64()])
		}
		if n, ok := numValue(s.MinLength); ok && n.IsInt() && n.Num().IsInt64() && int64(utf8.RuneCountInString(text)) < n.Num().Int64() {
			c.errorf(fb.Pos(), CodeBadValue, "the fallback %s is shorter than the output schema's min_length %s", strconv.Quote(text), n.RatString())
			return
		}
		if p, ok := s.Pattern.(*StringLit); ok {
			if re, err := regexp.Compile(p.Value); err == nil && !re.MatchString(text) {
				c.errorf(fb.Pos(), CodeBadValue, "the fallback %s does not match the output schema's pattern %s", strconv.Quote(text), strconv.Quote(p.Value))
			}
		}
	case "object":
		o, ok := fb.(*ObjectLit)
		if !ok {
			return
		}
		for _, f := range s.Fields {
			for _, e := range o.Entries {
				if e.Key != nil && e.Key.Name == f.Name.Name {
					c.fallbackFits(e.Value, f.Schema)
				}
			}
		}
	case "array":
		if l, ok := fb.(*ListLit); ok && s.Items != nil {
			for _, x := range l.Elems {
				c.fallbackFits(x, s.Items)
			}
		}
	}
}

func (c *checker) suggestAdvisor(name string) string {
	if len(c.advisors) == 0 {
		return "; the spell declares no advisors"
	}
	return suggest(name, sortedKeys(c.advisors))
}

func (c *checker) schema(s *Schema) {
	if s == nil {
		return
	}
	sc := newScope()
	if s.Type == "" {
		c.errorf(s.Pos(), CodeMissing, "an output schema needs a type: %s", orList(schemaTypes))
	}
	misplaced := func(x Expr, what string) {
		if x != nil {
			c.errorf(x.Pos(), CodeMisplaced, "%s does not apply to type %s", what, s.Type)
		}
	}
	if s.Type == "enum" {
		if len(s.Values) == 0 {
			c.errorf(s.Pos(), CodeMissing, "an enum needs values: [a, b, ...]")
		}
		seen := map[string]bool{}
		for _, v := range s.Values {
			w, ok := wordValue(v)
			if !ok {
				c.errorf(v.Pos(), CodeBadValue, "an enum's values are names or strings")
				continue
			}
			if seen[w] {
				c.errorf(v.Pos(), CodeDuplicate, "enum value %s is listed twice", w)
			}
			seen[w] = true
		}
	} else if len(s.Values) > 0 {
		misplaced(s.Values[0], "values")
	}
	if s.Type != "number" {
		misplaced(s.Min, "min")
		misplaced(s.Max, "max")
	} else {
		for _, x := range []Expr{s.Min, s.Max} {
			if x != nil {
				if _, ok := numValue(x); !ok {
					c.errorf(x.Pos(), CodeBadValue, "min and max are numbers")
				}
			}
		}
	}
	if s.Type != "string" {
		misplaced(s.MinLength, "min_length")
		misplaced(s.MaxLength, "max_length")
		misplaced(s.Pattern, "pattern")
	} else {
		c.positive(s.MinLength, "min_length", true, sc)
		c.positive(s.MaxLength, "max_length", true, sc)
		if s.Pattern != nil {
			if p, ok := s.Pattern.(*StringLit); !ok {
				c.errorf(s.Pattern.Pos(), CodeBadValue, "a pattern is a string")
			} else if _, err := regexp.Compile(p.Value); err != nil {
				c.errorf(p.Pos(), CodeBadValue, "pattern is not a regular expression: %v", err)
			}
		}
	}
	if s.Type != "object" && len(s.Fields) > 0 {
		c.errorf(s.Fields[0].Name.Pos(), CodeMisplaced, "fields does not apply to type %s", s.Type)
	}
	if s.Type == "object" && len(s.Fields) == 0 {
		c.errorf(s.Pos(), CodeMissing, "an object schema needs fields")
	}
	seen := map[string]bool{}
	for _, f := range s.Fields {
		if seen[f.Name.Name] {
			c.errorf(f.Name.Pos(), CodeDuplicate, "field %s is defined twice", f.Name.Name)
		}
		seen[f.Name.Name] = true
		c.schema(f.Schema)
	}
	if s.Type == "array" && s.Items == nil {
		c.errorf(s.Pos(), CodeMissing, "an array schema needs items")
	}
	if s.Type != "array" && s.Items != nil {
		c.errorf(s.Items.Pos(), CodeMisplaced, "items does not apply to type %s", s.Type)
	}
	c.schema(s.Items)
	c.extra(s.Extra, "schema field", "type, values, min, max, min_length, max_length, pattern, fields and items")
}

func (c *checker) catch(k *Catch, sc *scope) {
	if r := k.Retry; r != nil {
		c.count(r.MaxAttempts, "max_attempts", sc)
		c.positive(r.BackoffBase, "backoff_base", true, sc)
		c.positive(r.MaxBackoff, "max_backoff", true, sc)
		c.extra(r.Extra, "retry field", "max_attempts, backoff, backoff_base and max_backoff")
	}
	c.extra(k.Extra, "catch field", "retry and action")
	inner := sc.child(true)
	inner.names["error"] = RefIterator
	c.stmts(k.Body, inner)
}

func (c *checker) parallel(s *ParallelStmt, sc *scope) {
	join := "all"
	if s.Join != nil {
		join = s.Join.Name
	}
	if join == "best" && s.Metric == nil {
		c.errorf(s.Pos(), CodeMissing, "join=best needs a metric: parallel join=best metric=<expr> order=max")
	}
	if join != "best" {
		for _, x := range []Node{s.Metric, s.Order} {
			if !isNil(x) {
				c.errorf(x.Pos(), CodeMisplaced, "metric and order belong to join=best")
			}
		}
	}
	if join != "any" && s.Count != nil {
		c.errorf(s.Count.Pos(), CodeMisplaced, "count belongs to join=any")
	}
	c.count(s.Count, "count", sc)
	if len(s.Branches) == 0 {
		c.errorf(s.Pos(), CodeMissing, "parallel needs at least one branch")
	}
	seen := map[string]*Branch{}
	for _, br := range s.Branches {
		if first := seen[br.Name.Name]; first != nil {
			c.errorf(br.Pos(), CodeDuplicate, "branch %s is defined twice; the first is at %s", br.Name.Name, at(first.Pos()))
		}
		seen[br.Name.Name] = br
		c.stmts(br.Body, sc)
	}
	// The metric rates each branch's outcome: what the branches assign
	// is defined in it.
	c.expr(s.Metric, sc)
}

func (c *checker) do(s *DoStmt, sc *scope) {
	c.args(s.Args, "", sc)
	name := s.Path[len(s.Path)-1]
	var blk *Block
	if len(s.Path) == 1 {
		blk = c.blocks[name.Name]
		if blk == nil {
			c.errorf(name.Pos(), CodeUnknownBlock, "unknown block %s%s", name.Name, suggest(name.Name, sortedKeys(c.blocks)))
			return
		}
	} else {
		// Walk the import namespaces: a.b.block is block of the spell
		// that import a imports as b.
		imp := c.imports[s.Path[0].Name]
		for i, ns := range s.Path[:len(s.Path)-1] {
			if i > 0 && imp != nil && imp.Spell != nil {
				imp = findImport(imp.Spell, ns.Name)
			}
			if imp == nil {
				c.errorf(ns.Pos(), CodeUnknownBlock, "no import is named %s", ns.Name)
				return
			}
			if imp.Spell == nil {
				return // not loaded: Load reported why, or Check runs alone
			}
		}
		for _, b := range imp.Spell.Blocks {
			if b.Name.Name == name.Name {
				blk = b
				break
			}
		}
		if blk == nil {
			c.errorf(name.Pos(), CodeUnknownBlock, "%s has no block %s", imp.Path.Value, name.Name)
			return
		}
	}
	s.Block = blk
	if len(s.Args) != len(blk.Params) {
		c.errorf(name.Pos(), CodeArity, "block %s takes %s, not %d", name.Name, plural(len(blk.Params), "argument"), len(s.Args))
	}
}

// findImport is the import of s with namespace ns, or nil.
func findImport(s *Spell, ns string) *Import {
	for _, imp := range s.Imports {
		if imp.Namespace() == ns {
			return imp
		}
	}
	return nil
}

// args checks arguments; named ones, when what names them, once each.
func (c *checker) args(args []*Arg, what string, sc *scope) {
	seen := map[string]bool{}
	for _, a := range args {
		c.expr(a.Value, sc)
		if a.Name == nil || what == "" {
			continue
		}
		if seen[a.Name.Name] {
			c.errorf(a.Name.Pos(), CodeDuplicate, "%s %s is given twice", what, a.Name.Name)
		}
		seen[a.Name.Name] = true
	}
}

// entries checks the values of entries, each key once.
func (c *checker) entries(es []*Entry, what string, sc *scope) {
	seen := map[string]bool{}
	for _, e := range es {
		if seen[e.Key.Name] {
			c.errorf(e.Key.Pos(), CodeDuplicate, "%s key %s is given twice", what, e.Key.Name)
		}
		seen[e.Key.Name] = true
		c.expr(e.Value, sc)
	}
}

// sortedKeys is the keys of m, sorted.
func sortedKeys[T any](m map[string]T) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
