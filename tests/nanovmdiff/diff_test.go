// Package nanovmdiff_test runs nano-vm programs through both genesisc's
// runtime and nano-vm's own (the oracle, ../shared/tools/nanovm-oracle,
// which runs the upstream package shipped in
// ../shared/reference/nanovm/upstream) and compares how each run ends: its
// status, its steps, its output and the tools it called, with their
// arguments. docs/nanovm.md ("Differential test") describes it.
//
// The programs are
//
//   - every program of ../nanovm/corpus (the copy of the shared corpus,
//     README examples included) that nano-vm accepts, under the scenarios
//     of testdata/scenarios.json (mock answers chosen so that the
//     branches of each program are taken: yes and no, a tool that
//     succeeds and one that declines, a tool that suspends and the
//     webhook that resumes it);
//   - the edge cases of cases/*.txtar: a program, its mock files, and in
//     the comment "input: KEY=VALUE", "resume: JSON" and "source: NAME"
//     lines.
//
// Every difference between the two runs must be listed in the one table
// of expected differences, testdata/differences.md (the same table as
// docs/nanovm.md's), with its reason; a listed difference that no longer
// occurs is an error too.
//
// Our side is the Go backend and the runtime's command line (runtime.Main,
// what `genesisc run` executes): every program is compiled to a package
// of one command, built by a single go build, so that the test takes
// seconds. Every run runs on the Forge Machine too, in this process, and
// must give the go run's result and journal. The oracle needs Python 3
// with pydantic 2; without it only the comparison with nano-vm is
// skipped, saying why.
package nanovmdiff_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/genesis-toolchain/genesis/backend/golang"
	"github.com/genesis-toolchain/genesis/compiler"
	"github.com/genesis-toolchain/genesis/diag"
	"github.com/genesis-toolchain/genesis/forge/host"
	"github.com/genesis-toolchain/genesis/frontend"
	"github.com/genesis-toolchain/genesis/frontend/nanovm"
	"github.com/genesis-toolchain/genesis/internal/corpusindex"
	"github.com/genesis-toolchain/genesis/internal/golden"
	"github.com/genesis-toolchain/genesis/ir/opt"
	"github.com/google/go-cmp/cmp"
)

// runTimeout bounds one run of either side (a hang guard, not a
// measurement).
const runTimeout = 60 * time.Second

// scenario is one run of a program: its input, mock files and, when the
// run suspends, the payload (and source) it is resumed with.
type scenario struct {
	Name   string          `json:"name"`
	Input  []string        `json:"input,omitempty"` // KEY=VALUE
	LLM    json.RawMessage `json:"llm,omitempty"`
	Tools  json.RawMessage `json:"tools,omitempty"`
	Resume json.RawMessage `json:"resume,omitempty"`
	Source string          `json:"source,omitempty"`
}

// runCase is a program under one scenario.
type runCase struct {
	name     string // "corpus/REL#SCENARIO" or "cases/NAME"
	progName string // the program's file name (its extension picks the format)
	prog     []byte
	scenario
	pkg  string              // the Go package of the compiled program
	subs map[string][]string // parallel step id → its sub-step ids
}

// outcome is how a run ended, as both sides report it.
type outcome struct {
	Status    string
	Steps     []string
	Output    any
	ToolCalls []any
}

