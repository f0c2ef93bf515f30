package diag

import (
	"runtime"
	"strings"
	"testing"
	"unicode/utf8"
)

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

// caretColumn returns the display column (from 0, escapes taking their
// width) of the caret in a rendered diagnostic's last two lines, and
// the shown line.
func caretColumn(t *testing.T, out string) (string, int) {
	t.Helper()
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if len(lines) < 3 {
		t.Fatalf("no source line in:\n%s", out)
	}
	shown, caret := lines[len(lines)-2], lines[len(lines)-1]
	if !strings.HasSuffix(caret, "^") || strings.Trim(caret[:len(caret)-1], " ") != "" {
		t.Fatalf("caret line %q", caret)
	}
	return shown[4:], len(caret) - 1 - 4
}

func TestRenderShowsAWindowOfALongLine(t *testing.T) {
	line := strings.Repeat("a", 5000) + "TARGET" + strings.Repeat("b", 5000)
	src := Sources{"f.json": []byte("first\n" + line + "\nlast\n")}
	var l List
	for i := 0; i < 13; i++ {
		l.Errorf(Pos{File: "f.json", Line: 2, Col: 5001}, "N001", "error %d", i)
	}
	out := l.Render(src)
	if len(out) > 13*(MaxShownWidth*2+100) {
		t.Fatalf("13 diagnostics of one long line render as %d bytes", len(out))
	}
	one := (List{l[0]}).Render(src)
	shown, col := caretColumn(t, one)
	if !strings.HasPrefix(shown, "...") || !strings.HasSuffix(shown, "...") {
		t.Errorf("the window is not marked as cut: %q", shown)
	}
	if w := len(shown); w > MaxShownWidth+6 {
		t.Errorf("the window is %d columns wide", w)
	}
	if !strings.HasPrefix(shown[col:], "TARGET") {
		t.Errorf("the caret points at %q, want TARGET", shown[col:])
	}

	// Near either end, the window starts or ends with the line.
	var near List
	near.Errorf(Pos{File: "f.json", Line: 2, Col: 3}, "N001", "start")
	shown, col = caretColumn(t, near.Render(src))
	if strings.HasPrefix(shown, "...") || !strings.HasSuffix(shown, "...") || col != 2 {
		t.Errorf("caret at column 3: shown %q, caret under %d", shown, col)
	}
	near = List{{Pos: Pos{File: "f.json", Line: 2, Col: 10007}, Code: "N001", Msg: "end"}}
	shown, col = caretColumn(t, near.Render(src))
	if !strings.HasPrefix(shown, "...") || strings.HasSuffix(shown, "...") || col != len(shown) {
		t.Errorf("caret past the end: shown %q, caret under %d", shown, col)
	}
}

func TestRenderEscapesWhatATerminalWouldAct(t *testing.T) {
	src := Sources{"f.vvm": []byte("x = \"\x1b[2J\xff\u202e\" + y\n")}
	var l List
	l.Errorf(Pos{File: "f.vvm", Line: 1, Col: 16}, "E051", "unknown name \x1b]0;pwned\x07 y")
	out := l.Render(src)
	for _, c := range out {
		if c < 0x20 && c != '\n' || c == 0x7f || c >= 0x80 && c <= 0x9f || c == 0x202e {
			t.Fatalf("the output holds %U:\n%q", c, out)
		}
	}
	if strings.ContainsRune(out, utf8.RuneError) || !utf8.ValidString(out) {
		t.Fatalf("the output is not clean UTF-8: %q", out)
	}
	want := "f.vvm:1:16: error[E051]: unknown name \\x1b]0;pwned\\x07 y\n" +
		"    x = \"\\x1b[2J\\xff\\u202e\" + y\n" +
		"    " + strings.Repeat(" ", 26) + "^\n"
	if out != want {
		t.Errorf("Render:\n%s\nwant:\n%s", out, want)
	}
	shown, col := caretColumn(t, out)
	if shown[col:] != "y" {
		t.Errorf("the caret points at %q, want y", shown[col:])
	}
}

func TestRenderIsLinearInTheLines(t *testing.T) {
	// One diagnostic per line of a long file: rendering must not rescan
	// the file for each (it would take minutes at this size).
	const n = 200000
	var src strings.Builder
	var l List
	for i := 1; i <= n; i++ {
		src.WriteString("line\n")
		l.Errorf(Pos{File: "f", Line: n + 1 - i, Col: 2}, "E", "m")
	}
	out := l.render(Sources{"f": []byte(src.String())})
	if got := strings.Count(out, "    line\n     ^\n"); got != n {
		t.Fatalf("%d lines rendered with their caret, want %d", got, n)
	}
}

func TestRenderOfALongLineDoesNotRescanIt(t *testing.T) {
	// 200 diagnostics along one line of 4 MB: each costs its window,
	// not the line up to its column (which allocated gigabytes).
	line := strings.Repeat("x", 4<<20)
	var l List
	for i := 0; i < 200; i++ {
		l.Errorf(Pos{File: "f", Line: 1, Col: 1 + i*(len(line)/200)}, "N002", "error %d", i)
	}
	src := Sources{"f": []byte(line + "\n")}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	out := l.render(src)
	runtime.ReadMemStats(&after)
	if got := strings.Count(out, "^\n"); got != 200 {
		t.Fatalf("%d carets, want 200", got)
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 200*64<<10 {
		t.Errorf("rendering allocated %d bytes, %d per diagnostic", alloc, alloc/200)
	}
}
