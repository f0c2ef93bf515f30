package grimoire

import (
	"strings"
	"testing"

	"github.com/antlr4-go/antlr/v4"

	"github.com/genesis-toolchain/genesis/frontend/grimoire/parser"
)

// tokenNames lexes src through the token source and names the tokens
// the parser gets, and the indentation errors reported.
func tokenNames(src string) (names []string, errs []string) {
	parser.GrimoireParserInit() // the token names
	input := antlr.NewInputStream(src)
	lexer := parser.NewGrimoireLexer(input)
	lexer.RemoveErrorListeners()
	ts := newTokenSource(lexer, input, func(t antlr.Token, msg string) {
		errs = append(errs, msg)
	})
	for {
		t := ts.NextToken()
		if t.GetTokenType() == antlr.TokenEOF {
			return append(names, "EOF"), errs
		}
		names = append(names, parser.GrimoireParserStaticData.SymbolicNames[t.GetTokenType()])
	}
}

func TestTokenSource(t *testing.T) {
	for _, tc := range []struct {
		name, src, want string
		errs            int
	}{
		{"blocks open and close", "spell A\n  x: 1\n  y:\n    z: 2\nw\n",
			"SPELL ID INDENT ID COLON NUMBER NEWLINE ID COLON INDENT ID COLON NUMBER DEDENT DEDENT NEWLINE ID EOF", 0},
		{"the end of the file closes the blocks", "a:\n  b:\n    c",
			"ID COLON INDENT ID COLON INDENT ID DEDENT DEDENT EOF", 0},
		{"blank and comment lines mean nothing", "\n# c\na\n\n   # deeper comment\n\nb\n",
			"ID NEWLINE ID EOF", 0},
		{"line breaks in parentheses and brackets are dropped", "f(\n  1,\n2)\n[\n3\n]\n",
			"ID LPAREN NUMBER COMMA NUMBER RPAREN NEWLINE LBRACK NUMBER RBRACK EOF", 0},
		{"line breaks in braces separate, indentation means nothing", "{\n      a\n\n b\n}\n",
			"LBRACE ID NEWLINE ID RBRACE EOF", 0},
		{"no separator after a comma", "{a: 1,\n b: 2,\n}",
			"LBRACE ID COLON NUMBER COMMA ID COLON NUMBER COMMA RBRACE EOF", 0},
		{"the innermost bracket decides", "{\n f(\n 1\n )\n g\n}",
			"LBRACE ID LPAREN NUMBER RPAREN NEWLINE ID RBRACE EOF", 0},
		{"a multi-line string is one token", "a:\n  x = \"one\n two\n    three\"\n  y\n",
			"ID COLON INDENT ID ASSIGN STRING NEWLINE ID DEDENT EOF", 0},
		{"a tab is two columns", "a:\n\tb\n  c\n",
			"ID COLON INDENT ID NEWLINE ID DEDENT EOF", 0},
		{"a first line indented is an indent", "  a\n",
			"INDENT ID DEDENT EOF", 0},
		{"a dedent to no enclosing depth", "a:\n    b\n  c\n",
			"ID COLON INDENT ID DEDENT NEWLINE ID EOF", 1},
		{"an unmatched closer changes nothing", ")\na\n",
			"RPAREN NEWLINE ID EOF", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			names, errs := tokenNames(tc.src)
			if got := strings.Join(names, " "); got != tc.want {
				t.Errorf("tokens of %q:\n got %s\nwant %s", tc.src, got, tc.want)
			}
			if len(errs) != tc.errs {
				t.Errorf("%d indentation errors, want %d: %q", len(errs), tc.errs, errs)
			}
		})
	}
}
