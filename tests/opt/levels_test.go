package opt_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/genesis-toolchain/genesis/compiler"
	"github.com/genesis-toolchain/genesis/internal/testharness/difftest"
	"github.com/genesis-toolchain/genesis/internal/testharness/genfuzz"
)

// The targets agree with each other on every program (tests/genesis), but
// they all compile the one module the optimizer made: a miscompilation
// by a pass would be the same on all three. The tests here compare each
// program at -O2 against the same program at -O0 on the Forge Machine.

// levelsAgree compiles p at -O0 and -O2, runs both on the Forge Machine
// and reports how they differ, or "". Runs that outgrow the stack or the
// memory at one level only are not a difference: frames are smaller
// after optimization.
func levelsAgree(t *testing.T, p difftest.Program) string {
	t.Helper()
	var outs [2]difftest.Outcome
	for i, level := range []int{0, 2} {
		o, err := difftest.Forge(p, level)
		if err != nil {
			t.Fatalf("%s -O%d: %v", p.Name, level, err)
		}
		outs[i] = o
	}
	if outs[0] == outs[1] {
		return ""
	}
	for _, o := range outs {
		if strings.Contains(o.Fault, "STACK") || strings.Contains(o.Fault, "MEMORY") || strings.Contains(o.Fault, "TICKS") {
			return ""
		}
	}
	return fmt.Sprintf("-O0 %s; -O2 %s", outs[0], outs[1])
}

// TestLevelsRandomPrograms runs random Genesis programs (genfuzz, the
// generator of the differential tests) at -O0 and -O2.
func TestLevelsRandomPrograms(t *testing.T) {
	if testing.Short() {
		t.Skip("compiles and runs programs: seconds")
	}
	const n, seed = 24, 1700
	msgs := make([]string, n)
	srcs := make([]string, n)
	difftest.Parallel(n, func(i int) {
		g := genfuzz.Generate(seed+int64(i), 12)
		srcs[i] = g.Source()
		msgs[i] = levelsAgree(t, difftest.Program{Name: fmt.Sprintf("gen%d", seed+i), Sources: g.Sources()})
	})
	for i, msg := range msgs {
		if msg != "" {
			t.Errorf("seed %d: %s\n%s", seed+i, msg, srcs[i])
		}
	}
}

// divisionProgram returns a Genesis program that checksums x*c, x/c and
// x%c for pseudo-random x (and the edge values first) of every integer
// type, for constants c that strength reduces (powers of two, their
// negations, the magic divisors of narrow types) and constants it keeps,
// inside loops whose tests are <, <=, != and a bool, the shapes loop
// rotation rewrites, and loops tested with <= and >= of two variables,
// which it versions, with bounds at and near their types' extremes.
func divisionProgram() string {
	var b strings.Builder
	b.WriteString(`fn put_byte(c: u8) -> void {
  let v: u8 = c;
  asm (in r0 = &v) { SEND 0, r0, 1 };
}

fn put_u64(n: u64) -> void {
  let mut buf: [u8; 20] = [0y00; 20];
  let mut i: u64 = 20;
  let mut v: u64 = n;
  while v != 0 || i == 20 {
    i = i - 1;
    buf[i] = (v % 10 + 48) as u8;
    v = v / 10;
  };
  while i <= 19 {
    put_byte(buf[i]);
    i = i + 1;
  };
  put_byte(10);
}

fn mix(h: u64, v: u64) -> u64 {
  return (h ^ v) * 1099511628211;
}

`)
	types := []struct {
		name   string
		signed bool
		bits   int
	}{{"u8", false, 8}, {"u16", false, 16}, {"u32", false, 32}, {"u64", false, 64},
		{"i8", true, 8}, {"i16", true, 16}, {"i32", true, 32}, {"i64", true, 64}}
	for _, ty := range types {
		consts := []int64{2, 3, 4, 7, 10, 16, 25, 64, 100}
		if ty.signed {
			consts = append(consts, -1, -2, -3, -8, -10)
		}
		var edges []string
		if ty.signed {
			edges = []string{"0", "1", fmt.Sprint(-(int64(1) << (ty.bits - 2)) * 2), fmt.Sprint(int64(1)<<(ty.bits-2) - 1 + int64(1)<<(ty.bits-2)), "-1"}
		} else {
			edges = []string{"0", "1", fmt.Sprint(uint64(1)<<(ty.bits-1) - 1 + uint64(1)<<(ty.bits-1))}
		}
		fmt.Fprintf(&b, "fn check_%s(seed: u64) -> u64 {\n", ty.name)
		b.WriteString("  let mut h: u64 = 1469598103934665603;\n  let mut s: u64 = seed;\n  let mut i: u64 = 0;\n")
		b.WriteString("  while i < 3000 {\n")
		b.WriteString("    s = s ^ (s << 13);\n    s = s ^ (s >> 7);\n    s = s ^ (s << 17);\n")
		fmt.Fprintf(&b, "    let mut x: %s = (s >> (i %% 64)) as %s;\n", ty.name, ty.name)
		for k, e := range edges {
			fmt.Fprintf(&b, "    if i == %d { x = %s; };\n", k, e)
		}
		for _, c := range consts {
			if ty.bits == 8 && (c > 100 || c < -100) {
				continue
			}
			cl := fmt.Sprint(c)
			if c < 0 {
				cl = "(" + cl + ")"
			}
			for _, op := range []string{"*", "/", "%"} {
				fmt.Fprintf(&b, "    h = mix(h, (x %s %s) as u64);\n", op, cl)
			}
		}
		b.WriteString("    i = i + 1;\n  };\n")
		// A <= loop, a != loop and a loop on a bool.
		fmt.Fprintf(&b, "  let mut j: u64 = 1;\n  while j <= 100 {\n    h = mix(h, j / 3);\n    j = j + 1;\n  };\n")
		fmt.Fprintf(&b, "  let mut n: u64 = h %% 1000 + 2;\n  while n != 1 {\n    if n %% 2 == 0 { n = n / 2; } else { n = 3 * n + 1; };\n    h = mix(h, n);\n  };\n")
		fmt.Fprintf(&b, "  let mut go: bool = true;\n  let mut k: u64 = 0;\n  while go {\n    k = k + 7;\n    go = k %% 64 != 0;\n    h = mix(h, k);\n  };\n")
		b.WriteString("  return h;\n}\n\n")
	}
	b.WriteString(pointerChecks)
	// Loops tested with <= and >= of two variables, which looprotate
	// versions on the bound: run with the bound at the extremes (where
	// only a break ends them) and near them.
	bounds := map[string][]string{
		"u64": {"0", "1", "7", "18446744073709551614", "18446744073709551615"},
		"i64": {"0", "-9223372036854775808", "-9223372036854775807", "9223372036854775806", "9223372036854775807"},
		"u8":  {"0", "1", "254", "255"},
		"i32": {"0", "-2147483648", "2147483646", "2147483647"},
	}
	for _, name := range []string{"u64", "i64", "u8", "i32"} {
		fmt.Fprintf(&b, "fn check_bounds_%[1]s(h0: u64, n: %[1]s) -> u64 {\n", name)
		fmt.Fprintf(&b, "  let mut h: u64 = h0;\n  let mut j: %[1]s = n - 5;\n  let mut steps: u64 = 0;\n", name)
		b.WriteString("  while j <= n {\n    h = mix(h, j as u64);\n    steps = steps + 1;\n    if steps == 12 { break; };\n    j = j + 1;\n  };\n  h = mix(h, steps);\n")
		fmt.Fprintf(&b, "  let mut k: %[1]s = n + 3;\n  steps = 0;\n", name)
		b.WriteString("  while k >= n {\n    h = mix(h, k as u64);\n    steps = steps + 1;\n    if steps == 12 { break; };\n    k = k - 1;\n  };\n  h = mix(h, steps);\n")
		fmt.Fprintf(&b, "  let mut m: %[1]s = n - 2;\n  steps = 0;\n", name)
		b.WriteString("  while n >= m {\n    h = mix(h, m as u64);\n    steps = steps + 1;\n    if steps == 9 { break; };\n    m = m + 1;\n  };\n  h = mix(h, steps);\n  return h;\n}\n\n")
	}
	b.WriteString("fn main() -> void {\n")
	for _, ty := range types {
		fmt.Fprintf(&b, "  put_u64(check_%s(88172645463325252));\n", ty.name)
	}
	b.WriteString("  put_u64(check_ptr(3, 13));\n  put_u64(check_ptr(5, 1));\n  put_u64(check_ptr(7, 0));\n")
	b.WriteString("  let mut hb: u64 = 5;\n")
	for _, name := range []string{"u64", "i64", "u8", "i32"} {
		for _, v := range bounds[name] {
			fmt.Fprintf(&b, "  hb = check_bounds_%s(hb, %s);\n", name, v)
		}
	}
	b.WriteString("  put_u64(hb);\n")
	b.WriteString("}\n")
	return b.String()
}

