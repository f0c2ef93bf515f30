package compiler

import (
	"os/exec"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"testing"
)

const modulePath = "github.com/genesis-toolchain/genesis/"

// TestLanguages checks the driver's list of languages: the extensions
// of its messages, in their order, and what each language declares.
func TestLanguages(t *testing.T) {
	if got, want := strings.Join(languages.Extensions(), " "), ".gen .vvm .spell .json .yaml .yml .fasm .ir"; got != want {
		t.Errorf("extensions %s, want %s", got, want)
	}
	for _, c := range []struct {
		file, src string
		want      string
	}{
		{"a.gen", "", "Genesis"},
		{"a.vvm", "", "VVM"},
		{"a.spell", "", "Grimoire"},
		{"a.json", `{"steps": []}`, "nano-vm"},
		{"a.json", `{"groups": []}`, "execution plan"},
		{"a.json", `{"groups": [], "steps": []}`, "nano-vm"},
		{"a.yaml", `groups: []`, "nano-vm"},
		{"a.fasm", "", "Forge assembly"},
		{"a.IR", "", "IR"},
	} {
		l := languages.Language(c.file, []byte(c.src))
		if l == nil || l.Name != c.want {
			t.Errorf("%s %s: %v, want %s", c.file, c.src, l, c.want)
		}
	}
	for _, l := range languages.Languages() {
		if l.Agent == (l.Name == "Genesis" || l.Name == "Forge assembly" || l.Name == "IR") {
			t.Errorf("%s: Agent is %v", l.Name, l.Agent)
		}
		if l.Programs == "" {
			t.Errorf("%s: no name for its programs", l.Name)
		}
	}
}

// TestFrontendsImportNoOtherFrontend checks that no language frontend
// imports another, directly or not, and that the frontends' shared
// infrastructure (every other package under frontend/) imports none:
// what two frontends share lives below them all (docs/decisions.md,
// "One frontend interface (issue 15.3)"). A language's package is the
// package of its Check, so a language added to the driver's list is
// checked without a change here.
func TestFrontendsImportNoOtherFrontend(t *testing.T) {
	var frontends []string
	for _, l := range languages.Languages() {
		fn := runtime.FuncForPC(reflect.ValueOf(l.Check).Pointer()).Name()
		slash := strings.LastIndex(fn, "/")
		pkg := fn[:slash+strings.Index(fn[slash:], ".")]
		if !strings.HasPrefix(pkg, modulePath+"frontend/") {
			if l.Name != "IR" {
				t.Errorf("%s: Check is in %s, not in a frontend package", l.Name, pkg)
			}
			continue // the printed IR: ir.Parse, registered by the driver
		}
		if !slices.Contains(frontends, pkg) {
			frontends = append(frontends, pkg)
		}
	}
	if len(frontends) < 6 {
		t.Fatalf("frontend packages %v: want one for each language but the IR", frontends)
	}
	// The language a package belongs to: itself or a package below it
	// (the generated parser of frontend/vvm is part of VVM).
	frontendOf := func(pkg string) string {
		for _, f := range frontends {
			if pkg == f || strings.HasPrefix(pkg, f+"/") {
				return f
			}
		}
		return ""
	}
	out, err := exec.Command("go", "list", "-deps=false", "-f", "{{.ImportPath}}{{range .Deps}} {{.}}{{end}}", modulePath+"frontend/...").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	listed := 0
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		fields := strings.Fields(line)
		pkg, own := fields[0], frontendOf(fields[0])
		listed++
		seen := map[string]bool{}
		for _, dep := range fields[1:] {
			if f := frontendOf(dep); f != "" && f != own && !seen[f] {
				seen[f] = true
				what := "the shared frontend package " + pkg
				if own != "" {
					what = "the frontend " + own
				}
				t.Errorf("%s imports the frontend %s (directly or not)", what, f)
			}
		}
	}
	if listed < len(frontends) {
		t.Errorf("go list listed %d packages under frontend/", listed)
	}
}
