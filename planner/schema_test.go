package planner

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
	"go.yaml.in/yaml/v3"

	"github.com/genesis-toolchain/genesis/compiler"
)

// corpusDir is the repository's copy of the shared corpus's nano-vm
// programs (golden.CheckCorpusCopy keeps it identical).
var corpusDir = filepath.Join("..", "tests", "nanovm", "corpus")

// resolvedSchema returns the program schema, resolved by an independent
// JSON Schema implementation (2020-12).
func resolvedSchema(t *testing.T) *jsonschema.Resolved {
	t.Helper()
	var s jsonschema.Schema
	if err := json.Unmarshal(schemaJSON, &s); err != nil {
		t.Fatalf("program.schema.json: %v", err)
	}
	rs, err := s.Resolve(nil)
	if err != nil {
		t.Fatalf("program.schema.json does not resolve: %v", err)
	}
	return rs
}

// corpusPrograms returns the nano-vm programs of the corpus: file name
// and document, decoded as JSON values.
func corpusPrograms(t *testing.T) map[string]any {
	t.Helper()
	out := map[string]any{}
	err := filepath.WalkDir(corpusDir, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		ext := filepath.Ext(path)
		if ext != ".json" && ext != ".yaml" && ext != ".yml" {
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		var v any
		if ext == ".json" {
			err = json.Unmarshal(data, &v)
		} else {
			err = yaml.Unmarshal(data, &v)
		}
		if err != nil {
			t.Errorf("%s: %v", path, err)
			return nil
		}
		out[path] = v
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(out) < 70 {
		t.Fatalf("only %d programs under %s", len(out), corpusDir)
	}
	return out
}

// TestSchemaCorpus: every program of the corpus that compiles validates
// against the schema, and every one the compiler rejects for its shape
// (an empty or missing steps array, a step without a type) is rejected
// by the schema too.
func TestSchemaCorpus(t *testing.T) {
	rs := resolvedSchema(t)
	valid, rejected := 0, 0
	for path, doc := range corpusPrograms(t) {
		data, _ := os.ReadFile(path)
		diags := compiler.Check([]compiler.Source{{Name: path, Data: data}})
		err := rs.Validate(doc)
		switch {
		case !diags.HasErrors() && err != nil:
			t.Errorf("%s compiles but does not validate against the schema: %v", path, err)
		case !diags.HasErrors():
			valid++
		case err == nil:
			t.Errorf("%s validates against the schema, but the compiler rejects it:\n%s", path, diags.Render(compiler.SourceMap([]compiler.Source{{Name: path, Data: data}})))
		default:
			rejected++
		}
	}
	t.Logf("%d corpus programs validate, %d rejected by both", valid, rejected)
}

// TestSchemaRejects: the mistakes the schema exists to prevent.
func TestSchemaRejects(t *testing.T) {
	rs := resolvedSchema(t)
	for _, tc := range []struct{ name, doc, want string }{
		{"no steps", `{"name": "x"}`, "steps"},
		{"llm without prompt", `{"steps": [{"id": "a", "type": "llm"}]}`, "anyOf"},
		{"tool without tool", `{"steps": [{"id": "a", "type": "tool", "args": {}}]}`, "anyOf"},
		{"condition without target", `{"steps": [{"id": "a", "type": "condition", "condition": "$x"}]}`, "anyOf"},
		{"unknown type", `{"steps": [{"id": "a", "type": "loop"}]}`, "loop"},
		{"condition in parallel", `{"steps": [{"id": "p", "type": "parallel", "parallel_steps": [{"id": "c", "type": "condition", "condition": "$x", "then": "p"}]}]}`, "enum"},
		{"allowed_outputs on a tool", `{"steps": [{"id": "a", "type": "tool", "tool": "t", "allowed_outputs": ["x"]}]}`, "anyOf"},
		{"args not an object", `{"steps": [{"id": "a", "type": "tool", "tool": "t", "args": ["x"]}]}`, "type"},
	} {
		var v any
		if err := json.Unmarshal([]byte(tc.doc), &v); err != nil {
			t.Fatal(err)
		}
		err := rs.Validate(v)
		if err == nil {
			t.Errorf("%s: the schema accepts %s", tc.name, tc.doc)
			continue
		}
		if !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %q does not mention %q", tc.name, err, tc.want)
		}
		// The compiler rejects each too: the schema asks for no more
		// than the compiler does.
		diags := compiler.Check([]compiler.Source{{Name: "p.json", Data: []byte(tc.doc)}})
		if !diags.HasErrors() {
			t.Errorf("%s: the compiler accepts %s", tc.name, tc.doc)
		}
	}
}

// TestSchemaValue: the schema the model gets is the file's.
func TestSchemaValue(t *testing.T) {
	if got, _ := Schema().Get("type"); got.Str() != "object" {
		t.Fatalf("Schema().type = %v", got)
	}
	var a, b any
	json.Unmarshal(SchemaJSON(), &a)
	json.Unmarshal(schemaJSON, &b)
	if ja, _ := json.Marshal(a); string(ja) != func() string { jb, _ := json.Marshal(b); return string(jb) }() {
		t.Fatal("SchemaJSON differs from the embedded file")
	}
}
