package runtime

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// The test binary doubles as the subprocess tool of exec:CMD when
// GENESIS_RUNTIME_TEST_TOOL is set: it reads one request and answers by
// tool name.
func TestMain(m *testing.M) {
	if os.Getenv("GENESIS_RUNTIME_TEST_TOOL") == "1" {
		os.Exit(toolMain())
	}
	if os.Getenv("GENESIS_RUNTIME_TEST_MCP") == "1" {
		os.Exit(mcpServerMain())
	}
	os.Exit(m.Run())
}

func toolMain() int {
	line, _ := bufio.NewReader(os.Stdin).ReadBytes('\n')
	req, err := ParseJSON(line)
	if err != nil {
		fmt.Fprintln(os.Stderr, "bad request:", err)
		return 2
	}
	args := ObjGet(req, String("args"))
	switch ObjGet(req, String("tool")).Str() {
	case "echo": // the whole request back
		os.Stdout.Write(AppendJSON(nil, req))
	case "add":
		fmt.Println(ObjGet(args, String("a")).Num() + ObjGet(args, String("b")).Num())
	case "fail":
		fmt.Fprintln(os.Stderr, "warming up")
		fmt.Fprintln(os.Stderr, "card declined")
		return 3
	case "garbage":
		fmt.Println("this is not JSON")
	case "error":
		fmt.Println(`{"$error": {"kind": "rejected", "message": "over the limit"}}`)
	case "pending":
		fmt.Println(`"PENDING"`)
	case "slow":
		time.Sleep(10 * time.Second)
	default:
		fmt.Fprintln(os.Stderr, "unknown tool")
		return 1
	}
	return 0
}

func execTools(t *testing.T) ToolProvider {
	t.Setenv("GENESIS_RUNTIME_TEST_TOOL", "1")
	p, err := ParseTools("exec:" + strconv.Quote(os.Args[0]))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestExecTools(t *testing.T) {
	h := NewHost(Config{Tools: []ToolProvider{execTools(t)}})
	args := Object(Field{"a", Int(2)}, Field{"b", Number(0.5)})
	res := h.Execute(RunOptions{RunID: "run-1", ProgramHash: "p"}, func(r *Run) Value {
		return List(
			r.Tool(siteA.At(1), String("echo"), args),
			r.Tool(siteA.At(2), String("add"), args),
			r.Tool(siteA.At(3), String("error"), args),
			r.Tool(siteA.At(4), String("pending"), args),
		)
	})
	key := IdempotencyKey("run-1", "p", "a @ t.json:1:1 # 1", 1)
	want := `[{"tool":"echo","args":{"a":2,"b":0.5},"idempotency_key":"` + key + `"},2.5,{"$error":{"kind":"rejected","message":"over the limit"}},"PENDING"]`
	if got := res.Output.String(); got != want {
		t.Errorf("replies %s\nwant %s", got, want)
	}
}

func TestExecToolFailures(t *testing.T) {
	h := NewHost(Config{Tools: []ToolProvider{execTools(t)}})
	res := h.Execute(RunOptions{}, func(r *Run) Value {
		return List(
			r.Tool(siteA.At(1), String("fail"), ObjNew()),
			r.Tool(siteA.At(2), String("garbage"), ObjNew()),
			r.ToolWith(siteA.At(3), String("slow"), ObjNew(), Object(Field{"timeout", Number(0.2)})),
		)
	})
	fail, garbage, slow := res.Output.Index(0), res.Output.Index(1), res.Output.Index(2)
	if fail.ErrKind() != "tool" || !strings.Contains(fail.ErrMessage(), "exit status 3") || !strings.HasSuffix(fail.ErrMessage(), "card declined") {
		t.Errorf("non-zero exit: %v, want kind tool naming the status and the last stderr line", fail)
	}
	if garbage.ErrKind() != "bad_response" {
		t.Errorf("garbage on stdout: %v", garbage)
	}
	if slow.ErrKind() != "timeout" {
		t.Errorf("slow tool: %v", slow)
	}
	for _, bad := range []string{"exec:", "ftp:x", "mock:/nonexistent"} {
		if _, err := ParseTools(bad); err == nil {
			t.Errorf("ParseTools(%q) succeeded", bad)
		}
	}
}

func TestGoTools(t *testing.T) {
	var calls atomic.Int32
	h := newHost(t, "", `{"mocked": "from the mock", "shadowed": "mock"}`, Config{})
	h.RegisterTool("shadowed", func(ctx context.Context, args Value) (Value, error) { return String("go"), nil })
	h.RegisterTool("count", func(ctx context.Context, args Value) (Value, error) {
		n := calls.Add(1)
		if n < 3 {
			return Value{}, &CallError{Kind: "unavailable", Message: "try again"}
		}
		return Int(int64(n)), nil
	})
	h.RegisterTool("plain", func(ctx context.Context, args Value) (Value, error) { return Value{}, fmt.Errorf("plain error") })
	res := h.Execute(RunOptions{}, func(r *Run) Value {
		return List(
			r.Tool(siteA.At(1), String("mocked"), ObjNew()),
			r.Tool(siteA.At(2), String("shadowed"), ObjNew()),
			r.ToolWith(siteA.At(3), String("count"), ObjNew(), Object(Field{"retries", Int(5)})),
			r.Tool(siteA.At(4), String("plain"), ObjNew()),
		)
	})
	want := `["from the mock","go",3,{"$error":{"kind":"tool","message":"plain error"}}]`
	if got := res.Output.String(); got != want {
		t.Errorf("replies %s\nwant %s", got, want)
	}
}
