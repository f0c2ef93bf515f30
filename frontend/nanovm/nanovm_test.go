package nanovm

import (
	"github.com/genesis-toolchain/genesis/frontend/internal/jsontree"

	"encoding/json"
	"strings"
	"testing"

	"github.com/genesis-toolchain/genesis/diag"
)

func TestConditionPrecedence(t *testing.T) {
	for _, c := range []struct{ src, want string }{
		{"$a", "$a"},
		{"$a or $b and $c", "($a or ($b and $c))"},
		{"$a and $b or $c", "(($a and $b) or $c)"},
		{"$a or $b or $c", "(($a or $b) or $c)"},
		{"not $a and $b", "((not $a) and $b)"},
		{"not $a == 1", "(not ($a == 1))"},
		{"not not $a", "(not (not $a))"},
		{"$a and not $b", "($a and (not $b))"},
		{"($a or $b) and $c", "(($a or $b) and $c)"},
		{"(($a))", "$a"},
		{"$x not in $y", "($x not in $y)"},
		{"not $x in $y", "(not ($x in $y))"},
		{"$l contains 'x' or 'y' in $s", "(($l contains 'x') or ('y' in $s))"},
		{"$a.b.0.c >= -1.5", "($a.b.0.c >= -1.5)"},
		{"$a != True and $b == None or $c < False", "((($a != True) and ($b == None)) or ($c < False))"},
		{`"it's" == 'x'`, `("it's" == 'x')`},
		{"($a == 1) == True", "(($a == 1) == True)"},
		{"$étape.résultat == 'ок'", "($étape.résultat == 'ок')"},
		{"  $a\t==\n1  ", "($a == 1)"},
		{"$a <= 10 and $a > 0.25", "(($a <= 10) and ($a > 0.25))"},
	} {
		e, err := ParseCondition(c.src)
		if err != nil {
			t.Errorf("%q: %v", c.src, err)
			continue
		}
		if got := FormatExpr(e); got != c.want {
			t.Errorf("%q: got %s, want %s", c.src, got, c.want)
		}
	}
}

func TestConditionErrors(t *testing.T) {
	for _, c := range []struct {
		src  string
		off  int
		want string
	}{
		{"", 0, "the condition is empty"},
		{"$a ==", 5, "unexpected end of the condition"},
		{"($a", 3, "expected ')'"},
		{"$a)", 2, "unexpected ')'"},
		{"1 < $a < 3", 7, "comparisons do not chain"},
		{"$a == 1 == 2", 8, "comparisons do not chain"},
		{"$a.lower()", 8, "method calls are not supported"},
		{"len($a)", 0, "function calls are not supported"},
		{"$a == yes", 6, `unexpected word "yes"`},
		{"$a == true", 6, "the boolean is True"},
		{"$a == null", 6, "the empty value is None"},
		{"$a AND $b", 3, "operators are lower case"},
		{"$a = 1", 3, "compare with '=='"},
		{"!$a", 0, "negate with 'not'"},
		{"$a && $b", 3, "'and' and 'or'"},
		{"$a + 1", 3, "no arithmetic"},
		{"'abc", 0, "unterminated string"},
		{"$ == 1", 0, "'$' must be followed by a name"},
		{"$a[0]", 2, "index with a path"},
		{"$a $b", 3, "unexpected reference $b"},
		{"not", 3, "unexpected end of the condition"},
		{"$a not $b", 7, "expected 'in'"},
	} {
		_, err := ParseCondition(c.src)
		if err == nil {
			t.Errorf("%q parses", c.src)
			continue
		}
		if err.Off != c.off || !strings.Contains(err.Msg, c.want) {
			t.Errorf("%q: error %d: %s; want %d: …%s…", c.src, err.Off, err.Msg, c.off, c.want)
		}
	}
}

func TestJSONPositionsAndOrder(t *testing.T) {
	src := "{\n  \"b\": 1,\n  \"a\": [true, null, \"x\\ny\", 2.5],\n  \"é\": {\"k\": \"\\u00e9t\\u00e9 $v\"}\n}"
	n, diags := Load("t.json", []byte(src))
	if len(diags) > 0 {
		t.Fatal(diags)
	}
	if got := n.String(); got != `{"b":1,"a":[true,null,"x\ny",2.5],"é":{"k":"été $v"}}` {
		t.Errorf("String: %s", got)
	}
	k := n.Get("é").Get("k")
	if k.Path != `$["é"].k` && k.Path != "$.é.k" {
		t.Errorf("path %s", k.Path)
	}
	if want := (diag.Pos{File: "t.json", Line: 4, Col: 14}); k.Pos != want {
		t.Errorf("pos %v, want %v", k.Pos, want)
	}
	// "été $v": é is the 6-character escape at column 15, t at 21, …,
	// $ at 29.
	if got := k.RunePos(4).Col; got != 29 {
		t.Errorf("RunePos(4) = %d, want 29", got)
	}
	if got := n.Get("a").Items[3]; got.Path != "$.a[3]" || got.Num != 2.5 || got.Pos.Col != 29 {
		t.Errorf("a[3]: %s %v %v", got.Path, got.Num, got.Pos)
	}
}

