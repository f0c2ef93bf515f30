//go:build linux

package distributed

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/genesis-toolchain/genesis/runtime"
)

// The process executor's side of the journal stream, against child
// programs that are shell scripts speaking it (the real children, built
// Go programs, are cmd/genesisc's TestDistributedGoPackage).

// childScript is a child: it logs its arguments to calls (one line per
// execution), sends two journal lines, each after the previous one's
// acknowledgement, and writes its result and trace. With the file die
// present (and removed), it kills itself after its first line.
const childScript = `#!/bin/sh
cd "$(dirname "$0")"
echo "$*" >> calls
while [ $# -gt 0 ]; do
  case "$1" in --result) res=$2; shift;; --trace) tr=$2; shift;; esac
  shift
done
echo '{"format":"genesis-journal","version":1,"program":"p.json","run":"run-1"}' >&3
read ack <&4 || exit 9
[ "$ack" = ok ] || { echo "$ack" > refused; exit 1; }
if [ -f die ]; then rm die; kill -9 $$; fi
echo '{"end":"success"}' >&3
read ack <&4 || exit 9
if [ "$ack" != ok ]; then echo "$ack" > refused; sleep 5; echo late > late; exit 1; fi
echo '{"status":"success","output":{"ok":true}}' > "$res"
echo '{"event":"run_finished"}' > "$tr"
`

const header = `{"format":"genesis-journal","version":1,"program":"p.json","run":"run-1"}` + "\n"

// recSink records the lines it is given, refusing the line numbered
// refuse (1-based; 0: none).
type recSink struct {
	lines  []string
	refuse int
}

func (s *recSink) AppendLine(line []byte) error {
	if len(s.lines)+1 == s.refuse {
		return errors.New("the run is continued by\nanother worker")
	}
	s.lines = append(s.lines, string(line))
	return nil
}

func childProgram(t *testing.T, script string) (*Program, string) {
	t.Helper()
	dir := t.TempDir()
	bin := filepath.Join(dir, "child.sh")
	if err := os.WriteFile(bin, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	p, err := NewProcessProgram(ProcessConfig{Name: "p.json", Hash: "abc", Binary: bin, Args: []string{"--tools", "mock:t.json"}})
	if err != nil {
		t.Fatal(err)
	}
	return p, dir
}

func TestProcessExecutor(t *testing.T) {
	input := runtime.Object(runtime.Field{Key: "n", Value: runtime.Number(1)}, runtime.Field{Key: "s", Value: runtime.String("[1]")})
	exec := func(p *Program, sink runtime.JournalSink, journal string, resume *runtime.Resumption) (*Outcome, error) {
		return p.exec.Execute(nil, &Execution{Program: p.Name, ProgramHash: p.Hash, RunID: "run-1", Input: input,
			Journal: []byte(journal), Sink: sink, Resume: resume})
	}

	// A new run: the lines become the sink's, acknowledged one by one.
	p, dir := childProgram(t, childScript)
	sink := &recSink{}
	out, err := exec(p, sink, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	if string(out.JSON) != `{"status":"success","output":{"ok":true}}` || out.Result.Status != runtime.StatusSuccess ||
		string(out.Trace) != `{"event":"run_finished"}`+"\n" {
		t.Errorf("outcome %s, trace %q", out.JSON, out.Trace)
	}
	if strings.Join(sink.lines, "") != header+"{\"end\":\"success\"}\n" {
		t.Errorf("sink lines %q", sink.lines)
	}
	calls := string(mustReadFile(t, filepath.Join(dir, "calls")))
	for _, want := range []string{"--tools mock:t.json --journal-fd 3,4 ", `--input n=1 --input s="[1]" --run-id run-1`} {
		if !strings.Contains(calls, want) {
			t.Errorf("the child's arguments\n%s\nlack %q", calls, want)
		}
	}

	// A continuation with a resumption: --journal FILE --resume --payload.
	os.Remove(filepath.Join(dir, "calls"))
	if _, err := exec(p, &recSink{}, header, &runtime.Resumption{Payload: runtime.Object(), Source: "OPERATOR"}); err != nil {
		t.Fatal(err)
	}
	calls = string(mustReadFile(t, filepath.Join(dir, "calls")))
	if !strings.Contains(calls, " --resume --payload {} --source OPERATOR") || strings.Contains(calls, "--run-id") {
		t.Errorf("a continuation's arguments: %s", calls)
	}

	// A child killed after its first line is replaced by one that
	// continues from it.
	os.Remove(filepath.Join(dir, "calls"))
	os.WriteFile(filepath.Join(dir, "die"), nil, 0o644)
	sink = &recSink{}
	if _, err := exec(p, sink, "", nil); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(mustReadFile(t, filepath.Join(dir, "calls")))), "\n")
	if len(lines) != 2 || !strings.Contains(lines[0], "--run-id run-1") || !strings.Contains(lines[1], " --resume") {
		t.Errorf("the children's arguments: %q; want a new run, then its continuation", lines)
	}
	if len(sink.lines) != 3 {
		t.Errorf("sink lines %q: want the dead child's first and the second child's two", sink.lines)
	}

	// A refused line: the child is killed at once (the refusal it is
	// sent may not reach it first).
	os.Remove(filepath.Join(dir, "calls"))
	_, err = exec(p, &recSink{refuse: 2}, "", nil)
	if err == nil || !strings.Contains(err.Error(), "recording the run's steps: the run is continued by") {
		t.Errorf("a refused line: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "late")); err == nil {
		t.Error("the child went on after its line was refused")
	}

	// A child that always dies fails the execution, after MaxChildDeaths.
	p, dir = childProgram(t, "#!/bin/sh\ncd \"$(dirname \"$0\")\"\necho x >> calls\nkill -9 $$\n")
	if _, err := exec(p, &recSink{}, "", nil); err == nil || !strings.Contains(err.Error(), "died 3 times") {
		t.Errorf("a child that always dies: %v", err)
	}
	if n := strings.Count(string(mustReadFile(t, filepath.Join(dir, "calls"))), "x"); n != MaxChildDeaths {
		t.Errorf("%d children, want %d", n, MaxChildDeaths)
	}

	// One that fails without a result: its standard error says why.
	p, _ = childProgram(t, "#!/bin/sh\necho 'p.json: --tools: no such file' >&2\nexit 2\n")
	if _, err := exec(p, &recSink{}, "", nil); err == nil || !strings.Contains(err.Error(), "--tools: no such file") {
		t.Errorf("a child's usage error: %v", err)
	}
}

func mustReadFile(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
