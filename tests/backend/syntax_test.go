package backend_test

// The backends assemble inline assembly with the text syntax that
// frontend/fasm registers in forge/asm (docs/decisions.md, "The in-memory
// assembler (issue 15.1)"); a program that compiles links it, as the
// compiler does.
import _ "github.com/genesis-toolchain/genesis/frontend/fasm"
