package grimoire

import (
	"fmt"
	"math/big"
	"strings"

	"github.com/genesis-toolchain/genesis/diag"
)

// Expressions: names resolve, built-in calls have their arity, unit
// amounts convert. Grimoire values are dynamic, so nothing else about an
// expression's type is checked.

// builtin is a built-in function: how many arguments it takes (max -1:
// any number from min).
type builtin struct{ min, max int }

// builtins are the functions of the specification's two tables, and
// those later spells use: to_number and to_bigint (conversions) and apy
// (the later name of get_apy). min and max take two or more numbers, or
// one list.
var builtins = map[string]builtin{
	"min": {1, -1}, "max": {1, -1}, "abs": {1, 1}, "sum": {1, 1}, "avg": {1, 1},
	"to_number": {1, 1}, "to_bigint": {1, 1},
	"balance": {1, 2}, "price": {2, 3},
	"get_apy": {2, 2}, "apy": {2, 2}, "get_health_factor": {1, 1},
	"get_position": {2, 2}, "get_debt": {2, 2},
}

// expr checks an expression in a scope; x may be nil (absent, or a hole).
func (c *checker) expr(x Expr, sc *scope) {
	if isNil(x) {
		return
	}
	switch x := x.(type) {
	case *Ident:
		c.ident(x, sc)
	case *UnitLit:
		c.unit(x)
	case *AddressLit:
		if !addressPattern.MatchString(x.Value) {
			c.errorf(x.Pos(), CodeBadValue, "%s is not an address: 0x and 40 hex digits (it has %d)", abbreviate(x.Value), len(x.Value)-2)
		}
	case *Advisory:
		if x.Via != nil && c.advisors[x.Via.Name] == nil {
			c.errorf(x.Via.Pos(), CodeUnknownAdv, "unknown advisor %s%s", x.Via.Name, c.suggestAdvisor(x.Via.Name))
		}
		if x.Prompt == "" {
			c.errorf(x.Pos(), CodeMissing, "an advisory prompt needs text between ** and **")
		}
	case *ListLit:
		for _, e := range x.Elems {
			c.expr(e, sc)
		}
	case *ObjectLit:
		c.entries(x.Entries, "object", sc)
	case *UnaryExpr:
		c.expr(x.X, sc)
	case *BinaryExpr:
		c.expr(x.X, sc)
		c.expr(x.Y, sc)
	case *CondExpr:
		c.expr(x.Cond, sc)
		c.expr(x.Then, sc)
		c.expr(x.Else, sc)
	case *MemberExpr:
		c.member(x, sc)
	case *IndexExpr:
		c.expr(x.X, sc)
		c.expr(x.Index, sc)
	case *CallExpr:
		c.call(x, sc)
	case *NumberLit, *StringLit, *BoolLit, *VenueRef:
	}
}

