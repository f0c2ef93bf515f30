package forgegen_test

import (
	"bytes"
	"fmt"
	"math"
	"math/rand"
	"strings"
	"testing"

	"github.com/genesis-toolchain/genesis/backend/forgegen"
	"github.com/genesis-toolchain/genesis/diag"
	"github.com/genesis-toolchain/genesis/forge/asm"
	"github.com/genesis-toolchain/genesis/forge/bytecode"
	"github.com/genesis-toolchain/genesis/forge/vm"
	"github.com/genesis-toolchain/genesis/frontend/fasm"
	"github.com/genesis-toolchain/genesis/ir"
)

// TestDifferential compiles random integer functions and checks that the
// VM computes what a reference evaluator of the IR computes.
func TestDifferential(t *testing.T) {
	n := 300
	if testing.Short() {
		n = 50
	}
	for seed := int64(1); seed <= int64(n); seed++ {
		src := genProgram(rand.New(rand.NewSource(seed)))
		m, diags := ir.Parse("rand.ir", []byte(src))
		if diags.HasErrors() {
			t.Fatalf("seed %d: parse: %s\n%s", seed, diags.Render(diag.Sources{"rand.ir": []byte(src)}), src)
		}
		if diags := ir.Verify(m); len(diags) > 0 {
			t.Fatalf("seed %d: verify: %s\n%s", seed, diags.Render(diag.Sources{"rand.ir": []byte(src)}), src)
		}
		want := evalMain(t, m)
		got, text := runVM(t, m)
		if got != want {
			t.Fatalf("seed %d: VM %d, reference %d\n%s\n%s", seed, got, want, src, text)
		}
	}
}

// checkTextIsProgram checks that the assembly text of a compilation
// assembles to the program the backend built in memory: --emit asm shows
// the program that runs.
func checkTextIsProgram(t *testing.T, text string, p *bytecode.Program) {
	t.Helper()
	q, diags := fasm.Assemble("out.s.fasm", []byte(text))
	if diags.HasErrors() {
		t.Fatalf("the assembly text does not assemble: %v\n%s", diags, text)
	}
	if !bytes.Equal(q.Encode(), p.Encode()) {
		t.Fatalf("the assembly text is another program than the one built:\ntext:\n%s\nbuilt:\n%s", text, asm.Disassemble(p))
	}
}

// runVM compiles m, runs it and returns main's result.
func runVM(t *testing.T, m *ir.Module) (int64, string) {
	t.Helper()
	text, p, diags := forgegen.Build(m, "rand.fasm")
	if diags.HasErrors() {
		t.Fatalf("compile: %v\n%s", diags, text)
	}
	checkTextIsProgram(t, text, p)
	img, err := vm.NewImage(p)
	if err != nil {
		t.Fatal(err)
	}
	mach := vm.New(img, vm.Config{Ticks: 1 << 30, Memory: 16 << 20, Stack: 64 << 10}, nil)
	if st := mach.Run(); st != vm.Halted {
		t.Fatalf("run: %v %v at %d\n%s", st, mach.Fault(), mach.PC(), text)
	}
	return int64(mach.Register(0)), text
}

var (
	intTypes = []string{"i8", "i16", "i32", "i64"}
	binOps   = []string{"add", "sub", "mul", "div.s", "div.u", "rem.s", "rem.u", "and", "or", "xor", "shl", "shr.u", "shr.s"}
	cmpOps   = []string{"eq", "ne", "lt.s", "lt.u", "le.s", "le.u", "gt.s", "gt.u", "ge.s", "ge.u"}
)

