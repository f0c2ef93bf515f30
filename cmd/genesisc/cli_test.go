package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/genesis-toolchain/genesis/internal/cliargs"
)

// Both spellings of --version answer the version of the build, exit 0.
func TestVersion(t *testing.T) {
	for _, flag := range []string{"--version", "-v"} {
		code, out, errs := genesisc(t, t.TempDir(), flag)
		if want := "genesisc version " + cliargs.Version() + "\n"; code != 0 || out != want || errs != "" {
			t.Errorf("genesisc %s: exit %d, stdout %q, stderr %q; want %q", flag, code, out, errs, want)
		}
	}
}

// build --help names every input kind and every target.
func TestBuildHelpListsInputsAndTargets(t *testing.T) {
	code, out, _ := genesisc(t, t.TempDir(), "build", "--help")
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	for _, want := range []string{".gen ", ".vvm ", ".spell ", ".json .yaml .yml", "execution plan", ".fasm ", ".ir ",
		"forge   (default)", "  go  ", "  native  "} {
		if !strings.Contains(out, want) {
			t.Errorf("build --help does not mention %q:\n%s", want, out)
		}
	}
}

// Flags may follow the files, for build, check and run; a value that
// looks like a file is the flag's; after -- every word is a file.
func TestFlagsAfterFiles(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "hello.fasm", hello)
	writeFile(t, dir, "-odd.fasm", hello)
	if code, _, errs := genesisc(t, dir, "build", "hello.fasm", "-o", "out.frgp"); code != 0 {
		t.Fatalf("build FILE -o OUT: exit %d\n%s", code, errs)
	}
	if _, err := os.Stat(filepath.Join(dir, "out.frgp")); err != nil {
		t.Errorf("build FILE -o OUT wrote no OUT: %v", err)
	}
	if code, out, errs := genesisc(t, dir, "build", "hello.fasm", "--emit", "asm"); code != 0 || !strings.Contains(out, "SEND") {
		t.Errorf("build FILE --emit asm: exit %d, %q\n%s", code, out, errs)
	}
	if code, _, errs := genesisc(t, dir, "build", "--", "-odd.fasm"); code != 0 {
		t.Errorf("build -- -odd.fasm: exit %d\n%s", code, errs)
	} else if _, err := os.Stat(filepath.Join(dir, "-odd.frgp")); err != nil {
		t.Errorf("build -- -odd.fasm: %v", err)
	}
	if code, _, errs := genesisc(t, dir, "build", "hello.fasm", "--target"); code != 2 || !strings.Contains(errs, "flag --target needs a value") {
		t.Errorf("build FILE --target: exit %d\n%s", code, errs)
	}
	if code, _, errs := genesisc(t, dir, "check", "hello.fasm", "--frobnicate"); code != 2 || !strings.Contains(errs, "frobnicate") {
		t.Errorf("check FILE --frobnicate: exit %d\n%s", code, errs)
	}
	if code, out, errs := genesisc(t, dir, "check", "hello.fasm", "--help"); code != 0 || !strings.Contains(out, "genesisc check") {
		t.Errorf("check FILE --help: exit %d\n%s%s", code, out, errs)
	}
	// run, on the Forge Machine (no Go build).
	if code, out, errs := genesisc(t, dir, "run", "hello.fasm", "--result", "r.json"); code != 0 || out != "hi\n" {
		t.Errorf("run FILE --result: exit %d, %q\n%s", code, out, errs)
	}
	if data, err := os.ReadFile(filepath.Join(dir, "r.json")); err != nil || !strings.Contains(string(data), `"state": "HALTED"`) {
		t.Errorf("run FILE --result: %s %v", data, err)
	}
}

