package main

import (
	"crypto/ed25519"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/genesis-toolchain/genesis/forge/bytecode"
	"github.com/genesis-toolchain/genesis/forge/host"
	"github.com/genesis-toolchain/genesis/forge/proof"
	"github.com/genesis-toolchain/genesis/forge/vm"
	"github.com/genesis-toolchain/genesis/runtime"
)

// agentProgram finds the agent program among args, the arguments of
// forge exec, replay or check-proof: the one argument ending in .frgp
// that holds an agent program (package agentabi). It returns the
// program, its path's index in args, and false when no argument is one
// (the command is then the ordinary one, for any Forge program).
func agentProgram(args []string) (*bytecode.Program, int, bool) {
	for i, a := range args {
		if a == "--" {
			break
		}
		if strings.HasPrefix(a, "-") || !strings.HasSuffix(strings.ToLower(a), ".frgp") {
			continue
		}
		b, err := os.ReadFile(a)
		if err != nil {
			continue
		}
		p, err := bytecode.Decode(b)
		if err != nil || !host.IsAgent(p) {
			continue
		}
		return p, i, true
	}
	return nil, 0, false
}

// runAgent runs forge exec, replay or check-proof (cmd) of the agent
// program p, whose path is args[at]: the command line of a compiled agent
// program (docs/runtime.md, Main) with the machine's limits, as
// docs/forge.md ("Agent programs") describes.
func (e *env) runAgent(cmd string, args []string, p *bytecode.Program, at int) int {
	path := args[at]
	rest := append(append([]string(nil), args[:at]...), args[at+1:]...)
	a, err := host.LoadAgent(p)
	if err != nil {
		fmt.Fprintf(e.stderr, "forge: %s: %v\n", path, err)
		return exitUsage
	}
	prog := p.Hash()
	switch cmd {
	case "exec":
		var proofPath, keyPath string
		trace := false
		c := &host.AgentCommand{Agent: a, Trace: &trace}
		c.Flags = func(fs *flag.FlagSet) {
			fs.StringVar(&proofPath, "proof", "", "write a signed execution proof of the run to `FILE` (needs --key)")
			fs.StringVar(&keyPath, "key", "", "sign the proof with the private key in `KEYFILE` (forge keygen)")
			fs.Func("grant", "not for agent programs: they are granted the channels of the agent ABI", func(string) error {
				return errors.New("an agent program is granted the channels of the agent ABI (docs/forge.md), no others")
			})
		}
		// The flags are parsed by the time the first run starts: trace
		// follows --proof from then on.
		c.Done = func(res *runtime.Result, stats *host.AgentStats, lim host.Limits) error {
			if proofPath == "" {
				return nil
			}
			if keyPath == "" {
				return errors.New("--proof needs --key")
			}
			b, err := os.ReadFile(keyPath)
			if err != nil {
				return err
			}
			key, err := proof.ParsePrivateKey(b)
			if err != nil {
				return fmt.Errorf("%s: %v", keyPath, err)
			}
			pr, err := proof.New(prog, lim, agentResult(res, stats))
			if err != nil {
				return fmt.Errorf("no proof written: %v", err)
			}
			pr.Sign(key)
			return os.WriteFile(proofPath, pr.JSON(), 0o644)
		}
		// The machine's trace hash costs time: only a proof needs it.
		trace = flagValue(rest, "proof") != ""
		return c.Main(rest, e.stdout, e.stderr)
	case "replay":
		// The run again with every effect served from its journal: what
		// --replay does (a divergence is an error of the run).
		c := &host.AgentCommand{Agent: a}
		return c.Main(append(rest, "--replay"), e.stdout, e.stderr)
	case "check-proof":
		return e.checkAgentProof(a, prog, rest)
	}
	return exitUsage
}

// agentResult is the machine's result of an agent run, as a proof binds
// it: HALTED when the run ended (whatever its status, which the result
// JSON, part of the output hash, says), FAULTED when the machine
// faulted.
func agentResult(res *runtime.Result, stats *host.AgentStats) *host.Result {
	r := &host.Result{State: vm.Halted, Fault: stats.Fault, PC: stats.PC, Ticks: stats.Ticks,
		Input: stats.Input, Output: stats.Output, TraceHash: stats.TraceHash}
	if stats.Fault != vm.NoFault {
		r.State = vm.Faulted
	}
	return r
}

// checkAgentProof is forge check-proof of an agent program: the run again
// with the command line of the run proven (its --input and the like, which
// the proof's input hash binds) and every effect served from its journal
// (--replay: no provider is called), under the proof's limits, and every
// field compared. The run's result is discarded; the exit status is 0 for
// a valid proof, 1 for an invalid one, 2 for bad usage.
func (e *env) checkAgentProof(a *host.Agent, prog [32]byte, args []string) int {
	ppath := flagValue(args, "proof")
	if ppath == "" || flagValue(args, "journal") == "" {
		fmt.Fprintln(e.stderr, "forge check-proof: an agent program's proof is checked with --proof FILE --journal FILE and the run's own flags (--input, ...)")
		return exitUsage
	}
	b, err := os.ReadFile(ppath)
	if err != nil {
		fmt.Fprintf(e.stderr, "forge: %v\n", err)
		return exitUsage
	}
	p, err := proof.Parse(b)
	if err != nil {
		fmt.Fprintf(e.stderr, "forge: %s: invalid proof: %v\n", ppath, err)
		return exitFail
	}
	var pubPath string
	trace := true
	c := &host.AgentCommand{Agent: a, Trace: &trace, Limits: &p.Limits}
	c.Flags = func(fs *flag.FlagSet) {
		fs.String("proof", "", "the proof `FILE` written by forge exec --proof")
		fs.StringVar(&pubPath, "pub", "", "require the proof to be signed by the public key in `KEYFILE.pub`")
	}
	verdict := errors.New("the run did not end")
	c.Done = func(res *runtime.Result, stats *host.AgentStats, _ host.Limits) error {
		var pub ed25519.PublicKey
		if pubPath != "" {
			b, err := os.ReadFile(pubPath)
			if err != nil {
				return err
			}
			if pub, err = proof.ParsePublicKey(b); err != nil {
				return fmt.Errorf("%s: %v", pubPath, err)
			}
		}
		verdict = proof.CheckRun(p, prog, agentResult(res, stats), pub)
		if verdict == nil {
			fmt.Fprintf(e.stdout, "%s: valid proof: the run ended %s after %d ticks\n", ppath, res.Status, stats.Ticks)
		}
		return nil
	}
	if code := c.Main(append(args, "--replay", "--result", os.DevNull), io.Discard, e.stderr); code == exitUsage {
		return exitUsage
	}
	if verdict != nil {
		fmt.Fprintf(e.stderr, "forge: %s: %v\n", ppath, verdict)
		return exitFail
	}
	return exitOK
}

// flagValue returns the value args give the flag name (-name V, --name V,
// --name=V), or "".
func flagValue(args []string, name string) string {
	for i, a := range args {
		if a == "--" {
			break
		}
		if !strings.HasPrefix(a, "-") {
			continue
		}
		a = strings.TrimLeft(a, "-")
		if v, ok := strings.CutPrefix(a, name+"="); ok {
			return v
		}
		if a == name && i+1 < len(args) {
			return args[i+1]
		}
	}
	return ""
}
