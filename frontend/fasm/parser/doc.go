// Package parser is the ANTLR parser of Forge assembly, generated from
// FASM.g4 by scripts/antlr-generate.sh (make generate); only this file and
// the tests are written by hand. Package fasm is its one user.
package parser
