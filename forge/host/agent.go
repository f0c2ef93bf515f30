package host

import (
	"errors"
	"fmt"
	"strconv"
	"sync"

	"github.com/genesis-toolchain/genesis/forge/agentabi"
	"github.com/genesis-toolchain/genesis/forge/bytecode"
	"github.com/genesis-toolchain/genesis/forge/vm"
	"github.com/genesis-toolchain/genesis/runtime"
)

// Agent is an agent program loaded for running on the Forge Machine: its
// image, its metadata (package agentabi) and what the metadata names,
// resolved. It may be run any number of times, one run at a time.
type Agent struct {
	Image *vm.Image
	Meta  *agentabi.Metadata

	sites    []*runtime.Site
	branches [][]uint64 // per site: the code address of each branch function
	ret      uint64     // the address of the HALT branches return to
	// spare is the machine of the latest run, kept for the next run (a
	// --repeat), which resets it rather than allocating another.
	spare *pooled
	// spareValues is the value store of the latest run, for the next.
	spareValues *ValueHost
	// tick is the site a stop for cancellation or a run limit found
	// between steps names (the go target names the loop iterating).
	tick *runtime.Site
	// spareBranches are machines of parallel branches that have ended,
	// for the next branches to reuse (their memory is the size
	// of the run's machine); branches take and give them at once.
	branchMu      sync.Mutex
	spareBranches []*vm.Machine
}

// maxSpareBranches bounds the branch machines an Agent keeps for reuse.
const maxSpareBranches = 32

// takeBranch returns a branch machine to reuse, or nil.
func (a *Agent) takeBranch() *vm.Machine {
	a.branchMu.Lock()
	defer a.branchMu.Unlock()
	n := len(a.spareBranches)
	if n == 0 {
		return nil
	}
	m := a.spareBranches[n-1]
	a.spareBranches[n-1] = nil
	a.spareBranches = a.spareBranches[:n-1]
	return m
}

// giveBranch keeps m, a branch machine that has ended, for reuse.
func (a *Agent) giveBranch(m *vm.Machine) {
	a.branchMu.Lock()
	defer a.branchMu.Unlock()
	if len(a.spareBranches) < maxSpareBranches {
		a.spareBranches = append(a.spareBranches, m)
	}
}

// pooled is a machine kept for another run with the same limits. The
// machine's sender and host are fixed when it is made: they forward to
// the run of the moment.
type pooled struct {
	m   *vm.Machine
	cfg vm.Config
	fwd *forward
}

// forward passes a machine's messages and host calls to the run using
// it.
type forward struct{ r *agentRun }

func (f *forward) Send(ch uint8, msg []byte) { f.r.Send(ch, msg) }

func (f *forward) HostCall(m *vm.Machine, imm uint32) (uint64, vm.Fault) {
	return f.r.HostCall(m, imm)
}

// Default limits of an agent run on the Forge Machine. The machine's
// memory holds the program, the frames of its functions and the machine
// stack; values live in the host's store, bounded by the run's
// --max-memory (runtime.Limits.Memory) as on the Go target.
const (
	DefaultAgentTicks = 10_000_000_000 // as DefaultTicks: a runaway loop ends within seconds
	// DefaultAgentFrames is the memory beyond code and data an agent
	// program's machine gets by default: frames and the machine stack.
	DefaultAgentFrames = 128 << 10
	DefaultAgentStack  = 64 << 10
	// DefaultValueBytes bounds the value store of a run given no
	// --max-memory (runtime.DefaultLimits gives 1 GiB).
	DefaultValueBytes = 1 << 30
)

// AgentLimits returns the default limits of a run of a.
func (a *Agent) AgentLimits() Limits {
	return Limits{
		Ticks:  DefaultAgentTicks,
		Memory: a.Image.HeapStart() + DefaultAgentFrames,
		Stack:  DefaultAgentStack,
		Output: DefaultOutput,
		Grant:  agentabi.Grant,
	}
}

// IsAgent reports whether p is an agent program (its metadata is an
// agent program's).
func IsAgent(p *bytecode.Program) bool { return agentabi.IsAgent(p.Metadata) }

