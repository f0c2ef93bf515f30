package genesis

import (
	"runtime"
	"unicode/utf8"

	"github.com/antlr4-go/antlr/v4"

	"github.com/genesis-toolchain/genesis/diag"
	"github.com/genesis-toolchain/genesis/frontend/genesis/parser"
	"github.com/genesis-toolchain/genesis/frontend/sllparse"
	"github.com/genesis-toolchain/genesis/frontend/source"
	"github.com/genesis-toolchain/genesis/internal/parallel"
	"github.com/genesis-toolchain/genesis/ir"
)

// A check in two passes (genesisc check; docs/decisions.md, "A check in
// two passes"). What a check of a whole program holds at once was the
// checked tree of every function body, about 26 bytes per byte of
// source; a body is needed only while it is checked and lowered. So:
//
//  0. each file is lexed once, keeping no token, to find its top-level
//     items (in chunks, as parseConcurrently does) and the extent of
//     every function body;
//  1. the chunks are parsed with every function body blanked out (its
//     text replaced by spaces, its newlines kept, so that every position
//     is the file's), which leaves the declarations — structs, enums,
//     aliases, function signatures — and the checker declares and
//     resolves them, as Check does before it checks the bodies;
//  2. the chunks are parsed again, a few at a time, and each function
//     body is checked, lowered and verified, then dropped.
//
// The bodies are checked in the order Check checks them (declaration
// order, file by file), with the checker's one reporter, and lowered
// with the lowerer's, so that the diagnostics are those of Check
// followed by CheckLowering. Whatever the passes cannot handle as
// ordinary input — a lexical or syntax error, nesting past the limit, a
// file not made of items, a chunk whose declarations differ between the
// passes — makes CheckHolding check the files the one-pass way, which
// reports every error exactly as always.

// CheckHolding reports what ParseFiles, then Check, then CheckLowering
// report on the files of one program — the same diagnostics, in the same
// order — holding at once only the declarations, the sources and a few
// chunks of function bodies, rather than the checked tree of the whole
// program (docs/genesis.md, "Limits"). atPeak, when not nil, is called
// once, where the check holds the most: for the two passes, with the
// declarations, the signatures of the IR and the last chunks parsed
// alive; for the one-pass way, with the checked program alive. CheckHolding
// never panics.
func CheckHolding(srcs []Source, atPeak func()) diag.List {
	if diags, ok := checkTwoPasses(srcs, atPeak); ok {
		return diags
	}
	files, diags := ParseFiles(srcs)
	if diags.HasErrors() {
		return diags
	}
	prog, ds := Check(files)
	diags = append(diags, ds...)
	if diags.HasErrors() {
		return diags
	}
	if atPeak != nil {
		atPeak()
	}
	runtime.KeepAlive(prog)
	return append(diags, CheckLowering(prog)...)
}

// A passFile is one source file of a check in two passes.
type passFile struct {
	src    Source
	chunks []passChunk
	file   *File // its declarations, bodies blanked (pass 1)
}

// A passChunk is a run of whole top-level items of a file: the bytes
// from start to end, starting at line and column col (from 0), and the
// interiors of its function bodies (between the braces), as byte ranges
// of the file, in order.
type passChunk struct {
	start, end int
	line, col  int
	bodies     [][2]int
}

// passChunkTokens is about the most tokens a chunk of a check in two
// passes holds: a quarter of chunkTokens, so that the trees of the
// bodies alive at once (passBatch chunks) are a few hundred KB, small
// beside the declarations of a large program, at a cost of a few
// thousand parsers more for 50 MB.
const passChunkTokens = chunkTokens / 4

// passBatch is the most chunks pass 2 parses at once (on as many
// goroutines, up to GOMAXPROCS) before it checks their bodies: the bound
// of what the bodies hold does not depend on the machine.
const passBatch = 4

