// Package frontend is the interface between the driver (package
// compiler) and the language frontends: what a language declares about
// itself (its file extensions, how its files are told apart from another
// language's, whether a program is one file) and the two stages every
// frontend runs — Check (parse, resolve, check) and Lower (to an IR
// module) — over one Input type. A frontend package imports this
// package and exports its Language; the driver lists the languages it
// reads in one Registry, which finds the language of a set of files.
//
// This package imports no frontend, and no frontend imports another:
// what several share (positions, the SLL first try of the ANTLR parse,
// the JSON/YAML node tree, "did you mean") lives in diag,
// frontend/source, frontend/sllparse and frontend/internal/jsontree.
package frontend

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"

	"github.com/genesis-toolchain/genesis/diag"
	"github.com/genesis-toolchain/genesis/forge/bytecode"
	"github.com/genesis-toolchain/genesis/ir"
)

// Source is one input file: its name, as positions give it, and its
// bytes.
type Source struct {
	Name string
	Data []byte
}

// Input is what a frontend reads: the files it was given and a way to
// read the modules they import. Every frontend's entry points take one.
type Input struct {
	// Files are the files named on the command line, in order: the one
	// file of a language whose program is one file (for VVM and Grimoire
	// the entry module), every file of a Genesis program.
	Files []Source
	// Import reads a module a program imports, by the path its frontend
	// resolved the import to. nil reads nothing: every import is a file
	// that does not exist (fs.ErrNotExist).
	Import func(path string) ([]byte, error)
}

// File returns the Input of one file that imports nothing from outside
// itself.
func File(name string, data []byte) Input {
	return Input{Files: []Source{{Name: name, Data: data}}}
}

// ReadInput returns the Input of the program whose entry file is entry,
// reading the entry and every module it imports with read: a read error
// of the entry is returned, one of an import is the frontend's
// diagnostic.
func ReadInput(entry string, read func(path string) ([]byte, error)) (Input, error) {
	data, err := read(entry)
	if err != nil {
		return Input{}, err
	}
	return Input{Files: []Source{{Name: entry, Data: data}}, Import: read}, nil
}

// Entry returns the first file: the program of a one-file language, the
// entry module of a language with imports. It is the zero Source when
// there is none.
func (in Input) Entry() Source {
	if len(in.Files) == 0 {
		return Source{}
	}
	return in.Files[0]
}

// Read reads the file at path for a frontend: the bytes of one of Files
// when path names it (both cleaned, so that "./a/../main.vvm" is
// "main.vvm"), otherwise the module Import reads.
func (in Input) Read(path string) ([]byte, error) {
	clean := filepath.Clean(path)
	for _, f := range in.Files {
		if filepath.Clean(f.Name) == clean {
			return f.Data, nil
		}
	}
	if in.Import == nil {
		return nil, &fs.PathError{Op: "open", Path: path, Err: fs.ErrNotExist}
	}
	return in.Import(path)
}

// Language is one input language of the driver: what it declares about
// its files, and its frontend's stages. Check and Lower are called in
// that order on one Input; what passes between them (the checked
// program) is the frontend's own type, which the driver does not look
// into.
type Language struct {
	// Name names the language in messages and tests: "Genesis", "VVM".
	Name string
	// Programs is what its programs are called in a message: "VVM
	// programs", "execution plans".
	Programs string
	// Extensions are the extensions of its files, lower case, with the
	// dot. Several languages may share one: then Detect tells them apart.
	Extensions []string
	// Detect, when set, claims a file of one of Extensions by its
	// content: the registry's detection step (Registry.Language) gives a
	// file to the first language of its extension whose Detect claims
	// it, and otherwise to the one language of the extension without
	// Detect. It looks at as little of the file as it can and never
	// fails: a malformed file is claimed or not, and its frontend reports
	// what is wrong with it.
	Detect func(src []byte) bool
	// OneFile is, for a language whose program is one file, the message
	// when several are given ("several .fasm files: assemble each one
	// and combine them with forge link"). Empty: several files form one
	// program.
	OneFile string
	// Agent marks an agent language, whose programs call LLMs and tools
	// and run on the agent runtime: today only the go target builds them
	// (docs/decisions.md, "genesisc check and the memory of a check").
	Agent bool
	// Standalone marks a language whose programs need no runtime: the go
	// target writes a self-contained command for them
	// (golang.GenerateStandalone) rather than a package on the agent
	// runtime.
	Standalone bool
	// LargeInput marks a language whose programs may be megabytes of
	// source (generated Genesis): the driver bounds the heap of their
	// build and collects garbage between the frontend and the backend
	// (compiler.HeapLimit).
	LargeInput bool

	// Check parses and checks the program: every diagnostic a frontend
	// gives short of lowering (warnings too), and the checked program,
	// which may be nil or partial when the list holds errors and is then
	// not lowered.
	Check func(in Input) (checked any, diags diag.List)
	// CheckLowering, when set, is what a check (genesisc check) runs
	// after Check found no error, for the diagnostics the lowering of
	// this language can give: Genesis lowers and verifies each function,
	// dropping it once verified; an IR file is verified. A language
	// without it reports nothing but internal errors from its lowering
	// (compiler.TestCheckIsTheFrontend holds the agent languages to it).
	CheckLowering func(checked any) diag.List
	// CheckHolding, when set, is what a check runs instead of Check and
	// CheckLowering: the same diagnostics, reported while holding less
	// than the whole checked program (Genesis checks its declarations,
	// then each function body, parsed again chunk by chunk, and drops
	// it). atPeak, when not nil, is called where it holds the most, for
	// the tests of its memory.
	CheckHolding func(in Input, atPeak func()) diag.List
	// Lower lowers a program Check returned without errors to an IR
	// module that verifies, with the diagnostics of the lowering (its
	// internal errors, for most languages). nil for a language that does
	// not compile through the IR (Forge assembly): then Assembled is set.
	Lower func(checked any) (*ir.Module, diag.List)
	// Assembled, for a language that builds a Forge program directly
	// rather than through the IR, is the program of a checked one.
	Assembled func(checked any) *bytecode.Program
}

