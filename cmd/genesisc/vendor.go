package main

import (
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/genesis-toolchain/genesis/backend/golang"
	"github.com/genesis-toolchain/genesis/runtime/export"
)

// toolchainModule is the toolchain's own module path: a generated package
// written inside it links the runtime package where it is.
const toolchainModule = "github.com/genesis-toolchain/genesis"

// runtimeCommand is `genesisc runtime -o DIR`: it writes (or updates) a
// copy of the runtime package inside an app's module.
func runtimeCommand(stdout, stderr io.Writer) *cli.Command {
	return &cli.Command{
		Name:      "runtime",
		Usage:     "write or update the runtime package inside a Go module, for generated packages to import",
		UsageText: "genesisc runtime [-o DIR]",
		Description: "Writes the runtime package that go-target agent programs link into DIR\n" +
			"(default: " + export.DefaultDir + " under the root of the Go module\n" +
			"of the current directory), raises the module's go.mod to the module\n" +
			"versions the runtime was tested with, and prints the copy's import path.\n" +
			"Run it after upgrading genesisc, then rebuild the generated packages:\n" +
			"`genesisc build --target go` does the same for the copy it uses.\n" +
			"A directory holding files that genesisc did not write is refused.",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "o", Usage: "the copy's directory `DIR`, inside a Go module"},
		},
		Action: func(c *cli.Context) error {
			if c.NArg() > 0 {
				fmt.Fprintf(stderr, "genesisc runtime: unexpected argument %q (the directory is given with -o)\n", c.Args().First())
				return exitError{exitUsage}
			}
			dir := c.String("o")
			start := dir
			if start == "" {
				start = "."
			}
			mod, ok, err := export.FindModule(start)
			if err != nil {
				fmt.Fprintf(stderr, "genesisc runtime: %v\n", err)
				return exitError{exitDiag}
			}
			if !ok {
				fmt.Fprintf(stderr, "genesisc runtime: %s is not inside a Go module (no go.mod in it or above it; run `go mod init` first)\n", start)
				return exitError{exitDiag}
			}
			if dir == "" {
				dir = filepath.Join(mod.Root, filepath.FromSlash(export.DefaultDir))
			}
			rep, err := export.Export(mod, dir, "")
			if err != nil {
				fmt.Fprintf(stderr, "genesisc runtime: %v\n", err)
				return exitError{exitDiag}
			}
			reportExport(stderr, "genesisc runtime", rep)
			fmt.Fprintln(stdout, rep.ImportPath)
			return nil
		},
	}
}

// runtimeFor decides which runtime package a go-target build whose package
// goes to outDir links: the toolchain's own (import path "", no copy)
// when outDir is in no module or in the toolchain's, else a copy in the
// output's module, at flagDir or export.DefaultDir. It returns the
// module, the copy's directory and its import path.
func runtimeFor(outDir, flagDir string) (mod export.Module, dir, imp string, err error) {
	mod, ok, err := export.FindModule(outDir)
	if err != nil {
		return mod, "", "", err
	}
	if !ok || mod.Path == toolchainModule {
		if flagDir != "" {
			return mod, "", "", fmt.Errorf("--runtime: %s is not inside an app's Go module (a copy of the runtime goes into the module that imports it)", outDir)
		}
		return mod, "", "", nil
	}
	dir = flagDir
	if dir == "" {
		dir = filepath.Join(mod.Root, filepath.FromSlash(export.DefaultDir))
	}
	imp, err = mod.ImportPath(dir)
	if err != nil {
		return mod, "", "", fmt.Errorf("--runtime: %v", err)
	}
	if imp == golang.RuntimePath {
		return mod, "", "", nil
	}
	return mod, dir, imp, nil
}

// exportRuntime writes the runtime copy a build chose (runtimeFor) and
// records the generated package in outDir as its user.
func exportRuntime(mod export.Module, dir, outDir string, stderr io.Writer) error {
	prog, err := mod.ImportPath(outDir)
	if err != nil {
		return err
	}
	rep, err := export.Export(mod, dir, prog)
	if err != nil {
		return err
	}
	reportExport(stderr, "genesisc build", rep)
	return nil
}

// reportExport tells standard error what an export changed; an export
// that changed nothing says nothing.
func reportExport(stderr io.Writer, cmd string, rep *export.Report) {
	switch {
	case rep.Replaced != "":
		fmt.Fprintf(stderr, "%s: updated the runtime in %s (%s, was %s)\n", cmd, rep.Dir, short(rep.Runtime), short(rep.Replaced))
		if len(rep.Stale) > 0 {
			fmt.Fprintf(stderr, "%s: rebuild the packages built against the old runtime: %s\n", cmd, strings.Join(rep.Stale, ", "))
		}
	case rep.Wrote:
		fmt.Fprintf(stderr, "%s: wrote the runtime into %s (import %q)\n", cmd, rep.Dir, rep.ImportPath)
	}
	if len(rep.Required) > 0 {
		fmt.Fprintf(stderr, "%s: go.mod now requires the runtime's %d modules at the versions it was tested with; run `go mod tidy`\n", cmd, len(rep.Required))
	}
}

// short abbreviates a runtime hash for messages.
func short(hash string) string {
	if len(hash) > len("sha256:")+12 {
		return hash[:len("sha256:")+12]
	}
	return hash
}
