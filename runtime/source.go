package runtime

import (
	"embed"
	"io/fs"
	"strings"
)

// source holds this package's Go files, so that a tool (genesisc run) can
// build a generated program against the very runtime it was compiled
// with, without the module's source tree.
//
//go:embed *.go
var source embed.FS

// Source returns the package's Go source files (not its tests), by name.
func Source() map[string][]byte {
	files := map[string][]byte{}
	entries, _ := fs.ReadDir(source, ".")
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), "_test.go") {
			continue
		}
		data, err := source.ReadFile(e.Name())
		if err == nil {
			files[e.Name()] = data
		}
	}
	return files
}
