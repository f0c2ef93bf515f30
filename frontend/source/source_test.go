package source

import (
	"fmt"
	"strings"
	"testing"
)

func TestInvalidUTF8(t *testing.T) {
	var got []string
	InvalidUTF8([]byte("ok\né\xff x\n\xc3\n"), func(line, col int, b byte) bool {
		got = append(got, fmt.Sprintf("%d:%d %#x", line, col, b))
		return true
	})
	if want := "2:2 0xff,3:1 0xc3"; strings.Join(got, ",") != want {
		t.Errorf("got %v, want %s", got, want)
	}
	n := 0
	InvalidUTF8([]byte("\xff\xfe"), func(int, int, byte) bool { n++; return false })
	if n != 1 {
		t.Errorf("%d calls after the first returned false", n)
	}
	InvalidUTF8([]byte("valid ü"), func(int, int, byte) bool { t.Error("called on valid UTF-8"); return true })
}

func TestAlternatives(t *testing.T) {
	names := []TokenName{{Type: 1, Name: "a name"}, {Type: 2, Name: "':'"}, {Type: 3, Name: "','"}, {Type: 4, Name: "end of file"}}
	set := TokenSet{1: true, 2: true, 4: true}
	for _, tc := range []struct {
		covered TokenSet
		want    string
	}{
		{TokenSet{}, "a name, ':' or end of file"},
		{TokenSet{1: true}, "':' or end of file"},
		{TokenSet{1: true, 2: true}, "end of file"},
		{TokenSet{1: true, 2: true, 4: true}, ""},
	} {
		if got := Alternatives(set.Named(tc.covered, names)); got != tc.want {
			t.Errorf("covered %v: %q, want %q", tc.covered, got, tc.want)
		}
	}
	if got := Alternatives([]string{"a", "b", "c", "d", "e", "f"}); got != "a, b, c, d or e" {
		t.Errorf("six names: %q, want the first five", got)
	}
}
