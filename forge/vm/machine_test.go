package vm_test

import (
	"fmt"
	"strings"
	"sync"
	"testing"

	bc "github.com/genesis-toolchain/genesis/forge/bytecode"
	"github.com/genesis-toolchain/genesis/forge/vm"
)

func image(t testing.TB, p *bc.Program) *vm.Image {
	t.Helper()
	img, err := vm.NewImage(p)
	if err != nil {
		t.Fatal(err)
	}
	return img
}

// echo receives up to 4 bytes at a time from stdin into the heap and
// sends them back on stdout, counting messages in r4, until a message
// leaves the buffer's first byte zero (an empty one does). It blocks
// whenever stdin is empty.
func echo() *bc.Program {
	var b builder
	b.liFix(1, fixHeap, 0, 0) // 0: r1 = buffer
	b.li(5, 1)                // 16
	top := b.here()
	b.mem(bc.STORE, 0, 1, 0)  // 32: buffer[0] = 0
	b.op(bc.RECV, 1, 0, 2, 4) // 40
	b.mem(bc.LOAD, 3, 1, 0)   // 48
	done := b.jump(bc.JZ, 3, 0, -1)
	b.rrr(bc.ADD, 4, 4, 5)    // 64
	b.op(bc.SEND, 1, 0, 0, 4) // 72
	b.jump(bc.JMP, 0, 0, top) // 80
	b.insts[done].ref = b.here()
	b.op(bc.HALT, 0, 0, 0, 0) // 88
	return b.program(nil, 4096)
}

func TestConcurrentMachinesShareImage(t *testing.T) {
	img := image(t, fibProgram(15))
	type result struct {
		state vm.State
		ticks uint64
		r0    uint64
		out   string
		trace [32]byte
	}
	const n = 500
	results := make([]result, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			out := &recorder{}
			m := vm.New(img, vm.Config{Ticks: 1 << 40, Memory: 1 << 14, Stack: 1 << 12, Trace: true}, out)
			for m.Run() == vm.Ready {
			}
			h, _ := m.TraceHash()
			results[i] = result{m.State(), m.Ticks(), m.Register(0), fmt.Sprint(out.msgs), h}
		}()
	}
	wg.Wait()
	want := results[0]
	if want.state != vm.Halted || want.r0 != 610 {
		t.Fatalf("fib(15): state %v r0 %d, want HALTED 610", want.state, want.r0)
	}
	for i, r := range results {
		if r != want {
			t.Fatalf("machine %d: %+v, machine 0: %+v", i, r, want)
		}
	}
}

func TestMachineSize(t *testing.T) {
	if s := vm.Size(); s >= 1024 || s <= 0 {
		t.Errorf("vm.Size() = %d bytes per machine beyond memory and registers, want 0 < size < 1024", s)
	}
}

func TestNewImageRejects(t *testing.T) {
	var b builder
	b.jump(bc.JMP, 0, 0, 0)
	p := b.program(nil, 0)
	p.Code[4] = 4 // JMP 4: not an instruction start
	if _, err := vm.NewImage(p); err == nil || !strings.Contains(err.Error(), "not the start of an instruction") {
		t.Errorf("NewImage of a bad jump: %v", err)
	}
	imp := &bc.Program{
		Code:    (bc.Inst{Op: bc.CALL}).Append(nil),
		Imports: []bc.Import{{Symbols: []string{"f"}}},
		Relocs:  []bc.Reloc{{Section: bc.SectionCode, Kind: bc.RelocTarget, Offset: 0, Symbol: "f"}},
	}
	if _, err := vm.NewImage(imp); err == nil || !strings.Contains(err.Error(), "link it first") {
		t.Errorf("NewImage of a program with imports: %v", err)
	}
	if _, err := vm.NewImage(&bc.Program{}); err == nil {
		t.Error("NewImage accepted an empty program")
	}
}

func TestImageAccessors(t *testing.T) {
	p := echo()
	p.Data = []byte("abc")
	img := image(t, p)
	if img.Program() != p || img.Hash() != p.Hash() || img.HeapStart() != p.HeapStart() {
		t.Errorf("Image: program %p hash %x heap %d", img.Program(), img.Hash(), img.HeapStart())
	}
}

