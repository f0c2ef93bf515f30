// Command paircount counts the instruction pairs and triples that a corpus
// of Forge programs executes, and what each superinstruction of the
// interpreter saves on it: the data behind the interpreter's choice of
// fused forms (docs/bench.md, "Fusions chosen from corpora").
//
//	go run ./bench/paircount                     print the tables
//	go run ./bench/paircount -o docs/paircount.md   write them to a file
//
// Run it from the module root. The corpus, in groups:
//
//   - bench: the benchmark programs, bench/programs/*.fasm and
//     bench/genesis/*.gen (each with print.gen);
//   - conformance: the Genesis run cases (tests/genesis/run/*.txtar, with
//     their standard input) and the Forge cases (tests/forge/*.txtar);
//   - programs: ordinary programs written for this corpus, bench/corpus/*.gen
//     (fannkuch, matmul, quicksort, a hash table, Collatz, string
//     processing), each compiled with bench/genesis/print.gen.
//
// Genesis sources are compiled by genesisc's compiler at -O2. Counts are
// dynamic, taken on the real interpreter (vm.Config.Events: the events of
// the trace stream, which with the program give every instruction
// executed), and static (instructions in the code). A pair is two
// instructions executed one after the other in one straight-line run (the
// first is not a branch), which is what load-time fusion can turn into one
// dispatch; a triple likewise.
//
// Each program weighs the same within its group: a group's figure is the
// mean over its programs of the share of that program's executed
// instructions (or dispatches), so that one long benchmark does not hide
// the rest.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"golang.org/x/tools/txtar"

	"github.com/genesis-toolchain/genesis/compiler"
	bc "github.com/genesis-toolchain/genesis/forge/bytecode"
	"github.com/genesis-toolchain/genesis/forge/vm"
)

func main() {
	out := flag.String("o", "", "write the tables to this file instead of standard output")
	verbose = flag.Bool("v", false, "print each program's count on standard error as it is taken")
	hotRE := flag.String("hot", "", "instead of the tables, list the hot instructions of the programs whose names match this regular expression")
	share := flag.Float64("share", 0.05, "with -hot: list the instructions executed at least this share of the most executed one's count")
	flag.Parse()
	if *hotRE != "" {
		var err error
		if only, err = regexp.Compile(*hotRE); err != nil {
			fmt.Fprintln(os.Stderr, "paircount: -hot:", err)
			os.Exit(2)
		}
	}
	progs, err := corpus()
	if err != nil {
		fmt.Fprintln(os.Stderr, "paircount:", err)
		os.Exit(1)
	}
	var buf bytes.Buffer
	if only != nil {
		hot(&buf, progs, only, *share)
	} else {
		report(&buf, progs)
	}
	if *out == "" {
		os.Stdout.Write(buf.Bytes())
		return
	}
	if err := os.WriteFile(*out, buf.Bytes(), 0o644); err != nil {
		fmt.Fprintln(os.Stderr, "paircount:", err)
		os.Exit(1)
	}
}

var verbose = new(bool)

// only, when set (-hot), limits the corpus to the programs whose names it
// matches.
var only *regexp.Regexp

// The groups of the corpus, in report order.
var groups = []string{"bench", "conformance", "programs"}

// program is one program of the corpus and what it executed.
type program struct {
	group, name string
	insts       []bc.Inst
	exec, taken []uint64 // per instruction: times executed, times a branch was taken
	total       uint64   // instructions executed
}

