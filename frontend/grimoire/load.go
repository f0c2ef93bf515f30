package grimoire

import (
	"path"
	"path/filepath"
	"strings"

	"github.com/genesis-toolchain/genesis/diag"
	"github.com/genesis-toolchain/genesis/frontend"
)

// Program is a spell with every spell it imports, loaded and checked.
type Program struct {
	Spell *Spell // the spell Load was given
	// Imports are the spells it imports, directly or not, each once, in
	// the order Check reached them (depth first, in source order).
	Imports []*Spell
	// Sources holds every file read, by the name its positions use, for
	// rendering diagnostics.
	Sources diag.Sources
}

// Check parses the spell that is the file of in, loads the spells it
// imports (recursively, read with in.Read; an import's path is relative
// to the importing file, as the specification requires) and, when all
// of that went without error, checks them all: the spell as CheckSpell
// does, the imported ones as libraries, which need no trigger. It
// returns the diagnostics of every file, ordered by file and position;
// the program is good for lowering when none is an error. The program is
// nil only when the entry file cannot be read.
//
// in.Read is called with the entry's name, and with the paths of imports
// joined to the directory of the file importing them (path/filepath); a
// file read is not read again.
func Check(in frontend.Input) (*Program, diag.List) {
	file := in.Entry().Name
	l := &loader{read: in.Read, prog: &Program{Sources: diag.Sources{}}, byPath: map[string]*Spell{}}
	src, err := l.read(file)
	if err != nil {
		l.errorf(diag.Pos{File: file}, CodeImport, "cannot read the spell: %v", err)
		return nil, l.sorted()
	}
	l.prog.Spell = l.load(file, src, false)
	// CheckSpell runs only on a program that parses, and that imports what it
	// names: its messages about a broken tree would be consequences.
	if !l.diags.HasErrors() {
		l.diags = append(l.diags, check(l.prog.Spell, false)...)
		for _, s := range l.prog.Imports {
			l.diags = append(l.diags, check(s, true)...)
		}
	}
	return l.prog, l.sorted()
}

// A loader reads a spell and its imports.
type loader struct {
	reporter
	read   func(string) ([]byte, error)
	prog   *Program
	byPath map[string]*Spell // every file parsed, by its cleaned path
	stack  []string          // the files being loaded, importer first
}

// load parses the file at file and loads its imports; an imported file
// joins the program's Imports before the files it imports.
func (l *loader) load(file string, src []byte, imported bool) *Spell {
	l.prog.Sources[file] = src
	s, diags := ParseFile(file, src)
	l.diags = append(l.diags, diags...)
	l.byPath[filepath.Clean(file)] = s
	if imported {
		l.prog.Imports = append(l.prog.Imports, s)
	}
	l.stack = append(l.stack, filepath.Clean(file))
	defer func() { l.stack = l.stack[:len(l.stack)-1] }()
	for _, imp := range s.Imports {
		l.resolve(file, imp)
	}
	return s
}

// resolve loads the spell imp names, relative to importer.
func (l *loader) resolve(importer string, imp *Import) {
	rel := imp.Path.Value
	switch {
	case strings.Contains(rel, "://"):
		l.errorf(imp.Path.Pos(), CodeImport, "remote imports are not part of Grimoire; import a file relative to this one")
		return
	case path.IsAbs(rel) || filepath.IsAbs(rel):
		l.errorf(imp.Path.Pos(), CodeImport, "an import's path is relative to the importing file, not absolute")
		return
	}
	file := filepath.Join(filepath.Dir(importer), filepath.FromSlash(rel))
	key := filepath.Clean(file)
	for i, p := range l.stack {
		if p == key {
			cycle := append(append([]string{}, l.stack[i:]...), key)
			for j := range cycle {
				cycle[j] = filepath.ToSlash(cycle[j])
			}
			l.errorf(imp.Path.Pos(), CodeImport, "import cycle: %s", strings.Join(cycle, " → "))
			return
		}
	}
	if s, ok := l.byPath[key]; ok {
		imp.Spell = s
		return
	}
	src, err := l.read(file)
	if err != nil {
		l.errorf(imp.Path.Pos(), CodeImport, "cannot read %s: %v", rel, err)
		return
	}
	imp.Spell = l.load(file, src, true)
}