// checkTwoPasses is CheckHolding by the two passes; ok is false when it
// declines the files, and its diagnostics are then to be dropped.
func checkTwoPasses(srcs []Source, atPeak func()) (diags diag.List, ok bool) {
	if len(srcs) == 0 {
		return nil, false
	}
	pfs := make([]*passFile, len(srcs))
	for i, s := range srcs {
		chunks, ok := scanBodies(s.Data)
		if !ok {
			return nil, false
		}
		pfs[i] = &passFile{src: s, chunks: chunks}
	}
	workers := runtime.GOMAXPROCS(0)
	batchSize := min(workers, passBatch)

	// Pass 1: the declarations.
	files := make([]*File, len(pfs))
	for i, pf := range pfs {
		results := make([][]Decl, len(pf.chunks))
		failed := make([]bool, len(pf.chunks))
		parallel.Do(len(pf.chunks), workers, func(k int) {
			c := pf.chunks[k]
			results[k], failed[k] = parseChunkText(pf.src.Name, blankBodies(pf.src.Data, c), c.line, c.col)
		})
		pf.file = &File{Name: pf.src.Name, Src: pf.src.Data}
		for k := range results {
			if failed[k] {
				return nil, false
			}
			pf.file.Decls = append(pf.file.Decls, results[k]...)
		}
		files[i] = pf.file
	}

	c := &checker{
		types:  map[string]*TypeName{},
		values: map[string]Object{},
		prog:   &Program{Files: files},
	}
	first := files[0].Name
	l := newLowerer(c.prog)
	var fv *ir.FuncVerifier
	lowering := false // the lowering has begun and not stopped
	declined := false
	// The chunks pass 2 has parsed: those of pfs[:parsedFiles], and
	// parsedChunks of the next file.
	parsedFiles, parsedChunks := 0, 0
	func() {
		defer c.recoverPhase(first)
		c.declare(files)
		c.resolveTypes()
		c.layoutAll()
		c.signatures()
		// The syntax of the signatures and of the types' fields is
		// resolved into the Funcs', Structs' and Enums' types, which is
		// all that checking and lowering a body read: near a third of
		// what the check held at its peak.
		for _, f := range files {
			for _, d := range f.Decls {
				switch d := d.(type) {
				case *FuncDecl:
					d.Params, d.Result = nil, nil
				case *StructDecl:
					d.Fields = nil
				case *EnumDecl:
					for _, v := range d.Variants {
						v.Payload = nil
					}
				}
			}
		}
		if !c.diags.HasErrors() {
			lowering = lowerStart(l, first, func() {
				for _, fn := range c.prog.Funcs {
					l.declare(fn)
				}
				fv = ir.NewFuncVerifier(l.m)
			})
		}
		// Pass 2: the bodies, in the order of c.prog.Funcs (declaration
		// order, file by file, without the functions declared twice).
		next := 0 // index in c.prog.Funcs of the next body to check
		peakCalled := false
		for fi, pf := range pfs {
			d := 0 // index in pf.file.Decls of the next declaration
			for k0 := 0; k0 < len(pf.chunks); k0 += batchSize {
				batch := pf.chunks[k0:min(k0+batchSize, len(pf.chunks))]
				results := make([][]Decl, len(batch))
				failed := make([]bool, len(batch))
				parallel.Do(len(batch), workers, func(k int) {
					ch := batch[k]
					results[k], failed[k] = parseChunkText(pf.src.Name, pf.src.Data[ch.start:ch.end], ch.line, ch.col)
				})
				parsedFiles, parsedChunks = fi, k0+len(batch)
				if !peakCalled && fi == len(pfs)-1 && k0+batchSize >= len(pf.chunks) {
					peakCalled = true
					if atPeak != nil {
						atPeak()
					}
				}
				for k := range results {
					if failed[k] {
						declined = true
						return
					}
					for _, d2 := range results[k] {
						if d >= len(pf.file.Decls) || !sameDecl(pf.file.Decls[d], d2) {
							declined = true
							return
						}
						d1, isFunc := pf.file.Decls[d].(*FuncDecl)
						d++
						if !isFunc || next >= len(c.prog.Funcs) || d1.Obj != c.prog.Funcs[next] {
							continue // not a function, or one declared twice
						}
						next++
						fn := d1.Obj
						d1.Body = d2.(*FuncDecl).Body
						c.funcBody(fn)
						c.untyped = nil // the answers of this body's expressions
						if lowering && !c.diags.HasErrors() {
							lowering = lowerStart(l, first, func() { l.lowerOne(fn, lowerCheck, fv) })
						}
						d1.Body, fn.Locals = nil, nil
					}
					results[k] = nil
				}
			}
			if d != len(pf.file.Decls) {
				declined = true
				return
			}
		}
		c.checkMain(first)
	}()
	// A check stopped by the error cap (or a bug) has not parsed every
	// body, and a syntax error, which the one-pass check reports instead
	// of any other, may lie in those left.
	for fi := parsedFiles; fi < len(pfs) && !declined; fi++ {
		pf := pfs[fi]
		from := 0
		if fi == parsedFiles {
			from = parsedChunks
		}
		for k := from; k < len(pf.chunks) && !declined; k++ {
			ch := pf.chunks[k]
			_, declined = parseChunkText(pf.src.Name, pf.src.Data[ch.start:ch.end], ch.line, ch.col)
		}
	}
	if declined {
		return nil, false
	}
	diags = c.sortedDiags()
	if diags.HasErrors() {
		return diags, true
	}
	_, lds := l.finish(lowerCheck)
	runtime.KeepAlive(files)
	return append(diags, lds...), true
}

