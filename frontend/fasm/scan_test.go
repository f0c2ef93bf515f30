package fasm

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/genesis-toolchain/genesis/diag"
)

// slowLine parses one line with the ANTLR parser only.
func slowLine(text string) (line, diag.List) {
	var diags diag.List
	return parseLines("t.fasm", []byte(text), &diags, false)[0], diags
}

// quickLine parses one line with the fast path only.
func quickLine(text string) (line, bool) {
	lp := &lineParser{file: "t.fasm", line: 1}
	return lp.quickScan(text)
}

var lineCmp = cmp.AllowUnexported(line{}, statement{}, token{}, operand{})

// checkQuick fails if quickScan accepts text and reads it otherwise than
// the ANTLR parser.
func checkQuick(t *testing.T, text string) (accepted bool) {
	t.Helper()
	got, ok := quickLine(text)
	if !ok {
		return false
	}
	want, diags := slowLine(text)
	if len(diags) > 0 {
		t.Fatalf("quickScan accepted %q, which has a syntax error: %v", text, diags)
	}
	if d := cmp.Diff(want, got, lineCmp); d != "" {
		t.Fatalf("quickScan read %q otherwise than the parser (-parser +quickScan):\n%s", text, d)
	}
	return true
}

// TestQuickScanAgrees runs both parsers on every line of the repository's
// assembly (the golden tests' inputs and the backend's outputs, the
// benchmark programs, the examples) and checks that the fast path takes
// nearly all the lines the backend writes.
func TestQuickScanAgrees(t *testing.T) {
	var files []string
	for _, dir := range []string{"../../tests", "../../bench", "../../examples"} {
		filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
			if err == nil && !d.IsDir() && (strings.HasSuffix(path, ".fasm") || strings.HasSuffix(path, ".txtar")) {
				files = append(files, path)
			}
			return nil
		})
	}
	if len(files) < 20 {
		t.Fatalf("found only %d files", len(files))
	}
	backendLines, backendQuick := 0, 0
	for _, f := range files {
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		backend := strings.Contains(f, filepath.Join("tests", "backend"))
		section := ""
		for _, text := range strings.Split(string(src), "\n") {
			if strings.HasPrefix(text, "-- ") {
				section = text
				continue
			}
			if strings.TrimSpace(text) == "" {
				continue
			}
			ok := checkQuick(t, text)
			if backend && section == "-- out/asm --" {
				backendLines++
				if ok {
					backendQuick++
				}
			}
		}
	}
	if backendLines == 0 || backendQuick*100 < backendLines*99 {
		t.Errorf("the fast path took %d of the backend's %d instruction lines, want 99%%", backendQuick, backendLines)
	}
}

// TestQuickScanDeclines lists lines the fast path must leave to ANTLR.
func TestQuickScanDeclines(t *testing.T) {
	for _, text := range []string{
		`ADD r1, r2,`, `ADD r1 r2`, `, r1`, `x: "s"`, `LI r1, - x`, `LI r1, 5 -`,
		`.import ` + strings.Repeat("ab", 32) + ` "m", "f"`,
		`NOP ; é`, `LI r1, é`, `.ascii "é"`, `.ascii "unterminated`, `.ascii "ends \`,
		`a: b: :`, `ADD r1, r2 / r3`, `. x`, `"name"`,
	} {
		if _, ok := quickLine(text); ok {
			t.Errorf("quickScan accepted %q", text)
		}
	}
}

// FuzzQuickScan checks that the fast path reads any line it accepts as
// the ANTLR parser does.
func FuzzQuickScan(f *testing.F) {
	for _, s := range []string{
		"main: LI r1, -42 ; comment", `.ascii "a\"b\\"`, "x.y: JMP x.y", "r1: ADD R2, r3, 0x10", "12.foo",
		`"q name": .u64 1, -2, name`, "LOAD r1, r2, 8 // c", ".data", "\tHALT\r",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		if strings.Contains(text, "\n") {
			return
		}
		checkQuick(t, text)
	})
}