// Memory must hold code, data and the stack; a machine that cannot is
// FAULTED with OUT_OF_MEMORY before it runs, at the entry, with no ticks.
func TestOutOfMemoryAtStart(t *testing.T) {
	img := image(t, echo()) // 96 bytes of code
	for _, c := range []struct {
		mem, stack uint64
		ok         bool
	}{
		{96, 0, true}, {95, 0, false}, {104, 8, true}, {103, 8, false}, {0, 0, false},
		{1 << 20, 1 << 20, false}, {vm.MaxMemory + 1, 0, false}, {1<<48 + 8, 0, false}, {1 << 63, 1 << 62, false},
	} {
		m := vm.New(img, vm.Config{Ticks: 10, Memory: c.mem, Stack: c.stack}, nil)
		if c.ok {
			if m.State() != vm.Ready || len(m.Memory()) != int(c.mem) || m.SP() != c.mem {
				t.Errorf("memory %d stack %d: state %v, %d bytes, sp %d", c.mem, c.stack, m.State(), len(m.Memory()), m.SP())
			}
			continue
		}
		if m.State() != vm.Faulted || m.Fault() != vm.OutOfMemory || m.Ticks() != 0 || m.PC() != 0 {
			t.Errorf("memory %d stack %d: %v %v pc %d ticks %d, want FAULTED OUT_OF_MEMORY at 0 with 0 ticks",
				c.mem, c.stack, m.State(), m.Fault(), m.PC(), m.Ticks())
		}
		if m.Run() != vm.Faulted {
			t.Error("Run on an OUT_OF_MEMORY machine ran")
		}
	}
}

// A RECV on an empty channel returns BLOCKED without charging the RECV;
// the host delivers and runs again; the RECV then completes. The echo
// program's ticks do not depend on when input arrives.
func TestBlockedResume(t *testing.T) {
	img := image(t, echo())
	cfg := vm.Config{Ticks: 1000, Memory: 4096}

	out := &recorder{}
	m := vm.New(img, cfg, out)
	if s := m.Run(); s != vm.Blocked || m.BlockedOn() != 2 || m.PC() != 40 || m.Ticks() != 3 {
		t.Fatalf("first Run: %v on %d at pc %d ticks %d, want BLOCKED on 2 at pc 40 ticks 3",
			s, m.BlockedOn(), m.PC(), m.Ticks())
	}
	if s := m.Run(); s != vm.Blocked || m.Ticks() != 3 {
		t.Fatalf("Run again without input: %v ticks %d", s, m.Ticks())
	}
	msg := []byte("ping")
	m.Deliver(2, msg)
	msg[0] = 'X' // Deliver copies
	if n, ok := m.Pending(2); !ok || n != 4 {
		t.Errorf("Pending(2) = %d, %v", n, ok)
	}
	if _, ok := m.Pending(0); ok {
		t.Error("Pending(0) reports a message")
	}
	if s := m.Run(); s != vm.Blocked || m.Ticks() != 14 {
		t.Fatalf("after one message: %v ticks %d, want BLOCKED after 14 ticks", s, m.Ticks())
	}
	m.Deliver(2, []byte("pong"))
	m.Deliver(2, nil)
	if s := m.Run(); s != vm.Halted || m.Register(4) != 2 || m.Ticks() != 31 {
		t.Fatalf("end: %v r4 %d ticks %d, want HALTED, 2 messages, 31 ticks", s, m.Register(4), m.Ticks())
	}
	if got := fmt.Sprint(out.msgs); got != "[{0 ping} {0 pong}]" {
		t.Errorf("sent %s", got)
	}

	// All the input up front: same ticks, output and trace.
	all := vm.New(img, vm.Config{Ticks: 1000, Memory: 4096, Trace: true}, nil)
	for _, s := range []string{"ping", "pong", ""} {
		all.Deliver(2, []byte(s))
	}
	if all.Run() != vm.Halted || all.Ticks() != m.Ticks() {
		t.Errorf("with input up front: %v after %d ticks", all.State(), all.Ticks())
	}
	late := vm.New(img, vm.Config{Ticks: 1000, Memory: 4096, Trace: true}, nil)
	for _, s := range []string{"ping", "pong", ""} {
		if late.Run() != vm.Blocked {
			t.Fatalf("late delivery: %v", late.State())
		}
		late.Deliver(2, []byte(s))
	}
	late.Run()
	h1, ok1 := all.TraceHash()
	h2, ok2 := late.TraceHash()
	if !ok1 || !ok2 || h1 != h2 {
		t.Errorf("trace hash depends on delivery timing: %x %v, %x %v", h1, ok1, h2, ok2)
	}
}

