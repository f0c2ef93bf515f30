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

// MaxChain is how many operators one expression may chain at one level of
// nesting (docs/grimoire.md "Limits"): binary operators and the postfix
// . ( [ of a member, call or index chain. A chain is flat in the source
// but as deep in the tree as it is long, and every phase recurses
// through it: a million terms would exhaust the Go stack.
const MaxChain = 100_000

// A depthError is what tooDeep found: the token, and whether it is the
// chain (else the nesting) that went past its limit.
type depthError struct {
	tok   antlr.Token
	chain bool
}

// tooDeep returns the first token of toks (as the token source hands
// them to the parser, INDENT and DEDENT included) at which the nesting
// exceeds MaxNesting or an expression's chain MaxChain, or nil. It runs before the parser sees the tokens,
// so that ANTLR never recurses or predicts over deeper input. It counts
// the way the grammar recurses, slightly generously (a binary minus
// before a unary one counts as a level too).
func tooDeep(toks []antlr.Token) *depthError {
	type frame struct {
		base  int // the level of the bracket or block that opened this frame
		chain int // the `?`s of the conditional expression being read
		run   int // the prefix run when the bracket opened, restored at its close
		ops   int // the operators since the last separator at this level
	}
	stack := []frame{{}}
	run := 0 // prefix operators in a row
	for _, t := range toks {
		top := &stack[len(stack)-1]
		level := top.base + top.chain + run
		if chainsOn(t.GetTokenType()) {
			top.ops++
			if top.ops > MaxChain {
				return &depthError{tok: t, chain: true}
			}
		}
		switch t.GetTokenType() {
		case parser.GrimoireLexerLPAREN, parser.GrimoireLexerLBRACK, parser.GrimoireLexerLBRACE, parser.GrimoireParserINDENT:
			if level+1 > MaxNesting {
				return &depthError{tok: t}
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
			if t.GetTokenType() == parser.GrimoireLexerRBRACE || t.GetTokenType() == parser.GrimoireParserDEDENT {
				stack[len(stack)-1].ops = 0 // a block ends the statement
			}
		case parser.GrimoireLexerQUESTION:
			if level+1 > MaxNesting {
				return &depthError{tok: t}
			}
			top.chain++
			run = 0
		case parser.GrimoireLexerNEWLINE, parser.GrimoireLexerCOMMA:
			// The end of an expression: a conditional chain ends.
			top.chain, top.ops, run = 0, 0, 0
		case parser.GrimoireLexerMINUS, parser.GrimoireLexerPLUS, parser.GrimoireLexerNOT:
			if level+1 > MaxNesting {
				return &depthError{tok: t}
			}
			run++
		default:
			run = 0
		}
	}
	return nil
}

// chainsOn reports whether a token of type typ adds a link to the chain
// of the expression it is in: a binary operator, or a postfix `.`, `(` or
// `[` (counted generously: a prefix operator, or a bracket that is no
// postfix, counts too).
func chainsOn(typ int) bool {
	switch typ {
	case parser.GrimoireLexerAND, parser.GrimoireLexerOR, parser.GrimoireLexerEQ,
		parser.GrimoireLexerNE, parser.GrimoireLexerLE, parser.GrimoireLexerGE,
		parser.GrimoireLexerLT, parser.GrimoireLexerGT, parser.GrimoireLexerPLUS,
		parser.GrimoireLexerMINUS, parser.GrimoireLexerSTAR, parser.GrimoireLexerSLASH,
		parser.GrimoireLexerPERCENT, parser.GrimoireLexerDOT, parser.GrimoireLexerLPAREN,
		parser.GrimoireLexerLBRACK:
		return true
	}
	return false
}