// LoadAgent loads the agent program p: its image, its metadata, the
// sites and the branch functions it names.
func LoadAgent(p *bytecode.Program) (*Agent, error) {
	meta, err := agentabi.Parse(p.Metadata)
	if err != nil {
		return nil, err
	}
	img, err := vm.NewImage(p)
	if err != nil {
		return nil, err
	}
	syms := make(map[string]uint64, len(p.Symbols))
	for _, s := range p.Symbols {
		syms[s.Name] = s.Addr
	}
	a := &Agent{Image: img, Meta: meta}
	var ok bool
	if a.ret, ok = syms[meta.Return]; !ok {
		return nil, fmt.Errorf("agent metadata: the return symbol %q is not defined", meta.Return)
	}
	if a.ret >= uint64(len(p.Code)) || p.Code[a.ret] != byte(bytecode.HALT) {
		return nil, fmt.Errorf("agent metadata: the return symbol %q is not a HALT instruction", meta.Return)
	}
	a.tick = runtime.NewSite("forge", meta.Program, 0, 0)
	a.sites = make([]*runtime.Site, len(meta.Sites))
	a.branches = make([][]uint64, len(meta.Sites))
	for i, s := range meta.Sites {
		a.sites[i] = runtime.NewSite(s.Name, s.File, s.Line, s.Col)
		for _, b := range s.Branches {
			addr, ok := syms[b]
			if !ok {
				return nil, fmt.Errorf("agent metadata: site %d: branch function %q is not defined", i, b)
			}
			a.branches[i] = append(a.branches[i], addr)
		}
	}
	return a, nil
}

// AgentStats is what a run on the machine adds to the runtime's result:
// the machine's figures, which a proof binds.
type AgentStats struct {
	Ticks uint64
	// Fault is the machine's fault when one ended the run (the result
	// says how), NoFault otherwise.
	Fault vm.Fault
	PC    uint64
	// With AgentOptions.Trace, Input is the MessageHash of the run's input JSON (as a message on
	// channel 2) and the frames delivered to the program,
	// Output that of the frames it sent followed by the run's result
	// JSON (as a message on channel 0).
	Input, Output [32]byte
	// TraceHash is the machine's trace hash when the run was traced and
	// its machine halted or faulted.
	TraceHash *[32]byte
	// Effects counts the effect requests the host answered (and stop);
	// HostCalls the builtins called, and HostCallTicks the ticks they
	// cost, HCALL's own included (make bench reports them).
	Effects, HostCalls, HostCallTicks uint64
}

// RunOptions configure one run of an agent program.
type AgentOptions struct {
	Limits Limits
	// Trace computes the machine's trace hash (proofs).
	Trace bool
	// Values bounds the bytes of the value store (the CLIs give the
	// run's --max-memory); 0 means DefaultValueBytes.
	Values uint64
	// Sequential runs the branches of parallel blocks one at a time, in
	// branch order (runtime.RunOptions.Sequential); they run at once
	// otherwise. The outcome is the same, ticks and trace hash included.
	Sequential bool
}

// Run runs the program once on host h with the run options ropts (input,
// journal, trace, budgets: everything runtime.Run takes) and the machine's
// limits, and returns the runtime's result with the machine's figures.
// The effects are the runtime's, called as the Go target calls them, so
// the result, trace and journal are those of the same program compiled
// for Go; the machine adds the outcomes of a sandbox (out of ticks, out
// of memory), which end the run with status budget_exceeded
// (docs/forge.md, "Agent programs").
func (a *Agent) Run(h *runtime.Host, ropts runtime.RunOptions, opts AgentOptions) (*runtime.Result, *AgentStats) {
	if ropts.Program == "" {
		ropts.Program = a.Meta.Program
	}
	if ropts.ProgramHash == "" {
		ropts.ProgramHash = a.Meta.ProgramHash
	}
	if opts.Sequential {
		ropts.Sequential = true
	}
	stats := &AgentStats{}
	s := &agentRun{a: a, stats: stats}
	if opts.Trace {
		// Only a proof needs the hashes of what entered and left.
		s.in, s.out = NewMessageHash(), NewMessageHash()
	}
	res := h.Execute(ropts, func(r *runtime.Run) runtime.Value {
		return s.main(r, opts)
	})
	if s.m != nil {
		stats.Ticks, stats.PC = s.m.Ticks(), s.m.PC()
		if s.m.State() == vm.Faulted {
			stats.Fault = s.m.Fault()
		}
		if th, ok := s.m.TraceHashBlocked(); ok {
			stats.TraceHash = &th
		}
		if !opts.Trace && s.pool != nil {
			s.pool.fwd.r = nil
			a.spare = s.pool
		}
		if s.values != nil {
			a.spareValues = s.values
		}
	}
	if s.in != nil {
		// The result, which the commands write on standard output, is
		// the run's last output: the output hash covers it with the
		// frames.
		s.out.Add(0, res.AppendJSON(nil))
		stats.Input, stats.Output = s.in.Sum(), s.out.Sum()
	}
	return res, stats
}

