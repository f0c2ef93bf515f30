package runtime

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"
)

// ExecTools runs a command for every tool call (exec:CMD). The command
// line is run by /bin/sh -c, gets one JSON request on stdin,
//
//	{"tool": NAME, "args": {...}, "idempotency_key": KEY}
//
// (KEY: Call.IdempotencyKey, the same when a resumed run makes a call
// again that a killed run had in flight) and answers one JSON value on
// stdout (errors as {"$error": {...}}; the string "PENDING" suspends the
// run). A non-zero exit is a failed call of kind "tool" whose message
// ends with the last line of stderr; stdout that is not one JSON value is
// kind "bad_response"; the call's timeout kills the process (kind
// "timeout").
//
// On Unix the command runs in a process group of its own, which is
// killed whole when the command has exited (a background process it left
// holding its stdout does not hold up the call, which succeeds), when the
// call times out and when the run is cancelled; on Linux the shell also
// gets SIGKILL when the process that runs it dies.
type ExecTools struct {
	Command string
	Dir     string   // working directory ("": the current one)
	Env     []string // environment (nil: the process's)
}

// execDrainDelay bounds the wait for a tool's output pipes to close once
// its process group is killed (a process that left the group can still
// hold them).
const execDrainDelay = time.Second

// String returns the provider as --tools names it.
func (e *ExecTools) String() string { return "exec:" + e.Command }

// CallTool runs the command for one call.
func (e *ExecTools) CallTool(ctx context.Context, c *Call, name string, args Value) (Value, error) {
	if c != nil && c.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, c.Timeout)
		defer cancel()
	}
	req := AppendJSON(append(AppendJSON([]byte(`{"tool":`), String(name)), `,"args":`...), args)
	if key := c.IdempotencyKey(); key != "" {
		req = appendString(append(req, `,"idempotency_key":`...), key)
	}
	req = append(req, "}\n"...)
	stdout, stderr, err := runGroup(ctx, e, req)
	if ctx.Err() == context.DeadlineExceeded {
		return Value{}, &CallError{Kind: "timeout", Message: "tool " + name + " timed out"}
	}
	if ctx.Err() == context.Canceled {
		return Value{}, &CallError{Kind: "cancelled", Message: "tool " + name + " cancelled"}
	}
	if err != nil {
		msg := "tool " + name + ": " + err.Error()
		if line := lastLine(string(stderr)); line != "" {
			msg += ": " + line
		}
		return Value{}, &CallError{Kind: "tool", Message: msg}
	}
	v, perr := ParseJSONExt(stdout)
	if perr != nil {
		return Value{}, &CallError{Kind: "bad_response", Message: "tool " + name + " did not answer one JSON value: " + perr.Error()}
	}
	if v.k == KindError {
		return Value{}, &CallError{Kind: v.s, Message: v.h.msg}
	}
	return v, nil
}

