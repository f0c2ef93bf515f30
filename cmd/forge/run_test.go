package main

import (
	"testing"

	"github.com/genesis-toolchain/genesis/forge/host"
)

func TestParseSize(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want uint64
		ok   bool
	}{
		{"0", 0, true},
		{"65536", 65536, true},
		{"64K", 64 << 10, true},
		{"16m", 16 << 20, true},
		{"1G", 1 << 30, true},
		{"1_000", 1000, true},
		{"", 0, false},
		{"K", 0, false},
		{"-1", 0, false},
		{"1.5M", 0, false},
		{"12Q", 0, false},
		{"17179869184G", 0, false}, // overflows
		{"18446744073709551615", 1<<64 - 1, true},
	} {
		got, err := host.ParseSize(tc.in)
		if (err == nil) != tc.ok || got != tc.want {
			t.Errorf("ParseSize(%q) = %d, %v; want %d, ok %v", tc.in, got, err, tc.want, tc.ok)
		}
	}
}

func TestOutputName(t *testing.T) {
	for in, want := range map[string]string{
		"a.fasm":       "a.frgp",
		"dir/b.c.fasm": "dir/b.c.frgp",
		"noext":        "noext.frgp",
	} {
		if got := outputName(in, ".frgp"); got != want {
			t.Errorf("outputName(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestSplitArgs(t *testing.T) {
	got, err := splitArgs(`replace f.json '"ticks_used": 8' "a\tb" plain`)
	want := []string{"replace", "f.json", `"ticks_used": 8`, "a\tb", "plain"}
	if err != nil || len(got) != len(want) {
		t.Fatalf("splitArgs = %q, %v", got, err)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("arg %d = %q, want %q", i, got[i], want[i])
		}
	}
}
