package proof

import (
	"bytes"
	"crypto/ed25519"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	bc "github.com/genesis-toolchain/genesis/forge/bytecode"
	"github.com/genesis-toolchain/genesis/forge/host"
	"github.com/genesis-toolchain/genesis/forge/journal"
	"github.com/genesis-toolchain/genesis/forge/vm"
)

// echo4 receives up to 4 bytes on channel 2, sends 4 bytes back on
// channel 0 and halts.
func echo4(t *testing.T) *vm.Image {
	var code []byte
	for _, in := range []bc.Inst{
		{Op: bc.LI, A: 1, Imm: 0x1000},
		{Op: bc.RECV, A: 1, C: 2, Imm: 4},
		{Op: bc.SEND, A: 1, C: 0, Imm: 4},
		{Op: bc.HALT},
	} {
		code = in.Append(code)
	}
	img, err := vm.NewImage(&bc.Program{Code: code})
	if err != nil {
		t.Fatal(err)
	}
	return img
}

func testKey() ed25519.PrivateKey { return ed25519.NewKeyFromSeed(bytes.Repeat([]byte{7}, 32)) }

var limits = host.Limits{Ticks: 1000, Memory: 1 << 16, Stack: 1024}

// prove runs img on input and returns its signed proof.
func prove(t *testing.T, img *vm.Image, input string) *Proof {
	t.Helper()
	r, err := host.Run(img, host.Options{Limits: limits, Trace: true, Input: host.NewStdin(strings.NewReader(input))})
	if err != nil {
		t.Fatal(err)
	}
	p, err := New(img.Hash(), limits, r)
	if err != nil {
		t.Fatal(err)
	}
	p.Sign(testKey())
	return p
}

func TestProveAndCheck(t *testing.T) {
	img := echo4(t)
	p := prove(t, img, "abcd")
	if p.Limits.Grant != vm.DefaultGrant || p.State != vm.Halted || p.TicksUsed != 8 {
		t.Errorf("proof %+v", p)
	}
	if err := p.VerifySignature(); err != nil {
		t.Fatal(err)
	}
	parsed, err := Parse(p.JSON())
	if err != nil {
		t.Fatalf("%v\n%s", err, p.JSON())
	}
	if !bytes.Equal(parsed.JSON(), p.JSON()) || !bytes.Equal(parsed.Message(), p.Message()) {
		t.Errorf("JSON round trip changed the proof:\n%s\n%s", parsed.JSON(), p.JSON())
	}
	if len(p.Message()) != messageSize {
		t.Errorf("message is %d bytes, want %d", len(p.Message()), messageSize)
	}
	pub := testKey().Public().(ed25519.PublicKey)
	if err := Check(parsed, img, host.NewStdin(strings.NewReader("abcd")), pub); err != nil {
		t.Errorf("valid proof rejected: %v", err)
	}
	// Other input bytes: the delivered chunk, hence the input hash, differ.
	err = Check(parsed, img, host.NewStdin(strings.NewReader("abce")), nil)
	var inv *Invalid
	if !errors.As(err, &inv) || !strings.Contains(err.Error(), "the input differs") {
		t.Errorf("different input: %v", err)
	}
}

func TestTampering(t *testing.T) {
	img := echo4(t)
	good := prove(t, img, "abcd")
	input := func() host.Input { return host.NewStdin(strings.NewReader("abcd")) }
	for _, tc := range []struct {
		name string
		edit func(p *Proof)
		want string
	}{
		{"ticks", func(p *Proof) { p.TicksUsed++ }, "the signature does not match"},
		{"signature", func(p *Proof) { p.Signature[0] ^= 1 }, "the signature does not match"},
		{"key", func(p *Proof) { p.PublicKey[0] ^= 1 }, "the signature does not match"},
		{"limits", func(p *Proof) { p.Limits.Ticks = 7 }, "the signature does not match"},
		{"re-signed lie", func(p *Proof) { p.TicksUsed++; p.Sign(testKey()) }, "ticks_used: proof says 9, re-execution gives 8"},
		{"re-signed output", func(p *Proof) { p.Output[0] ^= 1; p.Sign(testKey()) }, "output: proof says"},
		{"re-signed program", func(p *Proof) { p.Program[0] ^= 1; p.Sign(testKey()) }, "the proof is of program"},
		{"re-signed with ticks too few", func(p *Proof) { p.Limits.Ticks = 5; p.Sign(testKey()) }, "state: proof says HALTED, re-execution gives FAULTED; fault: proof says NONE, re-execution gives OUT_OF_TICKS"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := Parse(good.JSON())
			if err != nil {
				t.Fatal(err)
			}
			tc.edit(p)
			err = Check(p, img, input(), nil)
			var inv *Invalid
			if !errors.As(err, &inv) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("got %v, want an invalid proof mentioning %q", err, tc.want)
			}
		})
	}
	_, other, _ := ed25519.GenerateKey(nil)
	p := prove(t, img, "abcd")
	p.Sign(other)
	err := Check(p, img, input(), testKey().Public().(ed25519.PublicKey))
	if err == nil || !strings.Contains(err.Error(), "not by the given public key") {
		t.Errorf("foreign key: %v", err)
	}
}

