package cliargs

import (
	"runtime/debug"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/urfave/cli/v2"
)

func testApp() *cli.App {
	return &cli.App{
		Name: "tool",
		Commands: []*cli.Command{
			{Name: "run", Flags: []cli.Flag{
				&cli.StringFlag{Name: "llm"},
				&cli.StringSliceFlag{Name: "input"},
				&cli.BoolFlag{Name: "narrate"},
				&cli.StringFlag{Name: "o", Aliases: []string{"out"}},
				&cli.StringFlag{Name: "max-cost"},
			}},
			{Name: "cache", Subcommands: []*cli.Command{
				{Name: "clean", Flags: []cli.Flag{&cli.BoolFlag{Name: "all"}}},
			}},
		},
	}
}

func TestReorder(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		// Flags after the file move in front of it, in order.
		{"tool run prog.json --llm mock:x.json", "tool run --llm mock:x.json prog.json"},
		{"tool run prog.json --input a=1 --narrate --input b=2", "tool run --input a=1 --narrate --input b=2 prog.json"},
		// A value that looks like a file or a flag is still the value.
		{"tool run prog.json -o out.json", "tool run -o out.json prog.json"},
		{"tool run prog.json --out -x", "tool run --out -x prog.json"},
		{"tool run prog.json --max-cost -1", "tool run --max-cost -1 prog.json"},
		{"tool run prog.json --llm=mock:x.json", "tool run --llm=mock:x.json prog.json"},
		// A boolean flag takes no value.
		{"tool run --narrate prog.json", "tool run --narrate prog.json"},
		{"tool run prog.json --narrate other", "tool run --narrate prog.json other"},
		// After --, everything is an argument; -- stays.
		{"tool run prog.json -- --llm x", "tool run -- prog.json --llm x"},
		{"tool run --llm x -- -file.json", "tool run --llm x -- -file.json"},
		{"tool run -", "tool run -"},
		// Unknown flags are moved for the parser to refuse.
		{"tool run prog.json --bogus", "tool run --bogus prog.json"},
		// --help drops the arguments (urfave/cli would read a help topic).
		{"tool run prog.json --help", "tool run --help"},
		{"tool run -h prog.json", "tool run -h"},
		// Subcommands, global flags, unknown commands.
		{"tool cache clean x --all", "tool cache clean --all x"},
		{"tool --help run", "tool --help run"},
		{"tool frob a --b", "tool frob a --b"},
		{"tool", "tool"},
	} {
		got, err := Reorder(testApp(), strings.Fields(tc.in))
		if err != nil {
			t.Errorf("Reorder(%q): %v", tc.in, err)
			continue
		}
		if diff := cmp.Diff(strings.Fields(tc.want), got); diff != "" {
			t.Errorf("Reorder(%q) (-want +got):\n%s", tc.in, diff)
		}
	}
}

// A flag that takes a value cannot end the command line: moved in front
// of the file it would take the file as its value.
func TestReorderMissingValue(t *testing.T) {
	for _, in := range []string{"tool run prog.json --llm", "tool run --llm", "tool run a -- b --llm x --input"} {
		_, err := Reorder(testApp(), strings.Fields(in))
		mv, ok := err.(*MissingValue)
		switch {
		case strings.HasSuffix(in, "--llm x --input"):
			// after --, nothing is a flag
			if err != nil {
				t.Errorf("Reorder(%q): %v", in, err)
			}
		case !ok || mv.Command != "run" || mv.Flag != "--llm":
			t.Errorf("Reorder(%q): error %v, want --llm of run needs a value", in, err)
		}
	}
}

func TestVersionOf(t *testing.T) {
	for _, tc := range []struct {
		info *debug.BuildInfo
		want string
	}{
		{&debug.BuildInfo{Main: debug.Module{Version: "v1.2.0"}}, "v1.2.0"},
		{&debug.BuildInfo{Main: debug.Module{Version: "(devel)"}}, "devel"},
		{&debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: []debug.BuildSetting{
			{Key: "vcs.revision", Value: "0123456789abcdef0123"},
			{Key: "vcs.time", Value: "2026-11-27T01:00:00Z"},
			{Key: "vcs.modified", Value: "true"},
		}}, "devel 0123456789ab+dirty 2026-11-27T01:00:00Z"},
		{&debug.BuildInfo{Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "abc"}}}, "devel abc"},
	} {
		if got := versionOf(tc.info); got != tc.want {
			t.Errorf("versionOf(%+v) = %q, want %q", tc.info, got, tc.want)
		}
	}
}