// ident resolves a name in an expression. In order: a variable of the
// body, a state variable, the spell's objects (params, limits, state,
// assets), a limit as limit_<name>, an asset, a venue, the event
// payload; a name in capitals that is none of these is taken for an
// asset the spell did not declare.
func (c *checker) ident(id *Ident, sc *scope) {
	name := id.Name
	if k, ok := sc.lookup(name); ok {
		id.Ref = k
		return
	}
	if v := c.state[name]; v != nil {
		id.Ref, id.Decl = RefState, v
		return
	}
	switch name {
	case "params":
		id.Ref = RefParams
		return
	case "limits":
		id.Ref = RefLimits
		return
	case "state":
		id.Ref = RefStateNS
		return
	case "assets":
		id.Ref = RefAssets
		return
	}
	if l, ok := strings.CutPrefix(name, "limit_"); ok {
		if lim := c.limits[l]; lim != nil {
			id.Ref, id.Decl = RefLimit, lim
			return
		}
	}
	if a := c.assets[name]; a != nil {
		id.Ref, id.Decl = RefAsset, a
		return
	}
	if v := c.venueNamed(name); v != nil {
		id.Ref, id.Decl = RefVenue, v
		return
	}
	if sc.event[name] {
		id.Ref = RefEvent
		return
	}
	if isSymbol(name) {
		id.Ref = RefAsset
		c.undeclaredAsset(id.Pos(), name)
		return
	}
	if l, ok := strings.CutPrefix(name, "limit_"); ok && c.spell.Limits != nil {
		c.errorf(id.Pos(), CodeUnknownField, "no limit is named %s%s", l, suggest(l, sortedKeys(c.limits)))
		return
	}
	candidates := append(sc.all(), sortedKeys(c.state)...)
	if sc.caught > 0 {
		// The error this raises at run time is the try's to handle, as
		// the spell may intend; it is still most likely a mistake.
		c.warnf(id.Pos(), CodeUndefined, "%s is not defined; using it raises an error, which the enclosing try handles%s", name, suggest(name, candidates))
		return
	}
	c.errorf(id.Pos(), CodeUndefined, "%s is not defined%s", name, suggest(name, candidates))
}

// isSymbol reports whether name looks like a token symbol: capitals and
// digits, starting with a capital (USDC, WETH, 1INCH cannot be a name).
func isSymbol(name string) bool {
	for i, r := range name {
		if !(r >= 'A' && r <= 'Z' || i > 0 && (r >= '0' && r <= '9' || r == '_')) {
			return false
		}
	}
	return name != ""
}

// member checks x.name, and the names of params.x, limits.x and
// state.<scope>.x.
func (c *checker) member(x *MemberExpr, sc *scope) {
	c.expr(x.X, sc)
	switch base := x.X.(type) {
	case *Ident:
		switch base.Ref {
		case RefParams:
			if c.params[x.Name.Name] == nil {
				c.errorf(x.Name.Pos(), CodeUnknownField, "no param is named %s%s", x.Name.Name, suggest(x.Name.Name, sortedKeys(c.params)))
			}
		case RefLimits:
			if c.limits[x.Name.Name] == nil {
				c.errorf(x.Name.Pos(), CodeUnknownField, "no limit is named %s%s", x.Name.Name, suggest(x.Name.Name, sortedKeys(c.limits)))
			}
		case RefStateNS:
			if x.Name.Name != "persistent" && x.Name.Name != "ephemeral" {
				c.errorf(x.Name.Pos(), CodeUnknownField, "state has two scopes, state.persistent and state.ephemeral; not %s", x.Name.Name)
			}
		}
	case *MemberExpr:
		if ns, ok := base.X.(*Ident); ok && ns.Ref == RefStateNS {
			scope := Persistent
			if base.Name.Name == "ephemeral" {
				scope = Ephemeral
			}
			if v := c.state[x.Name.Name]; v != nil && v.Scope != scope {
				c.errorf(x.Name.Pos(), CodeUnknownField, "%s is in state.%s, not state.%s", v.Name.Name, v.Scope, scope)
			} else if v == nil {
				var names []string
				for _, v := range items(c.spell.State) {
					if v.Scope == scope {
						names = append(names, v.Name.Name)
					}
				}
				c.errorf(x.Name.Pos(), CodeUnknownField, "no %s state variable is named %s%s", scope, x.Name.Name, suggest(x.Name.Name, names))
			}
		}
	}
}

func (c *checker) call(x *CallExpr, sc *scope) {
	for _, a := range x.Args {
		c.expr(a.Value, sc)
	}
	f, ok := builtins[x.Fun.Name]
	if !ok {
		c.errorf(x.Fun.Pos(), CodeUnknownFunc, "unknown function %s%s", x.Fun.Name, suggest(x.Fun.Name, sortedKeys(builtins)))
		return
	}
	n := len(x.Args)
	switch {
	case f.max < 0 && n < f.min:
		c.errorf(x.Fun.Pos(), CodeArity, "%s takes at least %s, not %d", x.Fun.Name, plural(f.min, "argument"), n)
	case f.max >= 0 && (n < f.min || n > f.max):
		want := plural(f.min, "argument")
		if f.max > f.min {
			want = fmtRange(f.min, f.max)
		}
		c.errorf(x.Fun.Pos(), CodeArity, "%s takes %s, not %d", x.Fun.Name, want, n)
	}
}

