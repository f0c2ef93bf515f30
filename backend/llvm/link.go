package llvm

import (
	"bytes"
	_ "embed"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// runtimeC is the C runtime linked into every native program.
//
//go:embed rt/runtime.c
var runtimeC []byte

// Tools names the programs Link runs; empty fields take the defaults:
// $GENESIS_LLC or llc, $GENESIS_OPT or opt (optional), $CC or cc.
type Tools struct {
	LLC, Opt, CC string
	// Runtime, when set, is an object file of the runtime made by
	// CompileRuntime, linked instead of compiling runtime.c again: it
	// saves most of the C compiler's time when many programs are linked.
	Runtime string
	// Level is how hard LLVM optimizes: LevelFull (the default) runs
	// opt -O2, when opt is installed, and llc -O2; LevelNone runs llc -O0
	// alone, many times faster on large functions, for tests of the
	// translation rather than of LLVM.
	Level Level
}

// Level is an optimization level of Tools.
type Level int

// The levels of Tools.Level.
const (
	LevelFull Level = iota
	LevelNone
)

func (t Tools) resolve() Tools {
	pick := func(v, env, def string) string {
		if v != "" {
			return v
		}
		if e := os.Getenv(env); e != "" {
			return e
		}
		return def
	}
	return Tools{LLC: pick(t.LLC, "GENESIS_LLC", "llc"), Opt: pick(t.Opt, "GENESIS_OPT", "opt"), CC: pick(t.CC, "CC", "cc"), Runtime: t.Runtime, Level: t.Level}
}

// CompileRuntime compiles the runtime to the object file out, for
// Tools.Runtime.
func CompileRuntime(out string, t Tools) error {
	if err := Available(t); err != nil {
		return err
	}
	t = t.resolve()
	dir, err := os.MkdirTemp("", "genesis-runtime-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	src := filepath.Join(dir, "runtime.c")
	if err := os.WriteFile(src, runtimeC, 0o644); err != nil {
		return err
	}
	return run(t.CC, "-O2", "-fPIC", "-c", "-o", out, src)
}

// Available reports whether the tools Link needs (llc and a C compiler)
// are installed, and if not, an error saying which is missing.
func Available(t Tools) error {
	t = t.resolve()
	for _, tool := range []struct{ name, what string }{{t.LLC, "llc (LLVM's static compiler)"}, {t.CC, "cc (the C compiler that links)"}} {
		if _, err := exec.LookPath(tool.name); err != nil {
			return fmt.Errorf("--target native needs %s: %q is not in PATH; install LLVM and a C compiler (e.g. apt-get install llvm gcc)", tool.what, tool.name)
		}
	}
	return nil
}

// Link turns the LLVM module text ll into the executable out: opt -O2
// when opt is installed (it is optional: llc alone gives correct but
// slower code), llc -O2 to an object file, and cc to link it with the
// runtime. The intermediate files live in a temporary directory that is
// removed.
func Link(ll string, out string, t Tools) error {
	if err := Available(t); err != nil {
		return err
	}
	t = t.resolve()
	dir, err := os.MkdirTemp("", "genesis-native-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	rt := t.Runtime
	if rt == "" {
		rt = filepath.Join(dir, "runtime.c")
		if err := os.WriteFile(rt, runtimeC, 0o644); err != nil {
			return err
		}
	}
	obj, err := compileUnit(ll, filepath.Join(dir, "program"), t)
	if err != nil {
		return err
	}
	abs, err := filepath.Abs(out)
	if err != nil {
		return err
	}
	return run(t.CC, "-O2", "-o", abs, obj, rt)
}

func run(name string, args ...string) error {
	cmd := exec.Command(name, args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("%s %s: %v\n%s", filepath.Base(name), strings.Join(args, " "), err, stderr.String())
	}
	return nil
}
