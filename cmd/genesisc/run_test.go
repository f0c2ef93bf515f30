package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/genesis-toolchain/genesis/forge/bytecode"
	"github.com/genesis-toolchain/genesis/forge/vm"
)

const hello = `.data
msg: .ascii "hi\n"
.text
    LI   r1, msg
    SEND 0, r1, 3
    HALT
`

// genesisc runs the command in-process in dir and returns its exit status
// and outputs.
func genesisc(t *testing.T, dir string, args ...string) (int, string, string) {
	t.Helper()
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Chdir(dir); err != nil {
		t.Fatal(err)
	}
	defer os.Chdir(wd)
	var stdout, stderr bytes.Buffer
	code := run(append([]string{"genesisc"}, args...), &stdout, &stderr)
	return code, stdout.String(), stderr.String()
}

func writeFile(t *testing.T, dir, name, text string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestBuildWritesAVerifiedProgram(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "hello.fasm", hello)
	code, _, stderr := genesisc(t, dir, "build", "hello.fasm")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	data, err := os.ReadFile(filepath.Join(dir, "hello.frgp"))
	if err != nil {
		t.Fatal(err)
	}
	p, err := bytecode.Decode(data)
	if err != nil {
		t.Fatalf("the output does not load: %v", err)
	}
	if string(p.Data) != "hi\n" {
		t.Errorf("data = %q, want %q", p.Data, "hi\n")
	}

	code, _, stderr = genesisc(t, dir, "build", "-o", "out.frgp", "hello.fasm")
	if code != 0 {
		t.Fatalf("build -o: exit %d: %s", code, stderr)
	}
	again, err := os.ReadFile(filepath.Join(dir, "out.frgp"))
	if err != nil || !bytes.Equal(again, data) {
		t.Errorf("build -o wrote different bytes (err %v)", err)
	}
}

func TestEmitAsmPrintsAssemblyThatReassembles(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "hello.fasm", hello)
	code, stdout, stderr := genesisc(t, dir, "build", "--emit", "asm", "hello.fasm")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if !strings.Contains(stdout, "SEND   0, r1, 3") {
		t.Errorf("--emit asm output lacks the SEND:\n%s", stdout)
	}
	writeFile(t, dir, "again.fasm", stdout)
	if code, _, stderr := genesisc(t, dir, "build", "hello.fasm"); code != 0 {
		t.Fatal(stderr)
	}
	if code, _, stderr := genesisc(t, dir, "build", "again.fasm"); code != 0 {
		t.Fatal(stderr)
	}
	a, _ := os.ReadFile(filepath.Join(dir, "hello.frgp"))
	b, _ := os.ReadFile(filepath.Join(dir, "again.frgp"))
	if !bytes.Equal(a, b) {
		t.Error("the emitted assembly does not reassemble to the same program")
	}
}

func TestDiagnosticsAndExitStatus(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "bad.fasm", "    ADD r1, r2\n    HALT\n")
	writeFile(t, dir, "prog.vvm", "agent a:\n  model: x\n")
	writeFile(t, dir, "prog.spell", "spell x:\n")
	writeFile(t, dir, "prog.cob", "IDENTIFICATION DIVISION.\n")
	writeFile(t, dir, "hello.fasm", hello)
	for _, c := range []struct {
		name   string
		args   []string
		code   int
		stderr []string
	}{
		{"syntax error", []string{"build", "bad.fasm"}, 1,
			[]string{"bad.fasm:1:5: error[A003]:", "    ADD r1, r2\n", "    ^\n"}},
		{"check reports the same", []string{"check", "bad.fasm"}, 1, []string{"bad.fasm:1:5: error[A003]:"}},
		{"check of a good file", []string{"check", "hello.fasm"}, 0, nil},
		{"missing file", []string{"build", "nope.fasm"}, 1, []string{"nope.fasm: error[E0001]: cannot read"}},
		{"no frontend", []string{"build", "prog.cob"}, 1, []string{`no frontend for ".cob" files`}},
		{"a Grimoire syntax error", []string{"build", "prog.spell"}, 1, []string{"prog.spell:1:8: error[G001]:"}},
		{"a VVM syntax error", []string{"build", "prog.vvm"}, 1, []string{"prog.vvm:1:8: error[E001]:"}},
		{"no inputs", []string{"build"}, 2, []string{"no input files"}},
		{"unknown emit", []string{"build", "--emit", "llvm", "hello.fasm"}, 2, []string{`unknown --emit "llvm"`}},
		{"unknown target", []string{"build", "--target", "wasm", "hello.fasm"}, 2, []string{`unknown --target "wasm"`}},
		{"unknown flag", []string{"build", "--frobnicate", "hello.fasm"}, 2, []string{"frobnicate"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			code, _, stderr := genesisc(t, dir, c.args...)
			if code != c.code {
				t.Errorf("exit %d, want %d; stderr:\n%s", code, c.code, stderr)
			}
			for _, want := range c.stderr {
				if !strings.Contains(stderr, want) {
					t.Errorf("stderr lacks %q:\n%s", want, stderr)
				}
			}
		})
	}
	if _, err := os.Stat(filepath.Join(dir, "bad.frgp")); err == nil {
		t.Error("a failed build wrote an output file")
	}
}

