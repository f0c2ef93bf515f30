package golang_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/genesis-toolchain/genesis/backend/golang"
	"github.com/genesis-toolchain/genesis/ir"
)

// TestNegativeOffset: loads and stores at negative constant offsets (an
// address is a uint64 in Go: base + -8 would not compile) translate, and
// reach the right bytes. The program copies "OK\n" through offsets -8,
// -16 and a 16-bit -18 below a heap address, then sends it.
func TestNegativeOffset(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip(err)
	}
	const src = `func @main() {
  %base = const i64 1048576
  %p = inttoptr %base
  %v = const i64 674639
  store %v, %p, -8
  %w = load i64 %p, -8
  store %w, %p, -16
  %k = load i16 %p, -16
  store %k, %p, -18
  %m18 = const i64 -18
  %a = ptradd %p, %m18
  asm "SEND 0, r0, 2" in(r0 = %a)
  %m14 = const i64 -14
  %nl = ptradd %p, %m14
  asm "SEND 0, r0, 1" in(r0 = %nl)
  return
}
`
	bin := buildStandalone(t, "neg", src)
	got, err := exec.Command(bin).Output()
	if err != nil || string(got) != "OK\n" {
		t.Errorf("the program printed %q (%v), want \"OK\\n\"", got, err)
	}
}

// TestAccessBounds: every load and store width faults INVALID_ADDRESS
// exactly where the Forge Machine does, at the end of the memory quota
// and below the heap, as the inlined access helpers must keep it. One
// program makes a 64-, 32-, 16- and 8-bit load, each ending at a quota
// one byte above the last's (1048573 … 1048576), then stores into its
// own code at address 8; after each access that passes it prints its
// digit. Run under each quota it must print the digits of the accesses
// that fit and then fault.
func TestAccessBounds(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip(err)
	}
	const src = `func @main() {
  %buf = const i64 65536
  %b = inttoptr %buf
  %c0 = const i8 48
  store %c0, %b, 0
  %c1 = const i8 49
  store %c1, %b, 1
  %c2 = const i8 50
  store %c2, %b, 2
  %c3 = const i8 51
  store %c3, %b, 3
  %c4 = const i8 52
  store %c4, %b, 4
  %zero = const i64 0
  %p = inttoptr %zero
  %v64 = load i64 %p, 1048565
  store %v64, %b, 8
  asm "SEND 0, r0, 1" in(r0 = %b)
  %v32 = load i32 %p, 1048570
  store %v32, %b, 16
  %o1 = const i64 1
  %b1 = ptradd %b, %o1
  asm "SEND 0, r0, 1" in(r0 = %b1)
  %v16 = load i16 %p, 1048573
  store %v16, %b, 24
  %o2 = const i64 2
  %b2 = ptradd %b, %o2
  asm "SEND 0, r0, 1" in(r0 = %b2)
  %v8 = load i8 %p, 1048575
  store %v8, %p, 1048575
  %o3 = const i64 3
  %b3 = ptradd %b, %o3
  asm "SEND 0, r0, 1" in(r0 = %b3)
  store %v8, %p, 8
  %o4 = const i64 4
  %b4 = ptradd %b, %o4
  asm "SEND 0, r0, 1" in(r0 = %b4)
  return
}
`
	bin := buildStandalone(t, "bounds", src)
	for _, c := range []struct {
		quota int
		out   string
	}{
		{1048572, ""},
		{1048573, "0"},
		{1048574, "01"},
		{1048575, "012"},
		{1048576, "0123"}, // the store into the code faults
	} {
		cmd := exec.Command(bin, "--memory", strconv.Itoa(c.quota))
		var stderr strings.Builder
		cmd.Stderr = &stderr
		got, err := cmd.Output()
		code := -1
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		}
		if string(got) != c.out || code != 3 || !strings.Contains(stderr.String(), "FAULTED: INVALID_ADDRESS") {
			t.Errorf("--memory %d: printed %q, exit %d, stderr %q; want %q, exit 3, INVALID_ADDRESS", c.quota, got, code, stderr.String(), c.out)
		}
	}
}

// buildStandalone compiles the IR module src (named NAME.ir) with the Go
// target's standalone translation and go build, and returns the binary.
func buildStandalone(t *testing.T, name, src string) string {
	t.Helper()
	m, diags := ir.Parse(name+".ir", []byte(src))
	if diags.HasErrors() {
		t.Fatal(diags.Error())
	}
	if diags := ir.Verify(m); diags.HasErrors() {
		t.Fatal(diags.Error())
	}
	files, diags := golang.GenerateStandalone(m, golang.StandaloneOptions{Source: name + ".ir"})
	if diags.HasErrors() {
		t.Fatal(diags.Error())
	}
	dir := t.TempDir()
	for _, f := range files {
		if err := os.WriteFile(filepath.Join(dir, f.Name), f.Data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	bin := filepath.Join(dir, name)
	build := exec.Command("go", "build", "-o", bin, ".")
	build.Dir = dir
	build.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GOWORK=off")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}
