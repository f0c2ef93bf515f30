//go:build linux

package main

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/genesis-toolchain/genesis/distributed"
	"github.com/genesis-toolchain/genesis/internal/pgtest"
	"github.com/genesis-toolchain/genesis/runtime"
)

// The distributed tests run genesisc workers (this test binary as
// genesisc, GENESISC_TEST_MAIN) against a private Postgres cluster
// (internal/pgtest) or an SQLite file.

// distProg has five tool steps and a parallel block of two, every tool
// call answering with its arguments, which carry the run's input n.
const distProg = `{"steps": [
  {"id": "s1", "type": "tool", "tool": "s1", "args": {"n": "$n"}},
  {"id": "s2", "type": "tool", "tool": "s2", "args": {"n": "$n"}},
  {"id": "both", "type": "parallel", "parallel_steps": [
    {"id": "p1", "type": "tool", "tool": "p1", "args": {"n": "$n"}},
    {"id": "p2", "type": "tool", "tool": "p2", "args": {"n": "$n"}}]},
  {"id": "s3", "type": "tool", "tool": "s3", "args": {"n": "$n"}},
  {"id": "s4", "type": "tool", "tool": "s4", "args": {"n": "$n"}},
  {"id": "s5", "type": "tool", "tool": "s5", "args": {"n": "$n"}}
]}
`

// distTool is the exec: tool. Every call logs "start NAME KEY PPID
// PPPID" (its parent and grandparent: the worker is one of them) and, when
// it returns, "end NAME KEY" in calls.log; its side effect, a line "NAME
// KEY" in effects.log, is made once per idempotency key, as a service
// that remembers the keys it served would.
const distTool = `#!/bin/sh
cd "$(dirname "$0")"
req=$(cat)
name=$(printf '%s' "$req" | sed 's/.*"tool":"\([a-z0-9]*\)".*/\1/')
key=$(printf '%s' "$req" | sed 's/.*"idempotency_key":"\([0-9a-f]*\)".*/\1/')
args=$(printf '%s' "$req" | sed 's/.*"args":\({[^}]*}\).*/\1/')
# A worker killed before it wrote the request leaves no request: no call.
[ -n "$key" ] || exit 1
pp=$(cut -d' ' -f4 /proc/$PPID/stat 2>/dev/null)
echo "start $name $key $PPID $pp" >> calls.log
if ! grep -q " $key\$" effects.log 2>/dev/null; then
  echo "$name $key" >> effects.log
fi
sleep 0.02
echo "end $name $key" >> calls.log
echo '{"done": "'"$name"'", "args": '"$args"'}'
`

