package jsontree

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"

	"github.com/genesis-toolchain/genesis/diag"
)

// maxYAMLNodes bounds the nodes a YAML document may expand to through
// aliases (a "billion laughs" document is rejected, not expanded).
const maxYAMLNodes = 100000

// parseYAML decodes one YAML document into nodes, through yaml.v3's node
// tree, which keeps the key order and the line and column of every node.
// Scalars are typed by YAML's core schema (yaml.v3: null, booleans
// true/false, ints, floats; everything else is a string).
func parseYAML(file string, src []byte, r *reporter) (root *Node) {
	if !utf8.Valid(src) {
		p := &jsonParser{file: file, src: src, line: 1, col: 1, r: r}
		p.invalidUTF8()
		return nil
	}
	var doc yaml.Node
	dec := yaml.NewDecoder(bytes.NewReader(src))
	if err := decodeYAML(dec, &doc); err != nil {
		if errors.Is(err, io.EOF) {
			r.errorAt(diag.Pos{File: file, Line: 1, Col: 1}, "$", r.codes.Syntax, "the document is empty")
		} else {
			reportYAMLError(file, src, err, r)
		}
		return nil
	}
	var extra yaml.Node
	if err := decodeYAML(dec, &extra); err == nil {
		r.errorAt(diag.Pos{File: file, Line: extra.Line, Col: extra.Column}, "$", r.codes.Syntax,
			"a second YAML document: a program file holds one document")
		return nil
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) == 0 {
		r.errorAt(diag.Pos{File: file, Line: 1, Col: 1}, "$", r.codes.Syntax, "the document is empty")
		return nil
	}
	c := &yamlConv{file: file, src: src, r: r}
	defer func() {
		if e := recover(); e != nil {
			if _, ok := e.(jsonError); !ok {
				panic(e)
			}
			root = nil
		}
	}()
	return c.node(doc.Content[0], "$", 0)
}

// decodeYAML decodes the next document, turning a panic of the YAML
// library into an error.
func decodeYAML(dec *yaml.Decoder, n *yaml.Node) (err error) {
	defer func() {
		if e := recover(); e != nil {
			err = fmt.Errorf("yaml: %v", e)
		}
	}()
	return dec.Decode(n)
}

// flowTooDeep returns where the flow collections ([…], {…}) of src
// first nest deeper than maxDepth, skipping quoted scalars and comments;
// the start of the file if they never do.
func flowTooDeep(file string, src []byte) diag.Pos {
	line, col, depth := 1, 1, 0
	var quote byte
	comment := false
	for i := 0; i < len(src); i++ {
		c := src[i]
		switch {
		case c == '\n':
			line, col, comment = line+1, 0, false // a quoted scalar may go on
		case comment:
		case quote != 0:
			if c == quote {
				quote = 0
			} else if c == '\\' && quote == '"' && i+1 < len(src) {
				i++
				col++
			}
		case c == '\'' || c == '"':
			quote = c
		case c == '#':
			comment = true
		case c == '[' || c == '{':
			if depth++; depth > maxDepth {
				return diag.Pos{File: file, Line: line, Col: col}
			}
		case c == ']' || c == '}':
			depth--
		}
		if c&0xC0 != 0x80 {
			col++
		}
	}
	return diag.Pos{File: file, Line: 1, Col: 1}
}

var yamlLine = regexp.MustCompile(`^yaml: (?:line (\d+): )?(.*)$`)

// reportYAMLError turns a yaml.v3 error ("yaml: line 3: mapping values
// are not allowed in this context") into a diagnostic at that line.
func reportYAMLError(file string, src []byte, err error, r *reporter) {
	msg := err.Error()
	pos := diag.Pos{File: file, Line: 1, Col: 1}
	if m := yamlLine.FindStringSubmatch(msg); m != nil {
		msg = m[2]
		if m[1] != "" {
			if n, err := strconv.Atoi(m[1]); err == nil {
				pos.Line = n
			}
		}
	}
	if strings.HasPrefix(msg, "exceeded max depth") {
		// The library's own bound, past ours: say ours, where the
		// flow collections first nest past it.
		r.errorAt(flowTooDeep(file, src), "$", r.codes.Syntax, "sequences and mappings nest deeper than %d levels", maxDepth)
		return
	}
	r.errorAt(pos, "$", r.codes.Syntax, "invalid YAML: %s", msg)
}

type yamlConv struct {
	file  string
	src   []byte
	r     *reporter
	nodes int
	lines []string
}

func (c *yamlConv) pos(n *yaml.Node) diag.Pos {
	return diag.Pos{File: c.file, Line: n.Line, Col: n.Column}
}

func (c *yamlConv) fail(n *yaml.Node, path, format string, args ...any) {
	c.r.errorAt(c.pos(n), path, c.r.codes.Syntax, format, args...)
	panic(jsonError{})
}

