package runtime

import (
	"context"
	"path"
	"slices"
	"strconv"
	"strings"
)

// Tools an agent may use during one completion.
//
// An llm call whose options name "skills" (a list of skill names) or
// "permissions" (VVM's permission object, spec.md §3.3.3) offers the
// model tools: the provider sends their definitions with the request,
// and when the model calls one, the run serves the call through the same
// tool providers as the tool effect (registered Go tools, then
// Config.Tools: genesisc run --tools) and hands the reply back to the
// model, until the model answers with text. The definitions:
//
//   - a skill "NAME": a tool NAME whose arguments are any object (the
//     meaning of a skill is the host's, §3.3.4);
//   - permissions read, write, execute (lists of glob patterns): the
//     tools read {path}, write {path, content} and execute {path, args},
//     offered when the list is not empty; a path outside every pattern
//     (after cleaning, so "a/../b" is "b") is rejected; with no tool of
//     that name, an MCP filesystem server's read_text_file (or read_file)
//     and write_file serve read and write (permissionTools);
//   - permissions bash and network ("allow" | "deny" | "prompt"): the
//     tools bash {command} and network {url, method, body}, offered on
//     "allow". "prompt" asks a person, and a compiled run has nobody to
//     ask: it is "deny", and the trace says so.
//
// A call the rules reject never reaches a provider: the model gets an
// error of kind "rejected" (spec.md §3.3.3: "treat attempted access as
// rejected and return an error value of kind rejected rather than
// silently allowing it"), as it gets a failed call's error.
//
// A provider that cannot send tools (one that does not implement
// ToolTaker) gets the request without them; the trace's
// advisory_tools_dropped event (narrated as a warning) says so.
//
// Each call the model makes is traced as an advisory_tool_call event of
// the llm step: the tool, its arguments and its reply or error. The
// calls are part of the llm step: a journal records the step's final
// reply, so a resumed or replayed run does not repeat them (a crash
// during the step repeats the step, tool calls included, as it repeats
// any call in flight).

// ToolDef is a tool the model may call while it completes a prompt.
type ToolDef struct {
	Name        string
	Description string
	Parameters  Value // a JSON schema object of its arguments

	globs []string // read, write, execute: the paths allowed
	named bool     // a skill or allowed tool: a provider may describe it
}

// ToolDescriber is implemented by tool providers that know their tools'
// descriptions and argument schemas (MCPTools): a skill or allowed tool
// they provide is offered to the model with them.
type ToolDescriber interface {
	DescribeTool(name string) (description string, parameters Value, ok bool)
}

// hasTool reports whether defs has a tool name.
func hasTool(defs []ToolDef, name string) bool {
	for _, d := range defs {
		if d.Name == name {
			return true
		}
	}
	return false
}

// ToolCall is one call of a tool by the model.
type ToolCall struct {
	ID   string // the provider's id of the call ("" when it has none)
	Name string
	Args Value // an object
}

// ToolTaker is implemented by LLM providers that send LLMRequest.Tools
// to the model and serve its calls through LLMRequest.CallTool.
type ToolTaker interface {
	TakesTools() bool
}

// MaxToolRounds bounds the rounds of tool calls in one completion: a
// model still calling tools after that many replies fails the call with
// kind "tool_rounds".
const MaxToolRounds = 16

