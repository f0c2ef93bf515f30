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

// MaxChain is how many operators one expression may chain at one level of
// nesting (docs/genesis.md "Limits"): binary operators, casts, and the
// postfix . -> ( [ of a call, field or index chain. A chain is flat in
// the source but as deep in the tree as it is long, and every phase
// recurses through it: a million terms exhausted the Go stack.
const MaxChain = 100_000

// A depthError is what tooDeep found: the token, and whether it is the
// chain (else the nesting) that went past its limit.
type depthError struct {
	tok   antlr.Token
	chain bool
}

// tooDeep returns the first token of toks at which the nesting exceeds
// MaxNesting or an expression's chain MaxChain, or nil. It runs on the tokens before they reach the
// parser, so that ANTLR never recurses or predicts over deeper input.
// It counts the way the grammar recurses, slightly generously (a binary
// minus before a unary one counts as a level too); it needs no parse.
func tooDeep(toks []antlr.Token) *depthError {
	var sc depthScan
	for i, t := range toks {
		next := 0
		if i+1 < len(toks) {
			next = toks[i+1].GetTokenType()
		}
		if d := sc.scan(t, next); d != nil {
			return d
		}
	}
	return nil
}

// A depthScan is tooDeep's state, for a scan that sees the tokens one at
// a time (and the type of the one after), as they are lexed.
type depthScan struct {
	stack []depthFrame
	run   int // prefix operators and type constructors in a row
}

// A depthFrame is a level of brackets.
type depthFrame struct {
	base  int // the level of the bracket that opened this frame
	chain int // the `else if`s of the current chain at this level
	run   int // the prefix run when the bracket opened, restored at its close
	ops   int // the operators since the last separator at this level
}

// scan takes token t, followed by a token of type next (0 at the end).
func (sc *depthScan) scan(t antlr.Token, next int) *depthError {
	if sc.stack == nil {
		sc.stack = []depthFrame{{}}
	}
	top := &sc.stack[len(sc.stack)-1]
	level := top.base + top.chain + sc.run
	switch typ := t.GetTokenType(); {
	case chainsOn(typ):
		top.ops++
		if top.ops > MaxChain {
			return &depthError{tok: t, chain: true}
		}
	case typ == parser.GenesisLexerSEMI || typ == parser.GenesisLexerCOMMA ||
		typ == parser.GenesisLexerFAT_ARROW || typ == parser.GenesisLexerASSIGN:
		top.ops = 0
	}
	switch t.GetTokenType() {
	case parser.GenesisLexerLPAREN, parser.GenesisLexerLBRACK, parser.GenesisLexerLBRACE:
		if level+1 > MaxNesting {
			return &depthError{tok: t}
		}
		sc.stack = append(sc.stack, depthFrame{base: level + 1, run: sc.run})
		sc.run = 0
	case parser.GenesisLexerRPAREN, parser.GenesisLexerRBRACK, parser.GenesisLexerRBRACE:
		if len(sc.stack) == 1 {
			sc.run = 0 // unbalanced: the parser reports it
			return nil
		}
		sc.run = top.run
		sc.stack = sc.stack[:len(sc.stack)-1]
		outer := &sc.stack[len(sc.stack)-1]
		if t.GetTokenType() == parser.GenesisLexerRBRACE {
			// What a brace closes (a block, a match, a struct
			// literal) ends an expression, or nearly.
			outer.ops = 0
		}
		// An if chain goes on only with `else`.
		if next != parser.GenesisLexerELSE {
			outer.chain = 0
		}
	case parser.GenesisLexerELSE:
		sc.run = 0
		if next == parser.GenesisLexerIF {
			if level+1 > MaxNesting {
				return &depthError{tok: t}
			}
			top.chain++
		}
	case parser.GenesisLexerMINUS, parser.GenesisLexerBANG, parser.GenesisLexerTILDE,
		parser.GenesisLexerSTAR, parser.GenesisLexerAMP, parser.GenesisLexerANDAND,
		parser.GenesisLexerMUT, parser.GenesisLexerFN, parser.GenesisLexerARROW:
		if level+1 > MaxNesting {
			return &depthError{tok: t}
		}
		sc.run++
	default:
		sc.run = 0
	}
	return nil
}

// chainsOn reports whether a token of type typ adds a link to the chain
// of the expression it is in: a binary operator, `as`, or a postfix `.`,
// `->`, `(` or `[` (counted generously: a prefix operator, or a bracket
// that is no postfix, counts too).
func chainsOn(typ int) bool {
	switch typ {
	case parser.GenesisLexerPLUS, parser.GenesisLexerMINUS, parser.GenesisLexerSTAR,
		parser.GenesisLexerSLASH, parser.GenesisLexerPERCENT, parser.GenesisLexerSHL,
		parser.GenesisLexerSHR, parser.GenesisLexerAMP, parser.GenesisLexerPIPE,
		parser.GenesisLexerCARET, parser.GenesisLexerANDAND, parser.GenesisLexerOROR,
		parser.GenesisLexerEQ, parser.GenesisLexerNE, parser.GenesisLexerLT,
		parser.GenesisLexerGT, parser.GenesisLexerLE, parser.GenesisLexerGE,
		parser.GenesisLexerAS, parser.GenesisLexerDOT, parser.GenesisLexerARROW,
		parser.GenesisLexerLPAREN, parser.GenesisLexerLBRACK:
		return true
	}
	return false
}
