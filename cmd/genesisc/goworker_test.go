//go:build linux

package main

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/genesis-toolchain/genesis/distributed"
	"github.com/genesis-toolchain/genesis/runtime"
)

// goWorkerProg has four tool steps and a payment that suspends (its tool
// answers PENDING) until genesisc resume delivers the receipt.
const goWorkerProg = `{"steps": [
  {"id": "s1", "type": "tool", "tool": "s1", "args": {"n": "$n"}},
  {"id": "s2", "type": "tool", "tool": "s2", "args": {"n": "$n"}},
  {"id": "s3", "type": "tool", "tool": "s3", "args": {"n": "$n"}},
  {"id": "pay", "type": "tool", "tool": "pay", "args": {"n": "$n"}},
  {"id": "s4", "type": "tool", "tool": "s4", "args": {"n": "$n"}}
]}
`

// goWorkerTool is the exec: tool: it logs "start NAME KEY PPID PPPID" in
// calls.log and makes its side effect, a line "NAME KEY" in effects.log,
// once per idempotency key. When the file armN exists, the first call
// of s3 with n N writes its parent and grandparent (the program's
// process is one of them) to victimN and waits there to be killed with
// it.
const goWorkerTool = `#!/bin/sh
cd "$(dirname "$0")"
req=$(cat)
name=$(printf '%s' "$req" | sed 's/.*"tool":"\([a-z0-9]*\)".*/\1/')
key=$(printf '%s' "$req" | sed 's/.*"idempotency_key":"\([0-9a-f]*\)".*/\1/')
args=$(printf '%s' "$req" | sed 's/.*"args":\({[^}]*}\).*/\1/')
pp=$(cut -d' ' -f4 /proc/$PPID/stat 2>/dev/null)
echo "start $name $key $PPID $pp" >> calls.log
if ! grep -q " $key\$" effects.log 2>/dev/null; then
  echo "$name $key" >> effects.log
fi
n=$(printf '%s' "$args" | sed 's/[^0-9]//g')
if [ "$name" = s3 ] && [ -f arm$n ] && [ ! -f victim$n ]; then
  echo "$PPID $pp" > victim.tmp && mv victim.tmp victim$n
  i=0
  while [ $i -lt 600 ]; do sleep 0.05; i=$((i+1)); done
fi
if [ "$name" = pay ]; then echo '"PENDING"'; exit 0; fi
echo '{"done": "'"$name"'", "args": '"$args"'}'
`