// agentTools returns the tools the options offer, and what they leave out
// with the reason.
func agentTools(options Value) (defs []ToolDef, dropped []string) {
	if options.k != KindObject {
		return nil, nil
	}
	anyArgs := Object(Field{"type", String("object")})
	// skills (VVM) and allowed_tools (a Grimoire advisor's) name tools.
	for _, key := range []string{"skills", "allowed_tools"} {
		skills, ok := options.Get(key)
		if !ok || skills.k != KindList {
			continue
		}
		for _, s := range skills.Elems() {
			name, ok := s.AsString()
			if !ok || name == "" || hasTool(defs, name) {
				continue
			}
			defs = append(defs, ToolDef{Name: name, Description: "The skill " + strconv.Quote(name) + ".", Parameters: anyArgs, named: true})
		}
	}
	perms, ok := options.Get("permissions")
	if !ok || perms.k != KindObject {
		return defs, dropped
	}
	str := func(props ...string) Value {
		fs := make([]Field, len(props))
		for i, p := range props {
			fs[i] = Field{p, Object(Field{"type", String("string")})}
		}
		return Object(Field{"type", String("object")}, Field{"properties", Object(fs...)}, Field{"required", List(String(props[0]))})
	}
	for _, p := range []struct {
		key, desc string
		params    Value
	}{
		{"read", "Read the file at path.", str("path")},
		{"write", "Write content to the file at path.", str("path", "content")},
		{"execute", "Run the program at path with args.", Object(Field{"type", String("object")}, Field{"properties", Object(
			Field{"path", Object(Field{"type", String("string")})},
			Field{"args", Object(Field{"type", String("array")}, Field{"items", Object(Field{"type", String("string")})})},
		)}, Field{"required", List(String("path"))})},
	} {
		v, _ := perms.Get(p.key)
		var globs []string
		for _, g := range v.Elems() {
			if s, ok := g.AsString(); ok && s != "" {
				globs = append(globs, s)
			}
		}
		if len(globs) == 0 {
			continue
		}
		desc := p.desc + " Allowed paths: " + strings.Join(globs, ", ") + "."
		defs = append(defs, ToolDef{Name: p.key, Description: desc, Parameters: p.params, globs: globs})
	}
	for _, p := range []struct {
		key, desc string
		params    Value
	}{
		{"bash", "Run a shell command.", str("command")},
		{"network", "Make a network request to url (method: GET by default).", str("url", "method", "body")},
	} {
		switch v, _ := perms.Get(p.key); v.Str() {
		case "allow":
			defs = append(defs, ToolDef{Name: p.key, Description: p.desc, Parameters: p.params})
		case "prompt":
			dropped = append(dropped, p.key+": \"prompt\" needs a person to ask, and a compiled run has none; treated as \"deny\"")
		}
	}
	return defs, dropped
}

// allows reports whether the call's path is allowed, with the reason
// when it is not.
func (d *ToolDef) allows(args Value) (bool, string) {
	if d.globs == nil {
		return true, ""
	}
	p, ok := ObjGet(args, String("path")).AsString()
	if !ok || p == "" {
		return false, d.Name + " needs a path (a string)"
	}
	clean := path.Clean(p)
	for _, g := range d.globs {
		if globMatch(path.Clean(g), clean) {
			return true, ""
		}
	}
	return false, d.Name + " of " + strconv.Quote(p) + " is not allowed: the permitted paths are " + strings.Join(d.globs, ", ")
}

// globMatch matches a slash-separated path against a glob pattern: "*"
// and "?" and classes within a segment (path.Match), "**" as a whole
// segment any number of segments, none included.
func globMatch(pattern, name string) bool {
	return matchSegs(strings.Split(pattern, "/"), strings.Split(name, "/"))
}

func matchSegs(pat, name []string) bool {
	for len(pat) > 0 {
		if pat[0] == "**" {
			for len(pat) > 0 && pat[0] == "**" {
				pat = pat[1:]
			}
			if len(pat) == 0 {
				return true
			}
			for i := 0; i <= len(name); i++ {
				if matchSegs(pat, name[i:]) {
					return true
				}
			}
			return false
		}
		if len(name) == 0 {
			return false
		}
		if ok, err := path.Match(pat[0], name[0]); err != nil || !ok {
			return false
		}
		pat, name = pat[1:], name[1:]
	}
	return len(name) == 0
}

