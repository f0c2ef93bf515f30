package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	goruntime "runtime"
	"strings"
	"testing"
)

// appMain runs the two generated packages of TestVendoredPackagesBuild with
// a Go function tool and a mock LLM, as an app would.
const appMain = `package main

import (
	"context"
	"fmt"
	"os"

	rt "example.com/app/internal/genesis/runtime"
	"example.com/app/agents/refund"
	"example.com/app/agents/review"
)

func main() {
	reviewLLM, err := rt.LoadMockLLM(os.Args[1])
	if err != nil {
		panic(err)
	}
	refundLLM, _ := rt.ParseMockLLM([]byte(` + "`" + `{"broke it": "no", "__default__": "yes"}` + "`" + `))

	h := rt.NewHost(rt.Config{LLM: refundLLM})
	h.RegisterTool("issue_refund", func(ctx context.Context, args rt.Value) (rt.Value, error) {
		return rt.String("refunded by a Go function"), nil
	})
	res := refund.Run(h, rt.RunOptions{Input: rt.Object(rt.Field{Key: "user_input", Value: rt.String("I bought it yesterday")})})
	fmt.Println("refund:", res.Status, res.Output)

	res = review.Run(rt.NewHost(rt.Config{LLM: reviewLLM}), rt.RunOptions{})
	fmt.Println("review:", res.Status, res.Outputs)
}
`

// A new user's app module, outside the repository: two programs built into
// it with --target go share one runtime copy, and the module builds with
// `go mod tidy && go build ./...` and no replace directive.
func TestVendoredPackagesBuild(t *testing.T) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command on PATH")
	}
	if testing.Short() {
		t.Skip("builds a module with the go command")
	}
	app := t.TempDir()
	goCmd := func(args ...string) string {
		t.Helper()
		cmd := exec.Command(goTool, args...)
		cmd.Dir = app
		// The app's module is its own: not the toolchain's workspace.
		cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	goCmd("mod", "init", "example.com/app")
	examples, _ := filepath.Abs("../../examples")

	code, _, errs := genesisc(t, app, "build", "--target", "go", "--package", "refund", "-o", "agents/refund", filepath.Join(examples, "refund.json"))
	if code != 0 || !strings.Contains(errs, "wrote the runtime into") || !strings.Contains(errs, "run `go mod tidy`") {
		t.Fatalf("build refund: exit %d\n%s", code, errs)
	}
	code, _, errs = genesisc(t, app, "build", "--target", "go", "--package", "review", "-o", "agents/review", filepath.Join(examples, "review.vvm"))
	if code != 0 || errs != "" {
		t.Fatalf("build review (the runtime is already there: nothing to say): exit %d\n%s", code, errs)
	}
	for _, pkg := range []string{"refund", "review"} {
		data, err := os.ReadFile(filepath.Join(app, "agents", pkg, "program.go"))
		if err != nil || !bytes.Contains(data, []byte(`rt "example.com/app/internal/genesis/runtime"`)) {
			t.Fatalf("%s does not import the app's runtime copy: %v", pkg, err)
		}
	}
	gomod, _ := os.ReadFile(filepath.Join(app, "go.mod"))
	if bytes.Contains(gomod, []byte("replace")) || !bytes.Contains(gomod, []byte("modernc.org/sqlite")) {
		t.Fatalf("go.mod:\n%s", gomod)
	}
	writeFile(t, app, "main.go", appMain)

	goCmd("mod", "tidy")
	goCmd("build", "./...")
	out := goCmd("run", ".", filepath.Join(examples, "review.llm.json"))
	want := "refund: success refunded by a Go function\nreview: success {"
	if !strings.HasPrefix(out, want) || !strings.Contains(out, `"writer":"Thanks! The rename reads well`) {
		t.Errorf("the app printed\n%s\nwant it to start with\n%s", out, want)
	}

	// `genesisc runtime` on the same copy: nothing to write, its import
	// path on standard output.
	code, stdout, errs := genesisc(t, app, "runtime")
	if code != 0 || stdout != "example.com/app/internal/genesis/runtime\n" || errs != "" {
		t.Errorf("genesisc runtime: exit %d, stdout %q, stderr %q", code, stdout, errs)
	}

	// A worker serves the library package inside the app's module: it
	// builds it there with a main of its own (docs/distributed.md).
	if goruntime.GOOS == "windows" {
		t.Skip("a worker serves Go packages on Unix systems only")
	}
	t.Setenv("GOWORK", "off")
	t.Setenv("GOFLAGS", "")
	useRunCache(t)
	db := "sqlite:" + filepath.Join(app, "engine.db")
	llm, tools := "mock:"+filepath.Join(examples, "refund.llm.json"), "mock:"+filepath.Join(examples, "refund.tools.json")
	startGoWorker(t, app, "--db", db, "--llm", llm, "--tools", tools, "--poll", "20ms", "agents/refund")
	if entries, _ := filepath.Glob(filepath.Join(app, "_genesis_worker_*")); len(entries) != 0 {
		t.Errorf("the worker left its build's main in the app: %v", entries)
	}
	code, _, errs = genesisc(t, app, "submit", "--db", db, "--input", "user_input=It arrived broken", "--wait", "--result", "dist.json", "agents/refund")
	if code != 0 {
		t.Fatalf("submit --wait: exit %d\n%s", code, errs)
	}
	code, _, errs = genesisc(t, app, "run", "--target", "forge", "--llm", llm, "--tools", tools, "--input", "user_input=It arrived broken", "--result", "local.json", filepath.Join(examples, "refund.json"))
	if code != 0 {
		t.Fatalf("run: exit %d\n%s", code, errs)
	}
	if got, want := mustRead(t, filepath.Join(app, "dist.json")), mustRead(t, filepath.Join(app, "local.json")); !bytes.Equal(got, want) {
		t.Errorf("the worker's result\n%s\nwant genesisc run's\n%s", got, want)
	}
}

