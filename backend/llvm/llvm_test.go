package llvm_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/genesis-toolchain/genesis/backend/llvm"
	"github.com/genesis-toolchain/genesis/compiler"
	"golang.org/x/tools/txtar"
)

// TestMissingTool: without llc the error says which tool is missing.
func TestMissingTool(t *testing.T) {
	err := llvm.Available(llvm.Tools{LLC: "no-such-llc", CC: "cc"})
	if err == nil || !strings.Contains(err.Error(), "llc") || !strings.Contains(err.Error(), "no-such-llc") {
		t.Errorf("Available = %v, want an error naming llc", err)
	}
	err = llvm.Available(llvm.Tools{LLC: "llc", CC: "no-such-cc"})
	if _, lerr := exec.LookPath("llc"); lerr == nil && (err == nil || !strings.Contains(err.Error(), "cc")) {
		t.Errorf("Available = %v, want an error naming cc", err)
	}
}

// TestFactorial builds examples/factorial.gen with the whole pipeline
// (opt -O2, llc -O2, cc), which the differential test runs at -O0, and
// runs it.
func TestFactorial(t *testing.T) {
	if err := llvm.Available(llvm.Tools{}); err != nil {
		t.Skip(err)
	}
	srcs, diags := compiler.ReadSources([]string{"../../examples/factorial.gen"})
	if diags.HasErrors() {
		t.Fatal(diags.Error())
	}
	out, diags := compiler.Build(srcs, compiler.Options{Target: "native", OptLevel: 2})
	if diags.HasErrors() {
		t.Fatal(diags.Error())
	}
	bin := filepath.Join(t.TempDir(), "factorial")
	if err := llvm.Link(out.LLVM, bin, llvm.Tools{}); err != nil {
		t.Fatal(err)
	}
	got, err := exec.Command(bin).Output()
	if err != nil || string(got) != "3628800" {
		t.Errorf("factorial printed %q (%v), want 3628800", got, err)
	}
}

// TestFault: a store into the program's read-only data faults
// INVALID_ADDRESS with exit status 3, after the output before it.
func TestFault(t *testing.T) {
	if err := llvm.Available(llvm.Tools{}); err != nil {
		t.Skip(err)
	}
	src := `fn main() -> void {
  let b: u8 = 65;
  asm (in r0 = &b) { SEND 0, r0, 1 };
  let p: *mut u8 = 0 as *mut u8;
  *p = 1;
}
`
	got, stderr, status := runNative(t, []compiler.Source{{Name: "f.gen", Data: []byte(src)}})
	if status != 3 || got != "A" || !strings.Contains(stderr, "INVALID_ADDRESS") {
		t.Errorf("printed %q, stderr %q, exit status %d; want A, INVALID_ADDRESS, exit status 3", got, stderr, status)
	}
}

// TestReadModifyWriteFaults: a load and then a store of the same address
// (x[i] += …), where LLVM drops the store's end-of-memory comparison as
// the load's, still faults INVALID_ADDRESS through the whole -O2 pipeline
// when the store falls in the read-only code and data, or past the end of
// memory in a loop, after the output before it.
func TestReadModifyWriteFaults(t *testing.T) {
	if err := llvm.Available(llvm.Tools{}); err != nil {
		t.Skip(err)
	}
	const prelude = `fn main() -> void {
  let b: u8 = 65;
  asm (in r0 = &b) { SEND 0, r0, 1 };
`
	for _, c := range []struct{ name, body string }{
		{"read-only", `  let p: *mut u64 = 8 as *mut u64;
  p[0] = p[0] + 1;
}
`},
		{"end of memory", `  let mut q: u64 = 65536;
  while q > 0 {
    let p: *mut u64 = q as *mut u64;
    p[0] = p[0] + 1;
    q = q + 1048576;
  };
}
`},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, stderr, status := runNative(t, []compiler.Source{{Name: "f.gen", Data: []byte(prelude + c.body)}})
			if status != 3 || got != "A" || stderr != "genesis: FAULTED: INVALID_ADDRESS\n" {
				t.Errorf("printed %q, stderr %q, exit status %d; want A, INVALID_ADDRESS, exit status 3", got, stderr, status)
			}
		})
	}
}

