package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/genesis-toolchain/genesis/planner"
	"github.com/genesis-toolchain/genesis/runtime"
)

// planCommand is `genesisc plan`: a model writes a nano-vm program for an
// intent, and the compiler checks every answer (package planner).
func planCommand(stdout, stderr io.Writer) *cli.Command {
	return &cli.Command{
		Name:      "plan",
		Usage:     "ask a model for a nano-vm program that does what INTENT says, checked by the compiler",
		UsageText: "genesisc plan --llm mock:FILE|openai:URL [--models FILE] [--model NAME] [--tools-list NAMES] [--context NAMES] [--retries N] [--verbose] -o OUT.json INTENT",
		Description: "Asks the model for a nano-vm program (the program's JSON schema as structured output),\n" +
			"compiles the answer, and while the compiler reports errors — or warnings: a quoted\n" +
			"'$x' in a condition, an unreachable step, a misspelt $reference, … — sends the\n" +
			"diagnostics back and asks again, up to --retries more times (default 3). Writes\n" +
			"OUT.json only when an answer compiles: the last one that did (its warnings are\n" +
			"printed). Each attempt is reported on standard error: its number, its errors and\n" +
			"warnings, and the tokens it used. --tools-list a,b: the only tools the program may\n" +
			"call; --context k1,k2: the run's input fields, so that any other $name is reported.\n" +
			"Exit status: 0 written, 1 no answer compiled or the model call failed (nothing\n" +
			"written), 2 a usage error. docs/planner.md.",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "o", Usage: "write the program to `OUT.json` (required)"},
			&cli.StringFlag{Name: "llm", Usage: "the LLM provider: mock:FILE or openai:URL (required)"},
			&cli.StringFlag{Name: "models", Usage: "the model alias `FILE` (as for genesisc run; default $GENESIS_MODELS)"},
			&cli.StringFlag{Name: "model", Usage: "ask the provider's model `NAME`"},
			&cli.StringFlag{Name: "tools-list", Usage: "the only tools the program may call, comma-separated `NAMES` (empty: none)"},
			&cli.StringFlag{Name: "context", Usage: "the run's input fields, comma-separated `NAMES`"},
			&cli.IntFlag{Name: "retries", Value: planner.DefaultRetries, Usage: fmt.Sprintf("ask again at most `N` times after the first answer (0 to %d)", planner.MaxRetries)},
			&cli.BoolFlag{Name: "verbose", Usage: "print every attempt's diagnostics, not only the last one's"},
		},
		Action: func(c *cli.Context) error { return plan(c, stderr) },
	}
}

func plan(c *cli.Context, stderr io.Writer) error {
	usage := func(format string, args ...any) error {
		fmt.Fprintf(stderr, "genesisc plan: "+format+"\n", args...)
		return exitError{exitUsage}
	}
	intent := strings.TrimSpace(strings.Join(c.Args().Slice(), " "))
	out := c.String("o")
	switch {
	case intent == "":
		return usage("no intent: say what the program should do, e.g. genesisc plan --llm openai:URL -o refund.json \"refund valid orders\"")
	case out == "":
		return usage("-o OUT.json is required")
	case !strings.EqualFold(filepath.Ext(out), ".json"):
		return usage("-o %s: the program is JSON; name the file .json", out)
	case c.String("llm") == "":
		return usage("--llm is required: mock:FILE or openai:URL")
	}
	retries := c.Int("retries")
	if retries < 0 || retries > planner.MaxRetries {
		return usage("--retries must be between 0 and %d, not %d", planner.MaxRetries, retries)
	}
	llm, err := runtime.ParseLLMWith(c.String("llm"), runtime.LLMOptions{ModelsFile: c.String("models"), Model: c.String("model")})
	if err != nil {
		return usage("--llm: %v", err)
	}
	opts := planner.Options{LLM: llm, Retries: retries, File: out}
	if c.IsSet("tools-list") {
		if opts.Tools, err = nameList(c.String("tools-list")); err != nil {
			return usage("--tools-list: %v", err)
		}
	}
	if c.IsSet("context") {
		if opts.Context, err = nameList(c.String("context")); err != nil {
			return usage("--context: %v", err)
		}
	}
	verbose := c.Bool("verbose")
	opts.OnAttempt = func(a planner.Attempt) {
		fmt.Fprintf(stderr, "genesisc plan: attempt %d: %s; %s\n", a.N, countDiags(a.Errors, a.Warnings), usageText(a.Usage))
		if verbose && len(a.Diags) > 0 {
			fmt.Fprint(stderr, a.Render(out))
		}
	}
	res, err := planner.Plan(context.Background(), intent, opts)
	if err != nil {
		fmt.Fprintf(stderr, "genesisc plan: %v; nothing written\n", err)
		return exitError{exitDiag}
	}
	best := res.Best()
	if best == nil {
		last := res.Attempts[len(res.Attempts)-1]
		if !verbose {
			fmt.Fprint(stderr, last.Render(out))
		}
		fmt.Fprintf(stderr, "genesisc plan: no answer compiled in %s; %s in all; nothing written\n", plural(len(res.Attempts), "attempt"), usageText(res.Usage))
		return exitError{exitDiag}
	}
	if err := writeAtomic(out, res.Program); err != nil {
		fmt.Fprintf(stderr, "genesisc plan: %v\n", err)
		return exitError{exitDiag}
	}
	if !verbose || best.N != len(res.Attempts) {
		fmt.Fprint(stderr, best.Render(out))
	}
	fmt.Fprintf(stderr, "genesisc plan: wrote %s: the answer of attempt %d of %d, %s; %s in all\n",
		out, best.N, len(res.Attempts), compiledText(best), usageText(res.Usage))
	return nil
}

// nameList splits a comma-separated list of names; blanks around a name
// are dropped, an empty list is no names, an empty name is an error.
func nameList(s string) ([]string, error) {
	names := []string{}
	if strings.TrimSpace(s) == "" {
		return names, nil
	}
	for _, n := range strings.Split(s, ",") {
		n = strings.TrimSpace(n)
		if n == "" {
			return nil, fmt.Errorf("an empty name in %q", s)
		}
		names = append(names, n)
	}
	return names, nil
}

func countDiags(errors, warnings int) string {
	if errors == 0 && warnings == 0 {
		return "compiles"
	}
	return plural(errors, "error") + ", " + plural(warnings, "warning")
}

func compiledText(a *planner.Attempt) string {
	if a.Warnings == 0 {
		return "which compiles"
	}
	return "which compiles with " + plural(a.Warnings, "warning")
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}

// usageText is what attempts used: tokens, and the cost when the
// provider reports or prices one.
func usageText(u runtime.Usage) string {
	s := fmt.Sprintf("%d tokens (%d prompt, %d completion)", u.Tokens(), u.PromptTokens, u.CompletionTokens)
	if u.Cost > 0 {
		s += fmt.Sprintf(", %.4f USD", u.Cost)
	}
	return s
}

// writeAtomic writes data to path through a temporary file in the same
// directory, so that path never holds part of a program.
func writeAtomic(path string, data []byte) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(tmp, 0o644)
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
	}
	return err
}
