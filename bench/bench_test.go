package main

// The benchmark programs inside the test process, to check them and to
// profile the interpreter on them (docs/bench.md):
//
//	go test ./bench -run Programs                  output and exact tick counts
//	go test ./bench -run '^$' -bench Forge -cpuprofile cpu.out
//	go tool pprof -list 'Machine..exec' bench.test cpu.out
//	FORGE_BENCH_MIX=1 go test ./bench -run Mix -v  dynamic instruction mix

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/genesis-toolchain/genesis/compiler"
	bc "github.com/genesis-toolchain/genesis/forge/bytecode"
	"github.com/genesis-toolchain/genesis/forge/vm"
	"github.com/genesis-toolchain/genesis/frontend/fasm"
)

// The machine of the harness's forge exec runs.
const (
	testMemory = 16 << 20
	testStack  = 64 << 10
	testTicks  = 10_000_000_000
)

// wantGenesisTicks pins the tick count of each Genesis program compiled by
// genesisc at -O2: a change of the compiler that makes them slower fails
// here, and one that makes them faster updates the figure.
var wantGenesisTicks = map[string]uint64{
	"fib":   74016351,
	"loop":  350000248,
	"sieve": 109235241,
}

// wantTicks pins the exact tick count of each program: the programs are
// part of the benchmark's definition, and the count is what a run costs
// in FM-ticks whatever the interpreter.
var wantTicks = map[string]uint64{
	"fib":   74016254,
	"loop":  350000154,
	"sieve": 109240580,
}

func assemble(t testing.TB, name string) *bc.Program {
	t.Helper()
	file := filepath.Join("programs", name+".fasm")
	src, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	p, diags := fasm.Assemble(file, src)
	if diags.HasErrors() {
		t.Fatalf("%s", diags.Render(map[string][]byte{file: src}))
	}
	return p
}

func image(t testing.TB, name string) *vm.Image {
	t.Helper()
	img, err := vm.NewImage(assemble(t, name))
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return img
}

// output collects what a machine sends on channel 0.
type output struct{ bytes.Buffer }

func (o *output) Send(ch uint8, msg []byte) {
	if ch == vm.ChanStdout {
		o.Write(msg)
	}
}

func TestPrograms(t *testing.T) {
	for _, p := range programs {
		t.Run(p.name, func(t *testing.T) {
			var out output
			m := vm.New(image(t, p.name), vm.Config{Ticks: testTicks, Memory: testMemory, Stack: testStack}, &out)
			if st := m.Run(); st != vm.Halted {
				t.Fatalf("%v %v at pc %#x after %d ticks", st, m.Fault(), m.PC(), m.Ticks())
			}
			if got := out.String(); got != p.want {
				t.Errorf("printed %q, want %q", got, p.want)
			}
			if m.Ticks() != wantTicks[p.name] {
				t.Errorf("used %d ticks, want %d", m.Ticks(), wantTicks[p.name])
			}
		})
	}
}

// TestGenesisPrograms compiles bench/genesis/*.gen as the harness does and
// checks their output and exact tick counts.
func TestGenesisPrograms(t *testing.T) {
	for _, p := range programs {
		t.Run(p.name, func(t *testing.T) {
			var out output
			m := vm.New(genesisImage(t, "genesis", p.name), vm.Config{Ticks: testTicks, Memory: testMemory, Stack: testStack}, &out)
			if st := m.Run(); st != vm.Halted {
				t.Fatalf("%v %v at pc %#x after %d ticks", st, m.Fault(), m.PC(), m.Ticks())
			}
			if got := out.String(); got != p.want {
				t.Errorf("printed %q, want %q", got, p.want)
			}
			if m.Ticks() != wantGenesisTicks[p.name] {
				t.Errorf("used %d ticks, want %d", m.Ticks(), wantGenesisTicks[p.name])
			}
		})
	}
}

// genesisImage compiles bench/DIR/NAME.gen with print.gen at -O2, as
// the harness does.
func genesisImage(t testing.TB, dir, name string) *vm.Image {
	t.Helper()
	srcs, diags := compiler.ReadSources([]string{
		filepath.Join(dir, name+".gen"), filepath.Join("genesis", "print.gen"),
	})
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	res, diags := compiler.Build(srcs, compiler.Options{OptLevel: 2})
	if diags.HasErrors() {
		t.Fatalf("%s", diags.Render(compiler.SourceMap(srcs)))
	}
	img, err := vm.NewImage(res.Program)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return img
}

// BenchmarkForge runs each program on a fresh machine per iteration, as
// forge exec does, and reports the time per tick.
func BenchmarkForge(b *testing.B) {
	for _, p := range programs {
		img := image(b, p.name)
		b.Run(p.name, func(b *testing.B) {
			var ticks uint64
			for i := 0; i < b.N; i++ {
				m := vm.New(img, vm.Config{Ticks: testTicks, Memory: testMemory, Stack: testStack}, nil)
				if m.Run() != vm.Halted {
					b.Fatalf("%v %v", m.State(), m.Fault())
				}
				ticks = m.Ticks()
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(ticks), "ns/tick")
		})
	}
}

