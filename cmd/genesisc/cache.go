package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/urfave/cli/v2"
)

// The run cache (genesisc run) holds one directory per compiled program,
// named by its 32-hex-digit key, holding the binary "program"; builds go
// on in "build-*" directories beside them, renamed into place when done.
// A binary is some 13 MB, so the cache is capped: after each insert the
// least recently used entries are removed until the cache is within
// its cap.

// defaultCacheMax is the cache's cap unless GENESIS_CACHE_MAX or
// --cache-max says otherwise: some 75 programs.
const defaultCacheMax = 1 << 30

// cacheGrace is how long after its last use an entry is safe from
// eviction: a run that found its binary execs it within that time, so
// eviction never deletes a binary another run is about to start. A
// cache may exceed its cap by the entries used this recently.
const cacheGrace = 2 * time.Minute

// staleBuild is the age from which a build directory is one a crashed or
// killed genesisc left behind.
const staleBuild = time.Hour

// cacheRoot returns the run cache's directory: $GENESIS_CACHE, or the
// user cache directory's genesis/run, made absolute.
func cacheRoot() (string, error) {
	root := os.Getenv("GENESIS_CACHE")
	if root == "" {
		dir, err := os.UserCacheDir()
		if err != nil {
			return "", fmt.Errorf("no cache directory (set GENESIS_CACHE): %v", err)
		}
		root = filepath.Join(dir, "genesis", "run")
	}
	return filepath.Abs(root)
}

// cacheMax returns the cache's cap in bytes: flag (the value of
// --cache-max, "" when not given), else $GENESIS_CACHE_MAX, else
// defaultCacheMax; 0 is no cap.
func cacheMax(flag string) (int64, error) {
	v, from := flag, "--cache-max"
	if v == "" {
		v, from = os.Getenv("GENESIS_CACHE_MAX"), "GENESIS_CACHE_MAX"
	}
	if v == "" {
		return defaultCacheMax, nil
	}
	n, err := parseSize(v)
	if err != nil {
		return 0, fmt.Errorf("%s: %v", from, err)
	}
	return n, nil
}

// isCacheKey reports whether name is an entry's name.
func isCacheKey(name string) bool {
	if len(name) != 32 {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

// cacheEntry is one entry, or a build directory, of the cache.
type cacheEntry struct {
	name  string
	size  int64
	used  time.Time // the entry directory's mtime: its last use
	build bool      // a build directory
}

// listCache returns the entries and build directories under root,
// sorted from the least recently used, by name where times tie.
func listCache(root string) ([]cacheEntry, error) {
	des, err := os.ReadDir(root)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []cacheEntry
	for _, de := range des {
		name := de.Name()
		build := strings.HasPrefix(name, "build-")
		if !de.IsDir() || !isCacheKey(name) && !build {
			continue
		}
		info, err := de.Info()
		if err != nil {
			continue // removed meanwhile
		}
		out = append(out, cacheEntry{name: name, size: dirSize(filepath.Join(root, name)), used: info.ModTime(), build: build})
	}
	sort.Slice(out, func(i, j int) bool {
		if !out[i].used.Equal(out[j].used) {
			return out[i].used.Before(out[j].used)
		}
		return out[i].name < out[j].name
	})
	return out, nil
}

// dirSize returns the bytes of the regular files under dir.
func dirSize(dir string) int64 {
	var n int64
	filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			if info, err := d.Info(); err == nil {
				n += info.Size()
			}
		}
		return nil
	})
	return n
}

// touchEntry marks the entry dir as just used.
func touchEntry(dir string) {
	now := time.Now()
	os.Chtimes(dir, now, now) // a failure only makes the entry look older
}

// evictCache removes entries of root, least recently used first, until
// the cache is within max bytes (0: no cap). It never removes keep (the
// entry just built or used), an entry used within cacheGrace, or a build
// directory younger than staleBuild (a build in progress); it removes
// older build directories, which a killed genesisc left. An entry is
// renamed away before it is removed, so no run finds half of it.
func evictCache(root, keep string, max int64, now time.Time) error {
	entries, err := listCache(root)
	if err != nil {
		return err
	}
	var total int64
	for _, e := range entries {
		total += e.size
	}
	// Stale builds first: they are nobody's.
	for _, e := range entries {
		if e.build && now.Sub(e.used) >= staleBuild {
			if err := removeEntry(root, e.name); err == nil {
				total -= e.size
			}
		}
	}
	for _, e := range entries {
		if max <= 0 || total <= max {
			break
		}
		if e.build || e.name == keep || now.Sub(e.used) < cacheGrace {
			continue
		}
		if err := removeEntry(root, e.name); err == nil {
			total -= e.size
		}
	}
	return nil
}

// removeEntry removes root/name: renamed first (to a name no lookup
// uses), then deleted.
func removeEntry(root, name string) error {
	gone, err := os.MkdirTemp(root, "evict-")
	if err != nil {
		return err
	}
	dst := filepath.Join(gone, name)
	if err := os.Rename(filepath.Join(root, name), dst); err != nil {
		os.Remove(gone)
		return err
	}
	return os.RemoveAll(gone)
}

// cleanCache removes every entry and build directory of root (and what
// an interrupted eviction left), returning the bytes freed.
func cleanCache(root string) (int64, error) {
	des, err := os.ReadDir(root)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	var freed int64
	for _, de := range des {
		name := de.Name()
		if !de.IsDir() || !isCacheKey(name) && !strings.HasPrefix(name, "build-") && !strings.HasPrefix(name, "evict-") {
			continue
		}
		size := dirSize(filepath.Join(root, name))
		if err := os.RemoveAll(filepath.Join(root, name)); err != nil {
			return freed, err
		}
		freed += size
	}
	return freed, nil
}

