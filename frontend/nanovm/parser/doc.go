// Package parser is the ANTLR parser of nano-vm conditions, generated
// from Condition.g4 by scripts/antlr-generate.sh (make generate); only
// this file is written by hand. Package nanovm is its one user.
package parser
