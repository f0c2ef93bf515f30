// Package layers checks that the module's imports point down the
// pipeline (docs/architecture in README.md, "Layers"):
//
//	cmd → compiler → frontend, ir, backend → forge/asm, forge/bytecode → diag
//
// runtime and the Forge Machine (forge/…) import no compiler stage, no
// language frontend imports another, and ir imports nothing above it.
package layers

import (
	"bytes"
	"encoding/json"
	"os/exec"
	"sort"
	"strings"
	"testing"
)

const module = "github.com/genesis-toolchain/genesis/"

// pkg is what go list says of one package of the module.
type pkg struct {
	ImportPath string
	Imports    []string
}

// modulePackages lists the module's packages (not their tests) with the
// module's packages they import, paths relative to the module.
func modulePackages(t *testing.T) []pkg {
	t.Helper()
	cmd := exec.Command("go", "list", "-json=ImportPath,Imports", "../../...")
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		t.Fatalf("go list: %v\n%s", err, errOut.String())
	}
	var pkgs []pkg
	dec := json.NewDecoder(&out)
	for dec.More() {
		var p pkg
		if err := dec.Decode(&p); err != nil {
			t.Fatal(err)
		}
		p.ImportPath = strings.TrimPrefix(p.ImportPath, module)
		var own []string
		for _, imp := range p.Imports {
			if strings.HasPrefix(imp, module) {
				own = append(own, strings.TrimPrefix(imp, module))
			}
		}
		p.Imports = own
		pkgs = append(pkgs, p)
	}
	return pkgs
}

// under reports whether path is dir or inside it.
func under(path, dir string) bool {
	return path == dir || strings.HasPrefix(path, dir+"/")
}

// leaf packages import nothing of the module's stages; every layer may
// import them.
func leaf(path string) bool {
	for _, dir := range []string{"diag", "internal/golden", "internal/graph", "internal/parallel", "internal/cliargs", "internal/inputlimits", "forge/bytecode", "forge/asm", "forge/agentabi"} {
		if under(path, dir) {
			return true
		}
	}
	return false
}

// language returns the language frontend a path belongs to
// ("frontend/vvm" for frontend/vvm/parser), or "" for the frontends'
// shared infrastructure and for paths outside frontend/.
func language(path string) string {
	parts := strings.Split(path, "/")
	if len(parts) < 2 || parts[0] != "frontend" {
		return ""
	}
	switch parts[1] {
	case "genesis", "vvm", "grimoire", "nanovm", "plan", "fasm":
		return "frontend/" + parts[1]
	}
	return ""
}

// allowed reports whether from may import to, and why not.
func allowed(from, to string) (bool, string) {
	stage := func(p string) bool {
		return under(p, "compiler") || under(p, "frontend") || under(p, "ir") || under(p, "backend")
	}
	switch {
	case under(from, "cmd"), under(from, "tests"), under(from, "bench"), under(from, "internal/testharness"):
		return true, ""
	case leaf(to):
		return true, ""
	case under(from, "runtime"), under(from, "forge"):
		if stage(to) {
			return false, "the runtime and the Forge Machine import no compiler stage"
		}
		return !under(to, "internal/testharness"), "test harnesses are for tests"
	case leaf(from):
		return false, "a leaf package imports only other leaves"
	case under(from, "compiler"):
		return !under(to, "internal/testharness"), "test harnesses are for tests"
	case under(from, "frontend"):
		if l := language(from); l != "" && language(to) != "" && language(to) != l {
			return false, "no language frontend imports another"
		}
		return under(to, "frontend") || under(to, "ir"), "a frontend imports frontends' shared parts and ir"
	case under(from, "ir/opt"):
		return under(to, "ir"), "the optimizer imports ir"
	case under(from, "ir"):
		return under(to, "ir"), "ir imports nothing above it"
	case under(from, "backend"):
		return under(to, "ir") || under(to, "backend"), "a backend imports ir and other backends' shared parts"
	}
	return true, ""
}

// TestImportsPointDown fails for every import that points up or across
// the layers.
func TestImportsPointDown(t *testing.T) {
	var bad []string
	for _, p := range modulePackages(t) {
		for _, imp := range p.Imports {
			if ok, why := allowed(p.ImportPath, imp); !ok {
				bad = append(bad, p.ImportPath+" imports "+imp+": "+why)
			}
		}
	}
	sort.Strings(bad)
	for _, b := range bad {
		t.Error(b)
	}
}
