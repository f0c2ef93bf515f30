package runtime

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/url"
	"os/exec"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// MCPTools is a tool provider served by one MCP server (the Model Context
// Protocol, through its official Go SDK): --tools mcp:COMMAND ARGS… runs
// the server as a child process and speaks to it over its standard input
// and output; --tools mcp+http://HOST:PORT/PATH (or mcp+https://…) speaks
// the streamable HTTP transport to a server that is already running.
//
// The provider connects and lists the server's tools when it is made
// (ConnectMCP); a tool the server did not list is ErrUnknownTool, so the
// next provider is asked. A call sends the step's arguments (an object)
// as the tool's arguments and the call's idempotency key in the request's
// _meta, under MCPIdempotencyKeyMeta (the arguments are the tool's own,
// checked against its input schema: a key among them could be refused).
//
// The reply: the call's structured content when the server gives one, as
// a value; otherwise its content, a text as a string, several items as a
// list (an image, audio or resource item as an object with its "type"),
// no content as unit.
//
// Failures, as the runtime's error kinds (docs/runtime.md, "MCP tools"):
//   - a result with isError: kind "tool", the message the server's text;
//   - a protocol error: kind "bad_request" for invalid parameters (JSON-RPC
//     -32602), "unknown_tool" for a method the server does not have, else
//     "tool";
//   - a transport failure (the server exited, the connection closed, an
//     HTTP error): kind "unavailable", retryable by default; the next
//     attempt connects again (a new process for mcp:COMMAND);
//   - the call's timeout: kind "timeout"; a cancelled run: "cancelled".
//
// Close ends the session and, for mcp:COMMAND, the server: its standard
// input is closed, then its process group is killed after
// MCPCloseTimeout. On Unix the command runs in a process group of its own
// and on Linux it gets SIGKILL when the process that started it dies, as
// exec: tools do.
type MCPTools struct {
	spec      string // as given to --tools, for messages
	transport func() mcp.Transport

	mu      sync.Mutex
	session *mcp.ClientSession
	cmd     *exec.Cmd   // the server process of the session (stdio)
	stderr  *tailWriter // the server's standard error, its end (stdio)
	closed  bool
	tools   map[string]*mcp.Tool
	names   []string // sorted
	server  string   // the server's name (its initialize result)
}

// MCPIdempotencyKeyMeta is the _meta key of a tools/call request that
// carries the call's idempotency key (Call.IdempotencyKey). MCP reserves
// _meta for such metadata and asks that its keys have a prefix of their
// own.
const MCPIdempotencyKeyMeta = "io.github.genesis-toolchain/idempotency-key"

// MCPStartTimeout bounds the start of an MCP server: the process (or the
// HTTP connection), the initialization handshake and the listing of its
// tools. npx fetching a package on its first use needs a while.
const MCPStartTimeout = 60 * time.Second

// MCPCloseTimeout is how long Close waits for a stdio server to exit once
// its standard input is closed before killing its process group.
const MCPCloseTimeout = 2 * time.Second

// mcpMaxToolPages bounds the pages of a server's tools list (a server
// that hands out cursors forever).
const mcpMaxToolPages = 1000

// mcpImplementation is how the runtime introduces itself to MCP servers.
var mcpImplementation = &mcp.Implementation{Name: "genesis-runtime", Version: "1"}

// ConnectMCP makes the provider for the --tools value spec (mcp:COMMAND,
// mcp+http://…, mcp+https://…): it starts or reaches the server and lists
// its tools, within ctx and MCPStartTimeout.
func ConnectMCP(ctx context.Context, spec string) (*MCPTools, error) {
	m, err := newMCPTools(spec)
	if err != nil {
		return nil, err
	}
	return m, m.start(ctx)
}

// ConnectMCPTransport is ConnectMCP for a transport of the caller's (an
// in-memory server in a test, a transport the app configured itself):
// transport is called for every connection, the first and each one after
// a transport failure. name stands for the server in messages.
func ConnectMCPTransport(ctx context.Context, name string, transport func() mcp.Transport) (*MCPTools, error) {
	m := &MCPTools{spec: name, transport: transport}
	return m, m.start(ctx)
}

