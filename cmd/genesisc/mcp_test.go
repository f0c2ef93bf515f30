package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// mcpServerMain serves an MCP server on standard input and output (the
// test binary is the server of --tools mcp:COMMAND when GENESISC_TEST_MCP
// is set): lookup_order {order_id} answers structured content, and
// refund {order_id} fails with isError for an order it does not know.
func mcpServerMain() int {
	s := mcp.NewServer(&mcp.Implementation{Name: "genesisc-test", Version: "1"}, nil)
	type order struct {
		OrderID string `json:"order_id"`
	}
	type found struct {
		OrderID string  `json:"order_id"`
		Amount  float64 `json:"amount"`
	}
	mcp.AddTool(s, &mcp.Tool{Name: "lookup_order", Description: "Looks an order up."}, func(_ context.Context, _ *mcp.CallToolRequest, in order) (*mcp.CallToolResult, found, error) {
		return nil, found{in.OrderID, 42}, nil
	})
	mcp.AddTool(s, &mcp.Tool{Name: "refund", Description: "Refunds an order."}, func(_ context.Context, _ *mcp.CallToolRequest, in order) (*mcp.CallToolResult, any, error) {
		r := &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "no order " + in.OrderID}}}
		return r, nil, nil
	})
	if err := s.Run(context.Background(), &mcp.StdioTransport{}); err != nil {
		os.Stderr.WriteString(err.Error() + "\n")
		return 1
	}
	return 0
}

// TestRunMCPTools runs a nano-vm program through genesisc run whose tool
// steps go to an MCP server (--tools mcp:COMMAND) and, for a tool the
// server does not have, to a mock tools file given by a second --tools.
func TestRunMCPTools(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a Go program")
	}
	useRunCache(t)
	t.Setenv("GENESISC_TEST_MCP", "1")
	dir := t.TempDir()
	prog := filepath.Join(dir, "orders.json")
	os.WriteFile(prog, []byte(`{"name": "orders", "steps": [
  {"id": "lookup", "type": "tool", "tool": "lookup_order", "args": {"order_id": "$order_id"}, "output_key": "order"},
  {"id": "notify", "type": "tool", "tool": "notify", "args": {"text": "found"}, "output_key": "sent"},
  {"id": "refund", "type": "tool", "tool": "refund", "args": {"order_id": "$order_id"}, "is_terminal": true}
]}`), 0o644)
	tools := filepath.Join(dir, "tools.json")
	os.WriteFile(tools, []byte(`{"notify": "sent", "lookup_order": "from the mock"}`), 0o644)
	result := filepath.Join(dir, "result.json")
	server := "mcp:" + strconv.Quote(os.Args[0]) + " -test.run=NONE"
	var stdout, stderr bytes.Buffer
	code := run([]string{"genesisc", "run", "--tools", server, "--tools", "mock:" + tools,
		"--input", "order_id=A-7", "--result", result, prog}, &stdout, &stderr)
	data, _ := os.ReadFile(result)
	got := string(data)
	for _, want := range []string{
		`"lookup":{"amount":42,"order_id":"A-7"}`, // the MCP server, first, serves lookup_order
		`"notify":"sent"`,                         // the mock serves what the server lacks
		`"kind":"tool","message":"tool refund: no order A-7"`,
	} {
		if !strings.Contains(got, want) {
			t.Errorf("exit %d: the result lacks %s:\n%s\n%s", code, want, got, stderr.String())
		}
	}

	// A tool no provider has: the error names both.
	os.WriteFile(prog, []byte(`{"name": "orders", "steps": [{"id": "x", "type": "tool", "tool": "nowhere", "is_terminal": true}]}`), 0o644)
	stdout.Reset()
	stderr.Reset()
	run([]string{"genesisc", "run", "--tools", server, "--tools", "mock:" + tools, "--result", result, prog}, &stdout, &stderr)
	data, _ = os.ReadFile(result)
	if !strings.Contains(string(data), `"kind":"unknown_tool"`) || !strings.Contains(string(data), "asked: mcp:") || !strings.Contains(string(data), ", mock:"+tools) {
		t.Errorf("a missing tool: %s\n%s", data, stderr.String())
	}

	// A malformed MCP spec is a usage error before anything is built.
	stderr.Reset()
	if code := run([]string{"genesisc", "run", "--tools", "mcp+ftp://x", prog}, &stdout, &stderr); code != 2 || !strings.Contains(stderr.String(), "--tools") {
		t.Errorf("--tools mcp+ftp://x: exit %d, %s", code, stderr.String())
	}
}
