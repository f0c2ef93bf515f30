// Package golden runs txtar golden tests: one file per case, holding the
// input and every expected output. `go test ./... -update` rewrites the
// expected outputs from what the code now produces; otherwise a mismatch
// fails the test with a cmp.Diff.
package golden

import (
	"flag"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/tools/txtar"
)

// Update is the -update flag shared by every golden test.
var Update = flag.Bool("update", false, "rewrite golden files with the current outputs")

// Case is one txtar file.
type Case struct {
	Path    string
	Archive *txtar.Archive
	got     map[string]string
	checked map[string]bool
}

// Files returns the txtar files matching pattern, sorted.
func Files(t testing.TB, pattern string) []string {
	t.Helper()
	files, err := filepath.Glob(pattern)
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatalf("no golden files match %s", pattern)
	}
	sort.Strings(files)
	return files
}

// Run calls fn for each txtar file matching pattern in a subtest named
// after the file, then compares or rewrites the outputs fn recorded.
func Run(t *testing.T, pattern string, fn func(t *testing.T, c *Case)) {
	for _, path := range Files(t, pattern) {
		name := strings.TrimSuffix(filepath.Base(path), filepath.Ext(path))
		t.Run(name, func(t *testing.T) {
			c, err := Load(path)
			if err != nil {
				t.Fatal(err)
			}
			fn(t, c)
			c.Finish(t)
		})
	}
}

// Load reads one txtar file.
func Load(path string) (*Case, error) {
	a, err := txtar.ParseFile(path)
	if err != nil {
		return nil, err
	}
	return &Case{Path: path, Archive: a, got: map[string]string{}, checked: map[string]bool{}}, nil
}

// File returns the contents of the named section and whether it exists.
func (c *Case) File(name string) (string, bool) {
	for _, f := range c.Archive.Files {
		if f.Name == name {
			return string(f.Data), true
		}
	}
	return "", false
}

// Comment is the free text before the first section.
func (c *Case) Comment() string { return string(c.Archive.Comment) }

// Check records the actual contents of an output section. The section is
// compared (or, with -update, written) when the case finishes.
func (c *Case) Check(name, got string) {
	if got != "" && !strings.HasSuffix(got, "\n") {
		got += "\n"
	}
	c.got[name] = got
}

// Finish compares every checked section with the archive, or rewrites the
// archive under -update. Sections named out/... that were expected but
// not produced are reported too.
func (c *Case) Finish(t *testing.T) {
	t.Helper()
	for _, f := range c.Archive.Files {
		if err := CheckSectionName(f.Name); err != nil {
			t.Errorf("%s: %v", c.Path, err)
		}
	}
	for _, n := range c.checkedNames() {
		if err := CheckSectionName(n); err != nil {
			t.Errorf("%s: the test checks %v", c.Path, err)
		}
	}
	if *Update {
		c.rewrite(t)
		return
	}
	names := make([]string, 0, len(c.got))
	for n := range c.got {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		want, ok := c.File(n)
		if !ok {
			t.Errorf("%s: section %s missing; run with -update to add it:\n%s", c.Path, n, c.got[n])
			continue
		}
		if d := cmp.Diff(want, c.got[n]); d != "" {
			t.Errorf("%s: section %s differs (-want +got):\n%s", c.Path, n, d)
		}
	}
	for _, f := range c.Archive.Files {
		if strings.HasPrefix(f.Name, "out/") {
			if _, ok := c.got[f.Name]; !ok {
				t.Errorf("%s: expected section %s was not produced", c.Path, f.Name)
			}
		}
	}
}

func (c *Case) rewrite(t *testing.T) {
	t.Helper()
	var files []txtar.File
	seen := map[string]bool{}
	for _, f := range c.Archive.Files {
		if g, ok := c.got[f.Name]; ok {
			f.Data = []byte(g)
			seen[f.Name] = true
		} else if strings.HasPrefix(f.Name, "out/") {
			continue // no longer produced
		}
		files = append(files, f)
	}
	var extra []string
	for n := range c.got {
		if !seen[n] {
			extra = append(extra, n)
		}
	}
	sort.Strings(extra)
	for _, n := range extra {
		files = append(files, txtar.File{Name: n, Data: []byte(c.got[n])})
	}
	c.Archive.Files = files
	if err := os.WriteFile(c.Path, txtar.Format(c.Archive), 0o644); err != nil {
		t.Fatal(err)
	}
}

// checkedNames returns the names of the checked sections, sorted.
func (c *Case) checkedNames() []string {
	names := make([]string, 0, len(c.got))
	for n := range c.got {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}
