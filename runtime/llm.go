package runtime

import "strings"

// LLM is the effect llm: a completion of prompt with options (model,
// system, schema, output_schema (coerce.go), temperature, max_tokens, usage, retries, timeout,
// retry_on). It returns the completion (a string; with a schema, the
// parsed and validated JSON value), or an error value. With "usage": true
// the reply is {"text": completion, "usage": {"prompt_tokens",
// "completion_tokens", "total_tokens"}}.
func (r *Run) LLM(st Step, prompt, options Value) Value {
	return r.llm(st, "llm", prompt, options, false)
}

// Judge is the effect judge: a boolean judgement of question by a model;
// a bool, or an error value (kind "judge" when the reply is neither true
// nor false).
func (r *Run) Judge(st Step, question, options Value) Value {
	return r.llm(st, "judge", question, options, true)
}

func (r *Run) llm(st Step, kind string, prompt, options Value, judge bool) Value {
	e := r.effect(st, kind, func() Value { return Object(Field{"prompt", prompt}, Field{"options", options}) })
	req, outSchema := r.llmRequest(prompt, options, judge)
	if e.rec != nil {
		r.observeLLM(e.id, req)
		u := e.rec.usage
		if r.tracing {
			r.traceLLM(req)
		}
		return e.complete(e.rec.reply, &u, e.rec.attempts)
	}
	pol := r.policy(options)
	if !judge {
		r.offerTools(st, e.id, req, options, pol)
	}
	reply, usage, attempts := r.callLLM(e.id, req, pol)
	var coercedFrom Value
	if options.k == KindObject && options.u > 0 {
		reply, coercedFrom = llmReply(reply, usage, options, outSchema)
	}
	if r.tracing {
		r.traceLLM(req)
	}
	e.record(reply, &usage, attempts)
	if coercedFrom.k != KindUnit {
		r.Advisory(st, "coerced", Object(Field{"from", coercedFrom}, Field{"to", reply}))
	}
	return reply
}

// llmRequest returns the provider's request for a completion of prompt
// with options (the run's one LLMRequest, reused), and the options'
// output_schema (unit when none). A provider without structured output
// gets the output schema as an instruction appended to the prompt.
func (r *Run) llmRequest(prompt, options Value, judge bool) (*LLMRequest, Value) {
	req := &r.llmReq
	*req = LLMRequest{Prompt: prompt.String(), Judge: judge, Options: options}
	var outSchema Value
	if options.k == KindObject && options.u > 0 {
		req.System = ObjGet(options, String("system")).Str()
		req.Model = ObjGet(options, String("model")).Str()
		req.Schema = ObjGet(options, String("schema"))
		if o := ObjGet(options, String("output_schema")); o.k == KindObject && !judge {
			outSchema = o
			if so, ok := r.h.cfg.LLM.(StructuredOutput); !ok || !so.StructuredOutput() {
				req.Prompt += schemaInstruction(o)
			}
		}
	}
	return req, outSchema
}

// observeLLM shows a provider that watches replays (the mock's
// $sequence) the call of step id that the journal served.
func (r *Run) observeLLM(id string, req *LLMRequest) {
	if o, ok := r.h.cfg.LLM.(replayObserver); ok {
		r.call = Call{Step: id, Attempt: 1, run: r}
		o.observeLLM(&r.call, req)
	}
}

// callLLM asks the LLM provider, with the retries pol allows: the reply
// (an error value after the last failure), the usage of every attempt,
// and the attempts made.
func (r *Run) callLLM(id string, req *LLMRequest, pol RetryPolicy) (Value, Usage, int) {
	var total Usage
	p := r.h.cfg.LLM
	if p == nil {
		return Error("config", noLLMMessage), total, 0
	}
	reply, attempts := r.retry(id, &pol, func() (Value, *CallError) {
		resp, err := p.Complete(r.ctx, &r.call, req)
		total.add(resp.Usage)
		if err != nil {
			return Value{}, asCallError(err, "unavailable")
		}
		v := finishLLM(resp.Value, req)
		if v.k == KindError {
			return Value{}, &CallError{Kind: v.s, Message: v.h.msg}
		}
		return v, nil
	})
	return reply, total, attempts
}

// llmReply shapes a completion as options (not empty) ask: coerced to
// the output schema (coercedFrom is the completion when that changed
// it), and with its usage ("usage": true).
func llmReply(reply Value, usage Usage, options, outSchema Value) (shaped, coercedFrom Value) {
	if outSchema.k == KindObject && reply.k != KindError {
		raw := reply
		c, msg := coerceOutput(reply, outSchema)
		if msg != "" {
			reply = Error("schema", "the reply cannot be coerced to the output schema: "+msg)
		} else {
			if !ValueEq(c, raw) && !(raw.k == KindString && ValueEq(c, String(strings.TrimSpace(raw.s)))) {
				coercedFrom = raw
			}
			reply = c
		}
	}
	if reply.k != KindError && options.k == KindObject && ObjGet(options, String("usage")).Truthy() {
		reply = Object(Field{"text", reply}, Field{"usage", Object(
			Field{"prompt_tokens", Int(int64(usage.PromptTokens))},
			Field{"completion_tokens", Int(int64(usage.CompletionTokens))},
			Field{"total_tokens", Int(int64(usage.Tokens()))},
		)})
	}
	return reply, coercedFrom
}

// finishLLM reads a judgement, or parses and validates a schema reply.
func finishLLM(v Value, req *LLMRequest) Value {
	if req.Judge {
		return readJudgement(v)
	}
	if req.Schema.k != KindObject && req.Schema.k != KindBool {
		return v
	}
	if v.k == KindString {
		text := strings.TrimSpace(v.s)
		// Models often wrap JSON in a Markdown fence.
		if strings.HasPrefix(text, "```") {
			text = strings.TrimPrefix(text, "```json")
			text = strings.TrimPrefix(text, "```")
			text = strings.TrimSuffix(strings.TrimSpace(text), "```")
		}
		parsed, err := ParseJSON([]byte(text))
		if err != nil {
			return Error("schema", "the reply is not JSON: "+err.Error())
		}
		v = parsed
	}
	if msg := validateSchema(v, req.Schema, ""); msg != "" {
		return Error("schema", "the reply does not match the schema: "+msg)
	}
	return v
}