// A module in printed IR: main returns the sum 1 + 2 + ... + 10 through a
// var, which mem2reg promotes and constfold cannot finish (it is a loop).
const sumIR = `func @main() -> i64 {
  var $s: i64
  %zero = const i64 0
  %one = const i64 1
  %ten = const i64 10
  %r = loop ^L(%i: i64 = %one) -> i64 {
    %s = get $s
    %s2 = add %s, %i
    set $s, %s2
    %done = eq %i, %ten
    if %done {
      break ^L %s2
    }
    %next = add %i, %one
    continue ^L %next
  }
  return %r
}
`

func TestIRInputThroughThePipeline(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "sum.ir", sumIR)

	code, stdout, stderr := genesisc(t, dir, "build", "--emit", "ir", "-O0", "sum.ir")
	if code != 0 || !strings.Contains(stdout, "get $s") {
		t.Fatalf("-O0 --emit ir: exit %d, the var should stay:\n%s%s", code, stdout, stderr)
	}
	code, stdout, stderr = genesisc(t, dir, "build", "--emit", "ir", "sum.ir")
	if code != 0 || strings.Contains(stdout, "get $s") {
		t.Fatalf("-O2 --emit ir: exit %d, mem2reg should have removed the var:\n%s%s", code, stdout, stderr)
	}
	optimized := stdout
	code, stdout, _ = genesisc(t, dir, "build", "--emit", "ir", "--dump-after", "mem2reg", "sum.ir")
	if code != 0 || !strings.HasPrefix(stdout, "; after mem2reg\n") {
		t.Errorf("--dump-after mem2reg: exit %d, output:\n%s", code, stdout)
	}
	// Verifying after every pass changes nothing in a correct pipeline.
	code, stdout, stderr = genesisc(t, dir, "build", "--emit", "ir", "--verify-each", "sum.ir")
	if code != 0 || stdout != optimized {
		t.Errorf("--verify-each: exit %d, output differs from the build without it:\n%s%s", code, stdout, stderr)
	}
	// The required pass runs at -O0, and removes what main does not reach.
	writeFile(t, dir, "unreachable.ir", "func @unused() -> i64 {\n  %c = const i64 1\n  return %c\n}\n\nfunc @main() {\n  return\n}\n")
	code, stdout, stderr = genesisc(t, dir, "build", "--emit", "ir", "-O0", "--dump-after", "deadfuncs", "unreachable.ir")
	if want := "; after deadfuncs\nfunc @main() {\n  return\n}\nfunc @main() {\n  return\n}\n"; code != 0 || stdout != want {
		t.Errorf("-O0 --dump-after deadfuncs: exit %d, output:\n%s%s\nwant:\n%s", code, stdout, stderr, want)
	}
	code, stdout, stderr = genesisc(t, dir, "build", "--emit", "asm", "sum.ir")
	if code != 0 || !strings.Contains(stdout, "HALT") {
		t.Errorf("--emit asm: exit %d:\n%s%s", code, stdout, stderr)
	}
	if code, _, stderr := genesisc(t, dir, "build", "sum.ir"); code != 0 {
		t.Fatalf("build: exit %d: %s", code, stderr)
	}
	data, err := os.ReadFile(filepath.Join(dir, "sum.frgp"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := bytecode.Decode(data); err != nil {
		t.Errorf("the compiled program does not load: %v", err)
	}

	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"build", "--dump-after", "nosuch", "sum.ir"}, 2, `no pass "nosuch"`},
		{[]string{"build", "-O0", "-O2", "sum.ir"}, 2, "contradict"},
		{[]string{"build", "-O0", "--dump-after", "mem2reg", "sum.ir"}, 2, "does not run at -O0"},
		{[]string{"build", "--emit", "ir", "sum.fasm"}, 1, "cannot read"},
	} {
		code, _, stderr := genesisc(t, dir, c.args...)
		if code != c.code || !strings.Contains(stderr, c.want) {
			t.Errorf("%v: exit %d, want %d with %q; stderr:\n%s", c.args, code, c.code, c.want, stderr)
		}
	}
	writeFile(t, dir, "bad.ir", "func @main() -> i64 {\n  %x = add %y, %y\n  return %x\n}\n")
	if code, _, stderr := genesisc(t, dir, "build", "bad.ir"); code != 1 || !strings.Contains(stderr, "bad.ir:2:") {
		t.Errorf("a bad IR file: exit %d, stderr:\n%s", code, stderr)
	}
}

