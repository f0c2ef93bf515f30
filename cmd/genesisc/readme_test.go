package main

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/genesis-toolchain/genesis/backend/llvm"
)

// readmeCommand is one command line of a README sh block.
type readmeCommand struct {
	line    int    // where it starts in README.md
	text    string // as written, continuations joined
	comment string // after " # ", if any
}

// readmeCommands returns the command lines of the fenced blocks of doc
// whose info string is "sh": lines ending in "\" continue on the next,
// and " # …" starts a comment.
func readmeCommands(doc string) []readmeCommand {
	var cmds []readmeCommand
	in := false
	var cur *readmeCommand
	for i, line := range strings.Split(doc, "\n") {
		switch {
		case !in && strings.TrimSpace(line) == "```sh":
			in = true
			continue
		case in && strings.TrimSpace(line) == "```":
			in = false
			continue
		case !in:
			continue
		}
		if cur == nil {
			if strings.TrimSpace(line) == "" {
				continue
			}
			cur = &readmeCommand{line: i + 1}
		}
		text := strings.TrimSpace(line)
		if c := commentStart(text); c >= 0 {
			cur.comment = strings.TrimSpace(text[c+1:])
			text = strings.TrimSpace(text[:c])
		}
		cont := strings.HasSuffix(text, `\`)
		text = strings.TrimSuffix(text, `\`)
		if cur.text != "" {
			cur.text += " "
		}
		cur.text += strings.TrimSpace(text)
		if !cont {
			cmds = append(cmds, *cur)
			cur = nil
		}
	}
	return cmds
}

// commentStart returns the index of the "#" that starts a comment in a
// shell line (after a blank, outside quotes), or -1.
func commentStart(s string) int {
	var quote rune
	for i, r := range s {
		switch {
		case quote != 0:
			if r == quote {
				quote = 0
			}
		case r == '"' || r == '\'':
			quote = r
		case r == '#' && (i == 0 || s[i-1] == ' '):
			return i
		}
	}
	return -1
}

// shellWords splits a command line into words, removing quotes; the
// operators | and && are words of their own.
func shellWords(s string) ([]string, error) {
	var words []string
	var cur strings.Builder
	var quote rune
	have := false
	flush := func() {
		if have {
			words = append(words, cur.String())
			cur.Reset()
			have = false
		}
	}
	for _, r := range s {
		switch {
		case quote != 0:
			if r == quote {
				quote = 0
			} else {
				cur.WriteRune(r)
			}
		case r == '"' || r == '\'':
			quote, have = r, true
		case r == ' ' || r == '\t':
			flush()
		default:
			cur.WriteRune(r)
			have = true
		}
	}
	if quote != 0 {
		return nil, fmt.Errorf("unterminated quote in %q", s)
	}
	flush()
	return words, nil
}

// fakeChat is an OpenAI-compatible server that answers every chat
// completion "yes" and records the models it was asked for.
type fakeChat struct {
	mu     sync.Mutex
	models []string
}

var modelField = regexp.MustCompile(`"model":"([^"]*)"`)

func (f *fakeChat) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	f.mu.Lock()
	if m := modelField.FindSubmatch(body); m != nil {
		f.models = append(f.models, string(m[1]))
	}
	f.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	io.WriteString(w, `{"choices":[{"message":{"role":"assistant","content":"yes"}}],"usage":{"prompt_tokens":20,"completion_tokens":1}}`)
}

