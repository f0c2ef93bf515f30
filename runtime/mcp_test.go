package runtime

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// testMCPServer is an MCP server with a tool for each way a call can end:
//
//	add     {a, b} → structured content {"sum": a+b}
//	greet   {name} → the text "hello NAME"
//	parts   → two text items and an image
//	fail    → a result with isError and the text "card declined"
//	slow    → answers when the call is cancelled, or after a minute
//	meta    → the text of the request's idempotency key (_meta)
//	die     → in a server process: exits when the file $GENESIS_RUNTIME_TEST_MCP_ONCE
//	          does not exist yet (creating it), else the text "alive"
//	pid     → the text of the server process's pid
func testMCPServer() *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "runtime-test", Version: "1"}, nil)
	type addIn struct {
		A float64 `json:"a"`
		B float64 `json:"b"`
	}
	type addOut struct {
		Sum float64 `json:"sum"`
	}
	mcp.AddTool(s, &mcp.Tool{Name: "add", Description: "Adds a and b."}, func(_ context.Context, _ *mcp.CallToolRequest, in addIn) (*mcp.CallToolResult, addOut, error) {
		return nil, addOut{in.A + in.B}, nil
	})
	anyArgs := map[string]any{"type": "object"}
	text := func(s string) *mcp.CallToolResult {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}
	}
	s.AddTool(&mcp.Tool{Name: "greet", InputSchema: anyArgs}, func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		var in struct{ Name string }
		json.Unmarshal(req.Params.Arguments, &in)
		return text("hello " + in.Name), nil
	})
	s.AddTool(&mcp.Tool{Name: "parts", InputSchema: anyArgs}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{
			&mcp.TextContent{Text: "one"}, &mcp.TextContent{Text: "two"},
			&mcp.ImageContent{MIMEType: "image/png", Data: []byte("PNG")},
		}}, nil
	})
	s.AddTool(&mcp.Tool{Name: "fail", InputSchema: anyArgs}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		r := text("card declined")
		r.IsError = true
		return r, nil
	})
	s.AddTool(&mcp.Tool{Name: "slow", InputSchema: anyArgs}, func(ctx context.Context, _ *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		select {
		case <-ctx.Done():
		case <-time.After(time.Minute): // a hang guard
		}
		return text("late"), nil
	})
	s.AddTool(&mcp.Tool{Name: "meta", InputSchema: anyArgs}, func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		key, _ := req.Params.Meta[MCPIdempotencyKeyMeta].(string)
		return text(key), nil
	})
	s.AddTool(&mcp.Tool{Name: "die", InputSchema: anyArgs}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		once := os.Getenv("GENESIS_RUNTIME_TEST_MCP_ONCE")
		if _, err := os.Stat(once); err != nil && once != "" {
			os.WriteFile(once, nil, 0o644)
			os.Exit(1)
		}
		return text("alive"), nil
	})
	s.AddTool(&mcp.Tool{Name: "pid", InputSchema: anyArgs}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return text(strconv.Itoa(os.Getpid())), nil
	})
	return s
}

// mcpServerMain serves testMCPServer on standard input and output: the
// test binary is the server of mcp:COMMAND when GENESIS_RUNTIME_TEST_MCP
// is set (TestMain).
func mcpServerMain() int {
	os.Stderr.WriteString("test server starting\n")
	if err := testMCPServer().Run(context.Background(), &mcp.StdioTransport{}); err != nil {
		os.Stderr.WriteString(err.Error() + "\n")
		return 1
	}
	return 0
}

// memoryMCP connects to testMCPServer over the SDK's in-memory transport.
func memoryMCP(t *testing.T) *MCPTools {
	t.Helper()
	return memoryMCPOf(t, "memory", testMCPServer())
}