// checkMCPSpec checks the syntax of an mcp tools spec and returns the
// transport maker it describes; nothing is started.
func newMCPTools(spec string) (*MCPTools, error) {
	m := &MCPTools{spec: spec}
	if cmdline, ok := strings.CutPrefix(spec, "mcp:"); ok {
		if strings.TrimSpace(cmdline) == "" {
			return nil, errors.New("tools: mcp: needs a command (mcp:COMMAND ARGS…)")
		}
		m.transport = func() mcp.Transport {
			cmd := exec.Command("/bin/sh", "-c", cmdline)
			killGroup(cmd)
			cmd.Cancel = nil // the session's Close ends it (stopLocked)
			// A process the server left holding its standard error must
			// not hold up the wait for the server's exit.
			cmd.WaitDelay = execDrainDelay
			m.stderr = &tailWriter{}
			cmd.Stderr = m.stderr
			m.cmd = cmd
			return &mcp.CommandTransport{Command: cmd, TerminateDuration: MCPCloseTimeout}
		}
		return m, nil
	}
	raw := strings.TrimPrefix(spec, "mcp+")
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, errors.New("tools: expected mcp:COMMAND, mcp+http://HOST:PORT/PATH or mcp+https://HOST:PORT/PATH, got " + strconv.Quote(spec))
	}
	m.transport = func() mcp.Transport {
		return &mcp.StreamableClientTransport{Endpoint: raw, HTTPClient: http.DefaultClient, MaxRetries: -1, DisableStandaloneSSE: true}
	}
	return m, nil
}

// start connects and lists the tools.
func (m *MCPTools) start(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, MCPStartTimeout)
	defer cancel()
	m.mu.Lock()
	defer m.mu.Unlock()
	s, err := m.connectLocked(ctx)
	if err != nil {
		return err
	}
	m.tools = map[string]*mcp.Tool{}
	if ir := s.InitializeResult(); ir != nil && ir.ServerInfo != nil {
		m.server = ir.ServerInfo.Name
	}
	m.names = nil
	// ListTools page by page: the runtime is built with the Go version a
	// generated program's module declares, which has no range over
	// functions (ClientSession.Tools).
	params := &mcp.ListToolsParams{}
	for pages := 0; ; pages++ {
		res, err := s.ListTools(ctx, params)
		if err == nil && pages >= mcpMaxToolPages {
			err = errors.New("more than " + strconv.Itoa(mcpMaxToolPages) + " pages of tools")
		}
		if err != nil {
			m.stopLocked()
			return m.errorf("listing its tools: %v", startErr(ctx, err))
		}
		for _, t := range res.Tools {
			if t != nil && m.tools[t.Name] == nil {
				m.tools[t.Name] = t
				m.names = append(m.names, t.Name)
			}
		}
		if res.NextCursor == "" {
			break
		}
		params.Cursor = res.NextCursor
	}
	sort.Strings(m.names)
	return nil
}

// startErr says a start that ran out of time did.
func startErr(ctx context.Context, err error) error {
	if ctx.Err() == context.DeadlineExceeded {
		return errors.New("no answer within " + MCPStartTimeout.String())
	}
	return err
}

func (m *MCPTools) errorf(format string, a ...any) error {
	return Errorf("unavailable", "MCP server %s: "+format, append([]any{strconv.Quote(m.spec)}, a...)...)
}

// connectLocked opens a session (m.mu held).
func (m *MCPTools) connectLocked(ctx context.Context) (*mcp.ClientSession, error) {
	if m.closed {
		return nil, m.errorf("closed")
	}
	if m.session != nil {
		return m.session, nil
	}
	m.cmd = nil
	c := mcp.NewClient(mcpImplementation, nil)
	s, err := c.Connect(ctx, m.transport(), nil)
	if err != nil {
		if m.cmd != nil {
			endGroup(m.cmd)
		}
		msg := startErr(ctx, err).Error()
		if m.stderr != nil {
			if line := lastLine(m.stderr.String()); line != "" {
				msg += ": " + line
			}
		}
		return nil, m.errorf("cannot connect: %s", msg)
	}
	m.session = s
	return s, nil
}

// stopLocked ends the session and its server (m.mu held).
func (m *MCPTools) stopLocked() {
	if m.session != nil {
		m.session.Close()
		m.session = nil
	}
	if m.cmd != nil {
		endGroup(m.cmd)
		m.cmd = nil
	}
}

