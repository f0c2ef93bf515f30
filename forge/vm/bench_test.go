package vm_test

import (
	"testing"

	bc "github.com/genesis-toolchain/genesis/forge/bytecode"
	"github.com/genesis-toolchain/genesis/forge/vm"
)

// loopProgram sums i*i mod 7 for i below n: an ADD/JLT loop with a MUL
// and a MOD in its body. The result is in r2.
func loopProgram(n uint64) *bc.Program {
	var b builder
	b.li(1, 0) // i
	b.li(2, 0) // sum
	b.li(3, 7)
	b.li(4, n)
	b.li(5, 1)
	top := b.here()
	b.rrr(bc.MUL, 6, 1, 1)
	b.rrr(bc.MOD, 6, 6, 3)
	b.rrr(bc.ADD, 2, 2, 6)
	b.rrr(bc.ADD, 1, 1, 5)
	b.jump(bc.JLT, 1, 4, top) // ADD+JLT, fused
	b.op(bc.HALT, 0, 0, 0, 0)
	return b.program(nil, 0)
}

// sieveProgram counts the primes below n with a byte-per-number sieve in
// the heap. The count is in r8.
func sieveProgram(n uint64) *bc.Program {
	var b builder
	b.liFix(1, fixHeap, 0, 0) // r1 = sieve
	b.li(2, n)
	b.li(3, 2) // i
	b.li(9, 1)
	b.li(8, 0) // count
	outer := b.here()
	toBody := b.jump(bc.JLT, 3, 2, -1) // i < n
	b.op(bc.HALT, 0, 0, 0, 0)
	b.insts[toBody].ref = b.here()
	b.rrr(bc.ADD, 4, 1, 3)
	b.mem(bc.LOAD, 5, 4, 0)
	composite := b.jump(bc.JNZ, 5, 0, -1)
	b.rrr(bc.ADD, 8, 8, 9) // a prime
	b.rrr(bc.MUL, 6, 3, 3) // j = i*i
	inner := b.here()
	toMark := b.jump(bc.JLT, 6, 2, -1) // j < n
	done := b.jump(bc.JMP, 0, 0, -1)
	b.insts[toMark].ref = b.here()
	b.rrr(bc.ADD, 4, 1, 6)
	b.mem(bc.STORE, 9, 4, 0)
	b.rrr(bc.ADD, 6, 6, 3) // ADD+JMP, fused
	b.jump(bc.JMP, 0, 0, inner)
	b.insts[composite].ref, b.insts[done].ref = b.here(), b.here()
	b.rrr(bc.ADD, 3, 3, 9) // ADD+JMP, fused
	b.jump(bc.JMP, 0, 0, outer)
	return b.program(nil, 0)
}

// fibProgram computes fib(n) recursively with CALL/RET and the stack; the
// result is in r0.
func fibProgram(n uint64) *bc.Program {
	var b builder
	b.li(0, n)
	b.li(10, 2)
	b.li(11, 1)
	call := b.jump(bc.CALL, 0, 0, -1)
	b.op(bc.HALT, 0, 0, 0, 0)
	fib := b.here()
	b.insts[call].ref = fib
	done := b.jump(bc.JLT, 0, 10, -1) // n < 2: fib(n) = n
	b.op(bc.PUSH, 0, 0, 0, 0)
	b.rrr(bc.SUB, 0, 0, 11)
	b.jump(bc.CALL, 0, 0, fib)
	b.op(bc.POP, 1, 0, 0, 0) // r1 = n
	b.op(bc.PUSH, 0, 0, 0, 0)
	b.rrr(bc.SUB, 0, 1, 10)
	b.jump(bc.CALL, 0, 0, fib)
	b.op(bc.POP, 1, 0, 0, 0) // r1 = fib(n-1)
	b.rrr(bc.ADD, 0, 0, 1)
	b.insts[done].ref = b.here()
	b.op(bc.RET, 0, 0, 0, 0)
	return b.program(nil, 0)
}

