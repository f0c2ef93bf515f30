package source

import (
	"strings"
	"testing"

	"github.com/antlr4-go/antlr/v4"
)

// A toy language for DepthScan: ( opens, ) closes, - is a prefix
// operator that also chains, + chains, ? is a conditional link, ; ends
// an expression and its conditional chain; { opens and } closes a block,
// which ends the enclosing chains.
func toyClass(typ, _ int) DepthClass {
	switch typ {
	case '(':
		return DepthClass{Kind: DepthOpen}
	case ')':
		return DepthClass{Kind: DepthClose}
	case '{':
		return DepthClass{Kind: DepthOpen}
	case '}':
		return DepthClass{Kind: DepthClose, EndsChain: true, EndsLinks: true}
	case '-':
		return DepthClass{Kind: DepthPrefix, Chains: true}
	case '+':
		return DepthClass{Chains: true}
	case '?':
		return DepthClass{Kind: DepthLink}
	case ';':
		return DepthClass{Kind: DepthEnd, EndsLinks: true}
	}
	return DepthClass{}
}

// toyTokens makes one token per byte of src, of that byte's type.
func toyTokens(src string) []antlr.Token {
	var toks []antlr.Token
	for i := 0; i < len(src); i++ {
		t := antlr.NewCommonToken(&antlr.TokenSourceCharStreamPair{}, int(src[i]), antlr.TokenDefaultChannel, i, i)
		toks = append(toks, t)
	}
	return toks
}

func rep(s string, n int) string { return strings.Repeat(s, n) }

// TestTooDeep checks each kind of level to the limit, the chain limit,
// and that separators and closes reset what they end.
func TestTooDeep(t *testing.T) {
	for _, c := range []struct {
		name  string
		src   string
		at    int // the offset of the token reported, -1 for none
		chain bool
	}{
		{"brackets at the limit", rep("(", MaxNesting) + "x" + rep(")", MaxNesting), -1, false},
		{"brackets past it", rep("(", MaxNesting+1), MaxNesting, false},
		{"prefix run past it", rep("-", MaxNesting+1) + "x", MaxNesting, false},
		{"prefixes and brackets add up", rep("-", 500) + rep("(", 501), 1000, false},
		{"a close restores the run", rep("-", 500) + "()" + rep("(", 501), 1002, false},
		{"an operand ends the run", rep("-", 500) + "x" + rep("(", 1000), -1, false},
		{"links past it", rep("?", MaxNesting+1), MaxNesting, false},
		{"an end ends the links", rep("?", 600) + ";" + rep("?", 600), -1, false},
		{"chain at the limit", rep("x+", MaxChain) + "x", -1, false},
		{"chain past it", rep("x+", MaxChain+1), 2*MaxChain + 1, true},
		{"an end ends the chain", rep("x+", MaxChain) + ";" + rep("x+", MaxChain), -1, false},
		{"a brace ends the links", rep("?", 600) + "{}" + rep("?", 600), -1, false},
		{"a parenthesis does not", rep("?", 600) + "()" + rep("?", 401), 1002, false},
		{"a brace ends the chain", rep("x+", MaxChain) + "{}" + rep("x+", MaxChain), -1, false},
		{"a parenthesis does not end it", rep("x+", MaxChain) + "()" + "x+", 2*MaxChain + 3, true},
		{"unbalanced close", ")" + rep("(", MaxNesting), -1, false},
	} {
		d := TooDeep(toyTokens(c.src), toyClass)
		switch {
		case c.at < 0 && d != nil:
			t.Errorf("%s: too deep at %d (chain %v), want nil", c.name, d.Tok.GetStart(), d.Chain)
		case c.at >= 0 && d == nil:
			t.Errorf("%s: nil, want too deep at %d", c.name, c.at)
		case c.at >= 0 && (d.Tok.GetStart() != c.at || d.Chain != c.chain):
			t.Errorf("%s: too deep at %d (chain %v), want at %d (chain %v)", c.name, d.Tok.GetStart(), d.Chain, c.at, c.chain)
		}
	}
}
