package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	goruntime "runtime"
	"runtime/debug"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/genesis-toolchain/genesis/backend/golang"
	"github.com/genesis-toolchain/genesis/compiler"
	"github.com/genesis-toolchain/genesis/forge/host"
	"github.com/genesis-toolchain/genesis/ir/opt"
	"github.com/genesis-toolchain/genesis/runtime"
)

// runCommand is `genesisc run`: compile an agent program to Go, build it
// with the Go toolchain into a cache keyed by content, and run it.
func runCommand(stdout, stderr io.Writer) *cli.Command {
	return &cli.Command{
		Name:  "run",
		Usage: "compile and run a program: an agent program through Go, Genesis or Forge assembly on the Forge Machine",
		UsageText: "genesisc run [--llm mock:FILE|openai:URL [--models FILE] [--model NAME]] [--tools mock:FILE|exec:CMD|mcp:COMMAND|mcp+http://HOST:PORT/PATH]... [--input KEY=VALUE]... [--trace FILE] [--journal FILE [--resume [--payload JSON] | --replay | --overwrite]] [--result FILE] [--repeat N] [--state FILE] [--narrate] [--trigger KIND] [--event NAME [--event-payload JSON]] [--param KEY=VALUE]... [--mode simulate|cast] [--yes] [--real-clock] [--max-steps N] [--max-tokens N] [--max-cost USD] [--max-wall DURATION] [--max-memory SIZE] [--max-trace SIZE] [--otel URL [--otel-timeout DURATION]] [--cache-max SIZE] FILE\n" +
			"genesisc run [--result FILE] FILE.gen... | FILE.fasm",
		Description: "Compiles FILE through the Go backend, builds the program with the Go toolchain\n" +
			"(go in PATH, or $GENESIS_GO) into a cache ($GENESIS_CACHE, default the user cache\n" +
			"directory's genesis/run) keyed by the program and the runtime, and runs it. A\n" +
			"second run of the same program starts from the cached binary. The flags are\n" +
			"the compiled program's own (docs/runtime.md, Main); the --max-* limits stop a\n" +
			"runaway run with status budget_exceeded (defaults: 100000 steps, 1000000 tokens,\n" +
			"1 USD, 1m0s, 1GiB of heap, 256MiB of trace; 0 is no limit). The cache is capped\n" +
			"(genesisc cache). Exit status: 0 success, 3 suspended, 130 or 143 cancelled by\n" +
			"SIGINT or SIGTERM, 1 another status or an error, 2 a usage error. SIGINT and\n" +
			"SIGTERM cancel the run cleanly (--resume continues it); if genesisc itself is\n" +
			"killed, the program is cancelled too. --llm openai:URL maps the program's model\n" +
			"names (sonnet, opus, haiku, gpt-4o, ...) to the server's through --models FILE,\n" +
			"$GENESIS_MODELS, GENESIS_MODEL_<NAME> and built-in defaults; --model NAME forces\n" +
			"one (docs/runtime.md, Model names).\n\n" +
			"A Genesis program (.gen files) or Forge assembly (.fasm) is compiled for the Forge\n" +
			"Machine instead and run in this process as 'forge exec' runs it, with its default\n" +
			"limits: standard input on channel 2; exit status 0 halted, 3 faulted, 4 blocked;\n" +
			"--result writes forge's result JSON. Flags may come before or after FILE.",
		Flags: append([]cli.Flag{
			&cli.StringFlag{Name: "llm", Usage: "the LLM provider: mock:FILE or openai:URL"},
			&cli.StringFlag{Name: "models", Usage: "the model alias `FILE` mapping the program's model names to the provider's (JSON; default $GENESIS_MODELS; docs/runtime.md, Model names)"},
			&cli.StringFlag{Name: "model", Usage: "every LLM call uses the provider model `NAME`, whatever the program names"},
			&cli.StringSliceFlag{Name: "tools", Usage: "a tool provider, repeatable (the first that has a tool serves it): mock:FILE, exec:CMD, mcp:COMMAND ARGS… or mcp+http(s)://HOST:PORT/PATH"},
			&cli.StringSliceFlag{Name: "input", Usage: "an input field `KEY=VALUE` (repeatable; VALUE is JSON or a string)"},
			&cli.StringFlag{Name: "trace", Usage: "write the JSON Lines trace to `FILE`"},
			&cli.StringFlag{Name: "journal", Usage: "the effect journal `FILE`"},
			&cli.BoolFlag{Name: "resume", Usage: "continue the journal's crashed or suspended run"},
			&cli.StringFlag{Name: "payload", Usage: "with --resume: the `JSON` the suspended step resumes with"},
			&cli.StringFlag{Name: "source", Usage: "with --payload: WEBHOOK (the default), OPERATOR or TIMER"},
			&cli.BoolFlag{Name: "replay", Usage: "serve every effect from the journal"},
			&cli.BoolFlag{Name: "overwrite", Usage: "with --journal: start a new run even if the journal holds one (its record is lost)"},
			&cli.StringFlag{Name: "result", Usage: "write the result JSON to `FILE` (default: standard output)"},
			&cli.IntFlag{Name: "repeat", Value: 1, Usage: "run `N` times in one process and write the last result"},
			&cli.StringFlag{Name: "state", Usage: "keep the persistent state (agent memory) in `FILE`, across runs"},
			&cli.BoolFlag{Name: "narrate", Usage: "narrate the run on standard error as it goes (VVM's narration protocol)"},
			&cli.StringFlag{Name: "trigger", Usage: "the trigger `KIND` to run (Grimoire)"},
			&cli.StringFlag{Name: "event", Usage: "the event `NAME` that fired (Grimoire)"},
			&cli.StringFlag{Name: "event-payload", Usage: "the event's payload `JSON` (Grimoire)"},
			&cli.StringSliceFlag{Name: "param", Usage: "a parameter override `KEY=VALUE` (repeatable; Grimoire)"},
			&cli.StringFlag{Name: "mode", Usage: "simulate or cast (Grimoire)"},
			&cli.BoolFlag{Name: "yes", Usage: "confirm every side effect in advance (Grimoire cast mode)"},
			&cli.BoolFlag{Name: "real-clock", Usage: "run on the real clock: waits and retry backoffs really wait, bounded by --max-wall (default: a virtual clock)"},
			&cli.StringFlag{Name: "otel", Usage: "export the run's trace as OpenTelemetry spans to the OTLP/HTTP endpoint `URL` (default: $OTEL_EXPORTER_OTLP_TRACES_ENDPOINT, $OTEL_EXPORTER_OTLP_ENDPOINT; docs/runtime.md, OpenTelemetry)"},
			&cli.StringFlag{Name: "otel-timeout", Usage: "wait at most `DURATION` at the end for the spans to be sent (default 5s)"},
			&cli.StringFlag{Name: "target", Value: "go", Usage: "run an agent program compiled for `TARGET`: go (a cached Go binary) or forge (the Forge Machine, in this process)"},
			&cli.StringFlag{Name: "cache-max", Usage: "cap the run cache at `SIZE` (default $GENESIS_CACHE_MAX, else 1GiB; 0: no cap)"},
		}, limitFlags()...),
		Action: func(c *cli.Context) error {
			if forgeRun(c.Args().Slice()) {
				return runOnForge(c, stdout, stderr)
			}
			if c.NArg() != 1 {
				fmt.Fprintln(stderr, "genesisc run: want exactly one program FILE")
				return exitError{exitUsage}
			}
			if err := checkProviders(c, stderr); err != nil {
				return err
			}
			target := c.String("target")
			if target != "go" && target != "forge" {
				fmt.Fprintf(stderr, "genesisc run: --target %q: an agent program runs on go (the default) or forge\n", target)
				return exitError{exitUsage}
			}
			args := programArgs(c)
			if target == "forge" {
				return runAgentOnForge(c, args, stdout, stderr)
			}
			out, err := compile(c, compiler.Options{Target: "go", GoMain: true, OptLevel: opt.MaxLevel}, stderr)
			if err != nil {
				return err
			}
			bin, err := cachedBinaryFor(filepath.Base(c.Args().First()), out.Files, c.String("cache-max"), stderr)
			if err != nil {
				fmt.Fprintf(stderr, "genesisc run: %v\n", err)
				return exitError{exitDiag}
			}
			code, err := runProgram(bin, args, stdout, stderr)
			if err != nil {
				fmt.Fprintf(stderr, "genesisc run: %v\n", err)
				return exitError{exitDiag}
			}
			if code != 0 {
				return exitError{code}
			}
			return nil
		},
	}
}

