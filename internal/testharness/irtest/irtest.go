// Package irtest holds the checks the frontends' golden tests share.
package irtest

import (
	"bufio"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/genesis-toolchain/genesis/diag"
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