// agentRun is the state of one run: the machine, its value store, and
// the frames the program has sent and the host not yet read.
type agentRun struct {
	a      *Agent
	m      *vm.Machine
	stats  *AgentStats
	pool   *pooled
	cur    *runtime.Run // the run (or branch) whose effects are serviced now
	values *ValueHost
	in     *MessageHash
	out    *MessageHash
	// pending holds, per channel, the bytes sent and not yet read as
	// frames.
	pending [vm.NumChannels][]byte
	// end is how the machine of a parallel branch ended (release).
	end vm.Outcome
}

// HostCall runs a builtin (vm.HostCalls), counting the calls and their
// ticks for the run's figures.
func (s *agentRun) HostCall(m *vm.Machine, imm uint32) (uint64, vm.Fault) {
	t, f := s.values.HostCall(m, imm)
	s.stats.HostCalls++
	s.stats.HostCallTicks += t + hcallCost
	return t, f
}

// Send receives what the program sends (vm.Sender).
func (s *agentRun) Send(ch uint8, msg []byte) {
	if s.out != nil {
		s.out.Add(ch, msg)
	}
	s.pending[ch] = append(s.pending[ch], msg...)
}

// main runs the program's main function on run r and returns the run's
// output.
func (s *agentRun) main(r *runtime.Run, opts AgentOptions) runtime.Value {
	a := s.a
	values := opts.Values
	if values == 0 {
		values = DefaultValueBytes
	}
	var vh *ValueHost
	if p := a.spareValues; p != nil && p.Limit() == values {
		a.spareValues = nil
		p.Reset()
		vh = p
	} else {
		var err error
		if vh, err = NewValueHost(a.Meta, values); err != nil {
			r.StopHost(runtime.StatusFailed, "config", "the agent program cannot run on this host: "+err.Error())
		}
	}
	s.values = vh
	vh.Check = func() { s.cur.Tick(a.tick.At()) }
	cfg := opts.Limits.Config(opts.Trace)
	if p := a.spare; p != nil && !opts.Trace && p.cfg == cfg {
		a.spare = nil
		p.fwd.r = s
		p.m.Reset()
		s.m, s.pool = p.m, p
	} else {
		fwd := &forward{r: s}
		cfg.Host = fwd
		s.m = vm.New(a.Image, cfg, fwd)
		cfg.Host = nil
		if !opts.Trace && s.m.State() != vm.Faulted {
			s.pool = &pooled{m: s.m, cfg: cfg, fwd: fwd}
		}
	}
	s.cur = r
	vh.Attach(s.m, nil)
	if s.m.State() == vm.Faulted {
		need, _ := vm.Need(a.Image, cfg.Stack)
		r.StopHost(runtime.StatusBudgetExceeded, "limit.memory", fmt.Sprintf(
			"the Forge Machine's memory quota (--memory) of %d bytes cannot hold the program: it needs %d", cfg.Memory, need))
	}
	// The run's input enters the sandbox as much as a reply does: the
	// input hash covers it, as a message on channel 2 (standard input),
	// so that a proof binds it.
	if s.in != nil {
		s.in.Add(vm.ChanStdin, runtime.AppendJSON(nil, r.Input()))
	}
	if a.Meta.Input {
		s.m.SetRegister(0, s.put(r, r.Input()))
	}
	s.drive(r)
	if !a.Meta.Result {
		return runtime.Unit()
	}
	return s.get(r, s.m.Register(0), "main's result")
}

// drive runs the machine on run r until it halts, servicing the effects
// it asks for; a fault stops the run.
func (s *agentRun) drive(r *runtime.Run) {
	m := s.m
	outer := s.cur
	s.cur = r
	defer func() { s.cur = outer }()
	for {
		switch m.Run() {
		case vm.Halted:
			return
		case vm.Ready: // a TICK yielded
		case vm.Blocked:
			s.service(r, m.BlockedOn())
		case vm.Faulted:
			s.fault(r)
		}
	}
}

