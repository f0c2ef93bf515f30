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