// lowerStart runs step of a lowering, as lower's one phase does: a
// panic ends it (an error-cap bailout, or an internal error that
// recoverPhase reports), and lowerStart then returns false, the lowering
// over.
func lowerStart(l *lowerer, file string, step func()) (goOn bool) {
	defer l.recoverPhase(file)
	step()
	return true
}

// sameDecl reports whether a, a declaration of pass 1, and b, of pass 2,
// are the same item: of the same kind, with the same name at the same
// place.
func sameDecl(a, b Decl) bool {
	if a.Pos() != b.Pos() {
		return false
	}
	switch a := a.(type) {
	case *FuncDecl:
		b, ok := b.(*FuncDecl)
		return ok && b.Body != nil && a.Name.Name == b.Name.Name
	case *StructDecl:
		b, ok := b.(*StructDecl)
		return ok && a.Name.Name == b.Name.Name
	case *EnumDecl:
		b, ok := b.(*EnumDecl)
		return ok && a.Name.Name == b.Name.Name
	case *AliasDecl:
		b, ok := b.(*AliasDecl)
		return ok && a.Name.Name == b.Name.Name
	}
	return false
}

// scanBodies lexes src, keeping no token, and cuts it into chunks of
// whole top-level items of about passChunkTokens tokens (splitItems), with
// the interiors of their function bodies; ok is false when src is not
// valid UTF-8, has a lexical error or nesting past the limits, or
// something other than an item starts it, which the one-pass parse
// reports.
func scanBodies(src []byte) (chunks []passChunk, ok bool) {
	if !utf8.Valid(src) {
		return nil, false
	}
	input := antlr.NewInputStream(string(src))
	lexer := parser.NewGenesisLexer(input)
	lexer.RemoveErrorListeners()
	var lexErrs errorSeen
	lexer.AddErrorListener(&lexErrs)
	depth := source.DepthScan{Classify: depthClass}
	// Token offsets count runes; the chunks are cut in bytes.
	var at runeCursor
	at.src = src
	brackets, tokens := 0, 0
	header := false // after a top-level fn, before its body
	bodyStart := -1 // the byte after the body's '{', inside a body
	cur := passChunk{start: -1}
	prev := 0 // the type of the token before t
	t := lexer.NextToken()
	for t.GetTokenType() != antlr.TokenEOF {
		next := lexer.NextToken()
		if lexErrs.seen || depth.Scan(t, next.GetTokenType()) != nil {
			return nil, false
		}
		switch t.GetTokenType() {
		case parser.GenesisLexerLBRACE:
			if brackets == 0 && header {
				header = false
				bodyStart = at.byteAt(t.GetStop() + 1)
			}
			brackets++
		case parser.GenesisLexerLPAREN, parser.GenesisLexerLBRACK:
			brackets++
		case parser.GenesisLexerRBRACE:
			brackets--
			if brackets == 0 && bodyStart >= 0 {
				cur.bodies = append(cur.bodies, [2]int{bodyStart, at.byteAt(t.GetStart())})
				bodyStart = -1
			}
		case parser.GenesisLexerRPAREN, parser.GenesisLexerRBRACK:
			brackets--
		case parser.GenesisLexerFN, parser.GenesisLexerSTRUCT, parser.GenesisLexerENUM, parser.GenesisLexerTYPE:
			// *fn(…) -> T is a type, not an item.
			if brackets == 0 && prev != parser.GenesisLexerSTAR {
				if header || bodyStart >= 0 {
					return nil, false // an item without its body
				}
				header = t.GetTokenType() == parser.GenesisLexerFN
				if cur.start < 0 || tokens >= passChunkTokens {
					start := at.byteAt(t.GetStart())
					if cur.start >= 0 {
						cur.end = start
						chunks = append(chunks, cur)
					}
					cur = passChunk{start: start, line: t.GetLine(), col: t.GetColumn()}
					tokens = 0
				}
			}
		}
		if cur.start < 0 || brackets < 0 {
			return nil, false // something before the first item, or a stray closer
		}
		tokens++
		prev = t.GetTokenType()
		t = next
	}
	if lexErrs.seen || cur.start < 0 || brackets != 0 || header || bodyStart >= 0 {
		return nil, false
	}
	cur.end = len(src)
	return append(chunks, cur), true
}

