package vm_test

import (
	"encoding/binary"
	"testing"

	bc "github.com/genesis-toolchain/genesis/forge/bytecode"
	"github.com/genesis-toolchain/genesis/forge/vm"
	"github.com/genesis-toolchain/genesis/frontend/fasm"
)

// assemble assembles Forge assembly for a test.
func assemble(t testing.TB, src string) *bc.Program {
	t.Helper()
	p, diags := fasm.Assemble("test.fasm", []byte(src))
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	return p
}

// symbol returns the address of label name in p.
func symbol(t testing.TB, p *bc.Program, name string) uint64 {
	t.Helper()
	for _, s := range p.Symbols {
		if s.Name == name {
			return s.Addr
		}
	}
	t.Fatalf("no symbol %s", name)
	return 0
}

// probeHost is fakeHost that also records what each call saw: the
// machine's state, pc and ticks during the call, and what Run, Enter and
// Restore do from inside it.
type probeHost struct {
	calls []probe
}

type probe struct {
	imm             uint32
	state           vm.State
	pc, ticks, sp   uint64
	runGives        vm.State
	enterGives      vm.Fault
	r5AfterRestore  uint64
	r0Before, r0Set uint64
}

func (h *probeHost) HostCall(m *vm.Machine, imm uint32) (uint64, vm.Fault) {
	p := probe{imm: imm, state: m.State(), pc: m.PC(), ticks: m.Ticks(), sp: m.SP(), r0Before: m.Register(0)}
	saved := m.Save()
	p.runGives = m.Run()
	p.enterGives = m.Enter(0, 0)
	m.SetRegister(5, 12345)
	m.Restore(saved) // does nothing while RUNNING: r5 keeps 12345
	p.r5AfterRestore = m.Register(5)
	m.SetRegister(5, saved.Register(5))
	ticks, f := fakeHost{}.HostCall(m, imm)
	p.r0Set = m.Register(0)
	h.calls = append(h.calls, p)
	return ticks, f
}

// hcallProgram: two LIs (2 ticks), HCALL 1 at 0x20 (base 2, plus r2&15 =
// 4 extra ticks: fakeCall), HALT at 0x28.
const hcallProgram = `
	LI r0, 5
	LI r2, 4
	HCALL 1
	HALT
`