// fmtRange writes an argument count range, "1 or 2 arguments".
func fmtRange(lo, hi int) string {
	if hi == lo+1 {
		return fmt.Sprintf("%d or %d arguments", lo, hi)
	}
	return fmt.Sprintf("%d to %d arguments", lo, hi)
}

// unit converts a unit amount: bps count as they are; an asset's amount
// becomes its smallest unit, which needs the asset's decimals and must be
// whole.
func (c *checker) unit(u *UnitLit) {
	name := u.Unit.Name
	if name == "bps" {
		u.Value = new(big.Rat).Set(u.Amount)
		return
	}
	a := c.assets[name]
	if a == nil {
		c.errorf(u.Unit.Pos(), CodeBadUnit, "unknown unit %s: a unit is bps or an asset declared with decimals%s", name, suggest(name, sortedKeys(c.assets)))
		return
	}
	u.Unit.Ref, u.Unit.Decl = RefAsset, a
	dec, ok := intValue(a.Decimals)
	if a.Decimals == nil || !ok || dec.Sign() < 0 || dec.Cmp(big.NewInt(255)) > 0 {
		c.errorf(u.Unit.Pos(), CodeBadUnit, "%s has no decimals in assets, which an amount in %s needs", name, name)
		return
	}
	scale := new(big.Int).Exp(big.NewInt(10), dec, nil)
	v := new(big.Rat).Mul(u.Amount, new(big.Rat).SetInt(scale))
	if !v.IsInt() {
		c.errorf(u.Pos(), CodeBadUnit, "%s %s is finer than %s's %s decimals", decimal(u.Amount), name, name, dec)
		return
	}
	u.Value = v
}

// ── Constants ──

// isLiteral reports whether x is a constant written out: a literal, or a
// negated number.
func isLiteral(x Expr) bool {
	switch x := x.(type) {
	case *NumberLit, *StringLit, *BoolLit, *AddressLit, *UnitLit, *ListLit, *ObjectLit, *VenueRef:
		return true
	case *UnaryExpr:
		return x.Op == "-" && isLiteral(x.X)
	}
	return false
}

// numValue is the value of a number literal, negated or not (any kind:
// a percentage is its fraction, a duration its seconds).
func numValue(x Expr) (*big.Rat, bool) {
	switch x := x.(type) {
	case *NumberLit:
		return x.Value, true
	case *UnaryExpr:
		if v, ok := numValue(x.X); ok && (x.Op == "-" || x.Op == "+") {
			if x.Op == "-" {
				return new(big.Rat).Neg(v), true
			}
			return v, true
		}
	}
	return nil, false
}

// intValue is the value of an integer literal written as a plain number.
func intValue(x Expr) (*big.Int, bool) {
	if n, ok := x.(*NumberLit); ok && n.Kind != Plain {
		return nil, false
	}
	v, ok := numValue(x)
	if !ok || !v.IsInt() {
		return nil, false
	}
	return v.Num(), true
}

// ── Suggestions ──

// suggest is "; did you mean 'x'?" for the candidate nearest to name, if
// one is near enough to be a typo (at most a third of its length in
// edits, and at least one); else "". candidates must be in a fixed
// order (sorted): of equally near ones the first wins.
func suggest(name string, candidates []string) string {
	best := diag.ClosestWithin(name, candidates, max(1, len(name)/3))
	if best == "" {
		return ""
	}
	return "; did you mean " + quote(best) + "?"
}
