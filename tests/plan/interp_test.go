package plan_test

import (
	"fmt"
	"reflect"
	"strings"

	"github.com/genesis-toolchain/genesis/ir"
	rt "github.com/genesis-toolchain/genesis/runtime"
)

// An interpreter of the IR the plan lowering emits, with scripted
// effects, so that the golden cases can pin what a plan does at run time
// (the schedule, the statuses, the blocking of dependents, the values
// placeholders read) and not only the IR it compiles to. Builtins are the
// runtime's own functions (runtime.Builtins); the effects are a mock:
//
//	llm   the reply of the first key of llm.json (in file order) that is
//	      a substring of the prompt, "__default__" matching any; a
//	      reply {"$error": {"kind", "message"}} is an error value
//	tool  likewise from tools.json, a key matching when it is the tool's
//	      name or a substring of the JSON of its arguments
//	trace, stop  recorded
//	parallel     recorded; its branches run in branch order
//
// The log has one line per effect, then the run's end: "return VALUE"
// or "stop STATUS ERROR".

type mock struct {
	keys    []string
	replies []rt.Value
}

func parseMock(data string) (*mock, error) {
	m := &mock{}
	if data == "" {
		return m, nil
	}
	v, err := rt.ParseJSONExt([]byte(data))
	if err != nil {
		return nil, err
	}
	for i := 0; i < v.Len(); i++ {
		k, r := v.Field(i)
		m.keys = append(m.keys, k)
		m.replies = append(m.replies, r)
	}
	return m, nil
}

func (m *mock) reply(match func(key string) bool, what string) rt.Value {
	for i, k := range m.keys {
		if k == "__default__" || match(k) {
			return m.replies[i]
		}
	}
	return rt.Error("mock", "no reply scripted for "+what)
}

type interp struct {
	funcs      map[string]*ir.Func
	llm, tools *mock
	log        strings.Builder
	effects    int
}

// control is how a region was left: by falling off its end (nil), or by a
// terminator.
type control struct {
	op    ir.Op // OpYield, OpBreak, OpContinue, OpReturn, OpStop
	label string
	vals  []any
}

type stopRun struct{ status, err rt.Value }

type frame struct {
	vals map[*ir.Value]any
	vars map[string]any
}

var builtins = func() map[string]reflect.Value {
	m := map[string]reflect.Value{}
	for _, b := range rt.Builtins {
		m[b.Name] = reflect.ValueOf(b.Func)
	}
	return m
}()

// run runs @main on input and returns the log.
func run(m *ir.Module, input rt.Value, llm, tools *mock) (log string, err error) {
	in := &interp{funcs: m.FuncMap(), llm: llm, tools: tools}
	defer func() {
		if e := recover(); e != nil {
			if s, ok := e.(stopRun); ok {
				fmt.Fprintf(&in.log, "stop %s %s\n", enc(s.status), enc(s.err))
				log = in.log.String()
				return
			}
			err = fmt.Errorf("%v", e)
		}
	}()
	res := in.call(in.funcs["main"], []any{input})
	fmt.Fprintf(&in.log, "return %s\n", enc(res[0].(rt.Value)))
	return in.log.String(), nil
}

func enc(v rt.Value) string { return string(rt.EncodeJSON(v)) }

func (in *interp) call(f *ir.Func, args []any) []any {
	fr := &frame{vals: map[*ir.Value]any{}, vars: map[string]any{}}
	for i, p := range f.Params {
		fr.vals[p] = args[i]
	}
	for _, l := range f.Locals {
		fr.vars[l.Name] = zero(l.Type)
	}
	c := in.region(fr, f.Body)
	if c == nil || c.op != ir.OpReturn {
		panic(fmt.Sprintf("@%s ends without return", f.Name))
	}
	return c.vals
}

func zero(t ir.Type) any {
	switch t {
	case ir.Dyn:
		return rt.Unit()
	case ir.Bool:
		return false
	}
	return int64(0)
}

func (in *interp) region(fr *frame, r *ir.Region) *control {
	for _, i := range r.Instrs {
		if c := in.instr(fr, i); c != nil {
			return c
		}
	}
	return nil
}

func (in *interp) args(fr *frame, i *ir.Instr) []any {
	out := make([]any, len(i.Args))
	for k, a := range i.Args {
		v, ok := fr.vals[a]
		if !ok {
			panic(fmt.Sprintf("%v: a use before its definition", i.Pos))
		}
		out[k] = v
	}
	return out
}

func (in *interp) def(fr *frame, i *ir.Instr, vals ...any) {
	for k, r := range i.Results {
		fr.vals[r] = vals[k]
	}
}

