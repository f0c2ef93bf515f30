package genfuzz

// printGen is the output library every generated program is compiled
// with (the conformance suite's print.gen).
const printGen = `// print.gen: output routines (Genesis has no standard library).

fn put_byte(c: u8) -> void {
  let b: u8 = c;
  asm (in r0 = &b) { SEND 0, r0, 1 };
}

fn put_u64(n: u64) -> void {
  let mut buf: [u8; 20] = [0y00; 20];
  let mut i: u64 = 20;
  let mut v: u64 = n;
  while true {
    i = i - 1;
    buf[i] = (v % 10 + 48) as u8;
    v = v / 10;
    if v == 0 {
      break;
    };
  };
  while i < 20 {
    put_byte(buf[i]);
    i = i + 1;
  };
}

fn put_i64(n: i64) -> void {
  if n < 0 {
    put_byte(45);
    put_u64((0 - n) as u64);
  } else {
    put_u64(n as u64);
  };
}

fn put_str(s: *u8) -> void {
  let mut p: *u8 = s;
  while *p != 0 {
    put_byte(*p);
    p = p + 1;
  };
}

fn put_bool(b: bool) -> void {
  if b { put_str("true"); } else { put_str("false"); };
}

fn nl() -> void {
  put_byte(10);
}
`