// sendProgram sends n one-byte messages on channel 0, as a print loop
// does: the channel path's cost per SEND. r4 counts them.
func sendProgram(n uint64) *bc.Program {
	var b builder
	b.liFix(1, fixHeap, 0, 0)
	b.li(2, n)
	b.li(3, 1)
	top := b.here()
	b.op(bc.SEND, 1, 0, 0, 1)
	b.rrr(bc.ADD, 4, 4, 3)
	b.jump(bc.JLT, 4, 2, top) // ADD+JLT, fused
	b.op(bc.HALT, 0, 0, 0, 0)
	return b.program(nil, 0)
}

func TestBenchmarkPrograms(t *testing.T) {
	for _, c := range []struct {
		name string
		p    *bc.Program
		reg  uint8
		want uint64
	}{
		{"loop", loopProgram(100), 2, 0}, // filled in below
		{"sieve", sieveProgram(1000), 8, 168},
		{"fib", fibProgram(20), 0, 6765},
		{"send", sendProgram(100), 4, 100},
	} {
		if c.name == "loop" {
			for i := range uint64(100) {
				c.want += i * i % 7
			}
		}
		m, steps := runBench(t, c.p, false)
		if m.Register(c.reg) != c.want {
			t.Errorf("%s: r%d = %d, want %d", c.name, c.reg, m.Register(c.reg), c.want)
		}
		if steps == 0 {
			t.Errorf("%s: no instructions counted", c.name)
		}
	}
}

var benchConfig = vm.Config{Ticks: 1 << 62, Memory: 1 << 20, Stack: 1 << 16}

// runBench runs p to HALT and returns the machine and the number of
// instructions executed, counted by the reference interpreter.
func runBench(tb testing.TB, p *bc.Program, trace bool) (*vm.Machine, uint64) {
	tb.Helper()
	cfg := benchConfig
	cfg.Trace = trace
	m := vm.New(image(tb, p), cfg, nil)
	if m.Run() != vm.Halted {
		tb.Fatalf("benchmark program stopped %v %v at %d", m.State(), m.Fault(), m.PC())
	}
	r := newRef(p, cfg)
	r.Run()
	if r.ticks != m.Ticks() {
		tb.Fatalf("ticks %d, reference %d", m.Ticks(), r.ticks)
	}
	return m, r.steps
}

// benchmark runs p b.N times on fresh machines sharing one image and
// reports the time per executed instruction.
func benchmark(b *testing.B, p *bc.Program, trace bool) {
	_, steps := runBench(b, p, trace)
	img := image(b, p)
	cfg := benchConfig
	cfg.Trace = trace
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		m := vm.New(img, cfg, nil)
		if m.Run() != vm.Halted {
			b.Fatal(m.Fault())
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(steps), "ns/inst")
	b.ReportMetric(float64(steps), "inst/op")
}

func BenchmarkInterpLoop(b *testing.B)      { benchmark(b, loopProgram(1_000_000), false) }
func BenchmarkInterpSieve(b *testing.B)     { benchmark(b, sieveProgram(200_000), false) }
func BenchmarkInterpFib(b *testing.B)       { benchmark(b, fibProgram(25), false) }
func BenchmarkInterpFibTrace(b *testing.B)  { benchmark(b, fibProgram(25), true) }
func BenchmarkInterpLoopTrace(b *testing.B) { benchmark(b, loopProgram(1_000_000), true) }
func BenchmarkInterpSend(b *testing.B)      { benchmark(b, sendProgram(1_000_000), false) }

// BenchmarkRepeat compares running a short program many times on a new
// machine each time with one machine Reset between runs (Machine.Reset),
// at a small and a large memory quota.
func BenchmarkRepeat(b *testing.B) {
	img := image(b, loopProgram(10))
	for _, mem := range []uint64{1 << 16, 1 << 24} {
		cfg := vm.Config{Ticks: 1 << 20, Memory: mem, Stack: 1 << 12}
		name := "64KiB"
		if mem == 1<<24 {
			name = "16MiB"
		}
		b.Run("New/"+name, func(b *testing.B) {
			for b.Loop() {
				m := vm.New(img, cfg, nil)
				if m.Run() != vm.Halted {
					b.Fatal(m.State())
				}
			}
		})
		b.Run("Reset/"+name, func(b *testing.B) {
			m := vm.New(img, cfg, nil)
			for b.Loop() {
				m.Reset()
				if m.Run() != vm.Halted {
					b.Fatal(m.State())
				}
			}
		})
	}
}
