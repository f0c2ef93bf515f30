package nanovm

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/genesis-toolchain/genesis/frontend"
	"github.com/genesis-toolchain/genesis/frontend/internal/jsontree"
	"github.com/genesis-toolchain/genesis/ir"
)

// seedPrograms returns the programs of the golden suite and the corpus
// copy (tests/nanovm), as fuzzing seeds.
func seedPrograms(f *testing.F) [][]byte {
	var seeds [][]byte
	root := filepath.Join("..", "..", "tests", "nanovm")
	_ = filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return nil
		}
		switch filepath.Ext(path) {
		case ".json", ".yaml", ".yml":
			seeds = append(seeds, data)
		case ".txtar":
			// The program section of a golden case.
			for _, part := range bytes.Split(data, []byte("\n-- ")) {
				name, body, ok := bytes.Cut(part, []byte(" --\n"))
				if ok && (bytes.HasSuffix(name, []byte(".json")) || bytes.HasSuffix(name, []byte(".yaml")) || bytes.HasSuffix(name, []byte(".yml"))) {
					seeds = append(seeds, body)
				}
			}
		}
		return nil
	})
	if len(seeds) == 0 {
		f.Fatal("no seed programs under tests/nanovm")
	}
	return seeds
}

// FuzzCompile checks that no document makes the loader, the checks or
// the lowering panic (Compile reports a panic as CodeInternal, and a
// lowered module that does not verify too), that a module comes back
// exactly when there is no error, and that the JSON loader accepts what
// encoding/json accepts and nothing else.
func FuzzCompile(f *testing.F) {
	for _, s := range seedPrograms(f) {
		f.Add(s, false)
		f.Add(s, true)
	}
	// Documents at and past the nesting limit (jsontree.MaxDepth), in both syntaxes.
	for _, s := range []string{
		strings.Repeat("[", jsontree.MaxDepth+1) + strings.Repeat("]", jsontree.MaxDepth+1),
		`{"steps": [{"id": "a", "type": "tool", "tool": "t", "args": ` + strings.Repeat(`{"a": `, jsontree.MaxDepth-3) + "1" + strings.Repeat("}", jsontree.MaxDepth-3) + `}]}`,
		`{"steps": [{"id": "c", "type": "condition", "condition": "` + strings.Repeat("(not ", maxCondDepth/2) + "$a" + strings.Repeat(")", maxCondDepth/2) + `", "then": "c", "otherwise": "c"}]}`,
	} {
		f.Add([]byte(s), false)
		f.Add([]byte(s), true)
	}
	f.Fuzz(func(t *testing.T, src []byte, yaml bool) {
		name := "fuzz.json"
		if yaml {
			name = "fuzz.yaml"
		}
		m, diags := Compile(frontend.File(name, src))
		for _, d := range diags {
			if d.Code == CodeInternal {
				t.Fatalf("internal error: %s", d)
			}
		}
		if (m == nil) != diags.HasErrors() {
			t.Fatalf("module %v with diagnostics %v", m != nil, diags)
		}
		if m != nil {
			if vs := ir.Verify(m); len(vs) > 0 {
				t.Fatalf("does not verify: %v", vs)
			}
		}
		if !yaml && utf8.Valid(src) && !bytes.HasPrefix(src, []byte("\xEF\xBB\xBF")) {
			n, ds := jsontree.ParseJSON(name, src, documentCodes)
			tooDeep, outOfRange := false, false
			for _, d := range ds {
				tooDeep = tooDeep || strings.Contains(d.Msg, "nest deeper")
				outOfRange = outOfRange || strings.Contains(d.Msg, "out of range")
			}
			if !tooDeep && !outOfRange && (n != nil) != json.Valid(src) {
				t.Fatalf("parsed %v, encoding/json says valid %v: %v", n != nil, json.Valid(src), ds)
			}
		}
	})
}

// FuzzCondition checks that no condition makes the parser panic, that
// errors point inside the condition, and that a parsed condition printed
// fully parenthesized parses back to the same expression.
func FuzzCondition(f *testing.F) {
	for _, s := range []string{
		"$a == 'yes'", "'yes' in $ans", "$x.y.0 >= -1.5 and not ($z or $w != None)",
		"$l contains \"x\" or True", "1 < $a < 3", "$a.lower()", "len($a)", "", "(", "'abc",
		"$a not in $b and $c not in 'xyz'", "not not not $a", "$a == \"it's\"",
		strings.Repeat("(", maxCondDepth+1) + "$a" + strings.Repeat(")", maxCondDepth+1),
		strings.Repeat("not ", maxCondDepth) + "$a",
		"$a" + strings.Repeat(" or $b and $c", maxCondDepth/2+1),
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		e, err := ParseCondition(src)
		if err != nil {
			if strings.HasPrefix(err.Msg, "internal error") {
				t.Fatalf("%q: %s", src, err.Msg)
			}
			if err.Off < 0 || err.Off > utf8.RuneCountInString(src)+1 {
				t.Fatalf("%q: error offset %d out of the condition", src, err.Off)
			}
			return
		}
		printed := FormatExpr(e)
		hasBoth := false
		walkExpr(e, func(x Expr) {
			if l, ok := x.(*Literal); ok && l.Kind == String && strings.Contains(l.Str, "'") && strings.Contains(l.Str, `"`) {
				hasBoth = true
			}
		})
		if hasBoth {
			return
		}
		e2, err := ParseCondition(printed)
		if err != nil && err.Msg == tooDeepMsg {
			return // full parenthesization adds a level per operator: the limit may cut it
		}
		if err != nil {
			t.Fatalf("%q printed as %q, which does not parse: %s", src, printed, err.Msg)
		}
		if again := FormatExpr(e2); again != printed {
			t.Fatalf("%q: printed %q, reparsed %q", src, printed, again)
		}
	})
}
