#!/usr/bin/env bash
# ab.sh: interleaved A/B timing of two forge binaries on the benchmark
# programs and the ordinary programs of bench/corpus (docs/bench.md,
# "Fusions chosen from corpora").
#
#   bench/ab.sh OLD_FORGE NEW_FORGE [RUNS]
#
# Run from the module root. Each program is assembled or compiled once
# (bin/genesisc, built here), then the two binaries run it alternately,
# RUNS times each (default 7); the figure is the best user+system CPU
# time of each, and the ratio new/old. Only ratios from one run of the
# script mean anything on a shared machine. The programs of bench/corpus
# (the integer suite) run at the suite's benchmark size, taken from
# bench/suite.go and given on standard input as go run ./bench gives it;
# the others get an empty standard input.
set -euo pipefail
old=$1 new=$2 runs=${3:-7}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
go build -o "$dir/genesisc" ./cmd/genesisc
progs=()
for f in bench/programs/*.fasm; do
  n=fasm-$(basename "$f" .fasm)
  "$dir/genesisc" build -o "$dir/$n.frgp" "$f"
  progs+=("$n")
done
for f in bench/genesis/*.gen bench/corpus/*.gen; do
  b=$(basename "$f" .gen)
  [ "$b" = print ] && continue
  n=gen-$b
  "$dir/genesisc" build -o "$dir/$n.frgp" "$f" bench/genesis/print.gen
  progs+=("$n")
done
# size NAME prints the suite's benchmark size of program NAME, or nothing.
size() {
  awk -v n="\"$1\"," '$1 == "{" n { sub(",", "", $2); print $2 }' bench/suite.go
}
for n in "${progs[@]}"; do
  case $n in gen-*) size "${n#gen-}" >"$dir/$n.in" ;; *) : >"$dir/$n.in" ;; esac
done
cpu() { # prints user+system seconds of one run (bash's time: milliseconds)
  local TIMEFORMAT='%3U %3S'
  { time "$1" exec --ticks 1000000000000 --memory 134217728 --stack 1048576 "$2" <"${2%.frgp}.in" >/dev/null; } 2>"$dir/t"
  awk '{printf "%.3f\n", $1 + $2}' "$dir/t"
}
printf '%-16s %9s %9s %7s\n' program old new new/old
logsum=0
for n in "${progs[@]}"; do
  bo=999 bn=999
  for ((i = 0; i < runs; i++)); do
    t=$(cpu "$old" "$dir/$n.frgp"); bo=$(awk -v a="$bo" -v b="$t" 'BEGIN{print (b<a)?b:a}')
    t=$(cpu "$new" "$dir/$n.frgp"); bn=$(awk -v a="$bn" -v b="$t" 'BEGIN{print (b<a)?b:a}')
  done
  r=$(awk -v a="$bo" -v b="$bn" 'BEGIN{printf "%.3f", (a>0)?b/a:1}')
  logsum=$(awk -v s="$logsum" -v r="$r" 'BEGIN{print s+log(r)}')
  printf '%-16s %9s %9s %7s\n' "$n" "$bo" "$bn" "$r"
done
awk -v s="$logsum" -v n="${#progs[@]}" 'BEGIN{printf "geometric mean new/old: %.3f\n", exp(s/n)}'
