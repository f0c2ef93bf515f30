package planner

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/genesis-toolchain/genesis/diag"
	"github.com/genesis-toolchain/genesis/frontend"
	"github.com/genesis-toolchain/genesis/frontend/nanovm"
)

// The planner's own diagnostic codes (docs/planner.md). The compiler's
// checks come first; these are what only the planner knows: the tools
// the program may call and the run's input fields.
const (
	// CodeTool: a tool step calls a tool --tools-list does not name
	// (an error: the program could not run where it is meant to).
	CodeTool = "PL01"
	// CodeRef: a $reference names no input field, step or output_key
	// (a warning: nano-vm leaves it as written, so the prompt, argument
	// or condition reads the text "$name").
	CodeRef = "PL02"
	// CodeNotProgram: the answer is an execution plan or not an object
	// at all, not a nano-vm program (an error).
	CodeNotProgram = "PL03"
	// CodeTooLarge: the answer is larger than MaxAnswer (an error; it
	// is not compiled).
	CodeTooLarge = "PL04"
)

// webhookKeys are the input fields nano-vm adds when a suspended run
// resumes: always there to read.
var webhookKeys = []string{"__webhook__", "__webhook_source__"}

// lint checks what the compiler cannot know about a program that it
// decoded (it may have errors of its own): the tools it calls, against
// opts.Tools, and the names its $references read, against its steps,
// output_keys and opts.Context.
func lint(file string, src []byte, opts *Options) diag.List {
	prog, _ := nanovm.Check(frontend.File(file, src))
	if prog == nil {
		return nil
	}
	var diags diag.List
	if opts.Tools != nil {
		for _, s := range prog.AllSteps() {
			if s.Type != nanovm.Tool || s.Tool == "" || slices.Contains(opts.Tools, s.Tool) {
				continue
			}
			n := s.Field("tool")
			msg := fmt.Sprintf("%s: step %q calls tool %q, which is not one of the tools the program may call", n.Path, s.ID, s.Tool)
			if len(opts.Tools) == 0 {
				msg += " (none: --tools-list is empty)"
			} else {
				msg += " (" + strings.Join(opts.Tools, ", ") + ")"
				if c := diag.Closest(s.Tool, opts.Tools); c != "" {
					msg += fmt.Sprintf("; did you mean %q?", c)
				}
			}
			diags = append(diags, diag.Diagnostic{Pos: n.Pos, Severity: diag.Error, Code: CodeTool, Msg: msg})
		}
	}
	diags = append(diags, lintRefs(prog, opts)...)
	diags.Sort()
	return diags
}

// lintRefs warns about $references whose root names nothing the run
// will have. With opts.Context the input fields are known, so any other
// name is a mistake; without it an unknown name may be an input field,
// and only one a few edits from a step id or output_key — a misspelling
// — is reported.
func lintRefs(prog *nanovm.Program, opts *Options) diag.List {
	var produced []string // step ids and output_keys, sorted, unique
	for _, s := range prog.AllSteps() {
		produced = append(produced, s.ID)
		if s.OutputKey != "" {
			produced = append(produced, s.OutputKey)
		}
	}
	sort.Strings(produced)
	produced = slices.Compact(produced)
	known := append(append(slices.Clone(produced), webhookKeys...), opts.Context...)
	var diags diag.List
	for _, r := range prog.Refs() {
		root := r.Ref.Root
		if slices.Contains(known, root) {
			continue
		}
		var msg string
		if opts.Context != nil {
			msg = fmt.Sprintf("$%s names no input field, step or output_key, so it stays the text \"$%s\"", root, root)
			if c := diag.Closest(root, known); c != "" {
				msg += fmt.Sprintf(" (did you mean $%s?)", c)
			} else if len(opts.Context) > 0 {
				msg += " (the input fields are " + strings.Join(opts.Context, ", ") + ")"
			} else {
				msg += " (the run has no input fields)"
			}
		} else if c := diag.Closest(root, produced); c != "" {
			msg = fmt.Sprintf("$%s names no step or output_key (did you mean $%s?); unless the run's input has a field %s, it stays the text \"$%s\"", root, c, root, root)
		} else {
			continue
		}
		diags = append(diags, diag.Diagnostic{Pos: r.Pos, Severity: diag.Warning, Code: CodeRef, Msg: nanovmPath(r.Node) + msg})
	}
	return diags
}

// nanovmPath is the "$.steps[2].prompt: " prefix the nano-vm frontend's
// messages start with, so the planner's read alike.
func nanovmPath(n *nanovm.Node) string {
	if n == nil || n.Path == "" {
		return ""
	}
	return n.Path + ": "
}
