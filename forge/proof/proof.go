// Package proof makes and checks Forge execution proofs.
//
// An execution proof (05-FORGE.md §6, requirements-FORGE.md §3.12) is a
// signed statement that a program, given some input, produced some output
// in some number of ticks along some execution trace. It names the program
// by the sha256 of its canonical FRGP file, the input and output by their
// framed message hashes (host.MessageHash), and the trace by the machine's
// trace hash; it also holds how the run ended and the limits it ran under,
// which a checker needs to run it again. The signer's ed25519 key signs a
// fixed-layout binary encoding of all of that (Message).
//
// Nothing in a proof is taken on trust: Check verifies the signature,
// runs the program again on the same input under the same limits, and
// compares every field. Proofs cover finished runs only (HALTED or
// FAULTED): a BLOCKED run has no final trace hash and its output is not
// final.
package proof

import (
	"bytes"
	"crypto/ed25519"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/genesis-toolchain/genesis/forge/host"
	"github.com/genesis-toolchain/genesis/forge/journal"
	"github.com/genesis-toolchain/genesis/forge/vm"
)

// Version is the proof format version. Version 2 added the output quota
// to the limits and is the first of the metering in which SEND and RECV
// pay for the bytes they move: a version 1 proof's ticks are those of the
// older metering, and re-execution cannot reproduce them. Version 3 is
// the first in which a POLL of an input channel with no message queued
// waits for the host's next message, as a RECV does (docs/forge.md,
// "Channels"); in version 2 it gave 0 at once. New proofs are version 3;
// Parse and Check accept version 2, whose runs are the same unless a
// POLL waited, which Check then reports (a run that never polled an
// empty channel is reproduced exactly).
const Version = 3

// OldestVersion is the oldest proof version Parse accepts.
const OldestVersion = 2

// Domain prefixes the signed message of a version 3 proof so that a Forge
// proof signature can never be mistaken for the signature of anything
// else, nor one version's for another's (DomainOf).
const Domain = "forge execution proof v3\x00"

// DomainOf returns the domain prefix of proof version v: Domain for
// Version, and "forge execution proof v2\x00" for version 2. Both have
// the same length.
func DomainOf(v int) string {
	if v == 2 {
		return "forge execution proof v2\x00"
	}
	return Domain
}

// Proof is an execution proof.
type Proof struct {
	// Version is the format version (OldestVersion to Version); New
	// makes Version. It selects the signed domain (DomainOf) and the
	// machine semantics the proof was made under.
	Version   int
	Program   [32]byte // sha256 of the canonical FRGP file
	Input     [32]byte // MessageHash of the delivered messages
	Output    [32]byte // MessageHash of the sent messages
	TicksUsed uint64
	TraceHash [32]byte
	State     vm.State // HALTED or FAULTED
	Fault     vm.Fault // NoFault unless FAULTED
	UserCode  uint32
	PC        uint64
	Limits    host.Limits // Grant is always explicit (never zero)

	PublicKey ed25519.PublicKey
	Signature []byte // forge_sig: ed25519 over Message()
}

// New returns the unsigned proof of run r of the program with hash prog
// under limits lim. It fails for a run that did not finish or was not
// traced.
func New(prog [32]byte, lim host.Limits, r *host.Result) (*Proof, error) {
	if r.State != vm.Halted && r.State != vm.Faulted {
		return nil, fmt.Errorf("cannot prove a run that ended %s: a proof covers a finished run (HALTED or FAULTED)", r.State)
	}
	if r.TraceHash == nil {
		return nil, errors.New("cannot prove a run made without a trace (host.Options.Trace)")
	}
	lim.Grant = lim.EffectiveGrant()
	return &Proof{
		Version:   Version,
		Program:   prog,
		Input:     r.Input,
		Output:    r.Output,
		TicksUsed: r.Ticks,
		TraceHash: *r.TraceHash,
		State:     r.State,
		Fault:     r.Fault,
		UserCode:  r.UserCode,
		PC:        r.PC,
		Limits:    lim,
	}, nil
}

// messageSize is the size of Message's result.
const messageSize = len(Domain) + 32 + 32 + 32 + 8 + 32 + 1 + 1 + 4 + 8 + 8 + 8 + 8 + 8 + 2 + ed25519.PublicKeySize

