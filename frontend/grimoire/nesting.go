package grimoire

import (
	"github.com/antlr4-go/antlr/v4"

	"github.com/genesis-toolchain/genesis/frontend/grimoire/parser"
)

// MaxNesting is how deeply a spell may nest (docs/grimoire.md "Limits").
// A level is an open bracket ( [ {, an indented block, a token of a run
// of prefix operators (- + not, each one level), or a `?` of a chain of
// conditional expressions. The parser and every later phase recurse once
// or a few times per level, so the bound keeps their stacks small and
// their time linear; real spells nest a few levels.
const MaxNesting = 1000

// tooDeep returns the first token of toks (as the token source hands
// them to the parser, INDENT and DEDENT included) at which the nesting
// exceeds MaxNesting, or nil. It runs before the parser sees the tokens,
// so that ANTLR never recurses or predicts over deeper input. It counts
// the way the grammar recurses, slightly generously (a binary minus
// before a unary one counts as a level too).
func tooDeep(toks []antlr.Token) antlr.Token {
	type frame struct {
		base  int // the level of the bracket or block that opened this frame
		chain int // the `?`s of the conditional expression being read
		run   int // the prefix run when the bracket opened, restored at its close
	}
	stack := []frame{{}}
	run := 0 // prefix operators in a row
	for _, t := range toks {
		top := &stack[len(stack)-1]
		level := top.base + top.chain + run
		switch t.GetTokenType() {
		case parser.GrimoireLexerLPAREN, parser.GrimoireLexerLBRACK, parser.GrimoireLexerLBRACE, parser.GrimoireParserINDENT:
			if level+1 > MaxNesting {
				return t
			}
			stack = append(stack, frame{base: level + 1, run: run})
			run = 0
		case parser.GrimoireLexerRPAREN, parser.GrimoireLexerRBRACK, parser.GrimoireLexerRBRACE, parser.GrimoireParserDEDENT:
			if len(stack) == 1 {
				run = 0 // unbalanced: the parser reports it
				continue
			}
			run = top.run
			stack = stack[:len(stack)-1]
		case parser.GrimoireLexerQUESTION:
			if level+1 > MaxNesting {
				return t
			}
			top.chain++
			run = 0
		case parser.GrimoireLexerNEWLINE, parser.GrimoireLexerCOMMA:
			// The end of an expression: a conditional chain ends.
			top.chain, run = 0, 0
		case parser.GrimoireLexerMINUS, parser.GrimoireLexerPLUS, parser.GrimoireLexerNOT:
			if level+1 > MaxNesting {
				return t
			}
			run++
		default:
			run = 0
		}
	}
	return nil
}
