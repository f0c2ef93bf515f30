package vvm

import (
	"strings"
	"testing"

	"github.com/antlr4-go/antlr/v4"

	"github.com/genesis-toolchain/genesis/frontend/vvm/parser"
)

// tokens lexes src through the token source and names every token the
// parser gets: layout tokens by their kind, others by their text.
func tokens(src string) (string, *reporter) {
	r := &reporter{}
	lexer := parser.NewVVMLexer(antlr.NewInputStream(src))
	lexer.RemoveErrorListeners()
	ts := newTokenSource(lexer, r, "t.vvm")
	var out []string
	for {
		t := ts.NextToken()
		switch t.GetTokenType() {
		case antlr.TokenEOF:
			return strings.Join(out, " "), r
		case parser.VVMParserNEWLINE:
			out = append(out, "NL")
		case parser.VVMParserINDENT:
			out = append(out, "IN")
		case parser.VVMParserDEDENT:
			out = append(out, "DE")
		default:
			out = append(out, t.GetText())
		}
	}
}

func TestTokenSource(t *testing.T) {
	for _, c := range []struct{ src, want string }{
		{"x = 1\n", "x = 1 NL"},
		{"x = 1", "x = 1 NL"}, // no line break at the end
		{"", ""},
		{"\n\n# only a comment\n   \n", ""},
		{"if a:\n  b\nc\n", "if a : NL IN b NL DE c NL"},
		{"if a:\n  if b:\n    c\nd", "if a : NL IN if b : NL IN c NL DE DE d NL"},
		{"if a:\n  b\n", "if a : NL IN b NL DE"},
		{"if a:\n\n  # comment at another column\n  b\n", "if a : NL IN b NL DE"},
		{"x = [1,\n2,\n    3]\ny\n", "x = [ 1 , 2 , 3 ] NL y NL"},
		{"f(\n  a,\n)\n", "f ( a , ) NL"},
		{"if a:\n  t = `x\ny`\n  z\n", "if a : NL IN t = `x\ny` NL z NL DE"},
		{"s = \"\"\"a\n\"\"\"\nz\n", "s = \"\"\"a\n\"\"\" NL z NL"},
		{"x = 1\r\ny = 2\r\n", "x = 1 NL y = 2 NL"},
		{"a # c\nb", "a NL b NL"},
		{"a\n\t\n \t# comment\nb\n", "a NL b NL"}, // tabs on lines without tokens are no indentation
	} {
		got, r := tokens(c.src)
		if got != c.want {
			t.Errorf("%q: got %q, want %q", c.src, got, c.want)
		}
		if len(r.diags) > 0 {
			t.Errorf("%q: %v", c.src, r.diags)
		}
	}
}

func TestTokenSourceErrors(t *testing.T) {
	for _, c := range []struct{ src, want string }{
		{"if a:\n\tb\n", "t.vvm:2:1: error[E002]: tab in indentation: indent with spaces"},
		{"if a:\n    b\n  c\n", "t.vvm:3:3: error[E002]: unindent does not match any outer indentation level"},
		{"x = \"abc\n", `t.vvm:1:5: error[E003]: unterminated string literal: it needs a closing " on the same line (use """…""" for text over several lines)`},
		{"x = \"\"\"abc\n", `t.vvm:1:5: error[E003]: unterminated string literal: no closing """`},
		{"x = `abc\\`", "t.vvm:1:5: error[E004]: unterminated template literal: no closing backtick"},
		{"x = (1,\n", "t.vvm:1:5: error[E001]: '(' is never closed"},
		{"x = 1 ~ 2\n", `t.vvm:1:7: error[E001]: unexpected character "~"`},
		{strings.Repeat("(", maxBrackets+1), "t.vvm:1:201: error[E001]: brackets nested too deeply (the limits are 200 brackets and 100 blocks)"},
	} {
		_, r := tokens(c.src)
		if got := r.diags.Error(); got != c.want {
			t.Errorf("%q:\ngot  %s\nwant %s", c.src, got, c.want)
		}
	}
}

// TestKeywords checks that keywords, which the checks of names use, are
// the grammar's keywords.
func TestKeywords(t *testing.T) {
	parser.VVMLexerInit()
	names := parser.VVMLexerLexerStaticData.LiteralNames
	n := 0
	for typ := range names {
		word := strings.Trim(names[typ], "'")
		if isKeywordToken(typ) {
			n++
			if !isKeyword(word) {
				t.Errorf("token %s is not in keywords", word)
			}
		}
	}
	if n != len(keywords) {
		t.Errorf("the grammar has %d keywords, keywords %d", n, len(keywords))
	}
}