// runNative builds srcs for the native target at -O2, runs the program
// and returns its standard output, standard error and exit status.
func runNative(t *testing.T, srcs []compiler.Source) (stdout, stderr string, status int) {
	t.Helper()
	out, diags := compiler.Build(srcs, compiler.Options{Target: "native", OptLevel: 2})
	if diags.HasErrors() {
		t.Fatal(diags.Error())
	}
	bin := filepath.Join(t.TempDir(), "prog")
	if err := llvm.Link(out.LLVM, bin, llvm.Tools{}); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin)
	var errb strings.Builder
	cmd.Stderr = &errb
	got, err := cmd.Output()
	if ee, ok := err.(*exec.ExitError); ok {
		status = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return string(got), errb.String(), status
}

// TestStackCasesO2 runs stack cases of the conformance suite through the
// whole -O2 pipeline (opt, llc -O2), which the differential test does not
// use: opt may merge calls of functions whose only effect is faulting,
// but must neither drop an unused one that would fault (unused) nor move
// a stack fault across output (push).
func TestStackCasesO2(t *testing.T) {
	if err := llvm.Available(llvm.Tools{}); err != nil {
		t.Skip(err)
	}
	for _, name := range []string{"unused", "push"} {
		t.Run(name, func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join("../../tests/genesis/stack", name+".txtar"))
			if err != nil {
				t.Fatal(err)
			}
			ar := txtar.Parse(data)
			var srcs []compiler.Source
			want := map[string]string{}
			for _, f := range ar.Files {
				if strings.HasSuffix(f.Name, ".gen") {
					srcs = append(srcs, compiler.Source{Name: f.Name, Data: f.Data})
				}
				want[f.Name] = string(f.Data)
			}
			got, stderr, status := runNative(t, srcs)
			wantFault := "genesis: FAULTED: " + strings.TrimSpace(want["out/fault"]) + "\n"
			if status != 3 || got != want["out/stdout"] || stderr != wantFault {
				t.Errorf("printed %q, stderr %q, exit status %d; want %q, %q, exit status 3", got, stderr, status, want["out/stdout"], wantFault)
			}
		})
	}
}

// TestVersionedLoops builds the conformance cases of loop versioning
// (tests/genesis/run/native_versioned_*.txtar) through the whole -O2
// pipeline: each must have a versioned loop (the unchecked copy and its
// test), and must print and end as the case says the Forge Machine does
// — the cases whose test fails (a range past the end of memory, into the
// read-only data, or a loop leaving before the end) run the checked loop
// from the start and fault at the same access, or not at all.
func TestVersionedLoops(t *testing.T) {
	if err := llvm.Available(llvm.Tools{}); err != nil {
		t.Skip(err)
	}
	paths, err := filepath.Glob("../../tests/genesis/run/native_versioned_*.txtar")
	if err != nil || len(paths) < 4 {
		t.Fatalf("want the 4 cases of loop versioning, found %v (%v)", paths, err)
	}
	for _, path := range paths {
		t.Run(filepath.Base(path), func(t *testing.T) {
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			ar := txtar.Parse(data)
			var srcs []compiler.Source
			want := map[string]string{}
			for _, f := range ar.Files {
				if strings.HasSuffix(f.Name, ".gen") {
					srcs = append(srcs, compiler.Source{Name: f.Name, Data: f.Data})
				}
				want[f.Name] = string(f.Data)
			}
			out, diags := compiler.Build(srcs, compiler.Options{Target: "native", OptLevel: 2})
			if diags.HasErrors() {
				t.Fatal(diags.Error())
			}
			if !strings.Contains(out.LLVM, "versioned.") {
				t.Errorf("no loop is versioned in the LLVM module")
			}
			got, stderr, status := runNative(t, srcs)
			wantStatus, wantErr := 0, ""
			if f := strings.TrimSpace(want["out/fault"]); f != "" {
				wantStatus, wantErr = 3, "genesis: FAULTED: "+f+"\n"
			}
			if got != want["out/stdout"] || stderr != wantErr || status != wantStatus {
				t.Errorf("printed %q, stderr %q, exit status %d; want %q, %q, exit status %d", got, stderr, status, want["out/stdout"], wantErr, wantStatus)
			}
		})
	}
}