// fault stops run r for the machine's fault: a sandbox's limit is
// budget_exceeded (of kind limit.ticks, limit.memory, limit.depth or
// limit.output), any other fault failed.
func (s *agentRun) fault(r *runtime.Run) {
	m := s.m
	f := m.Fault()
	where := fmt.Sprintf(" at pc 0x%04x after %d ticks", m.PC(), m.Ticks())
	switch f {
	case vm.OutOfTicks:
		r.StopHost(runtime.StatusBudgetExceeded, "limit.ticks", fmt.Sprintf("the Forge Machine ran out of ticks: the budget (--ticks) is %d", m.Budget())+where)
	case vm.OutOfMemory:
		msg := "the Forge Machine ran out of memory" + where
		if e := s.values.Err(); e != "" {
			msg += ": " + e
		}
		r.StopHost(runtime.StatusBudgetExceeded, "limit.memory", msg)
	case vm.StackOverflow:
		r.StopHost(runtime.StatusBudgetExceeded, "limit.depth", "the calls nest deeper than the Forge Machine's stack (--stack) holds (a recursion without end?)"+where)
	case vm.OutputQuota:
		r.StopHost(runtime.StatusBudgetExceeded, "limit.output", "the program sent more than the output quota (--output)"+where)
	case vm.UserFault:
		switch m.UserCode() {
		case 0:
			r.StopHost(runtime.StatusFailed, "unreachable", "unreachable code reached"+where)
		case 2:
			r.StopHost(runtime.StatusBudgetExceeded, "limit.depth", "the calls nest deeper than the frames of the Forge Machine's memory (--memory) hold (a recursion without end?)"+where)
		}
		r.StopHost(runtime.StatusFailed, "fault", "the program faulted USER_FAULT "+strconv.FormatUint(uint64(m.UserCode()), 10)+where)
	case vm.HostFault:
		if p := s.values.Stop(); p != nil {
			panic(p) // a runtime stop inside a builtin: the run ends as on the go target
		}
		r.StopHost(runtime.StatusFailed, "fault", "the Forge Machine faulted HOST_FAULT"+where+": "+s.values.Err())
	}
	r.StopHost(runtime.StatusFailed, "fault", "the Forge Machine faulted "+f.String()+where)
}

// errProtocol is the error of a program that does not speak the ABI.
var errProtocol = errors.New("the program broke the agent ABI")

// protocol stops run r: the program broke the ABI (only a program not
// made by genesisc, or a bug of it, does).
func (s *agentRun) protocol(r *runtime.Run, format string, args ...any) {
	r.StopHost(runtime.StatusFailed, "fault", fmt.Sprintf("%v at pc 0x%04x: %s", errProtocol, s.m.PC(), fmt.Sprintf(format, args...)))
}

// service answers the request the machine is blocked on, on channel ch.
func (s *agentRun) service(r *runtime.Run, ch uint8) {
	if s.m.BlockedPolling() {
		s.protocol(r, "POLL on channel %d", ch)
	}
	buf := s.pending[ch]
	if len(buf) < 8 {
		s.protocol(r, "RECV on channel %d with no request sent on it", ch)
	}
	n := uint64(buf[0]) | uint64(buf[1])<<8 | uint64(buf[2])<<16 | uint64(buf[3])<<24 |
		uint64(buf[4])<<32 | uint64(buf[5])<<40 | uint64(buf[6])<<48 | uint64(buf[7])<<56
	if n != uint64(len(buf)-8) {
		s.protocol(r, "a request frame of %d bytes on channel %d holds %d", n, ch, len(buf)-8)
	}
	req, err := agentabi.ParseRequest(buf[8:])
	s.pending[ch] = buf[:0]
	if err != nil {
		s.protocol(r, "channel %d: %v", ch, err)
	}
	if req.Op.Channel() != ch {
		s.protocol(r, "%s request on channel %d, not %d", req.Op, ch, req.Op.Channel())
	}
	if req.Site >= len(s.a.sites) {
		s.protocol(r, "%s request names site %d of %d", req.Op, req.Site, len(s.a.sites))
	}
	st := s.a.sites[req.Site].At(req.Iters...)
	s.stats.Effects++
	arg := func(i int) runtime.Value { return s.get(r, req.Args[i], req.Op.String()+"'s operand") }
	out := runtime.Unit()
	switch req.Op {
	case agentabi.OpLLM:
		out = r.LLM(st, arg(0), arg(1))
	case agentabi.OpJudge:
		out = r.Judge(st, arg(0), arg(1))
	case agentabi.OpTool:
		out = r.Tool(st, arg(0), arg(1))
	case agentabi.OpEmit:
		r.Emit(st, arg(0), arg(1))
	case agentabi.OpStateGet:
		out = r.StateGet(st, arg(0))
	case agentabi.OpStatePut:
		r.StatePut(st, arg(0), arg(1))
	case agentabi.OpWait:
		out = r.Wait(st, arg(0))
	case agentabi.OpStop:
		r.Stop(st, arg(0), arg(1))
		s.protocol(r, "the stop returned") // Stop does not return
	case agentabi.OpTrace:
		r.Trace(st, arg(0), arg(1))
	case agentabi.OpExport:
		r.ExportAt(st, arg(0), arg(1))
	case agentabi.OpParallel, agentabi.OpParallelEach:
		out = s.parallel(r, req, st)
	}
	reply := agentabi.Reply(s.put(r, out))
	if s.in != nil {
		s.in.Add(ch, reply)
	}
	s.m.Deliver(ch, reply)
}

