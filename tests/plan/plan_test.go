// Package plan_test is the golden suite of the execution-plan frontend
// (docs/plan.md).
//
// A golden case, *.txtar, opens with its header (docs/testing.md): "test
// ir" for a plan that compiles, "test errors" for one that must not (its
// name starts with err_), and "test run" when it has llm.json or
// tools.json. It has a plan.json section and
//
//	out/ir      the lowered module, printed, when the plan compiles; it
//	            must verify and round-trip through the IR parser
//	out/errors  the rendered diagnostics (errors and warnings), when
//	            there are any
//	out/run     when the case has llm.json or tools.json: the run of the
//	            module on input.json (default {}) with those scripted
//	            effects (interp_test.go), one line per effect and the end
//
// The case's comment may pin diagnostics by hand, one per line, as
// "want CODE LINE:COL" (e.g. "want P004 7:15"): each must be among the
// diagnostics.
//
// go test ./tests/plan -update rewrites the out/ sections.
package plan_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/genesis-toolchain/genesis/diag"
	"github.com/genesis-toolchain/genesis/frontend"
	"github.com/genesis-toolchain/genesis/frontend/plan"
	"github.com/genesis-toolchain/genesis/internal/filetest"
	"github.com/genesis-toolchain/genesis/internal/golden"
	"github.com/genesis-toolchain/genesis/internal/testharness/irtest"
	"github.com/genesis-toolchain/genesis/ir"
	rt "github.com/genesis-toolchain/genesis/runtime"
)

// minCases is the floor for the golden suite.
const minCases = 15

// suite runs the golden cases: "test ir" for a plan that compiles
// (out/ir, and out/errors for its warnings), "test errors" for one that
// must not, and "test run" for a run of the compiled plan (out/run).
var suite = filetest.Suite{
	Checks: map[string]filetest.Check{"ir": checkCompile, "errors": checkCompile, "run": checkRun},
	Outputs: map[string][]string{
		"ir":     {"out/ir", "out/errors"},
		"errors": {"out/errors"},
		"run":    {"out/run"},
	},
}

func TestGolden(t *testing.T) {
	if n := len(filetest.Files(t, "*.txtar")); n < minCases {
		t.Errorf("%d golden cases, want at least %d", n, minCases)
	}
	filetest.Run(t, "*.txtar", suite)
}

// compile compiles the case's plan.json.
func compile(t *testing.T, c *filetest.Case) (*ir.Module, diag.List, string) {
	src, ok := c.File("plan.json")
	if !ok {
		t.Fatal("no plan.json section")
	}
	m, diags := plan.Compile(frontend.File("plan.json", []byte(src)))
	for _, d := range diags {
		if d.Code == plan.CodeInternal {
			t.Fatalf("internal error: %s", d)
		}
	}
	return m, diags, diags.Render(diag.Sources{"plan.json": []byte(src)})
}

// checkCompile compiles the plan, which must compile for "test ir" and
// must not for "test errors" (an err_ case's check).
func checkCompile(t *testing.T, c *filetest.Case, d filetest.Directive) {
	m, diags, rendered := compile(t, c)
	irtest.CheckCompiled(t, c, d, m, diags, rendered)
}

// checkRun runs the compiled plan with the case's scripted effects.
func checkRun(t *testing.T, c *filetest.Case, d filetest.Directive) {
	m, _, rendered := compile(t, c)
	if m == nil {
		t.Fatalf("test run: does not compile:\n%s", rendered)
	}
	runCase(t, c, m)
}

// runCase runs the module with the case's scripted effects.
func runCase(t *testing.T, c *filetest.Case, m *ir.Module) {
	t.Helper()
	llmSrc, hasLLM := c.File("llm.json")
	toolSrc, hasTools := c.File("tools.json")
	if !hasLLM && !hasTools {
		t.Fatalf("test run without llm.json or tools.json")
	}
	llm, err := parseMock(llmSrc)
	if err != nil {
		t.Fatalf("llm.json: %v", err)
	}
	tools, err := parseMock(toolSrc)
	if err != nil {
		t.Fatalf("tools.json: %v", err)
	}
	input := rt.Object()
	if s, ok := c.File("input.json"); ok {
		if input, err = rt.ParseJSON([]byte(s)); err != nil {
			t.Fatalf("input.json: %v", err)
		}
	}
	log, err := run(m, input, llm, tools)
	if err != nil {
		t.Fatalf("run: %v\n%s", err, log)
	}
	c.Check("out/run", log)
}

// TestIsSeparatesPlansFromNanoVM checks the rule the driver picks the
// frontend of a .json file by: every plan of this suite is a plan
// (except the cases that are not even objects with "groups"), and no
// nano-vm program of tests/nanovm (golden cases and corpus) is one.
func TestIsSeparatesPlansFromNanoVM(t *testing.T) {
	notPlans := map[string]bool{"err_not_object.txtar": true, "err_no_groups.txtar": true}
	for _, path := range golden.Files(t, "*.txtar") {
		c, err := golden.Load(path)
		if err != nil {
			t.Fatal(err)
		}
		src, _ := c.File("plan.json")
		if got, want := plan.HasPlanKeys([]byte(src)), !notPlans[filepath.Base(path)]; got != want {
			t.Errorf("%s: Is = %v, want %v", path, got, want)
		}
	}
	n := 0
	root := filepath.Join("..", "nanovm")
	err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		var srcs []string
		switch filepath.Ext(path) {
		case ".json":
			data, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			srcs = append(srcs, string(data))
		case ".txtar":
			c, err := golden.Load(path)
			if err != nil {
				return err
			}
			for _, f := range c.Archive.Files {
				if strings.HasSuffix(f.Name, ".json") {
					srcs = append(srcs, string(f.Data))
				}
			}
		}
		for _, s := range srcs {
			n++
			if plan.HasPlanKeys([]byte(s)) {
				t.Errorf("%s: a nano-vm program is taken for a plan", path)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n < 50 {
		t.Errorf("only %d nano-vm programs found under %s", n, root)
	}
}
