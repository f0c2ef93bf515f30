// Package parser is the ANTLR parser of VVM, generated from VVM.g4 by
// scripts/antlr-generate.sh (make generate); only this file is written by
// hand. Package vvm is its one user: it puts its indentation-aware token
// source (frontend/vvm/lex.go) between the lexer and the parser.
package parser
