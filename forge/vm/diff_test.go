package vm_test

import (
	"bytes"
	"fmt"
	"strings"

	bc "github.com/genesis-toolchain/genesis/forge/bytecode"
	"github.com/genesis-toolchain/genesis/forge/vm"
)

// recorder collects what a machine sends.
type recorder struct{ msgs []sentMsg }

func (r *recorder) Send(ch uint8, msg []byte) {
	r.msgs = append(r.msgs, sentMsg{ch, string(msg)})
}

// outcome is where a differential run ended.
type outcome struct {
	state  vm.State
	fault  vm.Fault
	ticks  uint64
	stops  int // Run calls made
	yields int // of which returned READY after a TICK
	// bytes is true for an OUT_OF_TICKS at a SEND or RECV whose fixed 3
	// ticks fit the budget but not the bytes it would move.
	bytes bool
	// hostTicks is true for an OUT_OF_TICKS at an HCALL whose host
	// function reported more ticks than the budget had left.
	hostTicks bool
	nested    int // nested calls made (Enter accepted)
}

// differential runs tc with the given budget on the fast interpreter and
// on the reference, Run for Run: after every return from Run (halt, fault,
// block, TICK yield) the two machines must agree on everything a host can
// observe. A blocked machine gets the next resume message, if any, on the
// channel it waits on.
func differential(img *vm.Image, tc testCase, budget uint64) (outcome, error) {
	cfg := tc.cfg
	cfg.Ticks = budget
	out := &recorder{}
	m := vm.New(img, cfg, out)
	r := newRef(tc.prog, cfg)
	for _, d := range tc.input {
		m.Deliver(d.ch, d.data)
		r.Deliver(d.ch, d.data)
	}
	resume, enters := tc.resume, tc.enters
	yields, nested := 0, 0
	for stops := 1; ; stops++ {
		m.Run()
		r.Run()
		if err := agree(m, out, r, cfg); err != nil {
			return outcome{}, fmt.Errorf("budget %d, after Run #%d: %w", budget, stops, err)
		}
		switch {
		case m.State() == vm.Ready:
			yields++ // a TICK yielded
			continue
		case m.State() == vm.Blocked && len(enters) > 0:
			// The host runs a function while the program waits, then
			// restores the program (docs/forge.md, "Nested calls").
			e := enters[0]
			enters = enters[1:]
			ms, rs := m.Save(), r.save()
			fm, fr := m.Enter(e.entry, e.ret, e.args...), r.enter(e.entry, e.ret, e.args...)
			if fm != fr {
				return outcome{}, fmt.Errorf("budget %d, Enter(%#x, %#x) = %v, reference %v", budget, e.entry, e.ret, fm, fr)
			}
			for k := 0; fm == vm.NoFault && k < 4; k++ {
				m.Run()
				r.Run()
				if err := agree(m, out, r, cfg); err != nil {
					return outcome{}, fmt.Errorf("budget %d, after Run #%d, in the nested call %+v: %w", budget, stops, e, err)
				}
				if m.State() != vm.Ready {
					break
				}
			}
			if fm == vm.NoFault {
				nested++
			}
			m.Restore(ms)
			r.restore(rs)
			if err := agree(m, out, r, cfg); err != nil {
				return outcome{}, fmt.Errorf("budget %d, after Run #%d, restored: %w", budget, stops, err)
			}
			continue
		case m.State() == vm.Blocked && len(resume) > 0:
			ch := m.BlockedOn()
			m.Deliver(ch, resume[0].data)
			r.Deliver(ch, resume[0].data)
			resume = resume[1:]
			continue
		}
		o := outcome{state: m.State(), fault: m.Fault(), ticks: m.Ticks(), stops: stops, yields: yields, hostTicks: r.hostTicks, nested: nested}
		if o.fault == vm.OutOfTicks && budget-o.ticks >= 3 {
			in, err := bc.DecodeAt(tc.prog.Code, int(m.PC()))
			o.bytes = err == nil && (in.Op == bc.SEND || in.Op == bc.RECV)
		}
		return o, nil
	}
}

