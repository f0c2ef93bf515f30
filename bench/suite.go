package main

// The integer suite of issue 17: twelve ordinary programs, each written in
// Genesis (bench/corpus), C (bench/c) and Lua (bench/lua, one file for Lua
// 5.4 and LuaJIT), measured on every implementation against gcc -O2. See
// docs/bench.md, "The integer suite (issue 17)".

import (
	"bytes"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
)

// A suiteProgram is one program of the integer suite: its name (the file
// NAME.gen, NAME.c and NAME.lua), the size the benchmark runs it at and
// what it prints then, and the small size the fast test runs it at (each
// version's default when no size is given) and what it prints then.
type suiteProgram struct {
	name        string
	size        uint64
	want        string
	small       uint64
	smallWant   string
	description string
}

// suite is the integer suite. The sizes make each program run 0.1–0.35 s
// compiled by gcc -O2 on the machine of docs/bench.md, but nsieve (0.09
// s), which Lua, running the same size, holds back: its table of
// booleans would take 1 GB at n = 12.
var suite = []suiteProgram{
	{"fannkuch", 10, "73196\n38\n", 7, "228\n16\n", "fannkuch-redux(n): checksum and most flips over all permutations"},
	{"nsieve", 11, "20480000\n1299069\n10240000\n679461\n5120000\n356244\n", 2, "40000\n4203\n20000\n2262\n10000\n1229\n", "nsieve-bits(n): primes up to 2^n·10^4, 2^(n-1)·10^4, 2^(n-2)·10^4"},
	{"matmul", 700, "841646450146\n1684161\n1687542\n", 20, "19374447\n51773\n45242\n", "n×n integer matrix product, triple loop"},
	{"collatz", 10000000, "8400511\n686\n", 10000, "6171\n262\n", "longest Collatz sequence below n, with a memo"},
	{"hashtable", 10000000, "625001\n37\n10000000\n11\n", 10000, "626\n29\n10000\n11\n", "open addressing, linear probing: n insertions, n/16 lookups"},
	{"quicksort", 2000000, "0\n272281390\n", 10000, "0\n667138354\n", "recursive quicksort of n integers (Lomuto, middle pivot)"},
	{"strings", 200000, "24600000\n4600000\n1400000\n400000\n1049064\n", 40, "4920\n920\n280\n80\n72405077\n", "words, letter counts, upper case, search, word reversal over n·123 bytes"},
	{"heapsort", 2000000, "0\n179\n463012682\n999999602\n440211686\n", 10000, "0\n353582\n452043633\n999986806\n624861264\n", "heapsort of n integers"},
	{"lcs", 15000, "9803\n815698966\n", 200, "128\n972463342\n", "longest common subsequence of two n-letter strings, dynamic programming"},
	{"dijkstra", 1200, "33570\n26134132007\n1830404\n", 30, "1025\n481662\n1130\n", "Dijkstra with a binary heap on an n×n grid of heights"},
	{"nqueens", 13, "73712\n", 6, "4\n", "n-queens by recursive backtracking"},
	{"hash", 3000000, "3452051485\n3417753195\n75993393040\n", 1000, "3065368139\n2314469014\n65826436384\n", "djb2 and Adler-32 over n bytes, 16 passes"},
}

// The machine of the suite's Forge, native and Go runs: room for the
// largest program's arrays (dijkstra: 58 MB at n = 1200) and recursion,
// and a tick budget far above what any program uses (about 10^10).
const (
	suiteTicks  = "1000000000000"
	suiteMemory = "134217728"
	suiteStack  = "1048576"
)

// Targets of issue 17 on the suite: geometric means of CPU-time ratios
// to gcc -O2, except Forge against Lua 5.4, which holds on each program.
const (
	suiteMaxForgeVsC      = 6.0 // Genesis on Forge / gcc -O2
	suiteMaxForgeVsLuaJIT = 1.0 // Genesis on Forge / luajit -joff (strictly below)
	suiteMaxNativeVsC     = 1.2
	suiteMaxGoVsC         = 1.8
)