// TestMix prints what each program executes: instructions by opcode, and
// the sequences of two and three instructions inside one straight-line
// run (what the interpreter's load-time fusion could turn into one
// dispatch). It runs the programs on a small stepper of its own, which
// only needs the instructions they use, so it is opt-in.
func TestMix(t *testing.T) {
	if os.Getenv("FORGE_BENCH_MIX") == "" {
		t.Skip("set FORGE_BENCH_MIX=1 to print the instruction mix")
	}
	for _, p := range programs {
		t.Run(p.name, func(t *testing.T) {
			var out output
			mx, err := countMix(assemble(t, p.name), testMemory, &out)
			if err != nil {
				t.Fatal(err)
			}
			if out.String() != p.want {
				t.Errorf("the stepper printed %q, want %q", out.String(), p.want)
			}
			if mx.ticks != wantTicks[p.name] {
				t.Errorf("the stepper counted %d ticks, want %d", mx.ticks, wantTicks[p.name])
			}
			t.Logf("\n%s", mx.report(0.01))
		})
	}
}

// mix counts executed instructions.
type mix struct {
	insts, ticks, runs uint64
	ops                [256]uint64
	pairs              map[[2]bc.Opcode]uint64
	triples            map[[3]bc.Opcode]uint64
}

// countMix runs p to its HALT on a plain stepper (no metering, no fault
// checks beyond Go's own) and counts what it executes.
func countMix(p *bc.Program, memSize uint64, out vm.Sender) (*mix, error) {
	insts, offs, err := bc.Insts(p.Code)
	if err != nil {
		return nil, err
	}
	index := make(map[uint64]int, len(offs))
	for i, o := range offs {
		index[uint64(o)] = i
	}
	mem := make([]byte, memSize)
	copy(mem, p.Code)
	copy(mem[len(p.Code):], p.Data)
	var r [256]uint64
	sp := memSize
	mx := &mix{pairs: map[[2]bc.Opcode]uint64{}, triples: map[[3]bc.Opcode]uint64{}}
	// The last two instructions of the current run, 0 at a run start.
	var prev1, prev2 bc.Opcode
	pc, ok := index[p.Entry]
	if !ok {
		return nil, fmt.Errorf("entry %#x is not an instruction", p.Entry)
	}
	for {
		in := insts[pc]
		info := bc.Lookup(in.Op)
		mx.insts++
		mx.ticks += info.Cost
		mx.ops[in.Op]++
		switch {
		case prev1 == 0:
			mx.runs++
		case prev2 == 0:
			mx.pairs[[2]bc.Opcode{prev1, in.Op}]++
		default:
			mx.pairs[[2]bc.Opcode{prev1, in.Op}]++
			mx.triples[[3]bc.Opcode{prev2, prev1, in.Op}]++
		}
		prev2, prev1 = prev1, in.Op
		if info.Branch {
			prev2, prev1 = 0, 0
		}
		next := pc + 1
		target := func() int { return index[in.Imm] }
		addr := func() uint64 { return r[in.B] + uint64(in.Offset()) }
		switch in.Op {
		case bc.ADD:
			r[in.A] = r[in.B] + r[in.C]
		case bc.SUB:
			r[in.A] = r[in.B] - r[in.C]
		case bc.MUL:
			r[in.A] = r[in.B] * r[in.C]
		case bc.DIV:
			r[in.A] = r[in.B] / r[in.C]
		case bc.MOD:
			r[in.A] = r[in.B] % r[in.C]
		case bc.AND:
			r[in.A] = r[in.B] & r[in.C]
		case bc.OR:
			r[in.A] = r[in.B] | r[in.C]
		case bc.XOR:
			r[in.A] = r[in.B] ^ r[in.C]
		case bc.SHL:
			r[in.A] = r[in.B] << (r[in.C] & 63)
		case bc.SHR:
			r[in.A] = r[in.B] >> (r[in.C] & 63)
		case bc.LI:
			r[in.A] = in.Imm
		case bc.LOAD:
			r[in.A] = uint64(mem[addr()])
		case bc.STORE:
			mem[addr()] = byte(r[in.A])
		case bc.LOADW:
			r[in.A] = le64(mem[addr():])
		case bc.STOREW:
			putLE64(mem[addr():], r[in.A])
		case bc.PUSH:
			sp -= 8
			putLE64(mem[sp:], r[in.A])
		case bc.POP:
			r[in.A] = le64(mem[sp:])
			sp += 8
		case bc.JMP:
			next = target()
		case bc.JZ:
			if r[in.A] == 0 {
				next = target()
			}
		case bc.JNZ:
			if r[in.A] != 0 {
				next = target()
			}
		case bc.JLT:
			if r[in.A] < r[in.B] {
				next = target()
			}
		case bc.JLTS:
			if int64(r[in.A]) < int64(r[in.B]) {
				next = target()
			}
		case bc.JEQ:
			if r[in.A] == r[in.B] {
				next = target()
			}
		case bc.JNE:
			if r[in.A] != r[in.B] {
				next = target()
			}
		case bc.CALL:
			sp -= 8
			putLE64(mem[sp:], uint64(offs[pc]+8))
			next = target()
		case bc.RET:
			next = index[le64(mem[sp:])]
			sp += 8
		case bc.SEND:
			out.Send(in.C, mem[r[in.A]:r[in.A]+in.Imm])
		case bc.HALT:
			return mx, nil
		default:
			return nil, fmt.Errorf("the mix stepper does not implement %v", in.Op)
		}
		pc = next
	}
}