func (c *yamlConv) node(y *yaml.Node, path string, depth int) *Node {
	c.nodes++
	if c.nodes > maxYAMLNodes {
		c.fail(y, path, "the document expands to more than %d values (through aliases?)", maxYAMLNodes)
	}
	if depth > maxDepth {
		c.fail(y, path, "sequences and mappings nest deeper than %d levels", maxDepth)
	}
	switch y.Kind {
	case yaml.AliasNode:
		if y.Alias == nil {
			c.fail(y, path, "unknown alias")
		}
		// The value is the anchor's, but it is here: diagnostics (and
		// step identities) use the alias's position.
		n := c.node(y.Alias, path, depth+1)
		n.Pos = c.pos(y)
		n.runePos = nil
		return n
	case yaml.SequenceNode:
		n := &Node{Kind: Array, Pos: c.pos(y), Path: path}
		for _, it := range y.Content {
			n.Items = append(n.Items, c.node(it, indexPath(path, len(n.Items)), depth+1))
		}
		return n
	case yaml.MappingNode:
		n := &Node{Kind: Object, Pos: c.pos(y), Path: path}
		index := map[string]int{}
		for i := 0; i+1 < len(y.Content); i += 2 {
			k, v := y.Content[i], y.Content[i+1]
			for k.Kind == yaml.AliasNode && k.Alias != nil {
				k = k.Alias
			}
			if k.Kind != yaml.ScalarNode {
				c.fail(k, path, "a mapping key must be a scalar")
			}
			if k.ShortTag() == "!!merge" {
				c.fail(k, path, "merge keys (<<) are not supported")
			}
			key := k.Value
			val := c.node(v, ChildPath(path, key), depth+1)
			if j, dup := index[key]; dup {
				c.r.warnAt(c.pos(k), val.Path, c.r.codes.DupKey, "duplicate key %q: this value replaces the one at line %d", key, n.Fields[j].KeyPos.Line)
				n.Fields[j].Value = val
				continue
			}
			index[key] = len(n.Fields)
			n.Fields = append(n.Fields, Field{Key: key, KeyPos: c.pos(k), Value: val})
		}
		return n
	case yaml.ScalarNode:
		return c.scalar(y, path)
	}
	c.fail(y, path, "unexpected YAML node")
	return nil
}

func (c *yamlConv) scalar(y *yaml.Node, path string) *Node {
	n := &Node{Pos: c.pos(y), Path: path}
	switch y.ShortTag() {
	case "!!null":
		n.Kind = Null
		return n
	case "!!bool":
		var b bool
		if err := y.Decode(&b); err == nil {
			n.Kind, n.Bool = Bool, b
			return n
		}
	case "!!int", "!!float":
		var v any
		if err := y.Decode(&v); err == nil {
			n.Kind, n.Text = Number, y.Value
			switch x := v.(type) {
			case int:
				n.Num, n.Int, n.IsInt = float64(x), int64(x), true
				return n
			case int64:
				n.Num, n.Int, n.IsInt = float64(x), x, true
				return n
			case uint64:
				n.Num = float64(x)
				return n
			case float64:
				if math.IsInf(x, 0) || math.IsNaN(x) {
					c.r.errorAt(n.Pos, path, c.r.codes.Value, "%s is not a finite number", y.Value)
					x = 0
				}
				n.Num = x
				if x == math.Trunc(x) && math.Abs(x) < 1<<63 {
					n.Int, n.IsInt = int64(x), true
				}
				return n
			}
		}
	}
	n.Kind, n.Text = String, y.Value
	n.runePos = c.stringPos(y)
	return n
}

// stringPos maps code point indexes of a string scalar to source
// positions when the scalar is written on one line without escapes;
// otherwise it returns nil (every index maps to the node).
func (c *yamlConv) stringPos(y *yaml.Node) func(int) diag.Pos {
	if c.lines == nil {
		c.lines = strings.Split(string(c.src), "\n")
	}
	if y.Line < 1 || y.Line > len(c.lines) || strings.Contains(y.Value, "\n") {
		return nil
	}
	off := 0
	switch y.Style {
	case yaml.DoubleQuotedStyle, yaml.SingleQuotedStyle:
		off = 1
	case 0, yaml.FlowStyle:
	default:
		return nil
	}
	line := []rune(c.lines[y.Line-1])
	start := y.Column - 1 + off
	end := start + utf8.RuneCountInString(y.Value)
	if start < 0 || end > len(line) || string(line[start:end]) != y.Value {
		return nil
	}
	file, ln, col := c.file, y.Line, y.Column+off
	n := utf8.RuneCountInString(y.Value)
	return func(i int) diag.Pos {
		if i > n {
			i = n
		}
		return diag.Pos{File: file, Line: ln, Col: col + i}
	}
}
