package genesis

import (
	"github.com/antlr4-go/antlr/v4"

	"github.com/genesis-toolchain/genesis/frontend/genesis/parser"
)

// MaxNesting is how deeply a source file may nest (docs/genesis.md
// "Limits"). A level is an open bracket ( [ {, a token of a run of prefix
// operators and type constructors (- ! ~ * & && mut fn ->, each one
// level), or an `else if` of a chain. The parser and every later phase
// recurse once or a few times per level, so the bound keeps their stacks
// small and their time linear; real programs nest a few dozen levels.
const MaxNesting = 1000

// tooDeep returns the first token of toks at which the nesting exceeds
// MaxNesting, or nil. It runs on the tokens before they reach the
// parser, so that ANTLR never recurses or predicts over deeper input.
// It counts the way the grammar recurses, slightly generously (a binary
// minus before a unary one counts as a level too); it needs no parse.
func tooDeep(toks []antlr.Token) antlr.Token {
	type frame struct {
		base  int // the level of the bracket that opened this frame
		chain int // the `else if`s of the current chain at this level
		run   int // the prefix run when the bracket opened, restored at its close
	}
	stack := []frame{{}}
	run := 0 // prefix operators and type constructors in a row
	for i, t := range toks {
		top := &stack[len(stack)-1]
		level := top.base + top.chain + run
		switch t.GetTokenType() {
		case parser.GenesisLexerLPAREN, parser.GenesisLexerLBRACK, parser.GenesisLexerLBRACE:
			if level+1 > MaxNesting {
				return t
			}
			stack = append(stack, frame{base: level + 1, run: run})
			run = 0
		case parser.GenesisLexerRPAREN, parser.GenesisLexerRBRACK, parser.GenesisLexerRBRACE:
			if len(stack) == 1 {
				run = 0 // unbalanced: the parser reports it
				continue
			}
			run = top.run
			stack = stack[:len(stack)-1]
			// An if chain goes on only with `else`.
			if i+1 >= len(toks) || toks[i+1].GetTokenType() != parser.GenesisLexerELSE {
				stack[len(stack)-1].chain = 0
			}
		case parser.GenesisLexerELSE:
			run = 0
			if i+1 < len(toks) && toks[i+1].GetTokenType() == parser.GenesisLexerIF {
				if level+1 > MaxNesting {
					return t
				}
				top.chain++
			}
		case parser.GenesisLexerMINUS, parser.GenesisLexerBANG, parser.GenesisLexerTILDE,
			parser.GenesisLexerSTAR, parser.GenesisLexerAMP, parser.GenesisLexerANDAND,
			parser.GenesisLexerMUT, parser.GenesisLexerFN, parser.GenesisLexerARROW:
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