// TestReadme runs every command of README.md's sh blocks, as written, in
// a scratch directory holding a copy of examples/: bin/genesisc is this
// package's run, in-process; bin/forge the forge command built from this
// checkout; an openai:URL provider is pointed at a local fake server; a
// make line must name a target of the Makefile; `cd DIR && go build`
// builds there. Each command must exit 0, and one whose comment says
// "prints TEXT" must print TEXT.
func TestReadme(t *testing.T) {
	if testing.Short() {
		t.Skip("builds Go programs")
	}
	useRunCache(t)
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	makefile, err := os.ReadFile(filepath.Join(root, "Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	cmds := readmeCommands(string(readme))
	// The blocks hold some twenty commands: far fewer means the test no
	// longer finds them.
	if len(cmds) < 20 {
		t.Fatalf("found %d commands in README.md's sh blocks", len(cmds))
	}

	dir := t.TempDir()
	if err := os.CopyFS(filepath.Join(dir, "examples"), os.DirFS(filepath.Join(root, "examples"))); err != nil {
		t.Fatal(err)
	}
	forgeBin := filepath.Join(t.TempDir(), "forge")
	build := exec.Command("go", "build", "-o", forgeBin, "./cmd/forge")
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building forge: %v\n%s", err, out)
	}
	chat := &fakeChat{}
	srv := httptest.NewServer(chat)
	defer srv.Close()
	t.Chdir(dir)
	nativeOK := llvm.Available(llvm.Tools{}) == nil

	ran := 0
	for _, c := range cmds {
		words, err := shellWords(c.text)
		if err != nil {
			t.Errorf("README.md:%d: %v", c.line, err)
			continue
		}
		var input string
		if len(words) > 2 && words[0] == "echo" {
			bar := indexOf(words, "|")
			if bar < 0 {
				t.Errorf("README.md:%d: echo without a pipe: %s", c.line, c.text)
				continue
			}
			input = strings.Join(words[1:bar], " ") + "\n"
			words = words[bar+1:]
		}
		for len(words) > 0 && strings.Contains(words[0], "=") && !strings.HasPrefix(words[0], "-") {
			k, v, _ := strings.Cut(words[0], "=")
			t.Setenv(k, v)
			words = words[1:]
		}
		if len(words) == 0 {
			t.Errorf("README.md:%d: no command: %s", c.line, c.text)
			continue
		}
		var stdout, stderr bytes.Buffer
		code := 0
		switch words[0] {
		case "make":
			for _, target := range words[1:] {
				if !regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(target) + `:`).Match(makefile) {
					t.Errorf("README.md:%d: the Makefile has no target %q", c.line, target)
				}
			}
			continue
		case "cd":
			if len(words) != 5 || words[2] != "&&" || words[3] != "go" || words[4] != "build" {
				t.Errorf("README.md:%d: only `cd DIR && go build` is understood: %s", c.line, c.text)
				continue
			}
			cmd := exec.Command("go", "build")
			cmd.Dir = words[1]
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			if err := cmd.Run(); err != nil {
				code = 1
				stderr.WriteString(err.Error())
			}
		case "bin/genesisc":
			if indexOf(words, "native") >= 0 && !nativeOK {
				t.Logf("README.md:%d: skipped: no llc or cc", c.line)
				continue
			}
			for i, w := range words {
				if strings.HasPrefix(w, "openai:") {
					words[i] = "openai:" + srv.URL
				}
			}
			stdin = strings.NewReader(input)
			code = run(append([]string{"genesisc"}, words[1:]...), &stdout, &stderr)
			stdin = os.Stdin
		case "bin/forge":
			cmd := exec.Command(forgeBin, words[1:]...)
			cmd.Stdin = strings.NewReader(input)
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			if err := cmd.Run(); err != nil {
				code = -1
				if ee, ok := err.(*exec.ExitError); ok {
					code = ee.ExitCode()
				}
			}
		default:
			t.Errorf("README.md:%d: unknown command %q", c.line, words[0])
			continue
		}
		ran++
		if code != 0 {
			t.Errorf("README.md:%d: %s\nexit %d\n%s%s", c.line, c.text, code, stdout.String(), stderr.String())
			continue
		}
		if want, ok := strings.CutPrefix(c.comment, "prints "); ok && !strings.Contains(stdout.String(), want) {
			t.Errorf("README.md:%d: %s\nprinted %q, want %q in it", c.line, c.text, stdout.String(), want)
		}
	}
	if len(chat.models) == 0 {
		t.Error("no README command called the LLM server")
	}
	for _, m := range chat.models {
		if m != "gpt-4o-mini" {
			t.Errorf("the LLM server was asked for model %q, not the --model gpt-4o-mini of the README", m)
		}
	}
	t.Logf("%d commands of README.md run", ran)
}

func indexOf(words []string, w string) int {
	for i, x := range words {
		if x == w {
			return i
		}
	}
	return -1
}
