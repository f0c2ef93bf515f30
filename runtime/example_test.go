package runtime_test

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/genesis-toolchain/genesis/examples/goapp/refund"
	"github.com/genesis-toolchain/genesis/runtime"
)

// An app runs a generated package (here examples/goapp/refund, built by
// `genesisc build --target go --package refund -o examples/goapp/refund
// examples/refund.json`) on a Host. The host holds what every run
// shares: the model provider (a scripted mock here; runtime.NewOpenAI
// or any LLMProvider in production), Go functions as tools, budgets and
// limits. Each run gets its own RunOptions and returns a Result.
func ExampleHost() {
	llm, err := runtime.ParseMockLLM([]byte(`{"broke it": "no", "__default__": "yes"}`))
	if err != nil {
		panic(err)
	}
	h := runtime.NewHost(runtime.Config{LLM: llm})

	// A Go function serves the program's tool calls of that name; the
	// key in the call's context is the effect's idempotency key.
	h.RegisterTool("issue_refund", func(ctx context.Context, args runtime.Value) (runtime.Value, error) {
		return runtime.Object(runtime.Field{Key: "refunded", Value: runtime.Bool(true)}), nil
	})
	h.RegisterTool("send_rejection", func(ctx context.Context, args runtime.Value) (runtime.Value, error) {
		return runtime.String("rejection sent"), nil
	})

	for _, request := range []string{"I bought it yesterday", "I broke it"} {
		res := refund.Run(h, runtime.RunOptions{
			Input: runtime.Object(runtime.Field{Key: "user_input", Value: runtime.String(request)}),
			RunID: "example", // fixed so that the output is the same every time
		})
		fmt.Println(res.Status, strings.Join(res.Steps, " "), res.Output)
	}
	// Output:
	// success analyze guardrail process_refund {"refunded":true}
	// success analyze guardrail reject rejection sent
}

// RunOptions bound one run: here a budget of one LLM call, which the
// refund program's single call fits, and a trace written as JSON Lines.
func ExampleRunOptions() {
	llm, _ := runtime.ParseMockLLM([]byte(`{"__default__": "no"}`))
	h := runtime.NewHost(runtime.Config{LLM: llm})
	h.RegisterTool("send_rejection", func(ctx context.Context, args runtime.Value) (runtime.Value, error) {
		return runtime.String("sent"), nil
	})
	var trace strings.Builder
	res := refund.Run(h, runtime.RunOptions{
		Input:  runtime.Object(runtime.Field{Key: "user_input", Value: runtime.String("refund please")}),
		Budget: runtime.Budget{Steps: 10},
		Trace:  &trace,
		RunID:  "example",
	})
	fmt.Println(res.Status, res.Usage.Tokens() > 0, strings.Count(trace.String(), "\n") > 0)
	// Output:
	// success true true
}

// A Result is also what `genesisc run --result` writes: its JSON is the
// documented shape (docs/runtime.md), and ParseResult reads it back. A
// reply the program does not allow fails the run with an error kind.
func ExampleResult() {
	llm, _ := runtime.ParseMockLLM([]byte(`{"__default__": "maybe"}`))
	h := runtime.NewHost(runtime.Config{LLM: llm})
	res := refund.Run(h, runtime.RunOptions{RunID: "example"})
	os.Stdout.Write(append(res.AppendJSON(nil), '\n'))
	back, err := runtime.ParseResult(res.AppendJSON(nil))
	fmt.Println(err == nil && back.Status == res.Status, res.Error.Kind)
	// Output:
	// {"status":"failed","steps":["analyze"],"output":"maybe","outputs":{"analyze":"maybe"},"events":[],"exports":{},"error":{"kind":"allowed_outputs","message":"output \"maybe\" is not one of the allowed outputs [\"yes\", \"no\"]","step":"analyze @ refund.json:4:5 # 1"},"usage":{"prompt_tokens":19,"completion_tokens":2,"total_tokens":21,"cost":0}}
	// true allowed_outputs
}
