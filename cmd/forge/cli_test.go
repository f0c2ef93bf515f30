package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/genesis-toolchain/genesis/internal/filetest"
)

// TestCLI runs the golden tests in tests/forgecli. Each txtar file is one
// case, opening with its header (docs/testing.md) "test transcript" and
// "target forge": every section except "script" and "out/..." is a file
// written to a fresh directory; "script" lists commands run there, one a
// line; the transcript of their output is compared with "out/transcript"
// (go test -update rewrites it). Script commands:
//
//	forge ARGS... [< FILE]   run the forge command in-process; stdin from FILE (else empty)
//	cat FILE                 print a file
//	replace FILE OLD NEW     replace the first OLD in FILE with NEW (must occur)
//	resub FILE REGEXP NEW    replace the first match of REGEXP in FILE (must change it)
//	poke FILE OFFSET BYTE    set the byte at OFFSET of FILE (decimal or 0x)
//	truncate FILE SIZE       cut FILE to SIZE bytes
//	cp FROM TO               copy a file
//	gen FILE SIZE            write SIZE bytes of lines of the alphabet to FILE
//	head FILE N              keep the first N lines of FILE
//	sethash FILE WORD PROG   replace every WORD in FILE with the sha256 (hex) of file PROG
//	# ...                    a comment, copied to the transcript
//
// Arguments are separated by blanks; 'single' and "double" quotes (Go
// syntax) group them. In the transcript each command is echoed after "$ ";
// standard output lines follow prefixed "1| ", standard error lines "2| ",
// and "[exit N]" ends every forge command.
func TestCLI(t *testing.T) {
	// An absolute pattern: each case runs in its own directory, and the
	// golden file is rewritten from there under -update.
	cases, err := filepath.Abs("../../tests/forgecli")
	if err != nil {
		t.Fatal(err)
	}
	filetest.Run(t, filepath.Join(cases, "*.txtar"), cliSuite)
}

// cliSuite runs the command-line sessions of tests/forgecli.
var cliSuite = filetest.Suite{
	Checks:  map[string]filetest.Check{"transcript": checkTranscript},
	Targets: []string{"forge"},
	Outputs: map[string][]string{"transcript": {"out/transcript"}},
}

