package vvm

import (
	"unicode/utf8"

	"github.com/antlr4-go/antlr/v4"

	"github.com/genesis-toolchain/genesis/frontend/sllparse"
	"github.com/genesis-toolchain/genesis/frontend/source"
	"github.com/genesis-toolchain/genesis/frontend/vvm/parser"
)

// Parsing a large file chunk by chunk. ANTLR keeps every token of the
// stream it parses and builds a parse tree of some 20 objects a token:
// for a whole file, about 180 bytes of memory a byte of source, alive
// until the AST is built. The top-level statements of a file are
// independent to the grammar (program : stmt* EOF), and the token source
// finds where each starts: the first token of a logical line at column
// 0, which no elif, else, except or finally (the clauses that continue a
// compound statement) can be. So a large file is lexed once through the
// token source, keeping no token, to find those starts and check that
// nothing is wrong with its tokens; then it is lexed, parsed and built
// chunk by chunk of whole statements, each chunk's lexer starting at its
// line and column so that every position is the file's, and each
// chunk's tokens and parse tree are garbage once its statements are
// built. The builder is the file's, so what it checks across statements
// (inputs before executable statements, the depth limits) runs as for
// the whole file. Any syntax error, in the first lexing or in a chunk's
// parse, abandons the chunks: the file is parsed whole, which reports
// errors exactly as always, so chunking changes no diagnostic.

// chunkMinBytes is the size from which a file is parsed chunk by chunk:
// below it, the parse tree of the whole file is small.
const chunkMinBytes = 64 << 10

// chunkTokens is about the fewest tokens a chunk holds (but the last):
// enough that starting a lexer and parser per chunk costs little, few
// enough that a chunk's tokens and tree are a few megabytes.
const chunkTokens = 1 << 13

// A chunk is a run of whole top-level statements: the runes of the input
// from start to end, the bytes of the text from bstart to bend (which a
// check in two passes parses again: see twopass.go), and the line (from
// 1) and column (from 0) of start.
type chunk struct {
	start, end   int
	bstart, bend int
	line, col    int
}

// continues holds the tokens that continue a compound statement at its
// own column: a chunk cannot start at one.
var continues = map[int]bool{
	parser.VVMLexerELIF: true, parser.VVMLexerELSE: true,
	parser.VVMLexerEXCEPT: true, parser.VVMLexerFINALLY: true,
}

// A defSpan is a top-level def found by splitStmts: its text, from the
// def to the next top-level statement (runes from start to end, bytes
// from bstart to bend), and what the first pass of a check in two
// passes keeps of it (twopass.go).
type defSpan struct {
	start, end   int
	bstart, bend int
	def          *FuncDecl // DefPos, Name and Hoisted, as the builder makes them
}

// splitStmts lexes the input through the token source, keeping no token,
// and cuts it into chunks of whole top-level statements of at least
// target tokens each (the last may have fewer). ok is false when the
// token source reports anything (a lexical error, a bracket never
// closed, nesting too deep): the whole-file parse reports it. defs are
// the top-level statements that start `def name(`, which can only be
// defs.
func splitStmts(input *antlr.InputStream, file string, target int) (chunks []chunk, defs []defSpan, ok bool) {
	r := &reporter{}
	lexer := parser.NewVVMLexer(input)
	lexer.RemoveErrorListeners()
	ts := newTokenSource(lexer, r, file)
	cur := chunk{start: -1}
	tokens := 0
	lineStart := true // the next token starts a logical line
	// The def being read: its DEF token and name, after DEF (state 1)
	// and the name (state 2); open is set while the last def found runs.
	var defTok, nameTok antlr.Token
	state, open := 0, false
	for {
		t := ts.NextToken()
		typ := t.GetTokenType()
		if typ == antlr.TokenEOF {
			break
		}
		switch state {
		case 1:
			state = 0
			if typ == parser.VVMLexerIDENT || isKeywordToken(typ) {
				nameTok, state = t, 2
			}
		case 2:
			state = 0
			if typ == parser.VVMLexerLPAREN {
				defs = append(defs, defSpan{start: defTok.GetStart(), def: &FuncDecl{
					DefPos:  source.TokenPos(file, defTok),
					Name:    &Ident{NamePos: source.TokenPos(file, nameTok), Name: nameTok.GetText()},
					Hoisted: true,
				}})
				open = true
			}
		}
		switch typ {
		case parser.VVMParserNEWLINE, parser.VVMParserDEDENT:
			lineStart = true
			continue
		case parser.VVMParserINDENT:
			continue
		}
		top := lineStart && len(ts.indents) == 1 && t.GetColumn() == 0 && !continues[typ]
		if top && open {
			defs[len(defs)-1].end = t.GetStart()
			open = false
		}
		if top && typ == parser.VVMLexerDEF {
			defTok, state = t, 1
		}
		if top && (cur.start < 0 || tokens >= target) {
			if cur.start >= 0 {
				cur.end = t.GetStart()
				chunks = append(chunks, cur)
			}
			cur = chunk{start: t.GetStart(), line: t.GetLine(), col: t.GetColumn()}
			tokens = 0
		}
		if cur.start < 0 {
			return nil, nil, false // the file starts indented, or with elif…: the parser reports it
		}
		lineStart = false
		tokens++
	}
	if len(r.diags) > 0 || ts.runaway != nil || ts.deep || cur.start < 0 {
		return nil, nil, false
	}
	if open {
		defs[len(defs)-1].end = input.Size()
	}
	cur.end = input.Size()
	return append(chunks, cur), defs, true
}

