#!/bin/sh
# rename-sections.sh renames txtar sections to the one name per kind of
# content that internal/golden.Sections lists (docs/testing.md). It is
# idempotent: run it again on a case written with an old name.
set -eu
cd "$(dirname "$0")/.."
ren() { # dir old new
	find "$1" -name '*.txtar' -exec sed -i "s|^-- $2 --\$|-- $3 --|" {} +
}
ren tests/forge stdin in/stdin
ren tests/forge config in/config
ren tests/opt out/O2 out/ir.O2
ren tests/opt 'out/after-\(.*\)' 'out/ir.after-\1'
ren tests/ir out/print out/ir
ren tests/grimoire out/diagnostics out/errors
ren tests/vvm out/diagnostics out/errors