// genProgram returns a module whose main computes random integer
// operations at every width and returns a hash of all of them.
func genProgram(r *rand.Rand) string {
	var b strings.Builder
	pool := map[string][]string{}
	n := 0
	fresh := func() string { n++; return fmt.Sprintf("%%v%d", n) }
	pick := func(t string) string { p := pool[t]; return p[r.Intn(len(p))] }
	edge := func(t string) int64 {
		bits := map[string]uint{"i8": 8, "i16": 16, "i32": 32, "i64": 64}[t]
		switch r.Intn(8) {
		case 0:
			return 0
		case 1:
			return 1
		case 2:
			return -1
		case 3:
			return -1 << (bits - 1) // MIN
		case 4:
			return 1<<(bits-1) - 1 // MAX
		case 5:
			return int64(r.Intn(130))
		}
		return ir.Normalize(typeOf(t), r.Int63()-r.Int63())
	}
	b.WriteString("func @main() -> i64 {\n")
	for _, t := range intTypes {
		for k := 0; k < 3; k++ {
			v := fresh()
			fmt.Fprintf(&b, "  %s = const %s %d\n", v, t, edge(t))
			pool[t] = append(pool[t], v)
		}
		one := fresh()
		fmt.Fprintf(&b, "  %s = const %s 1\n", one, t)
		pool[t+"one"] = []string{one}
	}
	var outs []string
	for k := 0; k < 40; k++ {
		t := intTypes[r.Intn(len(intTypes))]
		v := fresh()
		switch r.Intn(10) {
		case 0, 1, 2, 3, 4:
			op := binOps[r.Intn(len(binOps))]
			a, c := pick(t), pick(t)
			if strings.HasPrefix(op, "div") || strings.HasPrefix(op, "rem") {
				nz := fresh()
				fmt.Fprintf(&b, "  %s = or %s, %s\n", nz, c, pool[t+"one"][0])
				c = nz
			}
			fmt.Fprintf(&b, "  %s = %s %s, %s\n", v, op, a, c)
			pool[t] = append(pool[t], v)
		case 5:
			op := []string{"neg", "not"}[r.Intn(2)]
			fmt.Fprintf(&b, "  %s = %s %s\n", v, op, pick(t))
			pool[t] = append(pool[t], v)
		case 6:
			// A comparison, materialized or branched on.
			op := cmpOps[r.Intn(len(cmpOps))]
			c := fresh()
			fmt.Fprintf(&b, "  %s = %s %s, %s\n", c, op, pick(t), pick(t))
			if r.Intn(2) == 0 {
				fmt.Fprintf(&b, "  %s = zext %s %s\n", v, t, c)
			} else {
				x, y := pick(t), pick(t)
				fmt.Fprintf(&b, "  %s = if %s -> %s {\n    yield %s\n  } else {\n    yield %s\n  }\n", v, c, t, x, y)
			}
			pool[t] = append(pool[t], v)
		case 7, 8:
			// A cast to another width.
			u := intTypes[r.Intn(len(intTypes))]
			ti, ui := index(t), index(u)
			switch {
			case ui > ti:
				op := []string{"sext", "zext"}[r.Intn(2)]
				fmt.Fprintf(&b, "  %s = %s %s %s\n", v, op, u, pick(t))
			case ui < ti:
				fmt.Fprintf(&b, "  %s = trunc %s %s\n", v, u, pick(t))
			default:
				fmt.Fprintf(&b, "  %s = add %s, %s\n", v, pick(t), pick(t))
			}
			pool[u] = append(pool[u], v)
		case 9:
			// A switch on a narrow value.
			x := pick(t)
			c1, c2 := edge(t), edge(t)
			if c1 == c2 {
				c2 = ir.Normalize(typeOf(t), c1+1)
			}
			fmt.Fprintf(&b, "  %s = switch %s -> %s {\n  case %d:\n    yield %s\n  case %d:\n    yield %s\n  default:\n    yield %s\n  }\n",
				v, x, t, c1, pick(t), c2, pick(t), pick(t))
			pool[t] = append(pool[t], v)
		}
		outs = append(outs, v)
	}
	// Hash every value, zero-extended, into an i64.
	acc := fresh()
	fmt.Fprintf(&b, "  %s = const i64 0\n", acc)
	k31 := fresh()
	fmt.Fprintf(&b, "  %s = const i64 1000003\n", k31)
	for _, t := range intTypes {
		for _, v := range pool[t] {
			w := v
			if t != "i64" {
				w = fresh()
				fmt.Fprintf(&b, "  %s = zext i64 %s\n", w, v)
			}
			m, a := fresh(), fresh()
			fmt.Fprintf(&b, "  %s = mul %s, %s\n", m, acc, k31)
			fmt.Fprintf(&b, "  %s = xor %s, %s\n", a, m, w)
			acc = a
		}
	}
	fmt.Fprintf(&b, "  return %s\n}\n", acc)
	return b.String()
}

func index(t string) int {
	for i, s := range intTypes {
		if s == t {
			return i
		}
	}
	return -1
}

func typeOf(t string) ir.Type {
	return map[string]ir.Type{"i8": ir.I8, "i16": ir.I16, "i32": ir.I32, "i64": ir.I64}[t]
}

