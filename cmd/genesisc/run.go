package main

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/urfave/cli/v2"

	"github.com/genesis-toolchain/genesis/compiler"
	"github.com/genesis-toolchain/genesis/frontend/diag"
)

// Exit statuses.
const (
	exitOK    = 0
	exitDiag  = 1 // the input has errors
	exitUsage = 2 // the command line is wrong
)

// exitError carries an exit status out of a command action.
type exitError struct{ code int }

func (e exitError) Error() string { return fmt.Sprintf("exit %d", e.code) }

// run is the whole command: it parses args, runs the command, and returns
// the exit status. It writes only to stdout and stderr.
func run(args []string, stdout, stderr io.Writer) int {
	app := &cli.App{
		Name:      "genesisc",
		Usage:     "compile agent programs and Genesis ahead of time",
		UsageText: "genesisc COMMAND [flags] FILE...",
		Writer:    stdout,
		ErrWriter: stderr,
		Commands: []*cli.Command{
			{
				Name:      "build",
				Usage:     "compile FILEs into one program",
				UsageText: "genesisc build [-o OUT] [--target forge] [--emit asm] FILE...",
				Description: "Compiles the input files, chosen by extension (.fasm: Forge assembly), into a\n" +
					"Forge program (.frgp). --emit asm prints Forge assembly instead.",
				Flags: []cli.Flag{
					&cli.StringFlag{Name: "o", Usage: "write the output to `OUT` (default: the first input with the output's extension; - for stdout)"},
					&cli.StringFlag{Name: "target", Value: "forge", Usage: "the backend: forge"},
					&cli.StringFlag{Name: "emit", Usage: "print an intermediate form instead of the binary: asm"},
				},
				Action: func(c *cli.Context) error { return build(c, stdout, stderr) },
			},
			{
				Name:      "check",
				Usage:     "report diagnostics without writing anything",
				UsageText: "genesisc check FILE...",
				Action: func(c *cli.Context) error {
					_, err := compile(c, compiler.Options{}, stderr)
					return err
				},
			},
		},
		ExitErrHandler: func(*cli.Context, error) {},
	}
	err := app.Run(args)
	var ee exitError
	switch {
	case err == nil:
		return exitOK
	case errors.As(err, &ee):
		return ee.code
	default:
		fmt.Fprintf(stderr, "genesisc: %v\n", err)
		return exitUsage
	}
}

// compile reads and compiles the command's file arguments, printing
// diagnostics to stderr.
func compile(c *cli.Context, opts compiler.Options, stderr io.Writer) (*compiler.Output, error) {
	names := c.Args().Slice()
	if len(names) == 0 {
		fmt.Fprintf(stderr, "genesisc %s: no input files\n", c.Command.Name)
		return nil, exitError{exitUsage}
	}
	srcs, diags := compiler.ReadSources(names)
	var out *compiler.Output
	if !diags.HasErrors() {
		var more diag.List
		out, more = compiler.Build(srcs, opts)
		diags = append(diags, more...)
	}
	fmt.Fprint(stderr, diags.Render(compiler.SourceMap(srcs)))
	if diags.HasErrors() {
		return nil, exitError{exitDiag}
	}
	return out, nil
}

func build(c *cli.Context, stdout, stderr io.Writer) error {
	opts := compiler.Options{Target: c.String("target"), Emit: compiler.Emit(c.String("emit"))}
	switch opts.Emit {
	case compiler.EmitBinary, compiler.EmitAsm:
	default:
		fmt.Fprintf(stderr, "genesisc build: unknown --emit %q (supported: asm)\n", opts.Emit)
		return exitError{exitUsage}
	}
	if opts.Target != "forge" {
		fmt.Fprintf(stderr, "genesisc build: unknown --target %q (supported: forge)\n", opts.Target)
		return exitError{exitUsage}
	}
	out, err := compile(c, opts, stderr)
	if err != nil {
		return err
	}
	data := []byte(out.Text)
	if opts.Emit == compiler.EmitBinary {
		data = out.Program.Encode()
	}
	dest := c.String("o")
	if dest == "" {
		if opts.Emit != compiler.EmitBinary {
			dest = "-"
		} else {
			dest = compiler.OutputName(c.Args().First(), opts.Emit)
		}
	}
	if dest == "-" {
		_, err := stdout.Write(data)
		return err
	}
	if err := os.WriteFile(dest, data, 0o644); err != nil {
		fmt.Fprintf(stderr, "genesisc build: %v\n", err)
		return exitError{exitDiag}
	}
	return nil
}
