package vvm_test

import (
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/genesis-toolchain/genesis/backend/golang"
	"github.com/genesis-toolchain/genesis/frontend/vvm"
	"github.com/genesis-toolchain/genesis/internal/golden"
	"github.com/genesis-toolchain/genesis/internal/irtest"
	"github.com/genesis-toolchain/genesis/ir"
	"github.com/genesis-toolchain/genesis/ir/opt"
	"github.com/genesis-toolchain/genesis/runtime"
)

// TestCorpusCompiles compiles every corpus program that loads without
// error all the way: lowered to IR that verifies, optimized, and
// generated as Go that the Go compiler accepts (one `go build` of every
// package against the embedded runtime, as genesisc run builds them).
// The runs themselves are tests/vvm/run/*.txtar's (cmd/genesisc).
func TestCorpusCompiles(t *testing.T) {
	var entries []string
	filepath.WalkDir("corpus", func(path string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(path, ".vvm") {
			entries = append(entries, path)
		}
		return nil
	})
	if len(entries) < 40 {
		t.Fatalf("%d corpus programs", len(entries))
	}
	work := t.TempDir()
	const mod = "github.com/genesis-toolchain/genesis"
	write := func(name string, data []byte) {
		p := filepath.Join(work, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("go.mod", []byte("module corpus\n\ngo 1.22\n\nrequire "+mod+" v0.0.0\n\nreplace "+mod+" => ./genesis\n"))
	write("genesis/go.mod", []byte("module "+mod+"\n\ngo 1.22\n"))
	for name, data := range runtime.Source() {
		write(filepath.Join("genesis", "runtime", name), data)
	}
	compiled := 0
	for i, path := range entries {
		prog, diags := vvm.Load(path, os.ReadFile)
		if diags.HasErrors() {
			continue // recorded by TestCorpus
		}
		m, ds := vvm.Lower(prog)
		if ds.HasErrors() {
			t.Errorf("%s: %s", path, ds.Error())
			continue
		}
		if vs := ir.Verify(m); len(vs) > 0 {
			t.Errorf("%s: the lowered IR does not verify: %s", path, vs.Error())
			continue
		}
		opt.Run(m, opt.MaxLevel, nil)
		files, gds := golang.Generate(m, golang.Options{Package: "p", Source: path})
		if gds.HasErrors() {
			t.Errorf("%s: %s", path, gds.Error())
			continue
		}
		for _, f := range files {
			write(filepath.Join(fmt.Sprintf("p%02d", i), f.Name), f.Data)
		}
		compiled++
	}
	if compiled == 0 {
		t.Fatal("no corpus program compiled")
	}
	if testing.Short() {
		return // the Go build takes seconds
	}
	cmd := exec.Command("go", "build", "./...")
	cmd.Dir = work
	cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=mod", "GOTOOLCHAIN=local")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		t.Fatalf("go build of the %d generated packages: %v\n%s", compiled, err, out.String())
	}
	t.Logf("%d of %d corpus programs compile to Go", compiled, len(entries))
}

// TestLower compiles the programs of lower/*.txtar and compares the IR of
// their own functions (out/ir; the @vvm.* helpers every module holds are
// left out) with the golden text: what a construct becomes. The IR must
// verify and print back to itself.
func TestLower(t *testing.T) {
	golden.Run(t, filepath.Join("lower", "*.txtar"), func(t *testing.T, c *golden.Case) {
		prog, diags := run(t, c)
		if diags.HasErrors() {
			t.Fatal("a lower case must load without errors")
		}
		m, ds := vvm.Lower(prog)
		if ds.HasErrors() {
			t.Fatal(ds.Error())
		}
		if vs := ir.Verify(m); len(vs) > 0 {
			t.Fatal(vs.Error())
		}
		irtest.CheckRoundTrip(t, ir.Print(m))
		own := &ir.Module{}
		for _, f := range m.Funcs {
			if !strings.HasPrefix(f.Name, "vvm.") {
				own.Funcs = append(own.Funcs, f)
			}
		}
		c.Check("out/ir", ir.Print(own))
	})
}
