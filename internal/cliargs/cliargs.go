// Package cliargs holds what the two commands, genesisc and forge, share
// about their command lines: flags written after a command's arguments,
// and the version they answer --version with.
package cliargs

import (
	"runtime/debug"
	"strings"

	"github.com/urfave/cli/v2"
)

// Reorder returns the command line args (args[0] the program's name) with
// the flags of the command it names moved in front of that command's
// arguments, so that `genesisc run prog.json --llm mock:x.json` means
// `genesisc run --llm mock:x.json prog.json`: urfave/cli v2 stops reading
// flags at the first argument and would take the rest as arguments.
//
// The rules (docs/decisions.md, "Command lines and model aliases"):
//   - a token after a literal "--" is an argument, never a flag; the "--"
//     is kept in front of the arguments so that one starting with "-"
//     stays an argument;
//   - "-" alone is an argument (standard input, by convention);
//   - a flag the command declares as taking a value, written without
//     "=VALUE", takes the next token as its value whatever it looks like
//     (`-o prog.json`, `--max-cost -1`);
//   - a flag the command does not declare is moved too, and left for the
//     parser to refuse by name;
//   - with --help (-h) the arguments are dropped: the command's help is
//     printed whatever they are;
//   - a command with subcommands (genesisc cache) is followed into the
//     subcommand named; an unknown command leaves args as they are.
//
// Flags keep their relative order, and so do arguments, so a repeated
// flag (--input) is read in the order written. A flag that takes a value
// but ends the command line is an error (*MissingValue): moved in front
// of the arguments it would take the first of them as its value.
func Reorder(app *cli.App, args []string) ([]string, error) {
	if len(args) < 2 {
		return args, nil
	}
	out := append([]string(nil), args[:1]...)
	rest := args[1:]
	cmds := app.Commands
	for {
		// Flags before the command name belong to the level above; they
		// are all booleans (--help, --version) in both commands.
		i := 0
		for i < len(rest) && strings.HasPrefix(rest[i], "-") && rest[i] != "-" && rest[i] != "--" {
			i++
		}
		out = append(out, rest[:i]...)
		rest = rest[i:]
		if len(rest) == 0 || rest[0] == "--" {
			return append(out, rest...), nil
		}
		cmd := find(cmds, rest[0])
		if cmd == nil {
			return append(out, rest...), nil
		}
		out = append(out, rest[0])
		rest = rest[1:]
		if len(cmd.Subcommands) > 0 {
			cmds = cmd.Subcommands
			continue
		}
		more, err := reorder(cmd.Flags, rest)
		if err != nil {
			err.Command = cmd.Name
			return nil, err
		}
		return append(out, more...), nil
	}
}

// MissingValue is Reorder's error for a flag that takes a value but ends
// the command line.
type MissingValue struct {
	Command string // the command's name
	Flag    string // the flag as written
}

func (e *MissingValue) Error() string { return "flag " + e.Flag + " needs a value" }

// find returns the command called name (or one of its aliases), or nil.
func find(cmds []*cli.Command, name string) *cli.Command {
	for _, c := range cmds {
		if c.HasName(name) {
			return c
		}
	}
	return nil
}

// valueTaker is implemented by the flags of urfave/cli v2: a BoolFlag
// takes no value, the others do.
type valueTaker interface{ TakesValue() bool }

// reorder moves the flags of rest, the tokens after a command's name, in
// front of its arguments.
func reorder(flags []cli.Flag, rest []string) ([]string, *MissingValue) {
	takes := map[string]bool{"help": false, "h": false}
	for _, f := range flags {
		v := true
		if vt, ok := f.(valueTaker); ok {
			v = vt.TakesValue()
		}
		for _, n := range f.Names() {
			takes[n] = v
		}
	}
	var flagToks, argToks []string
	dashdash := false
	for i := 0; i < len(rest); i++ {
		tok := rest[i]
		if tok == "--" {
			dashdash = true
			argToks = append(argToks, rest[i+1:]...)
			break
		}
		if !strings.HasPrefix(tok, "-") || tok == "-" {
			argToks = append(argToks, tok)
			continue
		}
		flagToks = append(flagToks, tok)
		name := strings.TrimLeft(tok, "-")
		if strings.Contains(name, "=") {
			continue
		}
		if takes[name] {
			if i+1 == len(rest) {
				return nil, &MissingValue{Flag: tok}
			}
			i++
			flagToks = append(flagToks, rest[i])
		}
	}
	out := flagToks
	for _, f := range flagToks {
		if f == "-h" || f == "--help" || f == "-help" || f == "--h" {
			// urfave/cli reads the arguments after --help as a help
			// topic ("No help topic for 'prog.json'"): the command's
			// help is what was asked for.
			return out, nil
		}
	}
	if len(argToks) > 0 || dashdash {
		needDash := dashdash
		for _, a := range argToks {
			if strings.HasPrefix(a, "-") && a != "-" {
				needDash = true
			}
		}
		if needDash {
			out = append(out, "--")
		}
		out = append(out, argToks...)
	}
	return out, nil
}

// Version returns the version of the running binary, read from the build
// information the Go toolchain embeds (debug.ReadBuildInfo): the main
// module's version when the binary was built from a released module
// (`go install …@v1.2.0`: "v1.2.0"), else "devel" followed by the
// version control revision the build recorded (its first 12 hex digits,
// "+dirty" when the tree had uncommitted changes) and the commit time,
// else "devel". The same binary always answers the same.
func Version() string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "devel"
	}
	return versionOf(info)
}

// versionOf is Version for the build information info.
func versionOf(info *debug.BuildInfo) string {
	if v := info.Main.Version; v != "" && v != "(devel)" {
		return v
	}
	var rev, at string
	dirty := false
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.time":
			at = s.Value
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	if rev == "" {
		return "devel"
	}
	if len(rev) > 12 {
		rev = rev[:12]
	}
	v := "devel " + rev
	if dirty {
		v += "+dirty"
	}
	if at != "" {
		v += " " + at
	}
	return v
}
