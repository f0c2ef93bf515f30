package vvm

import (
	"errors"
	"fmt"
	"io/fs"
	"path"
	"strings"
	"testing"

	"github.com/genesis-toolchain/genesis/frontend"

	"github.com/genesis-toolchain/genesis/diag"
)

// memFS is a read function over files in memory, counting reads.
type memFS struct {
	files map[string]string
	reads map[string]int
	errs  map[string]error
}

func (m *memFS) read(name string) ([]byte, error) {
	m.reads[name]++
	if err := m.errs[name]; err != nil {
		return nil, err
	}
	src, ok := m.files[name]
	if !ok {
		return nil, fs.ErrNotExist
	}
	return []byte(src), nil
}

// input is the Input of the program whose entry is the file entry of m,
// which imports the others.
func (m *memFS) input(entry string) frontend.Input {
	return frontend.Input{Files: []frontend.Source{{Name: entry, Data: []byte(m.files[path.Clean(entry)])}}, Import: m.read}
}

func newFS(files map[string]string) *memFS {
	return &memFS{files: files, reads: map[string]int{}, errs: map[string]error{}}
}

// TestLoadOrder checks module identity (one module per cleaned path,
// read once) and the order of Program.Modules: each after its imports.
func TestLoadOrder(t *testing.T) {
	m := newFS(map[string]string{
		"app/main.vvm": "from \"./b.vvm\" import b\nfrom \"./lib/../a.vvm\" import a\nexport pack(a, b)\n",
		"app/b.vvm":    "from \"a.vvm\" import a\nb = a\nexport b\n",
		"app/a.vvm":    "import \"s\" from \"github:x/y\"\na = 1\nexport a\n",
	})
	prog, diags := Check(m.input("./app//main.vvm"))
	if len(diags) > 0 {
		t.Fatal(diags)
	}
	var paths []string
	for _, mod := range prog.Modules {
		paths = append(paths, mod.Path)
	}
	if got, want := strings.Join(paths, " "), "app/a.vvm app/b.vvm app/main.vvm"; got != want {
		t.Errorf("modules %s, want %s", got, want)
	}
	if prog.Main != prog.Modules[2] {
		t.Error("Main is not the last module")
	}
	for name, n := range m.reads {
		if n != 1 {
			t.Errorf("%s read %d times", name, n)
		}
	}
	if len(prog.Skills) != 1 || prog.Skills[0].Skill.Value != "s" {
		t.Errorf("skills %v", prog.Skills)
	}
}

// TestLoadReadErrors checks the diagnostics of modules that cannot be
// read.
func TestLoadReadErrors(t *testing.T) {
	m := newFS(map[string]string{
		"main.vvm":                "from \"./locked.vvm\" import a\nfrom \"https://x.org/lib/r.vvm\" import b\nfrom \"https://x.org/down.vvm\" import c\n",
		"https://x.org/lib/r.vvm": "from \"./s.vvm\" import s\nb = s\nexport b\n",
		"https://x.org/lib/s.vvm": "s = 1\nexport s\n",
	})
	m.errs["locked.vvm"] = fs.ErrPermission
	m.errs["https://x.org/down.vvm"] = errors.New("503 Service Unavailable")
	_, diags := Check(m.input("main.vvm"))
	want := []string{
		"main.vvm:1:6: error[E090]: cannot read module locked.vvm: permission denied",
		"main.vvm:3:6: error[E091]: cannot fetch https://x.org/down.vvm: 503 Service Unavailable",
	}
	if got := strings.Split(diags.Error(), "\n"); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("got\n%s\nwant\n%s", diags.Error(), strings.Join(want, "\n"))
	}
	if m.reads["https://x.org/lib/s.vvm"] != 1 {
		t.Error("a relative import of a remote module is not resolved against its URL")
	}
}

// ExampleCheck checks a program from files in memory and prints its
// diagnostics as genesisc renders them.
func ExampleCheck() {
	files := map[string][]byte{
		"main.vvm": []byte("agent writer(model=\"opus\")\n\nreport = @writr `Write about {topic}.`(())\nexport report\n"),
	}
	prog, diags := Check(frontend.Input{Files: []frontend.Source{{Name: "main.vvm", Data: files["main.vvm"]}},
		Import: func(name string) ([]byte, error) {
			if src, ok := files[name]; ok {
				return src, nil
			}
			return nil, fs.ErrNotExist
		}})
	fmt.Print(diags.Render(diag.Sources(files)))
	fmt.Println(len(prog.Modules), "module,", len(prog.Main.Agents.Syms), "agent")
	// Output:
	// main.vvm:3:11: error[E040]: unknown agent @writr (did you mean writer?)
	//     report = @writr `Write about {topic}.`(())
	//               ^
	// main.vvm:3:31: error[E051]: unknown name topic in placeholder {topic}
	//     report = @writr `Write about {topic}.`(())
	//                                   ^
	// 1 module, 1 agent
}
