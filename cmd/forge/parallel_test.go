package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestAgentParallelProofReplay: a run whose parallel block's branches
// run at once is proven, its proof checks against its journal (the
// ticks, trace hash and frame hashes are those of any run of it), and it
// replays from its journal with the same result.
func TestAgentParallelProofReplay(t *testing.T) {
	dir := t.TempDir()
	prog := buildAgent(t, dir, "fan.json", `{"name": "fan", "steps": [
  {"id": "fan", "type": "parallel", "parallel_steps": [
    {"id": "a", "type": "llm", "prompt": "a: $topic"},
    {"id": "b", "type": "llm", "prompt": "b: $topic"},
    {"id": "c", "type": "llm", "prompt": "c: $topic"},
    {"id": "t", "type": "tool", "tool": "look", "args": {"q": "$topic"}}]},
  {"id": "sum", "type": "llm", "prompt": "$a $b $c $t"}
]}`)
	llm, tools := filepath.Join(dir, "llm.json"), filepath.Join(dir, "tools.json")
	writeTestFile(t, llm, `{"__default__": "fine"}`)
	writeTestFile(t, tools, `{"look": {"found": true}}`)
	key := filepath.Join(dir, "key")
	if code, _, stderr := forgeCmd("keygen", "-o", key); code != 0 {
		t.Fatalf("keygen: exit %d: %s", code, stderr)
	}
	input := []string{"--input", "topic=owls"}
	var first string
	for i, name := range []string{"one", "two"} {
		journal, proofFile := filepath.Join(dir, name+".journal"), filepath.Join(dir, name+".proof")
		args := append(append([]string{"exec", "--llm", "mock:" + llm, "--tools", "mock:" + tools}, input...), "--journal", journal, "--proof", proofFile, "--key", key, prog)
		code, stdout, stderr := forgeCmd(args...)
		if code != 0 || !strings.HasPrefix(stdout, `{"status":"success","steps":["fan","a","b","c","t","sum"]`) {
			t.Fatalf("exec: exit %d\n%s%s", code, stdout, stderr)
		}
		if i == 0 {
			first = stdout
		} else if stdout != first {
			t.Errorf("the second run's result differs:\n%s\n%s", stdout, first)
		}
		code, stdout, stderr = forgeCmd(append(append([]string{"check-proof", "--proof", proofFile, "--journal", journal}, input...), prog)...)
		if code != 0 || !strings.Contains(stdout, "valid proof: the run ended success") {
			t.Errorf("check-proof %s: exit %d\n%s%s", name, code, stdout, stderr)
		}
		code, stdout, stderr = forgeCmd(append(append([]string{"replay", "--journal", journal}, input...), prog)...)
		if code != 0 || stdout != first {
			t.Errorf("replay %s: exit %d\n%s%s", name, code, stdout, stderr)
		}
	}
	// The proofs of the two runs check against each other's journals:
	// the runs are the same run.
	code, stdout, stderr := forgeCmd(append(append([]string{"check-proof", "--proof", filepath.Join(dir, "one.proof"), "--journal", filepath.Join(dir, "two.journal")}, input...), prog)...)
	if code != 0 {
		t.Errorf("check-proof of the first run against the second's journal: exit %d\n%s%s", code, stdout, stderr)
	}
}
