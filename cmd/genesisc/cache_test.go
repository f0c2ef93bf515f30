package main

import (
	"bytes"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"
)

// fakeEntry makes a cache entry (or build directory) of size bytes, last
// used at used.
func fakeEntry(t *testing.T, root, name string, size int, used time.Time) {
	t.Helper()
	dir := filepath.Join(root, name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "program"), make([]byte, size), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(dir, used, used); err != nil {
		t.Fatal(err)
	}
}

func cacheNames(t *testing.T, root string) []string {
	t.Helper()
	des, err := os.ReadDir(root)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, de := range des {
		names = append(names, de.Name())
	}
	sort.Strings(names)
	return names
}

func key(c byte) string { return strings.Repeat(string(c), 32) }

func TestEvictCache(t *testing.T) {
	root := t.TempDir()
	now := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	hour := time.Hour
	fakeEntry(t, root, key('a'), 1000, now.Add(-5*hour)) // the least recently used
	fakeEntry(t, root, key('b'), 1000, now.Add(-4*hour))
	fakeEntry(t, root, key('c'), 1000, now.Add(-6*hour)) // older still, but the one just built
	fakeEntry(t, root, key('d'), 1000, now.Add(-3*hour))
	fakeEntry(t, root, key('e'), 1000, now.Add(-time.Minute))       // used a minute ago: about to be run
	fakeEntry(t, root, "build-1", 1000, now.Add(-2*hour))           // left by a killed build
	fakeEntry(t, root, "build-2", 1000, now.Add(-time.Minute))      // a build under way
	fakeEntry(t, root, "notes", 1000, now.Add(-10*hour))            // not the cache's
	os.WriteFile(filepath.Join(root, "README"), []byte("x"), 0o644) // nor this
	// 5 entries and 2 builds, 7000 bytes; the cap is 4500: build-1 is
	// stale, a and b go (LRU), c is kept, d then fits, e is in its grace
	// time.
	if err := evictCache(root, key('c'), 4500, now); err != nil {
		t.Fatal(err)
	}
	want := []string{"README", "build-2", key('c'), key('d'), key('e'), "notes"}
	if got := cacheNames(t, root); strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("after eviction: %q, want %q", got, want)
	}
	// Without a cap only stale builds go.
	fakeEntry(t, root, "build-3", 10, now.Add(-2*hour))
	if err := evictCache(root, "", 0, now); err != nil {
		t.Fatal(err)
	}
	if got := cacheNames(t, root); strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("without a cap: %q, want %q", got, want)
	}
	// A cache that does not exist yet is nothing to evict.
	if err := evictCache(filepath.Join(root, "none"), "", 1, now); err != nil {
		t.Error(err)
	}
}

func TestCacheMax(t *testing.T) {
	t.Setenv("GENESIS_CACHE_MAX", "")
	if n, err := cacheMax(""); err != nil || n != defaultCacheMax {
		t.Errorf("default: %d, %v", n, err)
	}
	t.Setenv("GENESIS_CACHE_MAX", "512MiB")
	if n, err := cacheMax(""); err != nil || n != 512<<20 {
		t.Errorf("from the environment: %d, %v", n, err)
	}
	if n, err := cacheMax("2GiB"); err != nil || n != 2<<30 {
		t.Errorf("the flag wins: %d, %v", n, err)
	}
	if _, err := cacheMax("big"); err == nil || !strings.Contains(err.Error(), "--cache-max") {
		t.Errorf("a bad flag: %v", err)
	}
	t.Setenv("GENESIS_CACHE_MAX", "-3")
	if _, err := cacheMax(""); err == nil || !strings.Contains(err.Error(), "GENESIS_CACHE_MAX") {
		t.Errorf("a bad variable: %v", err)
	}
}

// TestCacheCommand: genesisc run announces a build on standard error,
// evicts beyond the cap on insert (an old entry goes, the new one stays),
// and genesisc cache dir|size|clean report and empty the cache.
func TestCacheCommand(t *testing.T) {
	if testing.Short() {
		t.Skip("builds Go programs")
	}
	root := filepath.Join(t.TempDir(), "cache")
	t.Setenv("GENESIS_CACHE", root)
	t.Setenv("GENESIS_CACHE_MAX", "")
	old := time.Now().Add(-time.Hour)
	fakeEntry(t, root, key('0'), 4096, old)

	dir := t.TempDir()
	prog := filepath.Join(dir, "hello.json")
	os.WriteFile(prog, []byte(`{"name": "cache test", "steps": [{"id": "say", "type": "llm", "prompt": "hello from the cache test"}]}`), 0o644)
	llm := filepath.Join(dir, "llm.json")
	os.WriteFile(llm, []byte(`{"__default__": "hi"}`), 0o644)
	var stdout, stderr bytes.Buffer
	if code := run([]string{"genesisc", "run", "--llm", "mock:" + llm, "--cache-max", "1B", prog}, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	if !strings.Contains(stderr.String(), "genesisc: building hello.json with ") || !strings.Contains(stderr.String(), "genesisc: built hello.json in ") {
		t.Errorf("the build was not announced: %q", stderr.String())
	}
	entries, err := listCache(root)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 1 || entries[0].name == key('0') || entries[0].build {
		t.Fatalf("after the build the cache holds %+v, want only the new program", entries)
	}

	// A second run starts from the cache, silently, and marks it used.
	os.Chtimes(filepath.Join(root, entries[0].name), old, old)
	stdout.Reset()
	stderr.Reset()
	if code := run([]string{"genesisc", "run", "--llm", "mock:" + llm, prog}, &stdout, &stderr); code != 0 || stderr.Len() != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	if entries, _ := listCache(root); len(entries) != 1 || !entries[0].used.After(old) {
		t.Errorf("a cache hit did not mark the entry used: %+v", entries)
	}

	cache := func(args ...string) (int, string, string) {
		var stdout, stderr bytes.Buffer
		code := run(append([]string{"genesisc", "cache"}, args...), &stdout, &stderr)
		return code, stdout.String(), stderr.String()
	}
	if code, out, _ := cache("dir"); code != 0 || out != root+"\n" {
		t.Errorf("cache dir: exit %d, %q", code, out)
	}
	if code, out, _ := cache("size"); code != 0 || !strings.Contains(out, "in 1 program (cap 1GiB) in "+root) || !strings.Contains(out, "MiB") {
		t.Errorf("cache size: exit %d, %q", code, out)
	}
	if code, out, _ := cache("clean"); code != 0 || !strings.HasPrefix(out, "removed ") {
		t.Errorf("cache clean: exit %d, %q", code, out)
	}
	if code, out, _ := cache("size"); code != 0 || !strings.HasPrefix(out, "0B in 0 programs") {
		t.Errorf("cache size after clean: exit %d, %q", code, out)
	}
	if code, _, errs := cache(); code != 2 || !strings.Contains(errs, "dir, size or clean") {
		t.Errorf("cache without a subcommand: exit %d, %q", code, errs)
	}
}
