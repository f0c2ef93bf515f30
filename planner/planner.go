// Package planner turns an intent into a nano-vm program with a model,
// and checks the model's answer with the compiler (docs/planner.md).
//
// nano-vm's own Planner makes one model call and validates the answer
// against its schema. This one asks for the program with the program's
// JSON schema as structured output, compiles the answer with the real
// compiler (every check genesisc build makes, then its own lints: the
// tools the program may call, the names its references read), and while
// the compiler reports errors or warnings feeds the rendered diagnostics
// back to the model and asks again, up to Options.Retries more times. It
// returns a program only if it compiles.
//
//	res, err := planner.Plan(ctx, "refund valid orders", planner.Options{LLM: llm, Retries: 3})
package planner

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/genesis-toolchain/genesis/compiler"
	"github.com/genesis-toolchain/genesis/diag"
	"github.com/genesis-toolchain/genesis/frontend/nanovm"
	"github.com/genesis-toolchain/genesis/frontend/plan"
	"github.com/genesis-toolchain/genesis/runtime"
)

// DefaultRetries is how many times the planner asks again after the
// first answer when Options leaves it to the command line's default
// (genesisc plan --retries): four model calls at most.
const DefaultRetries = 3

// MaxRetries bounds Options.Retries: each retry is a model call, paid
// for, and an answer that 20 rounds of diagnostics did not fix will not
// be fixed by more.
const MaxRetries = 20

// MaxAnswer bounds the answers the planner compiles, in bytes: a
// nano-vm program a model writes is a few KiB, and the compiler may use
// a few hundred bytes of memory per byte of program (docs/nanovm.md,
// Limits), so a runaway reply is reported (PL04) rather than compiled.
const MaxAnswer = 1 << 20

// Options configure Plan.
type Options struct {
	// LLM is the provider asked (runtime.ParseLLMWith: mock:FILE or
	// openai:URL). Required.
	LLM runtime.LLMProvider
	// Model is the model of the requests; "" leaves it to the provider
	// (its --model, GENESIS_LLM_MODEL or the models file's default).
	Model string
	// Tools, when not nil, are the only tools the program may call
	// (--tools-list); a call to another is an error fed back. Empty:
	// the program may call no tool.
	Tools []string
	// Context, when not nil, are the run's input fields: a $reference
	// to a name that is neither one of them nor a step or output_key is
	// a warning fed back. Nil: the input is not known, and only names a
	// few edits from a step or output_key are reported.
	Context []string
	// Retries is how many times the planner asks again after the first
	// answer (0: one attempt); at most MaxRetries.
	Retries int
	// File is the name the diagnostics give the program (default
	// "plan.json"); it must end in .json, which selects the nano-vm
	// frontend.
	File string
	// OnAttempt, when set, is called after each attempt is compiled.
	OnAttempt func(Attempt)
}

// Attempt is one model call and what the compiler said of its answer.
type Attempt struct {
	N int // 1 for the first attempt
	// Program is the answer as compiled: the JSON document indented,
	// or the reply's text when it is no JSON.
	Program string
	// Diags are the compiler's and the lints' diagnostics, sorted.
	Diags    diag.List
	Errors   int
	Warnings int
	// Retry says whether the diagnostics call for another attempt:
	// errors, or warnings other than N013 (which says how nano-vm's own
	// runtime would differ, not what is wrong with the program).
	Retry bool
	Usage runtime.Usage
}

// Compiled reports whether the attempt's program compiles.
func (a *Attempt) Compiled() bool { return a.Errors == 0 }

// Render renders the attempt's diagnostics with the program's lines.
func (a *Attempt) Render(file string) string {
	return a.Diags.Render(diag.Sources{file: []byte(a.Program)})
}

// Result is what Plan produced.
type Result struct {
	// Program is the program to write: the last answer that compiled,
	// followed by a newline; nil when no answer compiled.
	Program []byte
	// Chosen is the attempt Program comes from (an index into
	// Attempts), -1 when none compiled.
	Chosen   int
	Attempts []Attempt
	Usage    runtime.Usage // of every attempt
}

// Best returns the attempt whose program Result holds, or nil.
func (r *Result) Best() *Attempt {
	if r.Chosen < 0 {
		return nil
	}
	return &r.Attempts[r.Chosen]
}

