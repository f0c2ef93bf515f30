package runtime

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestExecToolBackgroundChild: a tool that answers and exits, leaving a
// background process that holds its stdout, has made a successful call,
// and that process is killed with the tool's process group.
func TestExecToolBackgroundChild(t *testing.T) {
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "child.pid")
	tools := &ExecTools{Command: `sleep 300 & echo $! > ` + pidFile + `; echo '{"ok": true}'`}
	h := NewHost(Config{Tools: []ToolProvider{tools}})
	res := h.Execute(RunOptions{}, func(r *Run) Value {
		return r.Tool(siteA.At(), String("t"), ObjNew())
	})
	if res.Status != StatusSuccess || res.Output.String() != `{"ok":true}` {
		t.Fatalf("the call: %s", resultJSON(res))
	}
	data, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(string(data)))
	deadline := time.Now().Add(30 * time.Second) // a hang guard
	for !processGone(pid) {
		if time.Now().After(deadline) {
			syscall.Kill(pid, syscall.SIGKILL)
			t.Fatal("the tool's background child outlived the call")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// processGone reports whether process pid has ended: it does not exist,
// or is a zombie that its new parent has not reaped yet.
func processGone(pid int) bool {
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
