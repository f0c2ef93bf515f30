package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/genesis-toolchain/genesis/diag"
	"github.com/genesis-toolchain/genesis/format"
)

// fmtCommand is `genesisc fmt`: the formatter of package format over
// files, printing, listing, diffing, checking or rewriting them.
func fmtCommand(stdout, stderr io.Writer) *cli.Command {
	return &cli.Command{
		Name:      "fmt",
		Usage:     "format source files canonically",
		UsageText: "genesisc fmt [-w] [-l] [-d] [--check] FILE...",
		Description: "Formats each FILE in the canonical layout of its language (docs/fmt.md), told\n" +
			"by its extension: " + strings.Join(format.Languages(), ", ") + ".\n" +
			"Every comment is kept, formatting twice changes nothing, and the program\n" +
			"compiles to what it did.\n" +
			"Without flags the formatted files are printed on standard output.\n" +
			"  -w       rewrite the files whose formatting differs, in place (atomically)\n" +
			"  -l       list the files whose formatting differs\n" +
			"  -d       print the changes as a unified diff\n" +
			"  --check  exit 1 if any file's formatting differs, naming them on standard error\n" +
			"A file with errors is reported with the compiler's diagnostics and left as it is.\n" +
			"Exit status: 0 when every file was formatted (or already was); 1 when a file\n" +
			"has errors, cannot be read or written or is not of a language fmt formats, or\n" +
			"with --check, when a file's formatting differs; 2 when the command line is wrong.",
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "w", Usage: "rewrite the files in place instead of printing them"},
			&cli.BoolFlag{Name: "l", Usage: "list the files whose formatting differs instead of printing them"},
			&cli.BoolFlag{Name: "d", Usage: "print a unified diff of the changes instead of the files"},
			&cli.BoolFlag{Name: "check", Usage: "exit 1 if any file's formatting differs (nothing is written)"},
		},
		Action: func(c *cli.Context) error { return fmtFiles(c, stdout, stderr) },
	}
}

// fmtFiles formats the files of the command line one after the other;
// an error in one does not stop the others.
func fmtFiles(c *cli.Context, stdout, stderr io.Writer) error {
	names := c.Args().Slice()
	if len(names) == 0 {
		fmt.Fprintln(stderr, "genesisc fmt: no input files")
		return exitError{exitUsage}
	}
	write, list, diff, check := c.Bool("w"), c.Bool("l"), c.Bool("d"), c.Bool("check")
	if write && check {
		fmt.Fprintln(stderr, "genesisc fmt: -w and --check do not go together: --check writes nothing")
		return exitError{exitUsage}
	}
	failed := false
	for _, name := range names {
		src, err := os.ReadFile(name)
		if err != nil {
			fmt.Fprintf(stderr, "genesisc fmt: %v\n", err)
			failed = true
			continue
		}
		out, err := format.File(name, src)
		if err != nil {
			var se *format.SyntaxError
			if errors.As(err, &se) {
				fmt.Fprint(stderr, se.Diags.Render(diag.Sources{name: src}))
			} else {
				fmt.Fprintf(stderr, "genesisc fmt: %s: %v\n", name, err)
			}
			failed = true
			continue
		}
		changed := string(out) != string(src)
		if !write && !list && !diff && !check {
			stdout.Write(out)
			continue
		}
		if !changed {
			continue
		}
		if list {
			fmt.Fprintln(stdout, name)
		}
		if diff {
			fmt.Fprint(stdout, format.Diff(name+".orig", name, src, out))
		}
		if check {
			fmt.Fprintf(stderr, "%s: not formatted (genesisc fmt -w %s formats it)\n", name, name)
			failed = true
		}
		if write {
			if err := writeAtomically(name, out); err != nil {
				fmt.Fprintf(stderr, "genesisc fmt: %v\n", err)
				failed = true
			}
		}
	}
	if failed {
		return exitError{exitDiag}
	}
	return nil
}

// writeAtomically replaces the file name (the file a symbolic link names,
// if it is one) with data: written to a temporary file beside it with the
// file's permissions, then renamed over it, so that the file is never
// seen half written and an error leaves it as it was.
func writeAtomically(name string, data []byte) (err error) {
	path, err := filepath.EvalSymlinks(name)
	if err != nil {
		return err
	}
	info, err := os.Stat(path)
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".fmt-*")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	if _, err = tmp.Write(data); err != nil {
		return err
	}
	if err = tmp.Chmod(info.Mode().Perm()); err != nil {
		return err
	}
	if err = tmp.Sync(); err != nil {
		return err
	}
	if err = tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}