// corpus compiles and runs every program of the corpus.
func corpus() ([]*program, error) {
	var progs []*program
	add := func(group, name string, srcs []compiler.Source, stdin []byte) error {
		if only != nil && !only.MatchString(name) {
			return nil
		}
		res, diags := compiler.Build(srcs, compiler.Options{OptLevel: 2})
		if diags.HasErrors() {
			return fmt.Errorf("%s does not compile:\n%s", name, diags.Render(compiler.SourceMap(srcs)))
		}
		p, err := count(res.Program, stdin)
		if err != nil {
			return fmt.Errorf("%s: %v", name, err)
		}
		p.group, p.name = group, name
		progs = append(progs, p)
		if *verbose {
			fmt.Fprintf(os.Stderr, "%s: %d instructions executed\n", name, p.total)
		}
		return nil
	}
	read := func(paths ...string) ([]compiler.Source, error) {
		var srcs []compiler.Source
		for _, path := range paths {
			b, err := os.ReadFile(path)
			if err != nil {
				return nil, err
			}
			srcs = append(srcs, compiler.Source{Name: path, Data: b})
		}
		return srcs, nil
	}
	glob := func(pattern string) []string {
		files, _ := filepath.Glob(pattern) // the patterns are well-formed
		sort.Strings(files)
		return files
	}
	single := func(group, pattern string, with string) error {
		files := glob(pattern)
		if len(files) == 0 {
			return fmt.Errorf("no file matches %s (run from the module root)", pattern)
		}
		for _, f := range files {
			if filepath.Base(f) == "print.gen" {
				continue
			}
			paths := []string{f}
			if with != "" {
				paths = append(paths, with)
			}
			srcs, err := read(paths...)
			if err != nil {
				return err
			}
			if err := add(group, f, srcs, nil); err != nil {
				return err
			}
		}
		return nil
	}
	if err := single("bench", "bench/programs/*.fasm", ""); err != nil {
		return nil, err
	}
	if err := single("bench", "bench/genesis/*.gen", "bench/genesis/print.gen"); err != nil {
		return nil, err
	}
	cases := func(pattern string, section func(f txtar.File) bool, stdinName string) error {
		files := glob(pattern)
		if len(files) == 0 {
			return fmt.Errorf("no file matches %s (run from the module root)", pattern)
		}
		for _, f := range files {
			a, err := txtar.ParseFile(f)
			if err != nil {
				return err
			}
			var srcs []compiler.Source
			var stdin []byte
			for _, s := range a.Files {
				switch {
				case section(s):
					srcs = append(srcs, compiler.Source{Name: s.Name, Data: s.Data})
				case s.Name == stdinName:
					stdin = s.Data
				}
			}
			if len(srcs) == 0 {
				continue
			}
			if err := add("conformance", f, srcs, stdin); err != nil {
				return err
			}
		}
		return nil
	}
	if err := cases("tests/genesis/run/*.txtar", func(f txtar.File) bool { return strings.HasSuffix(f.Name, ".gen") }, "in/stdin"); err != nil {
		return nil, err
	}
	if err := cases("tests/forge/*.txtar", func(f txtar.File) bool { return f.Name == "in.fasm" }, "stdin"); err != nil {
		return nil, err
	}
	if err := single("programs", "bench/corpus/*.gen", "bench/genesis/print.gen"); err != nil {
		return nil, err
	}
	return progs, nil
}

// The machine every program runs on: the budget bounds the corpus's run
// time; a program that exhausts it is counted up to there.
// maxYields bounds the TICKs a program may yield at before it is counted
// as far as it ran.
const maxYields = 1 << 16

var config = vm.Config{Ticks: 2_000_000_000, Memory: 32 << 20, Stack: 4 << 20}