// `genesisc runtime` refuses what would lose data or cannot work.
func TestRuntimeCommandRefuses(t *testing.T) {
	outside := t.TempDir()
	if code, _, errs := genesisc(t, outside, "runtime"); code != 1 || !strings.Contains(errs, "not inside a Go module") {
		t.Errorf("outside a module: exit %d\n%s", code, errs)
	}
	app := t.TempDir()
	writeFile(t, app, "go.mod", "module example.com/app\n\ngo 1.24\n")
	os.MkdirAll(filepath.Join(app, "lib"), 0o755)
	writeFile(t, filepath.Join(app, "lib"), "lib.go", "package lib\n")
	if code, _, errs := genesisc(t, app, "runtime", "-o", "lib"); code != 1 || !strings.Contains(errs, "not a runtime copy genesisc wrote") {
		t.Errorf("into the app's own package: exit %d\n%s", code, errs)
	}
	if code, _, errs := genesisc(t, app, "runtime", "lib"); code != 2 || !strings.Contains(errs, "-o") {
		t.Errorf("a directory as argument: exit %d\n%s", code, errs)
	}
	examples, _ := filepath.Abs("../../examples")
	if code, _, errs := genesisc(t, app, "build", "--runtime", "lib", filepath.Join(examples, "refund.json")); code != 2 || !strings.Contains(errs, "--target go") {
		t.Errorf("--runtime with the forge target: exit %d\n%s", code, errs)
	}
	if code, _, errs := genesisc(t, outside, "build", "--target", "go", "--runtime", "rt", "-o", "refund", filepath.Join(examples, "refund.json")); code != 2 || !strings.Contains(errs, "not inside an app's Go module") {
		t.Errorf("--runtime outside a module: exit %d\n%s", code, errs)
	}
}

// The generated package the runtime's examples run is the one genesisc
// builds today.
func TestGoAppExampleIsCurrent(t *testing.T) {
	dir := t.TempDir()
	code, _, errs := genesisc(t, mustAbs(t, "../.."), "build", "--target", "go", "--package", "refund", "-o", filepath.Join(dir, "refund"), "examples/refund.json")
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, errs)
	}
	got, _ := os.ReadFile(filepath.Join(dir, "refund", "program.go"))
	want, err := os.ReadFile("../../examples/goapp/refund/program.go")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("examples/goapp/refund is stale: regenerate it with\n  genesisc build --target go --package refund -o examples/goapp/refund examples/refund.json")
	}
}

func mustAbs(t *testing.T, p string) string {
	t.Helper()
	abs, err := filepath.Abs(p)
	if err != nil {
		t.Fatal(err)
	}
	return abs
}