// memoryMCPOf connects to server over the SDK's in-memory transport, as
// the provider called name.
func memoryMCPOf(t *testing.T, name string, server *mcp.Server) *MCPTools {
	t.Helper()
	m, err := ConnectMCPTransport(context.Background(), name, func() mcp.Transport {
		ct, st := mcp.NewInMemoryTransports()
		if _, err := server.Connect(context.Background(), st, nil); err != nil {
			t.Error(err)
		}
		return ct
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	return m
}

func TestMCPToolsInMemory(t *testing.T) {
	m := memoryMCP(t)
	if got, want := strings.Join(m.Tools(), " "), "add die fail greet meta parts pid slow"; got != want {
		t.Errorf("tools %q, want %q", got, want)
	}
	mock, err := ParseMockTools([]byte(`{"greet": "from the mock", "mocked": "mock"}`))
	if err != nil {
		t.Fatal(err)
	}
	mock.name = "mock:tools.json"
	h := NewHost(Config{Tools: []ToolProvider{m, mock}})
	res := h.Execute(RunOptions{RunID: "run-1", ProgramHash: "p"}, func(r *Run) Value {
		return List(
			r.Tool(siteA.At(1), String("add"), Object(Field{"a", Int(2)}, Field{"b", Number(0.5)})),
			r.Tool(siteA.At(2), String("greet"), Object(Field{"name", String("Ada")})),
			r.Tool(siteA.At(3), String("parts"), ObjNew()),
			r.Tool(siteA.At(4), String("meta"), ObjNew()),
			r.Tool(siteA.At(5), String("mocked"), ObjNew()),
			r.Tool(siteA.At(6), String("fail"), ObjNew()),
			r.ToolWith(siteA.At(7), String("slow"), ObjNew(), Object(Field{"timeout", Number(0.2)})),
			r.Tool(siteA.At(8), String("nowhere"), ObjNew()),
		)
	})
	key := IdempotencyKey("run-1", "p", "a @ t.json:1:1 # 4", 1)
	out := res.Output
	want := `[{"sum":2.5},"hello Ada",["one","two",{"type":"image","mimeType":"image/png","data":"UE5H"}],"` + key + `","mock"]`
	if got := List(out.Elems()[:5]...).String(); got != want {
		t.Errorf("replies %s\nwant %s", got, want)
	}
	if fail := out.Index(5); fail.ErrKind() != "tool" || fail.ErrMessage() != "tool fail: card declined" {
		t.Errorf("isError: %v, want kind tool with the server's text", fail)
	}
	if slow := out.Index(6); slow.ErrKind() != "timeout" {
		t.Errorf("slow tool: %v, want kind timeout", slow)
	}
	none := out.Index(7)
	if none.ErrKind() != "unknown_tool" || !strings.Contains(none.ErrMessage(), "asked: memory, mock:tools.json") {
		t.Errorf("missing tool: %v, want kind unknown_tool naming the providers", none)
	}
}

// TestMCPToolsStdio runs the test binary as an MCP server: a call that
// kills the server is kind unavailable, and the retry starts a new one.
func TestMCPToolsStdio(t *testing.T) {
	t.Setenv("GENESIS_RUNTIME_TEST_MCP", "1")
	t.Setenv("GENESIS_RUNTIME_TEST_MCP_ONCE", filepath.Join(t.TempDir(), "died"))
	p, err := ParseTools("mcp:" + strconv.Quote(os.Args[0]) + " -test.run=NONE")
	if err != nil {
		t.Fatal(err)
	}
	m := p.(*MCPTools)
	defer m.Close()
	h := NewHost(Config{Tools: []ToolProvider{m}})
	res := h.Execute(RunOptions{}, func(r *Run) Value {
		return List(
			r.Tool(siteA.At(1), String("greet"), Object(Field{"name", String("stdio")})),
			r.ToolWith(siteA.At(2), String("die"), ObjNew(), Object(Field{"retries", Int(0)})),
			r.ToolWith(siteA.At(3), String("die"), ObjNew(), Object(Field{"retries", Int(1)})),
		)
	})
	if got := res.Output.Index(0).Str(); got != "hello stdio" {
		t.Errorf("greet: %s", got)
	}
	if died := res.Output.Index(1); died.ErrKind() != "unavailable" {
		t.Errorf("a server that exits during the call: %v, want kind unavailable", died)
	}
	if got := res.Output.Index(2).Str(); got != "alive" {
		t.Errorf("after the server died the next attempt did not reach a new one: %s", got)
	}
}

// TestMCPToolsHTTP speaks streamable HTTP to testMCPServer.
func TestMCPToolsHTTP(t *testing.T) {
	server := testMCPServer()
	srv := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server }, nil))
	defer srv.Close()
	p, err := ParseTools("mcp+" + srv.URL + "/mcp")
	if err != nil {
		t.Fatal(err)
	}
	defer p.(*MCPTools).Close()
	h := NewHost(Config{Tools: []ToolProvider{p}})
	res := h.Execute(RunOptions{}, func(r *Run) Value {
		return List(
			r.Tool(siteA.At(1), String("add"), Object(Field{"a", Int(1)}, Field{"b", Int(2)})),
			r.Tool(siteA.At(2), String("fail"), ObjNew()),
		)
	})
	if got := res.Output.Index(0).String(); got != `{"sum":3}` {
		t.Errorf("add over HTTP: %s", got)
	}
	if fail := res.Output.Index(1); fail.ErrKind() != "tool" {
		t.Errorf("isError over HTTP: %v", fail)
	}
	srv.Close()
	res = h.Execute(RunOptions{}, func(r *Run) Value {
		return r.ToolWith(siteA.At(1), String("add"), ObjNew(), Object(Field{"retries", Int(0)}))
	})
	if res.Output.ErrKind() != "unavailable" {
		t.Errorf("a server that went away: %v, want kind unavailable", res.Output)
	}
}