// count runs p on the interpreter, its standard input delivered as one
// message followed by an empty one (end of input), and counts every
// instruction it executes.
func count(p *bc.Program, stdin []byte) (*program, error) {
	img, err := vm.NewImage(p)
	if err != nil {
		return nil, err
	}
	insts, offs, err := bc.Insts(p.Code)
	if err != nil {
		return nil, err
	}
	w := &walker{insts: insts, index: make([]int32, len(p.Code)/8+1), target: make([]int32, len(insts))}
	for i := range w.index {
		w.index[i] = -1
	}
	for i, o := range offs {
		w.index[o/8] = int32(i)
	}
	for i, in := range insts {
		w.target[i] = -1
		if bc.IsTransfer(in.Op) {
			w.target[i] = int32(w.lookup(in.Imm))
		}
	}
	w.exec = make([]uint64, len(insts))
	w.taken = make([]uint64, len(insts))
	cfg := config
	cfg.Events = w
	m := vm.New(img, cfg, discard{})
	w.cur, err = w.at(p.Entry)
	if err != nil {
		return nil, err
	}
	if m.State() == vm.Ready {
		w.advance()
	}
	delivered := 0
	for yields := 0; ; yields++ {
		st := m.Run()
		if st == vm.Ready && yields < maxYields {
			continue // a TICK
		}
		if st != vm.Blocked || m.BlockedOn() != vm.ChanStdin || delivered == 2 {
			break
		}
		if delivered == 0 {
			m.Deliver(vm.ChanStdin, stdin)
		} else {
			m.Deliver(vm.ChanStdin, nil)
		}
		delivered++
	}
	if w.err != nil {
		return nil, w.err
	}
	pr := &program{insts: insts, exec: w.exec, taken: w.taken}
	for _, n := range w.exec {
		pr.total += n
	}
	return pr, nil
}

type discard struct{}

func (discard) Send(uint8, []byte) {}

// walker follows a run instruction by instruction from the trace events
// (vm.TraceEvents): straight-line code, JMP and CALL from the program, the
// conditional branches and RETs from the events. It runs ahead of the
// machine up to the next branch or RET, so a run that faults inside a
// straight-line run counts the rest of that run too (a few instructions
// of the fault cases).
type walker struct {
	insts       []bc.Inst
	index       []int32 // byte address / 8 → instruction index, or -1
	target      []int32 // per instruction: its transfer target's index, or -1
	exec, taken []uint64
	cur         int    // the instruction to execute next; -1 once stopped
	steps       uint64 // instructions walked
	err         error
}

func (w *walker) lookup(addr uint64) int {
	if addr%8 != 0 || addr/8 >= uint64(len(w.index)) {
		return -1
	}
	return int(w.index[addr/8])
}

func (w *walker) at(addr uint64) (int, error) {
	i := w.lookup(addr)
	if i < 0 {
		return -1, fmt.Errorf("the trace reaches %#x, not an instruction", addr)
	}
	return i, nil
}

// advance executes up to and including the next conditional branch or RET,
// whose outcome the next event gives, or to a stop.
func (w *walker) advance() {
	for w.cur >= 0 && w.cur < len(w.insts) {
		// Every instruction costs a tick: a walk past the budget is a
		// loop of JMPs and CALLs that the machine ended with a fault.
		if w.steps++; w.steps > config.Ticks {
			w.cur = -1
			return
		}
		in := w.insts[w.cur]
		w.exec[w.cur]++
		switch in.Op {
		case bc.JZ, bc.JNZ, bc.JLT, bc.JLTS, bc.JEQ, bc.JNE, bc.RET:
			return
		case bc.JMP, bc.CALL:
			w.cur = int(w.target[w.cur]) // verified: an instruction
		case bc.HALT, bc.FAULT:
			w.cur = -1
			return
		default:
			w.cur++
		}
	}
	w.cur = -1
}

func (w *walker) fail(err error) {
	if w.err == nil {
		w.err = err
	}
	w.cur = -1
}

// Branch implements vm.TraceEvents.
func (w *walker) Branch(taken bool) {
	if w.cur < 0 {
		w.fail(fmt.Errorf("a branch event after the walk stopped"))
		return
	}
	if taken {
		w.taken[w.cur]++
		w.cur = int(w.target[w.cur]) // verified: an instruction
	} else {
		w.cur++
	}
	w.advance()
}

// Return implements vm.TraceEvents.
func (w *walker) Return(to uint64) {
	i, err := w.at(to)
	if err != nil {
		w.fail(err)
		return
	}
	w.cur = i
	w.advance()
}
