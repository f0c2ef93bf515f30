package source

import "github.com/antlr4-go/antlr/v4"

// MaxNesting is how deeply a Genesis or Grimoire source may nest, in the
// levels its grammar recurses on (docs/decisions.md "Hostile input:
// Genesis, Grimoire, Forge assembly, IR"). The parser and every later
// phase recurse once or a few times per level, so the bound keeps their
// stacks small and their time linear; real programs nest a few dozen
// levels.
const MaxNesting = 1000

// MaxChain is how many operators one expression may chain at one level
// of nesting, in Genesis or Grimoire (same decision). A chain is flat in
// the source but as deep in the tree as it is long, and every phase
// recurses through it: a million terms exhausted the Go stack.
const MaxChain = 100_000

// A DepthKind is what a token does to the nesting DepthScan counts.
type DepthKind uint8

const (
	// DepthOther ends a run of prefix operators.
	DepthOther DepthKind = iota
	// DepthOpen opens a level: a bracket or an indented block.
	DepthOpen
	// DepthClose closes the innermost level opened by a DepthOpen.
	DepthClose
	// DepthLink is a link of a conditional chain (an `else if`, a `?`):
	// one more level for the rest of the chain.
	DepthLink
	// DepthPrefix is a prefix operator or type constructor: one level,
	// each, for a run of them.
	DepthPrefix
	// DepthEnd separates expressions: the operator chain at its level
	// ends, and so does a run of prefix operators.
	DepthEnd
)

// A DepthClass is how a language classifies one token for DepthScan.
type DepthClass struct {
	Kind DepthKind
	// Chains is whether the token adds a link to the operator chain of
	// the expression it is in (a binary or postfix operator), whatever
	// its Kind.
	Chains bool
	// EndsChain, with DepthClose, is whether what the token closes (a
	// block) also ends the operator chain of the enclosing level.
	EndsChain bool
	// EndsLinks, with DepthClose or DepthEnd, is whether the conditional
	// chain of the enclosing level (DepthClose) or of its own level
	// (DepthEnd) ends there.
	EndsLinks bool
}

// A DepthError is where DepthScan found the input too deep: the token,
// and whether it is the operator chain (MaxChain), else the nesting
// (MaxNesting), that went past its limit.
type DepthError struct {
	Tok   antlr.Token
	Chain bool
}

// A DepthScan counts the nesting and the operator chains of a token
// stream, one token at a time, before a parser sees them, so that
// neither ANTLR's recursion nor its prediction ever runs over input
// deeper than MaxNesting or chained longer than MaxChain. A level is
// an open bracket or block, a prefix operator of a run, or a link of a
// conditional chain; it counts the way the grammar recurses, slightly
// generously (a binary minus before a unary one counts as a level too),
// and needs no parse. Classify, which the language supplies, says what
// each token type (followed by one of type next, 0 at the end) is. The
// zero value with Classify set is ready to scan.
type DepthScan struct {
	Classify func(typ, next int) DepthClass

	stack []depthFrame
	run   int // prefix operators in a row
}

// A depthFrame is a level of brackets or blocks.
type depthFrame struct {
	base  int // the level of the bracket that opened this frame
	chain int // the links of the current conditional chain at this level
	run   int // the prefix run when the bracket opened, restored at its close
	ops   int // the operators since the last separator at this level
}

// Scan takes token t, followed by a token of type next (0 at the end),
// and returns where the input went too deep, or nil. An unbalanced
// closing token is left to the parser to report.
func (s *DepthScan) Scan(t antlr.Token, next int) *DepthError {
	if s.stack == nil {
		s.stack = []depthFrame{{}}
	}
	top := &s.stack[len(s.stack)-1]
	level := top.base + top.chain + s.run
	c := s.Classify(t.GetTokenType(), next)
	if c.Chains {
		top.ops++
		if top.ops > MaxChain {
			return &DepthError{Tok: t, Chain: true}
		}
	}
	switch c.Kind {
	case DepthOpen:
		if level+1 > MaxNesting {
			return &DepthError{Tok: t}
		}
		s.stack = append(s.stack, depthFrame{base: level + 1, run: s.run})
		s.run = 0
	case DepthClose:
		if len(s.stack) == 1 {
			s.run = 0
			return nil
		}
		s.run = top.run
		s.stack = s.stack[:len(s.stack)-1]
		outer := &s.stack[len(s.stack)-1]
		if c.EndsChain {
			outer.ops = 0
		}
		if c.EndsLinks {
			outer.chain = 0
		}
	case DepthLink:
		if level+1 > MaxNesting {
			return &DepthError{Tok: t}
		}
		top.chain++
		s.run = 0
	case DepthPrefix:
		if level+1 > MaxNesting {
			return &DepthError{Tok: t}
		}
		s.run++
	case DepthEnd:
		top.ops, s.run = 0, 0
		if c.EndsLinks {
			top.chain = 0
		}
	default:
		s.run = 0
	}
	return nil
}

// TooDeep scans all of toks with classify (see DepthScan) and returns
// the first token at which they go too deep, or nil.
func TooDeep(toks []antlr.Token, classify func(typ, next int) DepthClass) *DepthError {
	s := DepthScan{Classify: classify}
	for i, t := range toks {
		next := 0
		if i+1 < len(toks) {
			next = toks[i+1].GetTokenType()
		}
		if d := s.Scan(t, next); d != nil {
			return d
		}
	}
	return nil
}