// The spec's §10 example, verbatim.
const factorialGen = `fn write_u64(n: u64) -> void {
  let mut buf: [u8; 20] = [0y00; 20];
  let mut i: u64 = 20;
  let mut val: u64 = n;

  if val == 0 {
    let zero: u8 = 48;
    asm (in r0 = &zero) { SEND 0, r0, 1 };
    return;
  };

  while val > 0 {
    i = i - 1;
    buf[i] = (val % 10 + 48) as u8;
    val = val / 10;
  };

  while i < 20 {
    asm (in r0 = &buf[i]) { SEND 0, r0, 1 };
    i = i + 1;
  };
}

fn factorial(n: u64) -> u64 {
  if n <= 1 {
    return 1;
  };
  return n * factorial(n - 1);
}

fn main() -> void {
  let result: u64 = factorial(10);
  write_u64(result);
}
`

type capture struct{ out []byte }

func (c *capture) Send(ch uint8, msg []byte) {
	if ch == 0 {
		c.out = append(c.out, msg...)
	}
}

func TestGenesisFactorialRunsAtEveryLevel(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "fact.gen", factorialGen)
	for _, level := range []string{"-O0", "-O2"} {
		out := "fact" + level + ".frgp"
		if code, _, stderr := genesisc(t, dir, "build", level, "-o", out, "fact.gen"); code != 0 {
			t.Fatalf("%s: exit %d: %s", level, code, stderr)
		}
		data, err := os.ReadFile(filepath.Join(dir, out))
		if err != nil {
			t.Fatal(err)
		}
		p, err := bytecode.Decode(data)
		if err != nil {
			t.Fatalf("%s: %v", level, err)
		}
		img, err := vm.NewImage(p)
		if err != nil {
			t.Fatal(err)
		}
		var c capture
		m := vm.New(img, vm.Config{Ticks: 1 << 30, Memory: 16 << 20, Stack: 64 << 10}, &c)
		if st := m.Run(); st != vm.Halted || string(c.out) != "3628800" {
			t.Errorf("%s: %v %v, stdout %q; want HALTED and 3628800", level, st, m.Fault(), c.out)
		}
	}
	writeFile(t, dir, "bad.gen", "fn main() -> void {\n  let x: u8 = true;\n}\n")
	if code, _, stderr := genesisc(t, dir, "check", "bad.gen"); code != 1 || !strings.Contains(stderr, "bad.gen:2:") || !strings.Contains(stderr, "error[0x0801]") {
		t.Errorf("a type error: exit %d, stderr:\n%s", code, stderr)
	}
}
