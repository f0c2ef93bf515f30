#!/bin/sh
# add-test-headers.sh gives the cases of the suites that moved onto the
# one test runner (internal/filetest, docs/testing.md) their header: the
# "test" lines, prepended to the case's comment, chosen from the case's
# name and sections as the suite's old loop chose what to check. It is
# idempotent: a case whose first line is already a directive is left
# alone.
set -eu
cd "$(dirname "$0")/.."

# prepend FILE HEADER: write HEADER (lines) before FILE's first line.
prepend() {
	case "$(head -n 1 "$1")" in
	"test "* | "target "*) return 0 ;;
	esac
	{ printf '%s\n' "$2"; cat "$1"; } >"$1.tmp"
	mv "$1.tmp" "$1"
}

# has FILE SECTION: whether FILE has the section.
has() { grep -qx -- "-- $2 --" "$1"; }

# tests/ir: a module that parses and verifies prints back (out/ir); a
# perr_ or verr_ case fails to parse or to verify (out/errors).
for f in tests/ir/*.txtar; do
	case "$(basename "$f")" in
	perr_* | verr_*) prepend "$f" "test errors" ;;
	*) prepend "$f" "test ir" ;;
	esac
done

# tests/opt: every case pins -O2; each out/ir.after-P section becomes a
# "test ir after-P" line.
for f in tests/opt/*.txtar; do
	h="test ir O2"
	for p in $(sed -n 's/^-- out\/ir\.after-\(.*\) --$/\1/p' "$f"); do
		h="$h
test ir after-$p"
	done
	prepend "$f" "$h"
done

# tests/fasm: a program that assembles (out/hex, out/disasm) or one that
# must not (out/errors).
for f in tests/fasm/*.txtar; do
	if has "$f" out/errors; then
		prepend "$f" "test errors"
	else
		prepend "$f" "test assemble"
	fi
done

# tests/genesis/{parse,check,lower}, run from frontend/genesis: a program
# that parses (out/ast), checks (out/typed) or lowers (out/ir), or, in an
# err_ case, one whose errors at that stage are pinned (out/errors).
for stage in parse:ast check:typed lower:ir; do
	for f in tests/genesis/"${stage%%:*}"/*.txtar; do
		case "$(basename "$f")" in
		err_*) prepend "$f" "test errors" ;;
		*) prepend "$f" "test ${stage#*:}" ;;
		esac
	done
done

# tests/vvm's corpus records: the corpus loaded (out/summary, out/errors)
# and run (out/runs).
prepend tests/vvm/corpus.txtar "test load"
prepend tests/vvm/corpus_runs.txtar "test run"

# diag's rendering-policy cases: the report of their diagnostics.
for f in diag/testdata/policy/*.txtar; do
	prepend "$f" "test errors"
done
