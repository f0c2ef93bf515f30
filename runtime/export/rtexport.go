// Package export writes a copy of the runtime package into an app's Go
// module, so that a package genesisc generates for the app (`genesisc
// build --target go`) builds there with `go mod tidy && go build ./...`:
// the toolchain's own module is not published, so an app cannot require
// it, but it can hold the runtime's source like any package of its own.
//
// A copy is a directory of the runtime's Go files, each marked as
// generated, and a manifest (ManifestName) that records the runtime's
// hash and the generated packages built against it. Writing the same
// runtime again changes nothing; writing another one (a newer genesisc)
// replaces the files the manifest lists and says which generated
// packages were built against the old one. A directory that holds files
// without a manifest is never written into: they are the app's.
//
// Export also raises the app's go.mod to the module versions the runtime
// was built and tested with (Modules), and its go directive to the language
// version the runtime needs, so `go mod tidy` resolves what genesisc
// was tested with rather than whatever is newest.
package export

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"golang.org/x/mod/modfile"
	"golang.org/x/mod/module"
	"golang.org/x/mod/semver"

	"github.com/genesis-toolchain/genesis/runtime"
)

// ManifestName is the file in a runtime copy's directory that makes it
// one: its hash, its files and the generated packages that use it.
const ManifestName = "genesis-runtime.json"

// DefaultDir is where a generated package's runtime copy goes, relative
// to the root of the app's module, when the build names none: internal,
// so that the copy is the module's own and not an API it exports.
const DefaultDir = "internal/genesis/runtime"

// goVersion is the Go language version the runtime's source needs
// (range over integers, generic standard packages). An app module
// declaring an older one is raised to it.
const goVersion = "1.22"

// Modules are the modules the runtime package imports, directly and
// indirectly, outside the standard library and the toolchain's module, at
// the versions the toolchain builds and tests it with.
// TestModulesAreTheRuntimesDependencies keeps the list equal to what
// `go list -deps ./runtime` says.
var Modules = []module.Version{
	{Path: "github.com/cenkalti/backoff/v5", Version: "v5.0.3"},
	{Path: "github.com/cespare/xxhash/v2", Version: "v2.3.0"},
	{Path: "github.com/dustin/go-humanize", Version: "v1.1.0"},
	{Path: "github.com/go-logr/logr", Version: "v1.4.4"},
	{Path: "github.com/go-logr/stdr", Version: "v1.2.2"},
	{Path: "github.com/google/jsonschema-go", Version: "v0.4.3"},
	{Path: "github.com/google/uuid", Version: "v1.6.0"},
	{Path: "github.com/grpc-ecosystem/grpc-gateway/v2", Version: "v2.30.0"},
	{Path: "github.com/modelcontextprotocol/go-sdk", Version: "v1.8.0"},
	{Path: "github.com/remyoudompheng/bigfft", Version: "v0.0.0-20230129092748-24d4a6f8daec"},
	{Path: "github.com/segmentio/asm", Version: "v1.1.3"},
	{Path: "github.com/segmentio/encoding", Version: "v0.5.4"},
	{Path: "github.com/yosida95/uritemplate/v3", Version: "v3.0.2"},
	{Path: "go.opentelemetry.io/auto/sdk", Version: "v1.2.1"},
	{Path: "go.opentelemetry.io/otel", Version: "v1.47.0"},
	{Path: "go.opentelemetry.io/otel/exporters/otlp/otlptrace", Version: "v1.47.0"},
	{Path: "go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp", Version: "v1.47.0"},
	{Path: "go.opentelemetry.io/otel/log", Version: "v1.47.0"},
	{Path: "go.opentelemetry.io/otel/metric", Version: "v1.47.0"},
	{Path: "go.opentelemetry.io/otel/sdk", Version: "v1.47.0"},
	{Path: "go.opentelemetry.io/otel/trace", Version: "v1.47.0"},
	{Path: "go.opentelemetry.io/proto/otlp", Version: "v1.11.0"},
	{Path: "golang.org/x/net", Version: "v0.61.0"},
	{Path: "golang.org/x/oauth2", Version: "v0.36.0"},
	{Path: "golang.org/x/sync", Version: "v0.24.0"},
	{Path: "golang.org/x/sys", Version: "v0.49.0"},
	{Path: "golang.org/x/text", Version: "v0.43.0"},
	{Path: "golang.org/x/time", Version: "v0.15.0"},
	{Path: "google.golang.org/genproto/googleapis/api", Version: "v0.0.0-20260928230214-8a89bd6388cc"},
	{Path: "google.golang.org/genproto/googleapis/rpc", Version: "v0.0.0-20260928230214-8a89bd6388cc"},
	{Path: "google.golang.org/grpc", Version: "v1.83.2"},
	{Path: "google.golang.org/protobuf", Version: "v1.36.12"},
	{Path: "modernc.org/libc", Version: "v1.79.0"},
	{Path: "modernc.org/mathutil", Version: "v1.7.1"},
	{Path: "modernc.org/memory", Version: "v1.12.1"},
	{Path: "modernc.org/sqlite", Version: "v1.61.1"},
}

