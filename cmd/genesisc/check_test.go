package main

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/genesis-toolchain/genesis/internal/corpusindex"
	"github.com/genesis-toolchain/genesis/internal/golden"
)

// upstreamRejects lists the corpus programs that their own upstream
// rejects, by path under the corpus, with the reason: genesisc check
// must reject them too (exit 1, an error). Every other program of the
// corpus must pass genesisc check with nothing printed but warnings.
var upstreamRejects = map[string]string{
	// nano-vm's Program model refuses them (INDEX.md: "INVALID: 1
	// validation error for Program"): they are fixtures of run results
	// or of error handling, not programs.
	"nanovm/static/nano-vm-mcp/tests/test_run_program_errors_L108_unnamed_aef36c0f.json":    `nano-vm: "steps" is empty (min_length=1)`,
	"nanovm/static/nano-vm-mcp/tests/test_sprint4_gateway_L166_unnamed_075620c2.json":       `nano-vm: "steps" is empty (min_length=1)`,
	"nanovm/static/nano-vm-mcp/tests/test_sprint4_gateway_L169_unnamed_1885d477.json":       `nano-vm: "steps" is empty (min_length=1)`,
	"nanovm/static/nano-vm-mcp/tests/test_sprint4_trace_persistence_L96_test_d24d4b90.json": `nano-vm: "steps" is empty (min_length=1)`,
	"nanovm/static/nano-vm-mcp/tests/test_store_L49_unnamed_8044e519.json":                  `nano-vm: "steps" is empty (min_length=1)`,
	"nanovm/static/nano-vm-mcp/tests/test_tools_L97_unnamed_0405e72a.json":                  `nano-vm: a step without "type"`,
	"nanovm/static/nano_vm/tests/test_v050_planner_L286_x_089839a2.json":                    `nano-vm: "steps" is empty (min_length=1)`,
	// The VVM spec (§5.2) makes a placeholder that names no variable in
	// scope E051; the program writes {pro_opening} for a key of its
	// input (docs/decisions.md, V10).
	"vvm/newer/21-devils-advocate.vvm": "VVM spec §5.2: a placeholder must name a variable in scope (E051)",
}

// pendingFrontendFix lists corpus programs that fail genesisc check
// because of a frontend bug being fixed elsewhere, each with the
// diagnostic it gets. It must shrink to nothing; a program listed here
// that passes fails the test, so that the entry is removed.
var pendingFrontendFix = map[string]string{}

// programExts are the extensions genesisc reads programs from.
var programExts = []string{".gen", ".vvm", ".spell", ".json", ".yaml", ".yml", ".fasm", ".ir"}

// corpusCopies are the copies of the shared corpus in the repository,
// by the folder of the shared corpus they copy.
var corpusCopies = map[string]string{
	"nanovm":          filepath.Join("..", "..", "tests", "nanovm", "corpus"),
	"vvm":             filepath.Join("..", "..", "tests", "vvm", "corpus"),
	"grimoire":        filepath.Join("..", "..", "tests", "grimoire", "corpus", "grimoire"),
	"grimoire-braces": filepath.Join("..", "..", "tests", "grimoire", "corpus", "grimoire-braces"),
}

// sharedCorpus returns the shared corpus (shared/corpus in a folder
// above the repository: ../shared/corpus of the main checkout), or ""
// when there is none.
func sharedCorpus(t *testing.T) string {
	dir, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	for {
		parent := filepath.Dir(dir)
		if parent == dir {
			return ""
		}
		dir = parent
		if st, err := os.Stat(filepath.Join(dir, "shared", "corpus")); err == nil && st.IsDir() {
			return filepath.Join(dir, "shared", "corpus")
		}
	}
}

// corpusPrograms returns every program of the shared corpus, or of the
// repository's copies of it without one, as full paths by their path
// under the corpus.
func corpusPrograms(t *testing.T) map[string]string {
	programs := map[string]string{}
	if root := sharedCorpus(t); root != "" {
		t.Logf("the shared corpus: %s", root)
		for _, rel := range golden.CorpusFiles(t, root, programExts...) {
			programs[rel] = filepath.Join(root, filepath.FromSlash(rel))
		}
		return programs
	}
	t.Log("no shared corpus above the repository: the copies in tests/")
	for folder, dir := range corpusCopies {
		for _, rel := range golden.CorpusFiles(t, dir, programExts...) {
			programs[folder+"/"+rel] = filepath.Join(dir, filepath.FromSlash(rel))
		}
	}
	return programs
}

// diagnosticLine matches the first line of a rendered diagnostic.
var diagnosticLine = regexp.MustCompile(`(?m)^.*: (error|warning|note)\[[^\]]+\]: `)

