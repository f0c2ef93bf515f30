package genesis

import (
	"runtime"
	"unicode/utf8"

	"github.com/antlr4-go/antlr/v4"

	"github.com/genesis-toolchain/genesis/frontend/genesis/parser"
	"github.com/genesis-toolchain/genesis/frontend/sllparse"
	"github.com/genesis-toolchain/genesis/frontend/source"
	"github.com/genesis-toolchain/genesis/internal/parallel"
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
//
// The file is lexed twice: once whole, to find where the chunks start
// (and that it lexes without error and is not nested too deep), keeping
// no token; then chunk by chunk, each chunk's tokens and parse tree dying
// with it. The tokens of a whole file, some 35 bytes of memory a byte of
// source, would otherwise all be alive until the last chunk was parsed
// (docs/genesis.md "Limits").
func parseConcurrently(file string, src []byte) (decls []Decl, ok bool) {
	workers := runtime.GOMAXPROCS(0)
	if len(src) < parallelMinBytes || !utf8.Valid(src) {
		return nil, false
	}
	input := antlr.NewInputStream(string(src))
	// About a byte in 4 of source is a token; aim at chunksPerWorker
	// chunks a worker for small files, chunkTokens tokens for large ones.
	target := min(chunkTokens, max(len(src)/4/(workers*chunksPerWorker), 1))
	chunks, ok := splitItems(input, target)
	if !ok || len(chunks) < 2 {
		return nil, false
	}

	results := make([][]Decl, len(chunks))
	failed := make([]bool, len(chunks))
	parallel.Do(len(chunks), workers, func(k int) {
		results[k], failed[k] = parseChunk(file, input, chunks[k])
	})
	for k := range chunks {
		if failed[k] {
			return nil, false
		}
		decls = append(decls, results[k]...)
	}
	return decls, true
}

// A chunk is a run of whole top-level items of the input: the runes from
// start to end, and the line and column (from 0) of start.
type chunk struct {
	start, end int
	line, col  int
}

// splitItems lexes the input, keeping no token, and cuts it into chunks
// of whole top-level items of at least target tokens each (the last may
// be shorter). ok is false when something other than an item starts the
// input, a token is malformed or the nesting is too deep: the sequential
// parse reports those.
func splitItems(input *antlr.InputStream, target int) (chunks []chunk, ok bool) {
	lexer := parser.NewGenesisLexer(input)
	lexer.RemoveErrorListeners()
	var lexErrs errorSeen
	lexer.AddErrorListener(&lexErrs)
	depth := source.DepthScan{Classify: depthClass}
	brackets, tokens := 0, 0
	cur := chunk{start: -1}
	t := lexer.NextToken()
	for t.GetTokenType() != antlr.TokenEOF {
		next := lexer.NextToken()
		if lexErrs.seen || depth.Scan(t, next.GetTokenType()) != nil {
			return nil, false
		}
		switch t.GetTokenType() {
		case parser.GenesisLexerLBRACE, parser.GenesisLexerLPAREN, parser.GenesisLexerLBRACK:
			brackets++
		case parser.GenesisLexerRBRACE, parser.GenesisLexerRPAREN, parser.GenesisLexerRBRACK:
			brackets--
		case parser.GenesisLexerFN, parser.GenesisLexerSTRUCT, parser.GenesisLexerENUM, parser.GenesisLexerTYPE:
			if brackets == 0 && (cur.start < 0 || tokens >= target) {
				if cur.start >= 0 {
					cur.end = t.GetStart()
					chunks = append(chunks, cur)
				}
				cur = chunk{start: t.GetStart(), line: t.GetLine(), col: t.GetColumn()}
				tokens = 0
			}
		}
		if cur.start < 0 {
			return nil, false // something before the first item
		}
		tokens++
		t = next
	}
	if lexErrs.seen || cur.start < 0 {
		return nil, false
	}
	cur.end = input.Size()
	return append(chunks, cur), true
}

// parseChunk lexes, parses and builds one chunk; failed reports any
// error. The chunk gets an input stream of its own (a stream has a
// position, so goroutines cannot share one), and its lexer starts at the
// chunk's line and column, so that positions are the file's.
func parseChunk(file string, input *antlr.InputStream, c chunk) (decls []Decl, failed bool) {
	b := &builder{file: file}
	defer func() {
		if recover() != nil {
			decls, failed = nil, true
		}
	}()
	lexer := parser.NewGenesisLexer(antlr.NewInputStream(input.GetText(c.start, c.end-1)))
	lexer.RemoveErrorListeners()
	sim, ok := lexer.Interpreter.(*antlr.LexerATNSimulator)
	if !ok {
		return nil, true
	}
	sim.Line, sim.CharPositionInLine = c.line, c.col
	tokens := antlr.NewCommonTokenStream(lexer, antlr.TokenDefaultChannel)
	b.tokens = tokens
	p := parser.NewGenesisParser(tokens)
	tree, ok := sllparse.Try(p, p.Program)
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
