// Package forge_test holds the Forge Machine's golden suite: one program
// per txtar file, run on vm.Machine, with its observable results pinned.
//
// A case opens with the header (docs/testing.md)
//
//	test run
//	target forge
//
// and has these sections:
//
//	in.fasm     the program, in Forge assembly (entry: the first instruction)
//	in/stdin    optional: delivered on channel 2, as one message, before the run
//	            (txtar sections end in a newline: so does the message)
//	in/config   optional: one setting per line
//	                ticks N          the budget (default 1000000)
//	                memory N         the memory quota (default 65536)
//	                stack N          the stack size (default 4096)
//	                grant C C ...    the granted channels (default 0 1 2)
//	                deliver C "s"    a message queued on channel C before the run
//	                resume C "s"     a message delivered each time the machine
//	                                 blocks, in order (C is the channel; the
//	                                 machine must be blocked on it)
//	                budgets B ...    further runs with these budgets: a number,
//	                                 or used, used-K, used+K (the first run's ticks)
//	out/result  every stop of the run (yields, blocks, the end: state, fault,
//	            pc, ticks), the nonzero registers, sp when the stack is not
//	            empty, messages sent on channels other than 0 and 1; then one
//	            line per further budget
//	out/stdout  the bytes sent on channel 0 (when there are any)
//	out/stderr  the bytes sent on channel 1 (when there are any)
//
// go test ./tests/forge -update rewrites the out/ sections.
package forge_test

import (
	"fmt"
	"strconv"
	"strings"
	"testing"

	bc "github.com/genesis-toolchain/genesis/forge/bytecode"
	"github.com/genesis-toolchain/genesis/forge/vm"
	"github.com/genesis-toolchain/genesis/frontend/fasm"
	"github.com/genesis-toolchain/genesis/internal/filetest"
)

type delivery struct {
	ch   uint8
	data string
}

type config struct {
	vm.Config
	deliver []delivery
	resume  []delivery
	budgets []string
}

func parseConfig(text string) (config, error) {
	cfg := config{Config: vm.Config{Ticks: 1_000_000, Memory: 65536, Stack: 4096}}
	for i, line := range strings.Split(text, "\n") {
		key, rest, _ := strings.Cut(strings.TrimSpace(line), " ")
		rest = strings.TrimSpace(rest)
		bad := func(err error) error { return fmt.Errorf("config line %d: %q: %v", i+1, line, err) }
		var err error
		switch key {
		case "", "#":
		case "ticks":
			cfg.Ticks, err = strconv.ParseUint(rest, 0, 64)
		case "memory":
			cfg.Memory, err = strconv.ParseUint(rest, 0, 64)
		case "stack":
			cfg.Stack, err = strconv.ParseUint(rest, 0, 64)
		case "grant":
			for _, f := range strings.Fields(rest) {
				var ch uint64
				if ch, err = strconv.ParseUint(f, 10, 4); err != nil {
					break
				}
				cfg.Grant |= 1 << ch
			}
		case "deliver", "resume":
			chs, msg, _ := strings.Cut(rest, " ")
			var ch uint64
			var d string
			if ch, err = strconv.ParseUint(chs, 10, 8); err == nil {
				d, err = strconv.Unquote(msg)
			}
			if key == "deliver" {
				cfg.deliver = append(cfg.deliver, delivery{uint8(ch), d})
			} else {
				cfg.resume = append(cfg.resume, delivery{uint8(ch), d})
			}
		case "budgets":
			cfg.budgets = strings.Fields(rest)
		default:
			err = fmt.Errorf("unknown setting %q", key)
		}
		if err != nil {
			return cfg, bad(err)
		}
	}
	return cfg, nil
}

// outputs collects what a machine sends.
type outputs struct {
	stdout, stderr strings.Builder
	msgs           [2]int // messages on stdout and stderr
	other          []string
}

func (o *outputs) Send(ch uint8, msg []byte) {
	if ch < 2 {
		o.msgs[ch]++
	}
	switch ch {
	case vm.ChanStdout:
		o.stdout.Write(msg)
	case vm.ChanStderr:
		o.stderr.Write(msg)
	default:
		o.other = append(o.other, fmt.Sprintf("send %d %q", ch, msg))
	}
}

// run executes the program with the given budget to its end (resuming
// after yields and, while resume messages last, after blocks) and
// describes every stop.
func run(t *testing.T, img *vm.Image, cfg config, budget uint64) (*vm.Machine, *outputs, []string) {
	c := cfg.Config
	c.Ticks = budget
	out := &outputs{}
	m := vm.New(img, c, out)
	for _, d := range cfg.deliver {
		m.Deliver(d.ch, []byte(d.data))
	}
	resume := cfg.resume
	var stops []string
	for range 10000 {
		m.Run()
		stops = append(stops, where(img, m))
		if m.Ticks() > budget {
			t.Errorf("budget %d: %d ticks used", budget, m.Ticks())
		}
		switch {
		case m.State() == vm.Ready:
			continue
		case m.State() == vm.Blocked && len(resume) > 0:
			if m.BlockedOn() != resume[0].ch {
				t.Fatalf("blocked on channel %d, the next resume message is for %d", m.BlockedOn(), resume[0].ch)
			}
			m.Deliver(resume[0].ch, []byte(resume[0].data))
			stops = append(stops, fmt.Sprintf("deliver %d %q", resume[0].ch, resume[0].data))
			resume = resume[1:]
			continue
		}
		return m, out, stops
	}
	t.Fatal("more than 10000 stops")
	return nil, nil, nil
}

