package golang_test

import (
	"os"
	"os/exec"
	"path/filepath"
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
	m, diags := ir.Parse("neg.ir", []byte(src))
	if diags.HasErrors() {
		t.Fatal(diags.Error())
	}
	if diags := ir.Verify(m); diags.HasErrors() {
		t.Fatal(diags.Error())
	}
	files, diags := golang.GenerateStandalone(m, golang.StandaloneOptions{Source: "neg.ir"})
	if diags.HasErrors() {
		t.Fatal(diags.Error())
	}
	dir := t.TempDir()
	for _, f := range files {
		if err := os.WriteFile(filepath.Join(dir, f.Name), f.Data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	bin := filepath.Join(dir, "neg")
	build := exec.Command("go", "build", "-o", bin, ".")
	build.Dir = dir
	build.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GOWORK=off")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	got, err := exec.Command(bin).Output()
	if err != nil || string(got) != "OK\n" {
		t.Errorf("the program printed %q (%v), want \"OK\\n\"", got, err)
	}
}
