// Command genesisc is the Genesis toolchain's ahead-of-time compiler.
package main

import "os"

func main() { os.Exit(run(os.Args, os.Stdout, os.Stderr)) }