func TestJSONAgreesWithEncodingJSON(t *testing.T) {
	for _, src := range []string{
		`{}`, `{"a":[]}`, `{"a":-0.5e+3,"b":"\ud83d\ude00","c":"\u0000"}`, ` {"x" : [ 1 , {"y":false} ] } `,
		`{"a":1,}`, `{"a" 1}`, `{a:1}`, `{"a":01}`, `{"a":1.}`, `{"a":"\x"}`, `{"a":tru}`, `{"a":1} x`, `{"a":"` + "\t" + `"}`, `[1,]`, ``,
	} {
		n, ds := jsontree.ParseJSON("t.json", []byte(src), documentCodes)
		if (n != nil) != json.Valid([]byte(src)) {
			t.Errorf("%q: parsed %v, encoding/json says valid %v (%v)", src, n != nil, json.Valid([]byte(src)), ds)
			continue
		}
		if n == nil {
			continue
		}
		var v any
		_ = json.Unmarshal([]byte(src), &v)
		got, _ := json.Marshal(plain(n.ToValue()))
		want, _ := json.Marshal(v)
		if string(got) != string(want) {
			t.Errorf("%q: %s, encoding/json %s", src, got, want)
		}
	}
}

// plain turns OrderedObjects into maps, for comparison with
// encoding/json.
func plain(v any) any {
	switch v := v.(type) {
	case *jsontree.OrderedObject:
		m := map[string]any{}
		for i, k := range v.Keys {
			m[k] = plain(v.Values[i])
		}
		return m
	case []any:
		for i := range v {
			v[i] = plain(v[i])
		}
	}
	return v
}

func TestYAMLPositions(t *testing.T) {
	src := "steps:\n  - id: a\n    type: condition\n    condition: \"$x == 'é'\"\n    then: b\n    n: 3\n"
	n, diags := Load("t.yaml", []byte(src))
	if len(diags) > 0 {
		t.Fatal(diags)
	}
	c := n.Get("steps").Items[0].Get("condition")
	if c.Path != "$.steps[0].condition" || c.Pos != (diag.Pos{File: "t.yaml", Line: 4, Col: 16}) {
		t.Errorf("condition at %s %v", c.Path, c.Pos)
	}
	if got := c.RunePos(6).Col; got != 23 {
		t.Errorf("RunePos(6) = %d, want 23", got)
	}
	if x := n.Get("steps").Items[0].Get("n"); x.Kind != Number || !x.IsInt || x.Int != 3 {
		t.Errorf("n: %+v", x)
	}
}

func TestTemplate(t *testing.T) {
	tp := parseTemplate("Hi $name.first, $5 off at $shop.output! $", &Node{})
	var got []string
	for _, p := range tp.Parts {
		if p.Ref != nil {
			got = append(got, "<"+p.Ref.Text()+">")
		} else {
			got = append(got, p.Lit)
		}
	}
	want := []string{"Hi ", "<$name.first>", ", ", "<$5>", " off at ", "<$shop.output>", "! $"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("parts %q, want %q", got, want)
	}
	if tp.Single() != nil {
		t.Error("Single on a mixed template")
	}
	if r := parseTemplate("$order.id", &Node{}).Single(); r == nil || r.Root != "order" || len(r.Path) != 1 {
		t.Errorf("Single: %+v", r)
	}
}

func TestIsYAML(t *testing.T) {
	for _, c := range []struct {
		file, src string
		want      bool
	}{
		{"p.json", "steps: []", false},
		{"p.yaml", "{}", true},
		{"p.yml", "{}", true},
		{"p.txt", "  {\"steps\": []}", false},
		{"p", "steps:\n", true},
	} {
		if got := IsYAML(c.file, []byte(c.src)); got != c.want {
			t.Errorf("IsYAML(%s, %q) = %v", c.file, c.src, got)
		}
	}
}