// where describes a stopped machine: state, fault, pc and the instruction
// there, ticks.
func where(img *vm.Image, m *vm.Machine) string {
	var sb strings.Builder
	switch m.State() {
	case vm.Ready:
		sb.WriteString("yield")
	case vm.Blocked:
		fmt.Fprintf(&sb, "BLOCKED on %d", m.BlockedOn())
	case vm.Faulted:
		fmt.Fprintf(&sb, "FAULTED %v", m.Fault())
		if m.Fault() == vm.UserFault {
			fmt.Fprintf(&sb, " code %#x", m.UserCode())
		}
	default:
		sb.WriteString(m.State().String())
	}
	code := img.Program().Code
	inst := "end of code"
	if in, err := bc.DecodeAt(code, int(m.PC())); m.PC() < uint64(len(code)) && err == nil {
		inst = in.Op.String()
	}
	fmt.Fprintf(&sb, " at %#x (%s) after %d ticks", m.PC(), inst, m.Ticks())
	return sb.String()
}

// budgetValue resolves a budgets entry: N, used, used-K or used+K.
func budgetValue(s string, used uint64) (uint64, error) {
	if rest, ok := strings.CutPrefix(s, "used"); ok {
		if rest == "" {
			return used, nil
		}
		k, err := strconv.ParseUint(rest[1:], 10, 64)
		switch {
		case err != nil:
			return 0, err
		case rest[0] == '-' && k <= used:
			return used - k, nil
		case rest[0] == '+':
			return used + k, nil
		}
		return 0, fmt.Errorf("bad budget %q", s)
	}
	return strconv.ParseUint(s, 0, 64)
}

// suite runs the cases: "test run" on "target forge", the one target
// a program in Forge assembly runs on.
var suite = filetest.Suite{
	Checks:  map[string]filetest.Check{"run": checkRun},
	Targets: []string{"forge"},
	Outputs: map[string][]string{"run": {"out/result", "out/stdout", "out/stderr"}},
}

func TestGolden(t *testing.T) {
	filetest.Run(t, "*.txtar", suite)
}

// checkRun assembles in.fasm and runs it on vm.Machine with the case's
// configuration and, in turn, each further budget.
func checkRun(t *testing.T, c *filetest.Case, d filetest.Directive) {
	if !c.On("forge") || len(d.Args) != 0 {
		t.Fatalf("test %s: a run takes no arguments and needs \"target forge\"", d)
	}
	src, ok := c.File("in.fasm")
	if !ok {
		t.Fatal("no in.fasm section")
	}
	p, diags := fasm.Assemble(c.Path, []byte(src))
	if diags.HasErrors() {
		t.Fatalf("assembling in.fasm:\n%v", diags)
	}
	text, _ := c.File("in/config")
	cfg, err := parseConfig(text)
	if err != nil {
		t.Fatal(err)
	}
	if stdin, ok := c.File("in/stdin"); ok {
		cfg.deliver = append([]delivery{{vm.ChanStdin, stdin}}, cfg.deliver...)
	}
	img, err := vm.NewImage(p)
	if err != nil {
		t.Fatalf("loading: %v", err)
	}

	m, out, stops := run(t, img, cfg, cfg.Ticks)
	var res strings.Builder
	fmt.Fprintf(&res, "budget %d\n", cfg.Ticks)
	for _, s := range stops {
		res.WriteString(s + "\n")
	}
	res.WriteString(registers(m))
	fmt.Fprintf(&res, "stdout %d bytes / %d messages, stderr %d bytes / %d messages\n",
		out.stdout.Len(), out.msgs[0], out.stderr.Len(), out.msgs[1])
	if m.Memory() != nil && m.SP() != cfg.Memory {
		fmt.Fprintf(&res, "sp = %d (%d bytes on the stack)\n", m.SP(), cfg.Memory-m.SP())
	}
	for _, o := range out.other {
		res.WriteString(o + "\n")
	}
	final := stops[len(stops)-1]

	for _, b := range cfg.budgets {
		budget, err := budgetValue(b, m.Ticks())
		if err != nil {
			t.Fatal(err)
		}
		_, outb, stopsb := run(t, img, cfg, budget)
		last := stopsb[len(stopsb)-1]
		fmt.Fprintf(&res, "budget %d (%s): %s; stdout %d bytes\n", budget, b, last, outb.stdout.Len())
		// Metering is exact: any budget that covers a finished run
		// ends it in the same place (registers may differ: BUDGET).
		finished := m.State() == vm.Halted || m.State() == vm.Faulted && m.Fault() != vm.OutOfTicks
		if finished && budget >= m.Ticks() && (last != final || outb.stdout.String() != out.stdout.String()) {
			t.Errorf("budget %d ends %q, the first run %q", budget, last, final)
		}
	}
	c.Check("out/result", res.String())
	if s := out.stdout.String(); s != "" {
		c.Check("out/stdout", s)
	}
	if s := out.stderr.String(); s != "" {
		c.Check("out/stderr", s)
	}
}

// registers lists the nonzero registers, one a line.
func registers(m *vm.Machine) string {
	var sb strings.Builder
	for r := range 256 {
		if v := m.Register(uint8(r)); v != 0 {
			fmt.Fprintf(&sb, "r%d = %d (%#x)\n", r, int64(v), v)
		}
	}
	return sb.String()
}