func le64(b []byte) uint64 {
	_ = b[7]
	return uint64(b[0]) | uint64(b[1])<<8 | uint64(b[2])<<16 | uint64(b[3])<<24 |
		uint64(b[4])<<32 | uint64(b[5])<<40 | uint64(b[6])<<48 | uint64(b[7])<<56
}

func putLE64(b []byte, v uint64) {
	_ = b[7]
	for i := 0; i < 8; i++ {
		b[i] = byte(v >> (8 * i))
	}
}

// report lists the counts that reach share of the instructions.
func (mx *mix) report(share float64) string {
	var b strings.Builder
	pct := func(n uint64) float64 { return 100 * float64(n) / float64(mx.insts) }
	fmt.Fprintf(&b, "%d instructions, %d ticks, %d straight-line runs (%.2f instructions per run)\n",
		mx.insts, mx.ticks, mx.runs, float64(mx.insts)/float64(mx.runs))
	type row struct {
		name string
		n    uint64
	}
	list := func(title string, rows []row) {
		sort.Slice(rows, func(i, j int) bool {
			if rows[i].n != rows[j].n {
				return rows[i].n > rows[j].n
			}
			return rows[i].name < rows[j].name
		})
		fmt.Fprintf(&b, "%s\n", title)
		for _, r := range rows {
			if pct(r.n) >= 100*share {
				fmt.Fprintf(&b, "  %-22s %11d  %5.1f%%\n", r.name, r.n, pct(r.n))
			}
		}
	}
	var rows []row
	for op, n := range mx.ops {
		if n > 0 {
			rows = append(rows, row{bc.Opcode(op).String(), n})
		}
	}
	list("instructions:", rows)
	rows = nil
	for k, n := range mx.pairs {
		rows = append(rows, row{k[0].String() + " ; " + k[1].String(), n})
	}
	list("pairs inside a run (count of the second):", rows)
	rows = nil
	for k, n := range mx.triples {
		rows = append(rows, row{k[0].String() + " ; " + k[1].String() + " ; " + k[2].String(), n})
	}
	list("triples inside a run:", rows)
	return b.String()
}

// BenchmarkCompile compiles the generated 20,000-line program at -O2 to
// Forge bytecode, everything genesisc build does but reading and writing
// files, and reports lines per second.
func BenchmarkCompile(b *testing.B) {
	src, _ := bigProgram(compileLines)
	printSrc, err := os.ReadFile(filepath.Join("genesis", "print.gen"))
	if err != nil {
		b.Fatal(err)
	}
	srcs := []compiler.Source{{Name: "big.gen", Data: src}, {Name: "print.gen", Data: printSrc}}
	lines := bytes.Count(src, []byte("\n")) + bytes.Count(printSrc, []byte("\n"))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, diags := compiler.Build(srcs, compiler.Options{OptLevel: 2}); diags.HasErrors() {
			b.Fatalf("%s", diags.Render(compiler.SourceMap(srcs)))
		}
	}
	b.ReportMetric(float64(lines)*float64(b.N)/b.Elapsed().Seconds(), "lines/s")
}

// TestCompileDeterministic compiles a generated program of many functions
// twice: the backend compiles functions concurrently, and the assembly
// must not depend on the scheduling.
func TestCompileDeterministic(t *testing.T) {
	src, _ := bigProgram(3000)
	printSrc, err := os.ReadFile(filepath.Join("genesis", "print.gen"))
	if err != nil {
		t.Fatal(err)
	}
	srcs := []compiler.Source{{Name: "big.gen", Data: src}, {Name: "print.gen", Data: printSrc}}
	var first string
	for i := 0; i < 3; i++ {
		res, diags := compiler.Build(srcs, compiler.Options{OptLevel: 2, Emit: compiler.EmitAsm})
		if diags.HasErrors() {
			t.Fatalf("%s", diags.Render(compiler.SourceMap(srcs)))
		}
		if i == 0 {
			first = res.Text
		} else if res.Text != first {
			t.Fatalf("build %d emitted different assembly", i)
		}
	}
}
