package golden

import (
	"fmt"
	"strings"
)

// Sections names the in/ and out/ sections a case may have: one name per
// kind of content, the same in every suite (docs/testing.md lists what
// each holds). Source files (prog.json, a.gen, in.ir, lib/x.vvm) and the
// mock effects (llm.json, tools.json) are named as files, outside in/ and
// out/. A case with another in/ or out/ name fails, so names cannot
// drift apart again.
var Sections = map[string]string{
	"in/stdin":  "the standard input (channel 2 on the Forge Machine)",
	"in/limits": "the machine of a Genesis run: memory and stack, as forge exec takes them",
	"in/config": "the Forge Machine's settings for a run of Forge assembly",

	"out/stdout":     "what the program wrote on standard output (channel 0)",
	"out/stderr":     "what the program wrote on standard error (channel 1)",
	"out/fault":      "the fault a Genesis run must stop with",
	"out/result":     "how a run ended: the machine's stops, or an agent run's result JSON",
	"out/errors":     "the rendered diagnostics (errors and warnings), as genesisc prints them",
	"out/ast":        "the syntax tree a frontend parsed",
	"out/typed":      "the checked program's types",
	"out/ir":         "the IR as lowered (-O0), or an IR module printed back",
	"out/ir.O2":      "the IR after the -O2 pipeline",
	"out/asm":        "the Forge assembly the backend emits at -O2",
	"out/disasm":     "a program disassembled",
	"out/hex":        "a program's encoding, in hex",
	"out/trace":      "an agent run's trace",
	"out/journal":    "an agent run's journal (its run id replaced by RUN-ID)",
	"out/narration":  "what an agent run narrated (--narrate)",
	"out/html":       "a trace's page (genesisc trace --html) between <body> and its script",
	"out/transcript": "a command-line session: commands, outputs and exit statuses",
	"out/run":        "the log of an execution plan's run in the plan interpreter",
	"out/runs":       "the runs of a corpus of VVM programs",
	"out/summary":    "what a corpus's compile reports, one line per program",
	"out/formatted":  "the source file as genesisc fmt formats it",
}

// sectionPrefixes are the families of names with a suffix: the IR right
// after pass P (out/ir.after-P).
var sectionPrefixes = []string{"out/ir.after-"}

// retired are the names of inputs from before the names were unified,
// which are not file names either.
var retired = map[string]string{"stdin": "in/stdin", "config": "in/config"}

// CheckSectionName returns an error when name is an in/ or out/ section
// that Sections does not list, or a retired name.
func CheckSectionName(name string) error {
	if to, ok := retired[name]; ok {
		return fmt.Errorf("section %s is now %s (scripts/rename-sections.sh)", name, to)
	}
	if !strings.HasPrefix(name, "in/") && !strings.HasPrefix(name, "out/") {
		return nil
	}
	if _, ok := Sections[name]; ok {
		return nil
	}
	for _, p := range sectionPrefixes {
		if strings.HasPrefix(name, p) && len(name) > len(p) {
			return nil
		}
	}
	return fmt.Errorf("section %s has no known name (docs/testing.md lists them)", name)
}
