package vvm

import (
	"errors"
	"io/fs"
	"net/url"
	"path"
	"path/filepath"
	"sort"
	"strings"

	"github.com/genesis-toolchain/genesis/diag"
	"github.com/genesis-toolchain/genesis/frontend"
)

// RegistryBase is where a registry import `from "@owner/name" import …`
// points (spec-newer.md §11.3.1.1): https://vvm.dev/owner/name.vvm. The
// compiler does not read VVM_REGISTRY_BASE_URL: a build does not depend
// on the environment.
const RegistryBase = "https://vvm.dev/"

// Check loads the program whose entry is the file of in: it parses it,
// loads every module it imports (a relative import is resolved against
// the importing file's directory, spec.md §11.3), resolves every name
// and validates the whole program. Modules are read with in.Read, once
// each, by the module's canonical path: a cleaned file path, or an
// https URL for a remote module (the compiler fetches nothing itself: a
// read that fails with fs.ErrNotExist is E095, so a host may serve
// remote modules from a cache through in.Import).
//
// Module paths, and so the file names of diagnostics and positions, are
// cleaned: "./app/../main.vvm" is "main.vvm" (the Modules' Files hold
// the sources, for rendering). Check returns the program and every
// diagnostic, sorted by file and position. The program is never nil;
// when the list holds errors it may be partial and must not be lowered.
// A module whose file has syntax errors is not resolved. Check never
// panics (a panic would be a bug: it is reported as CodeInternal).
func Check(in frontend.Input) (*Program, diag.List) {
	return check(in, false, chunkMinBytes, chunkTokens, nil)
}

// check is Check, or with twoPass set what CheckHolding runs: the
// modules parsed chunk by chunk are checked in two passes (twopass.go)
// and the program returned holds no tree of them. minChunked and target
// are parseFileChunked's, which the tests set to cut small programs;
// atPeak, when not nil, is called once, where the check holds the most.
func check(in frontend.Input, twoPass bool, minChunked, target int, atPeak func()) (*Program, diag.List) {
	path := in.Entry().Name
	l := &loader{read: in.Read, r: &reporter{}, modules: map[string]*Module{}, twoPass: twoPass, minChunked: minChunked, target: target}
	prog := &Program{}
	peak := atPeak
	again := false
	func() {
		defer l.r.recoverPhase(path)
		prog.Main = l.module(cleanPath(path), nil)
		prog.Modules = l.order
		registry := map[string]*SkillImport{}
		for _, m := range prog.Modules {
			if m.File != nil && !m.broken {
				var mpeak func()
				if m == prog.Main {
					mpeak, peak = peak, nil
				}
				if !resolveModule(m, registry, l.r, mpeak) {
					again = true
					return
				}
			}
		}
		names := make([]string, 0, len(registry))
		for name := range registry {
			names = append(names, name)
		}
		sort.Strings(names)
		for _, name := range names {
			prog.Skills = append(prog.Skills, registry[name])
		}
	}()
	if again {
		return check(in, false, minChunked, target, atPeak)
	}
	if peak != nil { // the entry module was not resolved
		peak()
	}
	l.r.diags = withBuilderDiags(l.r.diags, l.parsed)
	return prog, l.r.sorted()
}

// loader reads and parses modules, depth first.
type loader struct {
	read    func(string) ([]byte, error)
	r       *reporter
	modules map[string]*Module // by canonical path
	order   []*Module          // each after its imports

	twoPass            bool      // summarize the modules parsed chunk by chunk (twopass.go)
	minChunked, target int       // parseFileChunked's
	parsed             []*Module // the modules read, in the order they were parsed
}