// offerTools sets req.Tools and req.CallTool for an llm call of step st
// (identity id) whose options offer tools, or records that the provider
// drops them.
func (r *Run) offerTools(st Step, id string, req *LLMRequest, options Value, pol RetryPolicy) {
	if r.h.cfg.LLM == nil {
		return // the call fails with kind config: nothing to drop
	}
	defs, dropped := agentTools(options)
	defs, unrouted := r.routeTools(defs, options)
	if len(defs) == 0 && len(dropped) == 0 && len(unrouted) == 0 {
		return
	}
	names := make([]Value, len(defs))
	for i, d := range defs {
		names[i] = String(d.Name)
	}
	if t, ok := r.h.cfg.LLM.(ToolTaker); !ok || !t.TakesTools() {
		if len(defs) > 0 {
			r.Advisory(st, "tools_dropped", Object(Field{"tools", List(names...)},
				Field{"reason", String("the LLM provider cannot send tools to the model")}))
		}
		return
	}
	if len(dropped) > 0 {
		ds := make([]Value, len(dropped))
		for i, d := range dropped {
			ds[i] = String(d)
		}
		r.Advisory(st, "tools_dropped", Object(Field{"tools", List(ds...)},
			Field{"reason", String("permissions the run cannot grant")}))
	}
	if len(unrouted) > 0 {
		ds := make([]Value, len(unrouted))
		for i, d := range unrouted {
			ds[i] = String("mcp " + strconv.Quote(d))
		}
		r.Advisory(st, "tools_dropped", Object(Field{"tools", List(ds...)},
			Field{"reason", String("no MCP server of the run (--tools mcp:…) has these names")}))
	}
	if len(defs) == 0 {
		return
	}
	req.Tools = defs
	n := 0
	req.CallTool = func(ctx context.Context, call ToolCall) Value {
		n++
		v := r.agentToolCall(ctx, st, id+" > "+call.Name+"#"+strconv.Itoa(n), defs, call, pol)
		data := []Field{{"tool", String(call.Name)}, {"args", call.Args}}
		if v.k == KindError {
			data = append(data, Field{"error", Object(Field{"kind", String(v.s)}, Field{"message", String(v.h.msg)})})
		} else {
			data = append(data, Field{"reply", v})
		}
		r.Advisory(st, "tool_call", Object(data...))
		return v
	}
}

// routeTools completes the tools an llm call offers with what the tool
// providers know: a skill or allowed tool that a provider describes
// (ToolDescriber) gets its description and argument schema, and each name
// in the options' "mcp" (a Grimoire advisor's MCP servers) offers every
// tool of the --tools MCP servers of that name (MCPTools.Named); the
// names no server has are returned.
func (r *Run) routeTools(defs []ToolDef, options Value) (_ []ToolDef, unrouted []string) {
	for i := range defs {
		if !defs[i].named {
			continue
		}
		for _, p := range r.h.cfg.Tools {
			if d, ok := p.(ToolDescriber); ok {
				if desc, params, ok := d.DescribeTool(defs[i].Name); ok {
					defs[i].Description, defs[i].Parameters = desc, params
					break
				}
			}
		}
	}
	servers, _ := options.Get("mcp")
	for _, s := range servers.Elems() {
		name, ok := s.AsString()
		if !ok || name == "" {
			continue
		}
		found := false
		for _, p := range r.h.cfg.Tools {
			m, ok := p.(*MCPTools)
			if !ok || !m.Named(name) {
				continue
			}
			found = true
			for _, tool := range m.Tools() {
				if hasTool(defs, tool) {
					continue
				}
				desc, params, _ := m.DescribeTool(tool)
				defs = append(defs, ToolDef{Name: tool, Description: desc, Parameters: params, named: true})
			}
		}
		if !found {
			unrouted = append(unrouted, name)
		}
	}
	return defs, unrouted
}

