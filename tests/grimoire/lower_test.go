package grimoire_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/genesis-toolchain/genesis/frontend/grimoire"
)

// TestCorpusLowers lowers every spell of the corpus that has a trigger:
// the IR must verify (grimoire.Compile runs ir.VerifyLowered).
func TestCorpusLowers(t *testing.T) {
	n := 0
	err := filepath.WalkDir("corpus", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".spell") {
			return err
		}
		n++
		m, diags := grimoire.Compile(readInput(t, path, os.ReadFile))
		if diags.HasErrors() || m == nil {
			t.Errorf("%s: %v", path, diags)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n < 170 {
		t.Errorf("lowered %d spells, want the whole corpus", n)
	}
}