// Registry is the set of languages a driver reads, in a fixed order
// (which orders the extensions of its messages).
type Registry struct {
	langs []*Language
	byExt map[string][]*Language // in registration order
	exts  []string               // every extension once, in order
}

// NewRegistry returns the registry of langs. A list that cannot be told
// apart is an error: a language without a name, an extension or Check,
// one with neither Lower nor Assembled, two languages of one name, an
// extension not lower case with its dot, or two languages of one
// extension without Detect (which file would be whose?).
func NewRegistry(langs ...*Language) (*Registry, error) {
	r := &Registry{byExt: map[string][]*Language{}}
	names := map[string]bool{}
	var errs []error
	for _, l := range langs {
		switch {
		case l.Name == "":
			errs = append(errs, errors.New("a language without a name"))
			continue
		case names[l.Name]:
			errs = append(errs, fmt.Errorf("two languages named %s", l.Name))
		case len(l.Extensions) == 0:
			errs = append(errs, fmt.Errorf("%s has no file extension", l.Name))
		case l.Check == nil:
			errs = append(errs, fmt.Errorf("%s has no Check", l.Name))
		case (l.Lower == nil) == (l.Assembled == nil):
			errs = append(errs, fmt.Errorf("%s must have one of Lower and Assembled", l.Name))
		}
		names[l.Name] = true
		r.langs = append(r.langs, l)
		for _, e := range l.Extensions {
			if !strings.HasPrefix(e, ".") || strings.ToLower(e) != e || len(e) < 2 {
				errs = append(errs, fmt.Errorf("%s: extension %q is not lower case with its dot", l.Name, e))
			}
			if len(r.byExt[e]) == 0 {
				r.exts = append(r.exts, e)
			}
			r.byExt[e] = append(r.byExt[e], l)
		}
	}
	for _, e := range r.exts {
		fallback := 0
		for _, l := range r.byExt[e] {
			if l.Detect == nil {
				fallback++
			}
		}
		if fallback > 1 {
			errs = append(errs, fmt.Errorf("%d languages read %s files without a Detect to tell them apart", fallback, e))
		}
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return r, nil
}

// Languages returns the registered languages, in order.
func (r *Registry) Languages() []*Language { return r.langs }

// Extensions returns every registered extension once, in the order of
// the languages.
func (r *Registry) Extensions() []string { return r.exts }

// Ext returns the extension of a file name as the registry knows
// extensions: lower case, with its dot.
func Ext(name string) string { return strings.ToLower(filepath.Ext(name)) }

// Reads reports whether some language reads files of ext (as Ext gives
// it).
func (r *Registry) Reads(ext string) bool { return len(r.byExt[ext]) > 0 }

// Language returns the language of a file: the languages of its
// extension (Ext), and among several, the detection step: the first
// whose Detect claims src, else the one without Detect. nil when no
// language reads the extension, or none of several claims the file.
func (r *Registry) Language(name string, src []byte) *Language {
	var fallback *Language
	for _, l := range r.byExt[Ext(name)] {
		if l.Detect == nil {
			fallback = l
		} else if l.Detect(src) {
			return l
		}
	}
	return fallback
}
