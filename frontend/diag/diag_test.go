package diag

import "testing"

func TestRenderPutsTheCaretUnderTheColumn(t *testing.T) {
	var l List
	l.Errorf(Pos{File: "a.fasm", Line: 2, Col: 5}, "A002", "unknown instruction %q", "FOO")
	l.Add(Pos{File: "a.fasm", Line: 1, Col: 3}, Warning, "W001", "tabs keep their width")
	l.Errorf(Pos{File: "gone.fasm", Line: 9, Col: 1}, "E0001", "no source")
	l.Errorf(Pos{File: "a.fasm"}, "E0002", "whole file")
	l.Sort()
	src := Sources{"a.fasm": []byte("\tx:\r\n    FOO r1\n")}
	want := "a.fasm: error[E0002]: whole file\n" +
		"a.fasm:1:3: warning[W001]: tabs keep their width\n" +
		"    \tx:\n" +
		"    \t ^\n" +
		"a.fasm:2:5: error[A002]: unknown instruction \"FOO\"\n" +
		"        FOO r1\n" +
		"        ^\n" +
		"gone.fasm:9:1: error[E0001]: no source\n"
	if got := l.Render(src); got != want {
		t.Errorf("Render:\n%s\nwant:\n%s", got, want)
	}
	if !l.HasErrors() {
		t.Error("HasErrors is false")
	}
	if (List{{Severity: Warning}}).HasErrors() {
		t.Error("a warning counts as an error")
	}
}