func TestCheckJournal(t *testing.T) {
	img := echo4(t)
	var buf bytes.Buffer
	w, err := journal.NewWriter(&buf, limits.Header(img.Hash()))
	if err != nil {
		t.Fatal(err)
	}
	r, err := host.Run(img, host.Options{Limits: limits, Trace: true, Input: host.NewStdin(strings.NewReader("wxyz")), Recorder: w})
	if err != nil {
		t.Fatal(err)
	}
	w.Finish(r.End())
	j, err := journal.Read(&buf)
	if err != nil {
		t.Fatal(err)
	}
	p, _ := New(img.Hash(), limits, r)
	p.Sign(testKey())
	if err := CheckJournal(p, img, j, nil); err != nil {
		t.Errorf("valid proof with journal rejected: %v", err)
	}
	j.Deliveries[0].Data = []byte("wxyZ")
	if err := CheckJournal(p, img, j, nil); err == nil || !strings.Contains(err.Error(), "the input differs") {
		t.Errorf("tampered journal: %v", err)
	}
	j.Deliveries[0].Ticks = 0
	if err := CheckJournal(p, img, j, nil); err == nil || !strings.Contains(err.Error(), "the journal does not replay") {
		t.Errorf("tampered journal ticks: %v", err)
	}
	j.Header.Ticks++
	if err := CheckJournal(p, img, j, nil); err == nil || !strings.Contains(err.Error(), "limits") {
		t.Errorf("journal with other limits: %v", err)
	}
}

func TestFaultedAndBlocked(t *testing.T) {
	var code []byte
	code = bc.Inst{Op: bc.FAULT, Imm: 42}.Append(code)
	img, _ := vm.NewImage(&bc.Program{Code: code})
	p := prove(t, img, "")
	if !strings.Contains(string(p.JSON()), `"fault": "USER_FAULT"`) {
		t.Errorf("proof of a fault:\n%s", p.JSON())
	}
	if q, err := Parse(p.JSON()); err != nil || q.UserCode != 42 || q.Fault != vm.UserFault {
		t.Errorf("parse: %+v %v", q, err)
	}
	if _, err := New(img.Hash(), limits, &host.Result{State: vm.Blocked}); err == nil {
		t.Error("a blocked run was proven")
	}
}

func TestParseErrors(t *testing.T) {
	good := string(prove(t, echo4(t), "abcd").JSON())
	for _, tc := range []struct{ name, old, new, want string }{
		{"unknown field", `"version": 3,`, `"version": 3, "x": 2,`, "unknown field"},
		{"version", `"version": 3`, `"version": 4`, "unsupported proof version 4, want 2 to 3"},
		{"version 1", `"version": 3`, `"version": 1`, "proof version 1 was made before SEND and RECV paid for the bytes they move"},
		{"no output quota", `"output": 0,`, ``, `"output" (the output quota, 0 for none) is required`},
		{"state", `"state": "HALTED"`, `"state": "BLOCKED"`, "a proof is of a HALTED or FAULTED run"},
		{"fault on halt", `"fault": null`, `"fault": "USER_FAULT"`, "a HALTED run has fault null"},
		{"short hash", `"program": "`, `"program": "0`, "bad program"},
		{"grant", `"grant": [`, `"grant": [17,`, "bad limits.grant"},
		{"signature", `"forge_sig": "`, `"forge_sig": "zz`, "bad forge_sig"},
	} {
		text := strings.Replace(good, tc.old, tc.new, 1)
		if text == good {
			t.Fatalf("%s: the edit changed nothing", tc.name)
		}
		if _, err := Parse([]byte(text)); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v, want %q", tc.name, err, tc.want)
		}
	}
}