func TestDifferential(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a Go program and runs Python")
	}
	// Without nano-vm's runtime the runs still run on go and on forge,
	// which must agree; only the comparison with nano-vm is skipped.
	oracle, why := findOracle(t)
	if oracle == "" {
		t.Log(why + ": comparing go and forge only")
	}
	cases := corpusCases(t)
	cases = append(cases, edgeCases(t)...)
	expected := readDifferences(t, filepath.Join("testdata", "differences.md"))
	checkDocsTable(t, expected)

	dir := t.TempDir()
	started := time.Now()
	bin := buildAll(t, dir, cases)
	t.Logf("built %d runs' programs in %.1fs", len(cases), time.Since(started).Seconds())
	started = time.Now()

	type pair struct{ ours, theirs outcome }
	results := make([]pair, len(cases))
	errs := make([]error, len(cases))
	forgeErrs := make([]error, len(cases))
	for i := range cases {
		if err := cases[i].write(filepath.Join(dir, fmt.Sprintf("run%03d", i))); err != nil {
			t.Fatal(err)
		}
	}
	// Our runs, four at a time, while the oracle runs the same cases in
	// two Python processes (its start, pydantic's import, is most of an
	// oracle run).
	var wg sync.WaitGroup
	sem := make(chan struct{}, 4)
	for i := range cases {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			ours, err := runOurs(bin, &cases[i], filepath.Join(dir, fmt.Sprintf("run%03d", i)))
			if err != nil {
				errs[i] = fmt.Errorf("genesisc: %v", err)
				return
			}
			results[i].ours = ours
		}(i)
	}
	const batches = 2
	theirs := make([][]outcome, batches)
	theirErrs := make([][]error, batches)
	for b := 0; b < batches && oracle != ""; b++ {
		wg.Add(1)
		go func(b int) {
			defer wg.Done()
			var idx []int
			for i := b; i < len(cases); i += batches {
				idx = append(idx, i)
			}
			theirs[b], theirErrs[b] = runOracle(oracle, cases, idx, dir)
			for k, i := range idx {
				if theirErrs[b][k] != nil && errs[i] == nil {
					errs[i] = fmt.Errorf("oracle: %v", theirErrs[b][k])
				}
				results[i].theirs = theirs[b][k]
			}
		}(b)
	}
	wg.Wait()
	t.Logf("ran them on both sides in %.1fs", time.Since(started).Seconds())

	// The same runs on the Forge Machine, in this process: the same
	// result and journal as on go, byte for byte. One at a time, and
	// after the runs above: a journal's lock belongs to its open file,
	// which a child process forked meanwhile would hold until it execs.
	for i := range cases {
		if errs[i] == nil {
			forgeErrs[i] = sameOnForge(&cases[i], filepath.Join(dir, fmt.Sprintf("run%03d", i)))
		}
	}
	for i, c := range cases {
		if forgeErrs[i] != nil {
			t.Errorf("%s: on forge: %v", c.name, forgeErrs[i])
		}
	}
	if oracle == "" {
		for i, c := range cases {
			if errs[i] != nil {
				t.Errorf("%s: %v", c.name, errs[i])
			}
		}
		t.Logf("%d runs compared between go and forge (nano-vm's runtime absent)", len(cases))
		return
	}
	seen := map[diffKey]bool{}
	compared := 0
	for i, c := range cases {
		if errs[i] != nil {
			t.Errorf("%s: %v", c.name, errs[i])
			continue
		}
		compared++
		for _, d := range compare(results[i].ours, results[i].theirs, c.subs) {
			k := diffKey{c.name, d.field}
			if _, ok := expected[k]; ok {
				seen[k] = true
				continue
			}
			t.Errorf("%s: %s differs, and testdata/differences.md does not list it:\n  genesisc: %s\n  nano-vm:  %s", c.name, d.field, d.ours, d.theirs)
		}
	}
	for _, k := range sortedKeys(expected) {
		if !seen[k] {
			t.Errorf("testdata/differences.md lists %s %s, which no longer differs (or the case is gone): remove the row", k.name, k.field)
		}
	}
	t.Logf("%d runs compared against nano-vm's runtime, %d expected differences", compared, len(expected))
}

// ── Cases ──

