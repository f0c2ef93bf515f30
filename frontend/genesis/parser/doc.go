// Package parser is the ANTLR parser of Genesis, generated from Genesis.g4
// by scripts/antlr-generate.sh (make generate); only this file,
// predicates.go and the tests are written by hand. Package genesis is its
// one user.
package parser