// module returns the module at path, loading it and its imports the
// first time. from is the import that asks for it; nil for the entry.
func (l *loader) module(path string, from *ImportStmt) *Module {
	if m := l.modules[path]; m != nil {
		return m
	}
	m := &Module{Path: path}
	l.modules[path] = m
	src, err := l.read(path)
	if err != nil {
		l.readError(path, from, err)
		l.order = append(l.order, m)
		return m
	}
	before := l.r.syntaxErrors
	var sum *summary
	if l.twoPass {
		sum = &summary{}
	}
	f, summarized := parseFileChunked(path, src, l.r, l.minChunked, l.target, sum)
	m.File = f
	l.parsed = append(l.parsed, m)
	decls := f.Stmts
	if summarized {
		m.sum, decls = sum, sum.decls
		sum.diagAt = len(l.r.diags)
	}
	m.broken = l.r.syntaxErrors > before
	m.loading = true
	for _, s := range decls {
		imp, ok := s.(*ImportStmt)
		if !ok {
			continue
		}
		target, ok := l.resolvePath(path, imp)
		if !ok {
			continue
		}
		dep := l.module(target, imp)
		if dep.loading {
			l.r.errorf(imp.Path.ValuePos, CodeModule, "import cycle: %s imports %s, which imports it back", path, target)
			continue
		}
		imp.Module = dep
	}
	m.loading = false
	l.order = append(l.order, m)
	return m
}

// readError reports a module that could not be read.
func (l *loader) readError(path string, from *ImportStmt, err error) {
	pos := diag.Pos{File: path}
	if from != nil {
		pos = from.Path.ValuePos
	}
	switch {
	case isRemote(path) && errors.Is(err, fs.ErrNotExist):
		l.r.errorf(pos, CodeRemoteImport, "remote module %s is not available: the compiler does not fetch modules (vendor it and import it by a relative path)", path)
	case isRemote(path):
		l.r.errorf(pos, CodeFetch, "cannot fetch %s: %v", path, err)
	case errors.Is(err, fs.ErrNotExist):
		l.r.errorf(pos, CodeModule, "module not found: %s", path)
	default:
		l.r.errorf(pos, CodeModule, "cannot read module %s: %v", path, err)
	}
}

// resolvePath computes the canonical path of the module an import of
// importer names (spec.md §11.3, spec-newer.md §11.3.1): https URLs as
// they are, registry names under RegistryBase, and any other path
// relative to the importing module (a decision of docs/vvm.md: not only
// ./ and ../ paths), which may itself be remote. It reports an import
// string that names no module.
func (l *loader) resolvePath(importer string, imp *ImportStmt) (string, bool) {
	spec := imp.Path.Value
	pos := imp.Path.ValuePos
	switch {
	case spec == "":
		l.r.errorf(pos, CodeModule, "empty module path")
		return "", false
	case strings.HasPrefix(spec, "http://"):
		l.r.errorf(pos, CodeInsecureImport, "insecure import %s: remote modules are imported over https://", spec)
		return "", false
	case strings.HasPrefix(spec, "https://"):
		u, err := url.Parse(spec)
		if err != nil || u.Host == "" {
			l.r.errorf(pos, CodeBadImportURL, "invalid module URL %s", spec)
			return "", false
		}
		return u.String(), true
	case strings.HasPrefix(spec, "@"):
		name := strings.TrimPrefix(spec, "@")
		if !strings.Contains(name, "/") || strings.HasSuffix(name, "/") {
			l.r.errorf(pos, CodeBadImportURL, "invalid registry module %s: it has the form @owner/name", spec)
			return "", false
		}
		return RegistryBase + path.Clean(name) + ".vvm", true
	case strings.Contains(spec, "://"):
		l.r.errorf(pos, CodeBadImportURL, "unsupported module URL %s: import a local file by a relative path, or a remote module over https://", spec)
		return "", false
	case isRemote(importer):
		u, _ := url.Parse(importer)
		u.Path = path.Join(path.Dir(u.Path), spec)
		return u.String(), true
	case filepath.IsAbs(spec):
		return filepath.Clean(spec), true
	}
	return cleanPath(filepath.Join(filepath.Dir(importer), spec)), true
}

// isRemote reports whether a canonical module path is a URL.
func isRemote(path string) bool { return strings.HasPrefix(path, "https://") }

// cleanPath is the canonical form of a local path: lexically cleaned
// (spec.md §11.3), with forward slashes, so that diagnostics read the
// same on every system.
func cleanPath(p string) string {
	if isRemote(p) {
		return p
	}
	return filepath.ToSlash(filepath.Clean(p))
}
