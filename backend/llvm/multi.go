package llvm

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"

	"github.com/genesis-toolchain/genesis/diag"
	gir "github.com/genesis-toolchain/genesis/ir"
)

// Program is one program of LinkMulti.
type Program struct {
	Module *gir.Module
	File   string
}

// MultiArg is the argument that selects program i of LinkMulti's
// executable.
func MultiArg(i int) string { return fmt.Sprintf("p%04d", i) }

// LinkMulti compiles many programs into one executable, out, which runs
// program i when its first argument is MultiArg(i). It exists for the
// differential test, which would otherwise spend much of its time linking
// each program with cc (the arguments after the first are the program's:
// --memory and --stack): here each program becomes an object file (several
// at once), and cc links them all once. A program that does not compile
// gets its diagnostics and is left out; the error is that of the tools.
func LinkMulti(progs []Program, out string, t Tools) ([]diag.List, error) {
	if err := Available(t); err != nil {
		return nil, err
	}
	t = t.resolve()
	dir, err := os.MkdirTemp("", "genesis-multi-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	diags := make([]diag.List, len(progs))
	objs := make([]string, len(progs))
	errs := make([]error, len(progs))
	next := make(chan int)
	var wg sync.WaitGroup
	for w := 0; w < runtime.GOMAXPROCS(0); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				p := progs[i]
				u := NewUnit(p.File)
				if diags[i] = u.Add(p.Module, p.File, MultiArg(i)); diags[i].HasErrors() {
					continue
				}
				objs[i], errs[i] = compileUnit(u.String(), filepath.Join(dir, MultiArg(i)), t)
			}
		}()
	}
	for i := range progs {
		next <- i
	}
	close(next)
	wg.Wait()
	var dispatch, decls strings.Builder
	var linked []string
	for i := range progs {
		if errs[i] != nil {
			return diags, errs[i]
		}
		if objs[i] == "" {
			continue
		}
		linked = append(linked, objs[i])
		name := MultiArg(i)
		fmt.Fprintf(&decls, "extern const unsigned char %s_image[];\nextern const uint64_t %s_image_len;\nextern void %s_main(void);\n", name, name, name)
		fmt.Fprintf(&dispatch, "\tif (strcmp(argv[1], %q) == 0)\n\t\treturn gen_start(%s_image, %s_image_len, %s_main, argc - 1, argv + 1);\n", name, name, name, name)
	}
	main := "#include <stdint.h>\n#include <string.h>\n\nint gen_start(const unsigned char *, uint64_t, void (*)(void), int, char **);\n" + decls.String() +
		"\nint main(int argc, char **argv) {\n\tif (argc < 2)\n\t\treturn 2;\n" + dispatch.String() + "\treturn 2;\n}\n"
	mainC := filepath.Join(dir, "main.c")
	rtC := filepath.Join(dir, "runtime.c")
	if err := os.WriteFile(mainC, []byte(main), 0o644); err != nil {
		return diags, err
	}
	if err := os.WriteFile(rtC, runtimeC, 0o644); err != nil {
		return diags, err
	}
	abs, err := filepath.Abs(out)
	if err != nil {
		return diags, err
	}
	args := append([]string{"-O2", "-DGEN_NO_MAIN", "-o", abs, mainC, rtC}, linked...)
	return diags, run(t.CC, args...)
}

// compileUnit optimizes (when opt is installed and the level is not
// LevelNone) and compiles the LLVM module ll to an object file next to
// base, and returns its path.
func compileUnit(ll, base string, t Tools) (string, error) {
	src := base + ".ll"
	if err := os.WriteFile(src, []byte(ll), 0o644); err != nil {
		return "", err
	}
	level := "-O2"
	if t.Level == LevelNone {
		level = "-O0"
	} else if _, err := exec.LookPath(t.Opt); err == nil {
		if err := run(t.Opt, "-O2", src, "-o", base+".bc"); err != nil {
			return "", err
		}
		src = base + ".bc"
	}
	obj := base + ".o"
	return obj, run(t.LLC, level, "-relocation-model=pic", "-filetype=obj", src, "-o", obj)
}
