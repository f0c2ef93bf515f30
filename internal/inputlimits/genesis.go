package inputlimits

import (
	"fmt"
	"strings"
)

// GenesisFunctions returns n ordinary Genesis functions — loops,
// conditions, structs, pointers and a match, about 500 bytes each — and
// an empty main: the large input of the Genesis limits tests, realistic
// code rather than one construct repeated.
func GenesisFunctions(n int) []byte {
	var b strings.Builder
	for i := range n {
		writeGenesisFunction(&b, i)
	}
	b.WriteString("fn main() -> void { }\n")
	return []byte(b.String())
}

// GenesisProgram returns about size bytes of GenesisFunctions' kind of
// program (the functions that reach size, and main).
func GenesisProgram(size int) []byte {
	var b strings.Builder
	for i := 0; b.Len() < size; i++ {
		writeGenesisFunction(&b, i)
	}
	b.WriteString("fn main() -> void { }\n")
	return []byte(b.String())
}

func writeGenesisFunction(b *strings.Builder, i int) {
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
  let q: P%[1]d = P%[1]d { x: acc, y: n };
  match q.x %% 4 { 0 => acc + q.y, 1 => acc - 1, _ => acc }
}

`, i)
}