// checkTranscript runs the case's script in a fresh directory holding its
// files and records the transcript.
func checkTranscript(t *testing.T, c *filetest.Case, d filetest.Directive) {
	if len(d.Args) != 0 || !c.On("forge") {
		t.Fatalf("test %s: takes no arguments and needs \"target forge\"", d)
	}
	dir := t.TempDir()
	script, ok := c.File("script")
	if !ok {
		t.Fatal("no script section")
	}
	for _, f := range c.Archive.Files {
		if f.Name == "script" || strings.HasPrefix(f.Name, "out/") {
			continue
		}
		path := filepath.Join(dir, filepath.FromSlash(f.Name))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, f.Data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	t.Chdir(dir)
	var tr strings.Builder
	for n, line := range strings.Split(script, "\n") {
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		if strings.HasPrefix(line, "#") {
			tr.WriteString(line + "\n")
			continue
		}
		args, err := splitArgs(line)
		if err != nil {
			t.Fatalf("script line %d: %v", n+1, err)
		}
		tr.WriteString("$ " + line + "\n")
		if err := runScriptCommand(&tr, args); err != nil {
			t.Fatalf("script line %d: %s: %v", n+1, line, err)
		}
	}
	c.Check("out/transcript", tr.String())
}

func runScriptCommand(tr *strings.Builder, args []string) error {
	need := func(n int) error {
		if len(args) != n+1 {
			return fmt.Errorf("%s takes %d arguments", args[0], n)
		}
		return nil
	}
	switch args[0] {
	case "forge":
		var stdin []byte
		if k := len(args); k >= 3 && args[k-2] == "<" {
			b, err := os.ReadFile(args[k-1])
			if err != nil {
				return err
			}
			stdin, args = b, args[:k-2]
		}
		var stdout, stderr bytes.Buffer
		code := run(args, bytes.NewReader(stdin), &stdout, &stderr)
		transcribe(tr, "1| ", stdout.Bytes())
		transcribe(tr, "2| ", stderr.Bytes())
		fmt.Fprintf(tr, "[exit %d]\n", code)
	case "cat":
		if err := need(1); err != nil {
			return err
		}
		b, err := os.ReadFile(args[1])
		if err != nil {
			return err
		}
		transcribe(tr, "", b)
	case "replace":
		if err := need(3); err != nil {
			return err
		}
		b, err := os.ReadFile(args[1])
		if err != nil {
			return err
		}
		if !bytes.Contains(b, []byte(args[2])) {
			return fmt.Errorf("%q does not occur in %s", args[2], args[1])
		}
		return os.WriteFile(args[1], bytes.Replace(b, []byte(args[2]), []byte(args[3]), 1), 0o644)
	case "resub":
		if err := need(3); err != nil {
			return err
		}
		re, err := regexp.Compile(args[2])
		if err != nil {
			return err
		}
		b, err := os.ReadFile(args[1])
		if err != nil {
			return err
		}
		loc := re.FindIndex(b)
		if loc == nil {
			return fmt.Errorf("%s does not match in %s", args[2], args[1])
		}
		out := append(append(bytes.Clone(b[:loc[0]]), args[3]...), b[loc[1]:]...)
		if bytes.Equal(out, b) {
			return fmt.Errorf("replacing %s in %s changes nothing", args[2], args[1])
		}
		return os.WriteFile(args[1], out, 0o644)
	case "poke":
		if err := need(3); err != nil {
			return err
		}
		b, err := os.ReadFile(args[1])
		if err != nil {
			return err
		}
		off, err1 := strconv.ParseUint(args[2], 0, 64)
		v, err2 := strconv.ParseUint(args[3], 0, 8)
		if err1 != nil || err2 != nil || off >= uint64(len(b)) {
			return fmt.Errorf("bad offset or byte")
		}
		b[off] = byte(v)
		return os.WriteFile(args[1], b, 0o644)
	case "truncate":
		if err := need(2); err != nil {
			return err
		}
		size, err := strconv.ParseInt(args[2], 0, 64)
		if err != nil {
			return err
		}
		return os.Truncate(args[1], size)
	case "gen":
		if err := need(2); err != nil {
			return err
		}
		size, err := strconv.Atoi(args[2])
		if err != nil {
			return err
		}
		const line = "abcdefghijklmnopqrstuvwxyz\n"
		b := bytes.Repeat([]byte(line), size/len(line)+1)[:size]
		return os.WriteFile(args[1], b, 0o644)
	case "head":
		if err := need(2); err != nil {
			return err
		}
		n, err := strconv.Atoi(args[2])
		if err != nil {
			return err
		}
		b, err := os.ReadFile(args[1])
		if err != nil {
			return err
		}
		lines := strings.SplitAfter(string(b), "\n")
		if n < len(lines) {
			lines = lines[:n]
		}
		return os.WriteFile(args[1], []byte(strings.Join(lines, "")), 0o644)
	case "sethash":
		if err := need(3); err != nil {
			return err
		}
		b, err := os.ReadFile(args[1])
		if err != nil {
			return err
		}
		prog, err := os.ReadFile(args[3])
		if err != nil {
			return err
		}
		sum := sha256.Sum256(prog)
		return os.WriteFile(args[1], bytes.ReplaceAll(b, []byte(args[2]), []byte(hex.EncodeToString(sum[:]))), 0o644)
	case "cp":
		if err := need(2); err != nil {
			return err
		}
		b, err := os.ReadFile(args[1])
		if err != nil {
			return err
		}
		return os.WriteFile(args[2], b, 0o644)
	default:
		return fmt.Errorf("unknown script command %q", args[0])
	}
	return nil
}

// transcribe writes out with each line prefixed. A last line without a
// newline is marked; lines that are not printable text are quoted.
func transcribe(tr *strings.Builder, prefix string, out []byte) {
	if len(out) == 0 {
		return
	}
	text := string(out)
	partial := !strings.HasSuffix(text, "\n")
	lines := strings.Split(strings.TrimSuffix(text, "\n"), "\n")
	for i, l := range lines {
		if !printable(l) {
			l = "(quoted) " + strconv.Quote(l)
		}
		p := prefix
		if l == "" {
			p = strings.TrimRight(p, " ") // no trailing blanks in golden files
		}
		tr.WriteString(p + l)
		if partial && i == len(lines)-1 {
			tr.WriteString(" (no newline at end)")
		}
		tr.WriteByte('\n')
	}
}

func printable(s string) bool {
	if !utf8.ValidString(s) {
		return false
	}
	for _, r := range s {
		if r < ' ' && r != '\t' || r == 0x7f {
			return false
		}
	}
	return true
}

// splitArgs splits a script line into arguments.
func splitArgs(line string) ([]string, error) {
	var args []string
	for s := strings.TrimSpace(line); s != ""; s = strings.TrimLeft(s, " \t") {
		switch s[0] {
		case '\'':
			end := strings.IndexByte(s[1:], '\'')
			if end < 0 {
				return nil, fmt.Errorf("unterminated quote")
			}
			args = append(args, s[1:1+end])
			s = s[2+end:]
		case '"':
			q, err := strconv.QuotedPrefix(s)
			if err != nil {
				return nil, err
			}
			v, _ := strconv.Unquote(q)
			args = append(args, v)
			s = s[len(q):]
		default:
			end := strings.IndexAny(s, " \t")
			if end < 0 {
				end = len(s)
			}
			args = append(args, s[:end])
			s = s[end:]
		}
	}
	return args, nil
}