func distDir(t *testing.T) string {
	dir := t.TempDir()
	writeFile(t, dir, "prog.json", distProg)
	if err := os.WriteFile(filepath.Join(dir, "tool.sh"), []byte(distTool), 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// worker is a genesisc worker process.
type worker struct {
	cmd  *exec.Cmd
	id   string
	errs *bytes.Buffer
	done chan struct{}
}

// startWorkers starts n workers serving prog.json in dir (the working
// directory of each) and returns once every one serves.
func startWorkers(t *testing.T, n int, dir, db string, more ...string) []*worker {
	t.Helper()
	ws := make([]*worker, n)
	var wg sync.WaitGroup
	for i := range ws {
		args := append([]string{"worker", "--db", db, "--tools", "exec:" + filepath.Join(dir, "tool.sh"),
			"--concurrency", "4", "--poll", "50ms", "--dead-after", "2s", "--drain", "5s"}, more...)
		cmd := exec.Command(os.Args[0], append(args, "prog.json")...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GENESISC_TEST_MAIN=1")
		w := &worker{cmd: cmd, errs: &bytes.Buffer{}, done: make(chan struct{})}
		cmd.Stderr = w.errs
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		ws[i] = w
		t.Cleanup(func() {
			cmd.Process.Kill()
			<-w.done
			if t.Failed() {
				t.Logf("worker %d (%s) stderr:\n%s", i, w.id, w.errs.String())
			}
		})
		ready := make(chan string, 1)
		go func() {
			sc := bufio.NewScanner(out)
			for sc.Scan() {
				if f := strings.Fields(sc.Text()); len(f) > 3 && f[3] == "serving" {
					select {
					case ready <- strings.TrimSuffix(f[2], ":"):
					default:
					}
				}
			}
			io.Copy(io.Discard, out)
			cmd.Wait()
			close(w.done)
		}()
		wg.Add(1)
		go func() {
			defer wg.Done()
			select {
			case w.id = <-ready:
			case <-w.done:
			case <-time.After(90 * time.Second):
			}
		}()
	}
	wg.Wait()
	for i, w := range ws {
		if w.id == "" {
			t.Fatalf("worker %d did not start:\n%s", i, w.errs.String())
		}
	}
	return ws
}

// reference runs prog.json in this process with genesisc run --target
// forge (a journal, for the trace's journal mode) and returns its result
// and trace.
func reference(t *testing.T, dir string, n int) (string, string) {
	t.Helper()
	sub := filepath.Join(dir, "ref"+strconv.Itoa(n))
	if err := os.MkdirAll(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	// The reference tool logs elsewhere: a copy in the subdirectory.
	if err := os.WriteFile(filepath.Join(sub, "tool.sh"), []byte(distTool), 0o755); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	code := run([]string{"genesisc", "run", "--target", "forge", "--tools", "exec:" + filepath.Join(sub, "tool.sh"),
		"--input", "n=" + strconv.Itoa(n), "--journal", filepath.Join(sub, "j"), "--trace", filepath.Join(sub, "trace"),
		"--result", filepath.Join(sub, "result"), "prog.json"}, &stdout, &stderr)
	if code != 0 {
		t.Fatalf("reference run: exit %d\n%s", code, stderr.String())
	}
	res, _ := os.ReadFile(filepath.Join(sub, "result"))
	tr, _ := os.ReadFile(filepath.Join(sub, "trace"))
	return strings.TrimSpace(string(res)), string(tr)
}

// TestDistributedWorkersSurviveAKill is issue 19's test: three workers on
// Postgres, 30 runs, one worker killed with SIGKILL while it runs some.
// Every run succeeds with the result and trace of the same run in one
// process; every tool step's effect happens once per idempotency key,
// derived from the run's id as in a local run, and only calls in flight
// at the kill were made twice.
func TestDistributedWorkersSurviveAKill(t *testing.T) {
	pg := pgtest.Start(t)
	dir := distDir(t)
	t.Chdir(dir) // the program is named as the workers name it: same hash
	ws := startWorkers(t, 3, dir, pg.URL)

	p, err := loadDistProgram("prog.json", io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	cl, err := distributed.Open(context.Background(), pg.URL, os.Stderr)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	const runs = 30
	ids := make([]string, runs)
	// The first through the command line, the others through the client.
	var out, errOut bytes.Buffer
	if code := run([]string{"genesisc", "submit", "--db", pg.URL, "--input", "n=0", "prog.json"}, &out, &errOut); code != 0 {
		t.Fatalf("genesisc submit: exit %d\n%s", code, errOut.String())
	}
	ids[0] = strings.TrimSpace(out.String())
	for i := 1; i < runs; i++ {
		ids[i], err = cl.Submit(p.Name, p.Hash, runtime.Object(runtime.Field{Key: "n", Value: runtime.Number(float64(i % 5))}))
		if err != nil {
			t.Fatal(err)
		}
	}

	// Kill worker 0 while it is in the middle of a run.
	victim := ws[0]
	waitFor(t, "worker 0 to run a run", func() bool {
		rs, err := cl.List()
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range rs {
			if r.State == "running" && r.Executor == victim.id && r.Steps >= 2 {
				return true
			}
		}
		return false
	})
	if err := victim.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-victim.done

	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	refs := map[int][2]string{}
	recovered := 0
	for i, id := range ids {
		r, err := cl.Wait(ctx, id, 50*time.Millisecond)
		if err != nil {
			t.Fatalf("run %d (%s): %v", i, id, err)
		}
		if r.State != "success" {
			t.Fatalf("run %d (%s) ended %s: %s %s", i, id, r.State, r.ResultJSON, r.Error)
		}
		n := i % 5
		ref, ok := refs[n]
		if !ok {
			res, tr := reference(t, dir, n)
			ref = [2]string{res, tr}
			refs[n] = ref
		}
		if r.ResultJSON != ref[0] {
			t.Errorf("run %d: result\n%s\nwant (genesisc run's)\n%s", i, r.ResultJSON, ref[0])
		}
		tr := r.Trace
		if strings.Contains(tr, `"journal":"resume"`) {
			// A recovered run's last execution resumed its journal.
			recovered++
			if r.Executor == victim.id {
				t.Errorf("run %d was recovered by the killed worker", i)
			}
			tr = strings.Replace(tr, `"journal":"resume"`, `"journal":"record"`, 1)
		}
		if tr != ref[1] {
			t.Errorf("run %d: trace\n%s\nwant (genesisc run's)\n%s", i, tr, ref[1])
		}
	}
	if recovered == 0 {
		t.Errorf("no run was recovered from the killed worker")
	}

	// Effects: exactly the keys of every tool step of every run, each once.
	var toolSteps []string
	for _, line := range strings.Split(string(mustRead(t, filepath.Join(dir, "ref0", "j"))), "\n") {
		if strings.Contains(line, `"effect":"tool"`) {
			v, err := runtime.ParseJSON([]byte(line))
			if err != nil {
				t.Fatal(err)
			}
			s, _ := v.Get("step")
			toolSteps = append(toolSteps, s.Str())
		}
	}
	if len(toolSteps) != 7 {
		t.Fatalf("the reference journal has %d tool steps, want 7", len(toolSteps))
	}
	want := map[string]bool{}
	for _, id := range ids {
		for _, st := range toolSteps {
			want[runtime.IdempotencyKey(id, p.Hash, st, 1)] = true
		}
	}
	effects := logEntries(t, filepath.Join(dir, "effects.log"))
	seen := map[string]bool{}
	for _, e := range effects {
		if len(e) != 2 {
			t.Errorf("effects.log has a line %q, not NAME KEY", strings.Join(e, " "))
			continue
		}
		if !want[e[1]] {
			t.Errorf("effect %v has a key no step of a run has", e)
		}
		if seen[e[1]] {
			t.Errorf("effect %v happened twice", e)
		}
		seen[e[1]] = true
	}
	if len(seen) != len(want) {
		t.Errorf("%d effects happened, want %d (one per tool step of every run)", len(seen), len(want))
	}
	// Calls: a key called twice is a call the killed worker had in
	// flight — made by it, its reply never recorded — made again by
	// another worker; at most one per run it ran at once.
	type calls struct{ victim, others int }
	byKey := map[string]*calls{}
	vpid := strconv.Itoa(victim.cmd.Process.Pid)
	live := map[string]bool{}
	for _, w := range ws[1:] {
		live[strconv.Itoa(w.cmd.Process.Pid)] = true
	}
	for _, c := range logEntries(t, filepath.Join(dir, "calls.log")) {
		if c[0] != "start" || len(c) < 3 {
			continue
		}
		if byKey[c[2]] == nil {
			byKey[c[2]] = &calls{}
		}
		// A live worker is the tool's parent or grandparent; a tool
		// of the killed worker may have lost both by the time it looked.
		if len(c) > 3 && live[c[3]] || len(c) > 4 && live[c[4]] {
			byKey[c[2]].others++
		} else {
			byKey[c[2]].victim++
		}
	}
	twice := 0
	for k, n := range byKey {
		if n.victim+n.others > 1 {
			twice++
			if n.victim != 1 || n.others != 1 {
				t.Errorf("key %s: %d calls by the killed worker, %d by the others: only a call in flight at the kill may be made again, once", k, n.victim, n.others)
			}
		}
	}
	if twice > 4 {
		t.Errorf("%d calls were made twice; the killed worker ran at most 4 at once", twice)
	}
	if t.Failed() {
		t.Logf("victim pid %s; calls.log:\n%s", vpid, mustRead(t, filepath.Join(dir, "calls.log")))
	}
	t.Logf("%d runs, %d recovered from the killed worker, %d calls in flight at the kill made again", runs, recovered, twice)
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestDistributedCommands drives submit, status, runs and resume against
// a worker on SQLite, through a suspension: the result is that of
// genesisc run --journal, then --resume --payload, on the same program.
func TestDistributedCommands(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "pay.json", `{"steps": [
  {"id": "pay", "type": "tool", "tool": "pay", "args": {"order": "$order"}},
  {"id": "notify", "type": "tool", "tool": "notify"}
]}
`)
	writeFile(t, dir, "tools.json", `{"pay": "PENDING", "notify": {"sent": true}}`)
	t.Chdir(dir)
	db := "sqlite:" + filepath.Join(dir, "engine.db")
	cli := func(args ...string) (int, string, string) {
		var out, errOut bytes.Buffer
		code := run(append([]string{"genesisc"}, args...), &out, &errOut)
		return code, out.String(), errOut.String()
	}

	for _, args := range [][]string{
		{"submit", "pay.json"},
		{"submit", "--db", "mysql://x", "pay.json"},
		{"status", "--db", db},
		{"resume", "--db", db, "someid"},
		{"resume", "--db", db, "--payload", "{", "someid"},
		{"worker", "--db", db, dir},
		{"worker", "--db", db, "--concurrency", "0", "pay.json"},
		{"worker", "--db", db, "--dead-after", "100ms", "pay.json"},
		{"worker", "--db", db, "--poll", "0s", "pay.json"},
		{"worker", "--db", db, "--max-steps", "-1", "pay.json"},
		{"worker", "pay.json"},
	} {
		if code, _, errOut := cli(args...); code != exitUsage || errOut == "" {
			t.Errorf("genesisc %v: exit %d, %q; want a usage error", args, code, errOut)
		}
	}

	cmd := exec.Command(os.Args[0], "worker", "--db", db, "--tools", "mock:tools.json", "--poll", "20ms", "pay.json")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GENESISC_TEST_MAIN=1")
	var werr bytes.Buffer
	cmd.Stderr = &werr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	stopped := false
	defer func() {
		if !stopped {
			cmd.Process.Kill()
			cmd.Wait()
		}
		if t.Failed() {
			t.Logf("worker stderr:\n%s", werr.String())
		}
	}()

	code, out, errOut := cli("submit", "--db", db, "--input", "order=A-17", "--wait", "pay.json")
	if code != 3 || !strings.Contains(out, "suspended at pay @ pay.json") {
		t.Fatalf("submit --wait: exit %d\n%s%s, want 3 and the run suspended at pay", code, out, errOut)
	}
	id := submittedRunID(t, errOut)
	if code, out, _ := cli("runs", "--db", db); code != 0 || !strings.Contains(out, id+"  suspended  pay.json") {
		t.Errorf("runs: exit %d\n%s", code, out)
	}
	if code, out, errOut := cli("resume", "--db", db, "--payload", `{"receipt": "R-9"}`, id); code != 0 {
		t.Fatalf("resume: exit %d\n%s%s", code, out, errOut)
	}
	var r *distributed.Run
	waitFor(t, "the resumed run to end", func() bool {
		cl, err := distributed.Open(context.Background(), db, io.Discard)
		if err != nil {
			t.Fatal(err)
		}
		defer cl.Close()
		r, err = cl.Status(id)
		return err == nil && r.State != "suspended" && r.State != "running"
	})
	code, out, errOut = cli("status", "--db", db, "--result", "result.json", "--trace", "trace.jsonl", id)
	if code != 0 || !strings.Contains(out, "status   success") {
		t.Fatalf("status: exit %d\n%s%s", code, out, errOut)
	}

	// The same in one process, on a journal.
	local := []string{"run", "--target", "forge", "--tools", "mock:tools.json", "--input", "order=A-17", "--journal", "local.journal"}
	if code, _, errOut := cli(append(local, "--result", "local1.json", "pay.json")...); code != 3 {
		t.Fatalf("local run: exit %d\n%s", code, errOut)
	}
	if code, _, errOut := cli(append(local, "--resume", "--payload", `{"receipt": "R-9"}`, "--result", "local2.json", "--trace", "local.trace", "pay.json")...); code != 0 {
		t.Fatalf("local resume: exit %d\n%s", code, errOut)
	}
	if got, want := mustRead(t, "result.json"), mustRead(t, "local2.json"); !bytes.Equal(got, want) {
		t.Errorf("result\n%s\nwant (genesisc run --resume's)\n%s", got, want)
	}
	if got, want := mustRead(t, "trace.jsonl"), mustRead(t, "local.trace"); !bytes.Equal(got, want) {
		t.Errorf("trace\n%s\nwant (genesisc run --resume's)\n%s", got, want)
	}
	if code, _, errOut := cli("resume", "--db", db, "--payload", "1", id); code != 1 || !strings.Contains(errOut, "has ended") {
		t.Errorf("resuming an ended run: exit %d, %q", code, errOut)
	}
	if code, _, errOut := cli("status", "--db", db, "0123"); code != 1 || !strings.Contains(errOut, "no such run") {
		t.Errorf("status of an unknown run: exit %d, %q", code, errOut)
	}

	// SIGTERM stops the worker cleanly: exit status 0.
	stopped = true
	cmd.Process.Signal(syscall.SIGTERM)
	if err := cmd.Wait(); err != nil {
		t.Errorf("the worker stopped by SIGTERM: %v", err)
	}
}

// TestDistributedGrimoireCast submits a Grimoire spell in cast mode: the
// run suspends for the confirmation of its side effect, genesisc resume
// confirms it, and the action runs once.
func TestDistributedGrimoireCast(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "swap.spell", "spell CastSwap\n  venues:\n    dex: @uniswap\n  on manual:\n    tx = dex.swap(1)\n    emit swapped(tx=tx)\n")
	writeFile(t, dir, "tools.json", `{"dex.swap": "0xabc"}`)
	t.Chdir(dir)
	db := "sqlite:" + filepath.Join(dir, "engine.db")
	cmd := exec.Command(os.Args[0], "worker", "--db", db, "--tools", "mock:tools.json", "--poll", "20ms", "swap.spell")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GENESISC_TEST_MAIN=1")
	var werr bytes.Buffer
	cmd.Stderr = &werr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		cmd.Process.Kill()
		cmd.Wait()
		if t.Failed() {
			t.Logf("worker stderr:\n%s", werr.String())
		}
	}()
	var out, errOut bytes.Buffer
	if code := run([]string{"genesisc", "submit", "--db", db, "--mode", "cast", "--wait", "swap.spell"}, &out, &errOut); code != 3 {
		t.Fatalf("submit --mode cast --wait: exit %d\n%s%s, want 3 (suspended)", code, out.String(), errOut.String())
	}
	id := submittedRunID(t, errOut.String())
	out.Reset()
	errOut.Reset()
	if code := run([]string{"genesisc", "resume", "--db", db, "--payload", `{"confirm": true}`, "--source", "OPERATOR", id}, &out, &errOut); code != 0 {
		t.Fatalf("resume: exit %d\n%s", code, errOut.String())
	}
	var r *distributed.Run
	waitFor(t, "the confirmed run to end", func() bool {
		cl, err := distributed.Open(context.Background(), db, io.Discard)
		if err != nil {
			t.Fatal(err)
		}
		defer cl.Close()
		r, err = cl.Status(id)
		return err == nil && r.State != "suspended" && r.State != "running"
	})
	if r.State != "success" || !strings.Contains(r.ResultJSON, `"dex.swap"`) || !strings.Contains(r.ResultJSON, `"swapped"`) {
		t.Errorf("the confirmed cast: %s\n%s", r.State, r.ResultJSON)
	}
}

// submittedRunID returns the run id genesisc submit --wait wrote on
// standard error: its line of 32 hex digits (a warning that no worker
// serves the program yet may come before it, when the worker started
// with the submission has not registered).
func submittedRunID(t *testing.T, stderr string) string {
	t.Helper()
	for _, line := range strings.Split(stderr, "\n") {
		if line = strings.TrimSpace(line); len(line) == 32 && strings.Trim(line, "0123456789abcdef") == "" {
			return line
		}
	}
	t.Fatalf("genesisc submit wrote no run id on standard error:\n%s", stderr)
	return ""
}
