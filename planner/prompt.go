package planner

import (
	"fmt"
	"strings"
)

// systemPrompt teaches the model nano-vm as this compiler reads it
// (docs/nanovm.md): the step types, the control flow, references and
// conditions — and, explicitly, the mistakes the lints catch, so that a
// first answer avoids them rather than a retry fixing them.
const systemPrompt = `You write nano-vm programs: JSON documents that an agent runtime executes as a state machine of steps.

A program is {"name": string, "description": string, "steps": [step, ...]} with optional budgets "max_steps", "max_tokens" (integers).
Every step has a unique "id" and a "type":
- "llm": "prompt" (required), optional "system", "allowed_outputs" (the only replies accepted, e.g. ["yes", "no"]).
- "tool": "tool" (the tool's name, required) and "args" (an object of argument values).
- "condition": "condition" (an expression) and "then" and/or "otherwise" (step ids to run).
- "parallel": "parallel_steps", a list of llm or tool steps run at once; its output is an object keyed by sub-step id.
Any step may have "output_key" (also store its output under that name), "on_error" ("fail", "skip" or "retry" with "max_retries" attempts in all), "is_terminal": true (the run ends with success after the step) and "next_step" (a step id to go to next).

Control flow: steps run in array order. A condition runs its then or otherwise step; that step, a branch target, ENDS THE RUN after it runs unless it has "next_step". After the last step of the array the run ends. Every step must be reachable from the first one.

References: in prompts, system messages and the string values of args, $name is replaced by the run's input field name, or by the output of the step whose id or output_key is name; $step.field reads a field of a step's object output. An args value that is exactly "$name" passes the value itself, typed. Only reference names that exist: input fields, step ids, output_keys.

Conditions: $ref == 'text', !=, <, <=, >, >= with numbers, x in y (substring, list element or object key), x not in y, "and", "or", "not" at the start, True, False, None. Write a reference WITHOUT quotes: $decision == 'yes', 'urgent' in $category. A quoted '$decision' is the literal text "$decision", so '<value>' in '$x' is always false. In a condition, read a step's output through its output_key ($decision), not through its id. There is no arithmetic and no function call.

Read an output only where the step that sets it has already run: not in an earlier step, not in the other branch of a condition, not in a sibling sub-step. Compare an llm step's output with exactly one of its allowed_outputs (same case).

Example, for "refund the order when the request is valid" with the tools issue_refund and send_rejection and the input field request:
{"name": "refund", "steps": [
  {"id": "classify", "type": "llm", "prompt": "Is this refund request valid? Answer yes or no.\nRequest: $request", "output_key": "decision", "allowed_outputs": ["yes", "no"]},
  {"id": "route", "type": "condition", "condition": "$decision == 'yes'", "then": "refund", "otherwise": "reject"},
  {"id": "refund", "type": "tool", "tool": "issue_refund", "args": {"request": "$request"}},
  {"id": "reject", "type": "tool", "tool": "send_rejection", "args": {"request": "$request", "reason": "the request is not valid"}}]}

Answer with the JSON document of the program only: no prose, no Markdown fence.`

// instructionPrompt is the first request's prompt: the intent, the tools
// the program may call and the run's input fields.
func instructionPrompt(intent string, opts *Options) string {
	var b strings.Builder
	b.WriteString("Write a nano-vm program for this intent:\n\n")
	b.WriteString(strings.TrimSpace(intent))
	b.WriteString("\n\n")
	if opts.Tools != nil {
		if len(opts.Tools) == 0 {
			b.WriteString("The program may call no tools: use no tool steps.\n")
		} else {
			fmt.Fprintf(&b, "The program may call only these tools: %s.\n", strings.Join(opts.Tools, ", "))
		}
	}
	if opts.Context != nil {
		if len(opts.Context) == 0 {
			b.WriteString("The run has no input fields.\n")
		} else {
			fmt.Fprintf(&b, "The run's input fields are: %s (read them as $name).\n", strings.Join(opts.Context, ", "))
		}
	}
	return b.String()
}

// maxQuoted is the most of a previous answer a retry quotes back: a
// runaway answer is cut, and the diagnostics say what is wrong with it.
const maxQuoted = 64 << 10

// retryPrompt is the prompt of the attempt after prev: the first
// request's, the answer prev gave and what the compiler said of it.
func retryPrompt(first string, prev *Attempt, rendered string) string {
	var b strings.Builder
	b.WriteString(first)
	answer := prev.Program
	if len(answer) > maxQuoted {
		answer = answer[:maxQuoted] + "\n… (cut)"
	}
	if prev.Errors > 0 {
		fmt.Fprintf(&b, "\nYour previous answer (attempt %d) does not compile:\n\n%s\n\nThe compiler reported:\n\n%s\n", prev.N, answer, rendered)
		b.WriteString("Fix every error and answer with the whole corrected program.\n")
	} else {
		fmt.Fprintf(&b, "\nYour previous answer (attempt %d) compiles, with warnings:\n\n%s\n\nThe compiler reported:\n\n%s\n", prev.N, answer, rendered)
		b.WriteString("Each warning is a mistake: the program would not do what the intent asks. Fix them and answer with the whole corrected program.\n")
	}
	return b.String()
}

// schemaInstruction is appended to the prompt for a provider that takes
// no structured output (StructuredOutput): the schema in words.
func schemaInstruction() string {
	return "\nThe answer must be a JSON document matching this JSON schema:\n" + string(schemaJSON)
}