// agentToolCall serves one tool call of the model: checks it against the
// offered tools and their rules, then asks the Go tools and the tool
// providers, as Tool does (one attempt: the model decides what to do
// about a failure). A reply "PENDING" is handed to the model as it is:
// a call inside an agent's step cannot suspend the run.
func (r *Run) agentToolCall(ctx context.Context, st Step, callID string, defs []ToolDef, call ToolCall, pol RetryPolicy) Value {
	var def *ToolDef
	for i := range defs {
		if defs[i].Name == call.Name {
			def = &defs[i]
		}
	}
	if def == nil {
		return Error("rejected", "the tool "+strconv.Quote(call.Name)+" is not offered to this agent")
	}
	args := call.Args
	if args.k == KindUnit {
		args = emptyObject
	}
	if args.k == KindError {
		return args // arguments that are not JSON (parseToolCalls)
	}
	if args.k != KindObject {
		return Error("rejected", "the arguments of "+call.Name+" must be an object")
	}
	if ok, why := def.allows(args); !ok {
		return Error("rejected", why)
	}
	c := &Call{Step: callID, Attempt: 1, Timeout: pol.Timeout, run: r}
	if pol.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, pol.Timeout)
		defer cancel()
	}
	var v Value
	var err error
	if fn := (*r.h.tools.Load())[call.Name]; fn != nil {
		v, err = fn(withCall(ctx, c), args)
	} else {
		err = &CallError{Kind: "unknown_tool", Message: "no tool " + strconv.Quote(call.Name) + " is registered or provided (" + toolProviderNames(r.h.cfg.Tools) + ")"}
		for _, p := range r.h.cfg.Tools {
			v, err = p.CallTool(ctx, c, call.Name, args)
			if err != ErrUnknownTool {
				break
			}
			err = &CallError{Kind: "unknown_tool", Message: "no tool " + strconv.Quote(call.Name) + " is registered or provided (" + toolProviderNames(r.h.cfg.Tools) + ")"}
		}
		if def.globs != nil && isUnknownTool(err) {
			if m, name := r.permissionServer(call.Name); m != nil {
				v, err = m.CallTool(ctx, c, name, args)
			}
		}
	}
	if err != nil {
		ce := asCallError(err, "tool")
		return Error(ce.Kind, ce.Message)
	}
	return v
}

// permissionTools are the tools of an MCP filesystem server (the
// reference server @modelcontextprotocol/server-filesystem, and servers
// that follow its names) that serve VVM's permission tools read and write
// when no tool of those names is registered or provided: their arguments
// are the same ({path}, {path, content}), and the permission's globs are
// checked before the call as for any permission tool. The first name a
// server has wins (read_file is the reference server's older name).
var permissionTools = map[string][]string{
	"read":  {"read_text_file", "read_file"},
	"write": {"write_file"},
}

// permissionServer returns the first MCP server of the run that has a
// tool serving the permission tool perm, and that tool's name.
func (r *Run) permissionServer(perm string) (*MCPTools, string) {
	for _, p := range r.h.cfg.Tools {
		m, ok := p.(*MCPTools)
		if !ok {
			continue
		}
		for _, name := range permissionTools[perm] {
			if slices.Contains(m.Tools(), name) {
				return m, name
			}
		}
	}
	return nil, ""
}

// isUnknownTool reports whether err says no provider has the tool.
func isUnknownTool(err error) bool {
	ce, ok := err.(*CallError)
	return ok && ce.Kind == "unknown_tool"
}

// toolsJSON is the "tools" field of an OpenAI chat completion request.
func toolsJSON(defs []ToolDef) Value {
	ts := make([]Value, len(defs))
	for i, d := range defs {
		ts[i] = Object(Field{"type", String("function")}, Field{"function", Object(
			Field{"name", String(d.Name)},
			Field{"description", String(d.Description)},
			Field{"parameters", d.Parameters},
		)})
	}
	return List(ts...)
}

// toolReplyText is what the model reads of a tool's reply: a string as
// itself, anything else as JSON (an error as {"error": {"kind",
// "message"}}).
func toolReplyText(v Value) string {
	if v.k == KindError {
		return string(AppendJSON(nil, Object(Field{"error", Object(Field{"kind", String(v.s)}, Field{"message", String(v.h.msg)})})))
	}
	if s, ok := v.AsString(); ok {
		return s
	}
	return string(AppendJSON(nil, v))
}

// TakesTools reports that the OpenAI provider sends tools (function
// calling).
func (o *OpenAI) TakesTools() bool { return true }