// programArgs returns the command line of the compiled agent program: the
// flags of genesisc run that are its own (runtime.Main's).
func programArgs(c *cli.Context) []string {
	var args []string
	for _, name := range append([]string{"llm", "models", "model", "trace", "journal", "payload", "source", "result", "state", "trigger", "event", "event-payload", "mode", "otel", "otel-timeout"}, limitFlagNames...) {
		if c.IsSet(name) {
			args = append(args, "--"+name, c.String(name))
		}
	}
	for _, t := range c.StringSlice("tools") {
		args = append(args, "--tools", t)
	}
	for _, in := range c.StringSlice("input") {
		args = append(args, "--input", in)
	}
	for _, p := range c.StringSlice("param") {
		args = append(args, "--param", p)
	}
	for _, name := range []string{"resume", "replay", "overwrite", "narrate", "yes", "real-clock"} {
		if c.Bool(name) {
			args = append(args, "--"+name)
		}
	}
	if c.IsSet("repeat") {
		args = append(args, "--repeat", strconv.Itoa(c.Int("repeat")))
	}
	return args
}

// runAgentOnForge is genesisc run --target forge of an agent program: it
// compiles the program for the Forge Machine and runs it in this process
// as forge exec does, with the machine's default limits, taking the same
// flags as on the go target (args).
func runAgentOnForge(c *cli.Context, args []string, stdout, stderr io.Writer) error {
	out, err := compile(c, compiler.Options{Target: "forge", OptLevel: opt.MaxLevel}, stderr)
	if err != nil {
		return err
	}
	a, err := host.LoadAgent(out.Program)
	if err != nil {
		fmt.Fprintf(stderr, "genesisc run: %v\n", err)
		return exitError{exitDiag}
	}
	if code := (&host.AgentCommand{Agent: a}).Main(args, stdout, stderr); code != 0 {
		return exitError{code}
	}
	return nil
}

