package parser

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestGeneratedParsersAreCurrent checks every ANTLR grammar of the module
// (frontend/*/parser/*.g4), not only this one, so that a new language is
// covered without a test of its own. scripts/antlr-generate.sh writes, next
// to the grammars it generates from, grammar.sha256 (in sha256sum's
// format); a grammar that no longer has the hash recorded there was edited
// without regenerating its parser. The test also checks that each
// generated file is marked as such and holds no path of the machine that
// generated it.
func TestGeneratedParsersAreCurrent(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", "..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	dirs, err := filepath.Glob(filepath.Join(root, "frontend", "*", "parser"))
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, dir := range dirs {
		grammars, _ := filepath.Glob(filepath.Join(dir, "*.g4"))
		if len(grammars) == 0 {
			continue
		}
		checked++
		rel, _ := filepath.Rel(root, dir)
		stamp, err := readStamp(filepath.Join(dir, "grammar.sha256"))
		if err != nil {
			t.Errorf("%s: %v; run make generate", rel, err)
			continue
		}
		for _, g := range grammars {
			src, err := os.ReadFile(g)
			if err != nil {
				t.Fatal(err)
			}
			sum := sha256.Sum256(src)
			name := filepath.Base(g)
			if want, ok := stamp[name]; !ok || want != hex.EncodeToString(sum[:]) {
				t.Errorf("%s/%s: grammar changed without regeneration; run make generate", rel, name)
			}
			delete(stamp, name)
		}
		for name := range stamp {
			t.Errorf("%s: grammar.sha256 names %s, which is gone; run make generate", rel, name)
		}
		checkGenerated(t, root, dir)
	}
	if checked == 0 {
		t.Fatal("found no grammar")
	}
}

// readStamp reads a grammar.sha256 file: "hash  name" lines.
func readStamp(path string) (map[string]string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	stamp := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		hash, name, ok := strings.Cut(sc.Text(), "  ")
		if ok {
			stamp[name] = hash
		}
	}
	return stamp, nil
}

// generatedSuffixes are the endings of the Go files ANTLR generates.
var generatedSuffixes = []string{"_lexer.go", "_parser.go", "_listener.go", "_visitor.go"}

// checkGenerated checks the generated Go files of a parser directory.
func checkGenerated(t *testing.T, root, dir string) {
	files, _ := filepath.Glob(filepath.Join(dir, "*.go"))
	generated := 0
	for _, f := range files {
		if !slices.ContainsFunc(generatedSuffixes, func(s string) bool { return strings.HasSuffix(f, s) }) {
			continue
		}
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel(root, f)
		first, _, _ := bytes.Cut(src, []byte("\n"))
		if !bytes.HasPrefix(first, []byte("// Code generated ")) || !bytes.HasSuffix(first, []byte(" DO NOT EDIT.")) {
			t.Errorf("%s: does not start with a // Code generated ... DO NOT EDIT. line", rel)
		}
		if bytes.Contains(src, []byte(root)) {
			t.Errorf("%s: holds the path of the machine that generated it (%s)", rel, root)
		}
		generated++
	}
	if generated == 0 {
		t.Errorf("%s: no generated Go code; run make generate", dir)
	}
}