// runGroup runs the command with req on stdin and returns what it wrote.
// The error is the command's exit (or start) failure; output still
// arriving from processes it left behind is not waited for beyond
// execDrainDelay once the command's process group has been killed.
func runGroup(ctx context.Context, e *ExecTools, req []byte) (stdout, stderr []byte, err error) {
	cmd := exec.CommandContext(ctx, "/bin/sh", "-c", e.Command)
	cmd.Dir = e.Dir
	cmd.Env = e.Env
	killGroup(cmd)
	// A request too big for the pipe, written to a process that left a
	// child holding stdin without reading it, must not hold up Wait.
	cmd.WaitDelay = execDrainDelay
	cmd.Stdin = bytes.NewReader(req)
	// Pipes of our own rather than exec's copying goroutines: Wait then
	// returns when the shell exits, whoever else holds the pipes.
	outR, outW, err := os.Pipe()
	if err != nil {
		return nil, nil, err
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		outR.Close()
		outW.Close()
		return nil, nil, err
	}
	cmd.Stdout, cmd.Stderr = outW, errW
	var outBuf, errBuf bytes.Buffer
	done := make(chan struct{}, 2)
	drain := func(buf *bytes.Buffer, r *os.File) {
		buf.ReadFrom(r)
		done <- struct{}{}
	}
	err = cmd.Start()
	outW.Close()
	errW.Close()
	if err != nil {
		outR.Close()
		errR.Close()
		return nil, nil, err
	}
	go drain(&outBuf, outR)
	go drain(&errBuf, errR)
	err = cmd.Wait()
	if errors.Is(err, exec.ErrWaitDelay) && cmd.ProcessState != nil && cmd.ProcessState.Success() {
		err = nil // it answered and exited 0
	}
	// The tool has answered (or failed): what it left running in its
	// group goes with it.
	endGroup(cmd)
	timer := time.NewTimer(execDrainDelay)
	for n := 0; n < 2; n++ {
		select {
		case <-done:
		case <-timer.C:
			// A process outside the group holds a pipe: stop reading.
			outR.Close()
			errR.Close()
			<-done
		}
	}
	timer.Stop()
	outR.Close()
	errR.Close()
	return outBuf.Bytes(), errBuf.Bytes(), err
}

func lastLine(s string) string {
	s = strings.TrimRight(s, "\r\n\t ")
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		s = s[i+1:]
	}
	return truncate(strings.TrimSpace(s), 300)
}

// ParseTools returns the tool provider of a flag value:
//
//	mock:FILE                  a mock tools file (parsed now, once)
//	exec:CMD                   a command run for every call (ExecTools)
//	mcp:COMMAND ARGS…          an MCP server run as a child process, over
//	                           its standard input and output (MCPTools)
//	mcp+http://HOST:PORT/PATH  an MCP server over streamable HTTP (and
//	                           mcp+https://…)
//
// An MCP server is started (or reached) and its tools listed now, within
// ctx; the provider is an io.Closer that ends it.
func ParseTools(spec string) (ToolProvider, error) {
	return ParseToolsContext(context.Background(), spec)
}

// ParseToolsContext is ParseTools within ctx.
func ParseToolsContext(ctx context.Context, spec string) (ToolProvider, error) {
	if err := CheckTools(spec); err != nil {
		return nil, err
	}
	kind, arg, _ := strings.Cut(spec, ":")
	switch kind {
	case "mock":
		m, err := LoadMockTools(arg)
		if err != nil {
			return nil, err
		}
		m.name = spec
		return m, nil
	case "exec":
		return &ExecTools{Command: arg}, nil
	}
	return ConnectMCP(ctx, spec)
}

// CheckTools checks a flag value as ParseTools would, without starting
// anything: a mock file is parsed, an MCP spec only checked.
func CheckTools(spec string) error {
	kind, arg, ok := strings.Cut(spec, ":")
	if !ok || arg == "" {
		return errors.New("tools: expected mock:FILE, exec:CMD, mcp:COMMAND or mcp+http://HOST:PORT/PATH, got " + strconv.Quote(spec))
	}
	switch kind {
	case "mock":
		_, err := LoadMockTools(arg)
		return err
	case "exec":
		return nil
	case "mcp", "mcp+http", "mcp+https":
		_, err := newMCPTools(spec)
		return err
	}
	return errors.New("tools: unknown kind " + strconv.Quote(kind) + " (mock, exec, mcp, mcp+http or mcp+https)")
}

// toolProviderNames names the providers of ps, for the message of a tool
// none of them has: what --tools gave, or the Go type.
func toolProviderNames(ps []ToolProvider) string {
	if len(ps) == 0 {
		return "no tool providers (genesisc run --tools)"
	}
	names := make([]string, len(ps))
	for i, p := range ps {
		if s, ok := p.(fmt.Stringer); ok && s.String() != "" {
			names[i] = s.String()
		} else {
			names[i] = fmt.Sprintf("%T", p)
		}
	}
	return "asked: " + strings.Join(names, ", ")
}