// corpusCases returns the corpus programs nano-vm accepts (INDEX.md:
// not INVALID) under the scenarios of testdata/scenarios.json: the
// default ones, and those a program has besides.
func corpusCases(t *testing.T) []runCase {
	t.Helper()
	root := filepath.Join("..", "nanovm", "corpus")
	var spec struct {
		Default []scenario            `json:"default"`
		Extra   map[string][]scenario `json:"extra"`
	}
	data, err := os.ReadFile(filepath.Join("testdata", "scenarios.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &spec); err != nil {
		t.Fatalf("testdata/scenarios.json: %v", err)
	}
	invalid, err := corpusindex.Invalid(filepath.Join(root, "INDEX.md"))
	if err != nil {
		t.Fatal(err)
	}
	var cases []runCase
	used := map[string]bool{}
	for _, rel := range golden.CorpusFiles(t, root, ".json", ".yaml", ".yml") {
		if invalid[rel] {
			// nano-vm refuses to load it, and so do we (tests/nanovm's
			// corpus test checks it).
			continue
		}
		src, err := os.ReadFile(filepath.Join(root, rel))
		if err != nil {
			t.Fatal(err)
		}
		used[rel] = true
		for _, sc := range append(append([]scenario{}, spec.Default...), spec.Extra[rel]...) {
			cases = append(cases, runCase{name: "corpus/" + rel + "#" + sc.Name, progName: filepath.Base(rel), prog: src, scenario: sc})
		}
	}
	for rel := range spec.Extra {
		if !used[rel] {
			t.Errorf("testdata/scenarios.json has scenarios for %s, which is not a valid program of the corpus", rel)
		}
	}
	if len(cases) < 150 {
		t.Fatalf("only %d corpus runs: is ../nanovm/corpus there?", len(cases))
	}
	return cases
}

var commentLine = regexp.MustCompile(`(?m)^(input|resume|source): *(.*)$`)

// edgeCases returns the cases of cases/*.txtar.
func edgeCases(t *testing.T) []runCase {
	t.Helper()
	var cases []runCase
	for _, path := range golden.Files(t, filepath.Join("cases", "*.txtar")) {
		c, err := golden.Load(path)
		if err != nil {
			t.Fatal(err)
		}
		rc := runCase{name: "cases/" + strings.TrimSuffix(filepath.Base(path), ".txtar")}
		rc.Name = rc.name
		for _, f := range c.Archive.Files {
			switch {
			case strings.HasPrefix(f.Name, "prog."):
				rc.progName, rc.prog = f.Name, f.Data
			case f.Name == "llm.json":
				rc.LLM = f.Data
			case f.Name == "tools.json":
				rc.Tools = f.Data
			default:
				t.Fatalf("%s: unknown section %s", path, f.Name)
			}
		}
		for _, m := range commentLine.FindAllStringSubmatch(c.Comment(), -1) {
			switch m[1] {
			case "input":
				rc.Input = append(rc.Input, m[2])
			case "resume":
				rc.Resume = json.RawMessage(m[2])
			case "source":
				rc.Source = m[2]
			}
		}
		if rc.prog == nil {
			t.Fatalf("%s: no prog.* section", path)
		}
		cases = append(cases, rc)
	}
	if len(cases) < 20 {
		t.Fatalf("%d edge cases, want at least 20", len(cases))
	}
	return cases
}

// write puts the case's program and mock files in dir.
func (c *runCase) write(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	files := map[string][]byte{c.progName: c.prog, "llm.json": orEmpty(c.LLM), "tools.json": orEmpty(c.Tools)}
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			return err
		}
	}
	return nil
}

func orEmpty(b []byte) []byte {
	if len(bytes.TrimSpace(b)) == 0 {
		return []byte("{}")
	}
	return b
}

// ── Our side ──