// A suiteImpl is one implementation measured on the suite: the command
// that runs program p at size n, and whether n goes on standard input
// (Genesis has no command line) rather than as the last argument.
type suiteImpl struct {
	name  string
	argv  func(p suiteProgram) []string
	stdin bool
}

// suiteOptions are the harness's choices for the suite.
type suiteOptions struct {
	forge, genesisc, goCmd, out string
	runs                        int
	only                        *regexp.Regexp // nil: every program
	noLua                       bool
	withNative                  bool   // native code can be built (llc found)
	before                      string // another genesisc to compare with ("": none)
}

// selectSuite returns the programs whose names match re (all with nil).
func selectSuite(re *regexp.Regexp) []suiteProgram {
	var ps []suiteProgram
	for _, p := range suite {
		if re == nil || re.MatchString(p.name) {
			ps = append(ps, p)
		}
	}
	return ps
}

// runSuite builds every program of the suite for every implementation,
// checks and times them, interleaved, best CPU time of o.runs each,
// prints the tables and the verdicts of issue 17, and reports whether
// every target is met.
func runSuite(o suiteOptions) bool {
	progs := selectSuite(o.only)
	if len(progs) == 0 {
		fatalf("-run %s matches no program of the suite (%s)", o.only, suiteNames())
	}
	dir := filepath.Join(o.out, "suite")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		fatalf("%v", err)
	}
	// Each Genesis program is built by genesisc for the three targets,
	// and with -before also by the other genesisc, under the suffix
	// "-before".
	compilers := []struct{ genesisc, suffix string }{{o.genesisc, ""}}
	if o.before != "" {
		compilers = append(compilers, struct{ genesisc, suffix string }{o.before, "-before"})
	}
	printSrc := filepath.Join("bench", "genesis", "print.gen")
	for _, p := range progs {
		src := filepath.Join("bench", "corpus", p.name+".gen")
		step("gcc", "-O2", "-o", filepath.Join(dir, p.name+"-c"), filepath.Join("bench", "c", p.name+".c"))
		for _, c := range compilers {
			step(c.genesisc, "build", "-o", filepath.Join(dir, p.name+c.suffix+".frgp"), src, printSrc)
			if o.withNative {
				step(c.genesisc, "build", "--target", "native", "-o", filepath.Join(dir, p.name+c.suffix+"-native"), src, printSrc)
			}
			goSrc := filepath.Join(dir, p.name+c.suffix+"-go-src")
			step(c.genesisc, "build", "--target", "go", "-o", goSrc, src, printSrc)
			bin, err := filepath.Abs(filepath.Join(dir, p.name+c.suffix+"-go"))
			if err != nil {
				fatalf("%v", err)
			}
			cmd := exec.Command(o.goCmd, "build", "-o", bin, ".")
			cmd.Dir = goSrc
			if msg, err := cmd.CombinedOutput(); err != nil {
				fatalf("go build in %s: %v\n%s", goSrc, err, msg)
			}
		}
	}

	machine := []string{"--memory", suiteMemory, "--stack", suiteStack}
	bin := func(suffix string, args ...string) func(p suiteProgram) []string {
		return func(p suiteProgram) []string {
			return append([]string{filepath.Join(dir, p.name+suffix)}, args...)
		}
	}
	forgeRun := func(suffix string) func(p suiteProgram) []string {
		return func(p suiteProgram) []string {
			return append(append([]string{o.forge, "exec", "--ticks", suiteTicks}, machine...), filepath.Join(dir, p.name+suffix+".frgp"))
		}
	}
	impls := []suiteImpl{{"gcc -O2", bin("-c"), false}}
	for _, c := range compilers {
		label := strings.TrimPrefix(c.suffix, "-")
		if label != "" {
			label = " " + label
		}
		impls = append(impls, suiteImpl{"forge" + label, forgeRun(c.suffix), true}, suiteImpl{"go" + label, bin(c.suffix+"-go", machine...), true})
		if o.withNative {
			impls = append(impls, suiteImpl{"native" + label, bin(c.suffix+"-native", machine...), true})
		}
	}
	if !o.withNative {
		fmt.Println("suite: no native column (llc not found; apt-get install -y llvm)")
	}
	luaFile := func(p suiteProgram) string { return filepath.Join("bench", "lua", p.name+".lua") }
	if !o.noLua {
		if lua := findLua(); lua != "" {
			impls = append(impls, suiteImpl{"lua5.4", func(p suiteProgram) []string { return []string{lua, luaFile(p)} }, false})
		} else {
			fmt.Println("suite: lua5.4 not found, no Lua 5.4 column (apt-get install -y lua5.4)")
		}
		if lj, err := exec.LookPath("luajit"); err == nil {
			impls = append(impls,
				suiteImpl{"luajit", func(p suiteProgram) []string { return []string{lj, luaFile(p)} }, false},
				suiteImpl{"luajit -joff", func(p suiteProgram) []string { return []string{lj, "-joff", luaFile(p)} }, false})
		} else {
			fmt.Println("suite: luajit not found, no LuaJIT columns (apt-get install -y luajit)")
		}
	}
	run := func(im suiteImpl, p suiteProgram) (time.Duration, error) {
		size := strconv.FormatUint(p.size, 10)
		if im.stdin {
			return measureInput(im.argv(p), size+"\n", p.want)
		}
		return measureInput(append(im.argv(p), size), "", p.want)
	}

	// One untimed run reads each program's exact tick count.
	ticks := map[string]uint64{}
	for _, p := range progs {
		for _, c := range compilers {
			frgp := filepath.Join(dir, p.name+c.suffix+".frgp")
			result := filepath.Join(dir, p.name+c.suffix+".result.json")
			argv := append(append([]string{o.forge, "exec", "--ticks", suiteTicks}, machine...), "--result", result, frgp)
			n, err := forgeTicksInput(argv, strconv.FormatUint(p.size, 10)+"\n", p.want, result)
			if err != nil {
				fatalf("suite, %s: %v", p.name, err)
			}
			ticks[p.name+c.suffix] = n
		}
	}

	fmt.Printf("\nThe integer suite (issue 17): %d programs, %d implementations, best of %d interleaved runs\n",
		len(progs), len(impls), o.runs)
	best := map[string]time.Duration{}
	key := func(p suiteProgram, im suiteImpl) string { return p.name + "/" + im.name }
	for r := 0; r < o.runs; r++ {
		for _, p := range progs {
			for _, im := range impls {
				t, err := run(im, p)
				if err != nil {
					fatalf("suite, %s, %s: %v", p.name, im.name, err)
				}
				if b, ok := best[key(p, im)]; !ok || t < b {
					best[key(p, im)] = t
				}
			}
		}
		fmt.Printf("  round %d of %d done\n", r+1, o.runs)
	}
	pass := reportSuite(progs, impls, best, ticks)
	if o.before != "" {
		reportBefore(progs, impls, best, ticks, o.before)
	}
	return pass
}