// Module is a Go module on disk: the directory of its go.mod and its
// module path.
type Module struct {
	Root string // absolute
	Path string
}

// FindModule returns the module whose tree holds dir: the nearest go.mod
// in dir or above it. ok is false when there is none.
func FindModule(dir string) (m Module, ok bool, err error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return Module{}, false, err
	}
	for d := abs; ; {
		data, err := os.ReadFile(filepath.Join(d, "go.mod"))
		switch {
		case err == nil:
			p := modfile.ModulePath(data)
			if p == "" {
				return Module{}, false, fmt.Errorf("%s: no module line", filepath.Join(d, "go.mod"))
			}
			return Module{Root: d, Path: p}, true, nil
		case !errors.Is(err, fs.ErrNotExist):
			return Module{}, false, err
		}
		parent := filepath.Dir(d)
		if parent == d {
			return Module{}, false, nil
		}
		d = parent
	}
}

// ImportPath returns the import path of the package in dir, which must be
// inside m's tree.
func (m Module) ImportPath(dir string) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	rel, err := filepath.Rel(m.Root, abs)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return "", fmt.Errorf("%s is not inside the module %s (%s)", dir, m.Path, m.Root)
	}
	if rel == "." {
		return m.Path, nil
	}
	p := path.Join(m.Path, filepath.ToSlash(rel))
	if err := module.CheckImportPath(p); err != nil {
		return "", err
	}
	return p, nil
}

// manifest is the content of ManifestName.
type manifest struct {
	Runtime  string   `json:"runtime"`  // "sha256:" and the hash of the files
	Files    []string `json:"files"`    // the files written, sorted
	Programs []string `json:"programs"` // import paths of the generated packages using the copy, sorted
}

// Report says what Export did.
type Report struct {
	Dir        string // the copy's directory
	ImportPath string // its import path
	Runtime    string // the hash of the runtime written
	// Wrote is false when the directory already held this runtime.
	Wrote bool
	// Replaced is the hash of the runtime the copy held before, when
	// Export replaced it; Stale then lists the generated packages built
	// against it (other than the one being built), which must be
	// rebuilt with this genesisc.
	Replaced string
	Stale    []string
	// Required lists the module requirements Export added to or raised
	// in go.mod, as "path@version".
	Required []string
}

// Export writes the runtime into dir, inside module m, records program
// (an import path; "" for none) as a user of the copy, and updates m's
// go.mod. It refuses a directory that holds files but no manifest.
func Export(m Module, dir, program string) (*Report, error) {
	imp, err := m.ImportPath(dir)
	if err != nil {
		return nil, err
	}
	files := sourceFiles()
	hash := Hash(files)
	rep := &Report{Dir: dir, ImportPath: imp, Runtime: hash}

	old, err := readManifest(dir)
	if err != nil {
		return nil, err
	}
	next := manifest{Runtime: hash}
	for name := range files {
		next.Files = append(next.Files, name)
	}
	sort.Strings(next.Files)
	if old != nil {
		next.Programs = old.Programs
	}
	if program != "" && !slices.Contains(next.Programs, program) {
		next.Programs = append(next.Programs, program)
		sort.Strings(next.Programs)
	}

	switch {
	case old != nil && old.Runtime == hash:
		// The same runtime: only the list of users may grow.
	case old != nil:
		rep.Replaced = old.Runtime
		for _, p := range old.Programs {
			if p != program {
				rep.Stale = append(rep.Stale, p)
			}
		}
		for _, name := range old.Files {
			if _, kept := files[name]; !kept && safeName(name) {
				if err := os.Remove(filepath.Join(dir, name)); err != nil && !errors.Is(err, fs.ErrNotExist) {
					return nil, err
				}
			}
		}
		fallthrough
	default:
		if err := writeFiles(dir, files); err != nil {
			return nil, err
		}
		rep.Wrote = true
	}
	if old == nil || rep.Wrote || !slices.Equal(old.Programs, next.Programs) {
		if err := writeManifest(dir, next); err != nil {
			return nil, err
		}
	}
	if rep.Required, err = updateGoMod(m); err != nil {
		return nil, err
	}
	return rep, nil
}

