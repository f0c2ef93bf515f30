package frontend

import (
	"errors"
	"io/fs"
	"strings"
	"testing"

	"github.com/genesis-toolchain/genesis/diag"
	"github.com/genesis-toolchain/genesis/ir"
)

func lang(name string, exts ...string) *Language {
	return &Language{Name: name, Extensions: exts,
		Check: func(Input) (any, diag.List) { return nil, nil },
		Lower: func(any) (*ir.Module, diag.List) { return nil, nil }}
}

// TestRegistryDetection checks the registry's lookup: by extension, case
// blind, and among languages sharing one, the detection step: the first
// Detect that claims the file, else the language without Detect.
func TestRegistryDetection(t *testing.T) {
	doc := lang("doc", ".json", ".yaml")
	plan := lang("plan", ".json")
	plan.Detect = func(src []byte) bool { return strings.Contains(string(src), "groups") }
	other := lang("other", ".json")
	other.Detect = func(src []byte) bool { return strings.Contains(string(src), "other") }
	r, err := NewRegistry(lang("gen", ".gen"), doc, plan, other)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name, src string
		want      *Language
	}{
		{"a.json", `{"steps": []}`, doc},
		{"a.json", `{"groups": []}`, plan},
		{"a.JSON", `{"other": 1}`, other},
		{"a.json", `{"groups": [], "other": 1}`, plan}, // the first claim wins
		{"a.yaml", `groups: []`, doc},                  // Detect is for the .json it shares
		{"dir.gen/x.txt", ``, nil},
		{"noext", ``, nil},
	} {
		if got := r.Language(c.name, []byte(c.src)); got != c.want {
			t.Errorf("%s %s: %v, want %v", c.name, c.src, got, c.want)
		}
	}
	if got := strings.Join(r.Extensions(), " "); got != ".gen .json .yaml" {
		t.Errorf("extensions %s", got)
	}
}

// TestRegistryRejects checks that NewRegistry refuses a list whose files
// cannot be told apart or whose languages cannot run.
func TestRegistryRejects(t *testing.T) {
	noCheck := lang("x", ".x")
	noCheck.Check = nil
	both := lang("y", ".y")
	both.Assembled = nil
	both.Lower = nil
	for _, c := range []struct {
		langs []*Language
		want  string
	}{
		{[]*Language{lang("a", ".a"), lang("b", ".a")}, "2 languages read .a files"},
		{[]*Language{lang("a", ".a"), lang("a", ".b")}, "two languages named a"},
		{[]*Language{lang("a", "A")}, `extension "A"`},
		{[]*Language{lang("a")}, "a has no file extension"},
		{[]*Language{lang("", ".a")}, "without a name"},
		{[]*Language{noCheck}, "x has no Check"},
		{[]*Language{both}, "y must have one of Lower and Assembled"},
	} {
		_, err := NewRegistry(c.langs...)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("error %v, want one containing %q", err, c.want)
		}
	}
}

// TestInputRead checks what a frontend reads through an Input: the given
// files by their cleaned names, every other path through Import, and no
// file at all without Import.
func TestInputRead(t *testing.T) {
	in := Input{Files: []Source{{Name: "./app//main.vvm", Data: []byte("main")}},
		Import: func(path string) ([]byte, error) {
			if path == "lib.vvm" {
				return []byte("lib"), nil
			}
			return nil, fs.ErrPermission
		}}
	for path, want := range map[string]string{"app/main.vvm": "main", "app/../app/main.vvm": "main", "lib.vvm": "lib"} {
		if got, err := in.Read(path); err != nil || string(got) != want {
			t.Errorf("Read(%s) = %q, %v; want %q", path, got, err, want)
		}
	}
	if _, err := in.Read("x.vvm"); !errors.Is(err, fs.ErrPermission) {
		t.Errorf("Read of a module Import cannot read: %v", err)
	}
	one := File("a.json", []byte("{}"))
	if got, err := one.Read("a.json"); err != nil || string(got) != "{}" || one.Entry().Name != "a.json" {
		t.Errorf("File: %q, %v", got, err)
	}
	if _, err := one.Read("b.json"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Read without Import: %v, want fs.ErrNotExist", err)
	}
	if _, err := ReadInput("gone.vvm", in.Import); !errors.Is(err, fs.ErrPermission) {
		t.Errorf("ReadInput of an entry that cannot be read: %v", err)
	}
	if e := (Input{}).Entry(); e.Name != "" || e.Data != nil {
		t.Error("the entry of no file")
	}
}