// checkProviders checks --llm, --models, --model and --tools with the
// runtime's own parsers before the program is compiled and built, so a
// malformed provider (--llm http//x, --llm openai:, a models file that
// does not parse) is a usage error at once, exit status 2, rather than
// after a build. The compiled program checks them again: they are its
// flags.
func checkProviders(c *cli.Context, stderr io.Writer) error {
	if spec := c.String("llm"); spec != "" {
		if _, err := runtime.ParseLLMWith(spec, runtime.LLMOptions{ModelsFile: c.String("models"), Model: c.String("model")}); err != nil {
			fmt.Fprintf(stderr, "genesisc run: --llm: %v\n", err)
			return exitError{exitUsage}
		}
	} else if c.IsSet("models") || c.IsSet("model") {
		fmt.Fprintln(stderr, "genesisc run: --models and --model choose the models of an --llm provider: give one (--llm openai:URL)")
		return exitError{exitUsage}
	}
	for _, spec := range c.StringSlice("tools") {
		// Checked, not started: an MCP server starts with the program.
		if err := runtime.CheckTools(spec); err != nil {
			fmt.Fprintf(stderr, "genesisc run: --tools: %v\n", err)
			return exitError{exitUsage}
		}
	}
	return nil
}

// toolchainDeps returns the modules linked into this genesisc (its build
// information), sorted by path: the versions the runtime was compiled
// and tested with, among them modernc.org/sqlite and its dependencies.
// A generated program is built against the same versions, verified
// against the same sums. Nil when the binary has no build information.
func toolchainDeps() []*debug.Module {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return nil
	}
	var deps []*debug.Module
	for _, d := range info.Deps {
		if d.Replace != nil {
			d = d.Replace
		}
		// A dependency replaced by a directory has no version to require.
		if d.Version == "" || d.Version == "(devel)" || d.Path == "github.com/genesis-toolchain/genesis" {
			continue
		}
		deps = append(deps, d)
	}
	sort.Slice(deps, func(i, j int) bool { return deps[i].Path < deps[j].Path })
	return deps
}

// cachedBinary returns the binary of the generated command files, building
// it on the first use. The cache key covers the program's files, the
// runtime's source, the module versions it is built with, the Go
// toolchain's version and the platform, so a changed genesisc never runs
// a stale binary.
func cachedBinary(files []golang.File, stderr io.Writer) (string, error) {
	return cachedBinaryFor("the program", files, "", stderr)
}

