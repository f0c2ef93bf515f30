//go:build linux

package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/genesis-toolchain/genesis/runtime"
)

// The durable-run tests kill a `genesisc run` process (this test binary
// as genesisc, GENESISC_TEST_MAIN) in the middle of a six-step program
// whose steps call a side-effecting subprocess tool, resume the run, and
// check what the tool saw.

// durableProg has six tool steps, s1 … s6, each calling the tool of its
// own name.
const durableProg = `{"steps": [
  {"id": "s1", "type": "tool", "tool": "s1"},
  {"id": "s2", "type": "tool", "tool": "s2"},
  {"id": "s3", "type": "tool", "tool": "s3"},
  {"id": "s4", "type": "tool", "tool": "s4"},
  {"id": "s5", "type": "tool", "tool": "s5"},
  {"id": "s6", "type": "tool", "tool": "s6"}
]}
`

// durableTool is the exec: tool. Every call is logged ("name key pid" in
// calls.log). Its side effect — a line "name key" in effects.log — is
// deduplicated by idempotency key, as a service would: a key it has seen
// is answered without a second effect. A call blocks after its effect
// while the file block-NAME exists (where the test kills the run), with
// a background child that holds its stdout.
const durableTool = `#!/bin/sh
cd "$(dirname "$0")"
req=$(cat)
name=$(printf '%s' "$req" | sed 's/.*"tool":"\([a-z0-9]*\)".*/\1/')
key=$(printf '%s' "$req" | sed 's/.*"idempotency_key":"\([0-9a-f]*\)".*/\1/')
echo "$name $key $$" >> calls.log
if ! grep -q " $key\$" effects.log 2>/dev/null; then
  echo "$name $key" >> effects.log
fi
if [ -e block-$name ]; then
  sleep 300 &
  echo "$!" > child.pid
  while [ -e block-$name ]; do sleep 0.02; done
fi
echo '{"done": "'"$name"'"}'
`

// durableDir makes a directory with the program and the tool.
func durableDir(t *testing.T) string {
	dir := t.TempDir()
	writeFile(t, dir, "prog.json", durableProg)
	if err := os.WriteFile(filepath.Join(dir, "tool.sh"), []byte(durableTool), 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// runArgs are the genesisc run arguments of a run in dir, which must be
// the working directory: the program is named relative to it, so that its
// generated code, and its build in the cache, is the same in every
// directory.
func runArgs(dir string, more ...string) []string {
	args := []string{"run", "--tools", "exec:" + filepath.Join(dir, "tool.sh"),
		"--journal", filepath.Join(dir, "run.journal"), "--result", filepath.Join(dir, "result.json")}
	return append(append(args, more...), "prog.json")
}

// waitFor polls cond until it holds; the deadline only guards against a
// hang.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(90 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("gave up waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func readLines(t *testing.T, path string) []string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		t.Fatal(err)
	}
	return strings.Fields(strings.ReplaceAll(string(data), "\n", " \n "))
}

// logEntries parses calls.log or effects.log into [name, key, …] rows.
func logEntries(t *testing.T, path string) [][]string {
	t.Helper()
	data, _ := os.ReadFile(path)
	var rows [][]string
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		if line != "" {
			rows = append(rows, strings.Fields(line))
		}
	}
	return rows
}

// unlocked reports whether no process holds the journal's lock (the run
// that wrote it has ended).
func unlocked(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	if syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) != nil {
		return false
	}
	syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
	return true
}

// dead reports whether process pid has ended: it does not exist, or is a
// zombie that its new parent has not reaped yet.
func dead(pid int) bool {
	if syscall.Kill(pid, 0) == syscall.ESRCH {
		return true
	}
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return true
	}
	// pid (comm) STATE …: comm may hold spaces, the state follows its ')'.
	s := string(data)
	i := strings.LastIndexByte(s, ')')
	return i >= 0 && i+2 < len(s) && s[i+2] == 'Z'
}

var headerRunID = regexp.MustCompile(`"run":"([0-9a-f]{32})"`)

