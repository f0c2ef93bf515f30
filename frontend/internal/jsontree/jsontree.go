// Package jsontree reads JSON and YAML documents into a tree of nodes
// that keep what a diagnostic needs: the source position of every value
// and key, its JSON path from the root ($.steps[2].next_step), and the
// order of keys. It is the document layer the frontends of document
// languages share (nano-vm programs, execution plans); each reports the
// tree's diagnostics under its own codes (Codes).
package jsontree

import (
	"fmt"
	"unicode/utf8"

	"github.com/genesis-toolchain/genesis/diag"
)

// MaxDepth bounds the nesting of arrays and objects, in JSON and YAML, so
// that no input can exhaust the stack.
const MaxDepth = maxDepth

// Codes are the diagnostic codes under which a frontend reports what the
// reading of its documents finds.
type Codes struct {
	Syntax string // the document is not valid JSON or YAML (an error)
	DupKey string // a key appears twice in one object (a warning)
	Value  string // a YAML scalar that is no JSON value, such as .inf (an error)
}

// ParseJSON decodes a JSON document (RFC 8259) into nodes, whatever the
// file's name. It stops at the first syntax error and then returns nil.
// The diagnostics are sorted by position.
func ParseJSON(file string, src []byte, codes Codes) (*Node, diag.List) {
	r := &reporter{codes: codes}
	n := parseJSON(file, src, r)
	return n, r.sorted()
}

// ParseYAML decodes a YAML document (one document; YAML 1.2 through
// go.yaml.in/yaml/v3) onto the JSON data model. It returns nil after a
// syntax error. The diagnostics are sorted by position.
func ParseYAML(file string, src []byte, codes Codes) (*Node, diag.List) {
	r := &reporter{codes: codes}
	n := parseYAML(file, src, r)
	return n, r.sorted()
}

// ShortPath returns a JSON path for a message: as it is, or, past 80
// bytes (a value nested hundreds of levels deep), its first and last 36
// bytes around "...", so that a message stays a line long.
func ShortPath(path string) string {
	if len(path) <= 80 {
		return path
	}
	head, tail := path[:36], path[len(path)-36:]
	for !utf8.ValidString(head) {
		head = head[:len(head)-1]
	}
	for !utf8.ValidString(tail) {
		tail = tail[1:]
	}
	return head + "..." + tail
}

// Abbreviate shortens s to at most 40 code points for a message.
func Abbreviate(s string) string { return abbreviate(s) }

// reporter collects the diagnostics of reading one document.
type reporter struct {
	codes Codes
	diags diag.List
}

func (r *reporter) add(pos diag.Pos, sev diag.Severity, path, code, format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	if path != "" {
		msg = ShortPath(path) + ": " + msg
	}
	r.diags = append(r.diags, diag.Diagnostic{Pos: pos, Severity: sev, Code: code, Msg: msg})
}

func (r *reporter) errorAt(pos diag.Pos, path, code, format string, args ...any) {
	r.add(pos, diag.Error, path, code, format, args...)
}

func (r *reporter) warnAt(pos diag.Pos, path, code, format string, args ...any) {
	r.add(pos, diag.Warning, path, code, format, args...)
}

func (r *reporter) sorted() diag.List {
	out := append(diag.List(nil), r.diags...)
	out.Sort()
	return out
}