// TestCheckCorpus runs genesisc check on every program of the corpus
// (issue 14): each passes, printing nothing but warnings, but those its
// upstream rejects, which get errors.
func TestCheckCorpus(t *testing.T) {
	programs := corpusPrograms(t)
	if len(programs) < 250 {
		t.Fatalf("%d programs in the corpus, want its 291", len(programs))
	}
	rels := make([]string, 0, len(programs))
	for rel := range programs {
		rels = append(rels, rel)
	}
	sort.Strings(rels)
	passed := 0
	for _, rel := range rels {
		var stdout, stderr bytes.Buffer
		code := run([]string{"genesisc", "check", programs[rel]}, &stdout, &stderr)
		out := stderr.String()
		errs := 0
		for _, m := range diagnosticLine.FindAllStringSubmatch(out, -1) {
			if m[1] == "error" {
				errs++
			}
		}
		if stdout.Len() > 0 {
			t.Errorf("%s: check wrote to standard output:\n%s", rel, stdout.String())
		}
		if reason, ok := upstreamRejects[rel]; ok {
			if code != exitDiag || errs == 0 {
				t.Errorf("%s: upstream rejects it (%s), genesisc check exits %d with %d errors:\n%s", rel, reason, code, errs, out)
			}
			continue
		}
		if want, ok := pendingFrontendFix[rel]; ok {
			if code == exitOK {
				t.Errorf("%s passes now: remove it from pendingFrontendFix (%s)", rel, want)
			}
			continue
		}
		// What is printed can only be warnings (each its first line,
		// the source line and a caret).
		if code != exitOK || errs > 0 || out != "" && !diagnosticLine.MatchString(out) {
			t.Errorf("%s: genesisc check exits %d:\n%s", rel, code, out)
			continue
		}
		passed++
	}
	t.Logf("%d programs pass, %d rejected as upstream does, %d pending a frontend fix", passed, len(upstreamRejects), len(pendingFrontendFix))
	for rel := range upstreamRejects {
		if _, ok := programs[rel]; !ok {
			t.Errorf("upstreamRejects names %s, which is not in the corpus", rel)
		}
	}
}

// TestCheckCorpusRejectsAsNanoVMDoes checks upstreamRejects against the
// nano-vm corpus's own index: every program it marks INVALID is listed,
// and no valid one.
func TestCheckCorpusRejectsAsNanoVMDoes(t *testing.T) {
	saved, err := corpusindex.Invalid(filepath.Join(corpusCopies["nanovm"], "INDEX.md"))
	if err != nil {
		t.Fatal(err)
	}
	invalid := map[string]bool{}
	for rel := range saved {
		invalid["nanovm/"+rel] = true
	}
	for rel := range invalid {
		if _, ok := upstreamRejects[rel]; !ok {
			t.Errorf("nano-vm rejects %s, but upstreamRejects does not list it", rel)
		}
	}
	for rel := range upstreamRejects {
		if strings.HasPrefix(rel, "nanovm/") && !invalid[rel] {
			t.Errorf("upstreamRejects lists %s, which nano-vm accepts", rel)
		}
	}
}

// TestCheckAndBuildOfAnAgentProgram checks the commands on the VVM
// example: check prints nothing and writes nothing; build for the
// native target prints one error, at the file, that says what to do,
// and writes nothing; build for the default target (forge) and
// --target go work.
func TestCheckAndBuildOfAnAgentProgram(t *testing.T) {
	dir := t.TempDir()
	src, err := os.ReadFile(filepath.Join("..", "..", "examples", "review.vvm"))
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, dir, "review.vvm", string(src))
	if code, stdout, stderr := genesisc(t, dir, "check", "review.vvm"); code != exitOK || stdout != "" || stderr != "" {
		t.Errorf("check: exit %d, stdout %q, stderr:\n%s", code, stdout, stderr)
	}
	code, _, stderr := genesisc(t, dir, "build", "--target", "native", "review.vvm")
	if code != exitDiag || len(diagnosticLine.FindAllString(stderr, -1)) != 1 ||
		!strings.HasPrefix(stderr, "review.vvm:1:1: error[E0009]: VVM programs do not compile for the native target") ||
		!strings.Contains(stderr, "--target go") || !strings.Contains(stderr, "genesisc run review.vvm") {
		t.Errorf("build: exit %d, stderr:\n%s", code, stderr)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 1 {
		t.Errorf("check and a failed build wrote files: %v", entries)
	}
	if code, _, stderr := genesisc(t, dir, "build", "-o", "review.frgp", "review.vvm"); code != exitOK {
		t.Errorf("build (forge): exit %d:\n%s", code, stderr)
	}
	if code, _, stderr := genesisc(t, dir, "build", "--target", "go", "-o", "out", "review.vvm"); code != exitOK {
		t.Errorf("build --target go: exit %d:\n%s", code, stderr)
	}
	if code, _, stderr := genesisc(t, dir, "check"); code != exitUsage || !strings.Contains(stderr, "no input files") {
		t.Errorf("check without files: exit %d:\n%s", code, stderr)
	}
}