// reportSuite prints the suite's tables and the verdicts of issue 17 and
// reports whether every target that could be measured is met.
func reportSuite(progs []suiteProgram, impls []suiteImpl, best map[string]time.Duration, ticks map[string]uint64) bool {
	has := map[string]bool{}
	for _, im := range impls {
		has[im.name] = true
	}
	get := func(p suiteProgram, name string) time.Duration { return best[p.name+"/"+name] }

	fmt.Printf("\nCPU time (user+sys of the process, process start included); every run printed the expected answer:\n\n")
	tw := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprint(tw, "program\tsize\t")
	for _, im := range impls {
		fmt.Fprintf(tw, "%s\t", im.name)
	}
	fmt.Fprint(tw, "forge ticks\tns/tick\t\n")
	var totalTicks uint64
	for _, p := range progs {
		fmt.Fprintf(tw, "%s\t%d\t", p.name, p.size)
		for _, im := range impls {
			fmt.Fprintf(tw, "%s\t", ms(get(p, im.name)))
		}
		n := ticks[p.name]
		totalTicks += n
		fmt.Fprintf(tw, "%d\t%.2f\t\n", n, float64(get(p, "forge"))/float64(n))
	}
	tw.Flush()

	// Ratios to gcc, and Forge's to the two Lua interpreters.
	type column struct {
		title    string
		num, den string
	}
	var cols []column
	for _, im := range impls[1:] {
		cols = append(cols, column{im.name + "/gcc", im.name, "gcc -O2"})
	}
	if has["lua5.4"] {
		cols = append(cols, column{"forge/lua5.4", "forge", "lua5.4"})
	}
	if has["luajit -joff"] {
		cols = append(cols, column{"forge/luajit -joff", "forge", "luajit -joff"})
	}
	geo := map[string]float64{}
	fmt.Printf("\nRatios of CPU time:\n\n")
	tw = tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprint(tw, "program\t")
	for _, c := range cols {
		fmt.Fprintf(tw, "%s\t", c.title)
	}
	fmt.Fprint(tw, "\n")
	logSum := map[string]float64{}
	for _, p := range progs {
		fmt.Fprintf(tw, "%s\t", p.name)
		for _, c := range cols {
			r := ratio(get(p, c.num), get(p, c.den))
			logSum[c.title] += math.Log(r)
			fmt.Fprintf(tw, "%.2f\t", r)
		}
		fmt.Fprint(tw, "\n")
	}
	fmt.Fprint(tw, "geometric mean\t")
	for _, c := range cols {
		geo[c.title] = math.Exp(logSum[c.title] / float64(len(progs)))
		fmt.Fprintf(tw, "%.2f\t", geo[c.title])
	}
	fmt.Fprint(tw, "\n")
	tw.Flush()

	fmt.Printf("\nTotal Forge ticks of the suite: %d\n", totalTicks)
	fmt.Printf("\nIssue 17's targets (geometric means over the %d programs):\n", len(progs))
	pass := true
	check := func(ok bool, format string, args ...any) {
		pass = pass && ok
		fmt.Printf("  "+format+"  %s\n", append(args, verdict(ok))...)
	}
	check(geo["forge/gcc"] <= suiteMaxForgeVsC, "Genesis on Forge / gcc -O2: %.2f×  (target ≤ %.0f×)", geo["forge/gcc"], suiteMaxForgeVsC)
	if has["lua5.4"] {
		var slower []string
		for _, p := range progs {
			if r := ratio(get(p, "forge"), get(p, "lua5.4")); r >= 1 {
				slower = append(slower, fmt.Sprintf("%s %.2f", p.name, r))
			}
		}
		sort.Strings(slower)
		what := "none"
		if len(slower) > 0 {
			what = strings.Join(slower, ", ")
		}
		check(len(slower) == 0, "Genesis on Forge faster than Lua 5.4 on every program: slower on %s", what)
	} else {
		fmt.Println("  Genesis on Forge against Lua 5.4: not measured (no lua5.4)")
	}
	if has["luajit -joff"] {
		check(geo["forge/luajit -joff"] < suiteMaxForgeVsLuaJIT, "Genesis on Forge / luajit -joff: %.2f×  (target < %.0f×)",
			geo["forge/luajit -joff"], suiteMaxForgeVsLuaJIT)
	} else {
		fmt.Println("  Genesis on Forge against LuaJIT's interpreter: not measured (no luajit)")
	}
	if has["native"] {
		check(geo["native/gcc"] <= suiteMaxNativeVsC, "Genesis native / gcc -O2: %.2f×  (target ≤ %.1f×)", geo["native/gcc"], suiteMaxNativeVsC)
	}
	check(geo["go/gcc"] <= suiteMaxGoVsC, "Genesis on Go / gcc -O2: %.2f×  (target ≤ %.1f×)", geo["go/gcc"], suiteMaxGoVsC)
	return pass
}