func TestMCPToolsSpecs(t *testing.T) {
	for _, bad := range []string{"mcp:", "mcp:  ", "mcp+ftp://x/y", "mcp+http://", "mcp+http:nohost", "mcpx:a"} {
		if err := CheckTools(bad); err == nil {
			t.Errorf("CheckTools(%q) succeeded", bad)
		}
	}
	for _, good := range []string{"mcp:npx -y server", "mcp+http://127.0.0.1:1/mcp", "mcp+https://example.com/mcp"} {
		if err := CheckTools(good); err != nil {
			t.Errorf("CheckTools(%q): %v", good, err)
		}
	}
	// A server that does not start: the message has its last stderr line.
	_, err := ParseTools(`mcp:echo "no such server" >&2; exit 3`)
	if err == nil || !strings.Contains(err.Error(), "no such server") || !strings.Contains(err.Error(), "cannot connect") {
		t.Errorf("a server that exits at once: %v", err)
	}
}

// toolsLLM is a model that calls the tool "add" once and answers with
// the tools it was offered.
type toolsLLM struct{}

func (toolsLLM) TakesTools() bool { return true }

func (toolsLLM) Complete(ctx context.Context, _ *Call, req *LLMRequest) (LLMResponse, error) {
	var names []string
	for _, d := range req.Tools {
		names = append(names, d.Name+": "+d.Description+" "+d.Parameters.String())
	}
	sum := req.CallTool(ctx, ToolCall{Name: "add", Args: Object(Field{"a", Int(1)}, Field{"b", Int(2)})})
	return LLMResponse{Value: Object(Field{"offered", String(strings.Join(names, "\n"))}, Field{"sum", sum})}, nil
}

// TestMCPAgentTools: an agent's skill or a Grimoire advisor's allowed
// tool that an MCP server provides is offered with the server's
// description and schema, and served by it; an advisor's "mcp" offers
// every tool of the server of that name, and a name no server has is
// dropped.
func TestMCPAgentTools(t *testing.T) {
	m := memoryMCP(t)
	h := NewHost(Config{LLM: toolsLLM{}, Tools: []ToolProvider{m}})
	var trace strings.Builder
	res := h.Execute(RunOptions{Trace: &trace}, func(r *Run) Value {
		return List(
			r.LLM(siteA.At(1), String("p"), Object(Field{"skills", List(String("add"))})),
			r.LLM(siteA.At(2), String("p"), Object(Field{"allowed_tools", List(String("add"))}, Field{"mcp", List(String("runtime-test"), String("github"))})),
		)
	})
	skill := res.Output.Index(0)
	if got := ObjGet(skill, String("sum")).String(); got != `{"sum":3}` {
		t.Errorf("the skill add, served by the MCP server: %s", resultJSON(res))
	}
	offered := ObjGet(skill, String("offered")).Str()
	if !strings.HasPrefix(offered, "add: Adds a and b. {") || !strings.Contains(offered, `"a":{"type":"number"}`) {
		t.Errorf("the skill add offered as %q, want the server's description and schema", offered)
	}
	all := ObjGet(res.Output.Index(1), String("offered")).Str()
	var names []string
	for _, line := range strings.Split(all, "\n") {
		names = append(names, strings.SplitN(line, ":", 2)[0])
	}
	if got, want := strings.Join(names, " "), "add die fail greet meta parts pid slow"; got != want {
		t.Errorf("mcp runtime-test offered %q, want %q", got, want)
	}
	if !strings.Contains(trace.String(), `"data":{"tools":["mcp \"github\""],"reason":"no MCP server of the run`) {
		t.Errorf("the unknown server is not reported dropped:\n%s", trace.String())
	}
}

func TestMCPToolsNamed(t *testing.T) {
	for _, c := range []struct {
		spec, name string
		want       bool
	}{
		{"mcp:npx -y @modelcontextprotocol/server-filesystem@2026.8.31 /tmp", "filesystem", true},
		{`mcp:"/x/.bin/mcp-server-filesystem" /tmp`, "filesystem", true},
		{"mcp:github-mcp stdio", "github-mcp", true},
		{"mcp:npx -y @modelcontextprotocol/server-filesystem /tmp", "tmp", false},
		{"mcp+http://localhost:8080/mcp", "mcp+http://localhost:8080/mcp", true},
		{"mcp+http://localhost:8080/mcp", "localhost", false},
	} {
		m := &MCPTools{spec: c.spec, server: "secure-filesystem-server"}
		if got := m.Named(c.name); got != c.want {
			t.Errorf("%s named %q: %v, want %v", c.spec, c.name, got, c.want)
		}
		if !m.Named("secure-filesystem-server") {
			t.Errorf("%s is not named by its serverInfo", c.spec)
		}
	}
}

// TestMCPToolsConcurrent: parallel branches share one session.
func TestMCPToolsConcurrent(t *testing.T) {
	m := memoryMCP(t)
	errs := make(chan string, 16)
	for i := 0; i < 16; i++ {
		go func() {
			v, err := m.CallTool(context.Background(), nil, "add", Object(Field{"a", Int(int64(i))}, Field{"b", Int(1)}))
			if want := `{"sum":` + strconv.Itoa(i+1) + `}`; err != nil || v.String() != want {
				errs <- v.String() + " " + want
				return
			}
			errs <- ""
		}()
	}
	for i := 0; i < 16; i++ {
		if e := <-errs; e != "" {
			t.Error(e)
		}
	}
}
