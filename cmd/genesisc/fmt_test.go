package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/genesis-toolchain/genesis/format"
)

const unformattedGen = `// add adds.
fn add(a: u64,b: u64)->u64 { return a+b; }

fn main() -> void { let x: u64 = add(1, 2); x = x*2; }
`

const formattedGen = `// add adds.
fn add(a: u64, b: u64) -> u64 { return a + b; }

fn main() -> void {
  let x: u64 = add(1, 2);
  x = x * 2;
}
`

const unformattedVVM = `agent a(model = "m")
if true:
    x = [1,2]   # a list
`

const formattedVVM = `agent a(model="m")
if true:
  x = [1, 2]  # a list
`

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// Without flags, fmt prints the formatted files one after the other and
// leaves them as they are.
func TestFmtPrints(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "a.gen", unformattedGen)
	writeFile(t, dir, "b.vvm", unformattedVVM)
	code, out, errs := genesisc(t, dir, "fmt", "a.gen", "b.vvm")
	if code != 0 || errs != "" {
		t.Fatalf("exit %d, stderr %q", code, errs)
	}
	if out != formattedGen+formattedVVM {
		t.Errorf("stdout:\n%s\nwant:\n%s%s", out, formattedGen, formattedVVM)
	}
	if readFile(t, filepath.Join(dir, "a.gen")) != unformattedGen {
		t.Error("fmt without -w changed the file")
	}
}

// -l lists the files whose formatting differs, -d prints the diff, and
// --check fails (exit 1) naming them, all without writing anything.
func TestFmtListDiffCheck(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "a.gen", unformattedGen)
	writeFile(t, dir, "ok.gen", formattedGen)
	code, out, errs := genesisc(t, dir, "fmt", "-l", "a.gen", "ok.gen")
	if code != 0 || out != "a.gen\n" || errs != "" {
		t.Errorf("-l: exit %d, stdout %q, stderr %q", code, out, errs)
	}
	code, out, errs = genesisc(t, dir, "fmt", "-d", "a.gen", "ok.gen")
	wantDiff := "--- a.gen.orig\n+++ a.gen\n@@ -1,4 +1,7 @@\n // add adds.\n-fn add(a: u64,b: u64)->u64 { return a+b; }\n+fn add(a: u64, b: u64) -> u64 { return a + b; }\n \n-fn main() -> void { let x: u64 = add(1, 2); x = x*2; }\n+fn main() -> void {\n+  let x: u64 = add(1, 2);\n+  x = x * 2;\n+}\n"
	if code != 0 || out != wantDiff || errs != "" {
		t.Errorf("-d: exit %d, stderr %q, stdout:\n%s\nwant:\n%s", code, errs, out, wantDiff)
	}
	code, out, errs = genesisc(t, dir, "fmt", "--check", "a.gen", "ok.gen")
	if code != 1 || out != "" || !strings.Contains(errs, "a.gen: not formatted") || strings.Contains(errs, "ok.gen") {
		t.Errorf("--check: exit %d, stdout %q, stderr %q", code, out, errs)
	}
	if code, out, errs := genesisc(t, dir, "fmt", "--check", "ok.gen"); code != 0 || out != "" || errs != "" {
		t.Errorf("--check on a formatted file: exit %d, stdout %q, stderr %q", code, out, errs)
	}
	if readFile(t, filepath.Join(dir, "a.gen")) != unformattedGen {
		t.Error("-l, -d or --check changed the file")
	}
}

// -w rewrites the files whose formatting differs, keeping their
// permissions, and through a symbolic link the file it names; a second
// run has nothing to do.
func TestFmtWrite(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "a.gen", unformattedGen)
	writeFile(t, dir, "b.vvm", unformattedVVM)
	if err := os.Chmod(filepath.Join(dir, "a.gen"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("b.vvm", filepath.Join(dir, "link.vvm")); err != nil {
		t.Fatal(err)
	}
	code, out, errs := genesisc(t, dir, "fmt", "-w", "-l", "a.gen", "link.vvm")
	if code != 0 || out != "a.gen\nlink.vvm\n" || errs != "" {
		t.Fatalf("-w -l: exit %d, stdout %q, stderr %q", code, out, errs)
	}
	if got := readFile(t, filepath.Join(dir, "a.gen")); got != formattedGen {
		t.Errorf("a.gen after -w:\n%s", got)
	}
	if got := readFile(t, filepath.Join(dir, "b.vvm")); got != formattedVVM {
		t.Errorf("b.vvm after -w through link.vvm:\n%s", got)
	}
	if fi, err := os.Lstat(filepath.Join(dir, "link.vvm")); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Errorf("link.vvm is no longer a symbolic link: %v", err)
	}
	if fi, err := os.Stat(filepath.Join(dir, "a.gen")); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("a.gen's permissions after -w: %v, %v", fi.Mode(), err)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 3 {
		t.Errorf("-w left files behind: %v", entries)
	}
	if code, out, errs := genesisc(t, dir, "fmt", "-w", "-l", "a.gen", "b.vvm"); code != 0 || out != "" || errs != "" {
		t.Errorf("second -w -l: exit %d, stdout %q, stderr %q", code, out, errs)
	}
}

// A file with errors gets the compiler's diagnostics, with the source
// line and a caret, and is left as it is; the other files are formatted.
func TestFmtSyntaxError(t *testing.T) {
	dir := t.TempDir()
	bad := "fn main() -> void {\n  let x: u64 = ;\n}\n"
	writeFile(t, dir, "bad.gen", bad)
	writeFile(t, dir, "bad.vvm", "if x\n  y = 1\n")
	writeFile(t, dir, "a.gen", unformattedGen)
	code, out, errs := genesisc(t, dir, "fmt", "-w", "bad.gen", "bad.vvm", "a.gen")
	if code != 1 || out != "" {
		t.Errorf("exit %d, stdout %q", code, out)
	}
	for _, want := range []string{"bad.gen:2:16: error[0x0800]:", "  let x: u64 = ;\n", "^", "bad.vvm:1:5: error[E001]:"} {
		if !strings.Contains(errs, want) {
			t.Errorf("stderr lacks %q:\n%s", want, errs)
		}
	}
	if readFile(t, filepath.Join(dir, "bad.gen")) != bad {
		t.Error("bad.gen was changed")
	}
	if readFile(t, filepath.Join(dir, "a.gen")) != formattedGen {
		t.Error("a.gen, after a file with errors, was not formatted")
	}
}

// Files fmt cannot format are errors (exit 1) that say why; a wrong
// command line is exit 2.
func TestFmtUsage(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "a.spell", "spell x\n")
	writeFile(t, dir, "a.txt", "x\n")
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"fmt", "a.txt"}, 1, "a.txt: no formatter for .txt files (fmt formats " + strings.Join(format.Extensions(), ", ") + ")"},
		{[]string{"fmt", "a.spell"}, 1, "a.spell: formatting Grimoire (.spell) is not supported yet"}, // until it is
		{[]string{"fmt", "missing.gen"}, 1, "missing.gen: no such file or directory"},
		{[]string{"fmt"}, 2, "no input files"},
		{[]string{"fmt", "-w", "--check", "a.txt"}, 2, "-w and --check do not go together"},
	} {
		if slices.Contains(c.args, "a.spell") && slices.Contains(format.Extensions(), ".spell") {
			continue
		}
		code, _, errs := genesisc(t, dir, c.args...)
		if code != c.code || !strings.Contains(errs, c.want) {
			t.Errorf("genesisc %s: exit %d, stderr %q; want exit %d and %q", strings.Join(c.args, " "), code, errs, c.code, c.want)
		}
	}
}
