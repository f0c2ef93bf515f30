package golden

import (
	"bytes"
	"os"
	"path/filepath"
	"sort"
	"testing"
)

// CorpusFiles lists the files under dir whose extension is one of exts,
// as slash-separated paths relative to dir, sorted.
func CorpusFiles(t testing.TB, dir string, exts ...string) []string {
	t.Helper()
	var files []string
	err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		for _, ext := range exts {
			if !d.IsDir() && filepath.Ext(path) == ext {
				rel, _ := filepath.Rel(dir, path)
				files = append(files, filepath.ToSlash(rel))
				break
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(files)
	return files
}

// CheckCorpusCopy checks that every file of the shared corpus (the
// peer projects' programs, beside the repository as ../shared/corpus)
// has an identical copy in dir, the copy the tests read so that a
// checkout of the repository alone tests the same programs. Without the
// shared corpus it only says so.
func CheckCorpusCopy(t *testing.T, dir, shared string, exts ...string) {
	t.Helper()
	if _, err := os.Stat(shared); err != nil {
		t.Logf("no shared corpus at %s (a checkout of the repository alone): checked the copy in %s only", shared, dir)
		return
	}
	for _, rel := range CorpusFiles(t, shared, exts...) {
		want, err := os.ReadFile(filepath.Join(shared, rel))
		if err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(filepath.Join(dir, rel))
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("%s/%s differs from the shared corpus or is missing: copy it again", dir, rel)
		}
	}
}
