package plan

import (
	"encoding/json"
	"unicode/utf8"
)

// HasPlanKeys reports whether a JSON document is an execution plan rather
// than a nano-vm program, by its top-level keys: its top-level value is
// an object with a "groups" key and without a "steps" key (the key every
// nano-vm program has). It is the detection step of the driver's
// registry (frontend.Language.Detect) for the .json files the two
// languages share.
//
// Only the top-level keys are looked at, and the document need not be
// valid past them: a plan with a syntax error deeper down is still a
// plan, so that its errors come from this frontend. HasPlanKeys never
// fails; for anything that is not an object it reports false.
func HasPlanKeys(src []byte) bool {
	keys := topKeys(src)
	return keys["groups"] && !keys["steps"]
}

// topKeys scans the keys of the top-level object of a JSON document,
// stopping at the end of that object or at the first thing that is not
// JSON. It returns nil when the document does not start with '{'.
func topKeys(src []byte) map[string]bool {
	i := 0
	if len(src) >= 3 && src[0] == 0xEF && src[1] == 0xBB && src[2] == 0xBF {
		i = 3
	}
	for i < len(src) && isSpace(src[i]) {
		i++
	}
	if i >= len(src) || src[i] != '{' {
		return nil
	}
	keys := map[string]bool{}
	depth := 0
	expectKey := false
	for i < len(src) {
		switch c := src[i]; c {
		case '"':
			end, ok := stringEnd(src, i)
			if !ok {
				return keys
			}
			if depth == 1 && expectKey {
				j := end
				for j < len(src) && isSpace(src[j]) {
					j++
				}
				if j < len(src) && src[j] == ':' {
					if k, ok := unquote(src[i:end]); ok {
						keys[k] = true
					}
				}
				expectKey = false
			}
			i = end
			continue
		case '{', '[':
			depth++
			expectKey = depth == 1
		case '}', ']':
			depth--
			if depth <= 0 {
				return keys
			}
		case ',':
			if depth == 1 {
				expectKey = true
			}
		}
		i++
	}
	return keys
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\r' || c == '\n' }

// stringEnd returns the offset just past the string literal starting at
// src[i] (a '"'), and false when it is not terminated.
func stringEnd(src []byte, i int) (int, bool) {
	for j := i + 1; j < len(src); j++ {
		switch src[j] {
		case '\\':
			j++
		case '"':
			return j + 1, true
		}
	}
	return len(src), false
}

// unquote decodes a string literal (with its quotes), escapes included.
func unquote(lit []byte) (string, bool) {
	plain := true
	for _, c := range lit[1 : len(lit)-1] {
		if c == '\\' || c < 0x20 {
			plain = false
			break
		}
	}
	if plain && utf8.Valid(lit) {
		return string(lit[1 : len(lit)-1]), true
	}
	var s string
	if err := json.Unmarshal(lit, &s); err != nil {
		return "", false
	}
	return s, true
}