// Plan asks opts.LLM for a nano-vm program that does what intent says,
// and checks each answer with the compiler: an answer with errors, or
// with warnings worth fixing, is sent back with its rendered
// diagnostics, up to opts.Retries times. It returns the result when the
// attempts are done: Result.Program is nil when no answer compiled. The
// error is a failed model call (a *runtime.CallError: the provider's own
// retries of transient failures are spent) or bad options; the result
// then holds the attempts made before it.
func Plan(ctx context.Context, intent string, opts Options) (*Result, error) {
	res := &Result{Chosen: -1}
	if opts.LLM == nil {
		return res, errors.New("no LLM provider")
	}
	if strings.TrimSpace(intent) == "" {
		return res, errors.New("the intent is empty: say what the program should do")
	}
	if opts.Retries < 0 || opts.Retries > MaxRetries {
		return res, fmt.Errorf("retries must be between 0 and %d, not %d", MaxRetries, opts.Retries)
	}
	if opts.File == "" {
		opts.File = "plan.json"
	}
	if !strings.EqualFold(filepath.Ext(opts.File), ".json") {
		return res, fmt.Errorf("the program's file %q must end in .json", opts.File)
	}
	structured := false
	if so, ok := opts.LLM.(runtime.StructuredOutput); ok && so.StructuredOutput() {
		structured = true
	}
	first := instructionPrompt(intent, &opts)
	prompt := first
	for n := 1; n <= opts.Retries+1; n++ {
		req := &runtime.LLMRequest{
			System: systemPrompt,
			Prompt: prompt,
			Model:  opts.Model,
			// output_schema without schema: the OpenAI provider sends it
			// as response_format json_schema, not strict (strict mode
			// wants every property required and no open objects, and
			// args is one); nothing coerces the reply here.
			Options: runtime.Object(runtime.Field{Key: "output_schema", Value: Schema()}),
		}
		if !structured {
			req.Prompt += schemaInstruction()
		}
		resp, err := opts.LLM.Complete(ctx, &runtime.Call{Step: "plan", Attempt: n}, req)
		res.Usage.PromptTokens += resp.Usage.PromptTokens
		res.Usage.CompletionTokens += resp.Usage.CompletionTokens
		res.Usage.Cost += resp.Usage.Cost
		if err != nil {
			return res, fmt.Errorf("attempt %d: the model call failed: %w", n, err)
		}
		a := check(opts.File, answerText(resp.Value), &opts)
		a.N, a.Usage = n, resp.Usage
		res.Attempts = append(res.Attempts, a)
		if a.Compiled() {
			res.Chosen = len(res.Attempts) - 1
			res.Program = []byte(a.Program + "\n")
		}
		if opts.OnAttempt != nil {
			opts.OnAttempt(a)
		}
		if !a.Retry {
			break
		}
		prompt = retryPrompt(first, &a, a.Render(opts.File))
	}
	return res, nil
}

// check compiles an answer as the program file and runs the planner's
// lints.
func check(file, text string, opts *Options) Attempt {
	a := Attempt{Program: text}
	src := []byte(text)
	var diags diag.List
	switch {
	case len(src) > MaxAnswer:
		diags.Errorf(diag.Pos{File: file, Line: 1, Col: 1}, CodeTooLarge,
			"the answer is %d bytes, more than the %d a program may have here: a nano-vm program is a few steps, not a document", len(src), MaxAnswer)
	case plan.HasPlanKeys(src):
		diags.Errorf(diag.Pos{File: file, Line: 1, Col: 1}, CodeNotProgram,
			"the answer is an execution plan (it has \"groups\"), not a nano-vm program: a program is an object with a \"steps\" array")
	default:
		_, diags = compiler.Build([]compiler.Source{{Name: file, Data: src}}, compiler.Options{})
		diags = append(diags, lint(file, src, opts)...)
	}
	diags.Sort()
	a.Diags = diags
	for _, d := range diags {
		switch d.Severity {
		case diag.Error:
			a.Errors++
			a.Retry = true
		case diag.Warning:
			a.Warnings++
			if d.Code != nanovm.CodeUpstream {
				a.Retry = true
			}
		}
	}
	return a
}

// answerText is the program text of a reply: a string as the model
// wrote it, less a Markdown fence or prose around the JSON object, or a
// structured value (a mock file's) encoded; valid JSON is indented, so
// that diagnostics point at lines of their own.
func answerText(v runtime.Value) string {
	var text string
	if s, ok := v.AsString(); ok {
		text = extractJSON(s)
	} else {
		text = string(runtime.AppendJSON(nil, v))
	}
	if json.Valid([]byte(text)) {
		var b bytes.Buffer
		if json.Indent(&b, []byte(text), "", "  ") == nil {
			return b.String()
		}
	}
	return text
}

// extractJSON finds the JSON object in a reply: the reply itself, the
// inside of its first Markdown code fence, or its span from the first
// '{' to the last '}' — as nano-vm's Planner reads replies. A reply with
// none is returned trimmed, for the compiler to report.
func extractJSON(s string) string {
	t := strings.TrimSpace(s)
	if strings.HasPrefix(t, "{") && json.Valid([]byte(t)) {
		return t
	}
	if i := strings.Index(t, "```"); i >= 0 {
		body := t[i+3:]
		if nl := strings.IndexByte(body, '\n'); nl >= 0 && !strings.Contains(body[:nl], "{") {
			body = body[nl+1:] // the fence's language tag
		}
		if j := strings.Index(body, "```"); j >= 0 {
			body = body[:j]
		}
		if b := strings.TrimSpace(body); json.Valid([]byte(b)) {
			return b
		}
	}
	if i, j := strings.IndexByte(t, '{'), strings.LastIndexByte(t, '}'); i >= 0 && j > i && json.Valid([]byte(t[i:j+1])) {
		return t[i : j+1]
	}
	return t
}
