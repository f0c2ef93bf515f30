package main

import (
	"bytes"
	"crypto/ed25519"
	"errors"
	"io"

	"github.com/urfave/cli/v2"

	"github.com/genesis-toolchain/genesis/forge/host"
	"github.com/genesis-toolchain/genesis/forge/journal"
	"github.com/genesis-toolchain/genesis/forge/proof"
)

func (e *env) keygenCommand() *cli.Command {
	return &cli.Command{
		Name:      "keygen",
		Usage:     "make an ed25519 key pair for signing execution proofs",
		UsageText: "forge keygen [--force] -o KEYFILE",
		Description: "Writes a new ed25519 private key to KEYFILE (PEM, PKCS #8, mode 0600) and its\n" +
			"public key to KEYFILE.pub (PEM, PKIX). Neither file may exist already, unless\n" +
			"--force is given.",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "o", Usage: "write the private key to `KEYFILE` and the public key to KEYFILE.pub"},
			&cli.BoolFlag{Name: "force", Usage: "replace existing key files"},
		},
		Action: func(c *cli.Context) error {
			if _, err := e.args(c, 0, 0, "no arguments"); err != nil {
				return err
			}
			path := c.String("o")
			if path == "" {
				return e.usage(c, "-o KEYFILE is required")
			}
			key, err := proof.GenerateKey(nil)
			if err != nil {
				return e.fail(exitFail, "%v", err)
			}
			if err := proof.WriteKeyPair(path, key, c.Bool("force")); err != nil {
				return e.fail(exitFail, "%v", err)
			}
			return nil
		},
	}
}

func (e *env) checkProofCommand() *cli.Command {
	return &cli.Command{
		Name:      "check-proof",
		Usage:     "verify an execution proof by running the program again",
		UsageText: "forge check-proof --proof FILE [--stdin FILE | --journal FILE] [--pub KEYFILE.pub] PROG.frgp",
		Description: "Checks the proof's signature against the public key it carries (and, with --pub,\n" +
			"that this is the given key), that PROG.frgp is the proven program, then runs it again\n" +
			"with the proof's limits on the same input, read from standard input (or --stdin FILE)\n" +
			"as exec reads it, or taken from a journal; the input must hash to the proof's and\n" +
			"every field of the run must match. The program's output is discarded.\n\n" +
			"Exit status: 0 the proof is valid, 1 it is not (the reason is on stderr), 2 bad usage\n" +
			"or a file that cannot be read or does not load.",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "proof", Usage: "the proof `FILE` written by forge exec --proof"},
			&cli.StringFlag{Name: "stdin", Usage: "read channel 2 from `FILE` instead of standard input"},
			&cli.StringFlag{Name: "journal", Usage: "take the input from the journal `FILE` of the run"},
			&cli.StringFlag{Name: "pub", Usage: "require the proof to be signed by the public key in `KEYFILE.pub`"},
		},
		Action: e.checkProof,
	}
}

func (e *env) checkProof(c *cli.Context) error {
	args, err := e.args(c, 1, 1, "one program PROG.frgp")
	if err != nil {
		return err
	}
	ppath := c.String("proof")
	if ppath == "" {
		return e.usage(c, "--proof is required")
	}
	if c.String("stdin") != "" && c.String("journal") != "" {
		return e.usage(c, "--stdin and --journal are alternatives")
	}
	var pub ed25519.PublicKey
	if path := c.String("pub"); path != "" {
		b, err := e.readFile(path)
		if err != nil {
			return err
		}
		if pub, err = proof.ParsePublicKey(b); err != nil {
			return e.fail(exitUsage, "%s: %v", path, err)
		}
	}
	img, err := e.loadImage(args[0])
	if err != nil {
		return err
	}
	b, err := e.readFile(ppath)
	if err != nil {
		return err
	}
	p, err := proof.Parse(b)
	if err != nil {
		return e.fail(exitFail, "%s: invalid proof: %v", ppath, err)
	}

	if jpath := c.String("journal"); jpath != "" {
		jb, err := e.readFile(jpath)
		if err != nil {
			return err
		}
		j, err := journal.Read(bytes.NewReader(jb))
		if err != nil {
			return e.fail(exitUsage, "%s: %v", jpath, err)
		}
		err = proof.CheckJournal(p, img, j, pub)
		return e.proofVerdict(ppath, p, err)
	}
	stdin, closeInput, err := e.openInput(c.String("stdin"))
	if err != nil {
		return err
	}
	defer closeInput()
	return e.proofVerdict(ppath, p, proof.Check(p, img, host.NewStdin(stdin), pub))
}

// proofVerdict reports the outcome of a check.
func (e *env) proofVerdict(path string, p *proof.Proof, err error) error {
	var inv *proof.Invalid
	switch {
	case errors.As(err, &inv):
		return e.fail(exitFail, "%s: %v", path, err)
	case err != nil:
		return e.fail(exitFail, "%v", err)
	}
	r := host.Result{State: p.State, Fault: p.Fault, UserCode: p.UserCode, PC: p.PC, Ticks: p.TicksUsed}
	_, err = io.WriteString(e.stdout, path+": valid proof: "+r.Summary()+"\n")
	return err
}