func TestKilledRunResumes(t *testing.T) {
	if testing.Short() {
		t.Skip("builds Go programs")
	}
	useRunCache(t)
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}

	// The uninterrupted run: its result is what every resumed run must
	// give (this run also builds the program into the shared cache).
	ref := durableDir(t)
	if code, _, stderr := genesisc(t, ref, runArgs(ref)...); code != 0 {
		t.Fatalf("uninterrupted run: exit %d\n%s", code, stderr)
	}
	want, err := os.ReadFile(filepath.Join(ref, "result.json"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(want), `"status":"success"`) || len(logEntries(t, filepath.Join(ref, "effects.log"))) != 6 {
		t.Fatalf("uninterrupted run: %s", want)
	}
	// The program's hash, as genesisc run compiles it (in its directory).
	wd, _ := os.Getwd()
	os.Chdir(ref)
	files, err := compileForRun(t, "prog.json")
	os.Chdir(wd)
	if err != nil {
		t.Fatal(err)
	}
	programHash := regexp.MustCompile(`const ProgramHash = "([0-9a-f]{64})"`).FindStringSubmatch(string(files[0].Data))
	if programHash == nil {
		t.Fatal("the generated program has no ProgramHash")
	}

	for _, c := range []struct {
		sig  syscall.Signal
		at   string // the step in flight when the signal comes
		exit int    // genesisc's exit status (SIGKILL: none)
	}{
		{syscall.SIGKILL, "s2", -1},
		{syscall.SIGTERM, "s4", 143},
		{syscall.SIGINT, "s1", 130},
		{syscall.SIGKILL, "s6", -1},
	} {
		t.Run(fmt.Sprintf("%v at %s", c.sig, c.at), func(t *testing.T) {
			dir := durableDir(t)
			journal := filepath.Join(dir, "run.journal")
			block := filepath.Join(dir, "block-"+c.at)
			writeFile(t, dir, "block-"+c.at, "")
			cmd := exec.Command(self, runArgs(dir)...)
			cmd.Dir = dir
			cmd.Env = append(os.Environ(), "GENESISC_TEST_MAIN=1", "GENESIS_CACHE="+runCache)
			var errOut bytes.Buffer
			cmd.Stderr = &errOut
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			defer cmd.Process.Kill()
			var werr error
			exited := make(chan struct{})
			go func() { werr = cmd.Wait(); close(exited) }()
			waitFor(t, "the call of "+c.at, func() bool {
				select {
				case <-exited:
					t.Fatalf("genesisc ended before the call of %s: %v\n%s", c.at, werr, errOut.String())
				default:
				}
				rows := logEntries(t, filepath.Join(dir, "calls.log"))
				_, err := os.Stat(filepath.Join(dir, "child.pid"))
				return len(rows) > 0 && rows[len(rows)-1][0] == c.at && err == nil
			})

			// One writer per journal: a second run is refused while this
			// one holds it.
			code, _, err2 := genesisc(t, dir, runArgs(dir, "--resume")...)
			if code != 1 || !strings.Contains(err2, "in use") {
				t.Errorf("a second run of the journal in use: exit %d\n%s", code, err2)
			}

			cmd.Process.Signal(c.sig)
			<-exited
			if c.exit >= 0 {
				var ee *exec.ExitError
				if !errors.As(werr, &ee) || ee.ExitCode() != c.exit {
					t.Errorf("genesisc exit %v, want %d\n%s", werr, c.exit, errOut.String())
				}
			}
			// The program goes with genesisc, killed or not: the lock
			// is released when it has ended.
			waitFor(t, "the run to end", func() bool { return unlocked(journal) })
			calls := logEntries(t, filepath.Join(dir, "calls.log"))
			last := calls[len(calls)-1]
			toolPid, _ := strconv.Atoi(last[2])
			data, _ := os.ReadFile(filepath.Join(dir, "child.pid"))
			childPid, _ := strconv.Atoi(strings.TrimSpace(string(data)))
			waitFor(t, "the tool and its child to be gone", func() bool { return dead(toolPid) && dead(childPid) })
			res, err := os.ReadFile(filepath.Join(dir, "result.json"))
			if err != nil || !strings.Contains(string(res), `"status":"cancelled"`) {
				t.Errorf("the result of the cancelled run: %s (%v)\n%s", res, err, errOut.String())
			}
			jdata, _ := os.ReadFile(journal)
			if !strings.HasSuffix(string(jdata), `{"end":"cancelled","step":null}`+"\n") && !regexp.MustCompile(`\{"end":"cancelled"[^\n]*\}\n$`).Match(jdata) {
				t.Errorf("the journal does not end with the cancellation:\n%s", jdata)
			}
			// Nothing ran after the kill: the tool removed from the
			// block file now would go on — and there is none left.
			os.Remove(block)
			if got := logEntries(t, filepath.Join(dir, "calls.log")); len(got) != len(calls) {
				t.Errorf("tool calls after the kill: %v", got[len(calls):])
			}
			if n, _ := strconv.Atoi(c.at[1:]); len(calls) != n {
				t.Errorf("calls before the kill: %v, want s1 … %s", calls, c.at)
			}

			// Resume: the result is the uninterrupted run's; the call in
			// flight ran again with the same key, its effect happened
			// once, every other call ran once.
			if code, _, err3 := genesisc(t, dir, runArgs(dir, "--resume")...); code != 0 {
				t.Fatalf("resume: exit %d\n%s", code, err3)
			}
			got, _ := os.ReadFile(filepath.Join(dir, "result.json"))
			if string(got) != string(want) {
				t.Errorf("resumed result\n%s\nwant\n%s", got, want)
			}
			calls = logEntries(t, filepath.Join(dir, "calls.log"))
			keyOf := map[string]string{}
			for _, row := range calls {
				if k, ok := keyOf[row[0]]; ok && (row[0] != c.at || k != row[1]) {
					t.Errorf("step %s called again (key %s, first %s): only the call in flight may be", row[0], row[1], k)
				}
				keyOf[row[0]] = row[1]
			}
			if len(calls) != 7 {
				t.Errorf("%d calls, want the 6 steps and the one in flight again: %v", len(calls), calls)
			}
			effects := logEntries(t, filepath.Join(dir, "effects.log"))
			if len(effects) != 6 {
				t.Errorf("effects %v, want one per step", effects)
			}
			runID := headerRunID.FindSubmatch(jdata)
			if runID == nil {
				t.Fatalf("no run id in the journal header:\n%s", jdata)
			}
			jdata, _ = os.ReadFile(journal)
			steps := regexp.MustCompile(`"step":"(s\d @ [^"]*)","effect":"tool"`).FindAllSubmatch(jdata, -1)
			if len(steps) != 6 {
				t.Fatalf("the journal has %d tool effects, want 6:\n%s", len(steps), jdata)
			}
			for i, e := range effects {
				step := string(steps[i][1])
				if want := runtime.IdempotencyKey(string(runID[1]), programHash[1], step, 1); e[1] != want || e[0] != fmt.Sprintf("s%d", i+1) {
					t.Errorf("effect %d: %v, want key %s (step %s)", i, e, want, step)
				}
			}

			// A finished journal is not overwritten: a new run refuses,
			// runs nothing and leaves the file alone; --overwrite starts
			// over.
			before, _ := os.ReadFile(journal)
			code, _, err4 := genesisc(t, dir, runArgs(dir)...)
			for _, s := range []string{"already holds a run", "--resume", "--replay", "--overwrite"} {
				if !strings.Contains(err4, s) {
					t.Errorf("the refusal does not say %q: %s", s, err4)
				}
			}
			after, _ := os.ReadFile(journal)
			if code != 2 || !bytes.Equal(before, after) || len(logEntries(t, filepath.Join(dir, "calls.log"))) != 7 {
				t.Errorf("a new run on a finished journal: exit %d, journal changed %v", code, !bytes.Equal(before, after))
			}
			if code, _, err5 := genesisc(t, dir, runArgs(dir, "--overwrite")...); code != 0 {
				t.Errorf("--overwrite: exit %d\n%s", code, err5)
			}
			if after, _ := os.ReadFile(journal); headerRunID.FindSubmatch(after) == nil || string(headerRunID.FindSubmatch(after)[1]) == string(runID[1]) {
				t.Errorf("--overwrite did not start a new run:\n%s", after)
			}
		})
	}
}

