package main

import (
	"bytes"
	"crypto/ed25519"
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/genesis-toolchain/genesis/forge/host"
	"github.com/genesis-toolchain/genesis/forge/journal"
	"github.com/genesis-toolchain/genesis/forge/proof"
	"github.com/genesis-toolchain/genesis/forge/vm"
)

func (e *env) execCommand() *cli.Command {
	return &cli.Command{
		Name:      "exec",
		Usage:     "run a program",
		UsageText: "forge exec [--ticks N] [--memory BYTES] [--stack BYTES] [--output BYTES] [--grant LIST] [--stdin FILE] [--result FILE] [--journal FILE] [--proof FILE --key KEYFILE] PROG.frgp",
		Description: "Runs PROG.frgp on the Forge Machine. What the program sends on channel 0 goes to\n" +
			"standard output, channel 1 to standard error. Channel 2 reads standard input (or\n" +
			"--stdin FILE) in 64 KiB chunks, each read only when the program waits for more, then\n" +
			"an empty message at end of input, and again at every later wait.\n\n" +
			"Exit status: 0 the program halted, 3 it faulted (a line on stderr names the fault,\n" +
			"its pc and the ticks used), 4 it blocked on a channel nobody services, 2 the program\n" +
			"does not load or the command line is wrong, 1 a file could not be written.\n\n" +
			"--result writes how the run ended as JSON; --journal records every delivery so that\n" +
			"'forge replay' can reproduce the run; --proof signs an execution proof with --key\n" +
			"(made by 'forge keygen') that 'forge check-proof' verifies.\n\n" +
			"An agent program (built by genesisc from VVM, Grimoire, nano-vm or a plan) takes\n" +
			"the flags of 'genesisc run' (--llm, --tools, --input, --journal, --resume, --replay,\n" +
			"--trace, --result, --repeat, the --max-* limits, ...) besides --ticks, --memory,\n" +
			"--stack, --output, --proof and --key, and exits as genesisc run does (0 success,\n" +
			"3 suspended, 1 another status): docs/forge-cli.md, \"Agent programs\".",
		Flags: append(limitFlags(),
			&cli.StringFlag{Name: "stdin", Usage: "read channel 2 from `FILE` instead of standard input"},
			&cli.StringFlag{Name: "result", Usage: "write the result as JSON to `FILE`"},
			&cli.StringFlag{Name: "journal", Usage: "record the run in `FILE` (JSON Lines) for forge replay"},
			&cli.StringFlag{Name: "proof", Usage: "write a signed execution proof to `FILE` (needs --key)"},
			&cli.StringFlag{Name: "key", Usage: "sign the proof with the private key in `KEYFILE`"},
		),
		Action: e.exec,
	}
}

func (e *env) exec(c *cli.Context) error {
	args, err := e.args(c, 1, 1, "one program PROG.frgp")
	if err != nil {
		return err
	}
	lim, err := e.limits(c)
	if err != nil {
		return err
	}
	proofPath, keyPath := c.String("proof"), c.String("key")
	if (proofPath == "") != (keyPath == "") {
		return e.usage(c, "--proof and --key go together")
	}
	var key ed25519.PrivateKey
	if keyPath != "" {
		b, err := e.readFile(keyPath)
		if err != nil {
			return err
		}
		if key, err = proof.ParsePrivateKey(b); err != nil {
			return e.fail(exitUsage, "%s: %v", keyPath, err)
		}
	}
	img, err := e.loadImage(args[0])
	if err != nil {
		return err
	}
	stdin, closeInput, err := e.openInput(c.String("stdin"))
	if err != nil {
		return err
	}
	defer closeInput()

	opts := host.Options{
		Limits: lim,
		Trace:  c.String("journal") != "" || proofPath != "",
		Input:  host.NewStdin(stdin),
		Stdout: e.stdout,
		Stderr: e.stderr,
	}
	var jw *journal.Writer
	if path := c.String("journal"); path != "" {
		jw, err = journal.Create(path, lim.Header(img.Hash()))
		if err != nil {
			return e.fail(exitFail, "%v", err)
		}
		defer jw.Close()
		opts.Recorder = jw
	}

	r, err := host.Run(img, opts)
	if err != nil {
		return e.fail(exitFail, "%v", err)
	}
	if jw != nil {
		if err := jw.Finish(r.End()); err != nil {
			return e.fail(exitFail, "%v", err)
		}
	}
	if path := c.String("result"); path != "" {
		if err := e.writeFile(path, r.JSON()); err != nil {
			return err
		}
	}
	if proofPath != "" {
		p, err := proof.New(img.Hash(), lim, r)
		if err != nil {
			e.reportEnd(r, img, lim)
			return e.fail(exitFail, "no proof written: %v", err)
		}
		p.Sign(key)
		if err := e.writeFile(proofPath, p.JSON()); err != nil {
			return err
		}
	}
	return e.reportEnd(r, img, lim)
}

