package grimoire

import (
	"math/big"
	"testing"
)

func TestNumberValue(t *testing.T) {
	for _, tc := range []struct {
		raw  string
		kind NumberKind
		want string
	}{
		{"100", Plain, "100"},
		{"0.50", Plain, "0.5"},
		{"1000000000000000000000001", Plain, "1000000000000000000000001"},
		{"50%", Percent, "0.5"},
		{"0.3%", Percent, "0.003"},
		{"30s", Duration, "30"},
		{"5m", Duration, "300"},
		{"1.5h", Duration, "5400"},
		{"7d", Duration, "604800"},
	} {
		if got := decimal(numberValue(tc.raw, tc.kind)); got != tc.want {
			t.Errorf("%s: %s, want %s", tc.raw, got, tc.want)
		}
	}
}

func TestDecimal(t *testing.T) {
	for _, tc := range []struct {
		r    *big.Rat
		want string
	}{
		{big.NewRat(1, 8), "0.125"},
		{big.NewRat(-3, 20), "-0.15"},
		{big.NewRat(1, 3), "1/3"},
		{big.NewRat(10, 1), "10"},
	} {
		if got := decimal(tc.r); got != tc.want {
			t.Errorf("%v: %s, want %s", tc.r, got, tc.want)
		}
	}
}

func TestDecodeString(t *testing.T) {
	got, bad := decodeString(`"a\tb\"c\\d\'e\n"`)
	if got != "a\tb\"c\\d'e\n" || len(bad) != 0 {
		t.Errorf("got %q, bad %v", got, bad)
	}
	got, bad = decodeString("'x\ny\\q'")
	if got != "x\nyq" || len(bad) != 1 || bad[0] != (badEscape{text: `\q`, line: 1, col: 2}) {
		t.Errorf("got %q, bad %+v", got, bad)
	}
}
