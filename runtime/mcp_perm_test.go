package runtime

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// fsMCP connects to an in-memory server with the reference filesystem
// server's tool names, over a map of files.
func fsMCP(t *testing.T, files map[string]string) *MCPTools {
	t.Helper()
	s := mcp.NewServer(&mcp.Implementation{Name: "fs", Version: "1"}, nil)
	anyArgs := map[string]any{"type": "object"}
	text := func(s string) *mcp.CallToolResult {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}
	}
	s.AddTool(&mcp.Tool{Name: "read_text_file", InputSchema: anyArgs}, func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		var in struct{ Path string }
		json.Unmarshal(req.Params.Arguments, &in)
		return text(files[in.Path]), nil
	})
	s.AddTool(&mcp.Tool{Name: "write_file", InputSchema: anyArgs}, func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		var in struct{ Path, Content string }
		json.Unmarshal(req.Params.Arguments, &in)
		files[in.Path] = in.Content
		return text("wrote " + in.Path), nil
	})
	return memoryMCPOf(t, "fs", s)
}

// permLLM calls the permission tools read and write as a VVM agent's
// model would, and answers with their replies.
type permLLM struct{}

func (permLLM) TakesTools() bool { return true }

func (permLLM) Complete(ctx context.Context, _ *Call, req *LLMRequest) (LLMResponse, error) {
	call := func(name string, args ...Field) string {
		return toolReplyText(req.CallTool(ctx, ToolCall{Name: name, Args: Object(args...)}))
	}
	return LLMResponse{Value: List(
		String(call("read", Field{"path", String("docs/a.md")})),
		String(call("write", Field{"path", String("out/b.md")}, Field{"content", String("new")})),
		String(call("read", Field{"path", String("secrets/key")})),
		String(call("write", Field{"path", String("docs/a.md")}, Field{"content", String("overwritten")})),
	)}, nil
}

// VVM's permission tools read and write reach an MCP filesystem server's
// read_text_file and write_file, inside the permission's globs only.
func TestMCPServesPermissionTools(t *testing.T) {
	files := map[string]string{"docs/a.md": "hello", "secrets/key": "k"}
	h := NewHost(Config{LLM: permLLM{}, Tools: []ToolProvider{fsMCP(t, files)}})
	perms := Object(Field{"read", List(String("docs/**"), String("out/*"))}, Field{"write", List(String("out/*"))})
	res := h.Execute(RunOptions{}, func(r *Run) Value {
		return r.LLM(siteA.At(1), String("p"), Object(Field{"permissions", perms}))
	})
	got := res.Output.Elems()
	if len(got) != 4 {
		t.Fatalf("%s", resultJSON(res))
	}
	if got[0].Str() != "hello" || got[1].Str() != "wrote out/b.md" || files["out/b.md"] != "new" {
		t.Errorf("read and write inside the globs: %s, files %v", res.Output, files)
	}
	for i, want := range []string{`read of \"secrets/key\" is not allowed`, `write of \"docs/a.md\" is not allowed`} {
		if s := got[2+i].Str(); !strings.Contains(s, `"kind":"rejected"`) || !strings.Contains(s, want) {
			t.Errorf("call %d outside the globs: %s", 3+i, s)
		}
	}
	if files["docs/a.md"] != "hello" {
		t.Errorf("a rejected write reached the server")
	}
}