func (in *interp) instr(fr *frame, i *ir.Instr) *control {
	a := in.args(fr, i)
	switch i.Op {
	case ir.OpConst:
		in.def(fr, i, constant(i))
	case ir.OpGet:
		in.def(fr, i, fr.vars[i.Local])
	case ir.OpSet:
		fr.vars[i.Local] = a[0]
	case ir.OpBuiltin:
		fn, ok := builtins[i.Sym]
		if !ok {
			panic("unknown builtin " + i.Sym)
		}
		ins := make([]reflect.Value, len(a))
		for k, x := range a {
			ins[k] = reflect.ValueOf(x)
		}
		in.def(fr, i, fn.Call(ins)[0].Interface())
	case ir.OpNot:
		in.def(fr, i, !a[0].(bool))
	case ir.OpEq, ir.OpNe:
		eq := a[0] == a[1]
		in.def(fr, i, eq == (i.Op == ir.OpEq))
	case ir.OpCall:
		in.def(fr, i, in.call(in.funcs[i.Sym], a)...)
	case ir.OpIf:
		r := i.Regions[1]
		if a[0].(bool) {
			r = i.Regions[0]
		}
		c := in.region(fr, r)
		if c != nil && c.op == ir.OpYield {
			in.def(fr, i, c.vals...)
			return nil
		}
		return c
	case ir.OpBlock:
		c := in.region(fr, i.Regions[0])
		if c != nil && (c.op == ir.OpYield || c.op == ir.OpBreak && c.label == i.Label) {
			in.def(fr, i, c.vals...)
			return nil
		}
		return c
	case ir.OpLoop:
		vals := a
		for {
			for k, p := range i.Regions[0].Params {
				fr.vals[p] = vals[k]
			}
			c := in.region(fr, i.Regions[0])
			switch {
			case c != nil && c.op == ir.OpContinue && c.label == i.Label:
				vals = c.vals
				continue
			case c != nil && c.op == ir.OpBreak && c.label == i.Label:
				in.def(fr, i, c.vals...)
				return nil
			}
			return c
		}
	case ir.OpAdd:
		in.def(fr, i, a[0].(int64)+a[1].(int64))
	case ir.OpGeS:
		in.def(fr, i, a[0].(int64) >= a[1].(int64))
	case ir.OpYield, ir.OpReturn:
		return &control{op: i.Op, vals: a}
	case ir.OpBreak, ir.OpContinue:
		return &control{op: i.Op, label: i.Label, vals: a}
	case ir.OpUnreachable:
		panic(fmt.Sprintf("%v: unreachable reached", i.Pos))
	case ir.OpLLM:
		ea := i.EffectArgs()
		prompt := fr.vals[ea[0]].(rt.Value)
		p := prompt.Str()
		reply := in.llm.reply(func(k string) bool { return strings.Contains(p, k) }, "the prompt "+enc(prompt))
		fmt.Fprintf(&in.log, "llm %q %s -> %s\n", i.Str, enc(prompt), enc(reply))
		in.def(fr, i, reply)
	case ir.OpTool:
		ea := i.EffectArgs()
		name, args := fr.vals[ea[0]].(rt.Value), fr.vals[ea[1]].(rt.Value)
		js := enc(args)
		reply := in.tools.reply(func(k string) bool { return k == name.Str() || strings.Contains(js, k) }, "tool "+name.Str())
		fmt.Fprintf(&in.log, "tool %q %s %s -> %s\n", i.Str, enc(name), js, enc(reply))
		in.def(fr, i, reply)
	case ir.OpTrace:
		ea := i.EffectArgs()
		fmt.Fprintf(&in.log, "trace %q %s %s\n", i.Str, enc(fr.vals[ea[0]].(rt.Value)), enc(fr.vals[ea[1]].(rt.Value)))
	case ir.OpParallel:
		// The branches run one after the other in branch order, which the
		// runtime's outcome does not depend on; a branch that waits gets
		// the list of its dependencies' results.
		ea := i.EffectArgs()
		fmt.Fprintf(&in.log, "parallel %q\n", i.Str)
		results := make([]rt.Value, len(i.Syms))
		for k, name := range i.Syms {
			args := []any{fr.vals[ea[1]]}
			if k < len(i.Waits) && len(i.Waits[k]) > 0 {
				var deps []rt.Value
				for _, d := range i.Waits[k] {
					deps = append(deps, results[d])
				}
				args = append(args, rt.List(deps...))
			}
			results[k] = in.call(in.funcs[name], args)[0].(rt.Value)
		}
		in.def(fr, i, rt.List(results...))
	case ir.OpStop:
		ea := i.EffectArgs()
		panic(stopRun{fr.vals[ea[0]].(rt.Value), fr.vals[ea[1]].(rt.Value)})
	default:
		panic(fmt.Sprintf("%v: the test interpreter has no %v", i.Pos, i.Op))
	}
	return nil
}

func constant(i *ir.Instr) any {
	switch i.Type {
	case ir.Dyn:
		switch i.Lit.Kind {
		case ir.LitUnit:
			return rt.Unit()
		case ir.LitBool:
			return rt.Bool(i.Lit.Int != 0)
		case ir.LitNumber:
			return rt.Number(i.Lit.Num)
		case ir.LitString:
			return rt.String(i.Lit.Str)
		}
	case ir.Bool:
		return i.Lit.Int != 0
	}
	return i.Lit.Int
}
