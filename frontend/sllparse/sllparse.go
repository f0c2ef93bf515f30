// Package sllparse holds the fast first try of the two-stage parse every
// ANTLR frontend uses: an SLL-prediction parse, which decides most choices from
// the cached DFA without full-context lookahead and gives up at the first
// syntax error without reporting it. Only when it gives up does the
// frontend parse the tokens again, with a fresh parser in full LL mode
// with error recovery, which reports the errors. On an unambiguous
// grammar a successful SLL parse is the LL parse.
package sllparse

import (
	"errors"

	"github.com/antlr4-go/antlr/v4"
)

// Try configures p for the first stage (SLL prediction, giving up at the
// first syntax error) and runs start (p's start rule). ok is false when
// the stage gave up; p must not be used again then (a
// parser that bailed out keeps state that changes its error recovery).
func Try[T any](p antlr.Parser, start func() T) (tree T, ok bool) {
	p.RemoveErrorListeners()
	p.GetInterpreter().SetPredictionMode(antlr.PredictionModeSLL)
	p.SetErrorHandler(bail{antlr.NewDefaultErrorStrategy()})
	defer func() {
		if r := recover(); r != nil {
			if r != errBail {
				panic(r)
			}
			var zero T
			tree, ok = zero, false
		}
	}()
	return start(), true
}

// errBail is what bail panics with.
var errBail = errors.New("sllparse: SLL parse gave up")

// bail gives up at the first syntax error by panicking with errBail.
// antlr's own BailErrorStrategy cannot serve: in the Go runtime it records
// a ParseCancellationException whose methods panic when the generated
// code reports it.
type bail struct{ *antlr.DefaultErrorStrategy }

func (bail) ReportError(antlr.Parser, antlr.RecognitionException) { panic(errBail) }
func (bail) Recover(antlr.Parser, antlr.RecognitionException)     { panic(errBail) }
func (bail) RecoverInline(antlr.Parser) antlr.Token               { panic(errBail) }
func (bail) Sync(antlr.Parser)                                    {}