// Message returns the bytes the signature covers: the domain of the
// proof's version (DomainOf), then every field in this order, integers
// little-endian:
//
//	program [32]  input [32]  output [32]  ticks_used u64  trace_hash [32]
//	state u8  fault u8  user_code u32  pc u64
//	limit ticks u64  limit memory u64  limit stack u64  limit output u64  grant u16
//	public_key [32]
//
// State and fault are their numeric codes (vm.State, vm.Fault); the grant
// is a bit set, bit i for channel i. Every field has a fixed size, so the
// encoding is unambiguous. A missing or malformed public key encodes as
// zeros (and then no signature verifies).
func (p *Proof) Message() []byte {
	b := make([]byte, 0, messageSize)
	b = append(b, DomainOf(p.Version)...)
	b = append(b, p.Program[:]...)
	b = append(b, p.Input[:]...)
	b = append(b, p.Output[:]...)
	b = binary.LittleEndian.AppendUint64(b, p.TicksUsed)
	b = append(b, p.TraceHash[:]...)
	b = append(b, byte(p.State), byte(p.Fault))
	b = binary.LittleEndian.AppendUint32(b, p.UserCode)
	b = binary.LittleEndian.AppendUint64(b, p.PC)
	b = binary.LittleEndian.AppendUint64(b, p.Limits.Ticks)
	b = binary.LittleEndian.AppendUint64(b, p.Limits.Memory)
	b = binary.LittleEndian.AppendUint64(b, p.Limits.Stack)
	b = binary.LittleEndian.AppendUint64(b, p.Limits.Output)
	b = binary.LittleEndian.AppendUint16(b, p.Limits.Grant)
	var pub [ed25519.PublicKeySize]byte
	if len(p.PublicKey) == ed25519.PublicKeySize {
		copy(pub[:], p.PublicKey)
	}
	return append(b, pub[:]...)
}

// Sign sets the proof's public key to key's and signs it.
func (p *Proof) Sign(key ed25519.PrivateKey) {
	p.PublicKey = key.Public().(ed25519.PublicKey)
	p.Signature = ed25519.Sign(key, p.Message())
}

// VerifySignature checks the signature against the proof's own public
// key.
func (p *Proof) VerifySignature() error {
	if len(p.PublicKey) != ed25519.PublicKeySize {
		return errors.New("the public key is not an ed25519 key")
	}
	if len(p.Signature) != ed25519.SignatureSize || !ed25519.Verify(p.PublicKey, p.Message(), p.Signature) {
		return errors.New("the signature does not match the proof's contents and public key")
	}
	return nil
}

// wire is the JSON form. Field order here is the order in the file.
type wire struct {
	Version   int        `json:"version"`
	Program   string     `json:"program"`
	Input     string     `json:"input"`
	Output    string     `json:"output"`
	TicksUsed uint64     `json:"ticks_used"`
	TraceHash string     `json:"trace_hash"`
	State     string     `json:"state"`
	Fault     *string    `json:"fault"`
	FaultCode uint8      `json:"fault_code"`
	UserCode  uint32     `json:"user_code"`
	PC        uint64     `json:"pc"`
	Limits    wireLimits `json:"limits"`
	PublicKey string     `json:"public_key"`
	Signature string     `json:"forge_sig"`
}

type wireLimits struct {
	Ticks  uint64  `json:"ticks"`
	Memory uint64  `json:"memory"`
	Stack  uint64  `json:"stack"`
	Output *uint64 `json:"output"` // required (0: no quota)
	Grant  []int   `json:"grant"`
}

// JSON returns the proof file: an indented JSON object with the fields
// version, program, input, output, ticks_used, trace_hash, state, fault
// (null unless FAULTED), fault_code, user_code, pc, limits {ticks, memory,
// stack, output, grant: [channels]}, public_key and forge_sig, hashes, key
// and signature in lower-case hex.
func (p *Proof) JSON() []byte {
	w := wire{
		Version:   p.Version,
		Program:   hex.EncodeToString(p.Program[:]),
		Input:     hex.EncodeToString(p.Input[:]),
		Output:    hex.EncodeToString(p.Output[:]),
		TicksUsed: p.TicksUsed,
		TraceHash: hex.EncodeToString(p.TraceHash[:]),
		State:     p.State.String(),
		FaultCode: uint8(p.Fault),
		UserCode:  p.UserCode,
		PC:        p.PC,
		Limits:    wireLimits{Ticks: p.Limits.Ticks, Memory: p.Limits.Memory, Stack: p.Limits.Stack, Output: &p.Limits.Output, Grant: []int{}},
		PublicKey: hex.EncodeToString(p.PublicKey),
		Signature: hex.EncodeToString(p.Signature),
	}
	if p.State == vm.Faulted {
		s := p.Fault.String()
		w.Fault = &s
	}
	for ch := 0; ch < vm.NumChannels; ch++ {
		if p.Limits.Grant&(1<<ch) != 0 {
			w.Limits.Grant = append(w.Limits.Grant, ch)
		}
	}
	b, err := json.MarshalIndent(w, "", "  ")
	if err != nil {
		panic(err) // unreachable: every field is a plain value
	}
	return append(b, '\n')
}