// suiteNames lists the suite's program names.
func suiteNames() string {
	var names []string
	for _, p := range suite {
		names = append(names, p.name)
	}
	return strings.Join(names, ", ")
}

// measureInput runs argv once with stdin as its standard input and
// returns the CPU time of the process, after checking that it succeeded
// and printed want.
func measureInput(argv []string, stdin, want string) (time.Duration, error) {
	var stdout, stderr bytes.Buffer
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdin = strings.NewReader(stdin)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return 0, fmt.Errorf("%s: %v\n%s", strings.Join(argv, " "), err, stderr.String())
	}
	if got := stdout.String(); got != want {
		return 0, fmt.Errorf("%s printed %q, want %q", strings.Join(argv, " "), got, want)
	}
	st := cmd.ProcessState
	return st.UserTime() + st.SystemTime(), nil
}

// forgeTicksInput runs a forge exec command line that writes its result
// to result, with stdin as standard input, and returns the ticks used.
func forgeTicksInput(argv []string, stdin, want, result string) (uint64, error) {
	if _, err := measureInput(argv, stdin, want); err != nil {
		return 0, err
	}
	return readTicks(result)
}

// reportBefore prints the Genesis programs compiled by the genesisc of
// -before against the same programs compiled by this one, from the same
// interleaved rounds: CPU time after/before on each target and Forge's
// ticks, with the geometric means and the change of the suite's total
// ticks.
func reportBefore(progs []suiteProgram, impls []suiteImpl, best map[string]time.Duration, ticks map[string]uint64, before string) {
	targets := []string{"forge", "go"}
	for _, im := range impls {
		if im.name == "native" {
			targets = append(targets, "native")
		}
	}
	fmt.Printf("\nBefore (%s) and after (this genesisc), the same interleaved rounds:\n\n", before)
	tw := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprint(tw, "program\t")
	for _, t := range targets {
		fmt.Fprintf(tw, "%[1]s before\t%[1]s after\t%[1]s after/before\t", t)
	}
	fmt.Fprint(tw, "ticks before\tticks after\tticks after/before\t\n")
	logSum := map[string]float64{}
	var tb, ta uint64
	for _, p := range progs {
		fmt.Fprintf(tw, "%s\t", p.name)
		for _, t := range targets {
			b, a := best[p.name+"/"+t+" before"], best[p.name+"/"+t]
			r := ratio(a, b)
			logSum[t] += math.Log(r)
			fmt.Fprintf(tw, "%s\t%s\t%.3f\t", ms(b), ms(a), r)
		}
		b, a := ticks[p.name+"-before"], ticks[p.name]
		tb, ta = tb+b, ta+a
		r := float64(a) / float64(b)
		logSum["ticks"] += math.Log(r)
		fmt.Fprintf(tw, "%d\t%d\t%.3f\t\n", b, a, r)
	}
	fmt.Fprint(tw, "geometric mean\t")
	for _, t := range targets {
		fmt.Fprintf(tw, "\t\t%.3f\t", math.Exp(logSum[t]/float64(len(progs))))
	}
	fmt.Fprintf(tw, "%d\t%d\t%.3f\t\n", tb, ta, math.Exp(logSum["ticks"]/float64(len(progs))))
	tw.Flush()
	fmt.Printf("\nTotal ticks of the suite: %d before, %d after: %+.1f %%  (issue 17: at least 35 %% fewer)\n",
		tb, ta, 100*(float64(ta)/float64(tb)-1))
}
