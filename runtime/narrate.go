package runtime

import (
	"bytes"
	"io"
	"strings"
	"unicode/utf8"
)

// Narrator turns a run's trace into the narration of VVM's protocol, one
// line per event, as the trace is written: it is an io.Writer for
// RunOptions.Trace (alone, or beside a trace file through io.MultiWriter).
// The markers:
//
//	📍 a statement or block starts (note "statement"), a step is skipped
//	📦 a value is bound or exported, an agent's result
//	✅ a step or the run completes
//	❌ a step or the run fails
//	🔄 a loop iterates (note "loop")
//	⏳ a subagent, tool or wait is under way
//	🎯 a semantic judgement or a match/choose decision; an advisory
//	   starts or its reply is coerced
//	📦 ❌ a tool an agent called during its step, and its reply or error
//	⚡ a parallel block starts
//	🔀 a branch of a parallel block (its steps are indented)
//	⚠️ a warning (note "warning")
//
// Branch events arrive when their block ends, in branch order (the trace
// does not depend on timing), so the narration does not either.
type Narrator struct {
	w       io.Writer
	partial []byte
	out     []byte
	branch  string // the call path of the branch the last event was in
}

// NewNarrator returns a Narrator writing to w.
func NewNarrator(w io.Writer) *Narrator { return &Narrator{w: w} }

// Write takes trace bytes; every complete line is narrated. Lines that
// are not trace events are ignored.
func (n *Narrator) Write(p []byte) (int, error) {
	n.partial = append(n.partial, p...)
	n.out = n.out[:0]
	for {
		i := bytes.IndexByte(n.partial, '\n')
		if i < 0 {
			break
		}
		if ev, err := ParseJSON(n.partial[:i]); err == nil && ev.Kind() == KindObject {
			n.event(ev)
		}
		n.partial = n.partial[i+1:]
	}
	if len(n.partial) == 0 {
		n.partial = nil
	}
	if len(n.out) > 0 {
		if _, err := n.w.Write(n.out); err != nil {
			return 0, err
		}
	}
	return len(p), nil
}

// event narrates one trace event.
func (n *Narrator) event(ev Value) {
	str := func(k string) string { return ObjGet(ev, String(k)).Str() }
	name, kind := str("name"), str("kind")
	step := str("step")
	// A step's identity starts with its call path: call sites and, for a
	// step inside a parallel branch, "BLOCK/i" (docs/runtime.md). Branch
	// steps are indented, and the first event of a branch announces it.
	segs := strings.Split(step, " > ")
	depth, last := 0, -1
	for i, s := range segs[:len(segs)-1] {
		if isBranchSegment(s) {
			depth, last = depth+1, i
		}
	}
	indent := strings.Repeat("   ", depth)
	branch := ""
	if last >= 0 {
		branch = strings.Join(segs[:last+1], " > ")
		if branch != n.branch {
			s := segs[last]
			n.line(indent[3:], "🔀", "Branch "+s[strings.LastIndexByte(s, '/')+1:])
		}
	}
	n.branch = branch
	switch str("event") {
	case "run_started":
		n.line("", "📍", "Run "+quoteName(str("program")))
	case "note":
		data := ObjGet(ev, String("data"))
		marker := map[string]string{"statement": "📍", "loop": "🔄", "decision": "🎯", "bind": "📦", "warning": "⚠️"}[ObjGet(data, String("kind")).Str()]
		if marker == "" {
			marker = "📍"
		}
		n.line(indent, marker, ObjGet(data, String("text")).Str())
	case "step_started":
		switch kind {
		case "llm":
			n.line(indent, "⏳", "Spawning subagent: "+name)
		case "judge":
			n.line(indent, "🎯", "Judging: "+name)
		case "tool":
			n.line(indent, "⏳", "Calling tool: "+name)
		case "wait":
			n.line(indent, "⏳", "Waiting: "+name)
		case "parallel":
			n.line(indent, "⚡", "Parallel block: "+name)
		}
	case "step_completed":
		out := ObjGet(ev, String("output"))
		switch kind {
		case "llm":
			n.line(indent, "📦", "Result: "+preview(out))
			n.line(indent, "✅", name+" done")
		case "judge":
			n.line(indent, "🎯", name+": "+preview(out))
		case "parallel":
			n.line(indent, "✅", "Parallel block "+name+" complete")
		case "tool":
			n.line(indent, "📦", name+" replied: "+preview(out))
		case "wait":
			n.line(indent, "✅", name+" resumed")
		}
	case "step_failed":
		e := ObjGet(ev, String("error"))
		n.line(indent, "❌", name+" failed: "+ObjGet(e, String("kind")).Str()+": "+ObjGet(e, String("message")).Str())
	case "step_skipped":
		n.line(indent, "📍", name+" skipped: "+str("reason"))
	case "exported":
		n.line(indent, "📦", "Exported "+str("name")+" = "+preview(ObjGet(ev, String("value"))))
	case "advisory_tool_call":
		data := ObjGet(ev, String("data"))
		tool := ObjGet(data, String("tool")).Str()
		if e, ok := data.Get("error"); ok {
			n.line(indent, "❌", name+" called "+tool+": "+ObjGet(e, String("kind")).Str()+": "+ObjGet(e, String("message")).Str())
		} else {
			n.line(indent, "📦", name+" called "+tool+": "+preview(ObjGet(data, String("reply"))))
		}
	case "advisory_tools_dropped":
		data := ObjGet(ev, String("data"))
		var tools []string
		for _, t := range ObjGet(data, String("tools")).Elems() {
			tools = append(tools, t.Str())
		}
		n.line(indent, "⚠️", name+": tools dropped ("+ObjGet(data, String("reason")).Str()+"): "+strings.Join(tools, "; "))
	case "event_emitted":
		n.line(indent, "📦", "Event "+str("event_name"))
	case "advisory_started", "advisory_coerced":
		n.line(indent, "🎯", "Advisory "+strings.TrimPrefix(str("event"), "advisory_")+": "+name+" "+preview(ObjGet(ev, String("data"))))
	case "run_completed":
		status := str("status")
		if status == string(StatusSuccess) {
			n.line("", "✅", "Run complete")
		} else {
			e := ObjGet(ev, String("error"))
			msg := "Run " + status
			if m := ObjGet(e, String("message")).Str(); m != "" {
				msg += ": " + ObjGet(e, String("kind")).Str() + ": " + m
			}
			n.line("", "❌", msg)
		}
	}
}

func (n *Narrator) line(indent, marker, text string) {
	n.out = append(n.out, indent...)
	n.out = append(n.out, marker...)
	n.out = append(n.out, ' ')
	n.out = append(n.out, text...)
	n.out = append(n.out, '\n')
}

func quoteName(s string) string {
	if s == "" {
		return "(unnamed program)"
	}
	return s
}

// preview renders a value on one line of at most 80 characters: a string
// as itself, anything else as JSON.
func preview(v Value) string {
	s := v.String()
	s = strings.Join(strings.Fields(s), " ")
	if utf8.RuneCountInString(s) > 80 {
		r := []rune(s)
		s = string(r[:77]) + "..."
	}
	return s
}

// isBranchSegment reports whether a call path segment is a parallel
// branch, "BLOCK-IDENTITY/i".
func isBranchSegment(s string) bool {
	slash := strings.LastIndexByte(s, '/')
	if slash < 0 || slash == len(s)-1 {
		return false
	}
	for _, c := range s[slash+1:] {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}