// TestHCALLMetering checks HCALL's ticks against docs/forge.md: the base
// cost is charged before the call like any instruction's, the host's
// ticks after it, and ticks the budget does not cover fault OUT_OF_TICKS
// at the HCALL with the whole budget used.
func TestHCALLMetering(t *testing.T) {
	p := assemble(t, hcallProgram)
	img := image(t, p)
	for _, c := range []struct {
		name   string
		budget uint64
		state  vm.State
		fault  vm.Fault
		pc     uint64
		ticks  uint64
		called bool
	}{
		{"fits", 100, vm.Halted, vm.NoFault, 0x28, 2 + 2 + 4 + 1, true},
		{"HALT does not fit", 8, vm.Faulted, vm.OutOfTicks, 0x28, 8, true},
		{"extra ticks do not fit", 7, vm.Faulted, vm.OutOfTicks, 0x20, 7, true},
		{"only the base fits", 4, vm.Faulted, vm.OutOfTicks, 0x20, 4, true},
		{"base does not fit", 3, vm.Faulted, vm.OutOfTicks, 0x20, 2, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			h := &probeHost{}
			m := vm.New(img, vm.Config{Ticks: c.budget, Memory: 1 << 12, Host: h, Trace: true}, nil)
			m.Run()
			if m.State() != c.state || m.Fault() != c.fault || m.PC() != c.pc || m.Ticks() != c.ticks {
				t.Fatalf("%v %v at pc %#x after %d ticks, want %v %v at %#x after %d",
					m.State(), m.Fault(), m.PC(), m.Ticks(), c.state, c.fault, c.pc, c.ticks)
			}
			if got := len(h.calls) > 0; got != c.called {
				t.Fatalf("host called: %v, want %v", got, c.called)
			}
			if c.called {
				// During the call: RUNNING, pc at the HCALL, its base
				// cost charged; Run, Enter and Restore do nothing.
				want := probe{imm: 1, state: vm.Running, pc: 0x20, ticks: 4, sp: 1 << 12,
					runGives: vm.Running, enterGives: vm.PermissionDenied, r5AfterRestore: 12345,
					r0Before: 5, r0Set: 5 * 31}
				if h.calls[0] != want {
					t.Fatalf("the host saw %+v, want %+v", h.calls[0], want)
				}
			}
			// The same on the reference interpreter.
			if _, err := differential(img, testCase{prog: p, cfg: vm.Config{Memory: 1 << 12, Host: fakeHost{}, Trace: true}}, c.budget); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestHCALLFaults: without a host, HCALL faults PERMISSION_DENIED (its
// base cost charged, like any faulting instruction's); a host function
// that refuses its operands faults the machine with its fault, its
// extra ticks charged, unless they do not fit: then OUT_OF_TICKS with
// the whole budget used.
func TestHCALLFaults(t *testing.T) {
	for _, c := range []struct {
		name   string
		src    string
		host   vm.HostCalls
		budget uint64
		fault  vm.Fault
		ticks  uint64
	}{
		{"no host", "LI r0, 4\nHCALL 0\nHALT\n", nil, 100, vm.PermissionDenied, 3},
		{"refused", "LI r0, 3\nHCALL 2\nHALT\n", fakeHost{}, 100, vm.HostFault, 1 + 2 + 1},
		{"refused, ticks fit exactly", "LI r0, 3\nHCALL 2\nHALT\n", fakeHost{}, 4, vm.HostFault, 4},
		{"refused, ticks do not fit", "LI r0, 3\nHCALL 2\nHALT\n", fakeHost{}, 3, vm.OutOfTicks, 3},
		{"refused with ticks past the budget", "LI r1, -1\nHCALL 5\nHALT\n", fakeHost{}, 200, vm.OutOfTicks, 200},
		{"refused with ticks within the budget", "LI r1, -1\nHCALL 5\nHALT\n", fakeHost{}, 1000, vm.HostFault, 1 + 2 + 255},
		{"huge ticks", "LI r1, -1\nHCALL 3\nHALT\n", fakeHost{}, 1 << 40, vm.OutOfTicks, 1 << 40},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := assemble(t, c.src)
			img := image(t, p)
			m := vm.New(img, vm.Config{Ticks: c.budget, Memory: 1 << 12, Host: c.host}, nil)
			m.Run()
			if m.State() != vm.Faulted || m.Fault() != c.fault || m.PC() != 0x10 || m.Ticks() != c.ticks {
				t.Fatalf("%v %v at pc %#x after %d ticks, want FAULTED %v at 0x10 after %d",
					m.State(), m.Fault(), m.PC(), m.Ticks(), c.fault, c.ticks)
			}
			if _, err := differential(img, testCase{prog: p, cfg: vm.Config{Memory: 1 << 12, Host: c.host}}, c.budget); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestHCALLEndsRun: an HCALL inside a loop, whose host function's ticks
// vary, is metered exactly at every budget (the reference charges one
// instruction at a time), and BUDGET after it sees the host's ticks.
func TestHCALLEndsRun(t *testing.T) {
	p := assemble(t, `
	LI r5, 0
	LI r6, 1
	LI r7, 6
loop:
	OR r2, r5, r5
	LI r0, 0
	HCALL 1       ; r2&15 extra ticks: 0, 1, 2, …
	BUDGET r3
	ADD r5, r5, r6
	JLT r5, r7, loop
	HALT
`)
	img := image(t, p)
	tc := testCase{prog: p, cfg: vm.Config{Memory: 1 << 12, Host: fakeHost{}, Trace: true}}
	full, err := differential(img, tc, 1000)
	if err != nil {
		t.Fatal(err)
	}
	// 3 LIs; 6 rounds of OR, LI, HCALL (2), BUDGET, ADD, JLT; 0+1+…+5 extra; HALT.
	if want := uint64(3 + 6*7 + 15 + 1); full.state != vm.Halted || full.ticks != want {
		t.Fatalf("%v after %d ticks, want HALTED after %d", full.state, full.ticks, want)
	}
	for b := uint64(0); b <= full.ticks+1; b++ {
		if _, err := differential(img, tc, b); err != nil {
			t.Fatalf("budget %d: %v", b, err)
		}
	}
}

// nested is a program that blocks on stdin, and functions a host calls
// while it waits: double(x) = 2x+1 (it calls inc, so it uses the machine
// stack), and wait(x) = x + the word it receives on stdin (so it blocks
// too).
const nested = `
start:
	OR r10, r254, r254    ; the buffer: the heap's first word
	LI r0, 100
	PUSH r0
recv:
	RECV 2, r10, 8
	LOADW r1, r10, 0
	POP r2
	ADD r0, r1, r2
	HALT
back:
	HALT
double:
	PUSH r0
	CALL inc
	POP r3
	ADD r0, r0, r3
	RET
inc:
	LI r4, 1
	ADD r0, r0, r4
	RET
wait:
	LI r11, 8
	ADD r11, r10, r11
	RECV 2, r11, 8
	LOADW r1, r11, 0
	ADD r0, r0, r1
	RET
`

func word(v uint64) []byte { return binary.LittleEndian.AppendUint64(nil, v) }

// call runs function f of m with argument arg as a host does while the
// program waits, servicing stdin with the words of input, and returns
// its result.
func call(t *testing.T, m *vm.Machine, p *bc.Program, f string, arg uint64, input ...uint64) uint64 {
	t.Helper()
	s := m.Save()
	if fault := m.Enter(symbol(t, p, f), symbol(t, p, "back"), arg); fault != vm.NoFault {
		t.Fatalf("Enter(%s) = %v", f, fault)
	}
	for m.Run() == vm.Blocked && len(input) > 0 {
		m.Deliver(vm.ChanStdin, word(input[0]))
		input = input[1:]
	}
	if m.State() != vm.Halted || m.PC() != symbol(t, p, "back") {
		t.Fatalf("%s: %v %v at %#x, want HALTED at back", f, m.State(), m.Fault(), m.PC())
	}
	r := m.Register(0)
	m.Restore(s)
	return r
}

// TestEnterWhileBlocked runs functions of a program while it is blocked
// on a RECV, one of them blocking in turn while another runs nested in
// it, then completes the program's RECV: the program resumes with its
// registers and stack intact, and one meter counts every instruction.
func TestEnterWhileBlocked(t *testing.T) {
	p := assemble(t, nested)
	img := image(t, p)
	cfg := vm.Config{Ticks: 10000, Memory: 1 << 12, Stack: 256, Trace: true}

	// Alone: LI-free start (OR, LI, PUSH = 3), RECV 3+1, LOADW, POP, ADD, HALT.
	plain := vm.New(img, cfg, nil)
	plain.Run()
	plain.Deliver(vm.ChanStdin, word(41))
	if plain.Run() != vm.Halted || plain.Register(0) != 141 {
		t.Fatalf("alone: %v, r0 = %d", plain.State(), plain.Register(0))
	}

	m := vm.New(img, cfg, nil)
	if m.Run() != vm.Blocked || m.PC() != symbol(t, p, "recv") {
		t.Fatalf("%v at %#x, want BLOCKED at recv", m.State(), m.PC())
	}
	before := m.Ticks()
	sp := m.SP()
	if got := call(t, m, p, "double", 20); got != 41 {
		t.Fatalf("double(20) = %d, want 41", got)
	}
	// PUSH, CALL, LI, ADD, RET, POP, ADD, RET, and the HALT at back.
	if got, want := m.Ticks()-before, uint64(1+2+1+1+2+1+1+2+1); got != want {
		t.Fatalf("double cost %d ticks, want %d", got, want)
	}
	if m.State() != vm.Blocked || m.BlockedOn() != vm.ChanStdin || m.PC() != symbol(t, p, "recv") || m.SP() != sp {
		t.Fatalf("restored: %v on %d at %#x, sp %#x; want BLOCKED on 2 at recv, sp %#x",
			m.State(), m.BlockedOn(), m.PC(), m.SP(), sp)
	}

	// wait blocks on stdin; while it does, double runs nested in it.
	s := m.Save()
	if f := m.Enter(symbol(t, p, "wait"), symbol(t, p, "back"), 1000); f != vm.NoFault {
		t.Fatal(f)
	}
	if m.Run() != vm.Blocked {
		t.Fatalf("wait: %v, want BLOCKED", m.State())
	}
	if got := call(t, m, p, "double", 3); got != 7 {
		t.Fatalf("double(3) nested in wait = %d, want 7", got)
	}
	m.Deliver(vm.ChanStdin, word(5))
	if m.Run() != vm.Halted || m.Register(0) != 1005 {
		t.Fatalf("wait: %v, r0 = %d, want HALTED with 1005", m.State(), m.Register(0))
	}
	m.Restore(s)

	m.Deliver(vm.ChanStdin, word(41))
	if m.Run() != vm.Halted || m.Register(0) != 141 || m.PC() != plain.PC() {
		t.Fatalf("resumed: %v at %#x, r0 = %d, want HALTED at %#x with 141", m.State(), m.PC(), m.Register(0), plain.PC())
	}
	// wait: LI, ADD, RECV (3 + 1 for 8 bytes), LOADW, ADD, RET, HALT; and
	// two doubles of 12 ticks.
	if got, want := m.Ticks(), plain.Ticks()+2*12+(1+1+4+1+1+2+1); got != want {
		t.Fatalf("%d ticks in all, want %d", got, want)
	}

	// The trace hash is the same on every run that makes the same calls,
	// and records which functions the host entered.
	again := func(f string) [32]byte {
		m := vm.New(img, cfg, nil)
		m.Run()
		call(t, m, p, f, 20)
		m.Deliver(vm.ChanStdin, word(41))
		m.Run()
		h, ok := m.TraceHash()
		if !ok {
			t.Fatal("no trace hash")
		}
		return h
	}
	if again("double") != again("double") {
		t.Error("two identical runs with a nested call have different trace hashes")
	}
	if again("double") == again("inc") {
		t.Error("entering double or inc gives the same trace hash")
	}
}

// savingHost saves the machine from inside HCALL.
type savingHost struct{ saved vm.Saved }

func (h *savingHost) HostCall(m *vm.Machine, imm uint32) (uint64, vm.Fault) {
	h.saved = m.Save()
	return 0, vm.NoFault
}

// TestRestoreOfRunningIgnored: what Save returns inside a host function
// (a RUNNING machine, at the HCALL) cannot be restored later.
func TestRestoreOfRunningIgnored(t *testing.T) {
	p := assemble(t, "LI r0, 1\nHCALL 0\nLI r0, 2\nHALT\n")
	h := &savingHost{}
	m := vm.New(image(t, p), vm.Config{Ticks: 100, Memory: 1 << 12, Host: h}, nil)
	if m.Run() != vm.Halted || m.Register(0) != 2 {
		t.Fatalf("%v, r0 = %d", m.State(), m.Register(0))
	}
	pc := m.PC()
	m.Restore(h.saved)
	if m.State() != vm.Halted || m.PC() != pc || m.Register(0) != 2 {
		t.Fatalf("restored what was saved inside HCALL: %v at %#x, r0 = %d", m.State(), m.PC(), m.Register(0))
	}
}

// TestEnterRefuses: Enter changes nothing when it cannot call.
func TestEnterRefuses(t *testing.T) {
	p := assemble(t, nested)
	img := image(t, p)
	double, back := symbol(t, p, "double"), symbol(t, p, "back")
	many := make([]uint64, 257)
	for _, c := range []struct {
		name        string
		stack       uint64
		entry, ret  uint64
		args        []uint64
		fault       vm.Fault
		outOfMemory bool
	}{
		{"misaligned entry", 256, double + 4, back, nil, vm.InvalidAddress, false},
		{"entry in an LI's word", 256, symbol(t, p, "start") + 8 + 8, back, nil, vm.InvalidAddress, false},
		{"entry past the code", 256, uint64(len(p.Code)), back, nil, vm.InvalidAddress, false},
		{"entry far past the code", 256, 1 << 40, back, nil, vm.InvalidAddress, false},
		{"ret in data", 256, double, uint64(len(p.Code)) + 8, nil, vm.InvalidAddress, false},
		{"no stack left", 0, double, back, nil, vm.StackOverflow, false},
		{"too many arguments", 256, double, back, many, vm.InvalidInstruction, false},
		{"no memory", 256, double, back, nil, vm.OutOfMemory, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			mem := uint64(1 << 12)
			if c.outOfMemory {
				mem = 8
			}
			m := vm.New(img, vm.Config{Ticks: 1000, Memory: mem, Stack: c.stack}, nil)
			if !c.outOfMemory && c.stack > 0 {
				m.Run() // blocked at recv, one word pushed
			}
			s := m.Save()
			st, pc, sp, ticks := m.State(), m.PC(), m.SP(), m.Ticks()
			if f := m.Enter(c.entry, c.ret, c.args...); f != c.fault {
				t.Fatalf("Enter = %v, want %v", f, c.fault)
			}
			if m.State() != st || m.PC() != pc || m.SP() != sp || m.Ticks() != ticks || m.Save() != s {
				t.Fatalf("a refused Enter changed the machine")
			}
		})
	}
}

// TestReset: a machine Reset runs exactly as a new one does.
func TestReset(t *testing.T) {
	p := assemble(t, nested)
	img := image(t, p)
	cfg := vm.Config{Ticks: 10000, Memory: 1 << 12, Stack: 256, Trace: true, Output: 3}
	run := func(m *vm.Machine) (vm.State, uint64, uint64, [32]byte, []byte) {
		m.Run()
		m.Deliver(vm.ChanStdin, word(41))
		m.Run()
		h, _ := m.TraceHash()
		return m.State(), m.Ticks(), m.Register(0), h, append([]byte(nil), m.Memory()...)
	}
	fresh := vm.New(img, cfg, nil)
	st, ticks, r0, h, mem := run(fresh)

	m := vm.New(img, cfg, nil)
	m.Deliver(vm.ChanStdin, word(7)) // left queued by the first run
	m.Run()
	call(t, m, p, "wait", 1, 2)
	m.Reset()
	if m.State() != vm.Ready || m.Ticks() != 0 || m.PC() != p.Entry || m.SP() != cfg.Memory || m.Register(0) != 0 ||
		m.Register(vm.RegHeapStart) != img.HeapStart() {
		t.Fatalf("after Reset: %v at %#x after %d ticks, sp %#x", m.State(), m.PC(), m.Ticks(), m.SP())
	}
	if _, ok := m.Pending(vm.ChanStdin); ok {
		t.Fatal("Reset left a message queued")
	}
	st2, ticks2, r02, h2, mem2 := run(m)
	if st2 != st || ticks2 != ticks || r02 != r0 || h2 != h || string(mem2) != string(mem) {
		t.Fatalf("after Reset: %v %d ticks r0 %d; new machine: %v %d ticks r0 %d (trace or memory may differ too)",
			st2, ticks2, r02, st, ticks, r0)
	}

	// A machine New made FAULTED stays so.
	oom := vm.New(img, vm.Config{Ticks: 10, Memory: 8}, nil)
	oom.Reset()
	if oom.State() != vm.Faulted || oom.Fault() != vm.OutOfMemory {
		t.Fatalf("Reset of an OUT_OF_MEMORY machine: %v %v", oom.State(), oom.Fault())
	}
}
