package runtime

import (
	"math"
	"strconv"
	"unicode/utf8"
)

// validateSchema checks v against a JSON schema and returns "" or what is
// wrong. It knows the keywords structured-output schemas use: type
// (a name or a list; "integer" is a number without fraction, "null" is
// unit), enum, const, properties, required, additionalProperties (false
// or a schema), items, minItems, maxItems, minimum, maximum, minLength,
// maxLength, anyOf. Other keywords are ignored.
func validateSchema(v, schema Value, path string) string {
	if schema.k == KindBool {
		if schema.u == 0 {
			return at(path) + "no value is allowed here"
		}
		return ""
	}
	if schema.k != KindObject {
		return ""
	}
	if t, ok := schema.Get("type"); ok {
		match := false
		switch t.k {
		case KindString:
			match = hasType(v, t.s)
		case KindList:
			for _, x := range t.Elems() {
				if hasType(v, x.Str()) {
					match = true
				}
			}
		default:
			match = true
		}
		if !match {
			return at(path) + "expected " + t.String() + ", got " + kindForSchema(v)
		}
	}
	if e, ok := schema.Get("enum"); ok && e.k == KindList && !ValueContains(e, v) {
		return at(path) + "not one of " + e.String()
	}
	if c, ok := schema.Get("const"); ok && !ValueEq(c, v) {
		return at(path) + "expected " + c.String()
	}
	if any, ok := schema.Get("anyOf"); ok && any.k == KindList {
		found := false
		for _, s := range any.Elems() {
			if validateSchema(v, s, path) == "" {
				found = true
				break
			}
		}
		if !found {
			return at(path) + "matches none of anyOf"
		}
	}
	switch v.k {
	case KindObject:
		props, _ := schema.Get("properties")
		if req, ok := schema.Get("required"); ok {
			for _, k := range req.Elems() {
				if _, ok := v.Get(k.Str()); !ok {
					return at(path) + "missing required property " + strconv.Quote(k.Str())
				}
			}
		}
		addl, hasAddl := schema.Get("additionalProperties")
		for i := 0; i < v.Len(); i++ {
			k, x := v.Field(i)
			sub := path + "." + k
			if ps, ok := props.Get(k); ok {
				if msg := validateSchema(x, ps, sub); msg != "" {
					return msg
				}
			} else if hasAddl {
				if msg := validateSchema(x, addl, sub); msg != "" {
					return msg
				}
			}
		}
	case KindList:
		if n, ok := schema.Get("minItems"); ok && float64(v.Len()) < n.Num() {
			return at(path) + "fewer than " + n.String() + " items"
		}
		if n, ok := schema.Get("maxItems"); ok && float64(v.Len()) > n.Num() {
			return at(path) + "more than " + n.String() + " items"
		}
		if items, ok := schema.Get("items"); ok {
			for i, x := range v.Elems() {
				if msg := validateSchema(x, items, path+"."+strconv.Itoa(i)); msg != "" {
					return msg
				}
			}
		}
	case KindNumber:
		f := v.Num()
		if n, ok := schema.Get("minimum"); ok && n.k == KindNumber && f < n.Num() {
			return at(path) + "less than the minimum " + n.String()
		}
		if n, ok := schema.Get("maximum"); ok && n.k == KindNumber && f > n.Num() {
			return at(path) + "more than the maximum " + n.String()
		}
	case KindString:
		l := float64(utf8.RuneCountInString(v.s))
		if n, ok := schema.Get("minLength"); ok && l < n.Num() {
			return at(path) + "shorter than " + n.String()
		}
		if n, ok := schema.Get("maxLength"); ok && l > n.Num() {
			return at(path) + "longer than " + n.String()
		}
	}
	return ""
}

func at(path string) string {
	if path == "" {
		return "$: "
	}
	return "$" + path + ": "
}

func hasType(v Value, t string) bool {
	switch t {
	case "null":
		return v.k == KindUnit
	case "boolean":
		return v.k == KindBool
	case "number":
		return v.k == KindNumber
	case "integer":
		f := v.Num()
		return v.k == KindNumber && f == math.Trunc(f) && !math.IsInf(f, 0)
	case "string":
		return v.k == KindString
	case "array":
		return v.k == KindList
	case "object":
		return v.k == KindObject
	}
	return false
}

func kindForSchema(v Value) string {
	switch v.k {
	case KindUnit:
		return "null"
	case KindBool:
		return "boolean"
	case KindList:
		return "array"
	}
	return v.k.String()
}
