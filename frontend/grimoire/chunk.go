package grimoire

import (
	"math"

	"github.com/antlr4-go/antlr/v4"

	"github.com/genesis-toolchain/genesis/diag"
	"github.com/genesis-toolchain/genesis/frontend/grimoire/parser"
	"github.com/genesis-toolchain/genesis/frontend/sllparse"
	"github.com/genesis-toolchain/genesis/frontend/source"
)

// chunkedParseMin is the size of a spell from which ParseFile parses the
// bodies of its triggers a chunk of statements at a time (parseChunked).
// A variable so that the tests can parse small spells in chunks.
var chunkedParseMin = 64 << 10

// chunkTokens is about how many tokens one chunk of statements holds: a
// chunk's parse tree is built and dropped before the next is parsed.
var chunkTokens = 2048

// A chunkedBlock is the body of a trigger in the indentation syntax,
// INDENT statement (NEWLINE statement)+ DEDENT, as indexes into the
// tokens of the spell: the NEWLINE tokens that separate its statements,
// and the DEDENT that closes it.
type chunkedBlock struct {
	dedent int
	splits []int
}

// parseChunked parses a spell as parseWhole does, but without the parse
// tree of the whole file, which holds some 200 bytes a byte of source:
// the spell is parsed with the body of each large trigger cut down to its
// first statement (the skeleton), then the trigger's other statements a
// chunk at a time, each chunk's parse tree turned into statements and
// dropped. The tokens are read once and kept compact (compactTokens):
// ANTLR's tokens of the whole file would hold 30 bytes a byte. It
// reports ok only when nothing went
// wrong that parseWhole would report differently: any lexical, indentation
// or nesting error, any syntax error, a chunk the statements rule does
// not read to its end, or a trigger the builder drops makes it give up,
// and ParseFile parses the spell again whole (docs/decisions.md,
// "Grimoire and nano-vm checks in bounded memory").
func parseChunked(filename string, src []byte) (spell *Spell, diags diag.List, ok bool) {
	defer func() {
		if p := recover(); p != nil {
			spell, diags, ok = nil, nil, false
		}
	}()
	b := &builder{file: filename, errLines: map[int]bool{}}
	b.checkUTF8(src)
	if len(b.diags) > 0 {
		return nil, nil, false
	}
	input := antlr.NewInputStream(string(src))
	lexer := parser.NewGrimoireLexer(input)
	lexer.RemoveErrorListeners()
	lexer.AddErrorListener(b)
	toks, ok := lexCompact(newTokenSource(lexer, input, b.indentError))
	if !ok || len(b.diags) > 0 || b.syntaxErrors > 0 {
		return nil, nil, false
	}
	blocks, triggers, found := chunkedBlocks(toks.typ)
	if !found {
		return nil, nil, false
	}
	parse := func(ranges ...[2]int) *parser.GrimoireParser {
		return parser.NewGrimoireParser(antlr.NewCommonTokenStream(&sliceSource{GrimoireLexer: lexer, toks: toks, ranges: ranges}, antlr.TokenDefaultChannel))
	}

	// The skeleton: every block cut down to its INDENT, first statement
	// and DEDENT.
	var skeleton [][2]int
	prev := 0
	for _, blk := range blocks {
		skeleton = append(skeleton, [2]int{prev, blk.splits[0]})
		prev = blk.dedent
	}
	skeleton = append(skeleton, [2]int{prev, len(toks.toks)})
	p := parse(skeleton...)
	tree, parsed := sllparse.Try(p, p.Spell)
	if !parsed || p.GetTokenStream().LA(1) != antlr.TokenEOF {
		return nil, nil, false
	}
	s := &Spell{File: filename, SpellPos: diag.Pos{File: filename, Line: 1, Col: 1}}
	b.spell(s, tree)
	if len(s.Triggers) != len(triggers) {
		return nil, nil, false
	}
	tree, p = nil, nil

	for i, k := range triggers {
		if k < 0 {
			continue
		}
		blk, t := blocks[k], s.Triggers[i]
		for at := 0; at < len(blk.splits); {
			// The chunk: the statements after splits[at] up to the
			// first split past chunkTokens, or the block's end.
			start, end := blk.splits[at]+1, blk.dedent
			next := at + 1
			for ; next < len(blk.splits); next++ {
				if blk.splits[next]-start >= chunkTokens {
					end = blk.splits[next]
					break
				}
			}
			p := parse([2]int{start, end})
			stmts, parsed := sllparse.Try(p, p.Statements)
			if !parsed || p.GetTokenStream().LA(1) != antlr.TokenEOF {
				return nil, nil, false
			}
			t.Body = append(t.Body, b.statements(stmts)...)
			at = next
		}
	}
	b.misplacedWith(s)
	return s, b.sorted(), true
}

