// Package irtest holds the checks the frontends' golden tests share.
package irtest

import (
	"bufio"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/genesis-toolchain/genesis/diag"
	"github.com/genesis-toolchain/genesis/internal/filetest"
	"github.com/genesis-toolchain/genesis/internal/golden"
	"github.com/genesis-toolchain/genesis/ir"
)

// CheckRoundTrip checks that printed IR parses, verifies and prints the
// same.
func CheckRoundTrip(t *testing.T, printed string) {
	t.Helper()
	m, diags := ir.Parse("out.ir", []byte(printed))
	if diags.HasErrors() {
		t.Fatalf("the printed IR does not parse:\n%s\n%s", diags.Render(diag.Sources{"out.ir": []byte(printed)}), printed)
	}
	if vs := ir.Verify(m); len(vs) > 0 {
		t.Fatalf("the printed IR does not verify:\n%s", vs)
	}
	if again := ir.Print(m); again != printed {
		t.Fatalf("print → parse → print differs:\n%s", again)
	}
}

var wantLine = regexp.MustCompile(`^want (\S+) (\d+):(\d+)$`)

// CheckWants checks that every "want CODE LINE:COL" line of the case's
// comment names one of diags.
func CheckWants(t *testing.T, c *golden.Case, diags diag.List) {
	t.Helper()
	sc := bufio.NewScanner(strings.NewReader(c.Comment()))
	for sc.Scan() {
		m := wantLine.FindStringSubmatch(strings.TrimSpace(sc.Text()))
		if m == nil {
			continue
		}
		found := false
		for _, d := range diags {
			if d.Code == m[1] && fmt.Sprint(d.Pos.Line) == m[2] && fmt.Sprint(d.Pos.Col) == m[3] {
				found = true
			}
		}
		if !found {
			t.Errorf("want %s at %s:%s, not among the diagnostics:\n%s", m[1], m[2], m[3], diags)
		}
	}
}

// CheckCompiled checks a frontend's compile of a golden case run by
// "test ir" or "test errors": m (nil when it did not compile), its
// diagnostics and their rendering. An "errors" case must not compile
// and is named err_*; any other must compile. out/errors pins the
// rendering (empty when the case has the section and there is no
// diagnostic), out/ir the printed IR, which must round-trip, and the
// comment's want lines name diagnostics.
func CheckCompiled(t *testing.T, c *filetest.Case, d filetest.Directive, m *ir.Module, diags diag.List, rendered string) {
	t.Helper()
	if len(diags) > 0 {
		c.Check("out/errors", rendered)
	} else if _, ok := c.File("out/errors"); ok {
		c.Check("out/errors", "")
	}
	isErr := d.Name == "errors"
	if isErr != strings.HasPrefix(c.Name, "err_") {
		t.Errorf("test %s: a case named err_* is \"test errors\", any other \"test ir\"", d)
	}
	switch {
	case isErr && m != nil:
		t.Errorf("a \"test errors\" case compiled")
	case !isErr && m == nil:
		t.Errorf("does not compile:\n%s", rendered)
	}
	if m != nil {
		printed := ir.Print(m)
		CheckRoundTrip(t, printed)
		c.Check("out/ir", printed)
	}
	CheckWants(t, c.Case, diags)
}
