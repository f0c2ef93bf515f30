package runtime

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// referenceMCPServer returns the command of an official MCP reference
// server that `make mcp-servers` installed into .cache/npm, or skips the
// test saying what is missing.
func referenceMCPServer(t *testing.T, name string) string {
	t.Helper()
	if _, err := exec.LookPath("node"); err != nil {
		t.Skip("node is not installed: the MCP reference server tests need it (and `make mcp-servers`)")
	}
	bin, err := filepath.Abs(filepath.Join("..", ".cache", "npm", "node_modules", ".bin", name))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(bin); err != nil {
		t.Skipf("%s is not installed: run `make mcp-servers` (npm install into .cache/npm)", name)
	}
	return bin
}

// TestMCPReferenceFilesystemServer runs @modelcontextprotocol/server-filesystem
// (the official reference server, from the npm registry) over stdio.
func TestMCPReferenceFilesystemServer(t *testing.T) {
	bin := referenceMCPServer(t, "mcp-server-filesystem")
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "a.txt"), []byte("hello file\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	p, err := ParseTools("mcp:" + strconv.Quote(bin) + " " + strconv.Quote(dir))
	if err != nil {
		t.Fatal(err)
	}
	m := p.(*MCPTools)
	defer m.Close()
	if !strings.Contains(" "+strings.Join(m.Tools(), " ")+" ", " read_text_file ") {
		t.Fatalf("tools %v, want read_text_file among them", m.Tools())
	}
	path := func(name string) Value { return String(filepath.Join(dir, name)) }
	h := NewHost(Config{Tools: []ToolProvider{m}})
	res := h.Execute(RunOptions{}, func(r *Run) Value {
		return List(
			r.Tool(siteA.At(1), String("read_text_file"), Object(Field{"path", path("a.txt")})),
			r.Tool(siteA.At(2), String("write_file"), Object(Field{"path", path("b.txt")}, Field{"content", String("written")})),
			r.Tool(siteA.At(3), String("read_text_file"), Object(Field{"path", path("b.txt")})),
			r.Tool(siteA.At(4), String("read_text_file"), Object(Field{"path", String("/etc/passwd")})),
			r.Tool(siteA.At(5), String("no_such_tool"), ObjNew()),
		)
	})
	out := res.Output
	if got := out.Index(0).String(); got != `{"content":"hello file\n"}` {
		t.Errorf("read_text_file: %s, want the structured content", got)
	}
	if out.Index(1).k == KindError {
		t.Errorf("write_file: %s", out.Index(1))
	}
	if got := out.Index(2).String(); got != `{"content":"written"}` {
		t.Errorf("read_text_file after write_file: %s", got)
	}
	if e := out.Index(3); e.ErrKind() != "tool" || !strings.Contains(e.ErrMessage(), "denied") {
		t.Errorf("a path outside the allowed directory: %s, want kind tool with the server's message", e)
	}
	if e := out.Index(4); e.ErrKind() != "unknown_tool" || !strings.Contains(e.ErrMessage(), "mcp-server-filesystem") {
		t.Errorf("a tool the server does not have: %s, want kind unknown_tool naming the server", e)
	}
}
