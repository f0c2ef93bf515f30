package main

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"io"

	"github.com/urfave/cli/v2"

	"github.com/genesis-toolchain/genesis/diag"
	"github.com/genesis-toolchain/genesis/forge/bytecode"
	"github.com/genesis-toolchain/genesis/forge/link"
	"github.com/genesis-toolchain/genesis/frontend/fasm"
)

func (e *env) asmCommand() *cli.Command {
	return &cli.Command{
		Name:      "asm",
		Usage:     "assemble Forge assembly into a program",
		UsageText: "forge asm [-o OUT.frgp] IN.fasm",
		Description: "Assembles IN.fasm (see docs/fasm.md) into OUT.frgp, by default IN with the\n" +
			"extension .frgp. Errors are reported with the source line and a caret; exit status 1.",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "o", Usage: "write the program to `OUT.frgp`"},
		},
		Action: func(c *cli.Context) error {
			args, err := e.args(c, 1, 1, "one source file IN.fasm")
			if err != nil {
				return err
			}
			src, err := e.readFile(args[0])
			if err != nil {
				return err
			}
			p, diags := fasm.Assemble(args[0], src)
			io.WriteString(e.stderr, diags.Render(diag.Sources{args[0]: src}))
			if diags.HasErrors() {
				return exitError{exitFail}
			}
			if p == nil {
				return e.fail(exitFail, "internal error: the assembler reported nothing and produced nothing")
			}
			if err := p.Verify(); err != nil {
				return e.fail(exitFail, "internal error: the assembled program does not verify: %v", err)
			}
			out := c.String("o")
			if out == "" {
				out = outputName(args[0], ".frgp")
			}
			return e.writeFile(out, p.Encode())
		},
	}
}

func (e *env) disasmCommand() *cli.Command {
	return &cli.Command{
		Name:        "disasm",
		Usage:       "print a program as Forge assembly",
		UsageText:   "forge disasm [-o OUT.fasm] IN.frgp",
		Description: "Writes IN.frgp as assembly to standard output, or to OUT.fasm; 'forge asm' turns it\nback into the same program.",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "o", Usage: "write the assembly to `OUT.fasm`"},
		},
		Action: func(c *cli.Context) error {
			args, err := e.args(c, 1, 1, "one program IN.frgp")
			if err != nil {
				return err
			}
			p, err := e.loadProgram(args[0])
			if err != nil {
				return err
			}
			text := fasm.Disassemble(p)
			if out := c.String("o"); out != "" {
				return e.writeFile(out, []byte(text))
			}
			_, err = io.WriteString(e.stdout, text)
			return err
		},
	}
}

func (e *env) verifyCommand() *cli.Command {
	return &cli.Command{
		Name:      "verify",
		Usage:     "check that programs load",
		UsageText: "forge verify PROG.frgp...",
		Description: "Checks each file as a loader does (canonical encoding, known and canonical\n" +
			"instructions, jump targets, entry, symbols, imports, relocations) and prints\n" +
			"'PROG: ok (N instructions, M bytes data, sha256 HASH)' or the problem. A program\n" +
			"that imports symbols is valid but must be linked before it runs. Exit status 2 if\n" +
			"any file fails.",
		Action: func(c *cli.Context) error {
			args, err := e.args(c, 1, -1, "at least one program")
			if err != nil {
				return err
			}
			status := exitOK
			for _, path := range args {
				p, err := e.loadProgram(path)
				if err != nil {
					status = exitUsage
					continue
				}
				insts, _, _ := bytecode.Insts(p.Code) // verified: cannot fail
				line := fmt.Sprintf("%s: ok (%s, %d bytes data, sha256 %x", path, count(len(insts), "instruction"), len(p.Data), p.Hash())
				if n := len(p.Imports); n > 0 {
					line += fmt.Sprintf("; imports from %s: link before running", count(n, "program"))
				}
				fmt.Fprintln(e.stdout, line+")")
			}
			if status != exitOK {
				return exitError{status}
			}
			return nil
		},
	}
}

func (e *env) hashCommand() *cli.Command {
	return &cli.Command{
		Name:      "hash",
		Usage:     "print a program's identity: the sha256 of its canonical file",
		UsageText: "forge hash PROG.frgp",
		Description: "Prints the sha256 (hex) of PROG.frgp, which is what imports, journals and proofs\n" +
			"name a program by. The file must be a valid, canonical FRGP file (exit status 2\n" +
			"otherwise): a program has exactly one encoding, so its hash is its identity.",
		Action: func(c *cli.Context) error {
			args, err := e.args(c, 1, 1, "one program PROG.frgp")
			if err != nil {
				return err
			}
			b, err := e.readFile(args[0])
			if err != nil {
				return err
			}
			p, err := bytecode.Decode(b)
			if err != nil {
				return e.fail(exitUsage, "%s: %v", args[0], err)
			}
			if !bytes.Equal(p.Encode(), b) {
				// Decode accepts only canonical files; this guards the
				// invariant the hash depends on.
				return e.fail(exitUsage, "%s: not in canonical form", args[0])
			}
			_, err = fmt.Fprintf(e.stdout, "%x\n", sha256.Sum256(b))
			return err
		},
	}
}

func (e *env) linkCommand() *cli.Command {
	return &cli.Command{
		Name:      "link",
		Usage:     "resolve a program's imports into one self-contained program",
		UsageText: "forge link -o OUT.frgp MAIN.frgp DEP.frgp...",
		Description: "Links MAIN.frgp with the programs it imports from, named by the sha256 of their\n" +
			"files (see 'forge hash'). Every import must be satisfied by a DEP (dependencies may\n" +
			"import from each other), and every DEP must be imported. The result runs MAIN's\n" +
			"entry with code MAIN ++ DEPs and data MAIN ++ DEPs (DEPs in hash order), has no\n" +
			"imports, and can itself be linked again. Errors: exit status 1.",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "o", Usage: "write the linked program to `OUT.frgp`"},
		},
		Action: func(c *cli.Context) error {
			args, err := e.args(c, 1, -1, "MAIN.frgp and its dependencies")
			if err != nil {
				return err
			}
			out := c.String("o")
			if out == "" {
				return e.usage(c, "-o OUT.frgp is required")
			}
			objs := make([]link.Object, len(args))
			for i, path := range args {
				p, err := e.loadProgram(path)
				if err != nil {
					return err
				}
				objs[i] = link.Object{Name: path, Program: p}
			}
			p, err := link.Link(objs[0], objs[1:])
			if err != nil {
				return e.fail(exitFail, "link: %v", err)
			}
			return e.writeFile(out, p.Encode())
		},
	}
}

// count spells n things: "1 instruction", "2 instructions".
func count(n int, thing string) string {
	if n == 1 {
		return "1 " + thing
	}
	return fmt.Sprintf("%d %ss", n, thing)
}