// parallel runs a parallel block: each branch function called on a
// machine of its own, a copy of this one (vm.Machine.Branch), with a
// value store of its own (ValueHost.Branch), on the branch's own run.
// The runtime runs the branches at once, at most the block's limit (and
// the host's MaxConcurrency) at a time, or one after another when the run
// is sequential (AgentOptions.Sequential); either way, the block's
// outcome is the same (see join).
func (s *agentRun) parallel(r *runtime.Run, req agentabi.Request, st runtime.Step) runtime.Value {
	site := s.a.Meta.Sites[req.Site]
	fns := s.a.branches[req.Site]
	limit := int64(req.Args[0])
	arg := req.Args[1]
	if len(fns) == 0 {
		s.protocol(r, "%s request at site %d, which has no branches", req.Op, req.Site)
	}
	var (
		kids    []*agentRun
		ended   []bool
		results []runtime.Value
	)
	// branch runs branch i: function fn on args.
	branch := func(i int, br *runtime.Run, fn uint64, args ...runtime.Value) runtime.Value {
		k := s.branch(br)
		kids[i] = k
		defer k.release()
		v := k.call(br, fn, args...)
		ended[i] = true
		return v
	}
	var p any
	if req.Op == agentabi.OpParallelEach {
		items := s.get(r, arg, "parallel.each's items")
		elems := items.Elems()
		kids, ended = make([]*agentRun, len(elems)), make([]bool, len(elems))
		branches := make([]func(*runtime.Run) runtime.Value, len(elems))
		for i, item := range elems {
			branches[i] = func(br *runtime.Run) runtime.Value { return branch(i, br, fns[0], item) }
		}
		p = catch(func() { results = r.Parallel(st, int(limit), branches...) })
	} else {
		argv := s.get(r, arg, "parallel's argument")
		kids, ended = make([]*agentRun, len(fns)), make([]bool, len(fns))
		if len(site.Waits) == 0 {
			branches := make([]func(*runtime.Run) runtime.Value, len(fns))
			for i, f := range fns {
				branches[i] = func(br *runtime.Run) runtime.Value { return branch(i, br, f, argv) }
			}
			p = catch(func() { results = r.Parallel(st, int(limit), branches...) })
		} else {
			branches := make([]func(*runtime.Run, []runtime.Value) runtime.Value, len(fns))
			for i, f := range fns {
				if i < len(site.Waits) && len(site.Waits[i]) > 0 {
					branches[i] = func(br *runtime.Run, deps []runtime.Value) runtime.Value {
						return branch(i, br, f, argv, runtime.List(deps...))
					}
				} else {
					branches[i] = func(br *runtime.Run, _ []runtime.Value) runtime.Value { return branch(i, br, f, argv) }
				}
			}
			p = catch(func() { results = r.ParallelAfter(st, int(limit), site.Waits, branches...) })
		}
	}
	s.join(r, req.Op.Channel(), kids, ended, p)
	return runtime.List(results...)
}

// catch calls f and returns what it panicked with (a runtime stop), nil
// when it returned.
func catch(f func()) (p any) {
	defer func() { p = recover() }()
	f()
	return nil
}