func TestTraceHash(t *testing.T) {
	img := image(t, fibProgram(10))
	run := func(trace bool, budget uint64) *vm.Machine {
		m := vm.New(img, vm.Config{Ticks: budget, Memory: 1 << 12, Stack: 1 << 10, Trace: trace}, nil)
		if _, ok := m.TraceHash(); ok {
			t.Error("trace hash available before the run")
		}
		m.Run()
		return m
	}
	if _, ok := run(false, 1<<20).TraceHash(); ok {
		t.Error("trace hash available without Config.Trace")
	}
	a, b := run(true, 1<<20), run(true, 1<<20)
	ha, _ := a.TraceHash()
	hb, _ := b.TraceHash()
	again, _ := a.TraceHash()
	if ha != hb || ha != again {
		t.Error("trace hash differs between identical runs or calls")
	}
	// The same program cut short by the budget executed other
	// instructions and stopped elsewhere: another hash.
	hc, ok := run(true, a.Ticks()-1).TraceHash()
	if !ok || hc == ha {
		t.Errorf("a run one tick short has the same trace hash (%v)", ok)
	}
	// fib(11) branches differently.
	img = image(t, fibProgram(11))
	m := vm.New(img, vm.Config{Ticks: 1 << 20, Memory: 1 << 12, Stack: 1 << 10, Trace: true}, nil)
	m.Run()
	if hd, _ := m.TraceHash(); hd == ha {
		t.Error("fib(10) and fib(11) have the same trace hash")
	}
}

// A stopped machine stays stopped.
func TestRunAfterStop(t *testing.T) {
	var b builder
	b.op(bc.FAULT, 0, 0, 0, 42)
	m := vm.New(image(t, b.program(nil, 64)), vm.Config{Ticks: 10, Memory: 64}, nil)
	if m.Run() != vm.Faulted || m.Fault() != vm.UserFault || m.UserCode() != 42 || m.Ticks() != 1 {
		t.Fatalf("FAULT 42: %v %v %d ticks %d", m.State(), m.Fault(), m.UserCode(), m.Ticks())
	}
	if m.Run() != vm.Faulted || m.Ticks() != 1 || m.Budget() != 10 {
		t.Error("Run on a FAULTED machine changed it")
	}
}

func TestStrings(t *testing.T) {
	for _, c := range []struct{ got, want string }{
		{vm.Ready.String(), "READY"}, {vm.Running.String(), "RUNNING"}, {vm.Blocked.String(), "BLOCKED"},
		{vm.Halted.String(), "HALTED"}, {vm.Faulted.String(), "FAULTED"}, {vm.State(9).String(), "State(9)"},
		{vm.NoFault.String(), "NONE"}, {vm.OutOfTicks.String(), "OUT_OF_TICKS"},
		{vm.OutputQuota.String(), "OUTPUT_QUOTA"}, {vm.HostFault.String(), "HOST_FAULT"}, {vm.UserFault.String(), "USER_FAULT"}, {vm.Fault(0x42).String(), "FAULT_0x42"},
	} {
		if c.got != c.want {
			t.Errorf("got %q, want %q", c.got, c.want)
		}
	}
	codes := []uint8{}
	for _, f := range vm.Faults() {
		codes = append(codes, uint8(f))
	}
	if fmt.Sprint(codes) != "[1 2 3 4 5 6 7 8 9 10 11 255]" {
		t.Errorf("Faults() = %v", codes)
	}
}