// compactTokens are the tokens of a spell, as the parser would see them,
// in 24 bytes each rather than an ANTLR token's 120 or so: the tokens of
// a chunk are made again from them (sliceSource) when it is parsed.
type compactTokens struct {
	source *antlr.TokenSourceCharStreamPair
	toks   []compactToken
	// texts are the texts of the tokens the token source makes (INDENT,
	// DEDENT, NEWLINE), which are not the text of the input between
	// their start and stop.
	texts []string
}

type compactToken struct {
	typ, line, col, start, stop int32
	text                        int32 // index in texts, or -1
}

// typ returns the type of token i, EOF past the end.
func (c *compactTokens) typ(i int) int {
	if i < 0 || i >= len(c.toks) {
		return antlr.TokenEOF
	}
	return int(c.toks[i].typ)
}

// token makes token i again.
func (c *compactTokens) token(i int) antlr.Token {
	t := c.toks[i]
	text := ""
	if t.text >= 0 {
		text = c.texts[t.text]
	}
	return antlr.CommonTokenFactoryDEFAULT.Create(c.source, int(t.typ), text, antlr.TokenDefaultChannel,
		int(t.start), int(t.stop), int(t.line), int(t.col))
}

// lexCompact reads every token of src, through EOF, checking their
// nesting as parseWhole does (source.TooDeep), and keeps them compact.
// ok is false when they nest too deep, or a token does not fit.
func lexCompact(src *tokenSource) (toks *compactTokens, ok bool) {
	toks = &compactTokens{}
	textIndex := map[string]int32{}
	scan := source.DepthScan{Classify: depthClass}
	var prev antlr.Token
	for {
		t := src.NextToken()
		if prev != nil && scan.Scan(prev, t.GetTokenType()) != nil {
			return nil, false
		}
		prev = t
		if toks.source == nil {
			toks.source = t.GetSource()
		}
		if t.GetChannel() == antlr.TokenDefaultChannel {
			if t.GetSource() != toks.source || t.GetStart() > math.MaxInt32 || t.GetStop() > math.MaxInt32 {
				return nil, false
			}
			c := compactToken{typ: int32(t.GetTokenType()), line: int32(t.GetLine()), col: int32(t.GetColumn()),
				start: int32(t.GetStart()), stop: int32(t.GetStop()), text: -1}
			switch t.GetTokenType() {
			case parser.GrimoireParserINDENT, parser.GrimoireParserDEDENT, parser.GrimoireLexerNEWLINE:
				text := t.GetText()
				k, seen := textIndex[text]
				if !seen {
					k = int32(len(toks.texts))
					textIndex[text] = k
					toks.texts = append(toks.texts, text)
				}
				c.text = k
			}
			toks.toks = append(toks.toks, c)
		}
		if t.GetTokenType() == antlr.TokenEOF {
			break
		}
	}
	if scan.Scan(prev, 0) != nil || toks.typ(len(toks.toks)-1) != antlr.TokenEOF {
		return nil, false
	}
	return toks, true
}

// chunkedBlocks finds the bodies of triggers in the indentation syntax
// that hold more than one statement. triggers has an entry for each
// item of the spell that is a trigger, in order: the index of its block
// in blocks, or -1 for a trigger whose body is parsed with the skeleton.
// found is false for a spell in the brace syntax, or whose tokens it
// cannot follow (unbalanced brackets or blocks), where parseWhole does.
func chunkedBlocks(typ func(i int) int) (blocks []chunkedBlock, triggers []int, found bool) {
	// SPELL name, then INDENT (items one block deep) or NEWLINE (items
	// at the left margin); the brace syntax is not chunked.
	if typ(0) != parser.GrimoireLexerSPELL {
		return nil, nil, false
	}
	itemDepth := 0
	switch {
	case typ(2) == parser.GrimoireParserINDENT:
		itemDepth = 1
	case typ(2) == parser.GrimoireLexerNEWLINE && typ(3) != parser.GrimoireLexerLBRACE:
	default:
		return nil, nil, false
	}
	depth, brackets := 0, 0
	for i := 0; typ(i) != antlr.TokenEOF; i++ {
		switch typ(i) {
		case parser.GrimoireParserINDENT:
			depth++
		case parser.GrimoireParserDEDENT:
			depth--
		case parser.GrimoireLexerLPAREN, parser.GrimoireLexerLBRACK, parser.GrimoireLexerLBRACE:
			brackets++
		case parser.GrimoireLexerRPAREN, parser.GrimoireLexerRBRACK, parser.GrimoireLexerRBRACE:
			brackets--
		case parser.GrimoireLexerON:
			start := typ(i-1) == parser.GrimoireLexerNEWLINE || (itemDepth == 1 && i == 3)
			if depth != itemDepth || brackets != 0 || !start {
				continue
			}
			blk, end, ok := triggerBlock(i, typ)
			if !ok {
				return nil, nil, false
			}
			if blk == nil {
				triggers = append(triggers, -1)
				continue
			}
			triggers = append(triggers, len(blocks))
			blocks = append(blocks, *blk)
			i = end
		}
		if depth < 0 || brackets < 0 {
			return nil, nil, false
		}
	}
	return blocks, triggers, len(blocks) > 0
}

