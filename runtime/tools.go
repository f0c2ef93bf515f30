package runtime

import (
	"bytes"
	"context"
	"errors"
	"os/exec"
	"strconv"
	"strings"
	"time"
)

// ExecTools runs a command for every tool call (exec:CMD). The command
// line is run by /bin/sh -c, gets one JSON request on stdin,
//
//	{"tool": NAME, "args": {...}}
//
// and answers one JSON value on stdout (errors as {"$error": {...}}; the
// string "PENDING" suspends the run). A non-zero exit is a failed call of
// kind "tool" whose message ends with the last line of stderr; stdout that
// is not one JSON value is kind "bad_response"; the call's timeout kills
// the process (kind "timeout").
type ExecTools struct {
	Command string
	Dir     string   // working directory ("": the current one)
	Env     []string // environment (nil: the process's)
}

// CallTool runs the command for one call.
func (e *ExecTools) CallTool(ctx context.Context, c *Call, name string, args Value) (Value, error) {
	if c != nil && c.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, c.Timeout)
		defer cancel()
	}
	cmd := exec.CommandContext(ctx, "/bin/sh", "-c", e.Command)
	cmd.Dir = e.Dir
	cmd.Env = e.Env
	cmd.WaitDelay = time.Second
	killGroup(cmd)
	req := AppendJSON(append(AppendJSON([]byte(`{"tool":`), String(name)), `,"args":`...), args)
	req = append(req, "}\n"...)
	cmd.Stdin = bytes.NewReader(req)
	var stdout, stderr bytes.Buffer
	cmd.Stdout = &stdout
	cmd.Stderr = &stderr
	err := cmd.Run()
	if ctx.Err() == context.DeadlineExceeded {
		return Value{}, &CallError{Kind: "timeout", Message: "tool " + name + " timed out"}
	}
	if ctx.Err() == context.Canceled {
		return Value{}, &CallError{Kind: "cancelled", Message: "tool " + name + " cancelled"}
	}
	if err != nil {
		msg := "tool " + name + ": " + err.Error()
		if line := lastLine(stderr.String()); line != "" {
			msg += ": " + line
		}
		return Value{}, &CallError{Kind: "tool", Message: msg}
	}
	v, perr := ParseJSONExt(stdout.Bytes())
	if perr != nil {
		return Value{}, &CallError{Kind: "bad_response", Message: "tool " + name + " did not answer one JSON value: " + perr.Error()}
	}
	if v.k == KindError {
		return Value{}, &CallError{Kind: v.s, Message: v.h.msg}
	}
	return v, nil
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
//	mock:FILE   a mock tools file (parsed now, once)
//	exec:CMD    a command run for every call (ExecTools)
func ParseTools(spec string) (ToolProvider, error) {
	kind, arg, ok := strings.Cut(spec, ":")
	if !ok || arg == "" {
		return nil, errors.New("tools: expected mock:FILE or exec:CMD, got " + strconv.Quote(spec))
	}
	switch kind {
	case "mock":
		return LoadMockTools(arg)
	case "exec":
		return &ExecTools{Command: arg}, nil
	}
	return nil, errors.New("tools: unknown kind " + strconv.Quote(kind) + " (mock or exec)")
}