// TestSignalStopsLoopWithoutEffects: SIGTERM reaches a run that is in a
// loop without effects (no step to notice it at): the loop's iterations
// notice it, the run ends cancelled at the loop, exit 143, and --resume
// continues the run from its journal (here into the wall limit).
func TestSignalStopsLoopWithoutEffects(t *testing.T) {
	if testing.Short() {
		t.Skip("builds Go programs")
	}
	useRunCache(t)
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	writeFile(t, dir, "runaway.vvm", runawayVVM)
	args := []string{"run", "--input", "mode=pure", "--max-wall", "0", "--journal", "run.journal",
		"--result", "result.json", "runaway.vvm"}
	cmd := exec.Command(self, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GENESISC_TEST_MAIN=1", "GENESIS_CACHE="+runCache)
	var errOut bytes.Buffer
	cmd.Stderr = &errOut
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	journal := filepath.Join(dir, "run.journal")
	waitFor(t, "the run to start", func() bool {
		fi, err := os.Stat(journal)
		return err == nil && fi.Size() > 0 && !unlocked(journal)
	})
	time.Sleep(100 * time.Millisecond) // into the loop
	cmd.Process.Signal(syscall.SIGTERM)
	err = cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 143 {
		t.Fatalf("genesisc: %v, want exit 143\n%s", err, errOut.String())
	}
	data, err := os.ReadFile(filepath.Join(dir, "result.json"))
	if err != nil {
		t.Fatal(err)
	}
	res, err := runtime.ParseResult(data)
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != runtime.StatusCancelled || res.Error == nil || res.Error.Step != "loop @ runaway.vvm:15:3" || !strings.Contains(res.Error.Message, "SIGTERM") {
		t.Fatalf("result %s, want cancelled at the loop by SIGTERM", data)
	}
	code, _, stderr := genesisc(t, dir, "run", "--input", "mode=pure", "--max-wall", "200ms", "--journal", "run.journal",
		"--resume", "--result", "result.json", "runaway.vvm")
	data, _ = os.ReadFile(filepath.Join(dir, "result.json"))
	if code != 1 || !strings.Contains(string(data), `"kind":"limit.wall"`) {
		t.Fatalf("resume: exit %d, result %s\n%s", code, data, stderr)
	}
}
