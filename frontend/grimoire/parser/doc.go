// Package parser is the ANTLR parser of Grimoire spells, generated from
// Grimoire.g4 by scripts/antlr-generate.sh (make generate); only this file
// and predicates.go are written by hand. Package grimoire is its one user:
// it feeds the parser through its indentation-aware token source, which
// produces the NEWLINE, INDENT and DEDENT tokens the grammar expects.
package parser
