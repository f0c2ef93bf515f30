package inputlimits

import (
	"fmt"
	"strings"
)

// GenesisFunctions returns n ordinary Genesis functions — loops,
// conditions, structs, pointers and a match, about 600 bytes each — and
// a main that calls the last: the large input of the Genesis limits
// tests, realistic code rather than one construct repeated. Each
// function calls the one before it (on a path no run takes), so that
// all of them are reachable from main and compiled: the compiler drops
// unreachable functions (docs/opt.md, deadfuncs).
func GenesisFunctions(n int) []byte {
	var b strings.Builder
	for i := range n {
		writeGenesisFunction(&b, i)
	}
	writeGenesisMain(&b, n)
	return []byte(b.String())
}

// GenesisProgram returns about size bytes of GenesisFunctions' kind of
// program (the functions that reach size, and main).
func GenesisProgram(size int) []byte {
	var b strings.Builder
	i := 0
	for ; b.Len() < size; i++ {
		writeGenesisFunction(&b, i)
	}
	writeGenesisMain(&b, i)
	return []byte(b.String())
}

// writeGenesisMain writes a main that calls the last of n functions,
// which reaches them all.
func writeGenesisMain(b *strings.Builder, n int) {
	if n == 0 {
		b.WriteString("fn main() -> void { }\n")
		return
	}
	fmt.Fprintf(b, "fn main() -> void {\n  let mut p: P%[1]d = P%[1]d { x: 1, y: 2 };\n  let r: i64 = f%[1]d(10, &p);\n}\n", n-1)
}

func writeGenesisFunction(b *strings.Builder, i int) {
	prev := ""
	if i > 0 {
		prev = fmt.Sprintf(`  if n < 0 {
    let mut r: P%[1]d = P%[1]d { x: acc, y: n };
    acc = acc + f%[1]d(n, &r);
  };
`, i-1)
	}
	fmt.Fprintf(b, `struct P%[1]d { x: i64, y: i64 }

fn f%[1]d(n: i64, p: *mut P%[1]d) -> i64 {
  let mut acc: i64 = 0;
  let mut k: i64 = 0;
  while k < n {
    if k %% 3 == 0 {
      acc = acc + k * 2 - (p->x + 1);
    } else if k %% 3 == 1 {
      acc = acc - 1;
    } else {
      p->y = p->y + acc;
    };
    k = k + 1;
  };
%[2]s  let q: P%[1]d = P%[1]d { x: acc, y: n };
  match q.x %% 4 { 0 => acc + q.y, 1 => acc - 1, _ => acc }
}

`, i, prev)
}
