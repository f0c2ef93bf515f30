// Command forge is the Forge Machine: it runs Forge programs (.frgp),
// journals and replays runs, signs and checks execution proofs, and
// assembles, disassembles, verifies, hashes and links programs.
//
// See docs/forge-cli.md, or run forge --help and forge COMMAND --help.
package main

import "os"

func main() { os.Exit(run(os.Args, os.Stdin, os.Stdout, os.Stderr)) }