// TestDistributedGoPackage serves a package genesisc build --target go
// --main generated: its runs execute in child processes of the built
// program, and give the result and trace of genesisc run --target go of
// the same program with the same tool, through a suspension and
// genesisc resume. A child killed by SIGKILL during a step is replaced
// by one that continues the run from its steps; a worker killed by
// SIGKILL takes its child with it, and another worker continues the run.
// Either way only the call in flight is made again, with the same
// idempotency key.
func TestDistributedGoPackage(t *testing.T) {
	useRunCache(t)
	dir := t.TempDir()
	writeFile(t, dir, "prog.json", goWorkerProg)
	for _, d := range []string{dir, filepath.Join(dir, "ref")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(d, "tool.sh"), []byte(goWorkerTool), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	t.Chdir(dir)
	cli := func(args ...string) (int, string, string) {
		var out, errOut bytes.Buffer
		code := run(append([]string{"genesisc"}, args...), &out, &errOut)
		return code, out.String(), errOut.String()
	}
	// The same files genesisc run builds: one build serves both.
	if code, _, errOut := cli("build", "--target", "go", "--main", "-o", "prog_go", "prog.json"); code != 0 {
		t.Fatalf("build: exit %d\n%s", code, errOut)
	}
	refTool := "exec:" + filepath.Join(dir, "ref", "tool.sh")
	reference := func(n int) (result, trace []byte) {
		local := []string{"run", "--target", "go", "--tools", refTool, "--input", "n=" + strconv.Itoa(n), "--journal", filepath.Join("ref", "j"+strconv.Itoa(n))}
		if code, _, errOut := cli(append(local, "--result", filepath.Join("ref", "r"), "prog.json")...); code != 3 {
			t.Fatalf("local run: exit %d, want 3 (suspended)\n%s", code, errOut)
		}
		if code, _, errOut := cli(append(local, "--resume", "--payload", `{"receipt": "R-9"}`, "--result", filepath.Join("ref", "r"), "--trace", filepath.Join("ref", "t"), "prog.json")...); code != 0 {
			t.Fatalf("local resume: exit %d\n%s", code, errOut)
		}
		return mustRead(t, filepath.Join("ref", "r")), mustRead(t, filepath.Join("ref", "t"))
	}

	db := "sqlite:" + filepath.Join(dir, "engine.db")
	w := startGoWorker(t, dir, "--db", db, "--tools", "exec:"+filepath.Join(dir, "tool.sh"), "--poll", "20ms", "prog_go")
	cl, err := distributed.Open(context.Background(), db, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()

	submit := func(n int) string {
		code, out, errOut := cli("submit", "--db", db, "--input", "n="+strconv.Itoa(n), "prog_go")
		if code != 0 {
			t.Fatalf("submit: exit %d\n%s", code, errOut)
		}
		return strings.TrimSpace(out)
	}
	// program returns the process of run n's program whose tool waits
	// in s3.
	program := func(n int) int {
		var victim string
		waitFor(t, "the tool to wait in s3", func() bool {
			b, err := os.ReadFile("victim" + strconv.Itoa(n))
			victim = string(b)
			return err == nil
		})
		for _, pid := range strings.Fields(victim) {
			cmdline, _ := os.ReadFile("/proc/" + pid + "/cmdline")
			if bytes.Contains(cmdline, []byte("--journal-fd")) {
				n, _ := strconv.Atoi(pid)
				return n
			}
		}
		t.Fatalf("no program process among the tool's parents %q", victim)
		return 0
	}
	// finish resumes run n once it suspends, and compares its result and
	// trace with genesisc run's.
	finish := func(n int, id string) {
		waitFor(t, "run "+strconv.Itoa(n)+" to suspend", func() bool {
			r, err := cl.Status(id)
			if err != nil {
				t.Fatal(err)
			}
			if r.State != "suspended" && r.State != "running" && r.State != "queued" {
				t.Fatalf("run %d ended %s before its resumption: %s %s", n, r.State, r.ResultJSON, r.Error)
			}
			return r.State == "suspended"
		})
		if code, _, errOut := cli("resume", "--db", db, "--payload", `{"receipt": "R-9"}`, id); code != 0 {
			t.Fatalf("resume: exit %d\n%s", code, errOut)
		}
		var r *distributed.Run
		waitFor(t, "the resumed run to end", func() bool {
			var err error
			r, err = cl.Status(id)
			if err != nil {
				t.Fatal(err)
			}
			return r.State != "suspended" && r.State != "running" && r.State != "queued"
		})
		if r.State != "success" {
			t.Fatalf("run %d ended %s: %s %s", n, r.State, r.ResultJSON, r.Error)
		}
		wantRes, wantTrace := reference(n)
		if r.ResultJSON != strings.TrimSpace(string(wantRes)) {
			t.Errorf("run %d: result\n%s\nwant (genesisc run --target go's)\n%s", n, r.ResultJSON, wantRes)
		}
		if r.Trace != string(wantTrace) {
			t.Errorf("run %d: trace\n%s\nwant (genesisc run --target go --resume's)\n%s", n, r.Trace, wantTrace)
		}
	}

	// Run 2's child is killed while its s3 call is in flight; the worker
	// replaces it. Run 1 goes through undisturbed.
	writeFile(t, dir, "arm2", "")
	id2 := submit(2)
	if err := syscall.Kill(program(2), syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	id1 := submit(1)
	finish(1, id1)
	finish(2, id2)
	if r, err := cl.Status(id2); err != nil || !strings.Contains(r.Trace, `"journal":"resume"`) {
		t.Errorf("run 2's trace is not a resumed execution's: %v", err)
	}

	// Run 3's worker is killed while s3 is in flight: its child dies
	// with it, and a new worker recovers the run.
	writeFile(t, dir, "arm3", "")
	id3 := submit(3)
	child := program(3)
	w.Process.Kill()
	waitFor(t, "the program's process to die with its worker", func() bool {
		stat, err := os.ReadFile("/proc/" + strconv.Itoa(child) + "/stat")
		return err != nil || strings.Contains(string(stat), ") Z ")
	})
	w = startGoWorker(t, dir, "--db", db, "--tools", "exec:"+filepath.Join(dir, "tool.sh"), "--poll", "20ms", "--dead-after", "1s", "prog_go")
	finish(3, id3)

	// Every tool step's effect once per key, the keys derived from the
	// run's id; the call in flight at the kill made twice, no other.
	p, err := submittedProgram("prog_go", io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	// The tool steps' identities, from a reference journal.
	var steps []string
	for _, line := range strings.Split(string(mustRead(t, filepath.Join("ref", "j1"))), "\n") {
		if strings.Contains(line, `"effect":"tool"`) && !strings.Contains(line, `"pending"`) {
			v, err := runtime.ParseJSON([]byte(line))
			if err != nil {
				t.Fatal(err)
			}
			st, _ := v.Get("step")
			steps = append(steps, st.Str())
		}
	}
	if len(steps) != 5 {
		t.Fatalf("the reference journal has %d tool steps, want 5: %q", len(steps), steps)
	}
	want := map[string]string{} // key → step
	inFlight := map[string]bool{}
	for _, id := range []string{id1, id2, id3} {
		for _, st := range steps {
			k := runtime.IdempotencyKey(id, p.Hash, st, 1)
			want[k] = strings.Fields(st)[0]
			if id != id1 && strings.HasPrefix(st, "s3 ") {
				inFlight[k] = true
			}
		}
	}
	seen := map[string]int{}
	for _, e := range logEntries(t, "effects.log") {
		if len(e) != 2 || want[e[1]] != e[0] {
			t.Errorf("effect %v: not a step of the runs %s", e, strings.Join(keys(want), " "))
		}
		seen[e[1]]++
	}
	calls := map[string]int{}
	for _, c := range logEntries(t, "calls.log") {
		if c[0] == "start" {
			calls[c[2]]++
		}
	}
	for k, st := range want {
		if seen[k] != 1 {
			t.Errorf("the effect of %s (key %s) happened %d times, want once", st, k, seen[k])
		}
		wantCalls := 1
		if inFlight[k] {
			wantCalls = 2 // in flight at a kill
		}
		if calls[k] != wantCalls {
			t.Errorf("%s (key %s) was called %d times, want %d", st, k, calls[k], wantCalls)
		}
	}
	w.Process.Signal(syscall.SIGTERM)
}

func keys(m map[string]string) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	return ks
}

// TestWorkerGoLibraryPackage serves a library package (build --package):
// the worker builds it with a main of its own and its runs give genesisc
// run's result; genesisc submit takes the package's directory too. A
// directory that holds no generated package, and a missing Go toolchain,
// are errors that say so, before anything connects.
func TestWorkerGoLibraryPackage(t *testing.T) {
	useRunCache(t)
	dir := t.TempDir()
	writeFile(t, dir, "greet.json", `{"steps": [
  {"id": "hello", "type": "tool", "tool": "hello", "args": {"who": "$who"}}
]}
`)
	writeFile(t, dir, "tools.json", `{"hello": {"greeting": "hi"}}`)
	writeFile(t, dir, "notes.txt", "not a program\n")
	t.Chdir(dir)
	cli := func(args ...string) (int, string, string) {
		var out, errOut bytes.Buffer
		code := run(append([]string{"genesisc"}, args...), &out, &errOut)
		return code, out.String(), errOut.String()
	}
	if code, _, errOut := cli("build", "--target", "go", "--package", "greet", "-o", "greet_go", "greet.json"); code != 0 {
		t.Fatalf("build: exit %d\n%s", code, errOut)
	}
	db := "sqlite:" + filepath.Join(dir, "engine.db")

	if code, _, errOut := cli("worker", "--db", db, dir); code != exitUsage || !strings.Contains(errOut, "is not a package generated by genesisc build --target go") {
		t.Errorf("a worker of a directory without a package: exit %d, %q", code, errOut)
	}
	t.Setenv("GENESIS_GO", filepath.Join(dir, "no-go"))
	if code, _, errOut := cli("worker", "--db", db, "greet_go"); code != exitDiag || !strings.Contains(errOut, "needs a Go toolchain") {
		t.Errorf("a worker without go: exit %d, %q", code, errOut)
	}
	os.Unsetenv("GENESIS_GO")
	if _, err := os.Stat("engine.db"); err == nil {
		t.Error("a worker that did not start connected to the database")
	}

	startGoWorker(t, dir, "--db", db, "--tools", "mock:tools.json", "--poll", "20ms", "greet_go")
	code, out, errOut := cli("submit", "--db", db, "--input", "who=Ada", "--wait", "--result", "result.json", "greet_go")
	if code != 0 {
		t.Fatalf("submit --wait: exit %d\n%s%s", code, out, errOut)
	}
	if code, _, errOut := cli("run", "--target", "go", "--tools", "mock:tools.json", "--input", "who=Ada", "--result", "local.json", "greet.json"); code != 0 {
		t.Fatalf("local run: exit %d\n%s", code, errOut)
	}
	if got, want := mustRead(t, "result.json"), mustRead(t, "local.json"); !bytes.Equal(got, want) {
		t.Errorf("result\n%s\nwant (genesisc run's)\n%s", got, want)
	}
	if !bytes.Contains(mustRead(t, "result.json"), []byte(`"greeting":"hi"`)) {
		t.Errorf("the result has not the tool's reply: %s", mustRead(t, "result.json"))
	}
}