// Parse reads a proof file. It checks the syntax and that the fields are
// consistent with each other (fault names match codes, sizes are right),
// not the signature: see VerifySignature and Check.
func Parse(data []byte) (*Proof, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var w wire
	if err := dec.Decode(&w); err != nil {
		return nil, fmt.Errorf("not a proof: %v", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("not a proof: more than one JSON value")
	}
	if w.Version == 1 {
		return nil, errors.New("proof version 1 was made before SEND and RECV paid for the bytes they move (docs/forge.md, \"Metering\"): re-execution cannot reproduce its ticks; prove the run again")
	}
	if w.Version < OldestVersion || w.Version > Version {
		return nil, fmt.Errorf("unsupported proof version %d, want %d to %d", w.Version, OldestVersion, Version)
	}
	if w.Limits.Output == nil {
		return nil, errors.New(`bad limits: "output" (the output quota, 0 for none) is required`)
	}
	p := &Proof{Version: w.Version, TicksUsed: w.TicksUsed, UserCode: w.UserCode, PC: w.PC,
		Limits: host.Limits{Ticks: w.Limits.Ticks, Memory: w.Limits.Memory, Stack: w.Limits.Stack, Output: *w.Limits.Output}}
	for _, h := range []struct {
		name string
		s    string
		dst  *[32]byte
	}{{"program", w.Program, &p.Program}, {"input", w.Input, &p.Input}, {"output", w.Output, &p.Output}, {"trace_hash", w.TraceHash, &p.TraceHash}} {
		if err := decodeHex(h.s, h.dst[:]); err != nil {
			return nil, fmt.Errorf("bad %s: %v", h.name, err)
		}
	}
	st, ok := host.ParseState(w.State)
	if !ok || (st != vm.Halted && st != vm.Faulted) {
		return nil, fmt.Errorf("bad state %q: a proof is of a HALTED or FAULTED run", w.State)
	}
	p.State = st
	switch {
	case st == vm.Halted && (w.Fault != nil || w.FaultCode != 0):
		return nil, errors.New("a HALTED run has fault null and fault_code 0")
	case st == vm.Faulted:
		if w.Fault == nil {
			return nil, errors.New("a FAULTED run names its fault")
		}
		f, ok := host.ParseFault(*w.Fault)
		if !ok {
			return nil, fmt.Errorf("unknown fault %q", *w.Fault)
		}
		if uint8(f) != w.FaultCode {
			return nil, fmt.Errorf("fault %s has code %d, not %d", f, uint8(f), w.FaultCode)
		}
		p.Fault = f
	}
	for i, ch := range w.Limits.Grant {
		if ch < 0 || ch >= vm.NumChannels || (i > 0 && w.Limits.Grant[i-1] >= ch) {
			return nil, errors.New("bad limits.grant: channels must be sorted, unique and below 16")
		}
		p.Limits.Grant |= 1 << ch
	}
	if p.Limits.Grant == 0 {
		return nil, errors.New("bad limits.grant: no channel granted")
	}
	p.PublicKey = make([]byte, ed25519.PublicKeySize)
	if err := decodeHex(w.PublicKey, p.PublicKey); err != nil {
		return nil, fmt.Errorf("bad public_key: %v", err)
	}
	p.Signature = make([]byte, ed25519.SignatureSize)
	if err := decodeHex(w.Signature, p.Signature); err != nil {
		return nil, fmt.Errorf("bad forge_sig: %v", err)
	}
	return p, nil
}

// decodeHex decodes exactly len(dst) bytes of lower-case hex.
func decodeHex(s string, dst []byte) error {
	if len(s) != 2*len(dst) {
		return fmt.Errorf("want %d hex digits, have %d", 2*len(dst), len(s))
	}
	if _, err := hex.Decode(dst, []byte(s)); err != nil || s != strings.ToLower(s) {
		return fmt.Errorf("%q is not lower-case hex", s)
	}
	return nil
}

// Invalid is the error of a proof that does not hold.
type Invalid struct {
	Reason string
}

func (e *Invalid) Error() string { return "invalid proof: " + e.Reason }

// Check checks proof p against the program img and the input in: the
// signature must verify against the proof's public key (and equal pub if
// pub is not nil), img must be the proven program, and running it again
// under the proof's limits with input must reproduce every field (input
// and output hashes, ticks, trace hash, state, fault, user code, pc). The
// program's output is discarded. If input has a method
// Finish(*host.Result) error (as *host.JournalInput does), it is called
// after the run and a *host.Divergence from it or from the input makes the
// proof invalid. A proof that does not hold gives an *Invalid error; other
// errors are the host's (reading input).
func Check(p *Proof, img *vm.Image, input host.Input, pub ed25519.PublicKey) error {
	if err := p.VerifySignature(); err != nil {
		return &Invalid{err.Error()}
	}
	if pub != nil && !pub.Equal(p.PublicKey) {
		return &Invalid{fmt.Sprintf("signed by key %x, not by the given public key %x", []byte(p.PublicKey), []byte(pub))}
	}
	if h := img.Hash(); h != p.Program {
		return &Invalid{fmt.Sprintf("the proof is of program %x, not of this one (%x)", p.Program, h)}
	}
	r, err := host.Run(img, host.Options{Limits: p.Limits, Trace: true, Input: input})
	if err == nil {
		if f, ok := input.(interface{ Finish(*host.Result) error }); ok {
			err = f.Finish(r)
		}
	}
	if err != nil {
		if d, ok := err.(*host.Divergence); ok {
			return &Invalid{"the journal does not replay: " + d.Msg}
		}
		return err
	}
	if p.Version < 3 && r.PollWaits > 0 {
		return &Invalid{fmt.Sprintf("proof version %d was made when a POLL of an input channel with no message queued gave 0 without waiting; "+
			"this run waits at such a POLL (docs/forge.md, \"Channels\"), so re-execution cannot reproduce the proof; prove the run again", p.Version)}
	}
	return matches(p, r)
}

// CheckRun checks proof p against r, a re-execution the caller made of
// the program with hash prog under the proof's limits (an agent program's,
// which the agent host runs again from its journal): the signature (by
// pub, when not nil), the program, then every field of the run.
func CheckRun(p *Proof, prog [32]byte, r *host.Result, pub ed25519.PublicKey) error {
	if err := p.VerifySignature(); err != nil {
		return &Invalid{err.Error()}
	}
	if pub != nil && !pub.Equal(p.PublicKey) {
		return &Invalid{fmt.Sprintf("signed by key %x, not by the given public key %x", []byte(p.PublicKey), []byte(pub))}
	}
	if prog != p.Program {
		return &Invalid{fmt.Sprintf("the proof is of program %x, not of this one (%x)", p.Program, prog)}
	}
	return matches(p, r)
}

// matches checks that run r reproduces proof p.
func matches(p *Proof, r *host.Result) error {
	if r.Input != p.Input {
		return &Invalid{fmt.Sprintf("the input differs: the proof's input hash is %x, the given input's is %x", p.Input, r.Input)}
	}
	got, err := New(p.Program, p.Limits, r)
	if err != nil {
		return &Invalid{fmt.Sprintf("the program ran to %s, not to %s", r.Summary(), p.State)}
	}
	if diffs := compare(p, got); len(diffs) > 0 {
		return &Invalid{"re-execution differs: " + strings.Join(diffs, "; ")}
	}
	return nil
}

// compare lists the fields of the run got that differ from proof want.
func compare(want, got *Proof) []string {
	var diffs []string
	diff := func(field string, w, g any) {
		diffs = append(diffs, fmt.Sprintf("%s: proof says %v, re-execution gives %v", field, w, g))
	}
	if want.State != got.State {
		diff("state", want.State, got.State)
	}
	if want.Fault != got.Fault {
		diff("fault", want.Fault, got.Fault)
	}
	if want.UserCode != got.UserCode {
		diff("user_code", want.UserCode, got.UserCode)
	}
	if want.PC != got.PC {
		diff("pc", want.PC, got.PC)
	}
	if want.TicksUsed != got.TicksUsed {
		diff("ticks_used", want.TicksUsed, got.TicksUsed)
	}
	if want.Output != got.Output {
		diff("output", hex.EncodeToString(want.Output[:]), hex.EncodeToString(got.Output[:]))
	}
	if want.TraceHash != got.TraceHash {
		diff("trace_hash", hex.EncodeToString(want.TraceHash[:]), hex.EncodeToString(got.TraceHash[:]))
	}
	return diffs
}

// CheckJournal is Check with the input taken from journal j, which must
// record a run of the same program under the same limits. Only the
// journal's deliveries are used (strictly, at their recorded tick counts);
// its result line, if any, is not trusted.
func CheckJournal(p *Proof, img *vm.Image, j *journal.Journal, pub ed25519.PublicKey) error {
	if j.Header.Program != p.Program {
		return &Invalid{fmt.Sprintf("the journal records program %x, the proof is of %x", j.Header.Program, p.Program)}
	}
	jl := host.HeaderLimits(j.Header)
	if jl != p.Limits {
		return &Invalid{fmt.Sprintf("the journal's limits (%s) are not the proof's (%s)", limitsString(jl), limitsString(p.Limits))}
	}
	return Check(p, img, host.NewJournalInput(j), pub)
}

func limitsString(l host.Limits) string {
	return fmt.Sprintf("ticks %d, memory %d, stack %d, output %d, grant %#x", l.Ticks, l.Memory, l.Stack, l.Output, l.Grant)
}
