package genesis

import (
	"github.com/genesis-toolchain/genesis/frontend/genesis/parser"
	"github.com/genesis-toolchain/genesis/frontend/source"
)

// MaxNesting is how deeply a source file may nest (docs/genesis.md
// "Limits"). A level is an open bracket ( [ {, a token of a run of prefix
// operators and type constructors (- ! ~ * & && mut fn ->, each one
// level), or an `else if` of a chain. The parser and every later phase
// recurse once or a few times per level, so the bound keeps their stacks
// small and their time linear; real programs nest a few dozen levels.
const MaxNesting = source.MaxNesting

// MaxChain is how many operators one expression may chain at one level of
// nesting (docs/genesis.md "Limits"): binary operators, casts, and the
// postfix . -> ( [ of a call, field or index chain. A chain is flat in
// the source but as deep in the tree as it is long, and every phase
// recurses through it: a million terms exhausted the Go stack.
const MaxChain = source.MaxChain

// depthClass is what a token of type typ, followed by one of type next,
// does to the nesting and the chains of Genesis: source.DepthScan counts
// them on the tokens before they reach the parser, so that ANTLR never
// recurses or predicts over input deeper than MaxNesting or chained
// longer than MaxChain.
func depthClass(typ, next int) source.DepthClass {
	c := source.DepthClass{Chains: chainsOn(typ)}
	switch typ {
	case parser.GenesisLexerSEMI, parser.GenesisLexerCOMMA,
		parser.GenesisLexerFAT_ARROW, parser.GenesisLexerASSIGN:
		c.Kind = source.DepthEnd
	case parser.GenesisLexerLPAREN, parser.GenesisLexerLBRACK, parser.GenesisLexerLBRACE:
		c.Kind = source.DepthOpen
	case parser.GenesisLexerRPAREN, parser.GenesisLexerRBRACK, parser.GenesisLexerRBRACE:
		c.Kind = source.DepthClose
		// What a brace closes (a block, a match, a struct literal)
		// ends an expression, or nearly.
		c.EndsChain = typ == parser.GenesisLexerRBRACE
		// An if chain goes on only with `else`.
		c.EndsLinks = next != parser.GenesisLexerELSE
	case parser.GenesisLexerELSE:
		if next == parser.GenesisLexerIF {
			c.Kind = source.DepthLink
		}
	case parser.GenesisLexerMINUS, parser.GenesisLexerBANG, parser.GenesisLexerTILDE,
		parser.GenesisLexerSTAR, parser.GenesisLexerAMP, parser.GenesisLexerANDAND,
		parser.GenesisLexerMUT, parser.GenesisLexerFN, parser.GenesisLexerARROW:
		c.Kind = source.DepthPrefix
	}
	return c
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
