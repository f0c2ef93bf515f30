package runtime

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// clearModelEnv empties every variable the model table reads, so that the
// developer's environment does not leak into a test.
func clearModelEnv(t *testing.T) {
	t.Helper()
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(k, envModelPrefix) {
			t.Setenv(k, "")
		}
	}
	t.Setenv("GENESIS_MODELS", "")
	t.Setenv("GENESIS_LLM_MODEL", "")
	t.Setenv("GENESIS_LLM_PRICE", "")
}

func writeModels(t *testing.T, text string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "models.json")
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// The rules of ModelTable, in order: --model, the default for calls
// naming none, the environment, the file, the built-ins, a PROVIDER:
// prefix, the name unchanged.
func TestModelTableResolve(t *testing.T) {
	clearModelEnv(t)
	file := writeModels(t, `{"default": "file-default",
		"models": {"sonnet": "or/sonnet", "opus": {"model": "or/opus", "price": [10, 20]}, "mine": "or/mine"}}`)
	t.Setenv("GENESIS_MODEL_GPT_4O", "gpt-4o-2024-08-06")
	t.Setenv("GENESIS_MODEL_MINE", "env/mine")
	tab, err := LoadModelTable(file, "")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, want string
		price      [2]float64
		priced     bool
	}{
		{"", "file-default", [2]float64{}, false},
		{"sonnet", "or/sonnet", [2]float64{}, false},  // the file beats the built-in
		{"opus", "or/opus", [2]float64{10, 20}, true}, // with the file's price
		{"mine", "env/mine", [2]float64{}, false},     // the environment beats the file
		{"gpt-4o", "gpt-4o-2024-08-06", [2]float64{}, false},
		{"haiku", "claude-haiku-4-5", [2]float64{1, 5}, true}, // built-in
		{"anthropic:haiku", "claude-haiku-4-5", [2]float64{1, 5}, true},
		{"anthropic:sonnet", "or/sonnet", [2]float64{}, false},
		{"gpt-4o-mini", "gpt-4o-mini", [2]float64{0.15, 0.6}, true},
		{"vendor/model-x", "vendor/model-x", [2]float64{}, false}, // unchanged
	} {
		e, ok := tab.Resolve(tc.name)
		if !ok || e.Model != tc.want || e.HasPrice != tc.priced || e.HasPrice && (e.PromptPrice != tc.price[0] || e.CompletionPrice != tc.price[1]) {
			t.Errorf("Resolve(%q) = %+v, %v; want %s %v %v", tc.name, e, ok, tc.want, tc.price, tc.priced)
		}
	}

	// GENESIS_LLM_MODEL beats the file's default; GENESIS_LLM_PRICE
	// prices what the file does not.
	t.Setenv("GENESIS_LLM_MODEL", "env-default")
	t.Setenv("GENESIS_LLM_PRICE", "0.5,1.5")
	tab, err = LoadModelTable(file, "")
	if err != nil {
		t.Fatal(err)
	}
	if e, _ := tab.Resolve(""); e.Model != "env-default" || e.PromptPrice != 0.5 || e.CompletionPrice != 1.5 {
		t.Errorf("default %+v", e)
	}
	if e, _ := tab.Resolve("opus"); e.PromptPrice != 10 {
		t.Errorf("the file's price lost to GENESIS_LLM_PRICE: %+v", e)
	}

	// --model beats everything, the environment included.
	tab, err = LoadModelTable(file, "forced")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"", "sonnet", "mine", "gpt-4o"} {
		if e, _ := tab.Resolve(name); e.Model != "forced" {
			t.Errorf("--model forced: Resolve(%q) = %s", name, e.Model)
		}
	}

	// $GENESIS_MODELS is the file when --models is not given.
	clearModelEnv(t)
	t.Setenv("GENESIS_MODELS", file)
	tab, err = LoadModelTable("", "")
	if err != nil {
		t.Fatal(err)
	}
	if e, _ := tab.Resolve("sonnet"); e.Model != "or/sonnet" {
		t.Errorf("$GENESIS_MODELS: sonnet is %s", e.Model)
	}
	// No file, no default: a call naming no model has none.
	t.Setenv("GENESIS_MODELS", "")
	tab, _ = LoadModelTable("", "")
	if _, ok := tab.Resolve(""); ok {
		t.Error("a model without any default")
	}
}

