package runtime

import (
	"os"
	"strconv"
	"syscall"
	"testing"
	"time"
)

// TestMCPToolsCloseEndsServer: closing the provider ends the server
// process that mcp:COMMAND started.
func TestMCPToolsCloseEndsServer(t *testing.T) {
	t.Setenv("GENESIS_RUNTIME_TEST_MCP", "1")
	p, err := ParseTools("mcp:" + strconv.Quote(os.Args[0]) + " -test.run=NONE")
	if err != nil {
		t.Fatal(err)
	}
	m := p.(*MCPTools)
	h := NewHost(Config{Tools: []ToolProvider{m}})
	res := h.Execute(RunOptions{}, func(r *Run) Value { return r.Tool(siteA.At(), String("pid"), ObjNew()) })
	pid, err := strconv.Atoi(res.Output.Str())
	if err != nil {
		t.Fatalf("pid: %s", resultJSON(res))
	}
	if processGone(pid) {
		t.Fatal("the server is gone before Close")
	}
	m.Close()
	deadline := time.Now().Add(30 * time.Second) // a hang guard
	for !processGone(pid) {
		if time.Now().After(deadline) {
			syscall.Kill(pid, syscall.SIGKILL)
			t.Fatal("the MCP server outlived Close")
		}
		time.Sleep(10 * time.Millisecond)
	}
	res = h.Execute(RunOptions{}, func(r *Run) Value { return r.Tool(siteA.At(), String("pid"), ObjNew()) })
	if res.Output.ErrKind() != "unavailable" {
		t.Errorf("a call after Close: %s, want kind unavailable", res.Output)
	}
}