// agree compares every observable of the fast machine m with the
// reference r.
func agree(m *vm.Machine, out *recorder, r *refMachine, cfg vm.Config) error {
	var errs []string
	check := func(what string, got, want any) {
		if got != want {
			errs = append(errs, fmt.Sprintf("%s = %v, reference %v", what, got, want))
		}
	}
	check("state", m.State(), r.state)
	check("fault", m.Fault(), r.fault)
	check("user code", m.UserCode(), r.userCode)
	check("pc", m.PC(), r.pc)
	check("ticks", m.Ticks(), r.ticks)
	check("sp", m.SP(), r.sp)
	if m.State() == vm.Blocked {
		check("blocked on", m.BlockedOn(), r.blockCh)
		in, err := bc.DecodeAt(r.code, int(r.pc))
		check("blocked polling", m.BlockedPolling(), err == nil && in.Op == bc.POLL)
	} else if m.BlockedPolling() {
		errs = append(errs, "blocked polling, but not blocked")
	}
	if m.Ticks() > cfg.Ticks {
		errs = append(errs, fmt.Sprintf("ticks %d exceed the budget %d", m.Ticks(), cfg.Ticks))
	}
	for i := range 256 {
		if g, w := m.Register(uint8(i)), r.regs[i]; g != w {
			errs = append(errs, fmt.Sprintf("r%d = %#x, reference %#x", i, g, w))
		}
	}
	if r.mem != nil && uint64(len(m.Memory())) != cfg.Memory {
		errs = append(errs, fmt.Sprintf("memory is %d bytes, configured %d", len(m.Memory()), cfg.Memory))
	}
	if !bytes.Equal(m.Memory(), r.mem) {
		errs = append(errs, "memory differs: "+firstDiff(m.Memory(), r.mem))
	}
	if fmt.Sprint(out.msgs) != fmt.Sprint(r.sent) {
		errs = append(errs, fmt.Sprintf("sent %q, reference %q", out.msgs, r.sent))
	}
	// Channel traffic is paid for: whatever a run sent and received fits
	// in bc.BytesPerTick bytes per tick used.
	traffic := r.recvd
	for _, msg := range out.msgs {
		traffic += uint64(len(msg.data))
	}
	if traffic > bc.BytesPerTick*m.Ticks() {
		errs = append(errs, fmt.Sprintf("%d bytes sent and received in %d ticks: more than %d a tick", traffic, m.Ticks(), bc.BytesPerTick))
	}
	if h, ok := m.TraceHash(); ok != (cfg.Trace && (r.state == vm.Halted || r.state == vm.Faulted)) {
		errs = append(errs, fmt.Sprintf("trace hash available = %v", ok))
	} else if want := r.traceHash(); ok && h != want {
		errs = append(errs, fmt.Sprintf("trace hash %x, reference %x", h[:8], want[:8]))
	}
	if errs != nil {
		return fmt.Errorf("%s", strings.Join(errs, "; "))
	}
	return nil
}

func firstDiff(a, b []byte) string {
	if len(a) != len(b) {
		return fmt.Sprintf("lengths %d and %d", len(a), len(b))
	}
	for i := range a {
		if a[i] != b[i] {
			return fmt.Sprintf("first at address %d: %#x, reference %#x", i, a[i], b[i])
		}
	}
	return ""
}

// disasm lists a program for failure messages.
func disasm(tc testCase) string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "config %+v, input %q, resume %q\n", tc.cfg, tc.input, tc.resume)
	insts, offs, err := bc.Insts(tc.prog.Code)
	if err != nil {
		return err.Error()
	}
	for i, in := range insts {
		fmt.Fprintf(&sb, "%5d  %-6s a=%d b=%d c=%d imm=%#x\n", offs[i], in.Op, in.A, in.B, in.C, in.Imm)
	}
	fmt.Fprintf(&sb, "data %q (heap at %d)\n", tc.prog.Data, tc.prog.HeapStart())
	return sb.String()
}