// cachedBinaryFor is cachedBinary for the program called name (in the
// message a build prints), with the cache's cap given by --cache-max
// (maxFlag, "" when not given). A cache hit marks the entry used; a
// build tells standard error it is under way, and evicts the least
// recently used entries beyond the cap (cache.go).
func cachedBinaryFor(name string, files []golang.File, maxFlag string, stderr io.Writer) (string, error) {
	max, err := cacheMax(maxFlag)
	if err != nil {
		return "", err
	}
	gocmd := goTool()
	rtSource := runtime.Source()
	h := sha256.New()
	fmt.Fprintf(h, "genesis run cache v2\n%s/%s\n", goruntime.GOOS, goruntime.GOARCH)
	deps := toolchainDeps()
	for _, d := range deps {
		fmt.Fprintf(h, "module %s %s %s\n", d.Path, d.Version, d.Sum)
	}
	for _, f := range files {
		fmt.Fprintf(h, "program %s %d\n", f.Name, len(f.Data))
		h.Write(f.Data)
	}
	names := make([]string, 0, len(rtSource))
	for name := range rtSource {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		fmt.Fprintf(h, "runtime %s %d\n", name, len(rtSource[name]))
		h.Write(rtSource[name])
	}
	key := hex.EncodeToString(h.Sum(nil))[:32]

	root, err := cacheRoot()
	if err != nil {
		return "", err
	}
	dir := filepath.Join(root, key)
	bin := filepath.Join(dir, "program")
	if goruntime.GOOS == "windows" {
		bin += ".exe"
	}
	if _, err := os.Stat(bin); err == nil {
		touchEntry(dir)
		return bin, nil
	}
	fmt.Fprintf(stderr, "genesisc: building %s with %s (the first run of this program; cached afterwards in %s)\n", name, gocmd, root)
	started := time.Now()

	// A module holding the program, with the runtime as a local module
	// of the toolchain's path requiring the toolchain's dependency
	// versions (the runtime imports modernc.org/sqlite). go.sum holds
	// their module sums from the build information, so a module the
	// build downloads is verified against what genesisc was built with;
	// a module already in the module cache (GOMODCACHE, filled when
	// genesisc was built) needs no network at all.
	if err := os.MkdirAll(root, 0o755); err != nil {
		return "", err
	}
	work, err := os.MkdirTemp(root, "build-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(work)
	write := func(name string, data []byte) error {
		p := filepath.Join(work, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		return os.WriteFile(p, data, 0o644)
	}
	const mod = "github.com/genesis-toolchain/genesis"
	if err := write("go.mod", []byte("module genesisrun\n\ngo 1.22\n\nrequire "+mod+" v0.0.0\n\nreplace "+mod+" => ./genesis\n")); err != nil {
		return "", err
	}
	var gomod, gosum strings.Builder
	gomod.WriteString("module " + mod + "\n\ngo 1.22\n")
	var nosumdb []string
	for _, d := range deps {
		fmt.Fprintf(&gomod, "\nrequire %s %s", d.Path, d.Version)
		if d.Sum != "" {
			fmt.Fprintf(&gosum, "%s %s %s\n", d.Path, d.Version, d.Sum)
		}
		nosumdb = append(nosumdb, d.Path)
	}
	gomod.WriteString("\n")
	if err := write("genesis/go.mod", []byte(gomod.String())); err != nil {
		return "", err
	}
	if err := write("go.sum", []byte(gosum.String())); err != nil {
		return "", err
	}
	for _, name := range names {
		if err := write(filepath.Join("genesis", "runtime", name), rtSource[name]); err != nil {
			return "", err
		}
	}
	for _, f := range files {
		if err := write(filepath.Join("program", f.Name), f.Data); err != nil {
			return "", err
		}
	}
	tmp := filepath.Join(work, "program.bin")
	cmd := exec.Command(gocmd, "build", "-trimpath", "-o", tmp, "./program")
	cmd.Dir = work
	cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=mod", "GOTOOLCHAIN=local")
	// The build information has each module's sum but not its go.mod
	// file's: -mod=mod adds those go.sum lines from the module cache, and
	// GONOSUMDB keeps that from asking the checksum database (the
	// network) for modules whose content go.sum already pins.
	if len(nosumdb) > 0 {
		cmd.Env = append(cmd.Env, "GONOSUMDB="+strings.Join(nosumdb, ","))
	}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := runAnnounced(cmd, name, stderr); err != nil {
		return "", fmt.Errorf("building the program with %s: %v\n%s", gocmd, err, out.String())
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	// Rename is atomic: a concurrent run sees the binary whole or not at all.
	if err := os.Rename(tmp, bin); err != nil {
		return "", err
	}
	touchEntry(dir)
	fmt.Fprintf(stderr, "genesisc: built %s in %.1fs\n", name, time.Since(started).Seconds())
	if err := evictCache(root, key, max, time.Now()); err != nil {
		fmt.Fprintf(stderr, "genesisc: evicting from the run cache: %v\n", err) // the run goes on
	}
	return bin, nil
}
