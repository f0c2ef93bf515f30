package grimoire

import (
	"github.com/genesis-toolchain/genesis/frontend/grimoire/parser"
	"github.com/genesis-toolchain/genesis/frontend/source"
)

// MaxNesting is how deeply a spell may nest (docs/grimoire.md "Limits").
// A level is an open bracket ( [ {, an indented block, a token of a run
// of prefix operators (- + not, each one level), or a `?` of a chain of
// conditional expressions. The parser and every later phase recurse once
// or a few times per level, so the bound keeps their stacks small and
// their time linear; real spells nest a few levels.
const MaxNesting = source.MaxNesting

// MaxChain is how many operators one expression may chain at one level of
// nesting (docs/grimoire.md "Limits"): binary operators and the postfix
// . ( [ of a member, call or index chain. A chain is flat in the source
// but as deep in the tree as it is long, and every phase recurses
// through it: a million terms would exhaust the Go stack.
const MaxChain = source.MaxChain

// depthClass is what a token of type typ does to the nesting and the
// chains of Grimoire (the next token does not matter): source.TooDeep
// counts them on the tokens as the token source hands them to the
// parser, INDENT and DEDENT included, so that ANTLR never recurses or
// predicts over input deeper than MaxNesting or chained longer than
// MaxChain.
func depthClass(typ, _ int) source.DepthClass {
	c := source.DepthClass{Chains: chainsOn(typ)}
	switch typ {
	case parser.GrimoireLexerLPAREN, parser.GrimoireLexerLBRACK, parser.GrimoireLexerLBRACE, parser.GrimoireParserINDENT:
		c.Kind = source.DepthOpen
	case parser.GrimoireLexerRPAREN, parser.GrimoireLexerRBRACK, parser.GrimoireLexerRBRACE, parser.GrimoireParserDEDENT:
		c.Kind = source.DepthClose
		// A block ends the statement.
		c.EndsChain = typ == parser.GrimoireLexerRBRACE || typ == parser.GrimoireParserDEDENT
	case parser.GrimoireLexerQUESTION:
		c.Kind = source.DepthLink
	case parser.GrimoireLexerNEWLINE, parser.GrimoireLexerCOMMA:
		// The end of an expression: a conditional chain ends.
		c.Kind, c.EndsLinks = source.DepthEnd, true
	case parser.GrimoireLexerMINUS, parser.GrimoireLexerPLUS, parser.GrimoireLexerNOT:
		c.Kind = source.DepthPrefix
	}
	return c
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
