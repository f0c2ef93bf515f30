package filetest

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseHeader(t *testing.T) {
	h, prose, err := ParseHeader("test run\ntarget forge\ntarget go\ntest ir O2\nargs --input a=\"b c\" --narrate\nexit 3\nThe case's prose,\ntest on a later line is prose.\n")
	if err != nil {
		t.Fatal(err)
	}
	want := Header{
		Tests:   []Directive{{Name: "run", Args: []string{}}, {Name: "ir", Args: []string{"O2"}}},
		Targets: []string{"forge", "go"},
		Args:    []string{"--input", "a=b c", "--narrate"},
		HasArgs: true,
		Exit:    3,
		HasExit: true,
	}
	if d := cmp.Diff(want, h); d != "" {
		t.Errorf("header (-want +got):\n%s", d)
	}
	if prose != "The case's prose,\ntest on a later line is prose.\n" {
		t.Errorf("prose %q", prose)
	}
	if h, prose, err := ParseHeader("Only prose.\n"); err != nil || len(h.Tests) != 0 || prose != "Only prose.\n" {
		t.Errorf("prose only: %+v %q %v", h, prose, err)
	}
}

func TestParseHeaderErrors(t *testing.T) {
	for _, tc := range []struct{ comment, want string }{
		{"test\n", "test with no check"},
		{"target\n", "target with no name"},
		{"exit x\n", `exit "x" is not a status`},
		{"exit 256\n", "is not a status 0..255"},
		{"exit 0\nexit 1\n", "a second exit line"},
		{"args a\nargs b\n", "a second args line"},
		{"test run\nargs \"open\n", "a quote is not closed"},
	} {
		_, _, err := ParseHeader(tc.comment)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: error %v, want %q", tc.comment, err, tc.want)
		}
	}
}

// TestRunValidates runs a suite on cases that break its rules: each must
// fail, with the reason.
func TestRunValidates(t *testing.T) {
	ran := []string{}
	suite := Suite{
		Checks: map[string]Check{"run": func(t *testing.T, c *Case, d Directive) {
			ran = append(ran, c.Name)
			c.Check("out/stdout", "hi")
		}},
		Targets: []string{"forge"},
		Outputs: map[string][]string{"run": {"out/stdout"}},
	}
	for _, tc := range []struct{ name, text, want string }{
		{"no_header", "prose\n-- out/stdout --\nhi\n", "declares no check"},
		{"unknown_check", "test asm\n-- out/stdout --\nhi\n", "test asm: no such check"},
		{"unknown_target", "test run\ntarget native\n-- out/stdout --\nhi\n", "target native: no such target"},
		{"stray_output", "test run\n-- out/stdout --\nhi\n-- out/asm --\n", "section out/asm: none of the case's checks"},
	} {
		dir := t.TempDir()
		path := filepath.Join(dir, tc.name+".txtar")
		if err := os.WriteFile(path, []byte(tc.text), 0o644); err != nil {
			t.Fatal(err)
		}
		c, err := Load(path)
		if err != nil {
			t.Fatal(err)
		}
		err = suite.validate(c)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
		}
	}
	// A valid case runs its check.
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "ok.txtar"), []byte("test run\ntarget forge\n-- out/stdout --\nhi\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	Run(t, filepath.Join(dir, "*.txtar"), suite)
	if !slices.Equal(ran, []string{"ok"}) {
		t.Errorf("ran %v", ran)
	}
}

func TestHas(t *testing.T) {
	c := &Case{Header: Header{Tests: []Directive{{Name: "ir", Args: []string{"O2"}}}, Targets: []string{"go"}}}
	if !c.Has("ir") || !c.Has("ir", "O2") || c.Has("ir", "O0") || c.Has("run") {
		t.Error("Has")
	}
	if !c.On("go") || c.On("forge") {
		t.Error("On")
	}
}
