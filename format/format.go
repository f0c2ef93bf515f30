// Package format is the formatter of the toolchain's source languages
// (`genesisc fmt`): it rewrites a source file in the canonical layout of
// its language, keeping every comment and every token, so that the
// formatted program compiles to what the original does. docs/fmt.md
// states the layout of each language; docs/decisions.md ("The formatter
// (issue 18)") why it is so.
//
// Every formatter of the package has the contract of Formatter: it works
// from the token stream of the language's frontend (and, for Genesis, its
// parse tree), changes only the blank space between tokens and comments,
// and checks its own output before returning it (the tokens and the
// comments are the same, and the output parses) so that a bug of the
// formatter is an error, never a changed program.
package format

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/genesis-toolchain/genesis/diag"
	"github.com/genesis-toolchain/genesis/frontend/grimoire"
)

// Formatter formats one source file of a language: name is the file's
// name as diagnostics give it, src its bytes. It returns the formatted
// file, which ends with exactly one line break (an empty file stays
// empty); formatting it again returns it unchanged. A file that the frontend does not parse, or whose
// parse reports an error, gives a *SyntaxError and no output. A
// Formatter never panics, whatever src holds.
type Formatter func(name string, src []byte) ([]byte, error)

// formatters is the dispatch of File by extension (lower case), in the
// order docs/fmt.md lists them: one line a language. A nil Formatter is
// a language whose formatter does not exist yet (File says so); giving
// it its Formatter is all it takes to format it, in File, Extensions,
// Languages and the help of genesisc fmt.
var formatters = []struct {
	ext, lang string
	fn        Formatter
}{
	{".gen", "Genesis", Genesis},
	{".vvm", "VVM", VVM},
	{".spell", "Grimoire", spellFile},
}

// spellFile is Grimoire with its errors in the shapes of the other
// formatters: the frontend's diagnostics as a *SyntaxError, the G999 of
// its self-check as an error that is ErrInternal.
func spellFile(name string, src []byte) ([]byte, error) {
	out, err := Grimoire(name, src)
	var ds diag.List
	if err == nil || !errors.As(err, &ds) {
		return out, err
	}
	for _, d := range ds {
		if d.Code == grimoire.CodeInternal {
			return nil, internalErrorf(name, "%s", d.Msg)
		}
	}
	if serr := syntaxErrorOf(ds); serr != nil {
		return nil, serr
	}
	return nil, err
}

// SyntaxError is the error of a file that cannot be formatted because
// its frontend reports errors: Diags are the frontend's diagnostics, in
// source order, which diag.List.Render shows with the source line.
type SyntaxError struct {
	Diags diag.List
}

func (e *SyntaxError) Error() string { return e.Diags.Error() }

// ErrUnsupported is the error of a file that no formatter reads: an
// unknown extension, or a language without a formatter yet.
var ErrUnsupported = errors.New("format: unsupported file")

// File formats src, the contents of the file name, with the formatter of
// its extension (Extensions). A file of another extension gives an error
// that is ErrUnsupported (errors.Is) and says which extensions are.
func File(name string, src []byte) ([]byte, error) {
	ext := strings.ToLower(filepath.Ext(name))
	for _, f := range formatters {
		if f.ext != ext {
			continue
		}
		if f.fn == nil {
			return nil, unsupported(fmt.Sprintf("formatting %s (%s) is not supported yet", f.lang, f.ext))
		}
		return f.fn(name, src)
	}
	if ext == "" {
		return nil, unsupported(fmt.Sprintf("no extension to tell the language by (fmt formats %s)", strings.Join(Extensions(), ", ")))
	}
	return nil, unsupported(fmt.Sprintf("no formatter for %s files (fmt formats %s)", ext, strings.Join(Extensions(), ", ")))
}

// unsupported is an error that is ErrUnsupported.
type unsupported string

func (e unsupported) Error() string        { return string(e) }
func (e unsupported) Is(target error) bool { return target == ErrUnsupported }

// Extensions returns the extensions that File formats, in a fixed order.
func Extensions() []string {
	var exts []string
	for _, f := range formatters {
		if f.fn != nil {
			exts = append(exts, f.ext)
		}
	}
	return exts
}

// Languages returns the languages File formats, as "EXT (Name)", in the
// order of its table: for messages and help texts.
func Languages() []string {
	var langs []string
	for _, f := range formatters {
		if f.fn != nil {
			langs = append(langs, f.ext+" ("+f.lang+")")
		}
	}
	return langs
}

// syntaxErrorOf returns the error for diags when they hold an error: fmt
// formats only files whose parse is clean.
func syntaxErrorOf(diags diag.List) error {
	if !diags.HasErrors() {
		return nil
	}
	var errs diag.List
	for _, d := range diags {
		if d.Severity == diag.Error {
			errs = append(errs, d)
		}
	}
	return &SyntaxError{Diags: errs}
}

// ErrInternal is what the error of a bug of a formatter is (errors.Is):
// a panic, or an output that fails the formatter's own check. The file is
// then left as it is.
var ErrInternal = errors.New("internal formatter error")

// internalErrorf returns an error that is ErrInternal.
func internalErrorf(name, format string, args ...any) error {
	return fmt.Errorf("%s: %w: %s (please report it; the file is left as it is)", name, ErrInternal, fmt.Sprintf(format, args...))
}
