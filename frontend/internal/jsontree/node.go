package jsontree

import (
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/genesis-toolchain/genesis/diag"
)

// Kind is the kind of a document node: the JSON data model, which YAML
// documents are mapped onto.
type Kind uint8

// The kinds of nodes.
const (
	Null Kind = iota
	Bool
	Number
	String
	Array
	Object
)

func (k Kind) String() string {
	switch k {
	case Null:
		return "null"
	case Bool:
		return "a boolean"
	case Number:
		return "a number"
	case String:
		return "a string"
	case Array:
		return "an array"
	}
	return "an object"
}

// Node is one value of a program document (JSON or YAML), with where it
// is: its source position and its JSON path from the root, such as
// $.steps[2].next_step, which every diagnostic about it names.
type Node struct {
	Kind  Kind
	Bool  bool // Bool
	IsInt bool // Number: integral and within int64
	// plain marks a JSON String written without escapes on one line: its
	// code point i is at column Pos.Col+1+i (Pos is the opening quote),
	// and runePos is nil. Most strings are plain, and a table of columns
	// or a closure for each would hold more than the document's text.
	plain  bool
	Pos    diag.Pos
	Path   string
	Num    float64 // Number
	Int    int64   // Number, when IsInt
	Text   string  // String: the value; Number: the literal as written
	Items  []*Node // Array
	Fields []Field // Object, in source order

	// runePos gives, for a String, the source position of the code point
	// at the given index of Text; nil means Pos for every index (unless
	// plain).
	runePos func(i int) diag.Pos
}

// Field is one key of an object. Keys are unique: of duplicate keys the
// last value is kept, at the first key's place, as Python's json and
// yaml modules (which nano-vm uses) do.
type Field struct {
	Key    string
	KeyPos diag.Pos
	Value  *Node
}

// Get returns the value of key in an object node, or nil.
func (n *Node) Get(key string) *Node {
	if n == nil {
		return nil
	}
	for _, f := range n.Fields {
		if f.Key == key {
			return f.Value
		}
	}
	return nil
}

// RunePos returns the source position of the code point at index i of a
// string node's value: exact for JSON and for single-line YAML scalars
// without escapes, otherwise the node's own position.
func (n *Node) RunePos(i int) diag.Pos {
	if i < 0 {
		return n.Pos
	}
	if n.plain {
		p := n.Pos
		p.Col += 1 + min(i, utf8.RuneCountInString(n.Text))
		return p
	}
	if n.runePos == nil {
		return n.Pos
	}
	return n.runePos(i)
}

// Describe names the node's value for a message: its kind, and a short
// rendering of scalars.
func (n *Node) Describe() string {
	switch n.Kind {
	case Null:
		return "null"
	case Bool:
		return strconv.FormatBool(n.Bool)
	case Number:
		return "the number " + abbreviate(n.Text)
	case String:
		return "the string " + strconv.Quote(abbreviate(n.Text))
	}
	return n.Kind.String()
}

// abbreviate shortens s to at most 40 code points for a message.
func abbreviate(s string) string {
	if utf8.RuneCountInString(s) <= 40 {
		return s
	}
	r := []rune(s)
	return string(r[:37]) + "..."
}

// ChildPath is the JSON path of key in the object at path.
func ChildPath(path, key string) string {
	if isPathIdent(key) {
		return path + "." + key
	}
	return path + "[" + strconv.Quote(key) + "]"
}

// indexPath is the JSON path of element i of the array at path.
func indexPath(path string, i int) string { return path + "[" + strconv.Itoa(i) + "]" }

func isPathIdent(s string) bool {
	if s == "" {
		return false
	}
	for i, r := range s {
		if r != '_' && !unicode.IsLetter(r) && (i == 0 || !unicode.IsDigit(r)) {
			return false
		}
	}
	return true
}

// ToValue returns the node as a plain Go value (nil, bool, float64,
// string, []any, or an ordered object as *OrderedObject); tests and tools
// use it.
func (n *Node) ToValue() any {
	switch n.Kind {
	case Bool:
		return n.Bool
	case Number:
		return n.Num
	case String:
		return n.Text
	case Array:
		xs := make([]any, len(n.Items))
		for i, it := range n.Items {
			xs[i] = it.ToValue()
		}
		return xs
	case Object:
		o := &OrderedObject{}
		for _, f := range n.Fields {
			o.Keys = append(o.Keys, f.Key)
			o.Values = append(o.Values, f.Value.ToValue())
		}
		return o
	}
	return nil
}

// OrderedObject is an object with its keys in document order.
type OrderedObject struct {
	Keys   []string
	Values []any
}

// String renders the node as compact JSON (for tests and messages).
func (n *Node) String() string {
	var b strings.Builder
	n.writeJSON(&b)
	return b.String()
}

func (n *Node) writeJSON(b *strings.Builder) {
	switch n.Kind {
	case Null:
		b.WriteString("null")
	case Bool:
		b.WriteString(strconv.FormatBool(n.Bool))
	case Number:
		b.WriteString(strconv.FormatFloat(n.Num, 'g', -1, 64))
	case String:
		b.WriteString(strconv.Quote(n.Text))
	case Array:
		b.WriteByte('[')
		for i, it := range n.Items {
			if i > 0 {
				b.WriteByte(',')
			}
			it.writeJSON(b)
		}
		b.WriteByte(']')
	case Object:
		b.WriteByte('{')
		for i, f := range n.Fields {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString(strconv.Quote(f.Key))
			b.WriteByte(':')
			f.Value.writeJSON(b)
		}
		b.WriteByte('}')
	}
}