func TestModelsFileErrors(t *testing.T) {
	clearModelEnv(t)
	for text, want := range map[string]string{
		`[]`:                                  "expected a JSON object",
		`{"modles": {}}`:                      `unexpected key "modles"`,
		`{"default": 3}`:                      `"default" must be a model name`,
		`{"models": []}`:                      `"models" must be an object`,
		`{"models": {"a": ""}}`:               "models.a: an empty model",
		`{"models": {"a": 3}}`:                "models.a: expected a model identifier",
		`{"models": {"a": {"price": [1,2]}}}`: `models.a: "model" is missing`,
		`{"models": {"a": {"model": "x", "price": [1]}}}`:    `"price" must be [prompt, completion]`,
		`{"models": {"a": {"model": "x", "price": [-1,2]}}}`: `two numbers ≥ 0`,
		`{"models": {"a": {"model": "x", "cost": 1}}}`:       `unexpected key "cost"`,
		`{"models": `: "models file",
	} {
		_, err := LoadModelTable(writeModels(t, text), "")
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: error %v, want %q", text, err, want)
		}
	}
	if _, err := LoadModelTable(filepath.Join(t.TempDir(), "none.json"), ""); err == nil || !strings.Contains(err.Error(), "models file") {
		t.Errorf("missing file: %v", err)
	}
}

// A malformed provider spec is refused when parsed (a usage error for
// Main and genesisc run), not when the first call fails.
func TestParseLLMMalformed(t *testing.T) {
	clearModelEnv(t)
	for spec, want := range map[string]string{
		"http//x":                      "expected mock:FILE or openai:URL",
		"openai:":                      "expected mock:FILE or openai:URL",
		"openai":                       "expected mock:FILE or openai:URL",
		"anthropic:https://x":          `unknown kind "anthropic"`,
		"openai:http//x":               "must start with http:// or https://",
		"openai:localhost:8000":        "must start with http:// or https://",
		"openai:ftp://x":               "must start with http:// or https://",
		"openai:http://":               "has no host",
		"openai:http:///v1":            "has no host",
		"openai:http://x:99999":        "not a port number",
		"openai:http://x/v1?key=1":     "must not have a query",
		"openai:https://u:p@x.example": "credentials",
		"openai:http://[::1":           "not a URL",
	} {
		_, err := ParseLLM(spec)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ParseLLM(%q): error %v, want %q", spec, err, want)
		}
	}
	for _, spec := range []string{"openai:http://localhost:8000", "openai:https://api.openai.com/v1/", "openai:http://[::1]:8080"} {
		if _, err := ParseLLM(spec); err != nil {
			t.Errorf("ParseLLM(%q): %v", spec, err)
		}
	}
	// A broken models file is an error of either provider.
	bad := writeModels(t, `{"models": 1}`)
	mock := writeModels(t, `{}`)
	if _, err := ParseLLMWith("mock:"+mock, LLMOptions{ModelsFile: bad}); err == nil {
		t.Error("mock provider with a broken models file")
	}
}

// The server gets the mapped model, and the run's result carries the
// tokens and the cost at the table's price.
func TestOpenAIModelAliases(t *testing.T) {
	clearModelEnv(t)
	f := &fakeOpenAI{responses: []func(http.ResponseWriter){ok("fine", `,"usage":{"prompt_tokens":1000,"completion_tokens":100}`)}}
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	file := writeModels(t, `{"models": {"sonnet": {"model": "vendor/sonnet-x", "price": [3, 15]}}}`)
	p, err := ParseLLMWith("openai:"+srv.URL, LLMOptions{ModelsFile: file})
	if err != nil {
		t.Fatal(err)
	}
	h := NewHost(Config{LLM: p})
	_, res := runLLM(h, "hi", Object(Field{"model", String("sonnet")}))
	_, res2 := runLLM(h, "hi", Object(Field{"model", String("haiku")}))
	if len(f.requests) != 2 {
		t.Fatalf("%d requests", len(f.requests))
	}
	if m := ObjGet(f.requests[0], String("model")).Str(); m != "vendor/sonnet-x" {
		t.Errorf("sonnet sent as %q", m)
	}
	if m := ObjGet(f.requests[1], String("model")).Str(); m != "claude-haiku-4-5" {
		t.Errorf("haiku sent as %q", m)
	}
	// 1000 × 3 + 100 × 15 = 4500 millionths; 1000 × 1 + 100 × 5 = 1500.
	for i, tc := range []struct {
		res  *Result
		want string
	}{{res, `"usage":{"prompt_tokens":1000,"completion_tokens":100,"total_tokens":1100,"cost":0.0045}`},
		{res2, `"usage":{"prompt_tokens":1000,"completion_tokens":100,"total_tokens":1100,"cost":0.0015}`}} {
		if got := string(tc.res.AppendJSON(nil)); !strings.Contains(got, tc.want) {
			t.Errorf("result %d: %s\nwant it to contain %s", i, got, tc.want)
		}
	}
	// --model forces the model of every call.
	p, _ = ParseLLMWith("openai:"+srv.URL, LLMOptions{Model: "forced-1"})
	runLLM(NewHost(Config{LLM: p}), "hi", Object(Field{"model", String("sonnet")}))
	if m := ObjGet(f.requests[2], String("model")).Str(); m != "forced-1" {
		t.Errorf("--model: sent %q", m)
	}
}