// runeCursor turns rune offsets of src, asked in increasing order, into
// byte offsets.
type runeCursor struct {
	src         []byte
	runes, byts int
}

// byteAt returns the byte offset of the rune at offset r, r at least the
// last one asked.
func (c *runeCursor) byteAt(r int) int {
	for c.runes < r && c.byts < len(c.src) {
		_, n := utf8.DecodeRune(c.src[c.byts:])
		c.byts += n
		c.runes++
	}
	return c.byts
}

// blankBodies returns the text of chunk c of src with every function
// body's interior blanked: each character but a space, tab, carriage
// return or newline becomes one space, so that the lexer sees the
// declarations at their places (lines and columns, which count runes) and
// each body as an empty block.
func blankBodies(src []byte, c passChunk) []byte {
	out := make([]byte, 0, c.end-c.start)
	at := c.start
	for _, b := range c.bodies {
		out = append(out, src[at:b[0]]...)
		for _, ch := range src[b[0]:b[1]] {
			switch {
			case ch == ' ' || ch == '\t' || ch == '\r' || ch == '\n':
				out = append(out, ch)
			case ch&0xC0 == 0x80: // the rest of a multi-byte rune, which became one space
			default:
				out = append(out, ' ')
			}
		}
		at = b[1]
	}
	return append(out, src[at:c.end]...)
}

// parseChunkText lexes, parses and builds text, whole top-level items
// that start at line and column col (from 0) of file; failed reports any
// error, a diagnostic or a panic, which the one-pass parse reports.
func parseChunkText(file string, text []byte, line, col int) (decls []Decl, failed bool) {
	b := &builder{file: file}
	defer func() {
		if recover() != nil {
			decls, failed = nil, true
		}
	}()
	lexer := parser.NewGenesisLexer(antlr.NewInputStream(string(text)))
	lexer.RemoveErrorListeners()
	var lexErrs errorSeen
	lexer.AddErrorListener(&lexErrs)
	sim, ok := lexer.Interpreter.(*antlr.LexerATNSimulator)
	if !ok {
		return nil, true
	}
	sim.Line, sim.CharPositionInLine = line, col
	tokens := antlr.NewCommonTokenStream(lexer, antlr.TokenDefaultChannel)
	b.tokens = tokens
	p := parser.NewGenesisParser(tokens)
	tree, ok := sllparse.Try(p, p.Program)
	if !ok || lexErrs.seen {
		return nil, true
	}
	for _, it := range tree.AllItem() {
		d := b.item(it)
		if d == nil {
			return nil, true
		}
		decls = append(decls, d)
	}
	return decls, len(b.diags) > 0
}
