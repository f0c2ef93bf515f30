package nanovm

import (
	"regexp"
	"strings"
	"unicode/utf8"
)

// Template is a string with $references (prompts, system messages and
// the string values of tool arguments): literal text and references, in
// order.
type Template struct {
	Node  *Node
	Text  string
	Parts []Part
}

// Part is literal text, or a reference when Ref is not nil.
type Part struct {
	Lit string
	Ref *VarRef
}

// refPattern is nano-vm's reference syntax: $ and one or more dotted
// segments of letters, digits and '_' (Python's \w).
var refPattern = regexp.MustCompile(`\$[\p{L}\p{N}_]+(?:\.[\p{L}\p{N}_]+)*`)

// parseTemplate splits s into text and references.
func parseTemplate(s string, n *Node) *Template {
	t := &Template{Node: n, Text: s}
	last := 0
	for _, m := range refPattern.FindAllStringIndex(s, -1) {
		if m[0] > last {
			t.Parts = append(t.Parts, Part{Lit: s[last:m[0]]})
		}
		segs := strings.Split(s[m[0]+1:m[1]], ".")
		t.Parts = append(t.Parts, Part{Ref: &VarRef{Root: segs[0], Path: segs[1:], off: utf8.RuneCountInString(s[:m[0]])}})
		last = m[1]
	}
	if last < len(s) {
		t.Parts = append(t.Parts, Part{Lit: s[last:]})
	}
	return t
}

// Single returns the reference when the whole template is one reference
// ("$order_id"), which substitutes the referenced value itself, typed,
// rather than its text.
func (t *Template) Single() *VarRef {
	if len(t.Parts) == 1 && t.Parts[0].Ref != nil {
		return t.Parts[0].Ref
	}
	return nil
}

// Refs returns the template's references.
func (t *Template) Refs() []*VarRef {
	var refs []*VarRef
	for _, p := range t.Parts {
		if p.Ref != nil {
			refs = append(refs, p.Ref)
		}
	}
	return refs
}