// Tools returns the names of the server's tools, sorted.
func (m *MCPTools) Tools() []string { return append([]string(nil), m.names...) }

// String returns the provider as --tools names it.
func (m *MCPTools) String() string { return m.spec }

// Named reports whether name names this server: its own name (the
// serverInfo of its initialize result), the --tools value, or for
// mcp:COMMAND the base name of the command's first word, without an
// "mcp-server-" or "server-" prefix (mcp:npx -y
// @modelcontextprotocol/server-filesystem DIR is "filesystem", as is
// mcp:mcp-server-filesystem DIR).
func (m *MCPTools) Named(name string) bool {
	if name == m.server || name == m.spec {
		return true
	}
	cmdline, ok := strings.CutPrefix(m.spec, "mcp:")
	if !ok {
		return false
	}
	for _, w := range strings.Fields(cmdline) {
		if w == "npx" || w == "-y" || strings.HasPrefix(w, "--") || strings.HasPrefix(w, "-") {
			continue
		}
		base := strings.Trim(w, `"'`)
		if i := strings.LastIndexByte(base, '/'); i >= 0 {
			base = base[i+1:]
		}
		if i := strings.LastIndexByte(base, '@'); i > 0 {
			base = base[:i] // a version
		}
		base = strings.TrimPrefix(strings.TrimPrefix(base, "mcp-server-"), "server-")
		return name == base
	}
	return false
}

// DescribeTool returns the description and input schema the server gave
// for its tool name.
func (m *MCPTools) DescribeTool(name string) (string, Value, bool) {
	t := m.tools[name]
	if t == nil {
		return "", Value{}, false
	}
	params := Object(Field{"type", String("object")})
	if t.InputSchema != nil {
		if data, err := json.Marshal(t.InputSchema); err == nil {
			if v, err := ParseJSON(data); err == nil && v.k == KindObject {
				params = v
			}
		}
	}
	desc := t.Description
	if desc == "" {
		desc = "The tool " + strconv.Quote(name) + "."
	}
	return desc, params, true
}

// Close ends the session and the server. It is safe to call more than
// once; calls after it fail (kind "unavailable").
func (m *MCPTools) Close() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.closed = true
	m.stopLocked()
	return nil
}

// CallTool calls the tool name with args (an object).
func (m *MCPTools) CallTool(ctx context.Context, c *Call, name string, args Value) (Value, error) {
	if m.tools[name] == nil {
		return Value{}, ErrUnknownTool
	}
	if c != nil && c.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, c.Timeout)
		defer cancel()
	}
	m.mu.Lock()
	s, err := m.connectLocked(ctx)
	m.mu.Unlock()
	if err != nil {
		return Value{}, m.ctxErr(ctx, name, err)
	}
	if args.k == KindUnit {
		args = emptyObject
	}
	params := &mcp.CallToolParams{Name: name, Arguments: json.RawMessage(AppendJSON(nil, args))}
	if key := c.IdempotencyKey(); key != "" {
		params.Meta = mcp.Meta{MCPIdempotencyKeyMeta: key}
	}
	res, err := s.CallTool(ctx, params)
	if err != nil {
		var werr *jsonrpc.Error
		if errors.As(err, &werr) && ctx.Err() == nil && !mcpLocalCode(werr.Code) {
			kind := "tool"
			switch werr.Code {
			case jsonrpc.CodeInvalidParams:
				kind = "bad_request"
			case jsonrpc.CodeMethodNotFound:
				kind = "unknown_tool"
			}
			return Value{}, &CallError{Kind: kind, Message: "tool " + name + ": " + werr.Message}
		}
		if ctx.Err() == nil {
			// The session is broken: the next attempt connects again.
			m.mu.Lock()
			if m.session == s {
				m.stopLocked()
			}
			m.mu.Unlock()
		}
		return Value{}, m.ctxErr(ctx, name, m.errorf("tool %s: %v", name, err))
	}
	if res.IsError {
		msg := contentText(res.Content)
		if msg == "" {
			msg = "failed"
		}
		return Value{}, &CallError{Kind: "tool", Message: "tool " + name + ": " + msg}
	}
	if res.StructuredContent != nil {
		data, err := json.Marshal(res.StructuredContent)
		if err == nil {
			var v Value
			if v, err = ParseJSON(data); err == nil {
				return v, nil
			}
		}
		return Value{}, &CallError{Kind: "bad_response", Message: "tool " + name + ": structured content: " + err.Error()}
	}
	return contentValue(res.Content), nil
}

