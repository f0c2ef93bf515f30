package diag

import (
	"strconv"
	"strings"
	"testing"

	"github.com/genesis-toolchain/genesis/internal/filetest"
)

// parseDiags reads the diags section of a policy case: one diagnostic a
// line, "POS SEVERITY CODE MESSAGE", where POS is file:line:col, a file
// alone, or - for no position at all.
func parseDiags(t *testing.T, text string) List {
	t.Helper()
	var l List
	for n, line := range strings.Split(strings.TrimSpace(text), "\n") {
		f := strings.SplitN(line, " ", 4)
		if len(f) != 4 {
			t.Fatalf("diags line %d: %q is not POS SEVERITY CODE MESSAGE", n+1, line)
		}
		var pos Pos
		if f[0] != "-" {
			parts := strings.Split(f[0], ":")
			pos.File = parts[0]
			if len(parts) == 3 {
				var err1, err2 error
				pos.Line, err1 = strconv.Atoi(parts[1])
				pos.Col, err2 = strconv.Atoi(parts[2])
				if err1 != nil || err2 != nil {
					t.Fatalf("diags line %d: bad position %q", n+1, f[0])
				}
			}
		}
		sev := map[string]Severity{"error": Error, "warning": Warning, "note": Note}
		s, ok := sev[f[1]]
		if !ok {
			t.Fatalf("diags line %d: bad severity %q", n+1, f[1])
		}
		l = append(l, Diagnostic{Pos: pos, Severity: s, Code: f[2], Msg: f[3]})
	}
	return l
}

// policySuite runs the cases of testdata/policy/*.txtar, whose header
// (docs/testing.md) says "test errors": the diagnostics a compilation
// found (section diags, in the order reported) and the sources (every
// other section not under out/), and the report a user sees
// (out/errors), which Render prints.
var policySuite = filetest.Suite{
	Checks:  map[string]filetest.Check{"errors": checkReport},
	Outputs: map[string][]string{"errors": {"out/errors"}},
}

func TestReportGolden(t *testing.T) {
	filetest.Run(t, "testdata/policy/*.txtar", policySuite)
}

// checkReport renders the case's diagnostics, which Render must leave as
// they were.
func checkReport(t *testing.T, c *filetest.Case, d filetest.Directive) {
	text, ok := c.File("diags")
	if !ok {
		t.Fatal("no diags section")
	}
	l := parseDiags(t, text)
	src := Sources{}
	for _, f := range c.Archive.Files {
		if f.Name != "diags" && !strings.HasPrefix(f.Name, "out/") {
			src[f.Name] = f.Data
		}
	}
	before := append(List(nil), l...)
	c.Check("out/errors", l.Render(src))
	for i := range l {
		if l[i] != before[i] {
			t.Fatalf("Render changed diagnostic %d of its list: %v, was %v", i, l[i], before[i])
		}
	}
}

func TestReportCapsErrorsAndWarningsApart(t *testing.T) {
	var l List
	for i := 1; i <= 3*MaxErrors; i++ {
		l.Add(Pos{File: "f", Line: i, Col: 1}, Warning, "W030", "variable v%d assigned and never used", i)
	}
	for i := 1; i <= MaxErrors+7; i++ {
		l.Errorf(Pos{File: "f", Line: 1000 + i, Col: 1}, "E051", "unknown name n%d", i)
	}
	shown, om := l.Report(nil)
	errs := 0
	for _, d := range shown {
		if d.Severity == Error {
			errs++
		}
	}
	if errs != MaxErrors || len(shown) != 2*MaxErrors {
		t.Errorf("%d errors of %d diagnostics shown, want %d of %d", errs, len(shown), MaxErrors, 2*MaxErrors)
	}
	if om != (Omitted{Errors: 7, Warnings: 2 * MaxErrors}) {
		t.Errorf("omitted %+v", om)
	}
	want := "note: 7 more errors and 40 more warnings not shown (a report shows at most 20 errors, and 20 warnings and notes)"
	if got := om.Line(); got != want {
		t.Errorf("last line %q, want %q", got, want)
	}
	if !strings.HasSuffix(l.Render(nil), want+"\n") {
		t.Errorf("Render does not end with the omitted line")
	}
}

func TestReportIsSyntaxOfEveryLanguage(t *testing.T) {
	for _, code := range []string{"0x0800", "E001", "E002", "G001", "G003", "N001", "A001", "I001", "P001"} {
		if !IsSyntax(code) {
			t.Errorf("%s is not a syntax code", code)
		}
	}
	for _, code := range []string{"0x0801", "E051", "G101", "N007", "A002", "I002", "P002", "0x0802", ""} {
		if IsSyntax(code) {
			t.Errorf("%s is a syntax code", code)
		}
	}
}