// sourceFiles returns the runtime's files as they are written into a copy:
// each starts with the generated-code line, so that tools and reviewers
// leave it alone.
func sourceFiles() map[string][]byte {
	files := runtime.Source()
	for name, data := range files {
		files[name] = append([]byte("// Code generated by genesisc runtime from the toolchain's runtime package. DO NOT EDIT.\n\n"), data...)
	}
	return files
}

// Hash returns the hash that identifies a runtime by its files.
func Hash(files map[string][]byte) string {
	names := make([]string, 0, len(files))
	for name := range files {
		names = append(names, name)
	}
	sort.Strings(names)
	h := sha256.New()
	for _, name := range names {
		fmt.Fprintf(h, "%s %d\n", name, len(files[name]))
		h.Write(files[name])
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil))
}

// readManifest reads dir's manifest: nil when dir does not exist or is
// empty, an error when it holds files but no manifest, or a manifest
// that does not parse.
func readManifest(dir string) (*manifest, error) {
	data, err := os.ReadFile(filepath.Join(dir, ManifestName))
	if errors.Is(err, fs.ErrNotExist) {
		entries, rerr := os.ReadDir(dir)
		if errors.Is(rerr, fs.ErrNotExist) {
			return nil, nil
		}
		if rerr != nil {
			return nil, rerr
		}
		if len(entries) > 0 {
			return nil, fmt.Errorf("%s holds files but no %s: it is not a runtime copy genesisc wrote, and genesisc does not write into it", dir, ManifestName)
		}
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var m manifest
	if err := json.Unmarshal(data, &m); err != nil || !strings.HasPrefix(m.Runtime, "sha256:") {
		return nil, fmt.Errorf("%s: not a runtime manifest genesisc wrote", filepath.Join(dir, ManifestName))
	}
	return &m, nil
}

func writeManifest(dir string, m manifest) error {
	if m.Programs == nil {
		m.Programs = []string{}
	}
	data, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	return writeFile(filepath.Join(dir, ManifestName), append(data, '\n'))
}

func writeFiles(dir string, files map[string][]byte) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	names := make([]string, 0, len(files))
	for name := range files {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		if err := writeFile(filepath.Join(dir, name), files[name]); err != nil {
			return err
		}
	}
	return nil
}

// writeFile replaces name by data through a temporary file and a rename,
// so that an interrupted export leaves each file whole, old or new.
func writeFile(name string, data []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(name), ".genesis-*")
	if err != nil {
		return err
	}
	_, werr := tmp.Write(data)
	cerr := tmp.Close()
	if werr == nil {
		werr = cerr
	}
	if werr == nil {
		werr = os.Chmod(tmp.Name(), 0o644)
	}
	if werr == nil {
		werr = os.Rename(tmp.Name(), name)
	}
	if werr != nil {
		os.Remove(tmp.Name())
	}
	return werr
}

// safeName reports whether a manifest's file name is a plain Go file name,
// so that a tampered manifest cannot make Export remove anything else.
func safeName(name string) bool {
	return name == filepath.Base(name) && strings.HasSuffix(name, ".go") && !strings.HasPrefix(name, ".")
}

// updateGoMod raises m's requirements of Modules to their versions and
// its go directive to goVersion, rewriting go.mod only when something
// changes. It never lowers a version the app already requires.
func updateGoMod(m Module) (required []string, err error) {
	name := filepath.Join(m.Root, "go.mod")
	data, err := os.ReadFile(name)
	if err != nil {
		return nil, err
	}
	f, err := modfile.Parse(name, data, nil)
	if err != nil {
		return nil, err
	}
	have := map[string]string{}
	for _, r := range f.Require {
		have[r.Mod.Path] = r.Mod.Version
	}
	changed := false
	for _, mod := range Modules {
		if cur, ok := have[mod.Path]; ok && semver.Compare(cur, mod.Version) >= 0 {
			continue
		}
		if err := f.AddRequire(mod.Path, mod.Version); err != nil {
			return nil, err
		}
		required = append(required, mod.String())
		changed = true
	}
	if f.Go == nil || semver.Compare("v"+f.Go.Version, "v"+goVersion) < 0 {
		if err := f.AddGoStmt(goVersion); err != nil {
			return nil, err
		}
		changed = true
	}
	if !changed {
		return required, nil
	}
	f.Cleanup()
	out, err := f.Format()
	if err != nil {
		return nil, err
	}
	if bytes.Equal(out, data) {
		return required, nil
	}
	return required, writeFile(name, out)
}