// buildAll compiles every case's program to a Go package and builds one
// command that runs any of them: `bin PKG FLAGS...` is what `genesisc run
// FLAGS... PROGRAM` runs.
func buildAll(t *testing.T, dir string, cases []runCase) string {
	t.Helper()
	repo, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	mod := filepath.Join(dir, "build")
	write := func(name string, data []byte) {
		t.Helper()
		p := filepath.Join(mod, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	goLine := "go 1.22"
	if data, err := os.ReadFile(filepath.Join(repo, "go.mod")); err == nil {
		if m := regexp.MustCompile(`(?m)^go .*$`).Find(data); m != nil {
			goLine = string(m)
		}
	}
	const self = "github.com/genesis-toolchain/genesis"
	write("go.mod", []byte("module nanovmdiff\n\n"+goLine+"\n\nrequire "+self+" v0.0.0\n\nreplace "+self+" => "+repo+"\n"))
	sum, err := os.ReadFile(filepath.Join(repo, "go.sum"))
	if err != nil {
		t.Fatal(err)
	}
	write("go.sum", sum)

	byProg := map[string]string{} // program text → package
	subsOf := map[string]map[string][]string{}
	var main bytes.Buffer
	var imports, dispatch []string
	for i := range cases {
		c := &cases[i]
		key := c.progName + "\x00" + string(c.prog)
		if pkg, ok := byProg[key]; ok {
			c.pkg = pkg
			c.subs = subsOf[pkg]
			continue
		}
		pkg := fmt.Sprintf("p%03d", len(byProg))
		byProg[key] = pkg
		c.pkg = pkg
		m, diags := nanovm.Compile(frontend.File(c.progName, c.prog))
		if p, _ := nanovm.Check(frontend.File(c.progName, c.prog)); p != nil {
			c.subs = map[string][]string{}
			for _, st := range p.Steps {
				for _, sub := range st.Sub {
					c.subs[st.ID] = append(c.subs[st.ID], sub.ID)
				}
			}
		}
		if m == nil {
			t.Fatalf("%s does not compile:\n%s", c.name, diags.Render(diag.Sources{c.progName: c.prog}))
		}
		subsOf[pkg] = c.subs
		files, gd := golang.Generate(m, golang.Options{Package: pkg, Source: c.progName})
		if gd.HasErrors() {
			t.Fatalf("%s: the Go backend refuses it:\n%s", c.name, gd.Render(nil))
		}
		for _, f := range files {
			write(filepath.Join(pkg, f.Name), f.Data)
		}
		imports = append(imports, fmt.Sprintf("\t%s \"nanovmdiff/%s\"", pkg, pkg))
		dispatch = append(dispatch, fmt.Sprintf("\tcase %q:\n\t\tos.Exit(rt.Main(os.Args[2:], %s.Program, %s.Run))", pkg, pkg, pkg))
	}
	fmt.Fprintf(&main, "package main\n\nimport (\n\t\"os\"\n\n\trt %q\n%s\n)\n\nfunc main() {\n\tswitch os.Args[1] {\n%s\n\t}\n\tos.Exit(2)\n}\n",
		golang.RuntimePath, strings.Join(imports, "\n"), strings.Join(dispatch, "\n"))
	write(filepath.Join("cmd", "main.go"), main.Bytes())

	bin := filepath.Join(dir, "programs")
	goTool := os.Getenv("GENESIS_GO")
	if goTool == "" {
		goTool = "go"
	}
	cmd := exec.Command(goTool, "build", "-ldflags=-s -w", "-o", bin, "./cmd")
	cmd.Dir = mod
	cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=mod", "GOTOOLCHAIN=local", "GOPROXY=off")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("building the programs: %v\n%s", err, out)
	}
	return bin
}

// runOurs runs the case with the runtime's command line, with a journal
// (the record of the tool calls, and what --resume continues).
func runOurs(bin string, c *runCase, dir string) (outcome, error) {
	journal := filepath.Join(dir, "run.journal")
	result := filepath.Join(dir, "result.json")
	args := []string{c.pkg, "--llm", "mock:" + filepath.Join(dir, "llm.json"), "--tools", "mock:" + filepath.Join(dir, "tools.json"),
		"--journal", journal, "--result", result}
	for _, in := range c.Input {
		args = append(args, "--input", in)
	}
	res, err := runBin(bin, args, result)
	if err != nil {
		return outcome{}, err
	}
	if res.Status == "suspended" && c.Resume != nil {
		more := append(append([]string{}, args...), "--resume", "--payload", string(c.Resume))
		if c.Source != "" {
			more = append(more, "--source", c.Source)
		}
		if res, err = runBin(bin, more, result); err != nil {
			return outcome{}, err
		}
	}
	o := outcome{Status: res.Status, Steps: res.Steps, Output: res.Output}
	calls, err := journalToolCalls(journal)
	if err != nil {
		return outcome{}, err
	}
	o.ToolCalls = calls
	return o, nil
}

// sameOnForge runs case c, which runOurs ran in dir, again on the Forge
// Machine (compiled for forge, run in this process as forge exec does)
// and reports how its result or journal differs from the go run's.
func sameOnForge(c *runCase, dir string) error {
	out, diags := compiler.Build([]compiler.Source{{Name: filepath.Join(dir, c.progName), Data: c.prog}}, compiler.Options{Target: "forge", OptLevel: opt.MaxLevel})
	if diags.HasErrors() {
		return fmt.Errorf("build: %v", diags)
	}
	a, err := host.LoadAgent(out.Program)
	if err != nil {
		return err
	}
	journal := filepath.Join(dir, "forge.journal")
	result := filepath.Join(dir, "forge-result.json")
	args := []string{"--llm", "mock:" + filepath.Join(dir, "llm.json"), "--tools", "mock:" + filepath.Join(dir, "tools.json"),
		"--journal", journal, "--result", result}
	for _, in := range c.Input {
		args = append(args, "--input", in)
	}
	var stderr bytes.Buffer
	cmd := &host.AgentCommand{Agent: a}
	code := cmd.Main(args, io.Discard, &stderr)
	codes := []int{code}
	if code == 3 && c.Resume != nil {
		more := append(append([]string{}, args...), "--resume", "--payload", string(c.Resume))
		if c.Source != "" {
			more = append(more, "--source", c.Source)
		}
		codes = append(codes, cmd.Main(more, io.Discard, &stderr))
	}
	for _, f := range [][2]string{{"result.json", "forge-result.json"}, {"run.journal", "forge.journal"}} {
		goes, err := os.ReadFile(filepath.Join(dir, f[0]))
		if err != nil {
			return err
		}
		forge, err := os.ReadFile(filepath.Join(dir, f[1]))
		if err != nil {
			return fmt.Errorf("%v: %s", err, stderr.String())
		}
		if f[0] == "run.journal" {
			// The go target journals a parallel block's effects as its
			// branches complete, in the scheduler's order: the entries
			// are compared as a set (the run ids are random).
			goes, forge = sortedLines(runIDs.ReplaceAll(goes, []byte("RUN"))), sortedLines(runIDs.ReplaceAll(forge, []byte("RUN")))
		}
		if !bytes.Equal(goes, forge) {
			return fmt.Errorf("the %s differs from go's (forge's exit statuses %v, standard error %q):\n  go:    %s\n  forge: %s", f[0], codes, stderr.String(), goes, forge)
		}
	}
	return nil
}

// sortedLines returns the lines of b, sorted.
func sortedLines(b []byte) []byte {
	lines := bytes.SplitAfter(b, []byte("\n"))
	sort.Slice(lines, func(i, j int) bool { return bytes.Compare(lines[i], lines[j]) < 0 })
	return bytes.Join(lines, nil)
}

// runIDs matches the run ids of journal headers, random in every run.
var runIDs = regexp.MustCompile(`"run":"[0-9a-f]{32}"`)

type ourResult struct {
	Status string   `json:"status"`
	Steps  []string `json:"steps"`
	Output any      `json:"output"`
}

func runBin(bin string, args []string, result string) (ourResult, error) {
	ctx, cancel := context.WithTimeout(context.Background(), runTimeout)
	defer cancel()
	os.Remove(result)
	cmd := exec.CommandContext(ctx, bin, args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err := cmd.Run()
	var res ourResult
	data, rerr := os.ReadFile(result)
	if rerr != nil {
		return res, fmt.Errorf("no result (%v): %s", err, stderr.String())
	}
	if err := json.Unmarshal(data, &res); err != nil {
		return res, fmt.Errorf("result: %v: %s", err, data)
	}
	return res, nil
}

// journalToolCalls returns the tool calls a journal records, in order,
// as [name, args], but for calls of a tool nobody provides.
func journalToolCalls(path string) ([]any, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	calls := []any{}
	for _, line := range bytes.Split(data, []byte("\n")) {
		var rec struct {
			Reply   json.RawMessage `json:"reply"`
			Effect  string          `json:"effect"`
			Request struct {
				Name string         `json:"name"`
				Args map[string]any `json:"args"`
			} `json:"request"`
		}
		if len(bytes.TrimSpace(line)) == 0 || json.Unmarshal(line, &rec) != nil || rec.Effect != "tool" {
			continue
		}
		var failed struct {
			Error struct {
				Kind string `json:"kind"`
			} `json:"$error"`
		}
		if json.Unmarshal(rec.Reply, &failed) == nil && failed.Error.Kind == "unknown_tool" {
			continue // no tool received it (nano-vm's oracle records calls its tools receive)
		}
		args := rec.Request.Args
		if args == nil {
			args = map[string]any{}
		}
		calls = append(calls, []any{rec.Request.Name, args})
	}
	return calls, nil
}

// ── The oracle ──

// findOracle returns the oracle's path, or skips the test saying why:
// $NANOVM_ORACLE, else shared/tools/nanovm-oracle in a directory above
// this one (the repository's ../shared).
func findOracle(t *testing.T) (string, string) {
	t.Helper()
	path := os.Getenv("NANOVM_ORACLE")
	if path == "" {
		dir, _ := filepath.Abs(".")
		for {
			p := filepath.Join(dir, "shared", "tools", "nanovm-oracle")
			if _, err := os.Stat(p); err == nil {
				path = p
				break
			}
			parent := filepath.Dir(dir)
			if parent == dir {
				return "", "no nano-vm oracle (shared/tools/nanovm-oracle above this directory, or $NANOVM_ORACLE): the comparison with nano-vm needs its runtime"
			}
			dir = parent
		}
	}
	out, err := exec.Command("python3", "-c", "import pydantic, sys; sys.stdout.write(pydantic.VERSION)").Output()
	if err != nil {
		return "", fmt.Sprintf("python3 cannot import pydantic (%v): the nano-vm oracle needs Python 3 with pydantic 2", err)
	}
	if !strings.HasPrefix(string(out), "2.") {
		return "", fmt.Sprintf("python3 has pydantic %s: the nano-vm oracle needs pydantic 2", out)
	}
	return path, ""
}

type oracleResult struct {
	Status    string   `json:"status"`
	Steps     []string `json:"steps"`
	Output    any      `json:"output"`
	ToolCalls []any    `json:"tool_calls"`
}

// oracleDriver runs the oracle script once per job in one Python
// process: a job is the oracle's argument list, and each answer one line,
// {"ok": the oracle's JSON} or {"error": why}. asyncio.sleep is restored
// before each job (the oracle replaces it to skip nano-vm's backoffs).
const oracleDriver = `
import asyncio, contextlib, io, json, runpy, sys
oracle = sys.argv[1]
real_sleep = asyncio.sleep
for argv in json.load(sys.stdin):
    asyncio.sleep = real_sleep
    sys.argv = [oracle] + argv
    buf = io.StringIO()
    try:
        with contextlib.redirect_stdout(buf):
            runpy.run_path(oracle, run_name="__main__")
        lines = buf.getvalue().strip().splitlines()
        res = {"ok": json.loads(lines[-1])} if lines else {"error": "no output"}
    except BaseException as e:
        res = {"error": repr(e)}
    sys.__stdout__.write(json.dumps(res) + "\n")
    sys.__stdout__.flush()
`

// runOracle runs the cases idx (written in dir/runNNN) through the oracle
// in one Python process and returns their outcomes, or per case why it
// has none.
func runOracle(oracle string, cases []runCase, idx []int, dir string) ([]outcome, []error) {
	outs := make([]outcome, len(idx))
	errs := make([]error, len(idx))
	fail := func(err error) ([]outcome, []error) {
		for k := range errs {
			errs[k] = err
		}
		return outs, errs
	}
	jobs := make([][]string, len(idx))
	for k, i := range idx {
		c := &cases[i]
		cdir := filepath.Join(dir, fmt.Sprintf("run%03d", i))
		args := []string{filepath.Join(cdir, c.progName), "--llm", filepath.Join(cdir, "llm.json"), "--tools", filepath.Join(cdir, "tools.json")}
		for _, in := range c.Input {
			args = append(args, "--input", in)
		}
		if c.Resume != nil {
			args = append(args, "--resume", string(c.Resume))
			if c.Source != "" {
				args = append(args, "--source", c.Source)
			}
		}
		jobs[k] = args
	}
	stdin, err := json.Marshal(jobs)
	if err != nil {
		return fail(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), runTimeout*time.Duration(1+len(idx)/20))
	defer cancel()
	cmd := exec.CommandContext(ctx, "python3", "-c", oracleDriver, oracle)
	cmd.Stdin = bytes.NewReader(stdin)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return fail(fmt.Errorf("%v: %s", err, stderr.String()))
	}
	lines := bytes.Split(bytes.TrimSpace(out), []byte("\n"))
	if len(lines) != len(idx) {
		return fail(fmt.Errorf("%d answers for %d runs: %s", len(lines), len(idx), stderr.String()))
	}
	for k, line := range lines {
		var ans struct {
			OK    *oracleResult `json:"ok"`
			Error string        `json:"error"`
		}
		if err := json.Unmarshal(line, &ans); err != nil || ans.OK == nil {
			errs[k] = fmt.Errorf("%s %v", ans.Error, err)
			continue
		}
		r := ans.OK
		if r.ToolCalls == nil {
			r.ToolCalls = []any{}
		}
		outs[k] = outcome{Status: r.Status, Steps: r.Steps, Output: r.Output, ToolCalls: r.ToolCalls}
	}
	return outs, errs
}

// ── Comparison ──

type difference struct {
	field        string
	ours, theirs string
}

// compare returns the fields in which two outcomes differ, after the
// normalizations docs/nanovm.md lists: a step's attempts (ours lists
// each, nano-vm the step once) count once; a parallel step's sub-steps
// are listed after it (nano-vm lists them before); the output is
// compared only for runs that succeed or suspend (nano-vm has none for
// the others; ours is the last output that succeeded, docs/runtime.md);
// the tool calls of a program with a parallel step (subs, by parallel
// step) are compared as a multiset.
func compare(ours, theirs outcome, subs map[string][]string) []difference {
	var ds []difference
	add := func(field string, a, b any) {
		ds = append(ds, difference{field, jsonText(a), jsonText(b)})
	}
	if ours.Status != theirs.Status {
		add("status", ours.Status, theirs.Status)
	}
	if a, b := subsFirst(collapse(ours.Steps), subs), collapse(theirs.Steps); !cmp.Equal(a, b) {
		add("steps", ours.Steps, theirs.Steps)
	}
	if (ours.Status == "success" || ours.Status == "suspended") && ours.Status == theirs.Status && jsonText(ours.Output) != jsonText(theirs.Output) {
		add("output", ours.Output, theirs.Output)
	}
	if a, b := jsonList(ours.ToolCalls), jsonList(theirs.ToolCalls); !cmp.Equal(a, b) {
		sa, sb := append([]string{}, a...), append([]string{}, b...)
		sort.Strings(sa)
		sort.Strings(sb)
		// Only the calls of a parallel step's sub-steps may come in
		// another order: nano-vm makes them in sub-step order, ours are
		// journaled as they complete.
		if !cmp.Equal(sa, sb) || len(subs) == 0 {
			add("tool_calls", ours.ToolCalls, theirs.ToolCalls)
		}
	}
	return ds
}

// subsFirst moves the sub-steps that follow their parallel step in our
// list before it, where nano-vm's trace has them.
func subsFirst(steps []string, subs map[string][]string) []string {
	out := make([]string, 0, len(steps))
	for i := 0; i < len(steps); i++ {
		ids := subs[steps[i]]
		n := 0
		for n < len(ids) && i+1+n < len(steps) && steps[i+1+n] == ids[n] {
			n++
		}
		if len(ids) == 0 || n != len(ids) {
			out = append(out, steps[i])
			continue
		}
		out = append(out, ids...)
		out = append(out, steps[i])
		i += n
	}
	return out
}

// collapse drops consecutive repeats of a step (the attempts of a retry).
func collapse(steps []string) []string {
	var out []string
	for _, s := range steps {
		if len(out) > 0 && out[len(out)-1] == s {
			continue
		}
		out = append(out, s)
	}
	return out
}

func jsonText(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

func jsonList(vs []any) []string {
	out := make([]string, len(vs))
	for i, v := range vs {
		out[i] = jsonText(v)
	}
	return out
}

// ── The table of expected differences ──

type diffKey struct{ name, field string }

// readDifferences reads the table of expected differences: a Markdown
// table whose rows are | case | field | reason |.
func readDifferences(t *testing.T, path string) map[diffKey]string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	rows, err := tableRows(string(data))
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	if rows == nil {
		t.Fatalf("%s: no table", path)
	}
	out := map[diffKey]string{}
	for _, r := range rows {
		k := diffKey{strings.Trim(r[0], "`"), strings.Trim(r[1], "`")}
		if k.field != "status" && k.field != "steps" && k.field != "output" && k.field != "tool_calls" {
			t.Errorf("%s: %s: field %q is not status, steps, output or tool_calls", path, k.name, k.field)
		}
		if strings.TrimSpace(r[2]) == "" {
			t.Errorf("%s: %s %s: no reason", path, k.name, k.field)
		}
		if _, dup := out[k]; dup {
			t.Errorf("%s: %s %s is listed twice", path, k.name, k.field)
		}
		out[k] = r[2]
	}
	return out
}

// tableRows returns the rows (three cells) of the first Markdown table
// with the header | case | field | reason | in text, without the header;
// a row of another shape is an error (a reason may not hold a "|").
func tableRows(text string) ([][]string, error) {
	var rows [][]string
	in := false
	for _, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		if !strings.HasPrefix(line, "|") {
			if in {
				break
			}
			continue
		}
		cells := strings.Split(strings.Trim(line, "|"), "|")
		for i := range cells {
			cells[i] = strings.TrimSpace(cells[i])
		}
		switch {
		case !in && len(cells) == 3 && cells[0] == "case" && cells[1] == "field" && cells[2] == "reason":
			in = true
			rows = [][]string{}
		case in && strings.HasPrefix(cells[0], "---"):
		case in && len(cells) == 3:
			rows = append(rows, cells)
		case in:
			return nil, fmt.Errorf("a row of %d cells, want 3: %s", len(cells), line)
		}
	}
	return rows, nil
}

// checkDocsTable checks that docs/nanovm.md holds the same table.
func checkDocsTable(t *testing.T, expected map[diffKey]string) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "docs", "nanovm.md"))
	if err != nil {
		t.Fatal(err)
	}
	rows, err := tableRows(string(data))
	if err != nil {
		t.Fatalf("docs/nanovm.md: %v", err)
	}
	docs := map[diffKey]string{}
	for _, r := range rows {
		docs[diffKey{strings.Trim(r[0], "`"), strings.Trim(r[1], "`")}] = r[2]
	}
	if !cmp.Equal(docs, expected, cmp.AllowUnexported(diffKey{})) {
		t.Errorf("docs/nanovm.md's table of expected differences is not testdata/differences.md's:\n%s", cmp.Diff(expected, docs, cmp.AllowUnexported(diffKey{})))
	}
}

func sortedKeys(m map[diffKey]string) []diffKey {
	keys := make([]diffKey, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if keys[i].name != keys[j].name {
			return keys[i].name < keys[j].name
		}
		return keys[i].field < keys[j].field
	})
	return keys
}