// cacheCommand is `genesisc cache`: where the run cache is, how large,
// and cleaning it.
func cacheCommand(stdout, stderr io.Writer) *cli.Command {
	rootOrFail := func() (string, error) {
		root, err := cacheRoot()
		if err != nil {
			fmt.Fprintf(stderr, "genesisc cache: %v\n", err)
			return "", exitError{exitDiag}
		}
		return root, nil
	}
	return &cli.Command{
		Name:      "cache",
		Usage:     "show or clean the cache of compiled programs (genesisc run)",
		UsageText: "genesisc cache dir|size|clean",
		Description: "genesisc run keeps each program it builds in a cache: $GENESIS_CACHE, by default\n" +
			"the user cache directory's genesis/run (~/.cache/genesis/run on Linux,\n" +
			"~/Library/Caches/genesis/run on macOS). It is capped at $GENESIS_CACHE_MAX\n" +
			"(or genesisc run --cache-max; default 1GiB, 0 for no cap): after each build\n" +
			"the least recently used programs are removed.",
		Subcommands: []*cli.Command{
			{
				Name:  "dir",
				Usage: "print the cache's directory",
				Action: func(c *cli.Context) error {
					root, err := rootOrFail()
					if err != nil {
						return err
					}
					fmt.Fprintln(stdout, root)
					return nil
				},
			},
			{
				Name:  "size",
				Usage: "print the cache's size, its number of programs and its cap",
				Action: func(c *cli.Context) error {
					root, err := rootOrFail()
					if err != nil {
						return err
					}
					entries, err := listCache(root)
					if err != nil {
						fmt.Fprintf(stderr, "genesisc cache: %v\n", err)
						return exitError{exitDiag}
					}
					var total int64
					programs := 0
					for _, e := range entries {
						total += e.size
						if !e.build {
							programs++
						}
					}
					max, err := cacheMax("")
					if err != nil {
						fmt.Fprintf(stderr, "genesisc cache: %v\n", err)
						return exitError{exitUsage}
					}
					cap := "no cap"
					if max > 0 {
						cap = "cap " + sizeText(max)
					}
					noun := "programs"
					if programs == 1 {
						noun = "program"
					}
					fmt.Fprintf(stdout, "%s in %d %s (%s) in %s\n", sizeText(total), programs, noun, cap, root)
					return nil
				},
			},
			{
				Name:  "clean",
				Usage: "remove every program from the cache",
				Action: func(c *cli.Context) error {
					root, err := rootOrFail()
					if err != nil {
						return err
					}
					freed, err := cleanCache(root)
					if err != nil {
						fmt.Fprintf(stderr, "genesisc cache: %v\n", err)
						return exitError{exitDiag}
					}
					fmt.Fprintf(stdout, "removed %s from %s\n", sizeText(freed), root)
					return nil
				},
			},
		},
		Action: func(c *cli.Context) error {
			fmt.Fprintln(stderr, "genesisc cache: want a subcommand: dir, size or clean")
			return exitError{exitUsage}
		},
	}
}

// buildNotice is how often a build that is still going says so.
const buildNotice = 10 * time.Second

// runAnnounced runs the build cmd, telling stderr every buildNotice that
// it is still going: on a cold Go build cache the first build compiles
// the runtime's dependencies for a minute.
func runAnnounced(cmd *exec.Cmd, name string, stderr io.Writer) error {
	if err := cmd.Start(); err != nil {
		return err
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	tick := time.NewTicker(buildNotice)
	defer tick.Stop()
	start := time.Now()
	for {
		select {
		case err := <-done:
			return err
		case <-tick.C:
			fmt.Fprintf(stderr, "genesisc: building %s: still compiling after %.0fs (the Go build cache is filling; later builds are quick)\n", name, time.Since(start).Seconds())
		}
	}
}

// parseSize reads a size: bytes, or a number with a unit (KiB, MiB, GiB,
// TiB; kB, MB, GB, TB; B).
func parseSize(v string) (int64, error) {
	s := strings.TrimSpace(v)
	mult := 1.0
	for _, u := range []struct {
		suffix string
		mult   float64
	}{
		{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}, {"TiB", 1 << 40},
		{"kB", 1e3}, {"KB", 1e3}, {"MB", 1e6}, {"GB", 1e9}, {"TB", 1e12}, {"B", 1},
	} {
		if strings.HasSuffix(s, u.suffix) {
			s, mult = strings.TrimSpace(strings.TrimSuffix(s, u.suffix)), u.mult
			break
		}
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || f < 0 || f != f || f*mult >= 1<<62 {
		return 0, fmt.Errorf("%q is not a size (bytes, or such as 512MiB, 2GiB)", v)
	}
	return int64(f * mult), nil
}

// sizeText writes n bytes for a person: 1.5GiB, 12.7MiB, 300B.
func sizeText(n int64) string {
	switch {
	case n >= 1<<30:
		return trimFloat(float64(n)/(1<<30)) + "GiB"
	case n >= 1<<20:
		return trimFloat(float64(n)/(1<<20)) + "MiB"
	case n >= 1<<10:
		return trimFloat(float64(n)/(1<<10)) + "KiB"
	}
	return strconv.FormatInt(n, 10) + "B"
}

// trimFloat writes f with one decimal, none when it is 0.
func trimFloat(f float64) string { return strings.TrimSuffix(strconv.FormatFloat(f, 'f', 1, 64), ".0") }

func itoa(n int64) string   { return strconv.FormatInt(n, 10) }
func ftoa(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) }
