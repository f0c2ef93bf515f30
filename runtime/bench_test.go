package runtime

import (
	"io"
	"syscall"
	"testing"
	"time"
)

// cpuTime returns the CPU time (user + system) the process has used, all
// threads together: the garbage collector's work counts.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

var (
	benchLLMFile   = []byte(`{"Valid refund?": {"$sequence": ["yes", "no"]}, "__default__": "unknown"}`)
	benchToolsFile = []byte(`{"issue_refund": {"refund_id": "ref_42", "amount": 100}, "send_rejection": "rejected"}`)

	siteClassify = NewSite("classify", "refund.json", 3, 2)
	siteRoute    = NewSite("route", "refund.json", 4, 2)
	siteApprove  = NewSite("approve", "refund.json", 5, 2)
	siteReject   = NewSite("reject", "refund.json", 6, 2)
)

// refundProgram is what genesisc generates for nano-vm's refund example:
// llm → condition → tool.
func refundProgram(r *Run) Value {
	prompt := StrFormat(String("Valid refund? yes/no. $user_input"), r.Input())
	decision := r.LLM(siteClassify.At(), prompt, ObjNew())
	if ErrorIs(decision) {
		r.Fail(siteClassify.At(), decision)
	}
	r.SetOutput("decision", decision)
	yes := ValueEq(decision, String("yes"))
	r.Mark(siteRoute.At(), "condition", Bool(yes))
	args := ObjSet(ObjNew(), String("order_id"), ObjGet(r.Input(), String("order_id")))
	if yes {
		return r.Tool(siteApprove.At(), String("issue_refund"), args)
	}
	return r.Tool(siteReject.At(), String("send_rejection"), args)
}

func newBenchHost(tb testing.TB) *Host {
	llm, err := ParseMockLLM(benchLLMFile)
	if err != nil {
		tb.Fatal(err)
	}
	tools, err := ParseMockTools(benchToolsFile)
	if err != nil {
		tb.Fatal(err)
	}
	return NewHost(Config{LLM: llm, Tools: []ToolProvider{tools}})
}

var benchInput = Object(Field{"user_input", String("I want my money back")}, Field{"order_id", String("A-17")})

// BenchmarkRun measures a whole three-step run (llm → condition → tool)
// with mock effects, no trace and no journal: the fixed cost of a run.
func BenchmarkRun(b *testing.B) {
	h := newBenchHost(b)
	b.ReportAllocs()
	start, cpu0 := time.Now(), cpuTime()
	for i := 0; i < b.N; i++ {
		res := h.Execute(RunOptions{Input: benchInput}, refundProgram)
		if res.Status != StatusSuccess {
			b.Fatal(res.Error)
		}
	}
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "runs/s")
	b.ReportMetric(float64(b.N)/(cpuTime()-cpu0).Seconds(), "runs/cpu-s")
}

// BenchmarkRunTraced is BenchmarkRun with a trace (to a discarding
// writer) and an in-memory journal: what observability costs.
func BenchmarkRunTraced(b *testing.B) {
	h := newBenchHost(b)
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		res := h.Execute(RunOptions{Input: benchInput, Trace: io.Discard, Journal: NewJournal("refund")}, refundProgram)
		if res.Status != StatusSuccess {
			b.Fatal(res.Error)
		}
	}
}

// BenchmarkBuiltins measures a template render and object building, the
// builtins between effects.
func BenchmarkBuiltins(b *testing.B) {
	scope := Object(Field{"user", Object(Field{"name", String("Ada")}, Field{"tags", List(String("x"))})}, Field{"n", Int(3)})
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		s := StrFormat(String("Hello $user.name, you have $n items ($user.tags.0)"), scope)
		o := ObjSet(ObjSet(ObjNew(), String("greeting"), s), String("n"), NumAdd(ObjGet(scope, String("n")), Int(1)))
		if !ValueTruthy(o) {
			b.Fatal()
		}
	}
}