// evalMain is a reference evaluator for the straight-line integer subset
// of the IR that genProgram writes (plus if and switch with results).
func evalMain(t *testing.T, m *ir.Module) int64 {
	t.Helper()
	env := map[*ir.Value]int64{}
	var region func(r *ir.Region) []int64
	region = func(r *ir.Region) []int64 {
		for _, in := range r.Instrs {
			arg := func(i int) int64 { return env[in.Args[i]] }
			switch in.Op {
			case ir.OpYield, ir.OpReturn:
				out := make([]int64, len(in.Args))
				for i := range in.Args {
					out[i] = arg(i)
				}
				return out
			case ir.OpIf:
				reg := in.Regions[1]
				if arg(0) != 0 {
					reg = in.Regions[0]
				}
				for i, v := range region(reg) {
					env[in.Results[i]] = v
				}
			case ir.OpSwitch:
				x := arg(0)
				reg := in.Regions[len(in.Regions)-1]
			find:
				for i, cs := range in.Cases {
					for _, c := range cs {
						if c == x {
							reg = in.Regions[i]
							break find
						}
					}
				}
				for i, v := range region(reg) {
					env[in.Results[i]] = v
				}
			default:
				var ty ir.Type
				if len(in.Results) > 0 {
					ty = in.Results[0].Type
				}
				env[in.Results[0]] = evalOp(in, ty, arg)
			}
		}
		return nil
	}
	return region(m.Func("main").Body)[0]
}

func evalOp(in *ir.Instr, ty ir.Type, arg func(int) int64) int64 {
	mask := func(t ir.Type) uint64 {
		if t.Bits() >= 64 {
			return math.MaxUint64
		}
		return 1<<t.Bits() - 1
	}
	norm := func(x int64) int64 { return ir.Normalize(ty, x) }
	b2i := func(b bool) int64 {
		if b {
			return 1
		}
		return 0
	}
	var at ir.Type
	if len(in.Args) > 0 {
		at = in.Args[0].Type
	}
	ua := func(i int) uint64 { return uint64(arg(i)) & mask(at) }
	switch in.Op {
	case ir.OpConst:
		return in.Lit.Int
	case ir.OpAdd:
		return norm(arg(0) + arg(1))
	case ir.OpSub:
		return norm(arg(0) - arg(1))
	case ir.OpMul:
		return norm(arg(0) * arg(1))
	case ir.OpDivS:
		return norm(arg(0) / arg(1))
	case ir.OpRemS:
		return norm(arg(0) % arg(1))
	case ir.OpDivU:
		return norm(int64(ua(0) / ua(1)))
	case ir.OpRemU:
		return norm(int64(ua(0) % ua(1)))
	case ir.OpAnd:
		return arg(0) & arg(1)
	case ir.OpOr:
		return arg(0) | arg(1)
	case ir.OpXor:
		return arg(0) ^ arg(1)
	case ir.OpShl:
		return norm(int64(uint64(arg(0)) << (uint64(arg(1)) & 63)))
	case ir.OpShrU:
		return norm(int64(ua(0) >> (uint64(arg(1)) & 63)))
	case ir.OpShrS:
		return norm(arg(0) >> (uint64(arg(1)) & 63))
	case ir.OpNeg:
		return norm(-arg(0))
	case ir.OpNot:
		return norm(^arg(0))
	case ir.OpEq:
		return b2i(arg(0) == arg(1))
	case ir.OpNe:
		return b2i(arg(0) != arg(1))
	case ir.OpLtS:
		return b2i(arg(0) < arg(1))
	case ir.OpLeS:
		return b2i(arg(0) <= arg(1))
	case ir.OpGtS:
		return b2i(arg(0) > arg(1))
	case ir.OpGeS:
		return b2i(arg(0) >= arg(1))
	case ir.OpLtU:
		return b2i(ua(0) < ua(1))
	case ir.OpLeU:
		return b2i(ua(0) <= ua(1))
	case ir.OpGtU:
		return b2i(ua(0) > ua(1))
	case ir.OpGeU:
		return b2i(ua(0) >= ua(1))
	case ir.OpSext:
		return arg(0)
	case ir.OpZext:
		return int64(ua(0))
	case ir.OpTrunc:
		return norm(arg(0))
	}
	panic("evalOp: unexpected op " + in.Op.String())
}