func TestKeys(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "key")
	key, err := GenerateKey(nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := WriteKeyPair(path, testKey(), false); err != nil {
		t.Fatal(err)
	}
	if err := WriteKeyPair(path, key, false); err == nil || !strings.Contains(err.Error(), "already exists") {
		t.Errorf("overwrote a key: %v", err)
	}
	if err := WriteKeyPair(path, key, true); err != nil {
		t.Errorf("--force: %v", err)
	}
	privPEM, _ := os.ReadFile(path)
	pubPEM, _ := os.ReadFile(path + ".pub")
	priv, err := ParsePrivateKey(privPEM)
	if err != nil || !priv.Equal(key) {
		t.Fatalf("private key: %v", err)
	}
	pub, err := ParsePublicKey(pubPEM)
	if err != nil || !pub.Equal(key.Public()) {
		t.Fatalf("public key: %v", err)
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o600 {
		t.Errorf("private key mode %v", fi.Mode().Perm())
	}
	if _, err := ParsePublicKey(privPEM); err == nil {
		t.Error("a private key read as a public key")
	}
	if _, err := ParsePrivateKey([]byte("hello")); err == nil {
		t.Error("garbage read as a key")
	}
}

// meteredEcho receives up to 400 bytes on channel 2 and sends them back
// on channel 0 three times, then halts: a run whose ticks depend on the
// bytes it moves, and which a 1000-byte output quota stops at the third
// SEND.
func meteredEcho(t *testing.T) *vm.Image {
	var code []byte
	for _, in := range []bc.Inst{
		{Op: bc.LI, A: 1, Imm: 0x1000},
		{Op: bc.RECV, A: 1, C: 2, Imm: 400},
		{Op: bc.SEND, A: 1, C: 0, Imm: 400},
		{Op: bc.SEND, A: 1, C: 0, Imm: 400},
		{Op: bc.SEND, A: 1, C: 0, Imm: 400},
		{Op: bc.HALT},
	} {
		code = in.Append(code)
	}
	img, err := vm.NewImage(&bc.Program{Code: code})
	if err != nil {
		t.Fatal(err)
	}
	return img
}

// A proof of a run metered by the bytes it moves and stopped by its
// output quota checks, with its input or its journal; the quota is part
// of what is signed, and a proof claiming another quota does not
// re-execute to the same end.
func TestProofOfMeteredRun(t *testing.T) {
	img := meteredEcho(t)
	lim := host.Limits{Ticks: 1000, Memory: 1 << 16, Stack: 1024, Output: 1000, Grant: vm.DefaultGrant}
	input := strings.Repeat("x", 320) // RECV: 3 + 40 ticks; each SEND: 3 + 50
	var buf bytes.Buffer
	w, err := journal.NewWriter(&buf, lim.Header(img.Hash()))
	if err != nil {
		t.Fatal(err)
	}
	r, err := host.Run(img, host.Options{Limits: lim, Trace: true, Input: host.NewStdin(strings.NewReader(input)), Recorder: w})
	if err != nil {
		t.Fatal(err)
	}
	if r.State != vm.Faulted || r.Fault != vm.OutputQuota || r.Ticks != 1+43+53+53+53 || r.PC != 40 {
		t.Fatalf("run: %s, want OUTPUT_QUOTA at pc 0x28 after %d ticks", r.Summary(), 1+43+53+53+53)
	}
	w.Finish(r.End())
	j, err := journal.Read(&buf)
	if err != nil {
		t.Fatal(err)
	}
	p, err := New(img.Hash(), lim, r)
	if err != nil {
		t.Fatal(err)
	}
	p.Sign(testKey())
	q, err := Parse(p.JSON())
	if err != nil {
		t.Fatal(err)
	}
	if q.Limits != lim || host.HeaderLimits(j.Header) != lim {
		t.Errorf("limits %+v in the proof, %+v in the journal, want %+v", q.Limits, host.HeaderLimits(j.Header), lim)
	}
	if err := Check(q, img, host.NewStdin(strings.NewReader(input)), nil); err != nil {
		t.Errorf("valid proof rejected: %v", err)
	}
	if err := CheckJournal(q, img, j, nil); err != nil {
		t.Errorf("valid proof rejected with its journal: %v", err)
	}
	if _, err := host.Replay(img, j, nil, nil); err != nil {
		t.Errorf("the journal does not replay: %v", err)
	}

	q.Limits.Output = 0
	if err := q.VerifySignature(); err == nil {
		t.Error("the signature does not cover the output quota")
	}
	q.Sign(testKey())
	err = Check(q, img, host.NewStdin(strings.NewReader(input)), nil)
	if err == nil || !strings.Contains(err.Error(), "re-execution differs") || !strings.Contains(err.Error(), "fault: proof says OUTPUT_QUOTA, re-execution gives NONE") {
		t.Errorf("a proof claiming no quota: %v", err)
	}
}

// pollEcho polls channel 2 before it reads: it stores what POLL says
// next to the (up to) 4 bytes it then receives and sends all 12 bytes.
func pollEcho(t *testing.T) *vm.Image {
	var code []byte
	for _, in := range []bc.Inst{
		{Op: bc.LI, A: 1, Imm: 0x1000},
		{Op: bc.POLL, A: 2, C: 2},
		{Op: bc.STOREW, A: 2, B: 1, Imm: 4},
		{Op: bc.RECV, A: 1, C: 2, Imm: 4},
		{Op: bc.SEND, A: 1, C: 0, Imm: 12},
		{Op: bc.HALT},
	} {
		code = in.Append(code)
	}
	img, err := vm.NewImage(&bc.Program{Code: code})
	if err != nil {
		t.Fatal(err)
	}
	return img
}

// TestProvePolling proves a run whose first instruction of input is a
// POLL that waits for the host: the proof checks against the same input
// and against the run's journal, with the same ticks.
func TestProvePolling(t *testing.T) {
	img := pollEcho(t)
	var buf bytes.Buffer
	w, err := journal.NewWriter(&buf, limits.Header(img.Hash()))
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	r, err := host.Run(img, host.Options{Limits: limits, Trace: true, Input: host.NewStdin(strings.NewReader("hello")), Recorder: w, Stdout: &out})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Finish(r.End()); err != nil {
		t.Fatal(err)
	}
	if want := "hell\x05\x00\x00\x00\x00\x00\x00\x00"; out.String() != want || r.PollWaits != 1 {
		t.Fatalf("output %q, %d poll waits; want %q, 1", out.String(), r.PollWaits, want)
	}
	p, err := New(img.Hash(), limits, r)
	if err != nil {
		t.Fatal(err)
	}
	p.Sign(testKey())
	parsed, err := Parse(p.JSON())
	if err != nil || parsed.Version != Version {
		t.Fatalf("parse: %v, %+v", err, parsed)
	}
	if err := Check(parsed, img, host.NewStdin(strings.NewReader("hello")), nil); err != nil {
		t.Errorf("proof of a polling run rejected: %v", err)
	}
	j, err := journal.Read(bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	if len(j.Deliveries) != 1 || j.Deliveries[0].Ticks != 1 {
		t.Errorf("deliveries %+v, want one at 1 tick (at the POLL)", j.Deliveries)
	}
	if err := CheckJournal(parsed, img, j, nil); err != nil {
		t.Errorf("proof of a polling run rejected with its journal: %v", err)
	}
	// The journal recorded before POLL waited cannot replay the run, and
	// says why.
	j.Version = 2
	err = CheckJournal(parsed, img, j, nil)
	if err == nil || !strings.Contains(err.Error(), "the journal does not replay: the program waits at a POLL of channel 2, which has no message queued, at 1 tick: journal version 2") {
		t.Errorf("version 2 journal of a polling run: %v", err)
	}
}

// TestVersion2 checks proofs of the version before POLL waited: one of a
// run that never polled an empty channel still checks (its signature
// covers the version 2 domain), one of a run that did is refused with
// the reason.
func TestVersion2(t *testing.T) {
	old := func(img *vm.Image, input string) *Proof {
		p := prove(t, img, input)
		p.Version = 2
		p.Sign(testKey())
		q, err := Parse(p.JSON())
		if err != nil || q.Version != 2 || !bytes.Equal(q.Message()[:len(Domain)], []byte("forge execution proof v2\x00")) {
			t.Fatalf("parse: %v, %+v", err, q)
		}
		return q
	}
	img := echo4(t)
	if err := Check(old(img, "abcd"), img, host.NewStdin(strings.NewReader("abcd")), nil); err != nil {
		t.Errorf("version 2 proof of a run without a waiting POLL: %v", err)
	}
	img = pollEcho(t)
	err := Check(old(img, "abcd"), img, host.NewStdin(strings.NewReader("abcd")), nil)
	var inv *Invalid
	if !errors.As(err, &inv) || !strings.Contains(err.Error(), "proof version 2 was made when a POLL of an input channel with no message queued gave 0 without waiting") {
		t.Errorf("version 2 proof of a polling run: %v", err)
	}
	// A version 3 signature does not verify as version 2's.
	p := prove(t, img, "abcd")
	p.Version = 2
	if err := p.VerifySignature(); err == nil {
		t.Error("a version 3 signature verified over the version 2 domain")
	}
}
