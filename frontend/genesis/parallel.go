package genesis

import (
	"runtime"
	"unicode/utf8"

	"github.com/antlr4-go/antlr/v4"

	"github.com/genesis-toolchain/genesis/frontend/genesis/parser"
	"github.com/genesis-toolchain/genesis/frontend/twostage"
	"github.com/genesis-toolchain/genesis/internal/par"
)

// Parsing a large file concurrently (and, on one core, chunk by chunk,
// which bounds the memory of the parse trees). The top-level items of a file are
// independent to the grammar: each starts with fn, struct, enum or type
// outside any bracket. A large, well-formed file is lexed once, cut into
// chunks of whole items at those keywords, and the chunks are parsed (SLL,
// bailing out at the first error) and built into declarations on several
// goroutines; the declarations are joined in order. antlr4-go's shared
// DFA caches are guarded for concurrent parsers. Anything unusual (a
// lexical error, a syntax error in any chunk, a diagnostic from the
// builder, a panic) abandons the attempt and the file is parsed the
// sequential way, which reports errors exactly as always: the concurrent
// path only ever succeeds on files the sequential one accepts without a
// diagnostic, with the same declarations.

// parallelMinBytes is the size from which a file is parsed concurrently;
// below it, starting goroutines and parsers costs more than it saves.
const parallelMinBytes = 64 << 10

// chunksPerWorker balances the chunks: items differ in size.
const chunksPerWorker = 4

// chunkTokens is about the most tokens a chunk holds when the file has
// enough items. A chunk's ANTLR parse tree, some 20 objects a token, is
// garbage once its declarations are built; with chunks of bounded size,
// the trees alive at once are a bounded few (one a worker) instead of
// the whole file's, which for a large file was most of the memory a
// check took (docs/genesis.md "Limits").
const chunkTokens = 1 << 14

// parseConcurrently returns the declarations of src, or ok false when it
// declines the file or any chunk fails.
func parseConcurrently(file string, src []byte) (decls []Decl, ok bool) {
	workers := runtime.GOMAXPROCS(0)
	if len(src) < parallelMinBytes || !utf8.Valid(src) {
		return nil, false
	}
	lexer := parser.NewGenesisLexer(antlr.NewInputStream(string(src)))
	lexer.RemoveErrorListeners()
	var lexErrs errorSeen
	lexer.AddErrorListener(&lexErrs)
	var toks []antlr.Token
	var eof antlr.Token
	for {
		t := lexer.NextToken()
		if t.GetTokenType() == antlr.TokenEOF {
			eof = t
			break
		}
		toks = append(toks, t)
	}
	if lexErrs.seen || tooDeep(toks) != nil {
		return nil, false
	}
	chunks := splitItems(toks, max(workers*chunksPerWorker, len(toks)/chunkTokens))
	if len(chunks) < 2 {
		return nil, false
	}

	results := make([][]Decl, len(chunks))
	failed := make([]bool, len(chunks))
	par.Do(len(chunks), workers, func(k int) {
		results[k], failed[k] = parseChunk(file, lexer, chunks[k], eof)
	})
	for k := range chunks {
		if failed[k] {
			return nil, false
		}
		decls = append(decls, results[k]...)
	}
	return decls, true
}

// splitItems cuts toks into at most n runs of whole top-level items of
// about equal length.
func splitItems(toks []antlr.Token, n int) [][]antlr.Token {
	var starts []int // indexes of the tokens that start an item
	depth := 0
	for i, t := range toks {
		switch t.GetTokenType() {
		case parser.GenesisLexerLBRACE, parser.GenesisLexerLPAREN, parser.GenesisLexerLBRACK:
			depth++
		case parser.GenesisLexerRBRACE, parser.GenesisLexerRPAREN, parser.GenesisLexerRBRACK:
			depth--
		case parser.GenesisLexerFN, parser.GenesisLexerSTRUCT, parser.GenesisLexerENUM, parser.GenesisLexerTYPE:
			if depth == 0 {
				starts = append(starts, i)
			}
		}
	}
	if len(starts) == 0 || starts[0] != 0 {
		return nil // something before the first item: leave it to the parser
	}
	target := len(toks)/n + 1
	var chunks [][]antlr.Token
	from := 0
	for _, s := range starts {
		if s-from >= target {
			chunks = append(chunks, toks[from:s])
			from = s
		}
	}
	return append(chunks, toks[from:])
}

// parseChunk parses and builds one chunk; failed reports any error.
func parseChunk(file string, lexer *parser.GenesisLexer, toks []antlr.Token, eof antlr.Token) (decls []Decl, failed bool) {
	b := &builder{file: file}
	defer func() {
		if recover() != nil {
			decls, failed = nil, true
		}
	}()
	// Each chunk ends in an EOF token of its own: streams number the
	// tokens they hand out, so no token may be in two streams.
	end := antlr.CommonTokenFactoryDEFAULT.Create(eof.GetSource(), antlr.TokenEOF, "<EOF>",
		antlr.TokenDefaultChannel, eof.GetStart(), eof.GetStop(), eof.GetLine(), eof.GetColumn())
	tokens := antlr.NewCommonTokenStream(&sliceSource{GenesisLexer: lexer, toks: toks, eof: end}, antlr.TokenDefaultChannel)
	b.tokens = tokens
	p := parser.NewGenesisParser(tokens)
	tree, ok := twostage.SLL(p, p.Program)
	if !ok {
		return nil, true
	}
	for _, it := range tree.AllItem() {
		if d := b.item(it); d != nil {
			decls = append(decls, d)
		}
	}
	return decls, len(b.diags) > 0
}

// sliceSource hands out tokens lexed before. It embeds the lexer that
// made them for the rest of the Lexer interface, which streams and
// parsers only read.
type sliceSource struct {
	*parser.GenesisLexer
	toks []antlr.Token
	eof  antlr.Token
	next int
}

func (s *sliceSource) NextToken() antlr.Token {
	if s.next == len(s.toks) {
		return s.eof
	}
	s.next++
	return s.toks[s.next-1]
}

// errorSeen is an error listener that only records that an error came.
type errorSeen struct {
	*antlr.DefaultErrorListener
	seen bool
}

func (e *errorSeen) SyntaxError(antlr.Recognizer, any, int, int, string, antlr.RecognitionException) {
	e.seen = true
}