// The built-in table in docs/runtime.md is the one in the code.
func TestBuiltinModelsDocumented(t *testing.T) {
	data, err := os.ReadFile("../docs/runtime.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(data)
	i := strings.Index(doc, "<!-- builtin-models:")
	if i < 0 {
		t.Fatal("docs/runtime.md has no builtin-models table")
	}
	row := regexp.MustCompile("(?m)^\\| `([^`]+)` \\| `([^`]+)` \\| ([0-9.]+), ([0-9.]+) \\|$")
	var got []string
	for _, line := range strings.Split(doc[i:], "\n")[1:] {
		if !strings.HasPrefix(line, "|") {
			break
		}
		if m := row.FindStringSubmatch(line); m != nil {
			got = append(got, m[1]+" "+m[2]+" "+m[3]+" "+m[4])
		}
	}
	var want []string
	for name, e := range BuiltinModels() {
		want = append(want, name+" "+e.Model+" "+strconv.FormatFloat(e.PromptPrice, 'g', -1, 64)+" "+strconv.FormatFloat(e.CompletionPrice, 'g', -1, 64))
	}
	sort.Strings(want)
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("docs/runtime.md's table:\n%s\nthe code's:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// Main's --models and --model reach the provider; the result it prints
// has the usage; malformed providers are usage errors (exit 2).
func TestMainModelFlags(t *testing.T) {
	clearModelEnv(t)
	f := &fakeOpenAI{responses: []func(http.ResponseWriter){ok("hello", `,"usage":{"prompt_tokens":100,"completion_tokens":10}`)}}
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	file := writeModels(t, `{"models": {"sonnet": "vendor/s"}}`)
	prog := func(h *Host, o RunOptions) *Result {
		return h.Execute(o, func(r *Run) Value {
			return r.LLM(siteA.At(), String("hi"), Object(Field{"model", String("sonnet")}))
		})
	}
	run := func(args ...string) (int, string, string) {
		var stdout, stderr bytes.Buffer
		code := mainIO(args, "p", nil, prog, &stdout, &stderr)
		return code, stdout.String(), stderr.String()
	}
	code, out, errs := run("--llm", "openai:"+srv.URL, "--models", file)
	if code != 0 || !strings.Contains(out, `"usage":{"prompt_tokens":100,"completion_tokens":10,"total_tokens":110,"cost":0}`) {
		t.Errorf("--models: exit %d\n%s%s", code, out, errs)
	}
	if m := ObjGet(f.requests[0], String("model")).Str(); m != "vendor/s" {
		t.Errorf("--models: sent %q", m)
	}
	// The built-in sonnet has a price: 100 × 3 + 10 × 15 = 450 millionths.
	code, out, errs = run("--llm", "openai:"+srv.URL)
	if code != 0 || !strings.Contains(out, `"cost":0.00045}`) || ObjGet(f.requests[1], String("model")).Str() != "claude-sonnet-4-5" {
		t.Errorf("built-in: exit %d, sent %s\n%s%s", code, f.requests[1], out, errs)
	}
	code, _, errs = run("--llm", "openai:"+srv.URL, "--models", file, "--model", "forced")
	if code != 0 || ObjGet(f.requests[2], String("model")).Str() != "forced" {
		t.Errorf("--model: exit %d, sent %s\n%s", code, f.requests[2], errs)
	}
	for _, args := range [][]string{
		{"--llm", "http//x"},
		{"--llm", "openai:"},
		{"--llm", "openai:localhost:8000"},
		{"--model", "x"},
		{"--llm", "openai:" + srv.URL, "--models", filepath.Join(t.TempDir(), "none.json")},
	} {
		if code, _, errs := run(args...); code != 2 || !strings.Contains(errs, "p: ") {
			t.Errorf("%q: exit %d, want 2\n%s", args, code, errs)
		}
	}
	if len(f.requests) != 3 {
		t.Errorf("%d requests: a usage error called the server", len(f.requests))
	}
}