// triggerBlock follows the trigger whose ON is toks[on]: the block of
// statements after its `:`, when that is an indented block of more than
// one statement, and the index of the DEDENT that closes it. A trigger
// with another body gives a nil block; ok is false when the tokens do
// not balance.
func triggerBlock(on int, typ func(int) int) (blk *chunkedBlock, end int, ok bool) {
	brackets := 0
	i := on + 1
	for ; ; i++ {
		switch typ(i) {
		case parser.GrimoireLexerLPAREN, parser.GrimoireLexerLBRACK, parser.GrimoireLexerLBRACE:
			brackets++
			continue
		case parser.GrimoireLexerRPAREN, parser.GrimoireLexerRBRACK, parser.GrimoireLexerRBRACE:
			brackets--
			if brackets < 0 {
				return nil, 0, false
			}
			continue
		case antlr.TokenEOF:
			return nil, 0, true
		}
		if brackets > 0 {
			continue
		}
		if typ(i) == parser.GrimoireLexerCOLON && typ(i+1) == parser.GrimoireParserINDENT {
			break
		}
		switch typ(i) {
		case parser.GrimoireLexerNEWLINE, parser.GrimoireParserINDENT, parser.GrimoireParserDEDENT:
			return nil, 0, true
		}
	}
	var b chunkedBlock
	depth := 0
	for j := i + 2; ; j++ {
		switch typ(j) {
		case parser.GrimoireParserINDENT:
			depth++
		case parser.GrimoireParserDEDENT:
			if depth == 0 {
				if brackets != 0 {
					return nil, 0, false
				}
				b.dedent = j
				if len(b.splits) == 0 {
					return nil, j, true
				}
				return &b, j, true
			}
			depth--
		case parser.GrimoireLexerLPAREN, parser.GrimoireLexerLBRACK, parser.GrimoireLexerLBRACE:
			brackets++
		case parser.GrimoireLexerRPAREN, parser.GrimoireLexerRBRACK, parser.GrimoireLexerRBRACE:
			brackets--
			if brackets < 0 {
				return nil, 0, false
			}
		case parser.GrimoireLexerNEWLINE:
			// A line at the block's depth starts a statement, unless it
			// goes on with the one before: elif, else, catch, finally
			// or another stage of a pipeline.
			if depth != 0 || brackets != 0 {
				continue
			}
			switch typ(j + 1) {
			case parser.GrimoireLexerELIF, parser.GrimoireLexerELSE, parser.GrimoireLexerCATCH,
				parser.GrimoireLexerFINALLY, parser.GrimoireLexerPIPE:
			default:
				b.splits = append(b.splits, j)
			}
		case antlr.TokenEOF:
			return nil, 0, false
		}
	}
}

// sliceSource hands a parser the tokens of some ranges of a spell's
// compact tokens, made again one at a time, then EOF. The other methods
// of a token source are the spell's lexer's.
type sliceSource struct {
	*parser.GrimoireLexer
	toks   *compactTokens
	ranges [][2]int // [start, end) indexes into toks, in order
	next   int      // the next token of ranges[0]
}

// NextToken returns the next token of the ranges, or EOF past their end.
func (s *sliceSource) NextToken() antlr.Token {
	for len(s.ranges) > 0 {
		r := s.ranges[0]
		if s.next < r[0] {
			s.next = r[0]
		}
		if s.next < r[1] {
			s.next++
			return s.toks.token(s.next - 1)
		}
		s.ranges = s.ranges[1:]
	}
	return s.toks.token(len(s.toks.toks) - 1)
}