// pointerChecks indexes arrays the ways ivsimplify steps as pointers:
// rows and columns of a matrix, an offset index, a loop counting down by
// one and by two, a stride of three, bytes, and n = 0 and 1 (loops that
// never run or run once).
const pointerChecks = `fn check_ptr(seed: u64, n: u64) -> u64 {
  let m: *mut u64 = 0x10000 as *mut u64;
  let bytes: *mut u8 = 0x20000 as *mut u8;
  let words: *mut u32 = 0x30000 as *mut u32;
  let mut i: u64 = 0;
  while i < n * n + 2 {
    m[i] = i * seed + 7;
    bytes[i] = (i * seed) as u8;
    words[i * 3] = (i + seed) as u32;
    i = i + 1;
  };
  let mut h: u64 = 1469598103934665603;
  let mut r: u64 = 0;
  while r < n {
    let mut c: u64 = 0;
    while c < n {
      h = mix(h, m[r * n + c] + m[c * n + r] * 3 + (bytes[r + c + 1] as u64));
      c = c + 1;
    };
    r = r + 1;
  };
  let mut k: u64 = n * n;
  while k != 0 {
    k = k - 1;
    h = mix(h, m[k] ^ (words[k * 3] as u64));
  };
  let mut j: u64 = n * n + 1;
  while j >= 2 {
    h = mix(h, m[j - 2] + m[j]);
    j = j - 2;
  };
  let mut t: u64 = 0;
  while t <= n {
    h = mix(h, (words[t * 3 + 3] as u64) + m[t + 1]);
    t = t + 1;
  };
  return h;
}

`

// TestLevelsDivision runs divisionProgram at -O0 and -O2: strength's
// sequences, rotated loops and stepped pointers through the Forge
// backend, on every type.
func TestLevelsDivision(t *testing.T) {
	src := divisionProgram()
	p := difftest.Program{Name: "division.gen", Sources: []compiler.Source{{Name: "division.gen", Data: []byte(src)}}}
	if msg := levelsAgree(t, p); msg != "" {
		t.Fatalf("%s\n%s", msg, src)
	}
	o, _ := difftest.Forge(p, 2)
	if o.Fault != "" || strings.Count(o.Stdout, "\n") != 12 {
		t.Fatalf("the program does not print its 12 checksums: %s\n%s", o, src)
	}
}