// An agent program's flags after its file reach the compiled program.
func TestRunAgentFlagsAfterFile(t *testing.T) {
	if testing.Short() {
		t.Skip("builds Go programs")
	}
	useRunCache(t)
	dir := t.TempDir()
	writeFile(t, dir, "p.json", `{"steps": [{"id": "ask", "type": "llm", "prompt": "hello $name", "output_key": "answer"}]}`)
	writeFile(t, dir, "llm.json", `{"hello Ada": {"$reply": "hi Ada", "$usage": {"prompt_tokens": 7, "completion_tokens": 2, "cost": 0.25}}}`)
	code, _, errs := genesisc(t, dir, "run", "p.json", "--llm", "mock:llm.json", "--input", "name=Ada", "--result", "r.json")
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, errs)
	}
	data, err := os.ReadFile(filepath.Join(dir, "r.json"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"output":"hi Ada"`, `"usage":{"prompt_tokens":7,"completion_tokens":2,"total_tokens":9,"cost":0.25}`} {
		if !strings.Contains(string(data), want) {
			t.Errorf("result %s\nwant %s in it", data, want)
		}
	}
}

// genesisc run runs Genesis (one file or several) and Forge assembly on
// the Forge Machine, with forge exec's streams and exit statuses.
func TestRunGenesisOnForge(t *testing.T) {
	dir := t.TempDir()
	for _, f := range []string{"factorial.gen", "squares.gen", "print.gen", "hello.fasm"} {
		data, err := os.ReadFile(filepath.Join("../../examples", f))
		if err != nil {
			t.Fatal(err)
		}
		writeFile(t, dir, f, string(data))
	}
	writeFile(t, dir, "div.gen", "fn div(a: u64, b: u64) -> u64 {\n  return a / b;\n}\n\nfn main() -> void {\n  let mut z: u64 = 0;\n  let x: u64 = div(10, z);\n}\n")
	defer func() { stdin = os.Stdin }()
	for _, tc := range []struct {
		args         []string
		input        string
		code         int
		out, errPart string
	}{
		{[]string{"run", "factorial.gen"}, "", 0, "3628800", ""},
		{[]string{"run", "squares.gen", "print.gen"}, "", 0, "338350\n", ""},
		{[]string{"run", "hello.fasm"}, "World\n", 0, "Hello, World!\n", ""},
		{[]string{"run", "div.gen"}, "", 3, "", "genesisc run: FAULTED: DIVIDE_BY_ZERO at pc"},
		{[]string{"run", "factorial.gen", "--input", "x=1"}, "", 2, "", "--input is for agent programs; factorial.gen is run on the Forge Machine"},
		{[]string{"run", "--max-steps", "5", "factorial.gen"}, "", 2, "", "genesisc build -o prog.frgp factorial.gen, then forge exec"},
		{[]string{"run", "missing.gen"}, "", 1, "", "missing.gen"},
	} {
		stdin = strings.NewReader(tc.input)
		code, out, errs := genesisc(t, dir, tc.args...)
		if code != tc.code || out != tc.out || !strings.Contains(errs, tc.errPart) || tc.errPart == "" && errs != "" {
			t.Errorf("genesisc %s: exit %d, stdout %q, stderr %q; want exit %d, stdout %q, stderr with %q",
				strings.Join(tc.args, " "), code, out, errs, tc.code, tc.out, tc.errPart)
		}
	}
}

// A malformed provider is a usage error (exit 2) before anything is
// compiled or built: GENESIS_GO names no program, so a build would fail
// otherwise.
func TestRunMalformedProviderIsUsage(t *testing.T) {
	t.Setenv("GENESIS_CACHE", t.TempDir())
	t.Setenv("GENESIS_GO", filepath.Join(t.TempDir(), "no-go"))
	t.Setenv("GENESIS_MODELS", "")
	dir := t.TempDir()
	writeFile(t, dir, "p.json", `{"steps": [{"id": "ask", "type": "llm", "prompt": "hi"}]}`)
	writeFile(t, dir, "llm.json", `{}`)
	writeFile(t, dir, "bad-models.json", `{"models": {"sonnet": 3}}`)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--llm", "http//x"}, `--llm: llm provider: expected mock:FILE or openai:URL, got "http//x"`},
		{[]string{"--llm", "openai:"}, `expected mock:FILE or openai:URL`},
		{[]string{"--llm", "openai:localhost:8000"}, `must start with http:// or https://`},
		{[]string{"--llm", "openai:http://"}, `has no host`},
		{[]string{"--llm", "claude:https://x"}, `unknown kind "claude"`},
		{[]string{"--llm", "mock:llm.json", "--models", "bad-models.json"}, `models.sonnet: expected a model identifier`},
		{[]string{"--model", "gpt-4o"}, `--models and --model choose the models of an --llm provider`},
		{[]string{"--tools", "exec:"}, `--tools: tools: expected mock:FILE, exec:CMD, mcp:COMMAND or mcp+http://HOST:PORT/PATH`},
		{[]string{"--tools", "mcp+ftp://x/y"}, `--tools: tools: unknown kind "mcp+ftp" (mock, exec, mcp, mcp+http or mcp+https)`},
		{[]string{"--tools", "mock:llm.json", "--tools", "mcp:"}, `--tools: tools: expected mock:FILE, exec:CMD, mcp:COMMAND or mcp+http://HOST:PORT/PATH, got "mcp:"`},
	} {
		code, _, errs := genesisc(t, dir, append(append([]string{"run"}, tc.args...), "p.json")...)
		if code != 2 || !strings.Contains(errs, tc.want) || strings.Contains(errs, "building") {
			t.Errorf("run %s: exit %d, stderr %q; want exit 2 and %q", strings.Join(tc.args, " "), code, errs, tc.want)
		}
	}
}