// mcpLocalCode reports whether a JSON-RPC error code is one the SDK gives
// a failure of its own side (the connection closing, a request the
// transport could not deliver: an HTTP error) rather than the server's
// answer.
func mcpLocalCode(code int64) bool {
	switch code {
	case -32003, -32004, -32005: // client closing, server closing, rejected by transport
		return true
	}
	return false
}

// ctxErr is err, unless the call timed out or was cancelled.
func (m *MCPTools) ctxErr(ctx context.Context, name string, err error) error {
	switch ctx.Err() {
	case context.DeadlineExceeded:
		return &CallError{Kind: "timeout", Message: "tool " + name + " timed out"}
	case context.Canceled:
		return &CallError{Kind: "cancelled", Message: "tool " + name + " cancelled"}
	}
	return err
}

// contentText joins the text items of content, one a line.
func contentText(content []mcp.Content) string {
	var b strings.Builder
	for _, c := range content {
		if t, ok := c.(*mcp.TextContent); ok {
			if b.Len() > 0 {
				b.WriteByte('\n')
			}
			b.WriteString(t.Text)
		}
	}
	return truncate(strings.TrimSpace(b.String()), 300)
}

// contentValue is the value of a result's content: one item as itself,
// several as a list, none as unit.
func contentValue(content []mcp.Content) Value {
	switch len(content) {
	case 0:
		return Value{}
	case 1:
		return contentItem(content[0])
	}
	vs := make([]Value, len(content))
	for i, c := range content {
		vs[i] = contentItem(c)
	}
	return List(vs...)
}

// contentItem is one content item: a text as a string, anything else as
// an object with its type and fields (binary data in base64, as on the
// wire).
func contentItem(c mcp.Content) Value {
	b64 := func(d []byte) Value { return String(base64.StdEncoding.EncodeToString(d)) }
	switch c := c.(type) {
	case *mcp.TextContent:
		return String(c.Text)
	case *mcp.ImageContent:
		return Object(Field{"type", String("image")}, Field{"mimeType", String(c.MIMEType)}, Field{"data", b64(c.Data)})
	case *mcp.AudioContent:
		return Object(Field{"type", String("audio")}, Field{"mimeType", String(c.MIMEType)}, Field{"data", b64(c.Data)})
	case *mcp.ResourceLink:
		return Object(Field{"type", String("resource_link")}, Field{"uri", String(c.URI)}, Field{"name", String(c.Name)}, Field{"mimeType", String(c.MIMEType)})
	case *mcp.EmbeddedResource:
		fs := []Field{{"type", String("resource")}}
		if r := c.Resource; r != nil {
			fs = append(fs, Field{"uri", String(r.URI)}, Field{"mimeType", String(r.MIMEType)})
			if r.Blob != nil {
				fs = append(fs, Field{"blob", b64(r.Blob)})
			} else {
				fs = append(fs, Field{"text", String(r.Text)})
			}
		}
		return Object(fs...)
	}
	// A content type newer than this runtime: as the SDK writes it.
	data, err := json.Marshal(c)
	if err != nil {
		return Error("bad_response", "content: "+err.Error())
	}
	v, err := ParseJSON(data)
	if err != nil {
		return Error("bad_response", "content: "+err.Error())
	}
	return v
}

// tailWriter keeps the last mcpStderrTail bytes written to it.
type tailWriter struct {
	mu  sync.Mutex
	buf []byte
}

const mcpStderrTail = 4096

func (w *tailWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf = append(w.buf, p...)
	if len(w.buf) > mcpStderrTail {
		w.buf = append(w.buf[:0], w.buf[len(w.buf)-mcpStderrTail:]...)
	}
	return len(p), nil
}

func (w *tailWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return string(w.buf)
}

// closeTools closes the providers that hold something open (MCP servers).
func closeTools(ps []ToolProvider) {
	for _, p := range ps {
		if c, ok := p.(io.Closer); ok {
			c.Close()
		}
	}
}