// parseChunks parses text, the file's text, chunk by chunk of at least
// target tokens, giving each chunk's statements to each as they are
// built (a whole-file parse keeps them all, the first pass of a check
// in two passes keeps a summary of them). ok is false when the file is
// not parsed that way: it is smaller than minBytes, not valid UTF-8, or
// has a syntax error anywhere; b's reporter then holds what it held
// before, but each may have had statements of the first chunks, so the
// whole-file parse needs a fresh builder and its caller must forget
// them. On success b.r gets the builder's diagnostics (there is no
// syntax error to report), and chunks are the chunks, with their byte
// offsets in text.
func parseChunks(text string, src []byte, b *builder, minBytes, target int, each func([]Stmt)) (chunks []chunk, ok bool) {
	if len(src) < minBytes || !utf8.Valid(src) {
		return nil, false
	}
	input := antlr.NewInputStream(text)
	chunks, _, ok = splitStmts(input, b.file, target)
	if !ok || len(chunks) < 2 {
		return nil, false
	}
	byteOffsets(text, len(chunks), func(k int) (*int, *int, *int, *int) {
		c := &chunks[k]
		return &c.start, &c.end, &c.bstart, &c.bend
	})
	real := b.r
	scratch := &reporter{}
	b.r = scratch
	defer func() { b.r = real }()
	for _, c := range chunks {
		cs, ok := parseChunk(text[c.bstart:c.bend], c, b)
		if !ok {
			return nil, false
		}
		each(cs)
	}
	real.diags = append(real.diags, scratch.diags...)
	return chunks, true
}

// byteOffsets sets the byte offsets in text of n spans (chunks or
// defs), whose rune offsets are set and increasing: span k's rune
// offsets are *start and *end, its byte offsets *bstart and *bend.
func byteOffsets(text string, n int, span func(k int) (start, end, bstart, bend *int)) {
	r, i := 0, 0 // a rune offset and its byte offset
	seek := func(target int) int {
		for r < target && i < len(text) {
			_, n := utf8.DecodeRuneInString(text[i:])
			i += n
			r++
		}
		return i
	}
	for k := 0; k < n; k++ {
		start, end, bstart, bend := span(k)
		*bstart = seek(*start)
		*bend = seek(*end)
	}
}

// parseChunk lexes, parses and builds one chunk, whose text is text. Its lexer starts at the
// chunk's line and column, so that positions are the file's. ok is false
// at any syntax error.
func parseChunk(text string, c chunk, b *builder) (stmts []Stmt, ok bool) {
	lexer := parser.NewVVMLexer(antlr.NewInputStream(text))
	lexer.RemoveErrorListeners()
	lexer.AddErrorListener(b)
	sim, isSim := lexer.Interpreter.(*antlr.LexerATNSimulator)
	if !isSim {
		return nil, false
	}
	sim.Line, sim.CharPositionInLine = c.line, c.col
	ts := newTokenSource(lexer, b.r, b.file)
	p := parser.NewVVMParser(antlr.NewCommonTokenStream(ts, antlr.TokenDefaultChannel))
	tree, sll := sllparse.Try(p, p.Program)
	if !sll || b.r.syntaxErrors > 0 || len(b.pending) > 0 || ts.runaway != nil || ts.deep {
		return nil, false
	}
	return b.stmts(tree.AllStmt()), b.r.syntaxErrors == 0
}