// completeTools runs a completion that offers tools: each reply that
// calls tools is answered with their replies (req.CallTool), up to
// MaxToolRounds rounds, and the first reply with text is the completion.
// Every round is one request (with the client's retries of a transient
// failure); the usage is their sum. Each round sends its own
// idempotency key (the call's, then KEY/round-N), since each is a new
// request.
func (o *OpenAI) completeTools(ctx context.Context, c *Call, req *LLMRequest, body Value, price [2]float64) (LLMResponse, error) {
	msgs := ObjGet(body, String("messages")).Elems()
	msgs = append([]Value(nil), msgs...)
	var total Usage
	key := c.IdempotencyKey()
	for round := 0; ; round++ {
		k := key
		if round > 0 && key != "" {
			k = key + "/round-" + strconv.Itoa(round)
		}
		resp, err := o.send(ctx, c, AppendJSON(nil, body.With("messages", List(msgs...))), k, price)
		total.add(resp.Usage)
		if err != nil {
			return LLMResponse{Usage: total}, err
		}
		if len(resp.toolCalls) == 0 {
			resp.Usage = total
			return resp, nil
		}
		if round+1 >= MaxToolRounds {
			return LLMResponse{Usage: total}, &CallError{Kind: "tool_rounds", Message: "the model was still calling tools after " + strconv.Itoa(MaxToolRounds) + " rounds"}
		}
		msgs = append(msgs, resp.message)
		for _, call := range resp.toolCalls {
			v := req.CallTool(ctx, call)
			msgs = append(msgs, Object(Field{"role", String("tool")}, Field{"tool_call_id", String(call.ID)},
				Field{"content", String(toolReplyText(v))}))
		}
	}
}

// parseToolCalls reads the tool calls of an assistant message
// (message.tool_calls[i].function.{name, arguments}, the arguments a JSON
// string).
func parseToolCalls(message Value) ([]ToolCall, *CallError) {
	tcs, ok := message.Get("tool_calls")
	if !ok || tcs.k != KindList || tcs.Len() == 0 {
		return nil, nil
	}
	calls := make([]ToolCall, 0, tcs.Len())
	for _, tc := range tcs.Elems() {
		name := PathGet(tc, String("function.name")).Str()
		if name == "" {
			return nil, &CallError{Kind: "bad_response", Message: "a tool call without a function name"}
		}
		args := Value{}
		if s, ok := PathGet(tc, String("function.arguments")).AsString(); ok && strings.TrimSpace(s) != "" {
			v, err := ParseJSON([]byte(s))
			if err != nil {
				args = Error("bad_arguments", "the arguments are not JSON: "+err.Error())
			} else {
				args = v
			}
		}
		calls = append(calls, ToolCall{ID: ObjGet(tc, String("id")).Str(), Name: name, Args: args})
	}
	return calls, nil
}

// TakesTools reports that mock LLM files can script tool calls
// ({"$tool_calls": [...], "$reply": …}).
func (m *MockLLM) TakesTools() bool { return true }

// mockToolCalls makes the tool calls of a scripted reply through
// req.CallTool, in order.
func mockToolCalls(ctx context.Context, req *LLMRequest, calls []ToolCall) error {
	if req.CallTool == nil {
		return &CallError{Kind: "mock", Message: "the reply calls tools, but the call offers none (no skills or permissions)"}
	}
	for _, c := range calls {
		req.CallTool(ctx, c)
	}
	return nil
}

// parseMockToolCalls reads $tool_calls: a list of {"name": string,
// "args": object}.
func parseMockToolCalls(v Value) ([]ToolCall, error) {
	if v.k != KindList {
		return nil, errMock("$tool_calls needs a list of {\"name\": string, \"args\": object}")
	}
	calls := make([]ToolCall, 0, v.Len())
	for i, c := range v.Elems() {
		name, ok := ObjGet(c, String("name")).AsString()
		if c.k != KindObject || !ok || name == "" {
			return nil, errMock("$tool_calls[" + strconv.Itoa(i) + "] needs a name")
		}
		for _, k := range c.Keys() {
			if k != "name" && k != "args" {
				return nil, errMock("$tool_calls[" + strconv.Itoa(i) + "]: unexpected key " + strconv.Quote(k))
			}
		}
		calls = append(calls, ToolCall{ID: "call_" + strconv.Itoa(i+1), Name: name, Args: ObjGet(c, String("args"))})
	}
	return calls, nil
}

type errMock string

func (e errMock) Error() string { return string(e) }