// join charges this machine for the branches of a block, in branch
// order, once they have all ended (whatever the order they ran in):
// their figures are added to the run's, and on a run that is proven the
// input and output hashes of each branch's frames go into the run's, as
// one message each on the block's channel ch. vm.Machine.Join adds each
// branch's ticks and output to the machine's and its trace hash to the
// machine's trace. The joining stops at the first branch that did not
// end (its stop, p, stops the run) or whose join faulted the machine: its
// ticks or output go past what the machine had left when the block
// started, or it faulted. The run then stops at the lowest-numbered of
// the two: the machine's fault (budget_exceeded, limit.ticks or
// limit.output) when the join faulted first, else the branch's own stop,
// which p is. Every branch of a block gets what was left when the block
// started, so the sum of their ticks, not the time they ran, decides
// where a block runs out (docs/decisions.md, "Concurrent parallel
// branches on the Forge Machine").
func (s *agentRun) join(r *runtime.Run, ch uint8, kids []*agentRun, ended []bool, p any) {
	left := s.m.Budget() - s.m.Ticks()
	for i, k := range kids {
		if k == nil {
			continue // a branch that waited for one that stopped does not run
		}
		s.stats.Effects += k.stats.Effects
		s.stats.HostCalls += k.stats.HostCalls
		s.stats.HostCallTicks += k.stats.HostCallTicks
		if s.in != nil {
			in, out := k.in.Sum(), k.out.Sum()
			s.in.Add(ch, in[:])
			s.out.Add(ch, out[:])
		}
		if f := s.m.Join(k.end); f != vm.NoFault {
			if ended[i] {
				s.crossed(r, f, i, left)
			}
			break
		}
		if !ended[i] {
			break
		}
	}
	if p != nil {
		panic(p)
	}
}

// crossed stops run r for the fault f of the machine that joining
// branch i gave it, a branch that ended: the branches' ticks (left were
// left when the block started) or output, summed in branch order, went
// past what the machine had from branch i on.
func (s *agentRun) crossed(r *runtime.Run, f vm.Fault, i int, left uint64) {
	where := fmt.Sprintf("the branches of the parallel block at pc 0x%04x", s.m.PC())
	switch f {
	case vm.OutOfTicks:
		r.StopHost(runtime.StatusBudgetExceeded, "limit.ticks", fmt.Sprintf(
			"the Forge Machine ran out of ticks: the budget (--ticks) is %d, and %s used more than the %d ticks left when it started, from branch %d on",
			s.m.Budget(), where, left, i))
	case vm.OutputQuota:
		r.StopHost(runtime.StatusBudgetExceeded, "limit.output", fmt.Sprintf(
			"the program sent more than the output quota (--output): %s sent more than it had left when it started, from branch %d on", where, i))
	}
	s.fault(r)
}

// branch returns the run of a parallel branch on run br: a copy of this
// run's machine, waiting for the block's reply, and a store of its own.
func (s *agentRun) branch(br *runtime.Run) *agentRun {
	k := &agentRun{a: s.a, stats: &AgentStats{}, cur: br}
	if s.in != nil {
		k.in, k.out = NewMessageHash(), NewMessageHash()
	}
	k.values = s.values.Branch()
	k.values.Check = func() { k.cur.Tick(s.a.tick.At()) }
	k.m = s.m.BranchInto(s.a.takeBranch(), k, k)
	k.values.Attach(k.m, nil)
	return k
}

// release ends a branch's run: it keeps what the join needs of its
// machine, and gives the machine back for other branches to reuse.
func (s *agentRun) release() {
	s.end = s.m.Outcome()
	s.a.giveBranch(s.m)
	s.m, s.values = nil, nil
}

// call calls the function at code address fn with args on run br, on the
// branch's machine, and returns its result.
func (s *agentRun) call(br *runtime.Run, fn uint64, args ...runtime.Value) runtime.Value {
	words := make([]uint64, len(args))
	for i, v := range args {
		words[i] = s.put(br, v)
	}
	if f := s.m.Enter(fn, s.a.ret, words...); f != vm.NoFault {
		s.fault(br)
	}
	s.drive(br)
	return s.get(br, s.m.Register(0), "a branch's result")
}

// put stores v and returns its handle; a full store stops run r.
func (s *agentRun) put(r *runtime.Run, v runtime.Value) uint64 {
	h, f := s.values.Put(v)
	if f != vm.NoFault {
		r.StopHost(runtime.StatusBudgetExceeded, "limit.memory", "the value store is full: "+s.values.Err())
	}
	return h
}

// get returns the value of handle h, what names the word; a word that is
// no live handle stops run r.
func (s *agentRun) get(r *runtime.Run, h uint64, what string) runtime.Value {
	v, ok := s.values.Get(h)
	if !ok {
		s.protocol(r, "%s, 0x%x, is no value's handle", what, h)
	}
	return v
}

// hcallCost is HCALL's own cost, which every builtin pays.
var hcallCost = bytecode.Lookup(bytecode.HCALL).Cost