// reportEnd prints a line for a run of img with the limits lim that did
// not halt and returns the exit status for r. OUT_OF_MEMORY, which only
// creation raises, says what the program needs.
func (e *env) reportEnd(r *host.Result, img *vm.Image, lim host.Limits) error {
	switch r.State {
	case vm.Halted:
		return nil
	case vm.Faulted:
		if r.Fault == vm.OutOfMemory {
			return e.fail(exitFaulted, "%s: %s", r.Summary(), memoryNeed(img, lim))
		}
		return e.fail(exitFaulted, "%s", r.Summary())
	case vm.Blocked:
		return e.fail(exitBlocked, "%s", r.Summary())
	}
	return e.fail(exitFail, "internal error: the run ended %s", r.Summary())
}

func (e *env) replayCommand() *cli.Command {
	return &cli.Command{
		Name:      "replay",
		Usage:     "run a program again from its journal, and check that nothing differs",
		UsageText: "forge replay [--result FILE] --journal FILE PROG.frgp",
		Description: "Runs PROG.frgp again with the limits recorded in the journal, delivering each\n" +
			"recorded message when the program waits on the recorded channel at the recorded tick\n" +
			"count. Output goes to stdout and stderr as with exec. Any divergence is an error\n" +
			"(exit status 1): the program waits on another channel or at another tick count than\n" +
			"the journal's next delivery, leaves deliveries unused, or ends with another state,\n" +
			"fault, pc, tick count, input or output hash or trace hash. Otherwise the exit status\n" +
			"is exec's for the same run (0 halted, 3 faulted, 4 blocked).",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "journal", Usage: "the journal `FILE` written by forge exec --journal"},
			&cli.StringFlag{Name: "result", Usage: "write the result as JSON to `FILE`"},
		},
		Action: e.replay,
	}
}

func (e *env) replay(c *cli.Context) error {
	args, err := e.args(c, 1, 1, "one program PROG.frgp")
	if err != nil {
		return err
	}
	jpath := c.String("journal")
	if jpath == "" {
		return e.usage(c, "--journal is required")
	}
	img, err := e.loadImage(args[0])
	if err != nil {
		return err
	}
	b, err := e.readFile(jpath)
	if err != nil {
		return err
	}
	j, err := journal.Read(bytes.NewReader(b))
	if err != nil {
		return e.fail(exitUsage, "%s: %v", jpath, err)
	}
	r, err := host.Replay(img, j, e.stdout, e.stderr)
	if err != nil { // a *host.Divergence, or a journal for another program
		return e.fail(exitFail, "%s: %v", jpath, err)
	}
	if path := c.String("result"); path != "" {
		if err := e.writeFile(path, r.JSON()); err != nil {
			return err
		}
	}
	return e.reportEnd(r, img, host.Limits{Memory: j.Header.Memory, Stack: j.Header.Stack})
}

// memoryNeed says why the quota of lim does not hold img: what code and
// data take, the stack, and the smallest quota that would do.
func memoryNeed(img *vm.Image, lim host.Limits) string {
	what := fmt.Sprintf("code and data take %d bytes and the stack %d", img.HeapStart(), lim.Stack)
	need, ok := vm.Need(img, lim.Stack)
	if !ok {
		return fmt.Sprintf("%s: no memory quota holds them (the largest is %d)", what, uint64(vm.MaxMemory))
	}
	return fmt.Sprintf("%s: the memory quota (%d) must be at least %d", what, lim.Memory, need)
}
