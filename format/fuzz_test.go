package format

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/tools/txtar"

	"github.com/genesis-toolchain/genesis/frontend/genesis"
	"github.com/genesis-toolchain/genesis/frontend/vvm"
)

// genVVMFuzzSeeds adds the sources of ext of the golden cases and of the
// examples to f.
func genVVMFuzzSeeds(f *testing.F, ext string) {
	cases, _ := filepath.Glob("testdata/*.txtar")
	for _, c := range cases {
		a, err := txtar.ParseFile(c)
		if err != nil {
			f.Fatal(err)
		}
		for _, s := range a.Files {
			if filepath.Ext(s.Name) == ext {
				f.Add(s.Data)
			}
		}
	}
	examples, _ := filepath.Glob("../examples/*" + ext)
	for _, e := range examples {
		data, err := os.ReadFile(e)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
}

// fuzzGenVVM checks one input: the formatter never panics nor fails its
// own check (ErrInternal), refuses a file only with diagnostics, and
// when it formats one, the output parses without error and formats to
// itself.
func fuzzGenVVM(t *testing.T, name string, src []byte, parses func([]byte) bool) {
	out, err := File(name, src)
	var se *SyntaxError
	switch {
	case errors.As(err, &se):
		if len(se.Diags) == 0 || parses(src) {
			t.Fatalf("refused with %v, but the file parses", err)
		}
		return
	case err != nil:
		t.Fatalf("%q: %v", src, err)
	}
	if !parses(out) {
		t.Fatalf("the output of %q does not parse:\n%s", src, out)
	}
	again, err := File(name, out)
	if err != nil || string(again) != string(out) {
		t.Fatalf("formatting the output of %q again: %v\n%s\nthen\n%s", src, err, out, again)
	}
	if len(out) > 0 && !strings.HasSuffix(string(out), "\n") {
		t.Fatalf("the output of %q does not end with a line break", src)
	}
}

func FuzzGenesis(f *testing.F) {
	genVVMFuzzSeeds(f, ".gen")
	f.Fuzz(func(t *testing.T, src []byte) {
		fuzzGenVVM(t, "f.gen", src, func(b []byte) bool {
			_, diags := genesis.Parse("f.gen", b)
			return !diags.HasErrors()
		})
	})
}

func FuzzVVM(f *testing.F) {
	genVVMFuzzSeeds(f, ".vvm")
	f.Fuzz(func(t *testing.T, src []byte) {
		fuzzGenVVM(t, "f.vvm", src, func(b []byte) bool {
			_, diags := vvm.ParseFile("f.vvm", b)
			return !diags.HasErrors()
		})
	})
}
